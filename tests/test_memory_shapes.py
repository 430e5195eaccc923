"""The compact shapes a long session is held in behave like what they replace."""

from __future__ import annotations

import json

import pytest

from skill_doctor.decode.builder import Draft, TranscriptBuilder
from skill_doctor.decode.seen import SeenKeys
from skill_doctor.model import Role, Usage
from skill_doctor.write import dump_json, json_bytes, write_file


def test_a_draft_reads_and_writes_like_the_dict_it_replaces():
    d = Draft(role=Role.USER, content="hi", line=3)
    assert d["role"] is Role.USER and d.get("content") == "hi" and d.get("meta") is None
    assert d["kind"] is None and d["tool_output"] is None  # not known yet: Turn's default
    with pytest.raises(KeyError):
        d["no_such_field"]
    d["timestamp"] = "2026-01-01T00:00:00Z"
    d.update(meta="command", line=4)
    assert (d["timestamp"], d["meta"], d["line"]) == ("2026-01-01T00:00:00Z", "command", 4)
    with pytest.raises(AttributeError):
        d["no_such_field"] = 1  # a misspelt field is an error, not a silent new key
    turn = d.turn(5, None)
    assert (turn.index, turn.role, turn.content, turn.line, turn.column, turn.meta,
            turn.tool_output, turn.paths, turn.edits) == (5, Role.USER, "hi", 4, 1, "command",
                                                          None, (), ())


def test_remap_and_retain_callbacks_see_drafts_like_dicts():
    b = TranscriptBuilder("s.txt", "generic")
    b.user("first", line=1)
    b.assistant("answer", line=2)
    b.user("[unknown]", meta="request-unknown")
    b.remap(lambda d: d.__setitem__("line", (d.get("line") or 0) + 10))
    b.retain(lambda d: d.get("meta") != "request-unknown")
    t = b.build()
    assert [(x.role, x.line) for x in t.turns] == [(Role.USER, 11), (Role.ASSISTANT, 12)]


def test_json_bytes_are_the_text_dump_json_writes(tmp_path):
    data = {"b": [1, 2, {"c": "é\u2028"}], "a": None}
    assert json_bytes(data) == dump_json(data).encode("utf-8")
    hostile = {"lone": "\udc80 surrogate"}  # orjson refuses it; the fallback writes it
    write_file(tmp_path / "text.json", dump_json(hostile))
    write_file(tmp_path / "bytes.json", json_bytes(hostile))
    assert (tmp_path / "text.json").read_bytes() == (tmp_path / "bytes.json").read_bytes()
    assert json.loads((tmp_path / "bytes.json").read_text(encoding="utf-8")) == {
        "lone": "? surrogate"}  # what encoding with errors="replace" leaves


def _graded_with_tokens(turns_with_usage: int):
    from skill_doctor import rubric
    from skill_doctor.report import grade

    b = TranscriptBuilder("s.jsonl", "claude-code")
    b.user("Fix the page count in src/pager.py.")
    for i in range(turns_with_usage):
        b.usage(f"msg{i}", input=10 + i, output=5, cache_read=1000 * i, cache_write=3)
        b.tool("Bash", {"command": f"pytest -q tests/test_{i}.py"}, "1 passed")
    b.assistant("Fixed; the tests pass.")
    return grade(b.build(), rubric.load(), "2026-01-01T00:00:00Z")


@pytest.mark.parametrize("turns, chunk", [(0, 4096), (1, 4096), (7, 2), (9, 3), (50, 4096)])
def test_report_json_in_pieces_is_the_whole_dump(monkeypatch, turns, chunk):
    import skill_doctor.report as report_mod

    monkeypatch.setattr(report_mod, "_TURNS_CHUNK", chunk)
    report = _graded_with_tokens(turns)
    whole = json_bytes(report_mod.to_json(report))
    assert b"".join(report_mod.report_json(report)) == whole
    if turns:
        listed = json.loads(whole)["usage"]["turns"]
        assert len(listed) == turns and listed[-1]["cache_read_tokens"] == 1000 * (turns - 1)


def test_seen_keys_answer_like_a_set_across_the_tables_growth():
    seen = SeenKeys()
    keys = [f"line-{i}\0tool_use:{i % 7}" for i in range(20_000)] + ["\ud83d lone surrogate", ""]
    assert all(seen.add(key) for key in keys)  # each new the first time, the table grown often
    assert len(seen) == len(keys)
    assert not any(seen.add(key) for key in keys)  # and remembered after every growth
    assert seen.add("line-20000\0tool_use:0") and len(seen) == len(keys) + 1


def test_usage_log_reads_like_the_tuple_of_usage_it_replaces():
    import pickle

    b = TranscriptBuilder("s.jsonl", "claude-code")
    b.user("Fix the page count in src/pager.py.")
    b.usage("msg1", input=10, output=5, cache_read=1000, model="claude-sonnet-4-5")
    b.usage("msg1", input=7, output=9, cache_read=1000)  # a split message: the larger counts
    b.assistant("Reading it.")
    b.usage("msg2", turn=99, input=1, cache_write=10**15)  # past the last turn: pinned to it
    b.assistant("Fixed.")
    usage = b.build().usage
    expected = (Usage(2, 10, 9, 1000, 0, "claude-sonnet-4-5"), Usage(3, 1, 0, 0, 10**15, None))
    assert usage == expected and tuple(usage) == expected and len(usage) == 2
    assert usage[0] == expected[0] and usage[-1] == expected[1] and usage[1:] == expected[1:]
    assert pickle.loads(pickle.dumps(usage)) == expected
    with pytest.raises(IndexError):
        usage[2]


def test_a_transcript_with_usage_stays_hashable_like_before():
    b = TranscriptBuilder("s.jsonl", "claude-code")
    b.user("Fix the page count in src/pager.py.")
    b.usage("msg1", input=10, output=5)
    b.assistant("Fixed.")
    transcript = b.build()
    assert hash(transcript.usage) == hash((Usage(2, 10, 5),)) and hash(transcript) == hash(transcript)
