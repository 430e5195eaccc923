"""The command line as a user meets it: exit codes, messages, the contract's failure table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli as run
from sessionkit import claude_jsonl
from skill_doctor import __version__
from skill_doctor.cli import main

EXAMPLES = ROOT / "examples"


def read_report(directory: Path) -> tuple[str, dict]:
    html = (directory / "report.html").read_text(encoding="utf-8")
    data = json.loads((directory / "report.json").read_text(encoding="utf-8"))
    return html, data


def test_clean_session_scores_ten_and_ten_with_no_findings(tmp_path, capsys):
    code, out, err = run(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "r"], tmp_path, capsys)
    assert code == 0, err
    assert "Report written to ./r/report.html" in out
    assert "Efficiency: 10/10" in out and "Code quality: 10/10" in out
    html, data = read_report(tmp_path / "r")
    assert data["status"] == "ok"
    assert data["scores"]["efficiency"]["score"] == 10
    assert data["scores"]["code_quality"]["score"] == 10
    assert data["findings"] == [] and data["suggestions"] == []
    assert "No findings: every scored criterion is at its maximum." in html


def test_failed_then_retried_edit_costs_one_retry_point_and_cites_the_turn(tmp_path, capsys):
    code, out, _ = run(["report", str(EXAMPLES / "retry-fix.jsonl"), "-o", "r"], tmp_path, capsys)
    assert code == 0
    _, data = read_report(tmp_path / "r")
    retry = data["scores"]["efficiency"]["criteria"]["retry_waste"]
    assert retry["score"] == 1 and retry["max"] == 2
    [finding] = [f for f in data["findings"] if f["criterion"] == "retry_waste"]
    assert [e["turn"] for e in finding["evidence"]] == [4]
    assert "String to replace not found" in finding["evidence"][0]["excerpt"]
    assert data["suggestions"][0]["criterion"] == "retry_waste"


def test_missing_path_writes_the_no_history_report(tmp_path, capsys):
    code, out, _ = run(["report", "nowhere.jsonl", "-o", "r"], tmp_path, capsys)
    assert code == 0
    html, data = read_report(tmp_path / "r")
    assert data["status"] == "no_history"
    assert "No conversation history found" in html
    assert data["scores"]["efficiency"]["score"] is None
    assert "No conversation history found" in out


def test_empty_directory_is_no_history(tmp_path, capsys):
    (tmp_path / "sessions").mkdir()
    code, _, _ = run(["report", "sessions", "-o", "r"], tmp_path, capsys)
    assert code == 0
    assert read_report(tmp_path / "r")[1]["status"] == "no_history"


def test_no_path_and_no_store_is_no_history(tmp_path, capsys):
    code, _, _ = run(["report", "-o", "r"], tmp_path, capsys)
    assert code == 0
    assert read_report(tmp_path / "r")[1]["status"] == "no_history"


@pytest.mark.parametrize("content", ["", "\n\n", json.dumps({"type": "summary", "summary": "x",
                                                               "leafUuid": "u"}) + "\n"])
def test_empty_or_one_turn_session_is_too_short(tmp_path, capsys, content):
    (tmp_path / "s.jsonl").write_text(content)
    code, _, _ = run(["report", "s.jsonl", "-o", "r"], tmp_path, capsys)
    assert code == 0
    html, data = read_report(tmp_path / "r")
    assert data["status"] == "too_short"
    assert "Session too short to assess" in html


def test_single_turn_is_too_short(tmp_path, capsys):
    (tmp_path / "s.jsonl").write_text(claude_jsonl([{"user": "hello there, fix the bug"}]))
    run(["report", "s.jsonl", "-o", "r"], tmp_path, capsys)
    assert read_report(tmp_path / "r")[1]["status"] == "too_short"


def test_a_log_of_prompts_alone_is_too_short_and_one_with_answers_is_graded(tmp_path, capsys):
    # A prompt log whose answers were never saved holds nothing the agent did.
    prompts = "".join(f"# PROMPT - 2026-06-26 09:{m:02d}:00 +02:00 - session 1\n\n{text}\n\n"
                      for m, text in ((10, "Add a naive baseline."), (20, "Now add the metric.")))
    (tmp_path / "prompt-log.md").write_text(prompts)
    run(["report", "prompt-log.md", "-o", "r"], tmp_path, capsys)
    html, data = read_report(tmp_path / "r")
    assert data["status"] == "too_short" and "none of the agent's turns" in data["message"]
    assert "Session too short to assess" in html
    answered = prompts + "# RESPONSE - 2026-06-26 09:31:00 +02:00 - session 1\n\nAdded both.\n"
    (tmp_path / "answered.md").write_text(answered)
    run(["report", "answered.md", "-o", "r2"], tmp_path, capsys)
    assert read_report(tmp_path / "r2")[1]["status"] == "ok"


def test_unparseable_text_is_a_parse_error_report_with_na_scores(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("just some prose\nwith no turn markers at all\n")
    code, _, _ = run(["report", "notes.txt", "-o", "r"], tmp_path, capsys)
    assert code == 0
    html, data = read_report(tmp_path / "r")
    assert data["status"] == "parse_error"
    assert data["scores"]["efficiency"]["score"] is None
    assert data["scores"]["code_quality"]["score"] is None
    assert "Parsing error" in html
    assert data["parse_error"]["line"] >= 1


def test_directory_takes_newest_transcript_and_skips_subagents(tmp_path, capsys):
    folder = tmp_path / "sessions"
    folder.mkdir()
    old = folder / "old.jsonl"
    old.write_text((EXAMPLES / "retry-fix.jsonl").read_text())
    new = folder / "new.jsonl"
    new.write_text((EXAMPLES / "clean-fix.jsonl").read_text())
    agent = folder / "agent-abc123.jsonl"
    agent.write_text((EXAMPLES / "retry-fix.jsonl").read_text())
    os.utime(old, (1_000, 1_000))
    os.utime(new, (2_000, 2_000))
    os.utime(agent, (3_000, 3_000))
    run(["report", "sessions", "-o", "r"], tmp_path, capsys)
    data = read_report(tmp_path / "r")[1]
    assert data["session"]["source"].endswith("new.jsonl")


def test_default_finds_newest_session_of_the_current_project(tmp_path, capsys, monkeypatch):
    config = tmp_path / "claude-config"
    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True)
    own = config / "projects" / "".join(c if c.isalnum() else "-" for c in str(project))
    other = config / "projects" / "-elsewhere"
    own.mkdir(parents=True)
    other.mkdir(parents=True)
    mine = own / "mine.jsonl"
    mine.write_text((EXAMPLES / "clean-fix.jsonl").read_text())
    theirs = other / "theirs.jsonl"
    theirs.write_text((EXAMPLES / "retry-fix.jsonl").read_text())
    os.utime(mine, (1_000, 1_000))
    os.utime(theirs, (2_000, 2_000))  # newer, but another project's
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    code, _, _ = run(["report", "-o", "r"], project, capsys)
    assert code == 0
    assert read_report(project / "r")[1]["session"]["source"].endswith("mine.jsonl")


def test_output_outside_working_directory_is_refused(tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    code, _, err = run(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "../escape"], work,
                       capsys)
    assert code == 2
    assert err.count("\n") == 1 and "outside the current working directory" in err
    assert not (tmp_path / "escape").exists()


def test_existing_output_directory_is_refused_before_the_session_is_read(tmp_path, capsys,
                                                                         monkeypatch):
    # A large session must not be decoded and graded only to be thrown away over the name.
    import skill_doctor.decode as decode

    def no_decoding(*args, **kwargs):
        raise AssertionError("the session was decoded before the output was checked")

    (tmp_path / "r").mkdir()
    monkeypatch.setattr(decode, "decode_file", no_decoding)
    for command in (["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "r"],
                    ["compare", str(EXAMPLES / "clean-fix.jsonl"), str(EXAMPLES / "clean-fix.jsonl"),
                     "-o", "r"]):
        code, _, err = run(command, tmp_path, capsys)
        assert code == 2 and "already exists" in err, command


def test_existing_output_directory_is_refused_unless_forced(tmp_path, capsys):
    session = str(EXAMPLES / "clean-fix.jsonl")
    assert run(["report", session, "-o", "r"], tmp_path, capsys)[0] == 0
    code, _, err = run(["report", session, "-o", "r"], tmp_path, capsys)
    assert code == 2 and "already exists" in err
    assert run(["report", session, "-o", "r", "--force"], tmp_path, capsys)[0] == 0
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("precious")
    code, _, err = run(["report", session, "-o", "mine", "--force"], tmp_path, capsys)
    assert code == 2 and "not a skill-doctor report" in err
    assert (mine / "notes.txt").read_text() == "precious"


def test_write_failure_is_one_line_and_leaves_nothing(tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the report's parent folder should be")
    code, _, err = run(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "blocker/r"],
                       tmp_path, capsys)
    assert code == 3 and err.count("\n") == 1
    assert err.startswith("skill-doctor: error: cannot write the report")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]


def test_write_failure_simulated_leaves_nothing(tmp_path, capsys, monkeypatch):
    import skill_doctor.write as write_mod

    real_open = open

    def failing_open(path, mode="r", *args, **kwargs):
        if "w" in mode and str(path).endswith("report.json"):
            raise OSError(28, "No space left on device")
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(write_mod, "open", failing_open, raising=False)
    code, _, err = run(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "r"], tmp_path, capsys)
    assert code == 3
    assert "No space left on device" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_bad_rubric_is_exit_2_with_file_line_and_key(tmp_path, capsys):
    bad = tmp_path / "rubric.yaml"
    bad.write_text("criteria:\n  retry_waste:\n    bands:\n      - {at_most: 0, points: 5}\n"
                   "      - {points: 0}\n")
    code, _, err = run(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "r", "--rubric",
                        str(bad)], tmp_path, capsys)
    assert code == 2
    assert f"{bad}:4: criteria.retry_waste.bands.0.points: points 5 exceed" in err
    assert not (tmp_path / "r").exists()


def test_unknown_harness_is_a_usage_error(tmp_path, capsys):
    code, _, err = run(["report", str(EXAMPLES / "clean-fix.jsonl"), "--harness", "nope"],
                       tmp_path, capsys)
    assert code == 2 and "unknown harness" in err


def test_transcript_is_opened_read_only_and_left_untouched(tmp_path, capsys):
    session = tmp_path / "s.jsonl"
    session.write_bytes((EXAMPLES / "retry-fix.jsonl").read_bytes())
    session.chmod(0o444)
    before = (session.read_bytes(), session.stat().st_mtime_ns)
    assert run(["report", "s.jsonl", "-o", "r"], tmp_path, capsys)[0] == 0
    assert (session.read_bytes(), session.stat().st_mtime_ns) == before


def test_same_input_gives_byte_identical_files(tmp_path, capsys):
    session = str(EXAMPLES / "retry-fix.jsonl")
    run(["report", session, "-o", "a"], tmp_path, capsys)
    run(["report", session, "-o", "b"], tmp_path, capsys)
    for name in ("report.html", "report.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_default_output_directory_is_timestamped_under_cwd(tmp_path, capsys):
    code, out, _ = run(["report", str(EXAMPLES / "clean-fix.jsonl")], tmp_path, capsys)
    assert code == 0
    # SOURCE_DATE_EPOCH is 2026-01-01T00:00:00Z in the tests.
    assert (tmp_path / "skill-doctor-report-20260101-000000" / "report.html").is_file()
    assert "./skill-doctor-report-20260101-000000/report.html" in out


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"skill-doctor {__version__}"
    with pytest.raises(SystemExit) as exc:
        main(["report", "--help"])
    assert exc.value.code == 0
    assert "--rubric" in capsys.readouterr().out


def test_module_entry_point_runs(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "skill_doctor", "--version"], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("skill-doctor ")


def test_rubric_explain_prints_docs_and_bands(capsys):
    assert main(["rubric", "explain", "retry_waste"]) == 0
    out = capsys.readouterr().out
    assert "SD103 retry_waste (repeated-failing-call)" in out
    assert "value <= 0" in out and "What it measures" in out
