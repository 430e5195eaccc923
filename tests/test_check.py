"""`skill-doctor check`: finding lines, summaries, formats, thresholds and every exit code."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from sessionkit import claude_jsonl
from skill_doctor import check as check_mod
from skill_doctor.decode import decode_file
from workflowkit import CHAT_STEPS, poor_session, run

EXAMPLES = ROOT / "examples"
LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>SD\d{3}) "
                  r"\[(?P<sev>error|warning)\] (turn (?P<turn>\d+): )?(?P<msg>.+) "
                  r"\((?P<rule>[a-z-]+)\)$")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A working tree with a clean, a retried, a poor, a chat-only, a short and a broken session."""
    s = tmp_path / "sessions"
    s.mkdir()
    shutil.copy(EXAMPLES / "clean-fix.jsonl", s / "clean.jsonl")
    shutil.copy(EXAMPLES / "retry-fix.jsonl", s / "retry.jsonl")
    (s / "poor.jsonl").write_text(poor_session(), encoding="utf-8")
    (s / "chat.jsonl").write_text(claude_jsonl(CHAT_STEPS), encoding="utf-8")
    (s / "short.jsonl").write_text(claude_jsonl([{"user": "hello"}]), encoding="utf-8")
    (tmp_path / "garbage.txt").write_text("this is a shopping list\nmilk\neggs\n", encoding="utf-8")
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    return tmp_path


def test_good_session_passes_with_exit_0_and_a_summary(work, capsys):
    code, out, err = run(["check", "sessions/clean.jsonl"], work, capsys)
    assert code == 0, err
    assert out.splitlines() == [
        "sessions/clean.jsonl: efficiency 10/10, code quality 10/10, 0 findings: pass",
        "Checked 1 session: 0 failed.",
    ]
    assert sorted(p.name for p in work.iterdir()) == ["empty.jsonl", "garbage.txt", "sessions"]


def test_finding_line_is_positioned_at_the_cited_turn_in_the_source(work, capsys):
    code, out, _ = run(["check", "sessions/retry.jsonl"], work, capsys)
    assert code == 0  # 9/10 meets the default threshold; the lost point is only a warning
    first = out.splitlines()[0]
    m = LINE.match(first)
    assert m, first
    turn = decode_file(work / "sessions/retry.jsonl").turns[int(m["turn"]) - 1]
    assert (m["path"], m["code"], m["sev"], m["turn"], m["rule"]) == (
        "sessions/retry.jsonl", "SD103", "warning", "4", "repeated-failing-call")
    assert (int(m["line"]), int(m["col"])) == (turn.line, turn.column) == (5, 1)
    assert "Retry waste 1/2: 1 retry episode: an edit redone" in m["msg"]
    assert out.splitlines()[1] == ("sessions/retry.jsonl: efficiency 9/10, code quality 10/10, "
                                   "1 finding: pass")


def test_session_below_the_threshold_fails_with_exit_1_and_error_findings(work, capsys):
    code, out, _ = run(["check", "sessions/poor.jsonl"], work, capsys)
    assert code == 1
    lines = out.splitlines()
    findings = [LINE.match(line) for line in lines[:-2]]
    assert findings and all(findings), lines
    assert {m["code"] for m in findings} == {"SD101", "SD102", "SD103", "SD104"}
    assert {m["sev"] for m in findings} == {"error"}  # efficiency fails, so its findings are why
    assert lines[-2] == ("sessions/poor.jsonl: efficiency 0/10, code quality N/A, 4 findings: "
                         "FAIL (efficiency 0 < 5)")
    assert lines[-1] == "Checked 1 session: 1 failed."


