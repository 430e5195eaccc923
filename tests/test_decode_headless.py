"""Headless `claude -p --output-format stream-json` logs: no user record, so no guessed request."""

from __future__ import annotations

import json

from skill_doctor import facts
from skill_doctor.decode import decode_file
from skill_doctor.model import Role

SID = "5b1e0c2a-0000-4000-8000-000000000007"


def _lines(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def _stream(tmp_path, *middle: dict):
    path = tmp_path / "run.jsonl"
    path.write_text(_lines(
        {"type": "system", "subtype": "init", "cwd": "/app", "session_id": SID,
         "tools": ["Bash", "Skill"], "model": "claude-sonnet-4-5", "skills": ["pdf"]},
        *middle,
        {"type": "result", "subtype": "success", "is_error": False, "result": "Done.",
         "session_id": SID}), encoding="utf-8")
    return decode_file(path)


def test_a_skills_loaded_instructions_are_never_the_request(tmp_path):
    t = _stream(
        tmp_path,
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Skill", "input": {"skill": "pdf"}}]},
         "parent_tool_use_id": None, "session_id": SID},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "Launching skill: pdf"}]},
         "parent_tool_use_id": None, "session_id": SID},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "Base directory for this skill: /root/.claude/skills/pdf\n\n"
                                     "# PDF\nAlways extract the text with pdftotext first."}]},
         "parent_tool_use_id": None, "session_id": SID},
        {"type": "assistant", "message": {"id": "m2", "role": "assistant", "content": [
            {"type": "text", "text": "Extracted the text."}]},
         "parent_tool_use_id": None, "session_id": SID})
    assert [(x.role, x.meta) for x in t.turns] == [
        (Role.USER, "request-unknown"), (Role.TOOL, None), (Role.USER, "skill"),
        (Role.ASSISTANT, None)]
    assert facts.compute(t).goal is None
    assert any(n.startswith("the request is unknown") for n in t.notes)


def test_a_stream_with_a_user_record_keeps_it_as_the_request(tmp_path):
    t = _stream(
        tmp_path,
        {"type": "user", "message": {"role": "user", "content": "Summarise README.md"},
         "parent_tool_use_id": None, "session_id": SID},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "text", "text": "It describes a CLI."}]},
         "parent_tool_use_id": None, "session_id": SID})
    assert [x.meta for x in t.turns] == [None, None]
    assert facts.compute(t).goal.content == "Summarise README.md"
    assert not any(n.startswith("the request is unknown") for n in t.notes)


def test_content_blocks_sharing_a_uuid_are_not_duplicates(tmp_path):
    uuid = "9b8517a5-841b-4cc1-98e7-943fef9b2113"
    t = _stream(
        tmp_path,
        {"type": "assistant", "uuid": uuid, "message": {"id": "m1", "role": "assistant",
                                                        "content": [{"type": "text", "text": "Listing."}]},
         "parent_tool_use_id": None, "session_id": SID},
        {"type": "assistant", "uuid": uuid, "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]},
         "parent_tool_use_id": None, "session_id": SID},
        {"type": "user", "uuid": "u2", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]},
         "parent_tool_use_id": None, "session_id": SID},
        {"type": "user", "uuid": "u2", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]},
         "parent_tool_use_id": None, "session_id": SID})
    bash = next(x for x in t.turns if x.role is Role.TOOL)
    assert bash.command == "ls" and bash.tool_output == "a.txt" and bash.exit_code == 0
    assert dict(t.skipped)["duplicate"] == 1
    assert "tool results without a matching call" not in t.notes


def test_a_headless_run_with_one_call_is_graded_not_too_short(tmp_path):
    from skill_doctor import rubric
    from skill_doctor.report import grade

    t = _stream(
        tmp_path,
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/app/a.png"}}]},
         "parent_tool_use_id": None, "session_id": SID},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "[image]"}]},
         "parent_tool_use_id": None, "session_id": SID})
    # the unknown request and the call: the agent ran, so the run is scored (its request
    # unknown), unlike a file holding one turn
    report = grade(t, rubric.load(), "2026-01-01T00:00:00Z", overview=False)
    assert report.status == "ok"
