"""Generic role-marker logs (`grammar/generic.lark`).

A turn starts at a role line: `User:`/`Human:`/`You:`, `Assistant:`/`AI:`/`Claude:`,
`System:`, `Tool:` (inline or as `## User`-style headings, bold `**User**`, optional leading
timestamps), hook logs' `# PROMPT - <ts>` / `# RESPONSE - <ts>`, and timestamped prompt
bullets (`- **08:04** — text`). In an assistant turn, a fenced ```bash block is a shell call
(its output is a following ```output/```text block when shown) and a ```diff block is an edit;
`Tool: <name> <args>` followed by output is one complete call (args may be a JSON object).
Renders of Claude Code sessions (cctrace `🔧 **Tool Use: X** (ID: …)` + JSON, answered by
`📊 **Tool Result:**`) pair calls and results in order.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..patterns import compile_later
from .builder import TranscriptBuilder
from .fields import json_text
from .textcommon import LINE_BODY, Blocks, diff_snippets, output_status, parse_or_partial
from .textparse import Block

_ROLE = compile_later(
    r"(User|USER|Human|You|Prompt|PROMPT|Assistant|ASSISTANT|AI|Claude|Cursor|Agent|Model|MODEL|"
    r"Gemini|Response|RESPONSE|System|SYSTEM|Tool|TOOL|Observation)")
_ROLES = {"user": "user", "human": "user", "you": "user", "prompt": "user",
          "assistant": "assistant", "ai": "assistant", "claude": "assistant",
          "cursor": "assistant", "agent": "assistant", "model": "assistant",
          "gemini": "assistant", "response": "assistant", "system": "system", "tool": "tool",
          "observation": "observation"}
_TIME = compile_later(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?Z?|\b\d\d:\d\d(?::\d\d)?\b")
_INLINE = compile_later(r"^(?:\*\*)?\w+(?:[:：]\*\*|\*\*[:：]|[:：])[ \t]+(\S.*)$")
_LEADING_STAMP = compile_later(r"^\[?\d{4}-\d\d-\d\d[ T][\d:.]+Z?\]?[ \t]+|^\[\d\d:\d\d(?::\d\d)?\][ \t]+")
_BULLET = compile_later(r"^- \*\*(\d\d?:\d\d)\*\* [—–-] (.*)$")
_STAMP_LINE = compile_later(r"^\*\*\[(\d{4}-\d\d-\d\d[ T][\d:.]+Z?)\]\*\*[ \t]*$")
_CCTRACE_USE = compile_later(r"^🔧 \*\*Tool Use: ([^*]+)\*\*(?: \(ID: ([^)]+)\))?[ \t]*$", re.MULTILINE)
_CCTRACE_RESULT = compile_later(r"^📊 \*\*Tool Result:\*\*[ \t]*$", re.MULTILINE)
_SHELL_FENCES = {"bash", "sh", "shell", "console", "zsh", "terminal"}
_OUTPUT_FENCES = {"output", "stdout", "text", "log"}
_PATH_TOOLS = {"read": "file_path", "write": "file_path", "edit": "file_path", "ls": "path",
               "glob": "pattern", "grep": "pattern", "webfetch": "url", "websearch": "query",
               "task": "description"}
_SHELL_TOOLS = {"bash", "shell", "sh", "terminal", "run", "exec", "command"}


def harness_of(text: str) -> str:
    head = text[:65536]
    if re.search(r"^_Exported on .* from Cursor", head, re.MULTILINE):
        return "cursor-export"
    if re.search(r"^## (?:USER|MODEL) ", head, re.MULTILINE):
        return "gemini-share-md"
    if "# Claude Code Session Export" in head[:2000] or re.search(
            r"^\*\*(?:You|Claude):\*\* ", head, re.MULTILINE):
        return "claude-derived-md"
    return "plain-text"


def decode_text(source: str, text: str) -> TranscriptBuilder:
    from .textparse import generic_blocks

    b = TranscriptBuilder(source, harness_of(text))
    # Turns are made as they are read; None when the parser must say what is wrong (and only
    # then is lark imported).
    blocks = generic_blocks(text)
    if blocks is None:
        blocks = _parsed(b, text)
        if blocks is None:
            return b
    # The substring test spares a line-anchored search of the whole text (most logs have none).
    cctrace = "🔧 **Tool Use: " in text and _CCTRACE_USE.search(text) is not None
    Decoder(b, fenced_tools=b.harness == "plain-text" and not cctrace).run(blocks)
    return b


def _parsed(b: TranscriptBuilder, text: str) -> list[Block] | None:
    """Blocks from Lark, with the problem it reports set on `b`; None when the text has no
    turn at all (then `b` is marked as not a transcript)."""
    from lark.exceptions import UnexpectedEOF, UnexpectedInput, UnexpectedToken

    from .textparse import parse, problem_from

    try:
        return parse("generic", text)
    except UnexpectedInput as exc:
        if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken)
                                               and exc.token.type == "$END"):
            # No role line anywhere: the text fits no dialect. Say where a turn was expected.
            try:
                parse("generic", text, "strict")
            except UnexpectedInput as strict_exc:
                b.problem = problem_from(
                    strict_exc, text,
                    "no turn boundaries found: the text fits no known transcript format "
                    "(expected a role line such as 'User:' or '## Assistant')")
            b.not_a_transcript = True
            return None
        return parse_or_partial(b, "generic", text,
                                message="unreadable text (control characters): parsing stopped here")


class Decoder:
    def __init__(self, b: TranscriptBuilder, fenced_tools: bool = True) -> None:
        self.b = b
        self.fenced_tools = fenced_tools  # fenced shell/diff blocks are calls (plain logs only)
        self.open_ids: list[str] = []  # cctrace calls waiting for their results, in order
        self.next_stamp: str | None = None

    def run(self, blocks: list[Block]) -> None:
        for block in blocks:
            if block.kind != "turn":
                continue
            role, first, stamp = self.header(block.header)
            body = block.body
            body, carry = self.trim(body)
            text = first + "\n" + body  # position p is on line block.line + text.count("\n", 0, p)
            stamp = stamp or self.next_stamp
            self.next_stamp = carry
            line = block.line
            if role == "user":
                if "📊" in text and _CCTRACE_RESULT.search(text):
                    self.results(text, line, stamp)
                elif text.strip():
                    self.b.user(text.strip("\n"), line=line, column=block.column, timestamp=stamp)
            elif role == "system":
                self.b.user(text.strip("\n"), line=line, column=block.column, timestamp=stamp,
                            meta="system")
            elif role == "tool":
                self.tool(text.strip("\n"), line, stamp)
            elif role == "observation":
                self.b.tool_result(self.open_ids.pop(0) if self.open_ids else None,
                                   text.strip("\n"), line=line, timestamp=stamp)
            else:
                self.assistant(block, text, line, stamp)

    # -- headers and bodies ----------------------------------------------------------------

    def header(self, header: str) -> tuple[str, str, str | None]:
        """(role, text on the header line, timestamp) of a header line."""
        # Header lines repeat (`## User`, `**Assistant:**`): each short one is read once.
        return _cached_header(header) if len(header) <= 256 else _read_header(header)

    def trim(self, body: str) -> tuple[str, str | None]:
        """Drop trailing separators (`---`) and a render's timestamp line for the next turn.

        Walks back from the end line by line, so a long turn is not split into lines."""
        text = body.rstrip("\n")
        end = len(text)
        carry = None
        while True:
            start = text.rfind("\n", 0, end) + 1
            last = text[start:end].strip()
            stamp = _STAMP_LINE.match(last) if last and last != "---" else None
            if last and last != "---" and stamp is None:
                return text[:end], carry
            if stamp and carry is None:
                carry = stamp.group(1)
            if start == 0:
                return "", carry
            end = start - 1

    # -- assistant turns -------------------------------------------------------------------

    def assistant(self, block: Block, text: str, line: int, stamp: str | None) -> None:
        """Assistant text, with fenced shell blocks, diffs and rendered tool uses as tools."""
        pending: list[str] = []
        cursor = 0
        lines = _Lines(text)
        # No fence, rendered tool use or thinking block can start without these (most turns
        # of a plain log have none): a substring test spares the regex search.
        matches = list(_FENCE_OR_USE.finditer(text)) if (
            "```" in text or "🔧" in text or "<details>" in text
            or ("\n+" in text and any(verb in text for verb in _RENDERED_VERBS))) else []
        skip_until = -1
        for index, match in enumerate(matches):
            if match.start() < skip_until:
                continue
            info = (match.group("info") or "").strip().lower()
            kind = "use" if match.group("use") else "rendered" if match.group("rendered") \
                else info.split()[0] if info else ""
            fenced = self.fenced_tools and (kind in _SHELL_FENCES or kind in ("diff", "patch"))
            if kind in ("use", "rendered") or fenced or match.group("details"):
                pending.append(text[cursor:match.start()])
                self.flush(pending, line + lines.at(_first_solid(text, cursor)), stamp)
                cursor = match.end()
            else:
                continue
            here = line + lines.at(match.start())
            if match.group("details"):
                self.b.skip("thinking")
            elif kind == "rendered":
                # The file and the size of the change are shown, its lines are not: a change
                # of that file whose diff is unknown.
                summary = f"{match.group('rendered')} {match.group('file')}: +{match.group('plus')}" \
                          f" -{match.group('minus') or 0}"
                self.b.tool("Edit", {"file_path": match.group("file")}, summary, line=here,
                            timestamp=stamp)
            elif kind == "use":
                name = match.group("use").strip()
                call_id = match.group("id") or f"cctrace-{here}"
                args: Any = {}
                nxt = matches[index + 1] if index + 1 < len(matches) else None
                if nxt is not None and nxt.group("info") is not None and \
                        not text[match.end():nxt.start()].strip():
                    try:
                        args = json_text(nxt.group("body"))
                    except ValueError:
                        args = {"input": nxt.group("body")}
                    cursor = skip_until = nxt.end()
                self.b.tool_call(call_id, name, args, line=here, timestamp=stamp)
                self.open_ids.append(call_id)
            elif kind in ("diff", "patch"):
                for path, old, new in diff_snippets(match.group("body")):
                    tool_input = {"file_path": path or "", "old_string": old, "new_string": new}
                    self.b.tool("Edit", tool_input, "", line=here, timestamp=stamp)
            else:
                output = ""
                nxt = matches[index + 1] if index + 1 < len(matches) else None
                if nxt is not None and (nxt.group("info") or "").strip().lower() in _OUTPUT_FENCES \
                        and not text[match.end():nxt.start()].strip():
                    output = nxt.group("body").rstrip("\n")
                    cursor = skip_until = nxt.end()
                command = match.group("body").strip("\n")
                self.b.tool("Bash", {"command": command}, output, line=here, timestamp=stamp)
        pending.append(text[cursor:])
        self.flush(pending, line + lines.at(_first_solid(text, cursor)), stamp)

    def flush(self, pending: list[str], line: int, stamp: str | None) -> None:
        text = "".join(pending).strip("\n")
        pending.clear()
        if text.strip():
            self.b.assistant(text, line=line, timestamp=stamp)

    # -- tool turns ------------------------------------------------------------------------

    def tool(self, text: str, line: int, stamp: str | None) -> None:
        """`Tool: <name> <args>` then its output."""
        first, _, output = text.partition("\n")
        name, _, args = first.strip().partition(" ")
        tool_input = tool_input_of(name, args.strip())
        is_error, exit_code = output_status(name, output)
        self.b.tool(name or "unknown", tool_input, output, is_error=is_error, exit_code=exit_code,
                    line=line, timestamp=stamp)

    def results(self, text: str, line: int, stamp: str | None) -> None:
        lines = _Lines(text)
        markers = list(_CCTRACE_RESULT.finditer(text))
        for index, match in enumerate(markers):
            # A result's fence ends before the next result: so no two results scan the same
            # text (an unclosed fence would be scanned to the end once per result).
            until = markers[index + 1].start() if index + 1 < len(markers) else len(text)
            fence = FENCE_AFTER.match(text, match.end(), until)
            output = fence.group(2) if fence else ""
            call_id = self.open_ids.pop(0) if self.open_ids else None
            here = line + lines.at(match.start())
            self.b.tool_result(call_id, output.rstrip("\n"), line=here, timestamp=stamp)


def _read_header(header: str) -> tuple[str, str, str | None]:
    line = header.rstrip("\n")
    bullet = _BULLET.match(line)
    if bullet:
        return "user", bullet.group(2).strip(), None
    stamp_match = _TIME.search(line)
    stamp = stamp_match.group(0) if stamp_match and len(stamp_match.group(0)) > 8 else None
    lead = _LEADING_STAMP.match(line)
    stripped = line[lead.end():] if lead else line
    role_match = _ROLE.search(stripped)
    role = _ROLES.get(role_match.group(1).lower(), "user") if role_match else "user"
    inline = _INLINE.match(stripped)
    first = inline.group(1).strip() if inline and not stripped.lstrip().startswith("#") else ""
    return role, first, stamp


_cached_header = lru_cache(maxsize=4096)(_read_header)


_RENDERED_VERBS = ("Edited\n", "Created\n", "Updated\n", "Wrote\n")
_FENCE_OR_USE = Blocks([
    (rf"^```(?P<info>[^`\n]*)\n(?P<body>{LINE_BODY})", r"^```[ \t]*$"),
    (r"^🔧 \*\*Tool Use: (?P<use>[^*]+)\*\*(?: \(ID: (?P<id>[^)]+)\))?[ \t]*$", None),
    # An IDE chat's rendering of an edit, pasted as text: the verb, the file, the lines added
    # and removed, each on its own line ("Edited / data.go / +8 / -0").
    (r"^(?P<rendered>Edited|Created|Updated|Wrote)[ \t]*\n(?P<file>[^\s`*]{1,300})[ \t]*\n"
     r"\+(?P<plus>\d+)[ \t]*(?:\n-(?P<minus>\d+)[ \t]*)?$", None),
    (rf"^<details>\s*<summary>💭(?P<details>{LINE_BODY})", r"^</details>[ \t]*$"),
], re.DOTALL | re.MULTILINE)
FENCE_AFTER = compile_later(rf"\s*^```([^\n]*)\n({LINE_BODY})^```[ \t]*$", re.DOTALL | re.MULTILINE)


def _first_solid(text: str, cursor: int) -> int:
    """Offset of the first character after the blank lines that follow `cursor`."""
    end = cursor
    while end < len(text) and text[end] == "\n":
        end += 1
    return min(end, len(text))


class _Lines:
    """Line offsets of positions visited in increasing order, counted once (never quadratic)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.count = 0

    def at(self, pos: int) -> int:
        if pos < self.pos:  # a step back (rare): count afresh
            self.pos, self.count = 0, 0
        self.count += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.count


def tool_input_of(name: str, args: str) -> dict[str, Any]:
    """The input of a `Tool: <name> <args>` line: a JSON object, or the tool's main argument."""
    if args.startswith("{"):
        try:
            value = json_text(args)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    if not args:
        return {}
    key = name.lower()
    if key in _SHELL_TOOLS:
        return {"command": args}
    if key in _PATH_TOOLS:
        return {_PATH_TOOLS[key]: args}
    return {"input": args}
