"""Cline / Roo Code / Kilo task files: `api_conversation_history.json` and `ui_messages.json`.

The API history is an Anthropic-style message array, but tool results
come back as user *text* blocks `[tool for 'arg'] Result:` -- never as `tool_result` blocks --
and every user message carries injected `<environment_details>`, reminders and resumption
notes. What the person typed sits in `<task>`, `<feedback>`, `<answer>` or `<user_message>`
wrappers. Older versions put tool calls in the assistant text as XML (`<read_file><path>...`);
those are lifted out into tool turns. Results pair with the calls of the preceding assistant
message in order.

`ui_messages.json` is the UI event log: `say`/`ask` records with tools as JSON text
(`readFile`, `editedExistingFile` with SEARCH/REPLACE blocks, `newFileCreated` ...), commands
with their streamed output, and the user's feedback.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from pathlib import Path
from typing import Any, BinaryIO

from ..patterns import compile_later
from ..text import iso_from_millis as _iso
from .builder import TranscriptBuilder
from .fields import exit_code as _exit_code, items, json_text
from .jsonl import UNREADABLE, read_document

HARNESS = "cline"

_UI_HEAD = compile_later(r'^\[\s*\{\s*"ts"\s*:\s*\d+\s*,\s*"type"\s*:\s*"(?:say|ask)"')
_API_HEAD = compile_later(r'^\[\s*\{\s*"role"\s*:\s*"(?:user|assistant)"\s*,\s*"content"')
_API_MARKERS = compile_later(r"<task>|<environment_details>|\] Result:|<feedback>")
_RESULT = compile_later(r"^\[([A-Za-z_]+)(?: for .*?)?\] Result:[ \t]*\n?", re.DOTALL)
_EXIT = compile_later(r"\(exit code (-?\d+)\)|failed with exit code (-?\d+)|exited with code (-?\d+)")
_WRAPPED = compile_later(r"<(task|feedback|answer|user_message)>\s*(.*?)\s*</\1>", re.DOTALL)
_XML_TOOLS = (
    "read_file write_to_file replace_in_file execute_command search_files list_files "
    "list_code_definition_names browser_action use_mcp_tool access_mcp_resource "
    "ask_followup_question attempt_completion new_task plan_mode_respond apply_diff "
    "insert_content search_and_replace fetch_instructions update_todo_list switch_mode "
    "codebase_search web_fetch").split()
_XML_CALL = compile_later(r"<(%s)>(.*?)</\1>" % "|".join(_XML_TOOLS), re.DOTALL)
_XML_PARAM = compile_later(r"<([a-z_]+)>\n?(.*?)\n?</\1>", re.DOTALL)
_INJECTED = (
    ("<environment_details>", "environment"),
    ("[TASK RESUMPTION]", "resumption"),
    ("[ERROR]", "harness-error"),
    ("# task_progress", "reminder"),
    ("# TODO LIST", "reminder"),
    ("Files attached by the user", "attachment"),
    ("(The user did not provide a new message", "reminder"),
    ("The user has provided feedback on the results", "reminder"),
)


def sniff(head: str) -> bool:
    start = head.lstrip()
    if _UI_HEAD.match(start):
        return True
    return bool(_API_HEAD.match(start) and _API_MARKERS.search(head))


def decode(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    b = TranscriptBuilder(str(path), HARNESS)
    data = read_document(stream, b)
    folders: dict[str, int] = {}  # workspace folder -> requests naming it
    if data is UNREADABLE:
        return b
    if not isinstance(data, list):
        b.not_a_transcript = True
        return b
    if data and isinstance(data[0], dict) and "ts" in data[0] and ("say" in data[0] or "ask" in data[0]):
        b.extra["file"] = "ui_messages"
        _decode_ui(b, data, folders)
    else:
        b.extra["file"] = "api_conversation_history"
        _decode_api(b, data, folders)
    _settle_cwd(b, folders)
    return b


def parse_input(value: Any) -> dict:
    """Tool input: a dict, JSON text or a Python repr (`"{'path': 'src', 'recursive': True}"`)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        for parse in (json_text, ast.literal_eval):
            try:
                parsed = parse(value)
            except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                continue
            if isinstance(parsed, dict):
                return parsed
    return {"input": value} if value not in (None, "") else {}


def _text_of(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in items(content) if isinstance(block, dict)]


# -- api_conversation_history.json -------------------------------------------------------------

