"""Correct file identification (0-3): were the right files and symbols changed?"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Mapping

from ..patterns import compile_later
from ..diffs import edit_lines
from ..facts import EditRecord, Facts
from ..facts.changes import TEST_FILE, is_doc_file
from ._base import Evidence, Measurement, _plural, _ranked_causes, detector
from .common import _CODE_SUFFIX, _ORIENTATION_FILES, _SCRATCH, _edited_imports, _import_tokens, \
    _module_names, _name_tokens


_GENERATED = compile_later(
    r"(^|/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Pipfile\.lock|uv\.lock"
    r"|Cargo\.lock|go\.sum|composer\.lock|Gemfile\.lock)$"
    r"|(^|/)(node_modules|vendor|third_party|dist|build|target|__pycache__|\.venv|venv)/"
    r"|\.(min\.js|min\.css|pyc|map)$")


_ASSERT = compile_later(r"\b(assert\w*|expect\(|should\b|t\.(Error|Fatal|Fail))")


_CAUSES = ("generated", "outside_project", "reverted", "weakened_test", "parallel_file",
           "off_goal")


@detector("misdirected_edits", causes=_CAUSES)
def misdirected_edits(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Files edited that should not have been: reverted, generated, outside the project, off the goal, tests weakened, duplicated.

    What it measures: the number of wrongly targeted files among those the session changed:
    a file whose edits were undone later in the session (net change nil); a generated, lock,
    vendored or build file edited by hand; a file outside the project folder (scratch files in
    /tmp, and places a user message names, excepted); a test file whose assertions were removed
    without replacement; a new file created beside one the session found there (read or
    edited, not created) that holds the same module under another name (`EmojiBubble.js` beside
    `EmojiBubble.jsx`, `parser_new.py` beside `parser.py`): the change belonged in the file
    that was there; and, when the request names the files to change, a code file in
    another part of the project that no user message names and that neither imports nor is
    imported by a named file. Tests and docs edited beside the named code are on target; an
    instruction file or doc named in the request (AGENTS.md, a spec) does not narrow the
    scope, and the session's scratch files (/tmp) never count.

    Why it matters: edits to the wrong file are churn at best and hidden breakage at worst
    (a hand-edited lock file, a test weakened to go green).

    Example: the agent edits `dist/app.min.js` instead of `src/app.js`: 1 wrong file.

    Instead: name the target files in the request and list generated or vendored paths as
    off-limits in CLAUDE.md / AGENTS.md.
    """
    cwd = facts.transcript.cwd
    evidence: list[Evidence] = []
    causes: list[str] = []
    by_path = facts.edits_by_path
    user_words = {w.lower() for t in facts.user_turns for w in _name_tokens(t.content)}
    # A request the log does not keep (a headless run) may have named any place.
    unknown = any(not r.text for r in facts.main_requests)
    named = _named_paths(facts, by_path)
    named_tops = {p.split("/", 1)[0] for p in named if "/" in p}
    named_modules = {m for p in named for m in _module_names(p)}
    named_imports: set[str] = set()
    for p in named:
        for r in by_path.get(p, ()):
            for text in (r.edit.after, r.edit.before, r.edit.new):
                if text:
                    named_imports |= _import_tokens(text)

    def flag(turn: int, note: str, cause: str, path: str) -> None:
        evidence.append(Evidence(turn, note))
        causes.append(cause)
        flagged.add(path)

    flagged: set[str] = set()
    # Files the session had seen, by folder and module name: read, or edited (first turn).
    # (The session's own new files are left out: a second copy of the agent's own script is
    # churn, which minimal diff weighs, not a file mistaken for another.)
    made = {path for path, records in by_path.items() if records[0].edit.created}
    known: dict[tuple[str, str], tuple[int, str]] = {}
    for turn, seen_path in sorted(list(facts.reads) + [(r.turn, r.path) for r in facts.edits]):
        if _CODE_SUFFIX.search(seen_path) and seen_path not in made:
            known.setdefault(_module_key(seen_path), (turn, seen_path))
    for path, records in sorted(by_path.items()):
        first, last = records[0], records[-1]
        if _SCRATCH.search(path):
            continue  # the session's own scratch files are never a wrong target
        if _GENERATED.search(path):
            flag(first.turn, f"edited generated or vendored file {path} by hand", "generated", path)
            continue
        if cwd and path.startswith("/") and not _SCRATCH.search(path) and not unknown and \
                not _user_named_place(path, user_words):
            flag(first.turn, f"edited {path}, outside the project ({cwd})", "outside_project", path)
            continue
        if _reverted(records):
            flag(last.turn, f"the edits to {path} were undone later: net change nil", "reverted", path)
            continue
        if TEST_FILE.search(path):
            removed = added = 0
            for r in records:
                plus, minus = edit_lines(r.edit)
                removed += sum(1 for line in minus if _ASSERT.search(line))
                added += sum(1 for line in plus if _ASSERT.search(line))
            if removed > added:
                flag(first.turn, f"removed {removed - added} assertion(s) from test file {path}",
                     "weakened_test", path)
            continue
        twin = _twin_of(path, first, known) if first.edit.created else None
        if twin is not None:
            flag(first.turn, f"created {path} beside {twin}, which holds the same module",
                 "parallel_file", path)
            continue
        if named and path not in named and "/" in path and _CODE_SUFFIX.search(path) \
                and path.split("/", 1)[0] not in named_tops \
                and posixpath.basename(path).lower() not in user_words \
                and not (_module_names(path) & named_imports) \
                and not (named_modules & _edited_imports(records)):
            flag(first.turn, f"edited {path}, outside the part of the project the request names "
                             f"({', '.join(sorted(named)[:3])})", "off_goal", path)
    n = len(flagged)
    return Measurement(n, tuple(evidence), "all edits on target" if n == 0 else
                       f"{_plural(n, 'file')} wrongly targeted",
                       _ranked_causes(causes, _CAUSES))


