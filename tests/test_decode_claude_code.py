"""The Claude Code JSONL decoder on hand-made lines and on the real corpus."""

from __future__ import annotations

import json

import pytest

from conftest import CORPUS, needs_corpus
from skill_doctor.decode import decode_file
from skill_doctor.model import Role, ToolKind


def write_lines(tmp_path, records, tail: bytes = b""):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)
    return path


def env(kind, uuid, **rest):
    return {"type": kind, "uuid": uuid, "parentUuid": None, "sessionId": "sess-1", "cwd": "/p",
            "isSidechain": False, "timestamp": f"2026-01-01T00:00:{int(uuid[-2:]):02d}Z", **rest}


def test_split_assistant_message_merges_and_pairs_tool_results(tmp_path):
    records = [
        env("user", "u01", message={"role": "user", "content": "Fix the bug in a.py please"}),
        env("assistant", "u02", message={"id": "msg_1", "role": "assistant", "model": "m",
                                         "content": [{"type": "thinking", "thinking": "hmm"}]}),
        env("assistant", "u03", message={"id": "msg_1", "role": "assistant",
                                         "content": [{"type": "text", "text": "Looking."}]}),
        env("assistant", "u04", message={"id": "msg_1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/a.py"}}]}),
        env("assistant", "u05", message={"id": "msg_1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "false"}}]}),
        env("user", "u06", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "Exit code 1\n",
             "is_error": True}]}),
        env("user", "u07", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "x = 1"}]}]}),
        env("user", "u08", message={"role": "user", "content": "<system-reminder>be nice</system-reminder>"}),
        env("user", "u09", isMeta=True, message={"role": "user", "content": "Caveat: local"}),
        env("user", "u10", message={"role": "user", "content": "<command-name>/clear</command-name>"}),
        env("user", "u11", message={"role": "user", "content": [
            {"type": "text", "text": "[Request interrupted by user]"}]}),
        env("user", "u12", isSidechain=True, message={"role": "user", "content": "subagent prompt"}),
        env("user", "u01", message={"role": "user", "content": "Fix the bug in a.py please"}),
        {"type": "summary", "summary": "title", "leafUuid": "u01"},
        {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
    ]
    t = decode_file(write_lines(tmp_path, records, tail=b'{"type": "user", "trunc'))
    roles = [(x.role, x.tool_name, x.meta) for x in t.turns]
    assert roles == [
        (Role.USER, None, None), (Role.ASSISTANT, None, None), (Role.TOOL, "Read", None),
        (Role.TOOL, "Bash", None), (Role.USER, None, "system-reminder"), (Role.USER, None, "meta"),
        (Role.USER, None, "command"), (Role.USER, None, "interrupt"),
    ]
    read, bash = t.turns[2], t.turns[3]
    assert read.tool_output == "x = 1" and read.kind is ToolKind.READ and read.paths == ("/p/a.py",)
    assert bash.is_error and bash.exit_code == 1 and bash.line == 5
    assert t.session_id == "sess-1" and t.cwd == "/p"
    skipped = dict(t.skipped)
    assert skipped["sidechain"] == 1 and skipped["duplicate"] == 1 and skipped["summary"] == 1
    assert skipped["thinking"] == 1 and skipped["invalid-json"] == 1
    assert any("not valid JSON" in n for n in t.notes)


def test_edit_result_structured_patch_and_original_file_give_full_contents(tmp_path):
    records = [
        env("user", "u01", message={"role": "user", "content": "Change x to 2 in a.py"}),
        env("assistant", "u02", message={"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Edit",
             "input": {"file_path": "/p/a.py", "old_string": "x = 1", "new_string": "x = 2"}}]}),
        env("user", "u03", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "updated"}]},
            toolUseResult={"filePath": "/p/a.py", "originalFile": "a = 0\nx = 1\n",
                           "structuredPatch": [{"oldStart": 2, "oldLines": 1, "newStart": 2,
                                                "newLines": 1, "lines": ["-x = 1", "+x = 2"]}]}),
    ]
    t = decode_file(write_lines(tmp_path, records))
    [edit] = t.turns[1].edits
    assert edit.before == "a = 0\nx = 1\n" and edit.after == "a = 0\nx = 2\n"
    assert "@@ -2,1 +2,1 @@" in edit.diff and "+x = 2" in edit.diff


def test_failed_edit_changes_nothing(tmp_path):
    records = [
        env("user", "u01", message={"role": "user", "content": "Change x"}),
        env("assistant", "u02", message={"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Edit",
             "input": {"file_path": "/p/a.py", "old_string": "nope", "new_string": "x"}}]}),
        env("user", "u03", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "not found", "is_error": True}]},
            toolUseResult="Error: String to replace not found in file."),
    ]
    t = decode_file(write_lines(tmp_path, records))
    assert t.turns[1].is_error and t.turns[1].edits == ()


