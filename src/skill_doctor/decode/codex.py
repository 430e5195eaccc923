"""OpenAI Codex CLI rollout JSONL (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Two layouts. The current one wraps every line as
`{"timestamp", "type": session_meta|turn_context|response_item|event_msg|compacted, "payload"}`;
the mid-2025 one starts with a bare `{"id","timestamp","instructions"}` header, has
`{"record_type":"state"}` markers and bare response items. Both are read here.

The `codex exec --json` event stream (thread.started / item.completed ...) is read here too.

Traps handled: user and assistant text is logged twice (`response_item` messages and
`event_msg` user_message/agent_message) -- the response items are the conversation and the
events are counted as duplicates; injected preambles (`<environment_context>`, AGENTS.md,
`developer` messages) sit among the user messages and are marked meta; exit codes come in four
shapes depending on the CLI version; `apply_patch` arrives as a custom tool, a function call or
inside a shell command; reasoning items are counted, never shown.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, BinaryIO

from ..patterns import compile_later
from .builder import TranscriptBuilder
from .fields import exit_code as _exit_code, items, json_text
from .jsonl import iter_records

HARNESS = "codex"

_ENVELOPE = compile_later(
    r'"type":\s*"(?:session_meta|response_item|event_msg|turn_context|compacted)"')
_LEGACY_HEADER = compile_later(r'^\{"id":\s*"[^"]+",\s*"timestamp":\s*"[^"]*",\s*"instructions"')
_LEGACY_STATE = compile_later(r'^\{"record_type":\s*"state"')

# Leading markers of text Codex injects as user or developer messages, and their meta tag.
_INJECTED = (
    ("<environment_context>", "environment"),
    ("<turn_context>", "environment"),
    ("<user_instructions>", "instructions"),
    ("# AGENTS.md instructions for", "instructions"),
    ("<INSTRUCTIONS>", "instructions"),
    ("<permissions instructions>", "developer"),
    ("<collaboration_mode>", "developer"),
    ("<model_switch>", "developer"),
    ("<personality_spec>", "developer"),
    ("<turn_aborted>", "interrupt"),
    ("<user_shell_command>", "bash-mode"),
)
_TAGGED_BLOCK = compile_later(r"^<([a-z_][a-z_ -]*)>.*</\1>\s*$", re.DOTALL)

_EXIT_TEXT = compile_later(r"^Exit code: (-?\d+)", re.MULTILINE)
_EXIT_UNIFIED = compile_later(r"^Process exited with code (-?\d+)", re.MULTILINE)
_OUTPUT_MARK = compile_later(r"^Output:\n", re.MULTILINE)
# Unified exec: the program is still running; `write_stdin` with this session id reads on.
_RUNNING = compile_later(r"^Process running with session ID (\d+)", re.MULTILINE)
_KEEP_RUNNING = 64 * 1024  # of a running program's output, the latest part is kept


def _polled_session(name: str, args: Any) -> str | None:
    """The session a `write_stdin` call only reads from (it sends no characters), or None."""
    if name != "write_stdin" or not isinstance(args, dict) or args.get("chars") not in ("", None):
        return None
    session = args.get("session_id")
    return str(session) if isinstance(session, (int, str)) and not isinstance(session, bool) else None


def _printed(text: str) -> str:
    """What a unified-exec output says the program printed: the part after its header."""
    body = _OUTPUT_MARK.search(text, 0, 1000)
    return text[body.end():] if body else text


def sniff(head: str) -> bool:
    lines = [line.lstrip() for line in head.splitlines()[:5] if line.strip()]
    if not lines:
        return False
    if any((line.startswith("{") and '"payload"' in line and _ENVELOPE.search(line))
           or _EXEC_EVENT.match(line) for line in lines):
        return True
    return bool(_LEGACY_HEADER.match(lines[0]) or any(_LEGACY_STATE.match(l) for l in lines))


def classify_text(text: str, role: str) -> str | None:
    """Meta tag of a user/developer message, or None for what a person typed."""
    if role in ("developer", "system"):
        return "developer"
    stripped = text.lstrip()
    for marker, tag in _INJECTED:
        if stripped.startswith(marker):
            return tag
    if _TAGGED_BLOCK.match(stripped):
        return "injected"
    return None


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in items(content):
        if isinstance(block, dict):
            if block.get("type") in ("input_image", "image"):
                parts.append("[image]")
            elif isinstance(block.get("text"), str):
                parts.append(block["text"])
    return "\n".join(parts)


def _json_object(text: Any) -> dict | None:
    if isinstance(text, dict):
        return text
    if not isinstance(text, str) or not text.startswith("{"):
        return None
    try:
        value = json_text(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_output(raw: Any) -> tuple[str, int | None, bool]:
    """(text, exit code, failed) of a tool output in any of the shapes the versions used."""
    failed = False
    if isinstance(raw, dict):  # {"content": "...", "success": bool}
        failed = raw.get("success") is False
        raw = raw.get("content", raw.get("output", ""))
    if isinstance(raw, list):
        raw = _content_text(raw)
    text = raw if isinstance(raw, str) else ("" if raw is None else str(raw))
    envelope = _json_object(text)
    if envelope is not None and "output" in envelope:
        # <= 0.5x: {"output": "...", "metadata": {"exit_code": N, "duration_seconds": s}}
        metadata = envelope.get("metadata") if isinstance(envelope.get("metadata"), dict) else {}
        code = metadata.get("exit_code")
        output = envelope.get("output")
        return (output if isinstance(output, str) else str(output),
                code if isinstance(code, int) else None, failed)
    body = _OUTPUT_MARK.search(text, 0, 1000)
    header = text[:body.start()] if body else text[:200]
    match = _EXIT_TEXT.match(header) or _EXIT_UNIFIED.search(header)
    if match:
        # "Exit code: N\nWall time: ...\nOutput:\n..." (0.6x) and unified exec "Process exited
        # with code N" (0.9x+): keep the command's output, drop the header.
        return (text[body.end():] if body else text), _exit_code(match.group(1)), failed
    if text.startswith("apply_patch verification failed"):
        failed = True
    return text, None, failed


def decode(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    first = stream.read(4096).decode("utf-8", errors="replace").lstrip()
    stream.seek(0)
    if _EXEC_EVENT.match(first):
        return decode_exec(path, stream)
    b = TranscriptBuilder(str(path), HARNESS)
    state = _State(b)
    for lineno, rec in iter_records(stream, b):
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        kind = rec.get("type")
        payload = rec.get("payload")
        if "payload" in rec and isinstance(payload, dict):
            b.seen_time(ts)
            if kind == "session_meta":
                state.meta(payload)
            elif kind == "turn_context":
                if isinstance(payload.get("model"), str):
                    b.model = b.model or payload["model"]
                    state.model = payload["model"]
                b.cwd = b.cwd or (payload.get("cwd") if isinstance(payload.get("cwd"), str) else None)
                b.skip("turn_context")
            elif kind == "response_item":
                state.item(payload, lineno, ts)
            elif kind == "event_msg":
                state.event(payload, lineno, ts)
            elif kind == "compacted":
                # Newer rollouts keep the summary out of `message` (empty, with the kept
                # history in `replacement_history`): the compaction is marked all the same,
                # since what the model saw before it is gone from its context.
                text = payload.get("message")
                if not isinstance(text, str) or not text.strip():
                    text = "[context compacted]"
                b.user(text, line=lineno, timestamp=ts, meta="compaction")
            else:
                b.skip(str(kind or "unknown"))
            continue
        # The mid-2025 layout: a bare header, state markers, then bare response items.
        if "record_type" in rec:
            b.skip("state")
        elif kind is None and "instructions" in rec and "id" in rec:
            state.meta(rec)
        elif isinstance(kind, str):
            state.item(rec, lineno, ts)
        else:
            b.skip("unknown")
    return b


class _State:
    def __init__(self, b: TranscriptBuilder) -> None:
        self.b = b
        self.exit_codes: dict[str, int] = {}  # from exec_command_end events, by call id
        # Programs still running when their exec_command returned, by session id: the call's
        # turn and the output it has printed so far (write_stdin polls deliver the rest).
        self.running: dict[str, tuple[dict, str]] = {}
        self.polls: dict[str, str] = {}  # a polling write_stdin's call id -> its session id
        # real user messages seen as response items and not yet matched by their event twin
        self.unmatched_user = 0
        self.model: str | None = None  # the model of the latest turn_context
        self.total_tokens: Any = None  # the last cumulative token_count seen
        self.usage_turn = 1  # the first turn since the last token_count: what it paid for
        self.responses = 0

    def meta(self, payload: dict) -> None:
        b = self.b
        if isinstance(payload.get("id"), str):
            b.session_id = b.session_id or payload["id"]
        if isinstance(payload.get("cwd"), str):
            b.cwd = payload["cwd"]
        b.seen_time(payload.get("timestamp"))
        for key, name in (("cli_version", "version"), ("originator", "originator")):
            if isinstance(payload.get(key), str):
                b.extra.setdefault(name, payload[key])
        git = payload.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str):
            b.extra.setdefault("branch", git["branch"])
        source = payload.get("source")
        if (isinstance(source, dict) and "subagent" in source) or payload.get("thread_source") == "subagent":
            b.extra["subagent"] = "yes"
            b.note("subagent session: graded as a session of its own")

    def item(self, p: dict, lineno: int, ts: str | None) -> None:
        b = self.b
        itype = p.get("type")
        if itype == "message":
            role = str(p.get("role") or "")
            text = _content_text(p.get("content"))
            if not text.strip():
                b.skip("empty-message")
            elif role == "assistant":
                b.assistant(text, line=lineno, timestamp=ts)
            else:
                meta = classify_text(text, role)
                if meta is None:
                    self.unmatched_user += 1
                b.user(text, line=lineno, timestamp=ts, meta=meta)
        elif itype == "reasoning":
            b.skip("reasoning")
        elif itype == "function_call":
            name = str(p.get("name") or "unknown")
            raw = p.get("arguments")
            args = _json_object(raw) if isinstance(raw, str) else raw
            if args is None:
                args = {"input": raw} if raw not in (None, "") else {}
            session = _polled_session(name, args)
            if session is not None and session in self.running and isinstance(_id(p), str):
                # Reading more of a running program's output is part of the call that started
                # it, not a call of its own.
                self.polls[_id(p)] = session
                b.skip("poll-of-running-command")
                return
            b.tool_call(_id(p), name, args, line=lineno, timestamp=ts)
        elif itype == "custom_tool_call":
            b.tool_call(_id(p), str(p.get("name") or "unknown"), {"input": p.get("input", "")},
                        line=lineno, timestamp=ts)
        elif itype == "local_shell_call":
            action = p.get("action") if isinstance(p.get("action"), dict) else {}
            tool_input = {"command": action.get("command")}
            if action.get("working_directory"):
                tool_input["workdir"] = action["working_directory"]
            b.tool_call(_id(p), "local_shell_call", tool_input, line=lineno, timestamp=ts)
        elif itype in ("function_call_output", "custom_tool_call_output"):
            call_id = _id(p)
            text, code, failed = parse_output(p.get("output"))
            if code is None and call_id in self.exit_codes:
                code = self.exit_codes.pop(call_id)
            session = self.polls.pop(call_id, None) if isinstance(call_id, str) else None
            if session is not None:
                turn, before = self.running.pop(session)
                printed = _printed(text)
                body = f"{before}\n{printed}" if before and printed else before or printed
                running = _RUNNING.search(text[:400])
                if running:
                    self.running[session] = (turn, body[-_KEEP_RUNNING:])
                b.later_output(turn, text[:running.end()] + "\n" + body if running else body,
                               is_error=failed, exit_code=code)
                return
            turn = b.tool_result(call_id, text, is_error=failed, exit_code=code, line=lineno,
                                 timestamp=ts)
            running = _RUNNING.search(text[:400]) if code is None else None
            if running:
                self.running[running.group(1)] = (turn, _printed(text)[-_KEEP_RUNNING:])
        elif itype == "web_search_call":
            action = p.get("action") if isinstance(p.get("action"), dict) else {}
            b.tool("web_search", {"query": action.get("query", "")}, None, line=lineno, timestamp=ts)
        else:
            b.skip(str(itype or "unknown"))  # ghost_snapshot, compaction, ...

    def event(self, p: dict, lineno: int, ts: str | None) -> None:
        etype = p.get("type")
        if etype == "user_message":
            # Normally the twin of the response item just before it; a file that logs only
            # events (some writers do) still gets its prompts.
            if self.unmatched_user:
                self.unmatched_user -= 1
                self.b.skip("duplicate")
            elif isinstance(p.get("message"), str) and p["message"].strip():
                self.b.user(p["message"], line=lineno, timestamp=ts)
        elif etype == "agent_message":
            self.b.skip("duplicate")  # the same text is a response_item message
        elif etype in ("agent_reasoning", "agent_reasoning_raw_content"):
            self.b.skip("duplicate")
        elif etype == "exec_command_end":
            call_id = p.get("call_id")
            if isinstance(call_id, str) and isinstance(p.get("exit_code"), int):
                self.exit_codes[call_id] = p["exit_code"]
            self.b.skip("exec_command_end")
        elif etype == "token_count":
            self.tokens(p.get("info"))
            self.b.skip("event:token_count")
        elif etype == "turn_aborted":
            self.b.skip("turn_aborted")
        else:
            self.b.skip(f"event:{etype or 'unknown'}")


    def tokens(self, info: Any) -> None:
        """One model response's tokens from a `token_count` event.

        The event repeats the session's cumulative total (often twice for one response), so
        an unchanged total is a repeat; `last_token_usage` is the response's own count. Codex
        counts cached input inside `input_tokens` and reasoning inside `output_tokens`.
        """
        if not isinstance(info, dict):
            return  # `info` is null before the first response
        total = info.get("total_token_usage")
        if total is None or total == self.total_tokens:
            return
        self.total_tokens = total
        last = info.get("last_token_usage")
        if not isinstance(last, dict):
            return
        b = self.b
        cached = last.get("cached_input_tokens")
        cached = cached if isinstance(cached, int) and not isinstance(cached, bool) else 0
        prompt = last.get("input_tokens")
        uncached = prompt - cached if isinstance(prompt, int) and prompt >= cached else prompt
        self.responses += 1
        b.usage(f"response{self.responses}", turn=min(self.usage_turn, max(b.turn_count, 1)),
                input=uncached, output=last.get("output_tokens"), cache_read=cached,
                model=self.model or b.model)
        self.usage_turn = b.turn_count + 1


def _id(p: dict) -> str | None:
    value = p.get("call_id") or p.get("id")
    return value if isinstance(value, str) else None


# -- `codex exec --json` event stream -----------------------------------

_EXEC_EVENT = compile_later(
    r'^\{"type":\s*"(?:thread\.started|turn\.started|item\.(?:started|updated|completed))"')


def decode_exec(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    """`thread.started`, `turn.*`, `item.*` events; only completed items become turns.

    The stream does not repeat the prompt, so such a transcript has no user turn unless the
    harness wrote one; `file_change` items name the files changed but not the change.
    """
    b = TranscriptBuilder(str(path), HARNESS)
    b.extra["format"] = "exec-json"
    turn_start = 1  # the first turn of the agent turn a `turn.completed` closes
    for lineno, rec in iter_records(stream, b):
        kind = rec.get("type")
        if kind == "turn.completed" and isinstance(rec.get("usage"), dict):
            usage = rec["usage"]
            cached, prompt = usage.get("cached_input_tokens"), usage.get("input_tokens")
            if isinstance(cached, int) and isinstance(prompt, int) and prompt >= cached:
                prompt -= cached  # counted inside input_tokens
            b.usage(f"turn{lineno}", turn=min(turn_start, max(b.turn_count, 1)), input=prompt,
                    output=usage.get("output_tokens"), cache_read=cached)
            turn_start = b.turn_count + 1
        if kind == "thread.started":
            if isinstance(rec.get("thread_id"), str):
                b.session_id = rec["thread_id"]
            b.skip(kind)
            continue
        if kind in ("turn.failed", "error"):
            error = rec.get("error") if isinstance(rec.get("error"), dict) else rec
            b.assistant(str(error.get("message") or "error"), line=lineno, meta="error")
            continue
        if kind != "item.completed" or not isinstance(rec.get("item"), dict):
            b.skip(str(kind or "unknown"))
            continue
        item = rec["item"]
        itype = item.get("type") or item.get("item_type")
        if itype == "agent_message":
            b.assistant(str(item.get("text") or ""), line=lineno)
        elif itype == "reasoning":
            b.skip("reasoning")
        elif itype == "command_execution":
            code = item.get("exit_code") if isinstance(item.get("exit_code"), int) else None
            b.tool("command_execution", {"command": item.get("command", "")},
                   str(item.get("aggregated_output") or ""), exit_code=code,
                   is_error=item.get("status") == "failed", line=lineno)
        elif itype == "file_change":
            changes = [c for c in items(item.get("changes")) if isinstance(c, dict)]
            b.tool("file_change", {"changes": changes}, "", is_error=item.get("status") == "failed",
                   line=lineno)
        elif itype == "mcp_tool_call":
            b.tool(f"mcp__{item.get('server', '')}__{item.get('tool', '')}",
                   item.get("arguments") if isinstance(item.get("arguments"), dict) else {},
                   str(item.get("result") or ""), is_error=item.get("status") == "failed",
                   line=lineno)
        elif itype == "web_search":
            b.tool("web_search", {"query": item.get("query", "")}, "", line=lineno)
        elif itype == "todo_list":
            b.tool("update_plan", {"plan": item.get("items") or []}, "", line=lineno)
        elif itype == "error":
            b.assistant(str(item.get("message") or "error"), line=lineno, meta="error")
        else:
            b.skip(str(itype or "unknown"))
    return b
