"""The rubric as the tuning surface: validation with positions, partial overrides, rescaling."""

from __future__ import annotations

import pytest

from skill_doctor import rubric
from skill_doctor.detectors import DETECTORS
from skill_doctor.errors import RubricError
from test_rule_cases import criterion_result, grade_steps

RETRY_ONCE = [
    {"user": "Fix the page count in src/pager.py."},
    {"tool": "Edit", "input": {"file_path": "/p/src/pager.py", "old_string": "a", "new_string": "b"},
     "output": "String to replace not found in file.", "error": True},
    {"tool": "Edit", "input": {"file_path": "/p/src/pager.py", "old_string": "c", "new_string": "b"},
     "output": "The file has been updated."},
    {"tool": "Bash", "input": {"command": "pytest -q"}, "output": "4 passed"},
    {"assistant": "Fixed the page count; the tests pass."},
]


def write(tmp_path, text: str):
    path = tmp_path / "rubric.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_default_rubric_lists_every_criterion_with_contract_maxima():
    r = rubric.load()
    assert [c.key for c in r.criteria] == list(rubric.CRITERIA)
    for scale in rubric.SCALES:
        assert sum(c.max for c in r.scale(scale)) == 10
    assert len({c.rule_id for c in r.criteria}) == 8


@pytest.mark.parametrize("text, line, key, words", [
    ("colour: red\n", 1, "colour", "unknown key"),
    ("criteria:\n  speed: {}\n", 2, "criteria.speed", "unknown criterion"),
    ("criteria:\n  retry_waste:\n    weight: 3\n", 3, "criteria.retry_waste.weight", "unknown key"),
    ("criteria:\n  retry_waste:\n    detector: guess\n", 3, "criteria.retry_waste.detector",
     "unknown detector"),
    ("criteria:\n  retry_waste:\n    max: 5\n", 3, "criteria.retry_waste.max", "maximum"),
    ("criteria:\n  retry_waste:\n    bands:\n      - {at_most: 0, points: 2}\n      - {at_most: 3, points: 1}\n",
     5, "criteria.retry_waste.bands.1", "last band must have no bound"),
    ("criteria:\n  retry_waste:\n    bands:\n      - {at_most: 2, points: 2}\n      - {at_most: 1, points: 1}\n      - {points: 0}\n",
     5, "criteria.retry_waste.bands.1.at_most", "ordered"),
    ("criteria:\n  retry_waste:\n    bands:\n      - {at_most: 0, points: 3}\n      - {points: 0}\n",
     4, "criteria.retry_waste.bands.0.points", "exceed"),
    ("criteria:\n  retry_waste:\n    bands: []\n", 3, "criteria.retry_waste.bands", "non-empty"),
    ("criteria:\n  retry_waste:\n    params: {window: three}\n", 3,
     "criteria.retry_waste.params.window", "type int"),
    ("criteria:\n  retry_waste:\n    params: {patience: 2}\n", 3,
     "criteria.retry_waste.params.patience", "unknown parameter"),
    ("thresholds: {efficiency: 11}\n", 1, "thresholds.efficiency", "0 to 10"),
    ("criteria:\n  retry_waste:\n    enabled: maybe\n", 3, "criteria.retry_waste.enabled", "true or false"),
    ("criteria: [1, 2\n", 1, None, "not valid YAML"),
])
def test_rubric_errors_name_file_line_and_key(tmp_path, text, line, key, words):
    path = write(tmp_path, text)
    with pytest.raises(RubricError) as exc:
        rubric.load(path)
    message = str(exc.value)
    assert message.startswith(f"{path}:{line}: ") or (line == 1 and message.startswith(f"{path}:"))
    if key:
        assert f" {key}: " in message
    assert words in message


def test_partial_override_changes_only_named_keys(tmp_path):
    path = write(tmp_path, "criteria:\n  retry_waste:\n    suggestion: Read errors before retrying.\n")
    r = rubric.load(path)
    assert r.get("retry_waste").suggestion == "Read errors before retrying."
    assert r.get("retry_waste").bands == rubric.load().get("retry_waste").bands
    assert r.get("turn_economy") == rubric.load().get("turn_economy")


def test_changed_band_changes_the_score(tmp_path):
    default = criterion_result(grade_steps(tmp_path, RETRY_ONCE), "retry_waste")
    assert default.points == 1
    lenient = write(tmp_path, "criteria:\n  retry_waste:\n    bands:\n"
                              "      - {at_most: 1, points: 2}\n      - {points: 0}\n")
    scores = grade_steps(tmp_path, RETRY_ONCE, rubric.load(lenient))
    assert criterion_result(scores, "retry_waste").points == 2
    assert scores.efficiency.score == 10


def test_disabled_criterion_rescales_its_scale_and_says_so(tmp_path):
    path = write(tmp_path, "criteria:\n  retry_waste:\n    enabled: false\n")
    scores = grade_steps(tmp_path, RETRY_ONCE, rubric.load(path))
    result = criterion_result(scores, "retry_waste")
    assert result.points is None and result.reason == "disabled in the rubric"
    assert scores.efficiency.score == 10
    assert "rescaled to 10 from 8/8" in scores.efficiency.reason


def test_rescaling_keeps_one_decimal(tmp_path):
    path = write(tmp_path, "criteria:\n  turn_economy:\n    enabled: false\n")
    scores = grade_steps(tmp_path, RETRY_ONCE, rubric.load(path))
    assert scores.efficiency.score == pytest.approx(round(7 * 10 / 8, 1))


def test_every_detector_documents_itself():
    for det in DETECTORS.values():
        doc = det.doc
        for section in ("What it measures:", "Why it matters:", "Example:", "Instead:"):
            assert section in doc, f"{det.name} docstring lacks {section!r}"
