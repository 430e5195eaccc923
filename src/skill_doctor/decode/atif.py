"""Harbor's Agent Trajectory Interchange Format (ATIF, `"schema_version": "ATIF-v1.x"`).

The trajectory Harbor and Terminal-Bench 2 write for every agent they run: one JSON document
with `agent` (`name`, `version`, `model_name`, `extra.cwds`), `steps[]` and `final_metrics`.
A step has `source` (`user` | `agent` | `system`), `message`, optional `reasoning_content`,
`tool_calls[]` (`tool_call_id`, `function_name`, `arguments`) and, on the same step, the
`observation.results[]` that answer them (`source_call_id`, `content`).

Traps: an agent step that only calls a tool says so in `message` ("Executed Bash
functions.Bash:0"), which is no assistant text; `observation.content` may carry a
`[metadata] {...}` trailer the converter appends, while `extra.tool_result_metadata` keeps the
agent's raw result (`raw_tool_result` with `is_error`, `tool_use_result` with stdout,
stderr, interrupted). When the agent is Claude Code its user steps hold the same injected
wrappers as its JSONL (task notifications, reminders), so they are classified with the
Claude Code rules, and tool results are judged by the same rule as its stream-json: the two
copies of one run decode to the same turns.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import BinaryIO

from ..patterns import compile_later
from .builder import TranscriptBuilder
from .claude_code import classify_user_text, result_outcome, result_text, tool_output
from .fields import items, text_or_none, tool_arguments
from .jsonl import UNREADABLE, read_document

HARNESS = "atif"

_SCHEMA = compile_later(r'"schema_version"\s*:\s*"ATIF-v\d')
_METADATA_TRAILER = compile_later(r"\n*\[metadata\] \{.*\}\s*$", re.DOTALL)


def sniff(head: str) -> bool:
    return head.lstrip().startswith("{") and bool(_SCHEMA.search(head))


def decode(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    unread = TranscriptBuilder(str(path), HARNESS)
    data = read_document(stream, unread)
    if data is UNREADABLE:
        return unread
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        unread.not_a_transcript = True
        return unread
    agent = data.get("agent") if isinstance(data.get("agent"), dict) else {}
    # The graded harness is the agent that ran; the trajectory is only its container.
    name = text_or_none(agent.get("name"))
    b = TranscriptBuilder(str(path), name or HARNESS)
    b.headless = True  # a trajectory is a benchmark's agent run, with no one at the keyboard
    b.extra["format"] = str(data.get("schema_version"))[:40]
    b.session_id = text_or_none(data.get("session_id"))
    b.model = text_or_none(agent.get("model_name"))
    if isinstance(agent.get("version"), str):
        b.extra["version"] = agent["version"]
    agent_extra = agent.get("extra") if isinstance(agent.get("extra"), dict) else {}
    # The project is where the run started: the first step's cwd (`agent.extra.cwds` is a
    # set of every folder the agent moved to, in no particular order).
    for step in items(data["steps"]):
        step_extra = step.get("extra") if isinstance(step, dict) else None
        if isinstance(step_extra, dict) and isinstance(step_extra.get("cwd"), str):
            b.cwd = step_extra["cwd"]
            break
    cwds = [c for c in items(agent_extra.get("cwds")) if isinstance(c, str)]
    if b.cwd is None and cwds:
        b.cwd = cwds[-1] if len(cwds) > 1 else cwds[0]
    branches = [g for g in items(agent_extra.get("git_branches")) if isinstance(g, str) and g]
    if branches:
        b.extra["branch"] = branches[0]
    b.drop_unanswered_calls = True
    tool_names: dict[str, str] = {}
    steps = []
    for position, step in enumerate(data["steps"], start=1):
        if isinstance(step, dict):
            steps.append((position, step))
        else:
            b.skip("non-object-step")
    # Steps in time order: the converter appends calls that never got a result after the
    # last step although they were announced first. Untimed steps keep their place.
    steps.sort(key=lambda ps: (_time_key(ps[1], steps[0][1] if steps else {}), ps[0]))
    for position, step in steps:
        _step(b, step, position, tool_names)
    return b


def _time_key(step: dict, first: dict) -> str:
    ts = step.get("timestamp")
    return ts if isinstance(ts, str) else ""


def _step(b: TranscriptBuilder, step: dict, position: int, tool_names: dict[str, str]) -> None:
    ts = text_or_none(step.get("timestamp"))
    extra = step.get("extra") if isinstance(step.get("extra"), dict) else {}
    if extra.get("is_sidechain"):
        b.skip("sidechain")  # subagent traffic, kept out as the Claude Code decoder does
        return
    source = step.get("source")
    message = step.get("message")
    text = message if isinstance(message, str) else result_text(message)
    if source == "user":
        text, meta = classify_user_text(text, {})
        if text.strip():
            b.user(text, line=position, timestamp=ts, meta=meta)
        return
    if source == "system":
        if text.strip():
            b.user(text, line=position, timestamp=ts, meta="system")
        return
    if source != "agent":
        b.skip(f"source:{str(source)[:40]}")
        return
    if isinstance(step.get("model_name"), str):
        b.model = b.model or step["model_name"]
    if step.get("reasoning_content"):
        b.skip("thinking")
    calls = [c for c in items(step.get("tool_calls")) if isinstance(c, dict)]
    if text.strip() and not (calls and _placeholder(text, calls)):
        b.assistant(text, line=position, timestamp=ts)
    for call in calls:
        call_id = text_or_none(call.get("tool_call_id"))
        name = str(call.get("function_name") or "unknown")
        if call_id:
            tool_names[call_id] = name
        b.tool_call(call_id, name, tool_arguments(call.get("arguments")), line=position,
                    timestamp=ts)
    observation = step.get("observation")
    results = items(observation.get("results")) if isinstance(observation, dict) else []
    metadata = extra.get("tool_result_metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    raw = metadata.get("raw_tool_result") if isinstance(metadata.get("raw_tool_result"), dict) else {}
    for result in results:
        if not isinstance(result, dict):
            continue
        call_id = text_or_none(result.get("source_call_id"))
        if raw and raw.get("tool_use_id") == call_id:
            output = result_text(raw.get("content"))
            is_error = bool(raw.get("is_error"))
        else:
            output = _METADATA_TRAILER.sub("", result_text(result.get("content")))
            is_error = bool(extra.get("tool_result_is_error"))
        output = tool_output(output)
        is_error, exit_code, structured = result_outcome(
            tool_names.get(call_id or "", ""), output, is_error, metadata.get("tool_use_result"))
        b.tool_result(call_id, output, is_error=is_error, exit_code=exit_code,
                      result=structured, line=position, timestamp=ts)


def _placeholder(text: str, calls: list[dict]) -> bool:
    """Whether an agent step's message only says which calls it executed."""
    stripped = text.strip()
    return stripped.startswith("Executed ") and all(
        str(c.get("tool_call_id") or "") in stripped for c in calls)
