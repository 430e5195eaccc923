"""Minimal diff's duplicated-code signal names where the block was written twice."""

from __future__ import annotations

from skill_doctor import facts, rubric, scoring
from skill_doctor.text import make_diff
from skill_doctor.model import FileEdit, Role, ToolKind, Transcript, Turn

BLOCK = "".join(f"    value_{i} = compute_value({i}, now)\n" for i in range(6))


def _created(path: str) -> FileEdit:
    text = "def build(now):\n" + BLOCK
    return FileEdit(path=path, patch=make_diff(path, "", text, created=True), before="",
                    after=text, created=True, whole_file=True)


def _minimal_diff(turns: list[Turn]):
    transcript = Transcript(source="t", harness="codex", turns=tuple(turns), cwd="/repo")
    scores = scoring.score(facts.compute(transcript), rubric.load())
    return next(c for s in scores.scales() for c in s.criteria if c.criterion.key == "minimal_diff")


def test_a_block_pasted_into_two_files_by_one_patch_names_both_files_not_the_turn_twice():
    one_patch = Turn(2, Role.TOOL, tool_name="apply_patch", kind=ToolKind.EDIT,
                     paths=("/repo/src/lib.rs", "/repo/tests/store.rs"),
                     edits=(_created("/repo/src/lib.rs"), _created("/repo/tests/store.rs")),
                     tool_output="Success.")
    result = _minimal_diff([Turn(1, Role.USER, "Add the store and its test."), one_patch,
                            Turn(3, Role.ASSISTANT, "Added the store and a test.")])
    notes = [e.note for e in result.measurement.evidence if "written twice" in e.note]
    assert notes and notes[0].startswith(
        "the same block of new code was written twice in turn 2, in src/lib.rs and tests/store.rs")


def test_a_block_written_in_two_turns_names_the_turns():
    turns = [Turn(1, Role.USER, "Add the store and its test.")]
    for index, path in ((2, "/repo/src/lib.rs"), (3, "/repo/tests/store.rs")):
        turns.append(Turn(index, Role.TOOL, tool_name="apply_patch", kind=ToolKind.EDIT,
                          paths=(path,), edits=(_created(path),), tool_output="Success."))
    turns.append(Turn(4, Role.ASSISTANT, "Added the store and a test."))
    notes = [e.note for e in _minimal_diff(turns).measurement.evidence if "written twice" in e.note]
    assert notes and "(turns 2 and 3)" in notes[0]


def test_a_block_shared_by_documents_or_settings_is_no_pasted_logic():
    # A README quoting the settings it documents, two reports sharing a section.
    turns = [Turn(1, Role.USER, "Document the settings.")]
    for index, path in ((2, "/repo/config/settings.json"), (3, "/repo/README.md"),
                        (4, "/repo/docs/settings.md")):
        turns.append(Turn(index, Role.TOOL, tool_name="Write", kind=ToolKind.WRITE,
                          paths=(path,), edits=(_created(path),), tool_output="Written."))
    turns.append(Turn(5, Role.ASSISTANT, "Documented the settings."))
    notes = [e.note for e in _minimal_diff(turns).measurement.evidence]
    assert not any("written twice" in note for note in notes), notes