def test_a_note_that_repeats_the_message_is_not_printed_twice():
    from skill_doctor import rubric
    from skill_doctor.findings import EvidenceItem, Finding
    from skill_doctor.report import grade

    report = grade(decode_file(EXAMPLES / "clean-fix.jsonl"), rubric.load(None), "now")
    same = "34 turns for 6.5 units of work"
    finding = Finding("turn_economy", "SD104", "excessive-turns", "Turn economy", "efficiency",
                      1, 2, 1, same, (EvidenceItem(3, "x", same, 9, 1),), 0, "fewer turns")
    from dataclasses import replace
    result = check_mod.judge("s.jsonl", replace(report, findings=(finding,)), {})
    assert str(result.diagnostics[0]) == (
        "s.jsonl:9:1: SD104 [warning] turn 3: Turn economy 1/2: 34 turns for 6.5 units of work "
        "(excessive-turns)")


def test_exit_zero_reports_the_failure_but_exits_0(work, capsys):
    code, out, _ = run(["check", "--exit-zero", "sessions/poor.jsonl"], work, capsys)
    assert code == 0
    assert "FAIL (efficiency 0 < 5)" in out


def test_command_line_thresholds_override_the_rubric(work, capsys):
    code, out, _ = run(["check", "--min-efficiency", "9.5", "sessions/retry.jsonl"], work, capsys)
    assert code == 1
    assert "FAIL (efficiency 9 < 9.5)" in out
    assert "SD103 [error]" in out
    code, _, _ = run(["check", "--min-efficiency", "0", "sessions/poor.jsonl"], work, capsys)
    assert code == 0


def test_thresholds_are_read_from_the_rubric(work, capsys):
    (work / "strict.yaml").write_text("thresholds:\n  efficiency: 10\n", encoding="utf-8")
    code, out, _ = run(["check", "--rubric", "strict.yaml", "sessions/retry.jsonl"], work, capsys)
    assert code == 1
    assert "FAIL (efficiency 9 < 10)" in out


def test_na_code_quality_passes_any_code_quality_threshold(work, capsys):
    code, out, _ = run(["check", "--min-code-quality", "10", "sessions/chat.jsonl"], work, capsys)
    assert code == 0
    assert "efficiency 10/10, code quality N/A, 0 findings: pass" in out


def test_code_quality_threshold_fails_a_scored_session(work, capsys):
    (work / "q.yaml").write_text("criteria:\n  minimal_diff:\n    bands: [{points: 0}]\n",
                                 encoding="utf-8")
    code, out, _ = run(["check", "--rubric", "q.yaml", "--min-code-quality", "8",
                        "sessions/clean.jsonl"], work, capsys)
    assert code == 1
    assert "FAIL (code quality 7 < 8)" in out
    assert re.search(r"SD202 \[error\] turn \d+: ", out)


def test_too_short_and_empty_sessions_are_not_failures(work, capsys):
    code, out, _ = run(["check", "sessions/short.jsonl", "empty.jsonl"], work, capsys)
    assert code == 0
    assert out.splitlines() == [
        "sessions/short.jsonl: Session too short to assess: it holds one turn, a request the "
        "agent never answered: not graded",
        "empty.jsonl: Session too short to assess: the file holds no turns: not graded",
        "Checked 2 sessions: 0 failed, 2 not graded (too short).",
    ]


def test_unparseable_file_fails_with_exit_1_and_a_positioned_sd001(work, capsys):
    code, out, _ = run(["check", "garbage.txt"], work, capsys)
    assert code == 1
    m = LINE.match(out.splitlines()[0])
    assert m and (m["path"], m["line"], m["col"], m["code"], m["sev"], m["rule"]) == (
        "garbage.txt", "1", "1", "SD001", "error", "unparseable-session")
    assert out.splitlines()[1] == "garbage.txt: parse error: FAIL"


def test_unparseable_file_fails_even_with_a_lenient_threshold(work, capsys):
    code, _, _ = run(["check", "--min-efficiency", "0", "garbage.txt", "sessions/clean.jsonl"],
                     work, capsys)
    assert code == 1


