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


def test_storage_files_that_are_links_fifos_or_huge_are_skipped_not_read(tmp_path):
    """A message file linked to /dev/zero, a part file that is a FIFO, a link out of the store
    and an oversized file: decoding finishes at once, with the regular files' turns."""
    import os
    import shutil
    import threading

    from skill_doctor.decode import opencode

    store = tmp_path / "storage"
    shutil.copytree(FIXTURES / "opencode" / "storage", store)
    os.symlink("/dev/zero", store / "message" / "ses_01abc" / "msg_00zero.json")
    os.mkfifo(store / "part" / "msg_01a" / "prt_00fifo.json")
    outside = tmp_path / "outside.json"
    outside.write_text('{"id": "msg_00out", "role": "user"}', encoding="utf-8")
    os.symlink(outside, store / "message" / "ses_01abc" / "msg_00out.json")
    big = store / "message" / "ses_01abc" / "msg_00big.json"
    big.write_bytes(b'{"id": "msg_00big", "role": "user", "x": "' + b"a" * 64
                    + b'"}' + b" " * (opencode.MAX_RECORD_BYTES + 1))
    result: list = []
    worker = threading.Thread(target=lambda: result.append(
        decode_file(store / "session" / "proj1" / "ses_01abc.json")), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert result, "decoding hung on a FIFO or read /dev/zero"
    t = result[0]
    assert counts(t) == counts(decode_file(SESSION))  # only the store's regular files count
