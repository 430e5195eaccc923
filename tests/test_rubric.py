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


HUNT = [
    {"user": "Run the tests for src/pager.py and fix what fails."},
    {"tool": "Bash", "input": {"command": "npm test"},
     "output": "Exit code 1\nnpm ERR! Missing script: \"test\"", "error": True},
    {"tool": "Bash", "input": {"command": "yarn test"},
     "output": "Exit code 127\nsh: yarn: command not found", "error": True},
    {"tool": "Bash", "input": {"command": "python -m pytest -q"}, "output": "4 passed"},
    {"assistant": "The tests run with python -m pytest and all four pass."},
]


def test_suggestion_names_the_cause_it_found(tmp_path):
    from skill_doctor import facts as facts_mod
    from skill_doctor.decode import decode_file
    from skill_doctor.findings import compile_findings

    from sessionkit import claude_jsonl

    session = tmp_path / "s.jsonl"
    session.write_text(claude_jsonl(HUNT), encoding="utf-8")
    transcript = decode_file(session)
    from skill_doctor import scoring
    scores = scoring.score(facts_mod.compute(transcript), rubric.load())
    findings, _ = compile_findings(scores, transcript)
    retry = next(f for f in findings if f.criterion == "retry_waste")
    assert retry.suggestion == rubric.load().get("retry_waste").suggestions["test_command_hunt"]
    assert "test command" in retry.suggestion and "CLAUDE.md" in retry.suggestion


def test_suggestion_for_falls_back_to_the_default():
    c = rubric.load().get("retry_waste")
    assert c.suggestion_for(("no_such_cause",)) == c.suggestion
    assert c.suggestion_for(("loop", "failed_edit")) == c.suggestions["loop"]


def test_unknown_cause_in_suggestions_is_an_error(tmp_path):
    path = write(tmp_path, "criteria:\n  retry_waste:\n    suggestions:\n      typo: Do better.\n")
    with pytest.raises(RubricError) as exc:
        rubric.load(path)
    assert str(exc.value).startswith(f"{path}:4: criteria.retry_waste.suggestions.typo: unknown cause")


def test_every_default_suggestion_cause_is_declared_by_its_detector():
    for c in rubric.load().criteria:
        assert set(c.suggestions) <= set(DETECTORS[c.detector].causes), c.key


def test_extends_false_replaces_the_default(tmp_path):
    import yaml

    from skill_doctor import resources

    full = yaml.safe_load(resources.rubric_path().read_text(encoding="utf-8"))
    full["extends"] = False
    full["criteria"]["retry_waste"]["bands"] = [{"at_most": 5, "points": 2}, {"points": 0}]
    del full["criteria"]["retry_waste"]["suggestions"]
    path = write(tmp_path, yaml.safe_dump(full, sort_keys=False))
    r = rubric.load(path)
    assert r.get("retry_waste").suggestions == {}  # not inherited from the default
    assert r.get("retry_waste").bands[0].at_most == 5
    assert criterion_result(grade_steps(tmp_path, RETRY_ONCE, r), "retry_waste").points == 2


def test_extends_false_with_a_partial_file_names_the_missing_criterion(tmp_path):
    path = write(tmp_path, "extends: false\ncriteria:\n  retry_waste:\n    enabled: false\n")
    with pytest.raises(RubricError) as exc:
        rubric.load(path)
    assert "criterion 'task_completion' is missing" in str(exc.value)
    assert str(exc.value).startswith(f"{path}:2: criteria:")


def test_extends_must_be_a_boolean(tmp_path):
    path = write(tmp_path, "extends: maybe\n")
    with pytest.raises(RubricError) as exc:
        rubric.load(path)
    assert str(exc.value).startswith(f"{path}:1: extends: must be true or false")


def test_every_detector_declares_causes_and_reports_known_ones():
    for det in DETECTORS.values():
        assert det.causes, det.name


def test_code_quality_na_says_when_the_log_hides_which_files_changed(tmp_path):
    steps = [
        {"user": "Refactor _create_model_instance in strategies/dict_to_model.py."},
        {"tool": "Edit", "input": {"file_path": "", "old_string": "a", "new_string": "b"},
         "output": ""},
        {"assistant": "I've refactored _create_model_instance as asked."},
    ]
    scores = grade_steps(tmp_path, steps)
    assert scores.code_quality.score is None
    assert "does not show which files" in scores.code_quality.reason
    question = grade_steps(tmp_path, [{"user": "What does page_count return?"},
                                      {"assistant": "It returns the number of full pages."}])
    assert "made no code changes" in question.code_quality.reason
