"""Aider `.aider.chat.history.md`, `grammar/aider.lark`.

Each `#### ` run is a user turn (slash commands such as `/add` are kept with meta="command";
`/code`, `/ask` and `/architect` carry real requests). The assistant's markdown between
console runs is assistant text, except SEARCH/REPLACE blocks, which become Edit calls
{file_path, old_string, new_string} (the file named on the line before the fence, or inside
it for the diff-fenced format). A console `> Applied edit to <path>` is the edit's result;
`> The LLM did not conform …` / `Failed to apply` mark it failed. `> Commit <hash> <msg>`
(Aider's automatic commit) is a tool turn with meta="auto-commit". Other console output
(banners, token counts, `Added x to the chat`) is counted, not turned into turns.
"""

from __future__ import annotations

import re
from typing import Any

from .. import diffs
from .builder import TranscriptBuilder
from .textcommon import parse_or_partial
from .textparse import Block

HARNESS = "aider"

_REQUEST_COMMANDS = ("/code", "/ask", "/architect", "/chat")
_SEARCH_MARK = re.compile(r"^[<]{5,}\s*SEARCH\s*$", re.MULTILINE)
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,}) (.+?)\s*$")
_FAILED = re.compile(r"did not conform to the edit format|Failed to apply|SearchReplaceNoExactMatch"
                     r"|doesn't match lines in")
_MODEL = re.compile(r"^(?:Main model|Model): (\S+)")


def decode_text(source: str, text: str) -> TranscriptBuilder:
    b = TranscriptBuilder(source, HARNESS)
    blocks = parse_or_partial(b, "aider", text)
    state = _State(b)
    for block in blocks:
        if block.kind == "session":
            state.close()
            stamp = block.header.split("started at", 1)[1].strip().replace(" ", "T")
            b.seen_time(stamp)
            b.session_start(started_at=stamp)  # histories append every session to one file
            for part in block.parts:
                if part.type == "CONSOLE":
                    for line in _console_lines(str(part)):
                        match = _MODEL.match(line)
                        if match and b.model is None:
                            b.model = match.group(1)
                b.skip("startup")
        elif block.kind == "exchange":
            state.close()
            state.prompt(block)
            for part in block.parts:
                state.part(part)
    state.close()
    return b


def _console_lines(text: str) -> list[str]:
    return [line[1:].strip() for line in text.rstrip("\n").split("\n")]


class _State:
    def __init__(self, b: TranscriptBuilder) -> None:
        self.b = b
        self.text: list[str] = []
        self.text_line = 0
        self.open_edits: list[tuple[str, str]] = []  # (call id, path) awaiting a console verdict
        self.counter = 0

    def prompt(self, block: Block) -> None:
        lines = [re.sub(r"^####[ \t]?", "", l).rstrip() for l in block.header.rstrip("\n").split("\n")]
        content = "\n".join(lines).strip()
        if not content:
            return
        meta = None
        if content.startswith("/") and not content.startswith(_REQUEST_COMMANDS):
            meta = "command"
        self.b.user(content, line=block.line, column=block.column, meta=meta)

    def part(self, token: Any) -> None:
        text = str(token)
        if token.type == "CONSOLE":
            self.flush()
            self.console(text, token.line)
        elif _SEARCH_MARK.search(text):
            before = "".join(self.text)
            self.text.clear()
            self.edits(text, before, token.line)
        else:
            if not self.text:
                self.text_line = token.line
            self.text.append(text)

    def flush(self) -> None:
        content = "".join(self.text).strip("\n")
        self.text.clear()
        if content.strip():
            self.b.assistant(content, line=self.text_line)

    def edits(self, text: str, before: str, line: int) -> None:
        """Edit calls for the SEARCH/REPLACE blocks in one fence (or loose text)."""
        path = _path_before(before)
        body = text
        if text.startswith("```"):
            first, _, body = text.partition("\n")
            inner_first = body.split("\n", 1)[0].strip()
            if inner_first and not inner_first.startswith("<<<<<<<"):
                path = inner_first  # diff-fenced: the file name is inside the fence
        if path and before.strip():
            lead = before.rstrip("\n")
            if lead.split("\n")[-1].strip() == path:
                lead = "\n".join(lead.split("\n")[:-1])
            if lead.strip():
                self.b.assistant(lead.strip("\n"), line=self.text_line)
        elif before.strip():
            self.b.assistant(before.strip("\n"), line=self.text_line)
        for old, new in diffs.parse_search_replace(body):
            self.counter += 1
            call_id = f"aider-edit-{self.counter}"
            self.b.tool_call(call_id, "Edit", {"file_path": path or "", "old_string": old,
                                               "new_string": new}, line=line)
            self.open_edits.append((call_id, path or ""))

    def console(self, text: str, line: int) -> None:
        lines = _console_lines(text)
        failed = any(_FAILED.search(l) for l in lines)
        for offset, entry in enumerate(lines):
            applied = _APPLIED.match(entry)
            if applied:
                path = applied.group(1)
                for index, (call_id, edit_path) in enumerate(self.open_edits):
                    if edit_path == path or not edit_path:
                        self.b.tool_result(call_id, entry, line=line + offset)
                        del self.open_edits[index]
                        break
                continue
            commit = _COMMIT.match(entry)
            if commit:
                self.b.tool("git commit", {"message": commit.group(2), "hash": commit.group(1)},
                            entry, line=line + offset, meta="auto-commit")
        if failed:
            message = "\n".join(l for l in lines if l)
            for call_id, _ in self.open_edits:
                self.b.tool_result(call_id, message, is_error=True, line=line)
            self.open_edits.clear()
        self.b.skip("console")

    def close(self) -> None:
        self.flush()
        if self.open_edits:
            self.b.note("edit blocks with no 'Applied edit' confirmation")
        for call_id, _ in self.open_edits:
            self.b.tool_result(call_id, "")
        self.open_edits.clear()


def _path_before(text: str) -> str | None:
    """The file name on the last non-empty line before a fence (Aider's diff format)."""
    for line in reversed(text.rstrip("\n").split("\n")):
        candidate = line.strip().strip("`*")
        if not candidate:
            continue
        if re.fullmatch(r"[\w./\\~@+-]+", candidate) and ("." in candidate or "/" in candidate):
            return candidate
        return None
    return None
