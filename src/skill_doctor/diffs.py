"""Unified diffs: build them from the shapes harnesses log, and measure them with unidiff.

Every edit in the model carries a unified diff so detectors measure one shape whatever the
harness logged: old/new strings, whole-file writes, structured patches, `apply_patch`
envelopes or SEARCH/REPLACE blocks. The diff of two whole texts is `text.make_diff`, below
the model, which builds one too.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable

from .patterns import compile_later
from .model import FileEdit


def diff_from_hunks(path: str, hunks: Iterable[Any]) -> str:
    """Claude Code's `structuredPatch` (oldStart/oldLines/newStart/newLines/lines) as diff text."""
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    for hunk in hunks:
        if not isinstance(hunk, dict) or not isinstance(hunk.get("lines"), list):
            continue
        out.append("@@ -{},{} +{},{} @@\n".format(
            hunk.get("oldStart", 0), hunk.get("oldLines", 0),
            hunk.get("newStart", 0), hunk.get("newLines", 0)))
        for line in hunk["lines"]:
            text = str(line)
            if not text or text[0] not in " +-\\":
                text = " " + text
            out.append(text + "\n")
    return "".join(out) if len(out) > 2 else ""


def apply_snippet(before: str | None, old: str, new: str, replace_all: bool = False) -> str | None:
    """The file after replacing `old` by `new`, when the whole file before is known."""
    if before is None or old not in before:
        return None
    return before.replace(old, new) if replace_all else before.replace(old, new, 1)


_PATCH_FILE = compile_later(r"^\*\*\* (Add|Delete|Update) File: (.+?)\s*$")


def parse_apply_patch(text: str) -> list[FileEdit]:
    """Codex `apply_patch` envelopes (*** Begin Patch ... *** End Patch) as one edit per file."""
    edits: list[FileEdit] = []
    action = path = None
    body: list[str] = []

    def flush() -> None:
        if not path or not action:
            return
        if action == "Add":
            content = "".join(line[1:] + "\n" for line in body if line.startswith("+"))
            edits.append(FileEdit(path=path, patch=None,
                                  new=content, after=content, created=True, whole_file=True))
        elif action == "Delete":
            edits.append(FileEdit(path=path, patch=f"--- a/{path}\n+++ /dev/null\n", deleted=True))
        else:
            old, new, hunks = [], [], [f"--- a/{path}\n", f"+++ b/{path}\n"]
            chunk: list[str] = []

            def close_chunk() -> None:
                if not chunk:
                    return
                chunk[:] = _cancel_unchanged(chunk)
                n_old = sum(1 for c in chunk if c[0] in " -")
                n_new = sum(1 for c in chunk if c[0] in " +")
                hunks.append(f"@@ -1,{n_old} +1,{n_new} @@\n")
                hunks.extend(c + "\n" for c in chunk)
                chunk.clear()

            for line in body:
                if line.startswith("@@"):
                    close_chunk()
                    continue
                if line.startswith("*** "):  # Move to / End of File markers
                    continue
                if not line:
                    line = " "
                if line[0] not in " +-":
                    line = " " + line
                chunk.append(line)
                if line[0] in " -":
                    old.append(line[1:])
                if line[0] in " +":
                    new.append(line[1:])
            close_chunk()
            edits.append(FileEdit(path=path, patch="".join(hunks) if len(hunks) > 2 else "",
                                  old="\n".join(old), new="\n".join(new)))

    for raw in text.splitlines():
        match = _PATCH_FILE.match(raw)
        if match:
            flush()
            action, path, body = match.group(1), match.group(2), []
        elif raw.startswith("*** End Patch"):
            # whatever follows (a heredoc delimiter, a second command) is not patch text
            flush()
            action = path = None
        elif raw.startswith("*** Begin Patch"):
            continue
        elif path is not None:
            body.append(raw)
    flush()
    return edits


def _cancel_unchanged(chunk: list[str]) -> list[str]:
    """A hunk with lines removed and added back unchanged turned into context lines.

    Agents often anchor a patch by removing a line and adding it again as it was
    (`-from x import (` / `+from x import (`); applied, that changes nothing, so the diff
    must not show it as a change (it would read as a whitespace-only hunk). Each run of
    changed lines keeps only what differs after its common leading and trailing lines.
    """
    out: list[str] = []
    i = 0
    while i < len(chunk):
        if chunk[i][0] == " ":
            out.append(chunk[i])
            i += 1
            continue
        j = i
        while j < len(chunk) and chunk[j][0] != " ":
            j += 1
        minus = [c[1:] for c in chunk[i:j] if c[0] == "-"]
        plus = [c[1:] for c in chunk[i:j] if c[0] == "+"]
        head = 0
        while head < min(len(minus), len(plus)) and minus[head] == plus[head]:
            head += 1
        tail = 0
        while tail < min(len(minus), len(plus)) - head and minus[-1 - tail] == plus[-1 - tail]:
            tail += 1
        out.extend(" " + line for line in minus[:head])
        out.extend("-" + line for line in minus[head:len(minus) - tail])
        out.extend("+" + line for line in plus[head:len(plus) - tail])
        out.extend(" " + line for line in minus[len(minus) - tail:])
        i = j
    return out


