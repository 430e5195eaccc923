"""The page beyond the contract's sections: links, arithmetic, accessibility, bounds, safety."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from conftest import CORPUS, ROOT, needs_corpus
from sessionkit import claude_jsonl
from skill_doctor import rubric
from skill_doctor.decode import decode_file
from skill_doctor.render import CSS, render
from skill_doctor.report import grade, no_history
from test_page_overview import GH_TOKEN, SETUP_SESSION

EXAMPLES = ROOT / "examples"


class Page(HTMLParser):
    """Tags with attributes, ids, hrefs, and the text of each element with an id."""

    def __init__(self, html: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    @property
    def ids(self) -> list[str]:
        return [a["id"] for _, a in self.tags if "id" in a]

    def links(self) -> list[str]:
        return [a["href"] for t, a in self.tags if t == "a" and "href" in a]

    def all_text(self) -> str:
        return " ".join(" ".join(self.text).split())


def graded(path, **kwargs):
    return grade(decode_file(path), rubric.load(), "2026-01-01T00:00:00Z", **kwargs)


def session(tmp_path, steps, name="s.jsonl"):
    path = tmp_path / name
    path.write_text(claude_jsonl(steps))
    return path


def test_every_internal_link_lands_on_an_anchor_and_citations_reach_the_appendix():
    report = graded(EXAMPLES / "retry-fix.jsonl")
    page = Page(render(report))
    ids = page.ids
    assert len(ids) == len(set(ids)), "duplicate ids"
    links = page.links()
    assert links and all(href.startswith("#") for href in links)
    assert {href[1:] for href in links} <= set(ids)
    cited = {e.turn for f in report.findings for e in f.evidence}
    assert {f"turn-{t}" for t in cited} <= set(ids)
    assert {f"#turn-{t}" for t in cited} <= set(links)
    # Only cited turns are in the appendix.
    assert {i for i in ids if i.startswith("turn-")} == {f"turn-{t}" for t in cited}


def test_score_table_shows_the_arithmetic():
    report = graded(EXAMPLES / "retry-fix.jsonl")
    text = Page(render(report)).all_text()
    eff = report.scores.efficiency
    parts = " + ".join(str(r.points) for r in eff.criteria)
    assert f"Total {parts} = {eff.score} {eff.score} / 10" in text
    for r in eff.criteria:  # each criterion: what was measured, its rating, its points
        assert f"{r.criterion.category} ({r.criterion.rule_id}) {r.measurement.summary} " \
               f"{r.band.label} {r.points} / {r.criterion.max}" in text
    # Plain words: the band arithmetic stays out of the rows (the explanation says it in words)
    assert "(value " not in text and "value >=" not in text and "value <=" not in text


def test_bar_segments_add_up_to_the_score():
    report = graded(EXAMPLES / "retry-fix.jsonl")
    html = render(report)
    bar = re.search(r'<div aria-label="Efficiency: (\d+) out of 10" class="bar[^"]*" role="img">(.*?)</div>',
                    html, re.S)
    widths = [float(w) for w in re.findall(r"width: ([\d.]+)%", bar.group(2))]
    assert round(sum(widths)) == int(bar.group(1)) * 10


def test_rescaled_scale_says_how(tmp_path):
    override = tmp_path / "r.yaml"
    override.write_text("criteria:\n  turn_economy:\n    enabled: false\n")
    report = grade(decode_file(EXAMPLES / "retry-fix.jsonl"), rubric.load(str(override)),
                   "2026-01-01T00:00:00Z")
    text = Page(render(report)).all_text()
    assert "disabled in the rubric" in text and "/ 8 → " in text


def test_page_shows_setup_timeline_files_changes_and_cited_turns(tmp_path):
    report = graded(session(tmp_path, SETUP_SESSION))
    html = render(report)
    page = Page(html)
    text = page.all_text()
    order = [html.index(f">{h}</h2>") for h in ("Score summary", "Findings", "Suggestions",
                                                 "Setup in play", "Timeline", "Files", "Changes",
                                                 "Cited turns")]
    assert order == sorted(order)
    for expected in ("python-style", "Explore", "github (×2; first at turn 6)", "PreToolUse:Bash",
                     "CLAUDE.md", "AGENTS.md", "/review", "claude-sonnet-4-5", "/home/dev/proj",
                     "14 1 user · 1 assistant", "10 1 failed", "2 read · 1 edited",
                     "last passed (turn 13: pytest -q)"):
        assert expected in text, expected
    cells = [a for t, a in page.tags if "c k-" in a.get("class", "")]
    assert len(cells) == 14
    assert [a["class"].split()[1] for a in cells][:4] == ["k-injected", "k-user", "k-injected",
                                                          "k-other"]
    assert 'class="d-add"' in html and 'class="d-del"' in html and "<details" in html
    assert GH_TOKEN not in html


def test_long_diffs_are_folded_and_short_ones_open(tmp_path):
    before = "".join(f"line {i}\n" for i in range(200))
    steps = [{"user": "Rewrite notes.txt and fix line 5 in short.txt"},
             {"tool": "Write", "input": {"file_path": "/home/dev/proj/notes.txt", "content": before},
              "output": "ok"},
             {"tool": "Edit", "input": {"file_path": "/home/dev/proj/short.txt", "old_string": "line 5",
                                        "new_string": "line five"}, "output": "ok",
              "result": {"originalFile": before}},
             {"assistant": "Wrote notes.txt and fixed line 5 in short.txt as asked."}]
    html = render(graded(session(tmp_path, steps)))
    details = re.findall(r"<details( open=\"open\")?>\s*<summary><code>([^<]+)</code>", html)
    assert details == [("", "notes.txt"), (' open="open"', "short.txt")]


def test_transcript_text_is_escaped_everywhere(tmp_path):
    evil = '<script>alert(1)</script><img src=x onerror=alert(2)>'
    steps = [{"user": f"Fix {evil} in a.py"},
             {"tool": "Read", "input": {"file_path": f"/home/dev/proj/docs/{evil}.md"}, "output": evil},
             {"tool": "Edit", "input": {"file_path": f"/home/dev/proj/{evil}.py", "old_string": "a",
                                        "new_string": evil}, "output": evil, "error": True},
             {"tool": "Edit", "input": {"file_path": f"/home/dev/proj/{evil}.py", "old_string": "b",
                                        "new_string": evil}, "output": evil, "error": True},
             {"tool": f"mcp__{evil}__x", "input": {"q": evil}, "output": evil},
             {"tool": "Write", "input": {"file_path": "/home/dev/proj/b.py", "content": evil},
              "output": "ok"},
             {"assistant": evil}]
    html = render(graded(session(tmp_path, steps)))
    page = Page(html)
    assert not {t for t, _ in page.tags} & {"script", "img", "iframe", "object", "embed"}
    assert all(not k.startswith("on") for _, attrs in page.tags for k in attrs)
    assert "&lt;script&gt;" in html


def test_no_redact_is_honoured(tmp_path):
    steps = SETUP_SESSION[:12] + [
        {"tool": "Bash", "input": {"command": "pytest -q"}, "error": True,
         "output": f"1 failed; token {GH_TOKEN}"},
        {"tool": "Bash", "input": {"command": "pytest -q"}, "error": True,
         "output": f"1 failed; token {GH_TOKEN}"},
        {"assistant": "The test still fails."}]
    path = session(tmp_path, steps, "fail.jsonl")
    assert GH_TOKEN not in render(graded(path))
    assert GH_TOKEN in render(graded(path, redact_secrets=False))


def test_accessible_structure():
    html = render(graded(EXAMPLES / "retry-fix.jsonl"))
    page = Page(html)
    tags = [t for t, _ in page.tags]
    assert tags.count("h1") == 1
    for landmark in ("header", "nav", "main", "footer"):
        assert landmark in tags
    assert re.search(r'<html lang="en">', html)
    # Every heading level follows from the one before (no h2 -> h4 jumps).
    levels = [int(t[1]) for t in tags if re.fullmatch(r"h[1-6]", t)]
    assert all(b <= a + 1 for a, b in zip(levels, levels[1:]))
    # Bars carry their numbers as text, and every table header has a scope.
    bars = [a for t, a in page.tags if t == "div" and "bar" in a.get("class", "").split()]
    assert all(a.get("role") == "img" and "out of 10" in a.get("aria-label", "") for a in bars)
    assert all("scope" in a for t, a in page.tags if t == "th")
    assert "@media print" in CSS and "@media (max-width: 40rem)" in CSS


def _luminance(hex_colour: str) -> float:
    rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_colours_meet_wcag_aa():
    variables = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-f]{6})", CSS))
    for name in ("ink", "muted", "link"):  # text on white and on the tinted panels
        for background in ("#ffffff", "#f6f6f6", "#f4f7fa", "#fff8e6"):
            assert contrast(variables[name], background) >= 4.5, (name, background)
    for kind in ("user", "assistant", "read", "edit", "shell", "other", "failed"):
        assert contrast(variables[kind], "#ffffff") >= 3, kind  # graphics: 3:1
    # Every rule that sets both a text colour and a background.
    rules = re.findall(r"([^{}]+)\{([^}]*)\}", CSS)
    pairs = 0
    for selector, body in rules:
        fg = re.search(r"(?<![-\w])color:\s*(#[0-9a-f]{6})", body)
        bg = re.search(r"background:\s*(#[0-9a-f]{6})", body)
        if fg and bg:
            pairs += 1
            assert contrast(fg.group(1), bg.group(1)) >= 4.5, selector.strip()
    assert pairs >= 3
    for colour in re.findall(r"(?<![-\w])color:\s*(#[0-9a-f]{6})", CSS):
        assert contrast(colour, "#ffffff") >= 4.5, colour


def test_css_reaches_the_page_unescaped(tmp_path):
    # Browsers do not decode entities inside <style>: the sheet must be embedded byte for byte
    # (an escaped "Segoe UI" drops the whole font declaration), and nothing from the session
    # may reach the style element.
    evil = '</style><script>alert(1)</script><style>body{color:red}'
    steps = [{"user": f"Fix {evil} in a.py"},
             {"tool": "Read", "input": {"file_path": f"/home/dev/proj/{evil}.py"}, "output": evil},
             {"assistant": evil}]
    html = render(graded(session(tmp_path, steps)))
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    assert styles == [CSS]
    assert '"Segoe UI"' in styles[0] and "&quot;" not in styles[0]
    assert html.count("<style") == 1 and "<script" not in html


def test_minimal_reports_stay_minimal(tmp_path):
    for report in (no_history(rubric.load(), "2026-01-01T00:00:00Z"),
                   graded(session(tmp_path, [{"user": "hi"}]))):
        html = render(report)
        assert ">Score summary</h2>" not in html and ">Timeline</h2>" not in html
        assert "<nav" not in html and 'class="strip"' not in html
        assert report.message in html


def test_parse_error_shows_the_error_and_no_overview(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some prose\nwith no turn markers at all\n")
    report = graded(path)
    html = render(report)
    assert report.status == "parse_error" and report.overview is None
    assert ">Parsing error</h2>" in html and "line 1, column 1" in html
    assert ">Score summary</h2>" in html and ">Timeline</h2>" not in html


def test_render_is_deterministic(tmp_path):
    path = session(tmp_path, SETUP_SESSION)
    assert render(graded(path)) == render(graded(path))


def test_a_long_session_stays_bounded(tmp_path):
    steps = [{"user": "Make the build pass in main.c"}]
    for i in range(1, 3000):
        steps.append({"tool": "Read", "input": {"file_path": f"/home/dev/proj/d{i % 50}/f{i}.c"},
                      "output": "int x;\n" * 200} if i % 2 else {"assistant": f"Step {i}."})
    steps.append({"assistant": "I could not make the build pass."})
    html = render(graded(session(tmp_path, steps)))
    page = Page(html)
    assert len([a for t, a in page.tags if "c k-" in a.get("class", "")]) <= 500
    assert len([a for t, a in page.tags if t == "tr"]) <= 200 + 20
    assert len(html) < 1_000_000


@needs_corpus
@pytest.mark.parametrize("name", ["M-Claude_f225835b-3612.jsonl", "sanand0-scripts_claude.jsonl"])
def test_corpus_sessions_show_every_element(name):
    report = graded(CORPUS / "claude-code" / name)
    html = render(report)
    page = Page(html)
    ids = set(page.ids)
    for section in ("score-summary", "findings", "suggestions", "setup", "timeline", "files",
                    "changes", "cited-turns"):
        assert section in ids
    assert report.findings
    for f in report.findings:
        assert f"finding-{f.criterion}" in ids
        assert all(f"turn-{e.turn}" in ids for e in f.evidence)
    assert "dl" in {t for t, _ in page.tags} and 'class="tl"' in html
    assert "cited" in html and 'class="flagged"' in html and 'class="d-add"' in html
    assert {href[1:] for href in page.links()} <= ids


def test_a_users_own_rubric_is_said_plainly_on_the_page_and_in_report_json(tmp_path):
    from skill_doctor.report import to_json

    own = tmp_path / "team.yaml"
    own.write_text("criteria:\n  retry_waste:\n    bands: [{at_most: 0, points: 2}, {points: 0}]\n")
    mine = grade(decode_file(EXAMPLES / "retry-fix.jsonl"), rubric.load(str(own)), "now")
    default = grade(decode_file(EXAMPLES / "retry-fix.jsonl"), rubric.load(), "now")
    assert mine.rubric == "team.yaml" and default.rubric is None
    text = Page(render(mine)).all_text()
    assert "Graded with your own rubric, team.yaml, not the default one" in text
    assert "Graded with your own rubric" not in Page(render(default)).all_text()
    assert to_json(mine)["generator"]["rubric"] == "team.yaml"
    assert "rubric" not in to_json(default)["generator"]
