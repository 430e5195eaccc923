"""OpenCode: a storage session info file (message and part files found beside it) and exports."""

from __future__ import annotations

from conftest import FIXTURES
from decode_counts import counts
from skill_doctor.decode import decode_file
from skill_doctor.model import Role, ToolKind

SESSION = FIXTURES / "opencode" / "storage" / "session" / "proj1" / "ses_01abc.json"


def test_storage_layout():
    t = decode_file(SESSION)
    assert t.harness == "opencode" and t.session_id == "ses_01abc" and t.cwd == "/home/dev/shop"
    assert counts(t) == (5, 1, 3, 1)
    read, edit, bash = [x for x in t.turns if x.role is Role.TOOL]
    assert read.kind is ToolKind.READ and edit.kind is ToolKind.EDIT and bash.exit_code == 0
    assert "+sum(i.price * i.qty for i in items)" in edit.edits[0].diff
    assert t.started_at == "2026-01-01T00:00:00.000Z"


def test_export_gives_the_same_turns():
    a = decode_file(SESSION)
    b = decode_file(FIXTURES / "opencode" / "export.json")
    strip = lambda t: [(x.role, x.content, x.tool_name, x.tool_output, x.exit_code) for x in t.turns]
    assert strip(a) == strip(b)


def test_message_and_part_files_are_not_sessions():
    part = FIXTURES / "opencode" / "storage" / "part" / "msg_01a" / "prt_01a1.json"
    assert decode_file(part).harness != "opencode"
