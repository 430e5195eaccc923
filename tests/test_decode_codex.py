"""Codex CLI rollouts (current and mid-2025 layouts) and `codex exec --json` streams."""

from __future__ import annotations

import pytest

from conftest import CORPUS, FIXTURES, corpus_files, needs_corpus
from decode_counts import assert_diffs_parse, counts
from skill_doctor.decode import decode_file, sniff
from skill_doctor.model import Role, ToolKind

# (turns, real user turns, tool calls, edits), checked against the files: user turns equal the
# `event_msg/user_message` count, tool calls the function_call + custom_tool_call (+ web
# search) count less the write_stdin calls that only poll a running command (they are part of
# the call that started it); edits are apply_patch files plus `cat > f <<EOF` writes.
EXPECTED = {
    "0h-n0_local-voice-assistant-codex_2025-12-26T01-48-36.jsonl": (8, 1, 4, 0),
    "Hoper-J_cpolar-connect_2025-09-16T12-47-48.jsonl": (68, 6, 51, 13),
    "Kooksun_Lotto645_2025-11-07T09-19-52.jsonl": (99, 2, 93, 11),
    "Monotoba_OpenPrintKit_2025-10-31T19-02-58.jsonl": (526, 63, 400, 234),
    "Quelklef_shell-ws_2026-03-18T11-04-43.jsonl": (372, 71, 162, 79),  # + a compaction; 60 polls
    "Xu-Wentao_dotfile_2026-04-08T22-02-46.jsonl": (51, 3, 28, 0),  # 6 polls
    "aneesh199608_dslint_2025-12-09T14-27-29.jsonl": (59, 4, 51, 4),
}


@needs_corpus
@pytest.mark.parametrize("path", corpus_files("codex"), ids=lambda p: p.name)
def test_every_codex_rollout_decodes(path):
    t = decode_file(path)
    assert t.harness == "codex" and t.problem is None
    assert counts(t) == EXPECTED[path.name]
    assert_diffs_parse(t)


@needs_corpus
def test_preambles_are_meta_and_prompts_are_not_doubled():
    t = decode_file(CORPUS / "codex" / "Quelklef_shell-ws_2026-03-18T11-04-43.jsonl")
    metas = {x.meta for x in t.turns if x.role is Role.USER}
    assert {"developer", "instructions", "environment", "interrupt"} <= metas
    real = [x.content for x in t.turns if x.role is Role.USER and x.meta is None]
    assert real[0].startswith("I have a dream.")
    assert dict(t.skipped)["reasoning"] == 178


@needs_corpus
def test_a_compaction_without_summary_text_is_still_marked():
    # Newer rollouts leave `message` empty and keep the history in `replacement_history`.
    t = decode_file(CORPUS / "codex" / "Quelklef_shell-ws_2026-03-18T11-04-43.jsonl")
    marks = [x for x in t.turns if x.meta == "compaction"]
    assert len(marks) == 1 and marks[0].role is Role.USER and marks[0].line == 1821
    assert "compacted" not in dict(t.skipped)


@needs_corpus
def test_exit_codes_in_every_form():
    old = decode_file(CORPUS / "codex" / "Kooksun_Lotto645_2025-11-07T09-19-52.jsonl")
    assert any(x.exit_code == 0 for x in old.turns)  # JSON metadata
    text = decode_file(CORPUS / "codex" / "aneesh199608_dslint_2025-12-09T14-27-29.jsonl")
    first = next(x for x in text.turns if x.tool_name == "shell_command")
    assert first.exit_code == 0 and not first.tool_output.startswith("Exit code")
    unified = decode_file(CORPUS / "codex" / "Xu-Wentao_dotfile_2026-04-08T22-02-46.jsonl")
    assert any(x.exit_code == 1 and x.is_error for x in unified.turns)
    # A command still running when exec_command returned ends as its write_stdin polls say:
    # one turn with the whole output and the final exit code, no poll turns.
    assert not any(x.tool_name == "write_stdin" for x in unified.turns)
    polled = decode_file(CORPUS / "codex" / "Quelklef_shell-ws_2026-03-18T11-04-43.jsonl")
    check = next(x for x in polled.turns if x.command and x.command.startswith("nix-shell")
                 and "cargo check" in x.command)
    assert check.exit_code == 101 and check.is_error
    assert "Process running" not in check.tool_output and "could not compile" in check.tool_output


