"""Cline/Roo/Kilo api_conversation_history.json and ui_messages.json."""

from __future__ import annotations

import pytest

from conftest import CORPUS, FIXTURES, corpus_files, needs_corpus
from decode_counts import assert_diffs_parse, assert_tool_results_not_user, counts
from skill_doctor.decode import decode_file
from skill_doctor.model import Role, ToolKind

# (turns, real user turns, tool calls, edits). API history: 231 tool_use blocks, 21
# write_to_file + 13 replace_in_file (one rejected) -> 33 edits; real user turns are the
# <task>, <feedback>, <answer> and <user_message> texts. ui_messages: tool/command records.
EXPECTED = {
    "Cline-Xray_task_sample_ui_messages.json": (133, 7, 67, 33),
    "MRA04242026_api_conversation_history.json": (728, 34, 231, 33),
    "mcp-vscode-server_ui_messages.json": (120, 4, 55, 16),
}


@needs_corpus
@pytest.mark.parametrize("path", corpus_files("cline"), ids=lambda p: p.name)
def test_every_cline_file_decodes(path):
    t = decode_file(path)
    assert t.harness == "cline" and t.problem is None
    assert counts(t) == EXPECTED[path.name]
    assert_diffs_parse(t)
    assert_tool_results_not_user(t)


@needs_corpus
def test_api_history_results_and_exit_codes():
    t = decode_file(CORPUS / "cline" / "MRA04242026_api_conversation_history.json")
    commands = [x for x in t.turns if x.tool_name == "execute_command" and x.exit_code is not None]
    assert commands and any(x.exit_code == 0 for x in commands)
    assert sum(1 for x in t.turns if x.meta == "environment") == 226
    edit = next(x for x in t.turns if x.tool_name == "replace_in_file" and x.edits)
    assert edit.kind is ToolKind.EDIT and edit.edits[0].diff.startswith("--- a/")


def test_xml_tool_calls_in_assistant_text():
    t = decode_file(FIXTURES / "cline" / "xml-tools_api_conversation_history.json")
    tools = [x for x in t.turns if x.role is Role.TOOL]
    assert [x.tool_name for x in tools] == ["read_file", "replace_in_file", "execute_command",
                                          "attempt_completion"]
    assert "return 'hello ' + name" in tools[0].tool_output  # the result's second block
    assert "+    return 'hello, ' + name" in tools[1].edits[0].diff
    assert tools[2].exit_code == 0
    users = [x.content for x in t.turns if x.role is Role.USER and x.meta is None]
    assert users == ["Make greet() say hello with a comma", "thanks, that's all"]
