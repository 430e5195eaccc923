"""facts.changes: the files a session changed, as the project sees them.

Paths made project-relative, the kind of file (documentation, tests, prose), each edit's
record with its line counts (a whole-file write over a file the session had read measured
against what that read showed), the files the session made new, each edited Python file's
final text and syntax tree, and what the session has written so far that later commands can
run (`WrittenNames`).
"""

from __future__ import annotations

import ast
import posixpath
import re
import warnings
from typing import Mapping

from ..patterns import compile_later
from ..diffs import edit_counts
from ..text import make_diff
from ..model import FileEdit, Turn
from .reads import numbered_text
from .record import EditRecord


# Files of prose only (docs, text, licence): no code runs from them, no check is owed them.
PROSE_ONLY = compile_later(r"\.(md|mdx|markdown|txt|rst|adoc)$|(^|/)(LICENSE|README|CHANGELOG|NOTICE)$", re.I)

# Tests, by their folder or their name (`tests/`, `test_x.py`, `x_test.go`, `x.spec.ts`).
TEST_FILE = compile_later(r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]+$|_test\.\w+$|\.(test|spec)\.\w+$")


# Files that document or configure rather than run: no test is expected after editing them.
_DOC_SUFFIXES = (".md", ".mdx", ".txt", ".rst", ".adoc", ".json", ".yaml", ".yml", ".toml",
                 ".ini", ".cfg", ".csv", ".env", ".gitignore", ".lock", ".svg", ".html", ".css")


def relative_path(path: str, cwd: str | None) -> str:
    """A path as the project sees it: relative to the session's cwd when under it, POSIX."""
    # Paths taken from shell commands can keep their quotes (`cat "/etc/config/dhcp"`).
    p = _posix(path.strip().strip("\"'`"))
    if cwd:
        root = _posix(cwd).rstrip("/")
        if p == root:
            return "."
        if p.startswith(root + "/"):
            p = p[len(root) + 1:]
    if p.startswith("./"):
        p = p[2:]
    return posixpath.normpath(p) if p else p


def _posix(path: str) -> str:
    """Windows paths in POSIX form; `C:\\x` and Git Bash's `/c/x` become the same `/c/x`."""
    p = path.replace("\\", "/")
    match = re.match(r"^([A-Za-z]):/", p)
    if match:
        p = f"/{match.group(1).lower()}/{p[3:]}"
    return p


def is_doc_file(path: str) -> bool:
    """Documentation or configuration: prose, data and settings files (dotfiles, `config`,
    files under `.config/`), which need no test run after an edit."""
    name = path.lower()
    base = posixpath.basename(name)
    return name.endswith(_DOC_SUFFIXES) or base in ("license", "readme", "changelog", "notice",
                                                    "config") \
        or name.endswith((".conf", ".config", "rc")) and "." in base \
        or "/.config/" in "/" + name or base.startswith(".") and "." not in base[1:]


def edited_unnamed(reads: list[tuple[int, str]], request_text: str) -> str | None:
    """The file an edit that names none most likely changed: of the files read since the
    request, one the request names, else the last one read."""
    if not reads:
        return None
    looked_at: set[str] = set()  # a file read again and again is tested once
    for _, path in reversed(reads):
        if path in looked_at:
            continue
        looked_at.add(path)
        if path in request_text or posixpath.basename(path) in request_text:
            return path
    return reads[-1][1]


def edit_record(turn: int, edit: FileEdit, cwd: str | None, read: set[str],
                 read_texts: dict[str, Turn] | None = None) -> EditRecord:
    """An edit as the facts keep it: its project-relative path and line counts. A file written
    whole over one the session had read (`read`: the paths read so far) was rewritten, not
    created, whatever the harness says (Cline's write_to_file logs no original, so every write
    looks new); its original, when the harness logged none, is the text the last full read of
    it showed (`read_texts`: the last full read of each file), so the write is measured as the
    change it made."""
    path = relative_path(edit.path, cwd)
    if edit.created and path in read:
        edit = edit.replace(created=False)
    if read_texts is not None:
        last_read = read_texts.pop(path, None)
        original = numbered_text(last_read) if last_read is not None and edit.whole_file and \
            edit.before is None and not edit.created and edit.new is not None else None
        if original is not None:
            # A numbered read does not show whether the file ended with a newline: take it to
            # end as the new text does, so the diff shows no change the log cannot show.
            if edit.new.endswith("\n"):
                original += "\n"
            edit = edit.replace(before=original, patch=make_diff(edit.path, original, edit.new))
    added, removed = edit_counts(edit)
    return EditRecord(turn, edit, path, added, removed)


