"""What the command line tells its user: rule ids and names accepted by `rubric explain`, a
warning for a report path that does not exist, which session `report` picked, `sessions` in
start-time order, and Ctrl-C during a parallel batch ending in one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, run_cli as run
from sessionkit import claude_jsonl

EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize("name", ["retry_waste", "SD103", "sd103", "repeated-failing-call"])
def test_rubric_explain_accepts_criterion_rule_id_and_rule_name(name, capsys, tmp_path):
    code, out, _ = run(["rubric", "explain", name], tmp_path, capsys)
    assert code == 0
    assert out.startswith("SD103 retry_waste (repeated-failing-call)")
    assert "SD101" not in out  # only the criterion asked for


def test_rubric_explain_unknown_lists_ids_and_names(capsys, tmp_path):
    code, _, err = run(["rubric", "explain", "SD999"], tmp_path, capsys)
    assert code == 2 and "SD103 retry_waste (repeated-failing-call)" in err
    assert len(err.strip().splitlines()) == 1


def test_report_of_a_missing_path_warns_and_still_writes_the_minimal_report(tmp_path, capsys):
    code, out, err = run(["report", "sesions/typo.jsonl", "-o", "r"], tmp_path, capsys)
    assert code == 0
    assert json.loads((tmp_path / "r" / "report.json").read_text())["status"] == "no_history"
    assert err.strip() == ("skill-doctor: warning: sesions/typo.jsonl does not exist; writing "
                           'the "No conversation history found" report')


def test_report_of_an_existing_file_prints_no_warning(tmp_path, capsys):
    code, _, err = run(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "r"], tmp_path, capsys)
    assert code == 0 and err == ""


def _store(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    config = tmp_path / "claude-config"
    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True)
    own = config / "projects" / "".join(c if c.isalnum() else "-" for c in str(project))
    own.mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    return own, project


def test_report_without_a_path_says_which_session_and_store(tmp_path, capsys, monkeypatch):
    own, project = _store(tmp_path, monkeypatch)
    (own / "mine.jsonl").write_text((EXAMPLES / "clean-fix.jsonl").read_text())
    code, _, err = run(["report", "-o", "r"], project, capsys)
    assert code == 0
    assert err.startswith("Grading ") and "mine.jsonl" in err
    assert "(the newest claude-code session of this project)" in err

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, _, err = run(["report", "-o", "r"], elsewhere, capsys)
    assert "in the stores; none is of this project" in err


def test_sessions_sorts_by_start_time_not_file_time(tmp_path, capsys, monkeypatch):
    own, project = _store(tmp_path, monkeypatch)
    early = own / "early.jsonl"
    late = own / "late.jsonl"
    early.write_text(claude_jsonl([{"user": "a"}, {"assistant": "b"}], session_id="early"))
    late.write_text(claude_jsonl([{"user": "a"}, {"assistant": "b"}], session_id="late")
                    .replace("2026-01-01T10:", "2026-03-01T10:"))
    os.utime(late, (1_000, 1_000))  # the later session's file is the older one
    os.utime(early, (2_000, 2_000))
    code, out, _ = run(["sessions"], project, capsys)
    rows = [line for line in out.splitlines()[1:]]
    assert code == 0 and rows[0].endswith("late.jsonl") and rows[1].endswith("early.jsonl")
    assert "2026-03-01" in rows[0]


def test_sessions_without_a_start_fall_back_to_file_time(tmp_path, capsys, monkeypatch):
    own, project = _store(tmp_path, monkeypatch)
    for name, mtime in (("a.jsonl", 1_000), ("b.jsonl", 3_000)):
        path = own / name
        path.write_text(claude_jsonl([{"user": "a"}, {"assistant": "b"}], session_id=name)
                        .replace('"timestamp"', '"at"'))
        os.utime(path, (mtime, mtime))
    code, out, _ = run(["sessions"], project, capsys)
    rows = out.splitlines()[1:]
    assert rows[0].endswith("b.jsonl") and rows[1].endswith("a.jsonl")


@pytest.mark.slow
def test_ctrl_c_during_parallel_batch_is_one_line_exit_130_and_nothing_left(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    steps = [{"user": "Fix the pager"}]
    for i in range(400):  # sessions big enough that grading is under way when Ctrl-C comes
        steps.append({"tool": "Read", "input": {"file_path": f"src/m{i % 40}.py"},
                      "output": "x = 1\n" * 50})
    steps.append({"assistant": "Done."})
    text = claude_jsonl(steps)
    # Enough sessions that the batch is still grading well after its first report is staged,
    # whatever the machine's speed: the interruption must land mid-batch.
    for i in range(240):
        (sessions / f"s{i:03d}.jsonl").write_text(text.replace("11111111", f"{i:08d}"))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("SOURCE_DATE_EPOCH", None)
    proc = subprocess.Popen([sys.executable, "-m", "skill_doctor", "batch", "sessions", "-o", "out",
                             "-j", "2"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            # as from a terminal: a runner that starts the tests in the
                            # background (`cmd &` in a script) leaves SIGINT ignored, and an
                            # ignored signal stays ignored across exec
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60

    def staged_reports() -> int:
        return sum(1 for d in tmp_path.iterdir() if d.name.startswith(".out.")
                   and (d / "sessions").is_dir() for _ in (d / "sessions").iterdir())

    while not staged_reports():  # grading is under way once a report is staged
        assert proc.poll() is None and time.monotonic() < deadline, "the batch did not start"
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.decode() == "skill-doctor: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions"]
