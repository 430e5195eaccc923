"""Write small sessions for tests from a compact description, in a harness's own format.

A session is a list of steps, one per turn: {user: text}, {assistant: text}, or
{tool: Name, input: {...}, output: text, error: bool}; assistant and tool steps may carry the
API `usage` and `model` of their message. Each step becomes exactly one turn, so
a case's expected turn numbers are the 1-based positions of its steps.
"""

from __future__ import annotations

import json
from typing import Any, Iterable


def claude_jsonl(steps: Iterable[dict[str, Any]], *, cwd: str = "/home/dev/proj",
                 session_id: str = "11111111-2222-3333-4444-555555555555") -> str:
    """The steps as a Claude Code project JSONL transcript."""
    lines: list[dict[str, Any]] = []
    parent = None
    second = 0

    def envelope(kind: str) -> dict[str, Any]:
        nonlocal parent, second
        second += 1
        uuid = f"00000000-0000-4000-8000-{second:012d}"
        record = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                  "sessionId": session_id, "version": "2.1.1", "type": kind, "uuid": uuid,
                  "timestamp": f"2026-01-01T10:{second // 60:02d}:{second % 60:02d}.000Z"}
        parent = uuid
        return record

    for n, step in enumerate(steps, start=1):
        if "user" in step:
            record = envelope("user")
            record["message"] = {"role": "user", "content": step["user"]}
            lines.append(record)
        elif "compaction" in step:  # the summary Claude Code writes when it compacts
            record = envelope("user")
            record.update(isCompactSummary=True, isVisibleInTranscriptOnly=True)
            record["message"] = {"role": "user", "content": step["compaction"]}
            lines.append(record)
        elif "assistant" in step:
            record = envelope("assistant")
            record["message"] = {"id": f"msg_{n:04d}", "type": "message", "role": "assistant",
                                 "model": step.get("model", "claude-sonnet-4-5"), "content": [
                                     {"type": "text", "text": step["assistant"]}]}
            if "usage" in step:
                record["message"]["usage"] = step["usage"]
            lines.append(record)
        else:
            call_id = f"toolu_{n:04d}"
            record = envelope("assistant")
            record["message"] = {"id": f"msg_{n:04d}", "type": "message", "role": "assistant",
                                 "model": step.get("model", "claude-sonnet-4-5"), "content": [
                                     {"type": "tool_use", "id": call_id, "name": step["tool"],
                                      "input": step.get("input", {})}]}
            if "usage" in step:
                record["message"]["usage"] = step["usage"]
            lines.append(record)
            result = envelope("user")
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id,
                                     "content": step.get("output", "")}
            if step.get("error"):
                block["is_error"] = True
            result["message"] = {"role": "user", "content": [block]}
            if "result" in step:
                result["toolUseResult"] = step["result"]
            lines.append(result)
    return "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines)
