"""The page's top and its honesty: the verdict line, what the grade could not see, plain-word
criterion rows, and each criterion's explanation (the same text `rubric explain` prints)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from conftest import ROOT, run_cli
from sessionkit import claude_jsonl
from skill_doctor import rubric
from skill_doctor.check import judge
from skill_doctor.decode import decode_file
from skill_doctor.detectors import DETECTORS
from skill_doctor.render import explanation, render, verdict_line
from skill_doctor.report import grade, to_json
from workflowkit import poor_session

EXAMPLES = ROOT / "examples"
NOW = "2026-01-01T00:00:00Z"


class Sections(HTMLParser):
    """The text inside each element that has an id or a class we look for."""

    def __init__(self, html: str):
        super().__init__()
        self.stack: list[str | None] = []
        self.text: dict[str, list[str]] = {}
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        key = a.get("id") or ("verdict" if "verdict" in (a.get("class") or "").split() else None)
        self.stack.append(key)
        if key:
            self.text.setdefault(key, [])

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        for key in self.stack:
            if key:
                self.text[key].append(data)

    def of(self, key: str) -> str:
        return " ".join("".join(self.text.get(key, [])).split())


def graded(path, **kwargs):
    return grade(decode_file(path), rubric.load(), NOW, **kwargs)


def test_a_passing_session_says_so_first_with_both_scores(tmp_path):
    report = graded(EXAMPLES / "retry-fix.jsonl")
    html = render(report)
    verdict = re.search(r'<section aria-label="Verdict" class="verdict pass">\s*<p>(.*?)</p>',
                        html, re.S)
    assert verdict, "the verdict sits under the header"
    assert "\n" not in verdict.group(1), "the verdict is one line, to paste into a chat"
    text = re.sub(r"<[^>]+>", "", verdict.group(1))
    assert text.startswith("Passes: efficiency 9/10, code quality 10/10")
    top = report.suggestions[0]
    assert f"(+1 point, Retry waste ({top.rule_id})): {top.text}" in text
    # Under the contract's header, before the score summary; the strip after the scores.
    assert html.index("<h1>Skill Doctor Report</h1>") < html.index('aria-label="Verdict"') \
        < html.index(">Score summary</h2>") < html.index('class="strip"')


def test_the_verdict_is_the_rule_check_applies(tmp_path):
    path = tmp_path / "poor.jsonl"
    path.write_text(poor_session(), encoding="utf-8")
    report = graded(path)
    expected = judge(str(path), report, report.thresholds)
    passed, word, rest = verdict_line(report, report.thresholds)
    assert passed is expected.passed is False and word == "Needs work"
    assert f"; fails ({'; '.join(expected.failures)})." in rest
    assert "Fix first (+" in rest and report.suggestions[0].text in rest
    # The same session judged against lower thresholds passes, on the page as in check.
    lenient = {"efficiency": 0.0, "code_quality": 2.0}
    assert judge(str(path), report, lenient).passed
    html = render(report, lenient)
    assert 'class="verdict pass"' in html
    assert Sections(html).of("verdict").startswith("Passes: efficiency 0/10, code quality N/A, "
                                                   "meeting the thresholds (efficiency 0, code "
                                                   "quality 2). Most points back (+3 points")


def test_check_and_the_page_agree_on_the_command_line(tmp_path, capsys):
    (tmp_path / "poor.jsonl").write_text(poor_session(), encoding="utf-8")
    code, out, _ = run_cli(["check", "poor.jsonl"], tmp_path, capsys)
    assert code == 1 and "FAIL (efficiency 0 < 5)" in out
    code, _, _ = run_cli(["report", "poor.jsonl", "-o", "out"], tmp_path, capsys)
    page = Sections((tmp_path / "out" / "report.html").read_text(encoding="utf-8"))
    assert page.of("verdict").startswith("Needs work: efficiency 0/10, code quality N/A; "
                                         "fails (efficiency 0 < 5).")


def _unfinished_session(tmp_path):
    """A session whose log lost a tool result and holds a line that is not JSON."""
    steps = [{"user": "Fix the off-by-one in src/pager.py"},
             {"tool": "Read", "input": {"file_path": "/home/dev/proj/src/pager.py"},
              "output": "def page_count(items, per_page):\n    return len(items) // per_page\n"},
             {"tool": "Edit", "input": {"file_path": "/home/dev/proj/src/pager.py",
                                        "old_string": "return len(items) // per_page",
                                        "new_string": "return -(-len(items) // per_page)"},
              "output": "ok"},
             {"tool": "Bash", "input": {"command": "pytest -q"}, "output": "1 passed"},
             {"assistant": "Fixed the rounding in page_count; the test passes."}]
    lines = claude_jsonl(steps).splitlines(keepends=True)
    # Drop the Bash call's result (the 7th record) and tear a line after the request.
    lines = lines[:1] + ['{"type": "assistant", "message": {\n'] + lines[1:6] + lines[7:]
    path = tmp_path / "lost.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_every_note_of_report_json_is_on_the_page_in_words(tmp_path):
    report = graded(_unfinished_session(tmp_path))
    data = to_json(report)
    assert len(data["notes"]) == 2  # the lost result and the torn line
    html = render(report)
    page = Sections(html)
    gaps = page.of("gaps") + " " + " ".join(
        page.of(f"gap-{i}") for i in range(1, len(report.overview.gaps) + 1))
    assert ">What this grade could not see</h2>" in html
    assert "1 tool call never got a result" in gaps and "Turns concerned: 4" in gaps
    assert "were not valid JSON and were skipped (last at line 2). The last of them lies " \
        "just before turn 2." in gaps
    assert data["overview"]["gaps"][0]["note"] in data["notes"]
    assert {g["note"] for g in data["overview"]["gaps"] if g["note"]} == set(data["notes"])
    # The rows of the criteria the lost result may have changed say so and link to the gap.
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    affected = [r for r in rows if "May be affected by: " in r]
    names = {re.search(r">([A-Z][a-z ]+)</(?:a|span)>", r).group(1) for r in affected}
    assert names == {"Task completion", "Retry waste", "Regression avoidance"}
    gap_id = next(i for i, g in enumerate(report.overview.gaps, 1) if g.kind == "missing_results")
    assert all(f'href="#gap-{gap_id}"' in r for r in affected)
    assert f'id="gap-{gap_id}"' in html
    assert "This grade could not see everything" in page.of("verdict")


def test_redactions_made_are_listed_with_their_turns(tmp_path):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    steps = [{"user": "Fix the failing test in tests/test_app.py"},
             {"tool": "Bash", "input": {"command": "pytest -q"}, "error": True,
              "output": f"1 failed; GITHUB_TOKEN={token}"},
             {"tool": "Bash", "input": {"command": "pytest -q"}, "error": True,
              "output": f"1 failed; GITHUB_TOKEN={token}"},
             {"assistant": "The test still fails."}]
    path = tmp_path / "s.jsonl"
    path.write_text(claude_jsonl(steps), encoding="utf-8")
    report = graded(path)
    [gap] = [g for g in report.overview.gaps if g.kind == "redacted"]
    assert 2 in gap.turns and "github-token" in gap.detail
    html = render(report)
    assert token not in html and "Secrets redacted on this page" in html
    gap_id = report.overview.gaps.index(gap) + 1
    article = html[html.index(f'id="gap-{gap_id}"'):].split("</article>")[0]
    assert '<a href="#turn-2">2</a>' in article and 'id="turn-2"' in html  # cited: linked
    plain = graded(path, redact_secrets=False)
    assert any(g.kind == "not_redacted" for g in plain.overview.gaps)


def test_a_clean_log_says_nothing_was_hidden():
    report = graded(EXAMPLES / "retry-fix.jsonl")
    assert report.overview.gaps == ()
    assert "Nothing: the log was read whole" in render(report)


def test_rows_speak_plain_words_and_link_to_their_explanation():
    report = graded(EXAMPLES / "retry-fix.jsonl")
    html = render(report)
    page = Sections(html)
    for scale in report.scores.scales():
        for result in scale.criteria:
            c = result.criterion
            assert f'href="#rule-{c.key}"' in html
            explained = page.of(f"rule-{c.key}")
            summary, sections = explanation(DETECTORS[c.detector].doc)
            assert summary and summary.replace("`", "") in explained
            for label, text in sections:  # `code` spans become code elements
                assert label and text.replace("`", "") in explained
            assert {"What it measures", "Why it matters", "Example"} <= {
                label for label, _ in sections}
            assert f"This session {result.measurement.summary}: {result.points} / {c.max}" \
                in explained
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert "value >=" not in text and "value <=" not in text and "(value " not in text
    assert "3 or more: 3 points (fully complete)" in page.of("rule-task_completion")
    assert "<code>min_answer_words</code>" in html


def test_rubric_explain_prints_what_the_page_explains(tmp_path, capsys):
    code, out, _ = run_cli(["rubric", "explain", "retry_waste"], tmp_path, capsys)
    assert code == 0
    summary, sections = explanation(DETECTORS["retry_episodes"].doc)
    printed = " ".join(out.split()).lower()  # the page starts each section with a capital
    assert summary.lower() in printed
    for label, text in sections:
        assert f"{label}: {text}".lower() in printed


def test_minimal_reports_have_no_verdict_and_unparseable_files_fail(tmp_path):
    short = tmp_path / "short.jsonl"
    short.write_text(claude_jsonl([{"user": "hi"}]), encoding="utf-8")
    assert 'aria-label="Verdict"' not in render(graded(short))
    garbage = tmp_path / "notes.txt"
    garbage.write_text("just some prose\nwith no turn markers at all\n", encoding="utf-8")
    html = render(graded(garbage))
    assert 'class="verdict fail"' in html
    assert Sections(html).of("verdict") == ("Needs work: efficiency N/A, code quality N/A; "
                                            "fails (the file could not be parsed whole).")


def test_report_json_carries_the_gaps(tmp_path):
    data = to_json(graded(_unfinished_session(tmp_path)))
    kinds = [g["kind"] for g in data["overview"]["gaps"]]
    assert "missing_results" in kinds and "unreadable_lines" in kinds
    json.dumps(data)


def test_a_log_without_tool_results_says_code_quality_rests_on_claims():
    from skill_doctor.model import Role, ToolKind, Transcript, Turn
    from skill_doctor.overview import gaps

    turns = (Turn(1, Role.USER, "Fix the parser in parse.py"),
             Turn(2, Role.TOOL, tool_name="edit", tool_input={"path": "parse.py"},
                  kind=ToolKind.EDIT),
             Turn(3, Role.TOOL, tool_name="run", tool_input={"command": "pytest"},
                  kind=ToolKind.SHELL),
             Turn(4, Role.ASSISTANT, "Fixed; the tests pass."))
    found = gaps(Transcript("log.md", "plain-text", turns), ())
    [gap] = [g for g in found if g.kind == "no_results"]
    assert gap.turns == (2, 3) and "rests on what the agent said" in gap.detail
    assert {"task_completion", "minimal_diff", "regression_avoidance"} <= set(gap.criteria)
    # One result is enough to read the outcome from the tools.
    with_result = turns[:2] + (Turn(3, Role.TOOL, tool_name="run", tool_output="1 passed",
                                    kind=ToolKind.SHELL),) + turns[3:]
    assert not [g for g in gaps(Transcript("log.md", "plain-text", with_result), ())
                if g.kind == "no_results"]


def test_each_kind_of_decoder_note_is_put_in_words_and_unknown_ones_verbatim():
    from skill_doctor.model import Role, Transcript, Turn
    from skill_doctor.overview import gaps

    turns = tuple(Turn(i, Role.USER if i == 1 else Role.ASSISTANT, f"text {i}", line=i * 10)
                  for i in range(1, 6))
    notes = ("the run ended with status error", "the file holds 9 sessions; the last is graded",
             "only the first 32 MiB of this text file were read",
             "a brand-new decoder remark")
    found = {g.kind: g for g in gaps(Transcript("s.jsonl", "gemini", turns, notes=notes), ())}
    assert found["run_error"].turns == (5,) and found["run_error"].criteria == ("task_completion",)
    assert "status error" in found["run_error"].detail
    assert found["several_sessions"].detail.startswith("The file holds 9 sessions; the last is "
                                                       "graded.")
    assert "task_completion" in found["several_sessions"].criteria
    assert found["truncated"].turns == (5,) and "end of the session" in found["truncated"].detail
    assert found["note"].detail == "A brand-new decoder remark."
    assert [g.note for g in found.values() if g.note] == list(notes)


def test_a_session_split_from_a_file_of_several_says_which_one_is_graded():
    from dataclasses import dataclass

    from skill_doctor.model import Role, Transcript, Turn
    from skill_doctor.overview import gaps

    @dataclass(frozen=True)
    class Part(Transcript):  # what a decoder that splits files records
        part: tuple[int, int] | None = None

    turns = (Turn(1, Role.USER, "Fix it"), Turn(2, Role.ASSISTANT, "Fixed it."))
    [gap] = gaps(Part("history.md", "aider", turns, part=(9, 9)), ())
    assert gap.kind == "several_sessions"
    assert gap.detail.startswith("This file holds 9 sessions one after another; this report "
                                 "grades session 9 (the last).")
