"""Aider `.aider.chat.history.md`, `grammar/aider.lark`.

Each `#### ` run is a user turn (slash commands such as `/add` are kept with meta="command";
`/code`, `/ask` and `/architect` carry real requests). The assistant's markdown between
console runs is assistant text, except SEARCH/REPLACE blocks, which become Edit calls
{file_path, old_string, new_string} (the file named on the line before the fence, or inside
it for the diff-fenced format). A console `> Applied edit to <path>` is the edit's result;
`> The LLM did not conform …` / `Failed to apply` mark it failed. `> Commit <hash> <msg>`
(Aider's automatic commit) is a tool turn with meta="auto-commit". Other console output
(banners, token counts, `Added x to the chat`) is counted, not turned into turns.

The other edit formats are fences that count as edits only once aider says it applied them:
a whole-file fence under a file name (`whole` format) becomes a Write of that file, a
```diff fence (`udiff` format) an Edit per file with its hunks. Commands are Bash calls:
`/run`, `/test` and `!` typed by the user (their console output, when logged, is the result;
`/test` adds its output to the chat only on a non-zero exit, so an added output means it
failed) and a command the model proposed that the user let run (`Running <cmd>`).

Each `# aider chat started at` begins a session (`TranscriptBuilder.session_start`): a
history holds every session run in that folder.
"""

from __future__ import annotations

import re
from typing import Any

from ..patterns import compile_later
from .. import diffs
from .builder import TranscriptBuilder
from .textcommon import parse_or_partial
from .textparse import Block

HARNESS = "aider"

_REQUEST_COMMANDS = ("/code", "/ask", "/architect", "/chat")
_SEARCH_MARK = compile_later(r"^[<]{5,}\s*SEARCH\s*$", re.MULTILINE)
_APPLIED = compile_later(r"^Applied edit to (.+?)\s*$")
_COMMIT = compile_later(r"^Commit ([0-9a-f]{7,}) (.+?)\s*$")
_FAILED = compile_later(r"did not conform to the edit format|Failed to apply|SearchReplaceNoExactMatch"
                     r"|doesn't match lines in")
_MODEL = compile_later(r"^(?:Main model|Model): (\S+)")
_RUNNING = compile_later(r"^Running (.+?)\s*$")
_RUN_COMMAND = compile_later(r"^(?:/run|/test|!)\s*(.+)$", re.DOTALL)
# Console lines that are aider's own prompts and notices around a command, not its output.
_RUN_NOTICE = compile_later(r"^(?:Add command output to the chat\?|Add \S+ tokens of command output"
                         r"|Added \d+ lines? of output to the chat|Run shell commands?\?"
                         r"|Running |Ok\.?$)")
_OUTPUT_ADDED = compile_later(r"^(?:Add(?:ed)? (?:command output|\d+ lines? of output|\S+ tokens of "
                           r"command output) to the chat)")
