"""Gemini CLI: saved chats (`chats/session-*.json` / `.jsonl`) and `--output-format stream-json`.

Saved chats hold a `messages` list of `user`/`gemini`/`info`/`error`/
`warning` records; a gemini message carries its `toolCalls` with their results inside, so a
call and its result arrive together. The newer `.jsonl` form has the same records one per line
plus `{"$set": ...}` metadata patches and `{"$rewindTo": id}` rewinds, which cut the branch
the user abandoned: only the surviving messages are the conversation. A record whose id was
already seen replaces the earlier one (the CLI rewrites a message as its tools finish).

The stream-json log has `init`/`message`/`tool_use`/`tool_result`/`result` lines paired by
`tool_id`; assistant text arrives as `delta` chunks that are joined into one turn.
Exit codes live in shell output text (`Exit Code: N`); tool `status` says success or error.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, BinaryIO

from ..patterns import compile_later
from .builder import TranscriptBuilder
from .fields import exit_code as _exit_code, items
from .jsonl import iter_records, loads

HARNESS = "gemini"

_SESSION = compile_later(r'"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"')
_STREAM_TOOL = compile_later(r'"type"\s*:\s*"(?:tool_use|tool_result)"[^\n]*"tool_id"')
_STREAM_INIT = compile_later(r'^\{"type"\s*:\s*"init"[^\n]*"session_id"', re.MULTILINE)
_STREAM_MESSAGE = compile_later(
    r'^\{"type"\s*:\s*"message"\s*,\s*(?:"timestamp"\s*:\s*"[^"]*"\s*,\s*)?"role"\s*:\s*'
    r'"(?:user|assistant)"\s*,\s*"content"\s*:\s*"', re.MULTILINE)
_EXIT = compile_later(r"^Exit Code: (-?\d+)", re.MULTILINE)
_SETUP = "This is the Gemini CLI. We are setting up the context for our chat"


def sniff(head: str) -> bool:
    start = head.lstrip()[:2000]
    if start.startswith("{") and _SESSION.search(start):
        return True
    return bool(_STREAM_INIT.search(head) or _STREAM_TOOL.search(head)
                or _STREAM_MESSAGE.search(head))


def decode(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    head = stream.read(4096).decode("utf-8", errors="replace").lstrip()
    stream.seek(0)
    if head.startswith("{") and _SESSION.search(head[:2000]):
        return _decode_session(path, stream)
    return _decode_stream(path, stream)


# -- saved chats ------------------------------------------------------------------------------

def _decode_session(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    b = TranscriptBuilder(str(path), HARNESS)
    data = stream.read()
    stream.seek(0)
    try:
        whole = loads(data)
    except (ValueError, RecursionError, TypeError):
        whole = None
    messages: dict[str, tuple[int, dict]] = {}  # id -> (line, record), in insertion order
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        _session_meta(b, whole)
        for position, record in enumerate(whole["messages"]):
            if isinstance(record, dict):
                messages[str(record.get("id", f"#{position}"))] = (0, record)
    else:
        del data
        for lineno, record in iter_records(stream, b):
            if "$set" in record:
                if isinstance(record["$set"], dict):
                    _session_meta(b, record["$set"])
                b.skip("$set")
            elif "$rewindTo" in record:
                _rewind(messages, str(record["$rewindTo"]))
                b.note("the chat was rewound; only the surviving branch is graded")
                b.skip("$rewindTo")
            elif "sessionId" in record and "type" not in record:
                _session_meta(b, record)
            else:
                key = str(record.get("id", f"line{lineno}"))
                messages[key] = (lineno, record)
    for lineno, record in messages.values():
        _message(b, record, lineno)
    return b


def _rewind(messages: dict[str, tuple[int, dict]], message_id: str) -> None:
    """Drop the message rewound to and everything after it."""
    if message_id not in messages:
        return
    keys = list(messages)
    for key in keys[keys.index(message_id):]:
        del messages[key]


def _session_meta(b: TranscriptBuilder, record: dict) -> None:
    if isinstance(record.get("sessionId"), str):
        b.session_id = record["sessionId"]
    b.seen_time(record.get("startTime"))
    b.seen_time(record.get("lastUpdated"))
    if isinstance(record.get("projectHash"), str):
        b.extra.setdefault("project", record["projectHash"])
    if record.get("kind") == "subagent":
        b.extra["subagent"] = "yes"
    directories = record.get("directories")
    if isinstance(directories, list) and directories and isinstance(directories[0], str):
        b.cwd = b.cwd or directories[0]


def _parts_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    parts = []
    for part in items(content):
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str) and not part.get("thought"):
                parts.append(part["text"])
            elif "inlineData" in part or "fileData" in part:
                parts.append("[attachment]")
    return "\n".join(parts)


def _response_text(result: Any) -> str:
    """The text of a tool result: functionResponse.response.output (or .error), or plain parts."""
    if isinstance(result, str):
        return result
    out = []
    for part in result if isinstance(result, list) else [result]:
        if not isinstance(part, dict):
            continue
        response = (part.get("functionResponse") or {}).get("response") if isinstance(
            part.get("functionResponse"), dict) else None
        if isinstance(response, dict):
            for key in ("output", "error", "content"):
                if isinstance(response.get(key), str):
                    out.append(response[key])
                    break
        elif isinstance(part.get("text"), str):
            out.append(part["text"])
    return "\n".join(out)


def exit_code_of(text: str) -> int | None:
    match = _EXIT.search(text[-2000:]) if text else None
    return _exit_code(match.group(1)) if match else None


def _message(b: TranscriptBuilder, record: dict, lineno: int) -> None:
    ts = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
    mtype = record.get("type")
    text = _parts_text(record.get("content"))
    if mtype == "user":
        if text.strip():
            meta = "environment" if text.lstrip().startswith(_SETUP) else None
            b.user(text, line=lineno, timestamp=ts, meta=meta)
        return
    if mtype in ("gemini", "model", "assistant"):
        if isinstance(record.get("model"), str):
            b.model = b.model or record["model"]
        tokens = record.get("tokens")
        if isinstance(tokens, dict):
            _tokens(b, f"message{lineno}:{record.get('id')}", tokens, record.get("model"))
        if record.get("thoughts"):
            b.skip("reasoning")
        if text.strip():
            b.assistant(text, line=lineno, timestamp=ts)
        for call in items(record.get("toolCalls")):
            if isinstance(call, dict):
                _saved_call(b, call, lineno)
        return
    if text.strip():  # info / error / warning notices from the CLI itself
        b.assistant(text, line=lineno, timestamp=ts, meta=str(mtype or "notice"))
    else:
        b.skip(str(mtype or "unknown"))


def _tokens(b: TranscriptBuilder, key: str, tokens: dict, model: Any,
            turn: int | None = None) -> None:
    """Gemini's counts: the prompt count (`input` in a saved chat, `input_tokens` in
    stream-json stats, whose own `input` is the uncached part) includes the cached tokens,
    `tool` prompt tokens come on top, and `thoughts` are billed as output."""
    def n(name: str) -> int:
        value = tokens.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    cached = n("cached")
    prompt = n("input_tokens") or n("input")
    b.usage(key, turn=turn, input=max(prompt - cached, 0) + n("tool"),
            output=(n("output") or n("output_tokens")) + n("thoughts"), cache_read=cached,
            model=model)


def _saved_call(b: TranscriptBuilder, call: dict, lineno: int) -> None:
    output = _response_text(call.get("result"))
    if not output and isinstance(call.get("resultDisplay"), str):
        output = call["resultDisplay"]
    status = call.get("status")
    exit_code = exit_code_of(output) if str(call.get("name")) == "run_shell_command" else None
    result = None
    display = call.get("resultDisplay")
    if isinstance(display, dict) and ("originalContent" in display or "newContent" in display):
        original = display.get("originalContent")
        result = {"type": "create" if display.get("isNewFile") else "update"}
        if isinstance(original, str) and not display.get("isNewFile"):
            result["originalFile"] = original
    b.tool(str(call.get("name") or "unknown"), call.get("args"), output,
           is_error=status not in (None, "success"), exit_code=exit_code, result=result,
           line=lineno, timestamp=call.get("timestamp") if isinstance(call.get("timestamp"), str) else None)


# -- stream-json -------------------------------------------------------------------------------

def _decode_stream(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    b = TranscriptBuilder(str(path), HARNESS)
    names: dict[str, str] = {}
    runs = 0
    turn_key = 0  # assistant deltas join until something else happens
    for lineno, rec in iter_records(stream, b):
        kind = rec.get("type")
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        if kind == "init":
            runs += 1
            if runs > 1:
                b.note("the file holds several runs one after another")
            b.session_start(rec["session_id"] if isinstance(rec.get("session_id"), str) else None,
                            ts)
            if isinstance(rec.get("session_id"), str):
                b.session_id = b.session_id or rec["session_id"]
            if isinstance(rec.get("model"), str):
                b.model = b.model or rec["model"]
            b.seen_time(ts)
            b.skip("init")
            turn_key += 1
        elif kind == "message":
            text = rec.get("content") if isinstance(rec.get("content"), str) else _parts_text(
                rec.get("content"))
            if rec.get("role") == "user":
                turn_key += 1
                if text.strip():
                    meta = "environment" if text.lstrip().startswith(_SETUP) else None
                    b.user(text, line=lineno, timestamp=ts, meta=meta)
            elif text:
                b.assistant(text, line=lineno, timestamp=ts, merge_key=f"delta{turn_key}")
        elif kind == "tool_use":
            turn_key += 1
            call_id = rec.get("tool_id") if isinstance(rec.get("tool_id"), str) else None
            name = str(rec.get("tool_name") or "unknown")
            if call_id:
                names[call_id] = name
            b.tool_call(call_id, name, rec.get("parameters"), line=lineno, timestamp=ts)
        elif kind == "tool_result":
            turn_key += 1
            call_id = rec.get("tool_id") if isinstance(rec.get("tool_id"), str) else None
            output = rec.get("output")
            error = rec.get("error")
            if not isinstance(output, str):
                output = _parts_text(output) if output is not None else ""
            if not output and isinstance(error, dict) and isinstance(error.get("message"), str):
                output = error["message"]
            exit_code = exit_code_of(output) if names.get(call_id or "") == "run_shell_command" else None
            b.tool_result(call_id, output, is_error=rec.get("status") == "error",
                          exit_code=exit_code, line=lineno, timestamp=ts)
        elif kind == "result":
            b.seen_time(ts)
            b.skip("result")
            if isinstance(rec.get("stats"), dict):
                # A run total with no per-turn split: pinned to no turn (turn 0).
                _tokens(b, f"result{lineno}", rec["stats"], b.model, turn=0)
            if rec.get("status") not in (None, "success"):
                b.note(f"the run ended with status {rec.get('status')}")
        elif kind == "error":
            message = rec.get("message") or rec.get("error")
            b.assistant(str(message), line=lineno, timestamp=ts, meta="error")
        else:
            b.skip(str(kind or "unknown"))
    return b
