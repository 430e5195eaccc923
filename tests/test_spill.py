"""A long session's texts wait in a spill file (see skill_doctor.spill): reports must not change.

Spilling starts only past SPILL_AFTER_CHARS of held text, which no corpus session reaches, so
these tests lower the threshold to 0 (everything spills from the first turn) and compare.
"""

from __future__ import annotations

import os
import pickle
import tempfile

import pytest

from conftest import CORPUS, needs_corpus
from skill_doctor import rubric as rubric_mod
from skill_doctor import spill as spill_mod
from skill_doctor.decode import builder as builder_mod
from skill_doctor.decode import decode_file
from skill_doctor.decode.builder import TranscriptBuilder
from skill_doctor.model import FileEdit, Role
from skill_doctor.render import render
from skill_doctor.report import grade, to_json
from skill_doctor.write import dump_json

RUBRIC = rubric_mod.load()
NOT_SESSIONS = {"README.md", "MANIFEST.tsv"}


def _report(path):
    transcript = decode_file(path)
    report = grade(transcript, RUBRIC, "2026-01-01T00:00:00Z")
    return dump_json(to_json(report)), render(report), transcript


def _spilled_anything(transcript) -> bool:
    return any(type(t._content) is int or type(t._tool_input) is int or
               type(t._tool_output) is int or type(t._command) is int or
               any(type(e._new) is int or type(e._old) is int for e in t.edits)
               for t in transcript.turns)


@needs_corpus
def test_every_corpus_report_is_the_same_with_texts_spilled(monkeypatch):
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name not in NOT_SESSIONS)
    assert len(files) > 50
    spilled = differ = 0
    for path in files:
        monkeypatch.setattr(builder_mod, "SPILL_AFTER_CHARS", 16 * 2**20)
        kept_json, kept_html, kept = _report(path)
        assert not _spilled_anything(kept)
        monkeypatch.setattr(builder_mod, "SPILL_AFTER_CHARS", 0)
        spill_json, spill_html, moved = _report(path)
        spilled += _spilled_anything(moved)
        if (kept_json, kept_html) != (spill_json, spill_html):
            differ += 1
            print("differs:", path)
    assert differ == 0
    assert spilled > 40  # the comparison did exercise the spill file


def _builder_with_texts(text: str) -> TranscriptBuilder:
    b = TranscriptBuilder("s.jsonl", "claude-code")
    b.user(text)
    b.assistant(text + " (answer)")
    b.tool("Write", {"file_path": "/p/a.py", "content": text}, "wrote " + text)
    b.tool("Edit", {"file_path": "/p/a.py", "old_string": text, "new_string": text + "!"}, "ok")
    b.assistant("done")
    b.tool("Bash", {"command": "echo '" + text + "' > notes.txt"}, "")
    return b


def test_texts_come_back_exactly_as_they_were(monkeypatch):
    monkeypatch.setattr(builder_mod, "SPILL_AFTER_CHARS", 0)
    text = "lone \udc80 surrogate, \U0001f600 and a NUL \x00 " * 20
    t = _builder_with_texts(text).build()
    assert _spilled_anything(t)
    user, answer, write, edit, _, shell = t.turns
    assert user.content == text and answer.content == text + " (answer)"
    assert write.tool_input["content"] == text[:len(write.tool_input["content"])]
    assert write.edits[0].new == text
    assert type(write._tool_output) is int and write.tool_output == "wrote " + text
    assert type(shell._command) is int and shell.command == "echo '" + text + "' > notes.txt"
    assert type(shell._tool_input) is int and shell.tool_input["command"].startswith("echo '")
    assert edit.edits[0].old == text and edit.edits[0].new == text + "!"


def test_a_temporary_folder_that_refuses_the_file_keeps_texts_in_memory(monkeypatch):
    monkeypatch.setattr(builder_mod, "SPILL_AFTER_CHARS", 0)

    def refuse(*args, **kwargs):
        raise PermissionError("read-only temporary folder")
    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    text = "x" * 500
    t = _builder_with_texts(text).build()
    assert not _spilled_anything(t)
    assert t.turns[0].content == text and t.turns[2].edits[0].new == text


