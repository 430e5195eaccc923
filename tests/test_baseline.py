"""`check --baseline summary.jsonl [--tolerance N]`: a session that falls more than N below the
baseline's session of the same task fails, naming the criteria that fell; with no task in
common the mean is compared. The baseline is what `batch` writes, as a CI job would use it."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT, run_cli as run

EXAMPLES = ROOT / "examples"


@pytest.fixture
def ci(tmp_path, capsys):
    """Last release's runs graded by `batch` into baseline/, and this change's runs."""
    (tmp_path / "before").mkdir()
    (tmp_path / "after").mkdir()
    shutil.copy(EXAMPLES / "clean-fix.jsonl", tmp_path / "before" / "fix-pager.jsonl")
    shutil.copy(EXAMPLES / "clean-fix.jsonl", tmp_path / "before" / "tidy.jsonl")
    code, _, _ = run(["batch", "before", "-o", "baseline"], tmp_path, capsys)
    assert code == 0
    records = [json.loads(line) for line in
               (tmp_path / "baseline" / "summary.jsonl").read_text().splitlines()]
    assert [r["session"]["task"] for r in records] == ["fix-pager", "tidy"]
    shutil.copy(EXAMPLES / "retry-fix.jsonl", tmp_path / "after" / "fix-pager.jsonl")  # worse
    shutil.copy(EXAMPLES / "clean-fix.jsonl", tmp_path / "after" / "tidy.jsonl")  # same
    return tmp_path


def test_session_below_its_task_baseline_fails_and_names_the_criterion(ci, capsys):
    code, out, _ = run(["check", "after", "--baseline", "baseline/summary.jsonl",
                        "--tolerance", "0"], ci, capsys)
    assert code == 1
    lines = out.splitlines()
    assert ("after/fix-pager.jsonl:1:1: SD002 [error] efficiency 9/10 is below the baseline's "
            "10 for task fix-pager; fell: retry_waste 2 -> 1 (below-baseline)") in lines
    assert "after/fix-pager.jsonl: efficiency 9/10, code quality 10/10, 1 finding: FAIL " \
           "(efficiency 9 < baseline 10 - 0)" in lines
    assert any(line.startswith("after/tidy.jsonl: ") and line.endswith(": pass") for line in lines)
    assert "Baseline baseline/summary.jsonl (tolerance 0): 2 session(s) compared by task" in lines
    assert lines[-1] == "Checked 2 sessions: 1 failed."


def test_a_drop_within_the_tolerance_passes(ci, capsys):
    code, out, _ = run(["check", "after", "--baseline", "baseline/summary.jsonl"], ci, capsys)
    assert code == 0 and "SD002" not in out  # the default tolerance is 1 point
    code, _, _ = run(["check", "after", "--baseline", "baseline/summary.jsonl",
                      "--tolerance", "0.5"], ci, capsys)
    assert code == 1


def test_without_a_task_in_common_the_mean_is_compared(ci, capsys):
    (ci / "renamed").mkdir()
    shutil.copy(EXAMPLES / "retry-fix.jsonl", ci / "renamed" / "run-1.jsonl")
    shutil.copy(EXAMPLES / "retry-fix.jsonl", ci / "renamed" / "run-2.jsonl")
    code, out, _ = run(["check", "renamed", "--baseline", "baseline/summary.jsonl",
                        "--tolerance", "0.5"], ci, capsys)
    assert code == 1
    assert ("baseline/summary.jsonl:1:1: SD002 [error] mean efficiency 9 of 2 session(s) is more "
            "than 0.5 below the baseline's 10 (2 session(s), no task in common); fell: "
            "retry_waste 2 -> 1 (below-baseline)") in out.splitlines()
    assert out.splitlines()[-1] == "Checked 2 sessions: 0 failed; the mean fell below the baseline."
    # each session on its own meets the thresholds
    assert sum(line.endswith(": pass") for line in out.splitlines()) == 2


def test_json_and_github_formats_carry_the_baseline(ci, capsys):
    code, out, _ = run(["check", "after", "--baseline", "baseline/summary.jsonl",
                        "--tolerance", "0", "--format", "json"], ci, capsys)
    data = json.loads(out)
    assert code == 1 and data["passed"] is False
    assert data["baseline"]["mode"] == "task" and data["baseline"]["sessions_matched"] == 2
    fix = next(s for s in data["sessions"] if s["path"] == "after/fix-pager.jsonl")
    assert fix["failures"] == ["efficiency 9 < baseline 10 - 0"]
    assert fix["diagnostics"][0]["code"] == "SD002"
    code, out, _ = run(["check", "after", "--baseline", "baseline/summary.jsonl",
                        "--tolerance", "0", "--format", "github"], ci, capsys)
    assert ("::error file=after/fix-pager.jsonl,line=1,col=1,title=SD002 below-baseline::"
            "efficiency 9/10 is below the baseline's 10 for task fix-pager; fell: "
            "retry_waste 2 -> 1") in out.splitlines()


@pytest.mark.parametrize("content, message", [
    ("not json\n", "baseline.jsonl:1: not a JSON line"),
    ('{"a": 1}\n', "baseline.jsonl:1: not a skill-doctor summary record"),
    ("", "baseline.jsonl: no graded session in it"),
])
def test_a_bad_baseline_is_a_usage_error(ci, capsys, content, message):
    (ci / "baseline.jsonl").write_text(content)
    code, out, err = run(["check", "after", "--baseline", "baseline.jsonl"], ci, capsys)
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1


def test_missing_baseline_and_tolerance_alone_are_usage_errors(ci, capsys):
    code, _, err = run(["check", "after", "--baseline", "nope.jsonl"], ci, capsys)
    assert code == 2 and "--baseline nope.jsonl: cannot read" in err
    code, _, err = run(["check", "after", "--tolerance", "1"], ci, capsys)
    assert code == 2 and "--tolerance needs --baseline" in err