def _decode_api(b: TranscriptBuilder, messages: list, folders: dict[str, int]) -> None:
    open_calls: deque[str] = deque()
    counter = 0
    for position, message in enumerate(messages, start=1):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        blocks = _text_of(message.get("content"))
        if role == "assistant":
            open_calls.clear()
            for block in blocks:
                btype = block.get("type")
                if btype == "text":
                    text = str(block.get("text", ""))
                    prose = _XML_CALL.sub("", text)
                    prose = re.sub(r"<thinking>.*?</thinking>", "", prose, flags=re.DOTALL).strip()
                    if prose:
                        b.assistant(prose, line=position, merge_key=f"m{position}")
                    for name, params in _xml_calls(text):
                        counter += 1
                        call_id = f"xml{counter}"
                        b.tool_call(call_id, name, params, line=position)
                        open_calls.append(call_id)
                elif btype == "tool_use":
                    counter += 1
                    call_id = str(block.get("id") or f"call{counter}")
                    b.tool_call(call_id, str(block.get("name") or "unknown"),
                                parse_input(block.get("input")), line=position)
                    open_calls.append(call_id)
                elif btype in ("thinking", "reasoning", "redacted_thinking"):
                    b.skip("reasoning")
        elif role == "user":
            _api_user(b, blocks, position, open_calls, folders)
        else:
            b.skip(str(role or "unknown"))


def _xml_calls(text: str) -> list[tuple[str, dict]]:
    calls = []
    for match in _XML_CALL.finditer(text):
        params = {m.group(1): m.group(2) for m in _XML_PARAM.finditer(match.group(2))}
        calls.append((match.group(1), params))
    return calls


def _api_user(b: TranscriptBuilder, blocks: list[dict], position: int, open_calls: deque[str],
              folders: dict[str, int]) -> None:
    pending: list[Any] | None = None  # [call id, body parts] of the result being read

    def flush() -> None:
        nonlocal pending
        if pending is None:
            return
        call_id, parts = pending
        body = "\n".join(parts)
        if call_id is None:
            b.tool_result(None, body, line=position)
        else:
            _result(b, call_id, body, position)
        for wrapped in _WRAPPED.finditer(body):  # the user's answer or feedback
            if wrapped.group(2).strip():
                b.user(wrapped.group(2), line=position)
        pending = None

    for block in blocks:
        btype = block.get("type")
        if btype == "tool_result":  # newer Cline forks do use real tool_result blocks
            flush()
            call_id = block.get("tool_use_id")
            if isinstance(call_id, str) and call_id in open_calls:
                open_calls.remove(call_id)
            text = "\n".join(str(x.get("text", "")) for x in _text_of(block.get("content")))
            _result(b, call_id if isinstance(call_id, str) else None, text, position)
            continue
        if btype == "image":
            b.user("[image]", line=position, meta="image")
            continue
        if btype != "text":
            continue
        text = str(block.get("text", ""))
        match = _RESULT.match(text)
        if match:
            flush()
            call_id = open_calls.popleft() if open_calls else None
            if call_id is None:
                b.tool_call(None, match.group(1), {}, line=position)
            pending = [call_id, [text[match.end():]]]
            continue
        stripped = text.lstrip()
        meta = next((tag for marker, tag in _INJECTED if stripped.startswith(marker)), None)
        if meta == "environment":
            _note_cwd(folders, text)
        if pending is not None and meta is None and not _WRAPPED.search(text):
            pending[1].append(text)  # the result continued in a second block
            continue
        flush()
        wrapped = [m.group(2) for m in _WRAPPED.finditer(text) if m.group(2).strip()]
        if wrapped and meta is None:
            for piece in wrapped:
                b.user(piece, line=position)
        elif text.strip():
            b.user(text, line=position, meta=meta)
    flush()


def _result(b: TranscriptBuilder, call_id: str | None, body: str, position: int) -> None:
    match = _EXIT.search(body[:300])
    exit_code = None
    if match:
        exit_code = _exit_code(next(g for g in match.groups() if g is not None))
    head = body.lstrip()[:200]
    is_error = (head.startswith("The user denied this operation")
                or head.startswith("The tool execution failed")
                or head.startswith("[ERROR]") or head.startswith("Error executing"))
    b.tool_result(call_id, body, is_error=is_error, exit_code=exit_code, line=position)


# -- ui_messages.json --------------------------------------------------------------------------

_UI_TOOL_NAMES = {"readFile": "read_file", "editedExistingFile": "replace_in_file",
                  "newFileCreated": "write_to_file", "searchFiles": "search_files",
                  "listFilesTopLevel": "list_files", "listFilesRecursive": "list_files",
                  "listCodeDefinitionNames": "list_code_definition_names",
                  "webFetch": "web_fetch", "fileDeleted": "delete_file"}


