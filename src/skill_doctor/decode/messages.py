"""Generic chat message arrays: OpenAI Chat Completions and Anthropic Messages.

A JSON array of `{role, content}` (or an object with a `messages` array, optionally a
top-level `system`). OpenAI: assistant `tool_calls[{id, function{name, arguments (JSON
text)}}]` answered by `{role:"tool", tool_call_id, content}` (and the older `function_call` /
`role:"function"`). Anthropic: content blocks `text`, `thinking`, `tool_use{id,name,input}`
and, in user messages, `tool_result{tool_use_id, content, is_error}`. Tool results are tool
turns, never user turns. This decoder is tried last: any more specific format claims first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from ..patterns import compile_later
from .builder import TranscriptBuilder
from .fields import items, tool_arguments
from .jsonl import UNREADABLE, read_document

HARNESS = "messages"

_ARRAY = compile_later(r'^\[\s*\{\s*"role"\s*:')
_OBJECT = compile_later(r'"messages"\s*:\s*\[\s*\{\s*"role"\s*:')


def sniff(head: str) -> bool:
    start = head.lstrip()
    return bool(_ARRAY.match(start) or (start.startswith("{") and _OBJECT.search(head)))


def decode(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    b = TranscriptBuilder(str(path), HARNESS)
    data = read_document(stream, b)
    if data is UNREADABLE:
        return b
    if isinstance(data, dict):
        if isinstance(data.get("model"), str):
            b.model = data["model"]
        system = data.get("system")
        if system:
            b.user(_text(system), meta="system")
        data = data.get("messages")
    if not isinstance(data, list):
        b.not_a_transcript = True
        return b
    counter = 0
    last_function: str | None = None
    for position, message in enumerate(data, start=1):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            b.user(_text(content), line=position, meta="system")
        elif role == "assistant":
            for block in _blocks(content):
                btype = block.get("type")
                if btype in ("text", "output_text") and str(block.get("text", "")).strip():
                    b.assistant(str(block["text"]), line=position, merge_key=f"m{position}")
                elif btype in ("thinking", "redacted_thinking", "reasoning"):
                    b.skip("reasoning")
                elif btype in ("tool_use", "server_tool_use"):
                    counter += 1
                    b.tool_call(str(block.get("id") or f"t{counter}"), str(block.get("name") or "unknown"),
                                block.get("input"), line=position)
            for call in items(message.get("tool_calls")):
                if not isinstance(call, dict):
                    continue
                function = call.get("function") if isinstance(call.get("function"), dict) else {}
                counter += 1
                b.tool_call(str(call.get("id") or f"t{counter}"), str(function.get("name") or "unknown"),
                            tool_arguments(function.get("arguments")), line=position)
            legacy = message.get("function_call")
            if isinstance(legacy, dict):
                counter += 1
                last_function = f"f{counter}"
                b.tool_call(last_function, str(legacy.get("name") or "unknown"),
                            tool_arguments(legacy.get("arguments")), line=position)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            b.tool_result(call_id if isinstance(call_id, str) else None, _text(content), line=position)
        elif role == "function":
            b.tool_result(last_function, _text(content), line=position)
            last_function = None
        elif role == "user":
            texts = []
            for block in _blocks(content):
                btype = block.get("type")
                if btype == "tool_result":
                    call_id = block.get("tool_use_id")
                    b.tool_result(call_id if isinstance(call_id, str) else None,
                                  _text(block.get("content")), is_error=bool(block.get("is_error")),
                                  line=position)
                elif btype in ("text", "input_text") and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif btype in ("image", "image_url", "input_image"):
                    texts.append("[image]")
            text = "\n".join(texts)
            if text.strip():
                b.user(text, line=position)
        else:
            b.skip(str(role or "unknown"))
    return b


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, dict):
        return [content]
    return [block for block in items(content) if isinstance(block, dict)]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in _blocks(content):
        if isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") in ("image", "image_url"):
            parts.append("[image]")
    return "\n".join(parts)
