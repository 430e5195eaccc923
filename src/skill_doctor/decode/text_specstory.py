"""SpecStory markdown (and the Cursor/Claude Code sessions it saves), `grammar/specstory.lark`.

`_**User**_` sections are user turns; `_**Assistant**_` / `_**Agent (model …)**_` sections are
assistant text split around tool activity:
- v2 `<tool-use data-tool-name="…">` blocks keep the harness's tool names, with inputs read
  from the summary (`Read file: p`, `Edit file: p`, `Run command: c`) and the fences inside
  (a shell command and its output; ```diff chunks of an edit, turned into old/new text);
- old-style `Read file: p` paragraphs, `<details><summary>Searched codebase "q"` / `Grep search
  for "q"` / `Listed directory d` blocks, ```diff fences (edits whose file is not named), and
  terminal commands: a piece holding a ```bash fence and the plain fence of its output.
`<details>` blocks that hold reasoning are skipped.
"""

from __future__ import annotations

import re
from typing import Any

from ..patterns import compile_later
from .builder import TranscriptBuilder
from .textcommon import FENCE, Blocks, diff_snippets, parse_or_partial
from .textparse import Block

HARNESS = "specstory"

_TOOL_NAME = compile_later(r'data-tool-name="([^"]+)"')
_SUMMARY = Blocks([(r"<summary>(.*?)", r"</summary>")], re.DOTALL)
# What a generic tool-use block's output keeps out: markup and its summary.
_MARKUP = Blocks([(r"</?details>", None), (r"</tool-use>", None), (r"<summary>.*?", r"</summary>")],
                 re.DOTALL)
_TOOL_USE_SUMMARY = compile_later(r"Tool use: \*\*([^*]+)\*\*\s*(?:•\s*(.*))?", re.DOTALL)
_READ_FILE = compile_later(r"^Read file: (.+?)\s*$")
_STAMP = compile_later(r"\((\d{4}-\d\d-\d\d[ T]\d\d:\d\dZ?)\)")
_MODEL = compile_later(r"\(model ([^,)]+)")
_SESSION = compile_later(r"<!-- \w+ Session ([0-9a-f-]{36})")
_QUOTED = compile_later(r'"([^"]*)"')
_SHELL_FENCES = {"bash", "sh", "shell", "zsh", "console", "powershell", "pwsh", "cmd", "bat"}


def decode_text(source: str, text: str) -> TranscriptBuilder:
    b = TranscriptBuilder(source, HARNESS)
    session = _SESSION.search(text[:2000])
    if session:
        b.session_id = session.group(1)
    blocks = parse_or_partial(b, "specstory", text)
    # A file can hold several sessions, each opened by its own id comment.
    ids = []
    line, counted = 1, 0  # lines counted on from the previous id, not from the start again
    for m in _SESSION.finditer(text):
        line += text.count("\n", counted, m.start())
        counted = m.start()
        ids.append((line, m.group(1)))
    current = None
    for block in blocks:
        if block.kind != "section":
            continue
        while ids and ids[0][0] <= block.line:
            _, sid = ids.pop(0)
            if sid != current:
                current = sid
                b.session_start(sid)
        stamp_match = _STAMP.search(block.header)
        stamp = stamp_match.group(1) if stamp_match else None
        if block.header.startswith("_**User"):
            content = "".join(str(p) for p in block.parts if p.type != "SEP").strip("\n")
            if content.strip():
                b.user(content, line=block.line, column=block.column, timestamp=stamp)
        else:
            model = _MODEL.search(block.header)
            if model and b.model is None and model.group(1) != "default":
                b.model = model.group(1)
            _Agent(b, stamp).run(block)
    return b