# Every request's environment details name the workspace folder. The session's cwd is the one
# named in most of them (a task resumed elsewhere keeps its majority); a session spread over
# folders with none in the majority keeps no cwd, rather than make the others "outside".
_CWD = compile_later(r"# Current Working Directory \((.+?)\) Files")


def _note_cwd(folders: dict[str, int], text: str) -> None:
    for folder in _CWD.findall(text):
        folders[folder] = folders.get(folder, 0) + 1


def _settle_cwd(b: TranscriptBuilder, folders: dict[str, int]) -> None:
    if folders:
        folder, count = max(folders.items(), key=lambda kv: kv[1])
        if count * 2 > sum(folders.values()):
            b.cwd = folder


def _decode_ui(b: TranscriptBuilder, records: list, folders: dict[str, int]) -> None:
    command: dict[str, Any] | None = None
    counter = 0
    started = False
    mcp_calls: list[str] = []

    def flush() -> None:
        nonlocal command
        if command is not None:
            b.tool_result(command["id"], "\n".join(command["output"]).strip("\n"), line=command["line"])
            command = None

    for position, rec in enumerate(records, start=1):
        if not isinstance(rec, dict):
            continue
        kind = rec.get("say") or rec.get("ask")
        text = rec.get("text") if isinstance(rec.get("text"), str) else ""
        ts = _iso(rec.get("ts"))
        if kind == "api_req_started" and "Current Working Directory" in text:
            _note_cwd(folders, text)
        if kind == "command_output":
            if command is not None:
                command["output"].append(text)
            continue
        if rec.get("partial"):
            b.skip("partial")
            continue
        model = rec.get("modelInfo")
        if isinstance(model, dict) and isinstance(model.get("modelId"), str):
            b.model = b.model or model["modelId"]
        if kind == "command":
            if command is not None and rec.get("type") == "ask" and command["text"] == text:
                continue  # the approval prompt of the command already shown
            flush()
            counter += 1
            command = {"id": f"cmd{counter}", "output": [], "line": position, "text": text}
            b.tool_call(command["id"], "execute_command", {"command": text}, line=position,
                        timestamp=ts)
            continue
        flush()
        if kind == "api_req_started":
            started = True
            b.seen_time(ts)
            b.skip("api_req_started")
        elif kind == "task" or (kind == "text" and not started and rec.get("type") == "say"):
            if text.strip():
                b.user(text, line=position, timestamp=ts)
        elif kind == "user_feedback":
            if text.strip():
                b.user(text, line=position, timestamp=ts)
        elif kind in ("text", "completion_result") and rec.get("type") == "say":
            if text.strip():
                b.assistant(text, line=position, timestamp=ts)
        elif kind in ("followup", "plan_mode_respond"):
            data = parse_input(text) if text.strip().startswith("{") else {}
            question = data.get("question") or data.get("response") or text
            if str(question).strip():
                b.assistant(str(question), line=position, timestamp=ts)
        elif kind == "tool":
            data = parse_input(text)
            tool = str(data.get("tool") or "unknown")
            name = _UI_TOOL_NAMES.get(tool, tool)
            tool_input: dict[str, Any] = {"path": data.get("path", "")}
            if tool == "editedExistingFile":
                tool_input["diff"] = data.get("diff") or data.get("content") or ""
            elif tool == "newFileCreated":
                tool_input["content"] = data.get("content") or ""
            elif tool in ("searchFiles",):
                tool_input["regex"] = data.get("regex", "")
            output = "" if tool in ("readFile", "editedExistingFile", "newFileCreated") else str(
                data.get("content") or "")
            b.tool(name, tool_input, output, line=position, timestamp=ts)
        elif kind == "use_mcp_server":
            data = parse_input(text)
            mcp_calls.append(f"mcp{position}")
            b.tool_call(mcp_calls[-1], f"mcp_{data.get('serverName', '')}_{data.get('toolName', '')}",
                        parse_input(data.get("arguments")), line=position, timestamp=ts)
        elif kind == "mcp_server_response":
            b.tool_result(mcp_calls.pop() if mcp_calls else None, text,
                          is_error=text.startswith("Error"), line=position)
        elif kind == "reasoning":
            b.skip("reasoning")
        elif kind in ("error", "error_retry", "api_req_failed", "mistake_limit_reached"):
            if text.strip():
                b.assistant(text, line=position, timestamp=ts, meta="error")
        else:
            b.skip(str(kind or "unknown"))
    flush()
