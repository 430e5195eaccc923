"""Generic OpenAI and Anthropic message arrays, and the Claude Code stream-json envelope."""

from __future__ import annotations

from conftest import FIXTURES
from decode_counts import counts
from skill_doctor.decode import decode_file
from skill_doctor.model import Role, ToolKind


def test_openai_chat_array():
    t = decode_file(FIXTURES / "messages" / "openai-chat.json")
    assert t.harness == "messages"
    assert counts(t) == (6, 1, 2, 1)
    assert [x.meta for x in t.turns if x.role is Role.USER] == ["system", None]
    edit = next(x for x in t.turns if x.kind is ToolKind.EDIT)
    assert edit.tool_output == "ok" and "+return a + b" in edit.edits[0].diff


def test_anthropic_messages_object():
    t = decode_file(FIXTURES / "messages" / "anthropic-messages.json")
    assert t.model == "claude-sonnet-4-5" and counts(t) == (4, 1, 1, 0)
    read = next(x for x in t.turns if x.role is Role.TOOL)
    assert read.kind is ToolKind.READ and read.tool_output == "def add(a, b): ..."
    assert dict(t.skipped)["reasoning"] == 1


def test_claude_stream_json():
    t = decode_file(FIXTURES / "claude_code" / "stream-json.jsonl")
    assert t.harness == "claude-code" and t.cwd == "/home/dev/app" and t.model == "claude-opus-4-5"
    # No user record: the request is marked unknown (a turn of its own, never graded as a
    # request) rather than guessed from other text.
    assert counts(t) == (6, 0, 3, 1)
    assert t.turns[0].meta == "request-unknown" and t.turns[0].role is Role.USER
    assert any(n.startswith("the request is unknown") for n in t.notes)
    bash = next(x for x in t.turns if x.tool_name == "Bash")
    assert bash.exit_code == 1 and bash.is_error
    edit = next(x for x in t.turns if x.tool_name == "Edit")
    assert edit.edits[0].before == "def add(a, b):\n    return a - b\n"
