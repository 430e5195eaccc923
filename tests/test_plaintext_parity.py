"""Both front ends build the same model: one session as Claude Code JSONL and as a plain log."""

from __future__ import annotations

from conftest import FIXTURES

from skill_doctor.decode import decode_file

FIELDS = ("role", "content", "tool_name", "tool_input", "tool_output", "is_error", "exit_code",
          "kind", "paths", "edits", "meta")


def test_jsonl_and_plain_text_give_the_same_turns():
    jsonl = decode_file(FIXTURES / "parity" / "fix-bug.jsonl")
    text = decode_file(FIXTURES / "parity" / "fix-bug.txt")
    assert jsonl.harness == "claude-code"
    assert text.harness == "plain-text"
    assert jsonl.problem is None and text.problem is None
    assert len(jsonl.turns) == len(text.turns) == 8
    for left, right in zip(jsonl.turns, text.turns):
        for name in FIELDS:
            assert getattr(left, name) == getattr(right, name), (left.index, name)
    tools = [t for t in text.turns if t.tool_name]
    assert [t.tool_name for t in tools] == ["Read", "Bash", "Edit", "Bash"]
    assert [t.is_error for t in tools] == [False, True, False, False]
    assert [t.exit_code for t in tools] == [None, 1, None, 0]
    assert tools[2].edits and tools[2].edits[0].path == "calc.py"


def test_jsonl_and_plain_text_get_the_same_criterion_scores():
    from skill_doctor import facts, rubric, scoring

    r = rubric.load()
    results = []
    for name in ("fix-bug.jsonl", "fix-bug.txt"):
        scores = scoring.score(facts.compute(decode_file(FIXTURES / "parity" / name)), r)
        results.append({c.criterion.key: (c.points, tuple(e.turn for e in c.measurement.evidence)
                                          if c.measurement else ())
                        for scale in scores.scales() for c in scale.criteria})
    jsonl_scores, text_scores = results
    assert jsonl_scores == text_scores
    assert len(jsonl_scores) == 8 and all(points is not None for points, _ in jsonl_scores.values())
    # The session fails once and then fixes the bug: the retry after a real fix is no retry.
    assert jsonl_scores["retry_waste"][0] == 2
