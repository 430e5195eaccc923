"""Regressions from fuzzing: one minimal input per decoder bug the fuzz runs found.

Each input retypes, nests or inflates one field of an otherwise valid session. The whole
pipeline must produce a report with a valid status and the decoder safety net must stay
quiet (a "decoder failed" problem is a bug, not a verdict), and the well-formed records
around the damaged one must still be read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fuzzkit
from skill_doctor.decode import decode_file
from skill_doctor.model import Role

DEEP_JSON_TEXT = '{"k":[' * 3000 + "1" + "]}" * 3000  # valid JSON, nested past the stack
HUGE_DIGITS = "9" * 5000  # int() refuses more than 4,300 digits


def lines(*records: object) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def decoded(tmp_path: Path, text: str, harness: str | None = None, name: str = "session.json"):
    """Decode `text`, check the whole pipeline on it, and return the transcript."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    problem = fuzzkit.run_pipeline(path, harness)
    assert problem is None, (problem, fuzzkit.traceback_of(path, harness))
    transcript = decode_file(path, harness=harness)
    assert transcript.problem is None, transcript.problem
    assert not any("decoder" in note and "fail" in note for note in transcript.notes)
    return transcript


def users(transcript) -> list[str]:
    return [t.content for t in transcript.turns if t.role is Role.USER and t.meta is None]


def tools(transcript) -> list[str]:
    return [t.tool_name for t in transcript.turns if t.role is Role.TOOL]


# -- gemini -------------------------------------------------------------------------------------

GEMINI_HEAD = {"sessionId": "s1", "projectHash": "p1", "startTime": "2026-01-01T00:00:00Z"}


def test_gemini_message_content_retyped(tmp_path):
    """`content` a number (saved chat and stream-json): _parts_text iterated it."""
    t = decoded(tmp_path, json.dumps({**GEMINI_HEAD, "messages": [
        {"id": "1", "type": "user", "content": 1.5},
        {"id": "2", "type": "user", "content": [{"text": "fix a.py"}]}]}))
    assert t.harness == "gemini" and users(t) == ["fix a.py"]
    t = decoded(tmp_path, lines({"type": "init", "session_id": "s"},
                                {"type": "message", "role": "user", "content": True},
                                {"type": "message", "role": "user", "content": "fix a.py"}),
                name="stream.jsonl")
    assert t.harness == "gemini" and users(t) == ["fix a.py"]


def test_gemini_tool_calls_retyped(tmp_path):
    t = decoded(tmp_path, json.dumps({**GEMINI_HEAD, "messages": [
        {"id": "1", "type": "user", "content": "fix a.py"},
        {"id": "2", "type": "gemini", "content": "looking", "toolCalls": 7},
        {"id": "3", "type": "gemini", "content": "", "toolCalls": [
            {"name": "read_file", "args": {"file_path": "a.py"}, "status": "success"}]}]}))
    assert users(t) == ["fix a.py"] and tools(t) == ["read_file"]


def test_gemini_shell_exit_code_too_long(tmp_path):
    t = decoded(tmp_path, json.dumps({**GEMINI_HEAD, "messages": [
        {"id": "1", "type": "user", "content": "run it"},
        {"id": "2", "type": "gemini", "content": "", "toolCalls": [
            {"name": "run_shell_command", "args": {"command": "make"}, "status": "success",
             "resultDisplay": "Exit Code: " + "9" * 1500}]}]}))
    assert [x.exit_code for x in t.turns if x.role is Role.TOOL] == [None]


# -- trajectories -------------------------------------------------------------------------------

TASK = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "fix a.py"}]


@pytest.mark.parametrize("field", ["history", "trajectory"])
def test_swe_agent_step_lists_retyped(tmp_path, field):
    data = {"history": TASK, "trajectory": [{"action": "ls", "observation": "a.py"}]}
    data[field] = True
    t = decoded(tmp_path, json.dumps(data), "trajectory", "run.traj")
    assert t.harness == "swe-agent"
    assert users(t) == ([] if field == "history" else ["fix a.py"])
    assert tools(t) == ([] if field == "trajectory" else ["bash"])


