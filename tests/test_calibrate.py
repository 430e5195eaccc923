"""`skill-doctor calibrate`: readings and labels validated with positions, and the figures
(agreement per reader, between readers, where they agree, bias, confusion, AUC) computed right."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skill_doctor import calibrate as cal
from skill_doctor.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

FULL = {"task_completion": 3, "unnecessary_exploration": 3, "retry_waste": 2, "turn_economy": 2,
        "correct_file_identification": 3, "minimal_diff": 3, "pattern_adherence": 2,
        "regression_avoidance": 2}
NO_CODE = {**FULL, "correct_file_identification": None, "minimal_diff": None,
           "pattern_adherence": None, "regression_avoidance": None}


def reading(session: str, **scores) -> Reading:
    return cal.Reading("r", session, session, {**FULL, **scores})


Reading = cal.Reading


# -- the figures, on grades given directly -----------------------------------------------------


def test_agreement_per_reader_between_readers_and_where_they_agree():
    ours = {"s1": cal.Grade("ok", dict(FULL)),
            "s2": cal.Grade("ok", {**FULL, "task_completion": 1}),
            "s3": cal.Grade("ok", dict(NO_CODE))}
    a = {"s1": cal.Reading("a", "s1", "s1", dict(FULL)),
         "s2": cal.Reading("a", "s2", "s2", {**FULL, "task_completion": 2}),
         "s3": cal.Reading("a", "s3", "s3", dict(NO_CODE))}
    b = {"s1": cal.Reading("b", "s1", "s1", {**FULL, "task_completion": 2}),
         "s2": cal.Reading("b", "s2", "s2", {**FULL, "task_completion": 2}),
         "s3": cal.Reading("b", "s3", "s3", {**NO_CODE, "minimal_diff": 3})}
    figures = cal.compare_readings({"a": a, "b": b}, ours)
    task = figures["criteria"]["task_completion"]
    # a: 3/3 agrees on s1 and s3, 1 against 2 on s2; b: 3 against 2, 1 against 2, 3 against 3.
    assert task["readers"]["a"] == {"n": 3, "exact": round(2 / 3, 4), "within_one": 1.0,
                                    "bias": round(-1 / 3, 2)}
    assert task["readers"]["b"] == {"n": 3, "exact": round(1 / 3, 4), "within_one": 1.0,
                                    "bias": 0.0}
    # The readers agree on s2 and s3, not on s1; on those two we match s3 only.
    assert task["between_readers"]["exact"] == round(2 / 3, 4)
    assert task["where_readers_agree"] == {"n": 2, "exact": 0.5, "within_one": 1.0,
                                           "bias": -0.5}
    assert task["confusion"] == {"2": {"1": 2, "3": 1}, "3": {"3": 3}}
    # A reader's score where we said N/A is a disagreement; N/A on both sides is no item.
    diff = figures["criteria"]["minimal_diff"]
    assert diff["readers"]["a"]["n"] == 2 and diff["readers"]["a"]["exact"] == 1.0
    assert diff["readers"]["b"]["n"] == 3 and diff["readers"]["b"]["exact"] == round(2 / 3, 4)
    assert diff["confusion"]["3"] == {"3": 4, "N/A": 1}
    assert figures["sessions"] == 3 and figures["readers"] == ["a", "b"]


def test_status_readings_and_sessions_we_could_not_grade():
    ours = {"short": cal.Grade("too_short"), "broken": cal.Grade("parse_error"),
            "graded": cal.Grade("error")}
    readers = {"a": {"short": cal.Reading("a", "short", "short", {}, ("too_short", "ok")),
                     "broken": cal.Reading("a", "broken", "broken", {}, ("ok",)),
                     "graded": cal.Reading("a", "graded", "graded", dict(FULL))}}
    figures = cal.compare_readings(readers, ours)
    status = figures["criteria"][cal.STATUS_ITEM]["readers"]["a"]
    assert status == {"n": 2, "exact": 0.5, "within_one": 0.5, "bias": None}
    # A session the reader graded but we did not: every criterion is a miss.
    assert figures["criteria"]["task_completion"]["readers"]["a"]["exact"] == 0.0
    assert figures["overall"]["readers"]["a"]["n"] == 2 + 8


def test_only_the_named_readings_are_measured():
    ours = {"s1": cal.Grade("ok", dict(FULL)), "s2": cal.Grade("ok", {**FULL, "retry_waste": 0})}
    readers = {"r": {"s1": reading("s1"), "s2": reading("s2")}}
    assert cal.compare_readings(readers, ours, ["s1"])["overall"]["readers"]["r"]["exact"] == 1.0
    both = cal.compare_readings(readers, ours)["overall"]["readers"]["r"]
    assert both["exact"] == round(15 / 16, 4)


@pytest.mark.parametrize("pairs, expected", [
    ([(3, True), (1, False)], 1.0),
    ([(1, True), (3, False)], 0.0),
    ([(2, True), (2, False)], 0.5),
    ([(3, True), (2, True), (2, False), (0, False)], 0.875),
    ([(3, True)], None),
])
def test_auc(pairs, expected):
    assert cal.auc(pairs) == expected


def test_labels_figures_count_unscored_runs_as_lowest():
    labels = [cal.Label("x/pass1", True, "x", True), cal.Label("x/fail1", False, "x", True),
              cal.Label("x/fail2", False, "x", True), cal.Label("y/pass", True, "y", False)]
    grades = {"x/pass1": cal.Grade("ok", {"task_completion": 3}, 8),
              "x/fail1": cal.Grade("ok", {"task_completion": 1}, 9),
              "x/fail2": cal.Grade("too_short"),
              "y/pass": cal.Grade("parse_error")}
    figures = cal.compare_labels(labels, grades)
    assert figures["x"] == {"runs": 3, "pass": 1, "unscored": 1, "unscored_agent_ran": 1,
                            "auc_task_completion": 1.0, "auc_efficiency": 0.5}
    assert figures["y"]["auc_task_completion"] is None
    assert figures["all"]["unscored_agent_ran"] == 1  # the y run's log shows no agent at work
    assert list(figures) == ["x", "y", "all"]


def test_readers_p_pass_and_task_completion_get_their_own_auc():
    ours = {"p": cal.Grade("ok", {"task_completion": 2}), "f": cal.Grade("ok", {"task_completion": 2})}
    readers = {"a": {"p": cal.Reading("a", "p", "p", dict(FULL), p_pass=80.0),
                     "f": cal.Reading("a", "f", "f", {**FULL, "task_completion": 1}, p_pass=30.0)}}
    figures = cal.compare_readings(readers, ours, verdicts={"p": True, "f": False},
                                   sources={"p": "suite", "f": "suite"})
    assert figures["auc"]["suite"] == {"runs": 2, "pass": 1, "ours": 0.5,
                                       "a task_completion": 1.0, "a p_pass": 1.0}


# -- the files, validated with positions --------------------------------------------------------


def _reading_text(**overrides) -> str:
    data = {"session": "s.jsonl", "scores": dict(FULL), "notes": "n"}
    data.update(overrides)
    return json.dumps(data, indent=2)


@pytest.mark.parametrize("text, where, message", [
    ('{\n  "session": "s",\n  "scores": {,\n}', ":3:", "not valid JSON"),
    (_reading_text(verdict="pass"), ":14: verdict:", "unknown key"),
    (_reading_text(scores={**FULL, "task_completion": 4}), ":4: scores.task_completion:",
     "from 0 to 3"),
    (_reading_text(scores={**FULL, "retry_waste": "2"}), ":6: scores.retry_waste:",
     "whole number"),
    (_reading_text(scores={k: v for k, v in FULL.items() if k != "minimal_diff"}),
     ":3: scores.minimal_diff:", "missing"),
    (_reading_text(scores={**FULL, "speed": 2}), ":12: scores.speed:", "unknown criterion"),
    (_reading_text(session=""), ":2: session:", "must name the session"),
    (_reading_text(status=["finished"]), ":14: status:", "list of statuses"),
    (_reading_text(p_pass=140), ":14: p_pass:", "0 to 100"),
    ('{"session": "s", "session": "t"}', "", "duplicate key 'session'"),
    ('[1, 2]', ":1:", "must be a JSON object"),
])
def test_a_bad_reading_is_named_with_its_line_and_key(text, where, message):
    with pytest.raises(cal.CalibrationError) as caught:
        cal.parse_reading(text, "r.json", "a", "r")
    said = str(caught.value)
    assert said.startswith("r.json" + where), said
    assert message in said


def test_a_status_reading_needs_no_scores():
    got = cal.parse_reading('{"session": "s", "status": ["too_short"], "scores": null}', "r",
                            "a", "r")
    assert got.status == ("too_short",) and got.scores == {}


@pytest.mark.parametrize("text, message", [
    ("file\tpassed\nx\ttrue\n", "line 1"),
    ("file\tresolved\nx\tmaybe\n", "2: resolved: must be true or false"),
    ("file\tresolved\n\tfalse\n", "2: file: empty"),
    ("file\tresolved\n", "holds no runs"),
])
def test_a_bad_labels_file_is_named_with_its_line(text, message):
    with pytest.raises(cal.CalibrationError) as caught:
        cal.parse_labels(text, "labels.tsv")
    shown = str(caught.value).replace("labels.tsv:1:", "labels.tsv: line 1:")
    assert message in shown, shown


def test_a_bad_split_is_named_with_its_line():
    with pytest.raises(cal.CalibrationError, match=r"split.tsv:3: half: must be tune or check"):
        cal.parse_split("session\thalf\na\ttune\nb\tboth\n", "split.tsv")
    assert cal.parse_split("session\thalf\tsource\na\ttune\tx\nb\tcheck\ty\n", "s") == \
        {"a": "tune", "b": "check"}


# -- the command ------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A sessions root with the bundled examples and two readers' readings of them."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    monkeypatch.chdir(tmp_path)
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for name in ("clean-fix.jsonl", "retry-fix.jsonl"):
        shutil.copy(EXAMPLES / name, sessions / name)
    shutil.copy(EXAMPLES / "sessions" / "poor-session.jsonl", sessions / "poor.jsonl")
    ours = {"clean-fix.jsonl": dict(FULL), "retry-fix.jsonl": {**FULL, "retry_waste": 1},
            "poor.jsonl": {**NO_CODE, "task_completion": 0, "unnecessary_exploration": 0,
                           "retry_waste": 0, "turn_economy": 0}}
    readings = tmp_path / "readings"
    for reader, change in (("a", {}), ("b", {"task_completion": 2})):
        (readings / reader).mkdir(parents=True)
        for session, scores in ours.items():
            (readings / reader / (Path(session).stem + ".json")).write_text(
                json.dumps({"session": session, "scores": {**scores, **change}}))
    return tmp_path


def test_calibrate_prints_each_readers_agreement(project, capsys):
    assert main(["calibrate", "readings", "--sessions", "sessions"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line[:1].isalpha()}
    assert out.startswith("readings: 3 sessions, 2 readers (a, b)")
    # Reader a gave exactly our grades; b gave 2 for task completion everywhere.
    assert rows["task_completion"].split("|")[1].split() == ["100%", "100%", "+0.00"]
    assert rows["task_completion"].split("|")[2].split() == ["0%", "67%", "+0.00"]
    assert rows["all"].split()[1] == "20"  # 8 + 8 + 4 (no code: N/A on both sides) per reader
    assert "task_completion: readers' points (rows) against skill-doctor's (columns)" in out


def test_calibrate_json_per_half_with_a_split(project, capsys):
    (project / "split.tsv").write_text("session\thalf\nclean-fix.jsonl\ttune\n"
                                       "retry-fix.jsonl\tcheck\npoor.jsonl\tcheck\n")
    assert main(["calibrate", "readings", "--sessions", "sessions", "--split", "split.tsv",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(data["halves"]) == ["check", "tune"]
    assert data["halves"]["tune"]["sessions"] == 1 and data["halves"]["check"]["sessions"] == 2
    check = data["halves"]["check"]["criteria"]["task_completion"]
    assert check["readers"]["a"]["exact"] == 1.0 and check["readers"]["b"]["exact"] == 0.0
    assert check["between_readers"]["exact"] == 0.0
    assert main(["calibrate", "readings", "--sessions", "sessions", "--split", "split.tsv",
                 "--half", "tune", "--format", "json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["halves"]) == ["tune"]


def test_calibrate_measures_a_rubric_edit(project, capsys):
    (project / "strict.yaml").write_text(
        "criteria:\n  retry_waste:\n    bands: [{at_most: 0, points: 2}, {points: 0}]\n")
    assert main(["calibrate", "readings", "--sessions", "sessions", "--rubric", "strict.yaml",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rubric"] == "strict.yaml"
    # retry-fix now gets 0 for retry waste where both readers say 1.
    assert data["readings"]["criteria"]["retry_waste"]["readers"]["a"]["exact"] == round(2 / 3, 4)


def test_calibrate_labels(project, capsys):
    (project / "sessions" / "labels.tsv").write_text(
        "file\tresolved\tagent_ran\nclean-fix.jsonl\ttrue\ttrue\npoor.jsonl\tfalse\ttrue\n")
    assert main(["calibrate", "sessions/labels.tsv", "-j", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:3] == ["clean-fix.jsonl", "1", "1"]
    assert out[-1] == ("labelled: task completion AUC 1.00 on 2 runs; 0 given no score "
                       "although the agent ran")


@pytest.mark.parametrize("args, message", [
    (["calibrate", "readings"], "clean-fix.jsonl: no such session under"),
    (["calibrate", "readings", "--sessions", "sessions", "--half", "check"],
     "--half needs --split"),
    (["calibrate", "nowhere", "--sessions", "sessions"], "not a folder of readings"),
    (["calibrate", "missing.tsv"], "missing.tsv: no such file"),
])
def test_calibrate_usage_errors_are_one_line(project, capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_bad_reading_stops_the_command_with_its_position(project, capsys):
    (project / "readings" / "b" / "retry-fix.json").write_text(
        '{"session": "retry-fix.jsonl",\n "scores": {"task_completion": 9}}')
    assert main(["calibrate", "readings", "--sessions", "sessions"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("retry-fix.json:2: scores.task_completion: must be a whole number "
                        "from 0 to 3 or null, got 9"), err


def test_split_must_place_every_reading(project, capsys):
    (project / "split.tsv").write_text("session\thalf\nclean-fix.jsonl\ttune\n")
    assert main(["calibrate", "readings", "--sessions", "sessions", "--split", "split.tsv"]) == 2
    assert "does not place poor.jsonl (and 1 more) in a half" in capsys.readouterr().err


def test_verbose_lists_each_session_where_the_grade_differs(project, capsys):
    assert main(["calibrate", "readings", "--sessions", "sessions", "-v"]) == 0
    out = capsys.readouterr().out.splitlines()
    at = out.index("sessions where skill-doctor differs from a reader (ours/reader's):")
    assert out[at + 1:] == ["  clean-fix: task_completion 3/2 (b)",
                            "  poor: task_completion 0/2 (b)",
                            "  retry-fix: task_completion 3/2 (b)"]


def test_json_carries_every_sessions_grades(project, capsys):
    assert main(["calibrate", "readings", "--sessions", "sessions", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["readings"]["sessions_graded"]
    poor = next(r for r in rows if r["name"] == "poor")
    assert poor["session"] == "poor.jsonl" and poor["status"] == "ok"
    assert poor["ours"]["task_completion"] == 0 and poor["ours"]["minimal_diff"] is None
    assert poor["readers"]["b"]["task_completion"] == 2
    assert poor["differs"] == {"a": [], "b": ["task_completion"]}