def test_a_disk_that_fills_up_midway_keeps_the_rest_in_memory(monkeypatch):
    monkeypatch.setattr(builder_mod, "SPILL_AFTER_CHARS", 0)
    real_put = spill_mod.Spill._put
    calls = []

    def fill_up(self, data):
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        return real_put(self, data)
    monkeypatch.setattr(spill_mod.Spill, "_put", fill_up)
    text = "y" * 500
    t = _builder_with_texts(text).build()
    assert type(t.turns[0]._content) is int  # spilled before the disk filled
    assert [x.content for x in t.turns[:2]] == [text, text + " (answer)"]
    assert t.turns[2].edits[0].new == text and t.turns[3].edits[0].old == text


def test_the_spill_file_leaves_nothing_behind(monkeypatch, tmp_path):
    monkeypatch.setattr(builder_mod, "SPILL_AFTER_CHARS", 0)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    t = _builder_with_texts("z" * 500).build()
    assert _spilled_anything(t)
    assert os.listdir(tmp_path) == []  # unnamed from the start
    assert t.turns[0].content == "z" * 500


def test_a_pickled_turn_carries_its_texts_not_their_places(monkeypatch):
    monkeypatch.setattr(builder_mod, "SPILL_AFTER_CHARS", 0)
    t = _builder_with_texts("w" * 500).build()
    copy = pickle.loads(pickle.dumps(t.turns[2]))
    assert copy._spill is None and copy.edits[0]._spill is None
    assert copy.content == t.turns[2].content and copy.tool_input == t.turns[2].tool_input
    assert copy.edits == t.turns[2].edits and copy.edits[0].new == "w" * 500


def test_turns_and_edits_are_read_only_and_replace_keeps_spilled_texts(monkeypatch):
    monkeypatch.setattr(builder_mod, "SPILL_AFTER_CHARS", 0)
    t = _builder_with_texts("v" * 500).build()
    user = t.turns[0]
    with pytest.raises(AttributeError):
        user.content = "changed"
    with pytest.raises(AttributeError):
        t.turns[2].edits[0].new = "changed"
    moved = user.replace(index=9)
    assert moved.index == 9 and moved.role is Role.USER and moved.content == "v" * 500
    assert type(moved._content) is int  # still read from the file, not copied into memory
    edit = FileEdit("a.py", None, new="n" * 200).replace(created=True)
    assert edit.created and edit.new == "n" * 200


def test_reads_past_the_recent_texts_still_come_from_the_file():
    spill = spill_mod.open_spill()
    texts = [f"text {i} " * (i % 7 + 1) for i in range(300)]
    handles = [spill.put_text(t) for t in texts]
    for _ in range(2):  # the second round reads what the first evicted
        assert [spill.text(h) for h in handles] == texts
        assert [spill.text(h) for h in reversed(handles)] == texts[::-1]
    assert spill.value(spill.put_value({"a": [1, "b"]})) == {"a": [1, "b"]}
    spill.close()


def test_a_system_without_positioned_reads_keeps_texts_in_memory(monkeypatch):
    monkeypatch.setattr(builder_mod, "SPILL_AFTER_CHARS", 0)
    monkeypatch.delattr(os, "pread")  # as on Windows
    t = _builder_with_texts("u" * 500).build()
    assert not _spilled_anything(t) and t.turns[0].content == "u" * 500


def test_texts_are_written_in_batches_and_a_batch_the_disk_refuses_stays_readable(monkeypatch):
    spill = spill_mod.open_spill()
    writes = []
    real_pwrite = os.pwrite
    disk_full = False

    def pwrite(fd, data, at):
        writes.append(len(data))
        if disk_full:
            raise OSError(28, "No space left on device")
        return real_pwrite(fd, data, at)
    monkeypatch.setattr(os, "pwrite", pwrite)
    texts = [f"{i} " + "t" * 3000 for i in range(2000)]  # about 6 MB
    handles = [spill.put_text(text) for text in texts[:500]]
    assert len(writes) == 1 and writes[0] >= spill_mod._FLUSH_BYTES  # a batch, not a write a text
    # read back from the file and from the batch not written yet
    assert [spill.text(h) for h in handles] == texts[:500]
    disk_full = True
    with pytest.raises(OSError):
        for text in texts[500:]:
            handles.append(spill.put_text(text))
    assert len(writes) == 2 and len(handles) > 500
    # the batch the disk refused is read from memory, like every text before it
    assert [spill.text(h) for h in reversed(handles)] == texts[:len(handles)][::-1]
    spill.close()
