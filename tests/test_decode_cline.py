"""Cline/Roo/Kilo api_conversation_history.json and ui_messages.json."""

from __future__ import annotations

import json

import pytest

from conftest import CORPUS, FIXTURES, corpus_files, needs_corpus
from decode_counts import assert_diffs_parse, assert_tool_results_not_user, counts
from skill_doctor.decode import decode_file
from skill_doctor.facts import compute
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


def _cline_history(tmp_path, resumed: bool):
    """A Cline task that reads a file, (is resumed days later,) and reads it again."""
    def read(call: str) -> list[dict]:
        return [{"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "read_file",
                                                  "input": {"path": "src/lib/db.ts"}}]},
                {"role": "user", "content": [{"type": "text", "text": "[read_file for 'src/lib/db.ts'] "
                                              "Result:\nexport const db = connect(process.env.DB_URL)"}]}]
    messages = [{"role": "user", "content": [{"type": "text", "text": "<task>\nPoint the database "
                                              "client at the new instance.\n</task>"}]}, *read("t1")]
    if resumed:
        messages.append({"role": "user", "content": [{"type": "text", "text": "[TASK RESUMPTION] This "
                         "task was interrupted 3 days ago. The conversation may have been incomplete. "
                         "Be aware that the project state may have changed since then."}]})
    messages += read("t2")
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


@pytest.mark.parametrize("resumed", [False, True])
def test_a_read_after_the_task_was_resumed_is_no_repeat(tmp_path, resumed):
    # The harness says the project may have changed meanwhile: reading the file again is
    # looking at it as it is now, not a second read of what the agent already has.
    transcript = decode_file(_cline_history(tmp_path, resumed))
    assert any(t.meta == "resumption" for t in transcript.turns) is resumed
    repeats = compute(transcript).repeated_reads
    assert [path for _, path, _ in repeats] == ([] if resumed else ["src/lib/db.ts"])


def _env(folder: str) -> dict:
    return {"type": "text", "text": f"<environment_details>\n# Current Working Directory ({folder}) "
                                    f"Files\nsrc/\n</environment_details>"}


@pytest.mark.parametrize("folders, cwd", [
    # A task resumed in another folder keeps the folder most of its requests name.
    (["c:/Apps/old - Copy/repo", "c:/Apps/app", "c:/Apps/app"], "c:/Apps/app"),
    # Spread over folders with none in the majority: no cwd, rather than the others "outside".
    (["e:/work/server", "c:/Users/me/MCP", "c:/Users/me/MCP/extension"], None),
])
def test_the_workspace_folder_most_requests_name_is_the_cwd(tmp_path, folders, cwd):
    messages = [{"role": "user", "content": [{"type": "text", "text": "<task>\nTidy up.\n</task>"},
                                             _env(folders[0])]}]
    for folder in folders[1:]:
        messages += [{"role": "assistant", "content": [{"type": "text", "text": "Working on it."}]},
                     {"role": "user", "content": [{"type": "text", "text": "<feedback>\ngo on\n</feedback>"},
                                                  _env(folder)]}]
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    assert decode_file(path).cwd == cwd


def test_a_file_read_then_written_whole_is_rewritten_not_created(tmp_path):
    # Cline's write_to_file logs no original: after a read of the same file (relative path,
    # the write's absolute one resolving to it under the workspace folder), it is a rewrite.
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nUse the new client in "
                                      "src/db.ts.\n</task>"}, _env("c:/Apps/app")]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file",
                                           "input": {"path": "src/db.ts"}}]},
        {"role": "user", "content": [{"type": "text", "text": "[read_file for 'src/db.ts'] Result:\n"
                                      "1 | export const db = connect()"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "write_to_file",
                                           "input": {"path": "c:\\Apps\\app\\src\\db.ts",
                                                     "content": "export const db = newClient()\n"}}]},
        {"role": "user", "content": [{"type": "text", "text": "[write_to_file for 'src/db.ts'] "
                                      "Result:\nThe content was successfully saved to src/db.ts."}]},
    ]
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    transcript = decode_file(path)
    assert transcript.cwd == "c:/Apps/app"
    [record] = compute(transcript).edits
    assert record.path == "src/db.ts" and not record.edit.created
