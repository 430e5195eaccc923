"""Claude Code TUI text (`/export` and terminal copies), `grammar/claude_tui.lark`.

Prompts (`> ` / `❯ `) are user turns; bullets (`⏺ ` / `● `) are assistant text or, when they
read `Name(args)`, tool calls whose `⎿` lines are the result. Captures that lost the bullet
glyph keep the call as a two-space-indented `Name(args)` line. Calls map to Claude Code's own
tool names and inputs: `Bash(cmd)` -> Bash {command}, `Read(path)` -> Read {file_path},
`Update(path)` -> Edit {file_path, old_string, new_string} rebuilt from the numbered diff
lines shown, `Write(path)` -> Write {file_path, content} with the lines shown. Collapsed
summaries (`Read 2 files (ctrl+o to expand)`) become calls with no input. Thinking and
status lines are skipped; the welcome box gives the working directory.
"""

from __future__ import annotations

import re
from typing import Any

from ..patterns import compile_later
from .builder import TranscriptBuilder
from .textcommon import dedent, parse_or_partial

HARNESS = "claude-code-text"

_CALL = compile_later(r"^([A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)?)\((.*)\)\s*$", re.DOTALL)
_COLLAPSED = compile_later(
    r"^(Read|Searched for|Listed|Wrote|Updated|Edited|Fetched|Ran)\b.*\((?:ctrl\+\w to expand)\)\s*$")
_COLLAPSED_TOOLS = {"Read": "Read", "Searched for": "Grep", "Listed": "LS", "Wrote": "Write",
                    "Updated": "Edit", "Edited": "Edit", "Fetched": "WebFetch", "Ran": "Bash"}
_NAMES = {"Bash": "Bash", "Read": "Read", "Update": "Edit", "Edit": "Edit", "Write": "Write",
          "MultiEdit": "MultiEdit", "Search": "Grep", "Grep": "Grep", "Glob": "Glob", "List": "LS",
          "LS": "LS", "Task": "Task", "Fetch": "WebFetch", "WebFetch": "WebFetch",
          "Web Search": "WebSearch", "WebSearch": "WebSearch", "Agent": "Task",
          "NotebookEdit": "NotebookEdit", "Skill": "Skill", "BashOutput": "BashOutput"}
_MAIN_KEY = {"Bash": "command", "Read": "file_path", "Edit": "file_path", "Write": "file_path",
             "MultiEdit": "file_path", "LS": "path", "Task": "description", "WebFetch": "url",
             "WebSearch": "query", "Glob": "pattern", "Grep": "pattern",
             "NotebookEdit": "notebook_path", "Skill": "skill"}
_KV = compile_later(r'(\w+):\s*"((?:[^"\\]|\\.)*)"')
_DIFF_LINE = compile_later(r"^\s*\d+(?: ([-+ ])(?:  (.*))?)?$")
_ERROR = compile_later(r"^(?:Error|User rejected|No \(tell Claude|Interrupted by user|"
                    r"<tool_use_error>)")
_SLASH = compile_later(r"/[\w:-]+(?: \S+)?")  # a bare slash command, not a request mentioning one
_CWD = compile_later(r"cwd: (\S+)")


def decode_text(source: str, text: str) -> TranscriptBuilder:
    b = TranscriptBuilder(source, HARNESS)
    blocks = parse_or_partial(b, "claude_tui", text)
    pending: dict[str, Any] | None = None

    def finish() -> None:
        nonlocal pending
        if pending is not None:
            _emit(b, pending)
            pending = None

    for block in blocks:
        if block.kind == "result":
            if pending is not None:
                first = block.header.split("⎿", 1)[1].strip() if "⎿" in block.header else ""
                chunk = first + ("\n" + dedent(block.body, 5) if block.body.strip() else "")
                pending["results"].append(chunk.rstrip())
            continue
        finish()
        if block.kind == "prompt":
            content = (block.header[2:].rstrip("\n") + "\n" + dedent(block.body, 2)).strip()
            if content:
                meta = "command" if _SLASH.fullmatch(content) else None
                b.user(content, line=block.line, column=block.column, meta=meta)
        elif block.kind in ("bullet", "call"):
            head = block.header.strip()
            if block.kind == "bullet":
                head = head[1:].strip()
            call = _call_of(head)
            if call is not None:
                pending = {"name": call[0], "args": call[1], "line": block.line,
                           "column": block.column, "results": []}
                continue
            content = "" if head == "(no content)" else head
            content = (content + "\n" + dedent(block.body, 2)).strip()
            if content:
                b.assistant(content, line=block.line, column=block.column)
        elif block.kind == "status":
            b.skip("thinking" if "Thinking" in block.header else "status")
        elif block.kind == "box":
            match = _CWD.search(block.header)
            if match and b.cwd is None:
                b.cwd = match.group(1)
            b.skip("banner")
        elif block.kind == "footer":
            b.skip("cost-summary")
            cost = re.search(r"Total cost:\s*(\S+)", block.header)
            if cost:
                b.extra["cost"] = cost.group(1)
    finish()
    return b


def _call_of(head: str) -> tuple[str, str | None] | None:
    """(display name, argument text) when a bullet line is a tool call."""
    if head == "Update Todos":
        return "Update Todos", None
    match = _CALL.match(head)
    if match and (match.group(1) in _NAMES or " " not in match.group(1)):
        return match.group(1), match.group(2)
    collapsed = _COLLAPSED.match(head)
    if collapsed:
        return collapsed.group(1), None
    return None


def _emit(b: TranscriptBuilder, call: dict[str, Any]) -> None:
    display, args = call["name"], call["args"]
    output = "\n".join(call["results"]).strip("\n")
    if output.strip() == "(No content)":
        output = ""  # what the screen shows for a call that printed nothing
    if display == "Update Todos":
        name, tool_input = "TodoWrite", {}
    elif args is None:
        name, tool_input = _COLLAPSED_TOOLS.get(display, display), {}
    else:
        name = _NAMES.get(display, display)
        tool_input = _input_of(name, args)
    if name == "Edit" and "file_path" in tool_input:
        old, new = _numbered_diff(output)
        if old or new:
            tool_input.update(old_string=old, new_string=new)
    elif name == "Write" and "file_path" in tool_input:
        lines = output.split("\n")[1:]  # after "Wrote N lines to <path>"
        lines = [l for l in lines if not re.match(r"^… \+\d+ lines?", l.strip())]
        tool_input["content"] = "\n".join(lines)
    is_error = bool(_ERROR.match(output)) or "\nUser rejected" in output
    b.tool(name, tool_input, output, is_error=is_error, line=call["line"], column=call["column"])


def _input_of(name: str, args: str) -> dict[str, Any]:
    pairs = _KV.findall(args)
    if pairs and args.lstrip().startswith(pairs[0][0]):
        return {key: value for key, value in pairs}
    key = _MAIN_KEY.get(name, "input")
    value = args.strip()
    if name == "Bash" and value.endswith("…"):
        value = value[:-1]  # the TUI cut a long command
    return {key: value} if value else {}


def _numbered_diff(output: str) -> tuple[str, str]:
    """old/new text from the numbered `N -  line` / `N +  line` diff an Update shows."""
    old: list[str] = []
    new: list[str] = []
    for line in output.split("\n")[1:]:
        match = _DIFF_LINE.match(line)
        if not match:
            continue  # wrapped continuation, `...` gap or a tip line
        marker, content = match.group(1) or " ", match.group(2) or ""
        if marker in " -":
            old.append(content)
        if marker in " +":
            new.append(content)
    return "\n".join(old), "\n".join(new)
