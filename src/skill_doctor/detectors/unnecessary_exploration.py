"""Unnecessary exploration (0-3, inverted): reads and searches that served no request."""

from __future__ import annotations

import posixpath
import re
from typing import Any, Mapping

from ..patterns import compile_later
from ..facts import Facts
from ..facts.changes import TEST_FILE, relative_path
from ..model import Role, ToolKind, Turn
from ._base import Evidence, Measurement, _plural, _ranked_causes, detector
from .common import (_ORIENTATION_FILES, _SCRATCH, _import_tokens, _module_names,
                     _name_tokens, _stem)


_VENDORED_TREE = compile_later(r"(^|/)(node_modules|site-packages|\.venv|venv|vendor|\.git|target"
                            r"|__pycache__|\.cache|Library|\.npm|\.cargo|bower_components)/")


_HOME_OR_ROOT = compile_later(r"^(/|~/?|/Users/[^/]+/?|/home/[^/]+/?|/root/?|/[a-z]/Users/[^/]+/?"
                           r"|[A-Za-z]:[/\\](Users[/\\][^/\\]+[/\\]?)?)$")


_SHELL_BROAD = compile_later(r"^\s*(?:sudo\s+)?(find|grep\s+-\w*[rR]\w*|rg|ag|fd|ls\s+-\w*R\w*|tree)\s+"
                          r"(?:-\S+\s+)*['\"]?(/|~/?|\$HOME/?|/Users/[^/\s]+/?|/home/[^/\s]+/?)['\"]?"
                          r"(\s|$)")


# Requests whose work is reading: a review, an audit, understanding the code base.
_REVIEW = compile_later(r"\b(review|audit|analy[sz]e|understand|go through|look through|explore|walk me"
                     r" through|familiari[sz]e)\b", re.I)


def _depth(folder: str) -> int:
    return len([part for part in folder.split("/") if part])


def _common_folder(paths: list[str]) -> str:
    """The folder every path lies in ("" when they mix absolute and relative paths)."""
    if not paths or len({p.startswith("/") for p in paths}) != 1:
        return ""
    return posixpath.commonpath(paths)


def _names_a_request_word(name: str, words: set[str]) -> bool:
    """Whether a file is named after something the user asked about (`.gitleaks.toml` for a
    request about gitleaks)."""
    stem = name.lower().lstrip(".").split(".")[0]
    return len(stem) >= 4 and (stem in words or any(len(w) >= 5 and w in stem for w in words))


def _broad_search(turn: Turn, cwd: str | None) -> str | None:
    """Why a search or listing swept an unrelated tree, or None when it stayed on task."""
    command = turn.command
    where = None
    if command:
        match = _SHELL_BROAD.match(command)
        depth = re.search(r"-(?:max-?depth|-max-depth|L)\s+(\d+)", command)
        if match and not (depth and int(depth.group(1)) <= 3):
            where = match.group(2)
    else:
        pattern = str((turn.tool_input or {}).get("pattern", ""))
        for p in turn.paths:
            root = p.replace("\\", "/")
            if _HOME_OR_ROOT.match(root) and (cwd is None or relative_path(root, cwd) != ".") \
                    and ("**" in pattern or turn.kind is ToolKind.SEARCH):
                where = root
    if where:
        return f"searched all of {where}, far beyond the project"
    if _names_vendored_tree(turn):
        return None  # a dependency's own code searched on purpose (how a library does a thing)
    lines = [l for l in (turn.tool_output or "").splitlines() if l.strip()]
    if len(lines) >= 20:
        vendored = sum(1 for l in lines if _VENDORED_TREE.search(l.replace("\\", "/")))
        if vendored * 2 > len(lines):
            return f"{vendored} of {len(lines)} results were inside dependency or tool folders"
    return None


def _names_vendored_tree(turn: Turn) -> bool:
    """Whether the search was pointed at a dependency folder (`rg dragHandle
    node_modules/@xyflow/react`), rather than sweeping one up from the project root."""
    targets = [p.replace("\\", "/") for p in turn.paths]
    if turn.command:
        targets += [w.strip("'\"") for w in turn.command.split()[1:] if not w.startswith("-")]
    return any(_VENDORED_TREE.search(t.rstrip("/") + "/") for t in targets)