def test_parse_error_part_way_fails_though_the_turns_before_were_scored():
    from dataclasses import replace

    from skill_doctor import rubric
    from skill_doctor.model import ParseProblem
    from skill_doctor.report import grade

    transcript = replace(decode_file(EXAMPLES / "clean-fix.jsonl"),
                         problem=ParseProblem("unexpected text", line=14, column=3))
    report = grade(transcript, rubric.load(None), "2026-01-01T00:00:00Z")
    assert report.status == "parse_error" and report.scores.efficiency.score == 10
    result = check_mod.judge("cut.log", report, {"efficiency": 5, "code_quality": 5})
    assert not result.passed and result.failures == ("parse error",)
    assert str(result.diagnostics[0]).startswith(
        "cut.log:14:3: SD001 [error] Parsing stopped early: unexpected text")
    assert check_mod.summary_line(result) == ("cut.log: efficiency 10/10, code quality 10/10, "
                                              "0 findings: FAIL (parse error)")


@pytest.mark.parametrize("args, message", [
    (["check", "missing.jsonl"], "missing.jsonl: no such file or directory"),
    (["check", "sessions/*.md"], "sessions/*.md: no file matches"),
    (["check", "--min-efficiency", "11", "sessions/clean.jsonl"],
     "--min-efficiency must be from 0 to 10"),
    (["check", "--rubric", "bad.yaml", "sessions/clean.jsonl"], "bad.yaml:2"),
    (["check", "nothing"], "no transcript files found under nothing"),
])
def test_usage_and_rubric_errors_exit_2_with_one_line(work, capsys, args, message):
    (work / "bad.yaml").write_text("thresholds:\n  efficiency: eleven\n", encoding="utf-8")
    (work / "nothing").mkdir()
    code, out, err = run(args, work, capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_argparse_usage_errors_exit_2(work, capsys):
    for args in (["check"], ["check", "--format", "xml", "sessions/clean.jsonl"]):
        with pytest.raises(SystemExit) as exc:
            run(args, work, capsys)
        assert exc.value.code == 2


def test_folders_and_globs_expand_to_every_transcript_once_in_order(work, capsys):
    sub = work / "sessions" / "subagents"
    sub.mkdir()
    shutil.copy(EXAMPLES / "clean-fix.jsonl", sub / "agent-1.jsonl")
    code, out, _ = run(["check", "sessions", "sessions/c*.jsonl"], work, capsys)
    summaries = [line.split(":")[0] for line in out.splitlines()
                 if not LINE.match(line) and not line.startswith("Checked")]
    assert summaries == ["sessions/chat.jsonl", "sessions/clean.jsonl", "sessions/poor.jsonl",
                         "sessions/retry.jsonl", "sessions/short.jsonl"]
    assert code == 1  # poor.jsonl


def test_quiet_prints_only_failing_sessions(work, capsys):
    code, out, _ = run(["check", "-q", "sessions"], work, capsys)
    assert code == 1
    *lines, totals = out.splitlines()
    assert all(line.startswith("sessions/poor.jsonl") for line in lines), out
    assert lines[-1].endswith("FAIL (efficiency 0 < 5)")
    assert totals == "Checked 5 sessions: 1 failed, 1 not graded (too short)."  # the summary


def test_quiet_run_that_passes_prints_only_the_totals(work, capsys):
    code, out, _ = run(["check", "-q", "sessions/clean.jsonl"], work, capsys)
    assert (code, out) == (0, "Checked 1 session: 0 failed.\n")


def test_json_format(work, capsys):
    code, out, _ = run(["check", "--format", "json", "sessions/retry.jsonl",
                        "sessions/poor.jsonl", "garbage.txt"], work, capsys)
    assert code == 1
    data = json.loads(out)
    assert data["schema"] == "skill-doctor/check/v1"
    assert data["thresholds"] == {"code_quality": 5, "efficiency": 5}
    assert data["passed"] is False
    assert data["counts"] == {"sessions": 3, "failed": 2, "not_graded": 0}
    retry, poor, garbage = data["sessions"]
    assert retry["passed"] is True and retry["scores"] == {"efficiency": 9, "code_quality": 10}
    assert retry["diagnostics"] == [{
        "path": "sessions/retry.jsonl", "line": 5, "column": 1, "code": "SD103",
        "severity": "warning", "turn": 4, "rule": "repeated-failing-call",
        "message": retry["diagnostics"][0]["message"]}]
    assert poor["failures"] == ["efficiency 0 < 5"]
    assert garbage["status"] == "parse_error" and garbage["failures"] == ["parse error"]


def test_github_format_annotates_findings_and_failing_sessions(work, capsys):
    code, out, _ = run(["check", "--format", "github", "--min-efficiency", "9.5",
                        "sessions/retry.jsonl"], work, capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("::error file=sessions/retry.jsonl,line=5,col=1,"
                               "title=SD103 repeated-failing-call::turn 4: Retry waste 1/2: "
                               "1 retry episode")
    assert lines[1] == ("::error file=sessions/retry.jsonl,title=skill-doctor::session below "
                        "the thresholds: efficiency 9 < 9.5")
    assert lines[2].endswith("FAIL (efficiency 9 < 9.5)")


def test_github_annotations_escape_their_special_characters():
    d = check_mod.Diagnostic("a,b:c.jsonl", 3, 1, "SD101", "warning", 2, "50% done\nnext",
                             "unfinished-task")
    check = check_mod.SessionCheck("a,b:c.jsonl", None, True, (), (d,))  # type: ignore[arg-type]
    line = next(iter(check_mod.format_github([check])))
    assert line == ("::warning file=a%2Cb%3Ac.jsonl,line=3,col=1,title=SD101 unfinished-task::"
                    "turn 2: 50%25 done%0Anext")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("tty, no_color, coloured", [
    (True, None, True), (True, "1", False), (False, None, False)])
def test_colour_only_on_a_terminal_and_never_with_no_color(work, monkeypatch, tty, no_color,
                                                           coloured):
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    stream = _Tty() if tty else io.StringIO()
    monkeypatch.setattr("sys.stdout", stream)
    monkeypatch.chdir(work)
    from skill_doctor.cli import main
    assert main(["check", "sessions/poor.jsonl"]) == 1
    text = stream.getvalue()
    assert ("\033[" in text) is coloured
    if coloured:  # the plain text is still all there
        plain = re.sub(r"\033\[[0-9;]*m", "", text)
        assert "sessions/poor.jsonl: efficiency 0/10, code quality N/A, 4 findings: FAIL" in plain


def test_html_is_written_only_when_asked(work, capsys):
    code, out, err = run(["check", "--html", "out", "sessions/clean.jsonl", "sessions/poor.jsonl"],
                         work, capsys)
    assert code == 1
    assert "Reports written to ./out/index.html" in err
    index = (work / "out" / "index.html").read_text(encoding="utf-8")
    for session_id in ("c1ea0f1c-0000-4000-8000-000000000001",
                       "99999999-0000-4000-8000-000000000001"):
        assert f'href="sessions/{session_id}/report.html"' in index
        assert (work / "out" / "sessions" / session_id / "report.html").is_file()


def test_html_directory_outside_the_working_tree_is_refused_before_grading(work, capsys):
    code, out, err = run(["check", "--html", "../elsewhere", "sessions/clean.jsonl"], work, capsys)
    assert code == 2 and out == ""
    assert "outside the current working directory" in err
    assert not (work.parent / "elsewhere").exists()


def test_a_judged_session_keeps_its_verdict_not_its_turns():
    """`check` of many sessions holds one verdict each, not each session: the turns, facts and
    page data are dropped once judged, and what the outputs show is kept."""
    from skill_doctor import rubric as rubric_mod
    from skill_doctor.report import grade

    rubric = rubric_mod.load(None)
    transcript = decode_file(EXAMPLES / "retry-fix.jsonl")
    report = grade(transcript, rubric, "2026-01-01T00:00:00Z", overview=False)
    check = check_mod.judge("retry-fix.jsonl", report, rubric.thresholds)
    assert check.report.transcript.turns == () and check.report.facts is None
    assert check.turns == len(transcript.turns) > 0 and check.graded
    assert check.report.findings == report.findings and check.report.session_id == report.session_id
    [session] = json.loads(check_mod.format_json([check], rubric.thresholds))["sessions"]
    assert session["session"]["turns"] == len(transcript.turns)
