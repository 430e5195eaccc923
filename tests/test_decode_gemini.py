"""Gemini CLI saved chats (.json, .jsonl with $set/$rewindTo) and stream-json logs."""

from __future__ import annotations

import pytest

from conftest import CORPUS, FIXTURES, corpus_files, needs_corpus
from decode_counts import assert_diffs_parse, counts
from skill_doctor.decode import decode_file
from skill_doctor.model import Role, ToolKind

# (turns, real user turns, tool calls, edits): tool calls = toolCalls / tool_use records;
# edits = write_file + replace calls that succeeded.
EXPECTED = {
    "figma-010ac575_session-2026-01-30T06-08-7befeae5.json": (64, 1, 62, 14),
    "figma-010ac575_transcript.jsonl": (73, 4, 68, 17),
    "figma-65829f23_transcript.jsonl": (36, 2, 34, 12),
    "figma-6d91b0b6_transcript.jsonl": (46, 2, 44, 13),
}


@needs_corpus
@pytest.mark.parametrize("path", corpus_files("gemini") + corpus_files("gemini-stream"),
                         ids=lambda p: p.name)
def test_every_gemini_file_decodes(path):
    t = decode_file(path)
    assert t.harness == "gemini" and t.problem is None
    assert counts(t) == EXPECTED[path.name]
    assert_diffs_parse(t)


@needs_corpus
def test_saved_chat_shell_exit_codes_and_statuses():
    t = decode_file(CORPUS / "gemini" / "figma-010ac575_session-2026-01-30T06-08-7befeae5.json")
    assert t.session_id == "7befeae5-6b85-4b89-a3e3-c161793cc484" and t.model == "gemini-3-pro-preview"
    shells = [x for x in t.turns if x.tool_name == "run_shell_command"]
    assert shells and all(x.exit_code is not None for x in shells)
    skill = next(x for x in t.turns if x.tool_name == "activate_skill")
    assert skill.is_error
    writes = [x for x in t.turns if x.tool_name == "write_file"]
    assert all(x.kind is ToolKind.WRITE and x.edits for x in writes)


@needs_corpus
def test_stream_json_pairs_by_tool_id_and_notes_concatenated_runs():
    t = decode_file(CORPUS / "gemini-stream" / "figma-010ac575_transcript.jsonl")
    assert "the file holds several runs one after another" in t.notes
    # 4 logged as errors, and 3 MCP answers of {"status": "error"} (two rate limits, a
    # sandbox that already existed) logged as successes.
    assert sum(1 for x in t.turns if x.role is Role.TOOL and x.is_error) == 7


def test_jsonl_rewind_keeps_only_the_surviving_branch():
    t = decode_file(FIXTURES / "gemini" / "session-rewind.jsonl")
    users = [x.content for x in t.turns if x.role is Role.USER]
    assert users == ["Rename total() to sum_total() in cart.py", "Go ahead with the rename"]
    assert not any(x.tool_input.get("command") == "rm cart.py" for x in t.turns if x.tool_input)
    replace = next(x for x in t.turns if x.tool_name == "replace")
    assert replace.edits[0].before.startswith("def total")
    assert "+def sum_total(items):" in replace.edits[0].diff
    test = next(x for x in t.turns if x.tool_name == "run_shell_command")
    assert test.exit_code == 1 and test.is_error
    assert counts(t) == (7, 2, 3, 1)  # the rewritten m6 replaced its first version