def test_swe_agent_message_content_retyped(tmp_path):
    t = decoded(tmp_path, json.dumps({"history": [{"role": "system", "content": 4}, *TASK[1:]],
                                      "trajectory": []}), "trajectory", "run.traj")
    assert users(t) == ["fix a.py"]


def test_swe_agent_tool_calls_retyped(tmp_path):
    call = {"function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    t = decoded(tmp_path, json.dumps({"history": [
        *TASK, {"role": "assistant", "content": "look", "tool_calls": [call]},
        {"role": "tool", "content": "a.py"},
        {"role": "assistant", "content": "again", "tool_calls": 5}]}), "trajectory", "run.traj")
    assert tools(t) == ["bash"]


def test_swe_agent_deeply_nested_json_text(tmp_path):
    """Tool arguments and saved state are JSON text; nested past the stack they raised
    RecursionError from json.loads."""
    t = decoded(tmp_path, json.dumps({"history": [
        *TASK, {"role": "assistant", "content": "go", "tool_calls": [
            {"function": {"name": "bash", "arguments": DEEP_JSON_TEXT}}]}]}),
        "trajectory", "run.traj")
    assert tools(t) == ["bash"]
    t = decoded(tmp_path, json.dumps({"history": TASK, "trajectory": [
        {"action": "ls", "observation": "a.py", "state": DEEP_JSON_TEXT}]}),
        "trajectory", "run.traj")
    assert tools(t) == ["bash"]


def test_mini_swe_agent_messages_retyped(tmp_path):
    t = decoded(tmp_path, json.dumps({"trajectory_format": "mini-swe-agent-1.1", "messages": 5}),
                "trajectory", "run.traj.json")
    assert t.harness == "mini-swe-agent" and t.turns == ()


def test_openhands_action_retyped(tmp_path):
    """A list as `action` was looked up in a dict: unhashable."""
    t = decoded(tmp_path, json.dumps([
        {"id": 0, "source": "user", "action": "message", "args": {"content": "fix a.py"}},
        {"id": 1, "source": "agent", "action": ["run"], "args": {"command": "ls"}},
        {"id": 2, "source": "agent", "observation": {"run": 1}, "cause": 1},
        {"id": 3, "source": "agent", "action": "run", "args": {"command": "ls"}}]),
        "trajectory", "events.json")
    assert t.harness == "openhands" and users(t) == ["fix a.py"] and tools(t) == ["run"]


# -- cline --------------------------------------------------------------------------------------

def test_cline_content_retyped(tmp_path):
    """`content` of a message or of a tool_result block a number (forced on other JSON)."""
    t = decoded(tmp_path, json.dumps([
        {"role": "user", "content": 5},
        {"role": "user", "content": [{"type": "text", "text": "<task>fix a.py</task>"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file",
                                           "input": {"path": "a.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": 3}]}]),
        "cline")
    assert users(t) == ["fix a.py"] and tools(t) == ["read_file"]


# -- codex --------------------------------------------------------------------------------------

CODEX_META = {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}}


def codex_item(payload: dict) -> dict:
    return {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": payload}


def test_codex_message_content_retyped(tmp_path):
    t = decoded(tmp_path, lines(
        CODEX_META, codex_item({"type": "message", "role": "user", "content": 5}),
        codex_item({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "fix a.py"}]})), name="r.jsonl")
    assert t.harness == "codex" and users(t) == ["fix a.py"]


def test_codex_deeply_nested_json_text(tmp_path):
    t = decoded(tmp_path, lines(
        CODEX_META,
        codex_item({"type": "function_call", "call_id": "c1", "name": "shell",
                    "arguments": DEEP_JSON_TEXT}),
        codex_item({"type": "function_call_output", "call_id": "c1", "output": DEEP_JSON_TEXT})),
        name="r.jsonl")
    assert tools(t) == ["shell"]