class _Agent:
    def __init__(self, b: TranscriptBuilder, stamp: str | None) -> None:
        self.b = b
        self.stamp = stamp
        self.text: list[str] = []
        self.line = 0

    def run(self, block: Block) -> None:
        self.line = block.line
        chunk: list[Any] = []
        for part in block.parts:
            if part.type == "SEP":
                self.chunk(chunk)
                chunk = []
            elif part.type == "TOOLUSE":
                self.chunk(chunk)
                chunk = []
                self.flush()
                self.tool_use(str(part), part.line)
            elif part.type == "DETAILS":
                self.chunk(chunk)
                chunk = []
                self.details(str(part), part.line)
            else:
                chunk.append(part)
        self.chunk(chunk)
        self.flush()

    def chunk(self, parts: list[Any]) -> None:
        """One `---`-separated piece of assistant text, or an old-style tool line/diff."""
        if not parts:
            return
        text = "".join(str(p) for p in parts)
        stripped = text.strip()
        read = _READ_FILE.match(stripped) if "\n" not in stripped else None
        if read:
            self.flush()
            self.b.tool("read_file", {"target_file": read.group(1)}, "", line=parts[0].line,
                        timestamp=self.stamp)
            return
        if stripped == "Cancelled":
            self.b.skip("cancelled")
            return
        solid = [p for p in parts if str(p).strip()]
        if len(solid) == 1 and solid[0].type == "FENCE" and stripped.startswith("```diff"):
            self.flush()
            for path, old, new in diff_snippets(FENCE.search(stripped + "\n").group(2)):
                self.b.tool("edit_file", {"target_file": path or "", "old_string": old,
                                          "new_string": new}, "", line=parts[0].line,
                            timestamp=self.stamp)
            return
        if 1 <= len(solid) <= 2 and all(p.type == "FENCE" for p in solid):
            fences = [FENCE.search(str(p) + "\n") for p in solid]
            command, output = fences[0], fences[1] if len(fences) == 2 else None
            if command and command.group(1).strip().lower() in _SHELL_FENCES and (
                    len(fences) == 1 or (output and not output.group(1).strip())):
                # Old exports show a terminal command as a piece of its own: the command's
                # fence and, right after it, the output's (none when nothing was captured).
                self.flush()
                self.b.tool("run_terminal_cmd", {"command": command.group(2).strip("\n")},
                            output.group(2).strip("\n") if output else "",
                            line=parts[0].line, timestamp=self.stamp)
                return
        if not self.text:
            self.line = parts[0].line
        self.text.append(text)

    def flush(self) -> None:
        content = "\n".join(t.strip("\n") for t in self.text if t.strip()).strip("\n")
        self.text.clear()
        if content.strip():
            self.b.assistant(content, line=self.line, timestamp=self.stamp)

    def tool_use(self, text: str, line: int) -> None:
        name_match = _TOOL_NAME.search(text)
        name = name_match.group(1) if name_match else "unknown"
        summary_match = _SUMMARY.search(text)
        summary = " ".join(summary_match.group(1).split()) if summary_match else ""
        described = _TOOL_USE_SUMMARY.search(summary)
        description = (described.group(2) or "").strip() if described else summary
        fences = [(m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)]
        tool_input: dict[str, Any] = {}
        output = ""
        after_summary = text[summary_match.end():] if summary_match else text
        path = re.sub(r"^(?:Read|Edit) file:\s*", "", description) if re.match(
            r"^(?:Read|Edit) file:", description) else ""
        if name == "read_file":
            tool_input = {"target_file": path}
        elif name == "run_terminal_cmd":
            command = fences[0][1] if fences else re.sub(r"^Run command:\s*", "", description)
            tool_input = {"command": command.strip("\n")}
            output = fences[1][1] if len(fences) > 1 else ""
        elif name in ("search_replace", "edit_file"):
            old, new = [], []
            for info, body in fences:
                if info == "diff":
                    for _, o, n in diff_snippets(body):
                        old.append(o)
                        new.append(n)
            tool_input = {"file_path": path, "old_string": "\n".join(old),
                          "new_string": "\n".join(new)}
        elif name == "write":
            added = []
            for info, body in fences:
                if info == "diff":
                    added.extend(l[2:] if l.startswith("+ ") else l[1:]
                                 for l in body.split("\n") if l.startswith("+"))
            tool_input = {"file_path": path, "content": "\n".join(added)}
        else:
            tool_input = {"description": description} if description else {}
            output = _MARKUP.sub("", after_summary).strip()
        self.b.tool(name, tool_input, output, line=line, timestamp=self.stamp)

    def details(self, text: str, line: int) -> None:
        summary_match = _SUMMARY.search(text)
        summary = " ".join(summary_match.group(1).split()) if summary_match else ""
        quoted = _QUOTED.search(summary)
        body = text[summary_match.end():] if summary_match else ""
        body = re.sub(r"</details>\s*$", "", body.strip()).strip()
        if summary.startswith("Searched codebase"):
            name, tool_input = "codebase_search", {"query": quoted.group(1) if quoted else ""}
        elif summary.startswith("Grep search"):
            name, tool_input = "grep_search", {"query": quoted.group(1) if quoted else ""}
        elif summary.startswith("Listed"):
            target = re.sub(r"^Listed (?:directory|current directory)\s*", "", summary)
            name, tool_input = "list_dir", {"path": target.split(" • ")[0].strip() or "."}
        elif summary.startswith("Searched web"):
            name, tool_input = "web_search", {"query": quoted.group(1) if quoted else ""}
        else:
            self.b.skip("details")  # reasoning and other collapsed notes
            return
        self.flush()
        self.b.tool(name, tool_input, body, line=line, timestamp=self.stamp)
