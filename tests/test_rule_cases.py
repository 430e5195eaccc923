"""Data-driven criterion tests: one YAML table per criterion under tests/cases/.

Each case is a small session (one step per turn), the score the criterion must get, and the
turns it must cite. Sessions are written as Claude Code JSONL and run through the whole
pipeline (decode -> facts -> scoring), so a case checks what a user would see. On a mismatch
the actual result is printed ready to paste.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sessionkit import claude_jsonl
from skill_doctor import facts, rubric, scoring
from skill_doctor.decode import decode_file
from skill_doctor.detectors import DETECTORS

CASES_DIR = Path(__file__).parent / "cases"


def _cases():
    for file in sorted(CASES_DIR.glob("*.yaml")):
        table = yaml.safe_load(file.read_text(encoding="utf-8"))
        for case in table["cases"]:
            yield pytest.param(table["criterion"], case, id=f"{table['criterion']}:{case['name']}")


def grade_steps(tmp_path: Path, steps: list[dict], rubric_obj=None, *, headless: bool = False
                ) -> scoring.Scores:
    session = tmp_path / "session.jsonl"
    text = claude_jsonl(steps)
    if headless:  # `claude -p --output-format stream-json` closes its log with a result record
        text += '{"type": "result", "subtype": "success", "is_error": false}\n'
    session.write_text(text, encoding="utf-8")
    transcript = decode_file(session)
    assert len(transcript.turns) == len(steps), "each step must decode to exactly one turn"
    return scoring.score(facts.compute(transcript), rubric_obj or rubric.load())


def criterion_result(scores: scoring.Scores, key: str) -> scoring.CriterionScore:
    for scale in scores.scales():
        for result in scale.criteria:
            if result.criterion.key == key:
                return result
    raise KeyError(key)


@pytest.mark.parametrize("criterion, case", list(_cases()))
def test_rule_case(tmp_path, criterion, case):
    result = criterion_result(grade_steps(tmp_path, case["steps"], headless=case.get("headless", False)),
                              criterion)
    cited = [e.turn for e in result.measurement.evidence] if result.measurement else []
    if result.measurement is not None:  # a cause picks the suggestion, so it must be declared
        declared = DETECTORS[result.criterion.detector].causes
        assert set(result.measurement.causes) <= set(declared), result.measurement.causes
    actual = {"score": result.points, "turns": cited}
    expected = {"score": case["expect"]["score"], "turns": case["expect"]["turns"]}
    if criterion == "turn_economy" and expected["score"] == result.criterion.max:
        actual["turns"] = []  # at the maximum, the summary citation is informational
    if "summary" in case["expect"]:  # the measurement's one line, as the finding shows it
        actual["summary"] = result.measurement.summary if result.measurement else None
        expected["summary"] = case["expect"]["summary"]
    if "notes" in case["expect"]:  # what the finding says of each cited turn
        actual["notes"] = [e.note for e in result.measurement.evidence] if result.measurement else []
        expected["notes"] = case["expect"]["notes"]
    if "causes" in case["expect"]:  # what the finding says went wrong, most costly first
        actual["causes"] = list(result.measurement.causes) if result.measurement else []
        expected["causes"] = case["expect"]["causes"]
    assert actual == expected, (
        f"{criterion}:{case['name']} measured {result.measurement.value if result.measurement else None}"
        f" ({result.measurement.summary if result.measurement else result.reason});"
        f" paste-ready: expect: {{score: {actual['score']}, turns: {actual['turns']}}}")


def test_every_criterion_has_a_high_and_a_low_case():
    maxima = {c.key: c.max for c in rubric.load().criteria}
    seen: dict[str, set[int]] = {key: set() for key in maxima}
    for param in _cases():
        criterion, case = param.values
        seen[criterion].add(case["expect"]["score"])
    for key, scores in seen.items():
        assert maxima[key] in scores, f"{key} has no case scoring its maximum"
        assert any(s < maxima[key] for s in scores), f"{key} has no case scoring below its maximum"


@pytest.mark.parametrize("extra_plans, points", [(50, 0), (40, 1)])
def test_fifty_avoidable_turns_are_significantly_excessive_at_any_length(tmp_path, extra_plans, points):
    # A long session: 150 reads of distinct files, one edit, and the todo list updated
    # `extra_plans` times beyond the few that are fine. 40 avoidable turns of 197 are a
    # fifth (slightly verbose); 50 are significantly excessive whatever the share.
    steps: list[dict] = [{"user": "Rename the logger in every module under src/ to log."}]
    todo = {"todos": [{"content": "rename", "status": "in_progress", "activeForm": "Renaming"}]}
    for i in range(150):
        steps.append({"tool": "Read", "input": {"file_path": f"/home/dev/proj/src/m{i}.py"},
                      "output": f"logger = get_logger('m{i}')"})
    for _ in range(3 + extra_plans):
        steps.append({"tool": "TodoWrite", "input": todo, "output": "Todos have been modified successfully."})
    steps.append({"tool": "Edit", "input": {"file_path": "/home/dev/proj/src/m0.py",
                                            "old_string": "logger =", "new_string": "log ="},
                  "output": "The file has been updated."})
    steps.append({"assistant": "Renamed the logger."})
    result = criterion_result(grade_steps(tmp_path, steps), "turn_economy")
    assert result.points == points, result.measurement.summary
    assert result.measurement.summary.startswith("50 avoidable turns, 50 or more: ") is (points == 0)