def test_the_placeholder_for_an_empty_output_is_no_output(tmp_path):
    # Claude Code 2.x writes this text where a command printed nothing, and adds a note
    # when the shell went back to the project folder.
    records = [env("user", "u01", message={"role": "user", "content": "Start the server"})]
    for n, output in ((2, "(Bash completed with no output)"), (4, "(Bash completed with no output) see"),
                      (6, "built\nShell cwd was reset to /p"), (8, "Shell cwd was reset to /p")):
        records += [
            env("assistant", f"u{n:02d}", message={"id": f"m{n}", "role": "assistant", "content": [
                {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": ":"}}]}),
            env("user", f"u{n + 1:02d}", message={"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{n}", "content": output}]})]
    t = decode_file(write_lines(tmp_path, records))
    assert [turn.tool_output for turn in t.turns[1:]] == [
        "", "(Bash completed with no output) see", "built", ""]
    assert t.turns[1].exit_code == 0


def test_non_utf8_bytes_are_tolerated_and_noted(tmp_path):
    line = json.dumps(env("user", "u01", message={"role": "user", "content": "hi there friend"}))
    path = tmp_path / "s.jsonl"
    path.write_bytes(line.encode().replace(b"friend", b"fr\xffiend") + b"\n")
    t = decode_file(path)
    assert len(t.turns) == 1 and "\ufffd" in t.turns[0].content
    assert any("not UTF-8" in n for n in t.notes)


# Turn, tool-call and edit counts checked by reading each file (real turns exclude injected text).
CORPUS_COUNTS = {
    "M-Claude_1249ff48-75ab.jsonl": (9, 1, 0),  # 6 injected command turns, 1 Task call
    "M-Claude_1f83b279-86ee.jsonl": (2, 0, 0),
    "M-Claude_f225835b-3612.jsonl": (43, 39, 8),  # 4 Write + 4 Edit
    "M-Claude_agent-abc3cb6.jsonl": (46, 39, 0),  # subagent file graded alone
    "M-Claude_cc9f9e19-22a8.jsonl": (0, 0, 0),
    "M-Claude_dae783ed-78a0.jsonl": (0, 0, 0),
}


@needs_corpus
@pytest.mark.parametrize("name, counts", sorted(CORPUS_COUNTS.items()))
def test_corpus_counts(name, counts):
    t = decode_file(CORPUS / "claude-code" / name)
    tools = [x for x in t.turns if x.role is Role.TOOL]
    edits = sum(len(x.edits) for x in t.turns)
    assert (len(t.turns), len(tools), edits) == counts


@needs_corpus
def test_web_session_export_with_loglines():
    # 33 records: 6 user texts, 8 assistant text blocks, 12 tool_use blocks paired with results.
    t = decode_file(CORPUS / "fixtures-from-other-projects" / "claude-code"
                    / "claude-code-transcripts_sample_session.json")
    assert t.harness == "claude-code" and t.problem is None
    tools = [x for x in t.turns if x.role is Role.TOOL]
    assert (len(t.turns), len(tools)) == (26, 12)
    assert [x.tool_name for x in tools][:3] == ["Write", "Bash", "TodoWrite"]
    assert all(x.tool_output is not None for x in tools)


def test_web_session_export_that_is_broken_json_is_a_parse_problem(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"loglines": [{"type": "user", ')
    t = decode_file(path)
    assert t.problem is not None and "not valid JSON" in t.problem.message


def test_a_file_edited_again_keeps_only_its_first_original_and_latest_text(tmp_path):
    first = "a = 1\nb = 2\n"
    second = "a = 10\nb = 2\n"
    records = [env("user", "u01", message={"role": "user", "content": "Change a then b in x.py"})]
    for n, (old, new, before) in enumerate([("a = 1", "a = 10", first),
                                            ("b = 2", "b = 20", second)], start=1):
        records.append(env("assistant", f"u{2 * n:02d}", message={
            "id": f"m{n}", "role": "assistant", "content": [
                {"type": "tool_use", "id": f"t{n}", "name": "Edit",
                 "input": {"file_path": "/p/x.py", "old_string": old, "new_string": new}}]}))
        records.append(env("user", f"u{2 * n + 1:02d}", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{n}", "content": "updated"}]},
            toolUseResult={"filePath": "/p/x.py", "originalFile": before}))
    t = decode_file(write_lines(tmp_path, records))
    [one], [two] = t.turns[1].edits, t.turns[2].edits
    # The text between the two edits is held by neither: each edit's diff says what changed.
    assert one.before == first and one.after is None
    assert two.before is None and two.after == "a = 10\nb = 20\n"
    assert "+a = 10" in one.diff and "+b = 20" in two.diff