# Each lazy part may also run to the end of the text (marked), so a block that never closes is
# scanned once, not once per later SEARCH line (which made many unclosed blocks quadratic).
_SEARCH_REPLACE = compile_later(
    r"^[-<]{5,}\s*SEARCH\s*\n(.*?)(?:^={5,}\s*\n(.*?)(?:^[+>]{5,}\s*REPLACE\s*$|(?P<open2>\Z))"
    r"|(?P<open1>\Z))",
    re.DOTALL | re.MULTILINE,
)


def parse_search_replace(text: str) -> list[tuple[str, str]]:
    """SEARCH/REPLACE blocks (Aider's <<<<<<< and Cline's -------/+++++++ fences)."""
    blocks = []
    for match in _SEARCH_REPLACE.finditer(text):
        if match.group("open1") is not None or match.group("open2") is not None:
            break  # unclosed: no later block can close either (its end would close this one)
        blocks.append((match.group(1), match.group(2)))
    return blocks


_HUNK = compile_later(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _scan_counts(diff: str) -> tuple[int, int] | None:
    """(added, removed) by walking the hunks, or None when a hunk disagrees with its header.

    Diffs built by difflib or from structured patches are well formed, and this walk is many
    times faster than a full parse; anything irregular goes to unidiff instead.
    """
    added = removed = 0
    old_left = new_left = 0
    for line in diff.split("\n"):
        if old_left > 0 or new_left > 0:
            tag = line[:1]
            if tag == "+":
                added += 1
                new_left -= 1
            elif tag == "-":
                removed += 1
                old_left -= 1
            elif tag == " " or line == "":
                old_left -= 1
                new_left -= 1
            elif tag == "\\":
                continue
            else:
                return None
            if old_left < 0 or new_left < 0:
                return None
            continue
        if line.startswith("@@"):
            match = _HUNK.match(line)
            if match is None:
                return None
            old_left = int(match.group(1) or 1)
            new_left = int(match.group(2) or 1)
        elif line.startswith(("---", "+++", "diff ", "index ", "new file", "deleted file",
                              "similarity", "rename ", "old mode", "new mode", "\\")) or not line:
            continue
        else:
            return None
    if old_left > 0 or new_left > 0:
        return None
    return added, removed


def count_changes(diff: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff; (0, 0) if it cannot be read at all.

    Well-formed diffs are counted by a direct walk of their hunks; any other text is parsed
    with unidiff, whose lenient fallback counts +/- lines.
    """
    if not diff:
        return 0, 0
    counted = _scan_counts(diff)
    if counted is not None:
        return counted
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    try:
        patch = PatchSet(diff)
    except (UnidiffParseError, ValueError, IndexError):
        added = sum(1 for l in diff.splitlines() if l.startswith("+") and not l.startswith("+++"))
        removed = sum(1 for l in diff.splitlines() if l.startswith("-") and not l.startswith("---"))
        return added, removed
    return sum(f.added for f in patch), sum(f.removed for f in patch)


@functools.lru_cache(maxsize=4096)
def changed_lines(diff: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The added and removed line texts of a diff, without their +/- markers.

    Cached: several detectors ask for the same edit's lines.
    """
    added: list[str] = []
    removed: list[str] = []
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("@@"):
            in_hunk = True
            continue
        if not in_hunk or line.startswith("\\"):
            continue
        if line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("-"):
            removed.append(line[1:])
    return tuple(added), tuple(removed)


def edit_lines(edit: FileEdit) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`changed_lines` of an edit's diff. A diff that only adds `new` to an empty text is not
    held (see FileEdit.patch): its added lines are the lines of `new`, read without building it."""
    if edit.patch is None:
        return tuple((edit.new or "").splitlines()), ()
    return changed_lines(edit.patch)


def edit_counts(edit: FileEdit) -> tuple[int, int]:
    """`count_changes` of an edit's diff, the same way."""
    if edit.patch is None:
        return len((edit.new or "").splitlines()), 0
    return count_changes(edit.patch)