@detector("unused_reads", causes=("unused_read", "repeated_read", "broad_search"))
def unused_reads(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Files read that the work never used, repeated reads of an unchanged file, broad searches.

    What it measures: every file read is checked against the work. A read is used when the
    file was later edited, sits in the folder of an edited file or a sibling folder of it, is
    named after something a request mentions (`.gitleaks.toml` for a gitleaks request), is
    imported by an edited file
    (or imports one), is a test of an edited module, is named in the request, or is referred
    to afterwards by the agent (in its messages or its later tool calls). Project orientation
    files (README, CLAUDE.md, AGENTS.md, manifests) and the session's own scratch output are
    always fair reads. When a request is a question, an investigation or a review ("review the
    code base and update the constitution"), reading is the work:
    only repeats and broad searches count. A second read of a part of a file already read
    since it last changed counts, the same range again or one inside it, numbered or not
    (`nl -ba f | sed -n '1,200p'` after `sed -n '1,240p' f`); reads of other line ranges,
    `sed -n '200,340p' f` after `sed -n '1,120p' f`, are not repeats, nor are reads whose
    range and result the log does not keep, nor reads after a compaction. So does a search or
    listing that swept an unrelated tree (the home folder, the disk root, or results mostly
    inside node_modules and the like).

    Why it matters: every off-task read costs a turn and context, and pushes the relevant
    code out of the model's window. Reading before editing is good practice, not waste.

    Example: to fix `src/api/auth.py` the agent reads `docs/history.md` and `scripts/deploy.sh`,
    never mentions them again: 2 unused reads.

    Instead: name the files involved in the request, and keep a map of the project in
    CLAUDE.md / AGENTS.md.
    """
    cwd = facts.transcript.cwd
    edited = set(facts.edited_paths)
    edited_dirs = {posixpath.dirname(p) for p in edited}
    # A request to review or understand the code makes reading it the work; unlocated edits
    # leave nothing to judge use against.
    asked = " ".join(r.text for r in facts.requests)
    judge_use = facts.asks_for_change and facts.changed_code and not _REVIEW.search(asked) \
        and all(r.text for r in facts.main_requests)  # an unlogged request may name anything
    request_words = {w.lower() for w in re.findall(r"[A-Za-z][\w-]{3,}", asked)}
    # Sibling folders of an edited file's folder are on task when their shared parent lies
    # well inside the project: two levels below the folder all the session's files share.
    depth = _depth(_common_folder([p for _, p in facts.reads] + sorted(edited)))
    edited_parents = {parent for parent in (posixpath.dirname(d) for d in edited_dirs)
                      if _depth(parent) >= depth + 2}
    read_names = {posixpath.basename(p) for _, p in facts.reads if len(posixpath.basename(p)) >= 3}
    # Last turn naming each read file, in one scan of the session's text (no pass per read).
    last_named: dict[str, int] = {}
    goal_names: set[str] = set()
    if judge_use and facts.goal is not None:
        goal_names = _name_tokens(facts.goal.content) & read_names
        for t in facts.transcript.turns:
            if t.meta is not None or t.role is Role.USER:
                continue
            text = t.content if t.role is Role.ASSISTANT else \
                " ".join(str(v) for v in (t.tool_input or {}).values())[:4000]
            for tok in _name_tokens(text) & read_names:
                last_named[tok] = t.index
    imported: set[str] = set()
    edited_modules: set[str] = set()
    if judge_use:
        for e in facts.edits:
            edited_modules |= _module_names(e.path)
            for text in (e.edit.after, e.edit.before, e.edit.new):
                if text:
                    imported |= _import_tokens(text)
        for turn, path in facts.reads:
            if path in edited:
                imported |= _import_tokens(facts.turn(turn).tool_output or "")

    evidence: list[Evidence] = []
    causes: list[str] = []
    repeats = {(turn, path): earlier for turn, path, earlier in facts.repeated_reads}
    read_before: set[str] = set()
    judged: set[str] = set()
    for turn, path in facts.reads:
        if path in read_before:
            earlier = repeats.get((turn, path))
            if earlier is not None and not _SCRATCH.search(path):
                evidence.append(Evidence(turn, f"read {path} again; it had not changed since "
                                               f"turn {earlier}"))
                causes.append("repeated_read")
            continue
        read_before.add(path)
        if not judge_use or path in judged:
            continue
        judged.add(path)
        name = posixpath.basename(path)
        if (path in edited or posixpath.dirname(path) in edited_dirs
                or posixpath.dirname(posixpath.dirname(path)) in edited_parents
                or _names_a_request_word(name, request_words)
                or name.lower() in _ORIENTATION_FILES or _SCRATCH.search(path)
                or name in goal_names or last_named.get(name, 0) > turn
                or _module_names(path) & imported
                or (TEST_FILE.search(path) and any(m in _stem(path) for m in edited_modules))
                or edited_modules & _import_tokens(facts.turn(turn).tool_output or "")):
            continue
        evidence.append(Evidence(turn, f"read {path}; never edited, imported or referred to "
                                       f"afterwards"))
        causes.append("unused_read")
    for index in facts.explorations:
        reason = _broad_search(facts.turn(index), cwd)
        if reason:
            evidence.append(Evidence(index, reason))
            causes.append("broad_search")
    evidence.sort(key=lambda e: e.turn)
    n = len(evidence)
    return Measurement(n, tuple(evidence),
                       "every read served the task" if n == 0 else
                       (f"{_plural(n, 'read or search', 'reads or searches')} did not serve the task"),
                       _ranked_causes(causes, ("unused_read", "repeated_read", "broad_search")))