# A module's other spellings: the same language's sibling suffixes, and the copies agents make.
_SCRIPT_SUFFIXES = {".js": ".js", ".jsx": ".js", ".mjs": ".js", ".cjs": ".js", ".ts": ".js",
                    ".tsx": ".js"}
_COPY_SUFFIX = compile_later(r"[-_.](?:new|v\d+|fixed|copy|old|backup|bak|final|updated|improved)$",
                          re.I)


def _module_key(path: str) -> tuple[str, str]:
    folder, name = posixpath.split(path.lower())
    stem, suffix = posixpath.splitext(name)
    return folder, _COPY_SUFFIX.sub("", stem) + _SCRIPT_SUFFIXES.get(suffix, suffix)


def _twin_of(path: str, first: EditRecord, known: Mapping[tuple[str, str], tuple[int, str]]
             ) -> str | None:
    """The file the session already knew that a newly created `path` duplicates, if any."""
    if not _CODE_SUFFIX.search(path) or TEST_FILE.search(path):
        return None
    seen = known.get(_module_key(path))
    if seen is None or seen[0] >= first.turn or seen[1] == path:
        return None
    return seen[1]


_GENERIC_PLACES = {"users", "home", "documents", "desktop", "downloads", "library", "appdata",
                   "local", "roaming", "private", "tmp", "var", "etc", "opt", "usr", "src",
                   "docs", "projects", "code", "work", "repos", "dev"}


def _user_named_place(path: str, user_words: set[str]) -> bool:
    """Whether a user message names a folder on the path (e.g. "publish to the M-Claude repo")."""
    parts = [p.lower() for p in path.strip("/").split("/")[:-1]]
    return any(len(p) >= 4 and p not in _GENERIC_PLACES and p in user_words for p in parts)


def _named_paths(facts: Facts, by_path: Mapping[str, tuple[EditRecord, ...]]) -> set[str]:
    """Edited code files the request names (by path or file name).

    Instruction files, project docs and specs ("write an AGENTS.md", "see docs/spec.md") name
    where guidance lives, not the part of the code to change, so they do not narrow the scope.
    """
    if facts.goal is None:
        return set()
    words = _name_tokens(facts.goal.content)
    return {p for p in by_path if (posixpath.basename(p) in words or p in words)
            and posixpath.basename(p).lower() not in _ORIENTATION_FILES and not is_doc_file(p)}


_RECENT_PIECES = 64


def _reverted(records: list[EditRecord]) -> bool:
    """Whether a file's edits cancel out: the final text equals the text before the first edit.

    Where the log keeps only each edit's old and new text, the edits are followed as pieces of
    the file, each the original text it replaced and what stands there now: an edit of a piece
    an earlier edit wrote changes that piece, and a piece back to its original is gone. The
    file is back where it was when no piece is left. One edit undone among others that stay
    (a debugging line added and removed) leaves the file changed: that is churn, not a wrong
    file.
    """
    first, last = records[0].edit, records[-1].edit
    if first.before is not None and last.after is not None:
        return first.before == last.after and len(records) > 1
    if len(records) < 2 or first.created:
        return False
    pieces: list[list[str]] = []  # [original, now] per piece changed
    for position, record in enumerate(records):
        old, new = record.edit.old, record.edit.new
        if old is None or new is None or not old:
            return False  # a whole-file write or an insertion at no known place
        if len(pieces) > len(records) - position:
            return False  # each edit left can put back one piece at most
        if old == new:
            continue
        # Only the pieces changed last are searched, so a file edited thousands of times
        # costs linear time; an edit of an older piece then counts as a piece of its own,
        # and the file as changed.
        piece = next((p for p in pieces[:-_RECENT_PIECES - 1:-1] if old in p[1]), None)
        if piece is None:
            pieces.append([old, new])
            continue
        piece[1] = piece[1].replace(old, new, 1)
        if piece[1] == piece[0]:
            pieces.remove(piece)
    return not pieces