_UDIFF_FILE = compile_later(r"^\+\+\+ (?:b/)?(.+?)\s*$", re.MULTILINE)
_HUNK = compile_later(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


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
        # Fences that are edits only if aider then says it applied them: whole-file contents
        # (`whole` format) and unified diffs (`udiff`), by path, latest last.
        self.candidates: list[tuple[str, str, Any, int]] = []  # (path, kind, payload, line)
        self.run: tuple[str, str, int] | None = None  # a /run or /test awaiting its output
        self.created: set[str] = set()  # files aider asked to create ("Create new file? y")

    def prompt(self, block: Block) -> None:
        lines = [re.sub(r"^####[ \t]?", "", l).rstrip() for l in block.header.rstrip("\n").split("\n")]
        content = "\n".join(lines).strip()
        if not content:
            return
        meta = None
        if content.startswith(("/", "!")) and not content.startswith(_REQUEST_COMMANDS):
            meta = "command"
        self.b.user(content, line=block.line, column=block.column, meta=meta)
        run = _RUN_COMMAND.match(content)
        if run and run.group(1).strip():
            # The typed command runs at once; its result is in the console lines that follow.
            self.run = (content.split(None, 1)[0].lstrip("!") or "!", run.group(1).strip(),
                        block.line)

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
            if token.type in ("FENCE", "FENCE4"):
                self.candidate(text, "".join(self.text), token.line)
            if not self.text:
                self.text_line = token.line
            self.text.append(text)

    def candidate(self, fence: str, before: str, line: int) -> None:
        """Remember a fence that is an edit if aider later applies it to the file it names."""
        first, _, body = fence.partition("\n")
        body = body[:body.rstrip().rfind("\n") + 1] if body.rstrip().endswith("`") else body
        lang = first.strip("`").strip().lower()
        if lang == "diff" or (body.startswith(("--- ", "@@")) and "\n+++ " in body[:400]
                               or body.startswith("@@")):
            for path, hunks in _udiff_files(body, _path_before(before)):
                self.candidates.append((path, "udiff", hunks, line))
            return
        path = _path_before(before)
        if path:
            self.candidates.append((path, "whole", body, line))

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
        if self.run is not None:
            self.command_result(lines, line)
        running: tuple[str, int, list[str]] | None = None
        for offset, entry in enumerate(lines):
            if entry.startswith("Create new file?") and entry.rstrip().endswith(("y", "Yes")) \
                    and offset:
                self.created.add(lines[offset - 1])
            applied = _APPLIED.match(entry)
            if running is not None and (applied or _COMMIT.match(entry) or
                                        _RUN_NOTICE.match(entry) or entry.startswith("Run shell")):
                self.shell(*running)
                running = None
            if applied:
                self.applied(applied.group(1), entry, line + offset)
                continue
            start = _RUNNING.match(entry)
            if start:  # a command the model proposed and the user let run
                running = (start.group(1), line + offset, [])
                continue
            if running is not None:
                running[2].append(entry)
                continue
            commit = _COMMIT.match(entry)
            if commit:
                self.b.tool("git commit", {"message": commit.group(2), "hash": commit.group(1)},
                            entry, line=line + offset, meta="auto-commit")
        if running is not None:
            self.shell(*running)
        if failed:
            message = "\n".join(l for l in lines if l)
            for call_id, _ in self.open_edits:
                self.b.tool_result(call_id, message, is_error=True, line=line)
            self.open_edits.clear()
        self.b.skip("console")

    def applied(self, path: str, entry: str, line: int) -> None:
        """`Applied edit to <path>`: every block aimed at that file took effect."""
        answered = False
        for call_id, edit_path in list(self.open_edits):
            if edit_path == path or (not edit_path and not answered):
                self.b.tool_result(call_id, entry, line=line)
                self.open_edits.remove((call_id, edit_path))
                answered = True
        if answered:
            return
        for index in range(len(self.candidates) - 1, -1, -1):
            cand_path, kind, payload, cand_line = self.candidates[index]
            if cand_path != path:
                continue
            del self.candidates[index]
            if kind == "whole":
                # A whole-file rewrite of a file that existed: its old text is not in the log.
                self.b.tool("Write", {"file_path": path, "content": payload}, entry,
                            result={"type": "create" if path in self.created else "update"},
                            line=cand_line)
                self.created.discard(path)  # created once; later rewrites update it
            else:
                old, new, structured = _hunk_texts(payload)
                self.b.tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                            entry, result={"structuredPatch": structured}, line=cand_line)
            return

    def command_result(self, lines: list[str], line: int) -> None:
        """The console after a typed `/run` or `/test`: the command's output, when logged."""
        verb, command, command_line = self.run
        self.run = None
        output = "\n".join(l for l in lines if l and not _RUN_NOTICE.match(l)).strip("\n")
        added = any(_OUTPUT_ADDED.match(l) for l in lines)
        exit_code = None
        is_error = False
        if verb == "/test":
            # /test adds the output to the chat only when the command failed; the history
            # keeps no output of its own, so the result says what the log does show.
            exit_code = None if added else 0
            is_error = added
            if not output:
                output = ("[the output is not in the history; aider added it to the chat, "
                          "which /test does only when the command fails]" if added else
                          "[the output is not in the history; aider added none to the chat, "
                          "so the command exited 0]")
        self.b.tool("Bash", {"command": command}, output, exit_code=exit_code,
                    is_error=is_error, line=command_line)

    def shell(self, command: str, line: int, output: list[str]) -> None:
        text = "\n".join(l for l in output if not _RUN_NOTICE.match(l)).strip("\n")
        self.b.tool("Bash", {"command": command}, text, line=line)

    def close(self) -> None:
        if self.run is not None:
            self.command_result([], self.run[2])
        self.candidates.clear()
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


def _udiff_files(body: str, default_path: str | None) -> list[tuple[str, list[list[str]]]]:
    """The files of a unified diff and each file's hunks (lists of ` `/`-`/`+` lines)."""
    files: list[tuple[str, list[list[str]]]] = []
    path = default_path
    hunks: list[list[str]] = []
    for line in body.split("\n"):
        if line.startswith("--- "):
            if path and hunks:
                files.append((path, hunks))
            hunks = []
            continue
        plus = _UDIFF_FILE.match(line)
        if plus and line.startswith("+++ "):
            path = plus.group(1)
            continue
        if line.startswith("@@"):
            hunks.append([line])
            continue
        if hunks and line[:1] in (" ", "-", "+", ""):
            hunks[-1].append(line)
    if path and hunks:
        files.append((path, hunks))
    return files


def _hunk_texts(hunks: list[list[str]]) -> tuple[str, str, list[dict]]:
    """(old text, new text, Claude Code-style structuredPatch) of udiff hunks."""
    old_parts, new_parts, structured = [], [], []
    for hunk in hunks:
        header, body = hunk[0], hunk[1:]
        while body and body[-1] == "":
            body.pop()
        body = [l if l else " " for l in body]
        old = [l[1:] for l in body if l[0] in " -"]
        new = [l[1:] for l in body if l[0] in " +"]
        numbers = _HUNK.match(header)
        old_start = int(numbers.group(1)) if numbers else 1
        new_start = int(numbers.group(3)) if numbers else 1
        structured.append({"oldStart": old_start, "oldLines": len(old), "newStart": new_start,
                           "newLines": len(new), "lines": body})
        old_parts.append("\n".join(old))
        new_parts.append("\n".join(new))
    return "\n".join(old_parts), "\n".join(new_parts), structured
