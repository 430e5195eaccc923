"""Pi coding agent session JSONL (`~/.pi/agent/sessions/--<cwd>--/<ts>_<id>.jsonl`).

Header `{"type":"session", ...}`, then `message` entries wrapping an AgentMessage (`user`,
`assistant` with `text`/`thinking`/`toolCall` blocks, `toolResult`, `bashExecution`, ...),
plus `compaction`, `model_change` and other bookkeeping.

v1 files are linear and are streamed. From v2 on every entry has `id`/`parentId` and the file
is a tree: editing an earlier message starts a branch, and only the path from the last entry
(the current leaf) back to the root is the conversation, so such files are read whole and
that path is followed. Exit codes: a failed bash result ends in `Command exited with code N`;
a `bashExecution` (the user's own `!` command) carries `exitCode`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from ..patterns import compile_later
from .builder import TranscriptBuilder
from .fields import exit_code as _exit_code, items, text_or_none
from .jsonl import iter_records

HARNESS = "pi"

_HEADER = compile_later(r'^\{"type"\s*:\s*"session"\s*,[^\n]*"cwd"')
_EXITED = compile_later(r"Command exited with code (-?\d+)\s*$")
_NO_OUTPUT = compile_later(r"^\(no output\)(?:\s*$|\n+(?=Command exited with code))")


def sniff(head: str) -> bool:
    first = head.lstrip().split("\n", 1)[0]
    return bool(_HEADER.match(first))


def decode(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    b = TranscriptBuilder(str(path), HARNESS)
    records = iter_records(stream, b)
    tree: list[tuple[int, dict]] = []
    is_tree = False
    for lineno, rec in records:
        if rec.get("type") == "session":
            _header(b, rec)
            continue
        if not is_tree and "id" in rec and "parentId" in rec:
            is_tree = True
        if is_tree:
            tree.append((lineno, rec))
        else:
            _entry(b, rec, lineno)
    if tree:
        for lineno, rec in _active_branch(b, tree):
            _entry(b, rec, lineno)
    return b


def _active_branch(b: TranscriptBuilder, entries: list[tuple[int, dict]]) -> list[tuple[int, dict]]:
    """The entries on the path from the last entry back to the root, in file order.

    Ids are strings; an id of another type (a damaged line) counts as no id, so it is never
    hashed and the entry stays like an old line without one.
    """
    by_id: dict[str, tuple[int, dict]] = {}
    for lineno, rec in entries:
        entry_id = text_or_none(rec.get("id"))
        if entry_id is not None:
            by_id[entry_id] = (lineno, rec)
    leaf = entries[-1][1]
    keep: list[tuple[int, dict]] = []
    seen: set[str | None] = set()
    node: tuple[int, dict] | None = (entries[-1][0], leaf)
    while node is not None and text_or_none(node[1].get("id")) not in seen:
        seen.add(text_or_none(node[1].get("id")))
        keep.append(node)
        parent = text_or_none(node[1].get("parentId"))
        node = by_id.get(parent) if parent is not None else None
    # entries without ids (older lines in a migrated file) stay, in order; a leaf without an
    # id is already kept
    kept = {lineno for lineno, _ in keep}
    keep.extend((lineno, rec) for lineno, rec in entries
                if text_or_none(rec.get("id")) is None and lineno not in kept)
    dropped = len(entries) - len(keep)
    if dropped:
        b.skip("other-branch", dropped)
        b.note(f"{dropped} entr{'y' if dropped == 1 else 'ies'} on abandoned branches kept out")
    keep.sort(key=lambda item: item[0])
    return keep


def _header(b: TranscriptBuilder, rec: dict) -> None:
    if isinstance(rec.get("id"), str):
        b.session_id = rec["id"]
    if isinstance(rec.get("cwd"), str):
        b.cwd = rec["cwd"]
    if isinstance(rec.get("modelId"), str):
        b.model = rec["modelId"]
    if rec.get("version") is not None:
        b.extra["format-version"] = str(rec["version"])
    if isinstance(rec.get("branchedFrom"), str):
        b.extra["branched-from"] = rec["branchedFrom"]
    b.seen_time(rec.get("timestamp"))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""  # a retyped or missing field: no text, never a crash
    parts = []
    for block in content:
        if isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "image":
                parts.append("[image]")
    return "\n".join(parts)


def _entry(b: TranscriptBuilder, rec: dict, lineno: int) -> None:
    ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
    kind = rec.get("type")
    if kind == "compaction":
        summary = rec.get("summary")
        if isinstance(summary, str) and summary.strip():
            b.user(summary, line=lineno, timestamp=ts, meta="compaction")
        return
    if kind == "branch_summary":
        if isinstance(rec.get("summary"), str):
            b.user(rec["summary"], line=lineno, timestamp=ts, meta="branch-summary")
        return
    if kind == "model_change":
        if isinstance(rec.get("modelId"), str):
            b.model = b.model or rec["modelId"]
        b.skip("model_change")
        return
    message = rec.get("message")
    if kind != "message" or not isinstance(message, dict):
        b.skip(str(kind or "unknown"))
        return
    b.seen_time(ts)
    role = message.get("role")
    if role == "user":
        text = _text(message.get("content"))
        if text.strip():
            b.user(text, line=lineno, timestamp=ts)
    elif role == "assistant":
        _assistant(b, message, lineno, ts)
    elif role == "toolResult":
        output = _text(message.get("content"))
        details = message.get("details") if isinstance(message.get("details"), dict) else {}
        is_error = bool(message.get("isError"))
        exit_code = details.get("exitCode") if isinstance(details.get("exitCode"), int) else None
        if exit_code is None and str(message.get("toolName")) == "bash":
            match = _EXITED.search(output[-200:])
            if match:
                exit_code = _exit_code(match.group(1))
            elif not is_error:
                exit_code = 0
        if str(message.get("toolName")) == "bash":
            # Pi writes "(no output)" where the command printed nothing.
            output = _NO_OUTPUT.sub("", output, count=1)
        call_id = message.get("toolCallId") if isinstance(message.get("toolCallId"), str) else None
        b.tool_result(call_id, output, is_error=is_error, exit_code=exit_code, line=lineno,
                      timestamp=ts)
    elif role == "bashExecution":
        code = message.get("exitCode") if isinstance(message.get("exitCode"), int) else None
        b.tool("bash", {"command": message.get("command", "")}, str(message.get("output") or ""),
               is_error=bool(message.get("cancelled")), exit_code=code, line=lineno,
               timestamp=ts, meta="bash-mode")
    elif role in ("compactionSummary", "branchSummary"):
        text = message.get("summary") if isinstance(message.get("summary"), str) else _text(
            message.get("content"))
        b.user(text, line=lineno, timestamp=ts, meta="compaction")
    else:  # custom / hookMessage: extension-injected text
        text = _text(message.get("content"))
        if text.strip():
            b.user(text, line=lineno, timestamp=ts, meta="custom")
        else:
            b.skip(str(role or "unknown"))


def _assistant(b: TranscriptBuilder, message: dict, lineno: int, ts: str | None) -> None:
    if isinstance(message.get("model"), str):
        b.model = b.model or message["model"]
    usage = message.get("usage")
    if isinstance(usage, dict):  # Pi's `input` already leaves the cache reads out
        b.usage(f"pi{lineno}", input=usage.get("input"), output=usage.get("output"),
                cache_read=usage.get("cacheRead"), cache_write=usage.get("cacheWrite"),
                model=message.get("model") or b.model)
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    for block in items(content):
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and str(block.get("text", "")).strip():
            b.assistant(str(block["text"]), line=lineno, timestamp=ts, merge_key=f"pi{lineno}")
        elif btype == "thinking":
            b.skip("reasoning")
        elif btype == "toolCall":
            call_id = block.get("id") if isinstance(block.get("id"), str) else None
            b.tool_call(call_id, str(block.get("name") or "unknown"), block.get("arguments"),
                        line=lineno, timestamp=ts)
    if message.get("stopReason") == "error" and isinstance(message.get("errorMessage"), str):
        b.assistant(message["errorMessage"], line=lineno, timestamp=ts, meta="api-error")
    elif message.get("stopReason") == "aborted":
        b.skip("aborted")