@needs_corpus
def test_apply_patch_as_custom_tool_and_inside_shell():
    t = decode_file(CORPUS / "codex" / "Kooksun_Lotto645_2025-11-07T09-19-52.jsonl")
    patch = next(x for x in t.turns if x.tool_name == "apply_patch")
    assert patch.kind is ToolKind.EDIT and patch.paths == (".eslintignore",)
    assert "+*.min.js" in patch.edits[0].diff
    shell = decode_file(CORPUS / "codex" / "Monotoba_OpenPrintKit_2025-10-31T19-02-58.jsonl")
    in_shell = [x for x in shell.turns if x.via_shell and x.edits]
    assert in_shell and in_shell[0].kind is ToolKind.EDIT


@needs_corpus
def test_reads_through_shell_are_reads():
    t = decode_file(CORPUS / "codex" / "0h-n0_local-voice-assistant-codex_2025-12-26T01-48-36.jsonl")
    reads = [x for x in t.turns if x.kind is ToolKind.READ]
    assert reads and reads[0].paths == ("backend/app/api/stt.py",)


@needs_corpus
def test_subagent_rollouts_are_flagged():
    family = CORPUS / "fixtures-from-other-projects" / "family"
    worker = decode_file(family / "swiftdiaries_codex-family-worker.jsonl")
    assert dict(worker.extra).get("subagent") == "yes"
    assert counts(worker) == (1, 1, 0, 0)  # events only: the prompt still becomes a turn
    assert "subagent" not in dict(decode_file(family / "swiftdiaries_codex-family-main.jsonl").extra)


def test_legacy_layout():
    t = decode_file(FIXTURES / "codex" / "legacy-mid-2025.jsonl")
    assert t.harness == "codex" and t.session_id == "2b1f0c3e-1111-4a4a-9c9c-000000000001"
    assert counts(t) == (6, 1, 3, 1)
    read, patch, test = [x for x in t.turns if x.role is Role.TOOL]
    assert read.kind is ToolKind.READ and read.paths == ("pager.py",) and read.exit_code == 0
    assert patch.kind is ToolKind.EDIT and "+    return n" in patch.edits[0].diff
    # The command is the script the shell ran: argv ["bash", "-lc", "pytest -q"] unwrapped.
    assert test.exit_code == 1 and test.is_error and test.command == "pytest -q"
    assert dict(t.skipped)["reasoning"] == 1


def test_exec_json_stream():
    t = decode_file(FIXTURES / "codex" / "exec-json.jsonl")
    assert t.harness == "codex" and t.session_id.startswith("0199a213")
    assert counts(t) == (4, 0, 3, 2)
    ls, pytest_run, change = [x for x in t.turns if x.role is Role.TOOL]
    assert ls.kind is ToolKind.LIST and ls.exit_code == 0
    assert pytest_run.exit_code == 1 and pytest_run.is_error
    assert change.kind is ToolKind.EDIT and change.paths == ("src/app.py", "src/new.py")
    assert change.edits[1].created


def test_sniffing_does_not_claim_other_jsonl():
    from skill_doctor.decode import codex

    assert codex.sniff('{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{}}')
    assert not codex.sniff('{"type":"message","role":"user","content":"hi"}')
    assert sniff('{"type":"session","id":"x","timestamp":"t","cwd":"/"}').HARNESS == "pi"


def test_polls_of_a_running_command_end_the_call_that_started_it(tmp_path):
    import json

    def item(payload):
        return json.dumps({"timestamp": "2026-03-18T11:04:43.000Z", "type": "response_item",
                           "payload": payload})

    def call(call_id, name, args):
        return item({"type": "function_call", "name": name, "arguments": json.dumps(args),
                     "call_id": call_id})

    def output(call_id, text):
        return item({"type": "function_call_output", "call_id": call_id, "output": text})

    running = "Chunk ID: a1\nWall time: 1.0 seconds\nProcess running with session ID 7\nOutput:\n"
    lines = [
        json.dumps({"timestamp": "2026-03-18T11:04:43.000Z", "type": "session_meta",
                    "payload": {"id": "s1", "cwd": "/p", "cli_version": "0.105.0"}}),
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Run the tests"}]}),
        call("c1", "exec_command", {"cmd": "pytest -q"}),
        output("c1", running + "collecting ..."),
        call("c2", "write_stdin", {"session_id": 7, "chars": ""}),
        output("c2", running + "...."),
        call("c3", "write_stdin", {"session_id": 7, "chars": ""}),
        output("c3", "Chunk ID: a3\nWall time: 2.0 seconds\nProcess exited with code 1\nOutput:\n1 failed, 3 passed"),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One test fails."}]}),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    t = decode_file(path)
    tools = [x for x in t.turns if x.role is Role.TOOL]
    assert [(x.tool_name, x.exit_code, x.is_error) for x in tools] == [("exec_command", 1, True)]
    assert tools[0].tool_output == "collecting ...\n....\n1 failed, 3 passed"