def test_codex_exec_changes_retyped(tmp_path):
    t = decoded(tmp_path, lines(
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": {"type": "file_change", "changes": 5}}), name="e.jsonl")
    assert tools(t) == ["file_change"]


# -- messages -----------------------------------------------------------------------------------

def test_messages_content_and_tool_calls_retyped(tmp_path):
    t = decoded(tmp_path, json.dumps([
        {"role": "user", "content": 5},
        {"role": "user", "content": "fix a.py"},
        {"role": "assistant", "content": 7, "tool_calls": 9},
        {"role": "assistant", "content": "ok", "tool_calls": [
            {"id": "a", "function": {"name": "read", "arguments": DEEP_JSON_TEXT}}]}]))
    assert t.harness == "messages" and users(t) == ["fix a.py"] and tools(t) == ["read"]


# -- opencode -----------------------------------------------------------------------------------

def test_opencode_parts_retyped(tmp_path):
    t = decoded(tmp_path, json.dumps({"info": {"id": "ses_1"}, "messages": [
        {"info": {"role": "user"}, "parts": 5},
        {"info": {"role": "user"}, "parts": [{"type": "text", "text": "fix a.py"}]}]}))
    assert t.harness == "opencode" and users(t) == ["fix a.py"]


def test_opencode_storage_ids_stay_inside_the_store(tmp_path):
    """A session id with path separators must not send the reader to other folders."""
    store = tmp_path / "storage"
    (store / "session" / "proj").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "msg_1.json").write_text(json.dumps({"id": "msg_1", "role": "user"}))
    (store / "message").mkdir()
    session = store / "session" / "proj" / "ses_1.json"
    session.write_text(json.dumps({"id": "../../outside", "projectID": "proj"}))
    t = decode_file(session, harness="opencode")
    assert t.problem is None and t.turns == ()
    assert t.notes == ("no message files found under message/ses_1",)


# -- pi -----------------------------------------------------------------------------------------

PI_HEAD = {"type": "session", "version": 3, "cwd": "/w", "id": "s",
           "timestamp": "2026-01-01T00:00:00Z"}


def test_pi_assistant_content_retyped(tmp_path):
    t = decoded(tmp_path, lines(
        PI_HEAD,
        {"type": "message", "id": "1", "parentId": None,
         "message": {"role": "user", "content": "fix a.py"}},
        {"type": "message", "id": "2", "parentId": "1",
         "message": {"role": "assistant", "content": 5}}), name="p.jsonl")
    assert t.harness == "pi" and users(t) == ["fix a.py"]


def test_pi_tree_ids_retyped(tmp_path):
    """A list as `id` or `parentId` was hashed; it now counts as no id."""
    t = decoded(tmp_path, lines(
        PI_HEAD,
        {"type": "message", "id": "1", "parentId": None,
         "message": {"role": "user", "content": "fix a.py"}},
        {"type": "message", "id": [1], "parentId": {"x": 1},
         "message": {"role": "user", "content": "and b.py"}},
        {"type": "message", "id": "3", "parentId": [1],
         "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}}),
        name="p.jsonl")
    assert users(t) == ["and b.py"]


def test_pi_leaf_without_id_is_kept_once(tmp_path):
    t = decoded(tmp_path, lines(
        PI_HEAD,
        {"type": "message", "id": "1", "parentId": None,
         "message": {"role": "user", "content": "fix a.py"}},
        {"type": "message", "message": {"role": "user", "content": "and b.py"}}), name="p.jsonl")
    # the id-less last entry is the leaf and has no parent: it is the whole active branch
    assert users(t) == ["and b.py"]
    assert dict(t.skipped)["other-branch"] == 1


# -- claude code and plain text: exit codes too long for int() ----------------------------------

def test_claude_code_exit_code_too_long(tmp_path):
    t = decoded(tmp_path, lines(
        {"parentUuid": None, "isSidechain": False, "type": "user", "uuid": "u",
         "message": {"role": "user", "content": "run make"}},
        {"parentUuid": "u", "isSidechain": False, "type": "assistant", "uuid": "a",
         "message": {"id": "m", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                                             "input": {"command": "make"}}]}},
        {"parentUuid": "a", "isSidechain": False, "type": "user", "uuid": "r",
         "message": {"content": [{"type": "tool_result", "tool_use_id": "t",
                                  "content": "Exit code " + HUGE_DIGITS}]}}), name="c.jsonl")
    assert [(x.tool_name, x.exit_code) for x in t.turns if x.role is Role.TOOL] == [("Bash", None)]


def test_plain_text_exit_code_too_long_and_deep_json_args(tmp_path):
    t = decoded(tmp_path, f"User: run make\n\nTool: Bash {DEEP_JSON_TEXT}\nExit code {HUGE_DIGITS}\n",
                name="log.txt")
    assert users(t) == ["run make"]
    assert [(x.tool_name, x.exit_code) for x in t.turns if x.role is Role.TOOL] == [("Bash", None)]


def test_terminal_log_returncode_too_long(tmp_path):
    t = decoded(tmp_path, "System:\nYou are an agent.\n\nUser:\nfix a.py\n\n"
                          "mini-swe-agent (step 1, $0.00):\nTHOUGHT: look\n\n```bash\nls\n```\n\n"
                          f"User:\n<returncode>{HUGE_DIGITS}</returncode>\n<output>\na.py\n</output>\n",
                name="run.log")
    assert [(x.tool_name, x.exit_code) for x in t.turns if x.role is Role.TOOL] == [("Bash", None)]


# -- builder ------------------------------------------------------------------------------------

def test_huge_record_kind_is_clipped_in_counts_and_notes(tmp_path):
    kind = "k" * 200_000
    t = decoded(tmp_path, lines({"type": "init", "session_id": "s"},
                                {"type": "message", "role": "user", "content": "fix a.py"},
                                {"type": kind},
                                {"type": "result", "status": kind}), name="stream.jsonl")
    assert users(t) == ["fix a.py"]
    assert all(len(key) <= 80 for key, _ in t.skipped)
    assert all(len(note) < 1000 for note in t.notes)


# -- tool inputs and structured results (tools.py, reached while decoding) ----------------------

def claude_edit(tool_input: dict, result: object) -> str:
    return lines(
        {"parentUuid": None, "isSidechain": False, "type": "user", "uuid": "u",
         "message": {"role": "user", "content": "fix a.py"}},
        {"parentUuid": "u", "isSidechain": False, "type": "assistant", "uuid": "a",
         "message": {"id": "m", "content": [{"type": "tool_use", "id": "t", "name": "MultiEdit",
                                             "input": tool_input}]}},
        {"parentUuid": "a", "isSidechain": False, "type": "user", "uuid": "r",
         "toolUseResult": result,
         "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}})


def test_edit_list_retyped(tmp_path):
    t = decoded(tmp_path, claude_edit({"file_path": "a.py", "edits": 5}, None), name="c.jsonl")
    assert [(x.tool_name, x.edits) for x in t.turns if x.role is Role.TOOL] == [("MultiEdit", ())]


def test_structured_patch_retyped(tmp_path):
    t = decoded(tmp_path, claude_edit(
        {"file_path": "a.py", "edits": [{"old_string": "x = 1", "new_string": "x = 2"}]},
        {"structuredPatch": 5, "originalFile": "x = 1\n"}), name="c.jsonl")
    (edit,) = [e for x in t.turns for e in x.edits]
    assert edit.path == "a.py" and "+x = 2" in edit.diff  # the diff is made from the snippets
