"""Shared helpers for the per-harness decoder tests: count what a Transcript holds."""

from __future__ import annotations

from unidiff import PatchSet

from skill_doctor.model import Role, Transcript


def counts(t: Transcript) -> tuple[int, int, int, int]:
    """(turns, real user turns, tool calls, file edits)."""
    tools = [x for x in t.turns if x.role is Role.TOOL]
    users = [x for x in t.turns if x.role is Role.USER and x.meta is None]
    return len(t.turns), len(users), len(tools), sum(len(x.edits) for x in tools)


def assert_diffs_parse(t: Transcript) -> None:
    """Every edit's diff is a unified diff unidiff accepts (or empty when content is unknown)."""
    for turn in t.turns:
        for edit in turn.edits:
            if edit.diff:
                PatchSet(edit.diff)


def assert_tool_results_not_user(t: Transcript) -> None:
    for turn in t.turns:
        if turn.role is Role.USER and turn.meta is None:
            assert "] Result:" not in turn.content[:200]
            assert not turn.content.lstrip().startswith("<returncode>")
