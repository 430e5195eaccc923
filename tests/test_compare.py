"""`skill-doctor compare A B`: scores and every criterion with deltas, findings that appear,
disappear or change, the runs' size, the first divergence; compare.json, compare.html (the
report's CSP, escaped) and text on stdout."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, needs_corpus, run_cli as run
from test_browser import ARTIFACTS, browser  # noqa: F401  (the Chromium fixture)
from sessionkit import claude_jsonl
from skill_doctor.render import CSP

EXAMPLES = ROOT / "examples"
LABELLED = ROOT.parent / "shared" / "labelled" / "harbor-claude-code"


def test_compare_two_runs_of_one_task(tmp_path, capsys):
    code, out, err = run(["compare", str(EXAMPLES / "clean-fix.jsonl"),
                          str(EXAMPLES / "retry-fix.jsonl"), "-o", "cmp"], tmp_path, capsys)
    assert code == 0 and err == ""
    doc = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert doc["schema"] == "skill-doctor/compare/v1"
    assert doc["scores"]["efficiency"] == {"a": 10, "b": 9, "delta": -1}
    assert doc["scores"]["code_quality"] == {"a": 10, "b": 10, "delta": 0}
    by_key = {c["criterion"]: c for c in doc["criteria"]}
    assert len(by_key) == 8  # every criterion, changed or not
    assert by_key["retry_waste"]["a"]["score"] == 2 and by_key["retry_waste"]["delta"] == -1
    assert by_key["minimal_diff"]["delta"] == 0
    assert [f["id"] for f in doc["findings"]["appeared"]] == ["SD103"]
    assert doc["findings"]["disappeared"] == [] and doc["findings"]["changed"] == []
    assert doc["runs"]["turns"] == {"a": 6, "b": 7, "delta": 1}
    assert doc["runs"]["failed_calls"] == {"a": 0, "b": 1, "delta": 1}
    d = doc["divergence"]
    assert d["same_before"] == 3 and d["a"]["turn"] == 4 and d["b"]["turn"] == 4
    assert d["b"]["did"].endswith("(failed)") and not d["a"]["did"].endswith("(failed)")
    assert "Efficiency: 10 -> 9 (-1)" in out
    assert "+ finding Retry waste (SD103) 1/2" in out
    assert "  Retry waste (SD103): 2 -> 1/2 (-1)" in out
    assert "First divergence after 3 matching turn(s): A turn 4" in out
    assert out.rstrip().endswith("Comparison written to ./cmp/compare.html")

    # Swapped, the finding disappears instead.
    run(["compare", str(EXAMPLES / "retry-fix.jsonl"), str(EXAMPLES / "clean-fix.jsonl"),
         "-o", "back"], tmp_path, capsys)
    back = json.loads((tmp_path / "back" / "compare.json").read_text())
    assert [f["id"] for f in back["findings"]["disappeared"]] == ["SD103"]
    assert back["scores"]["efficiency"]["delta"] == 1


def test_same_session_twice_has_no_divergence_and_zero_deltas(tmp_path, capsys):
    path = str(EXAMPLES / "retry-fix.jsonl")
    code, out, _ = run(["compare", path, path, "-o", "cmp"], tmp_path, capsys)
    doc = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert code == 0 and doc["divergence"] is None
    assert all(c["delta"] == 0 for c in doc["criteria"])
    assert doc["findings"] == {"appeared": [], "disappeared": [], "changed": []}
    assert "The runs take the same actions throughout." in out


def test_changed_finding_and_a_run_that_ends_early(tmp_path, capsys):
    steps = [{"user": "Fix the pager"}]
    reads = [{"tool": "Read", "input": {"file_path": f"src/m{i}.py"}, "output": "x = 1"}
             for i in range(12)]
    (tmp_path / "a.jsonl").write_text(claude_jsonl(steps + reads[:8] + [{"assistant": "Done."}]))
    (tmp_path / "b.jsonl").write_text(claude_jsonl(steps + reads[:3]))
    code, out, _ = run(["compare", "a.jsonl", "b.jsonl", "-o", "cmp"], tmp_path, capsys)
    doc = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    d = doc["divergence"]
    assert d["same_before"] == 4 and d["b"] == {"turn": None, "did": None}
    assert d["a"]["did"].startswith("Read ") and d["a"]["did"].endswith("src/m3.py")
    assert "B turn N/A: the run has ended" in out


def test_a_finding_that_gets_worse_is_changed(tmp_path, capsys):
    def session(reads: int) -> str:
        return claude_jsonl(
            [{"user": "Fix the typo in src/pager.py"}]
            + [{"tool": "Read", "input": {"file_path": "src/pager.py"}, "output": "x = 1"}] * reads
            + [{"tool": "Edit", "input": {"file_path": "src/pager.py", "old_string": "x = 1",
                                          "new_string": "x = 2"}, "output": "ok"},
               {"assistant": "Done."}])

    (tmp_path / "a.jsonl").write_text(session(3))
    (tmp_path / "b.jsonl").write_text(session(8))
    code, out, _ = run(["compare", "a.jsonl", "b.jsonl", "-o", "cmp"], tmp_path, capsys)
    doc = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    changed = doc["findings"]["changed"]
    assert changed, doc["findings"]
    for c in changed:
        assert c["delta"] == c["b"]["score"] - c["a"]["score"]
        assert (c["a"]["score"], c["a"]["message"]) != (c["b"]["score"], c["b"]["message"])
        assert f"~ finding {c['name']} ({c['id']}): {c['a']['score']} -> {c['b']['score']}" in out
    assert doc["divergence"]["a"]["did"].startswith("Edit ")
    assert doc["divergence"]["b"]["did"].startswith("Read ")


def test_compare_page_has_the_report_csp_and_escapes_the_transcript(tmp_path, capsys):
    hostile = "<script>alert(1)</script> & <img src=x onerror=alert(2)>"
    (tmp_path / "a.jsonl").write_text(claude_jsonl([{"user": hostile}, {"assistant": "ok"}]))
    (tmp_path / "b.jsonl").write_text(claude_jsonl([{"user": "plain"}, {"assistant": "ok"}]))
    code, _, _ = run(["compare", "a.jsonl", "b.jsonl", "-o", "cmp"], tmp_path, capsys)
    page = (tmp_path / "cmp" / "compare.html").read_text()
    assert code == 0
    assert f'content="{CSP}"' in page
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Skill Doctor Comparison" in page


def test_compare_with_a_missing_side_warns_and_still_compares(tmp_path, capsys):
    code, _, err = run(["compare", str(EXAMPLES / "clean-fix.jsonl"), "typo.jsonl", "-o", "c"],
                       tmp_path, capsys)
    doc = json.loads((tmp_path / "c" / "compare.json").read_text())
    assert code == 0 and doc["b"]["status"] == "no_history"
    assert err.startswith("skill-doctor: warning: B: typo.jsonl does not exist")
    assert doc["scores"]["efficiency"] == {"a": 10, "b": None, "delta": None}
    assert doc["divergence"] is None


def test_existing_output_is_refused_unless_an_earlier_comparison(tmp_path, capsys):
    a = str(EXAMPLES / "clean-fix.jsonl")
    (tmp_path / "taken").mkdir()
    code, _, err = run(["compare", a, a, "-o", "taken", "--force"], tmp_path, capsys)
    assert code == 2 and "not a skill-doctor report" in err
    run(["compare", a, a, "-o", "cmp"], tmp_path, capsys)
    code, _, _ = run(["compare", a, a, "-o", "cmp", "--force"], tmp_path, capsys)
    assert code == 0


@needs_corpus
def test_compare_real_runs_reports_tokens_and_cost(tmp_path, capsys):
    a = LABELLED / "build-pmars.fail.claude-code.jsonl"
    b = LABELLED / "build-cython-ext.fail.claude-code.jsonl"
    code, out, _ = run(["compare", str(a), str(b), "-o", "cmp"], tmp_path, capsys)
    doc = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert code == 0
    tokens = doc["runs"]["total_tokens"]
    assert tokens["a"] > 0 and tokens["b"] > 0 and tokens["delta"] == tokens["b"] - tokens["a"]
    assert "Tokens: " in out


@pytest.mark.parametrize("width", [1280, 375])
def test_compare_page_renders_offline_in_chromium(browser, tmp_path, capsys, width):
    run(["compare", str(EXAMPLES / "clean-fix.jsonl"), str(EXAMPLES / "retry-fix.jsonl"),
         "-o", "cmp"], tmp_path, capsys)
    url = (tmp_path / "cmp" / "compare.html").as_uri()
    page = browser.open(url, width)
    assert page.title == "Skill Doctor Comparison"
    assert page.requests() == [url]  # nothing loaded but the page itself
    page_width, _ = page.content_size()
    assert page_width <= width, f"the page scrolls sideways at {width} px"
    page.screenshot(ARTIFACTS / f"compare-{width}.png")


def test_a_cut_divergence_line_never_ends_inside_a_redaction_marker():
    from skill_doctor.compare import describe_turn
    from skill_doctor.model import Role, Turn

    secret = "api_key=" + "Zq8" * 12
    for pad in range(100, 170):
        line = describe_turn(Turn(1, Role.USER, "x" * pad + " " + secret + " and more words"))
        assert "Zq8Zq8" not in line
        opened = line.rfind("[redacted:")
        assert opened == -1 or "]" in line[opened:], line