class WrittenNames:
    """What the session has made so far that later commands can run: the base names of the
    files it wrote, the module names the edited code can be imported by (both brought up to
    date from the growing edit lists only when asked, once per run of a program, not once
    per edit), the programs it compiled, and the programs it started in the background."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.built: set[str] = set()  # programs the session compiled (`gcc -o NAME`)
        # Programs started in the background, by the id the harness gave them; None: the last.
        self.launched: dict[str | None, str] = {}
        # A check typed into a tmux pane (`tmux send-keys 'pytest' C-m`) and its kind, until a
        # capture of the pane shows how it ended.
        self.typed: tuple[str, str] | None = None
        self._edits = self._writes = 0
        self._modules: set[str] = set()
        self._module_edits = 0
        self._read_paths: set[str] = set()
        self._reads = 0
        # The latest full read of each file (Claude Code's Read: "     1→line"), dropped when
        # the file is written: the original of a whole-file write the harness logged without one.
        self.read_texts: dict[str, Turn] = {}
        self._paths: set[str] = set()

    def _catch_up(self, edits: list, shell_writes: list) -> None:
        """Bring the written paths and their base names up to date from the growing lists."""
        new = [e.path for e in edits[self._edits:]] + [p for _, p in shell_writes[self._writes:]]
        for path in new:
            self._paths.add(path)
            self.names.add(posixpath.basename(path))
        self._edits, self._writes = len(edits), len(shell_writes)

    def paths(self, edits: list, shell_writes: list) -> set[str]:
        """The project paths the session has written so far."""
        self._catch_up(edits, shell_writes)
        return self._paths

    def read_paths(self, reads: list) -> set[str]:
        """The files read so far (brought up to date from the growing read list)."""
        for _, path in reads[self._reads:]:
            self._read_paths.add(path)
        self._reads = len(reads)
        return self._read_paths

    def modules(self, edits: list) -> set[str]:
        """The names an import of the edited code can start with: the file's stem and the
        folders above it (`pkg/sub/mod.py`: mod, sub, pkg)."""
        for record in edits[self._module_edits:]:
            parts = record.path.replace("\\", "/").split("/")
            parts[-1] = posixpath.splitext(parts[-1])[0]
            self._modules.update(part for part in parts[-4:] if part.isidentifier())
        self._module_edits = len(edits)
        return self._modules

    def of(self, edits: list, shell_writes: list) -> set[str]:
        """The base names of the files the session has written so far."""
        self._catch_up(edits, shell_writes)
        return self.names


def has_new_text(turn: Turn) -> bool:
    inp = turn.tool_input or {}
    return any(isinstance(inp.get(key), str) and inp[key].strip() for key in (
        "new_string", "newText", "new_str", "newString", "content", "file_text", "code_edit"))


def new_files(by_path: Mapping[str, list[EditRecord]], reads: list[tuple[int, str]]) -> frozenset[str]:
    """The files the session made: created, or written whole with no earlier text known,
    unless the session had read the file before writing it (it was there: a rewrite, whatever
    the harness logged)."""
    first_read: dict[str, int] = {}
    for turn, path in reads:
        first_read.setdefault(path, turn)
    return frozenset(path for path, records in by_path.items()
                     if records[0].edit.created or (
                         records[0].edit.whole_file and records[0].edit.before is None
                         and first_read.get(path, records[0].turn) >= records[0].turn))


def final_python(edits: list[EditRecord]) -> dict[str, tuple[int, str, ast.AST | SyntaxError]]:
    """The whole text each Python file the session edited ends with, the turn of it and its
    syntax tree (or the error that stops it compiling), where the log shows the text (a snippet
    edit after the last whole text leaves it unknown). Parsed once, for every criterion that
    asks."""
    latest: dict[str, tuple[int, str]] = {}
    for r in edits:
        if r.path.endswith(".py"):
            if r.edit.after is not None:
                latest[r.path] = (r.turn, r.edit.after)
            else:
                latest.pop(r.path, None)
    return {path: (turn, text, parse_python(text)) for path, (turn, text) in latest.items()}


def parse_python(text: str) -> ast.AST | SyntaxError:
    """The module's syntax tree, or the error that stops it compiling."""
    try:
        with warnings.catch_warnings():
            # The agent's code may hold invalid escapes: compiling it must not warn.
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        error = exc if isinstance(exc, SyntaxError) else SyntaxError(str(exc))
        return error
