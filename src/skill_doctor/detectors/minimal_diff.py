"""Minimal diff (0-3): were the changes precise, without unrequested bloat?"""

from __future__ import annotations

import difflib
import posixpath
import re
from typing import Any, Mapping

from ..patterns import compile_later
from ..diffs import edit_lines
from ..facts import EditRecord, Facts
from ..text import quote
from ._base import Evidence, Measurement, _plural, _ranked_causes, detector
from .common import _CODE_SUFFIX


def _hunks(diff: str) -> list[tuple[list[str], list[str]]]:
    """Each hunk's added and removed lines (one pass over the diff text)."""
    hunks: list[tuple[list[str], list[str]]] = []
    for line in diff.splitlines():
        if line.startswith("@@"):
            hunks.append(([], []))
        elif hunks and line.startswith("+") and not line.startswith("+++"):
            hunks[-1][0].append(line[1:])
        elif hunks and line.startswith("-") and not line.startswith("---"):
            hunks[-1][1].append(line[1:])
    return hunks


def _whitespace_only_hunks(edit_diff: str) -> int:
    """How many hunks change only whitespace (re-indentation, spacing, blank lines)."""
    count = 0
    for plus, minus in _hunks(edit_diff):
        if not plus and not minus:
            continue
        plus = [l for l in plus if l.strip()]
        minus = [l for l in minus if l.strip()]
        if len(plus) != len(minus):
            continue  # different numbers of non-blank lines: more than whitespace changed
        if ["".join(l.split()) for l in plus] == ["".join(l.split()) for l in minus]:
            count += 1
    return count


_CAUSES = ("whole_file_rewrite", "unrequested_docs", "duplicated", "rework", "whitespace_only",
           "churn")
_SHORT = {"whole_file_rewrite": "whole files rewritten for small changes",
          "unrequested_docs": "documentation nobody asked for", "duplicated": "duplicated code",
          "rework": "edits redone", "whitespace_only": "whitespace-only changes",
          "churn": "churn"}
_BLOCK = 4  # consecutive new lines that make a duplicated block
_TRIVIAL = compile_later(r"^[\W_]*$|^(return|break|continue|pass|else:?|try:|finally:|end|fi|done)\W*$")
_DOC_REQUEST = compile_later(r"\b(doc|docs|documentation|document|readme|changelog|guide|notes?|write[- ]?up"
                          r"|markdown|md|explain in|describe in|summary|summari[sz]e|report)\b", re.I)
_PROSE_FILE = compile_later(r"\.(md|mdx|markdown|rst|txt|adoc)$|(^|/)(readme|changelog)[^/]*$|(^|/)docs?/", re.I)
# Text files that are a tool's input, not prose: dependency pins, a CMake build, a crawler's rules.
_TOOL_TEXT = compile_later(r"(^|/)(?:requirements|constraints)[^/]*\.txt$|(^|/)cmakelists\.txt$"
                        r"|(^|/)robots\.txt$", re.I)
# A commit message or pull request body written to a file for `git commit -F` / `gh pr create
# --body-file` is the operation's input, not documentation.
_MESSAGE_FILE = compile_later(r"(^|/)[^/]*(commit|pr|pull[-_ ]?request)[-_ ]?(msg|message|body|description)"
                           r"[^/]*$|(^|/)COMMIT_EDITMSG$", re.I)


@detector("diff_bloat", causes=_CAUSES, churn_ratio=(float, 3.0), small_change=(float, 0.5),
          rework_edits=(int, 2))
def diff_bloat(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Bloat in the changes: unrequested files and rewrites, reworked edits, whitespace-only hunks.

    What it measures: the number of bloat signals. Documentation nobody asked for (a new
    prose file, README or docs/ page when no user message asks for documentation or names the
    file; keeping existing docs in step is fine), one signal per file; a file whose new lines
    were rewritten again by `rework_edits` or more later edits for the same request (the
    change was redone rather than made once; what a later request asks for is no rework); a
    whole-file write over an existing file that changed less than `small_change` of its lines
    (a targeted edit would do); the same block of new code (four or more non-trivial lines)
    written in two places of code files, pasted logic instead of a shared helper; an edit with
    hunks that change only whitespace or formatting (counted once per edit); a file whose lines
    written across all its edits exceed `churn_ratio` times its net change, measured on the
    file's unified diff from before the first edit to after the last (the agent rewrote its own
    work over and over).

    Why it matters: bloated diffs are hard to review and hide the real change; rewriting whole
    files risks dropping code the agent never looked at.

    Example: to change one constant, the agent rewrites a 300-line file with Write: one signal.

    Instead: make targeted edits and leave formatting to the project's formatter.
    """
    evidence: list[Evidence] = []
    causes: list[str] = []
    by_path = facts.edits_by_path
    asked = " ".join(r.text for r in facts.requests)
    rework: list[tuple[str, list[int]]] = []
    for path, records in sorted(by_path.items()):
        name = posixpath.basename(path)
        if _PROSE_FILE.search(path) and not _MESSAGE_FILE.search(path) and \
                not _TOOL_TEXT.search(path) and \
                records[0].edit.created and \
                not _asks_for_docs(facts, records[0].turn) and name not in asked and \
                not path.startswith(("/tmp/", "/private/tmp/")):
            lines = sum(r.added for r in records)
            evidence.append(Evidence(records[0].turn, f"wrote {lines} lines of documentation "
                                                      f"in {path}, which no request asked for"))
            causes.append("unrequested_docs")
        reworked = _reworked_edits(records, facts)
        if len(reworked) >= params["rework_edits"]:
            rework.append((path, reworked))
        for r in records:
            edit = r.edit
            if edit.whole_file and not edit.created and edit.before:
                total = max(len(edit.before.splitlines()), 1)
                share = max(r.added, r.removed) / total
                if total >= 5 and share < params["small_change"]:
                    evidence.append(Evidence(r.turn, f"rewrote all of {path} ({total} lines) to "
                                                     f"change {max(r.added, r.removed)}"))
                    causes.append("whole_file_rewrite")
                continue
            # A diff that only adds `new` (not held, see FileEdit.patch) is one hunk, blank
            # when every line it adds is.
            blank = _whitespace_only_hunks(edit.patch) if edit.patch is not None else \
                int(bool(edit.new) and not edit.new.strip())
            if blank:
                evidence.append(Evidence(r.turn, f"{_plural(blank, 'whitespace-only hunk')} in "
                                                 f"{path}"))
                causes.append("whitespace_only")
        churn = sum(r.added + r.removed for r in records)
        net = _net_change(records)
        if net is not None and len(records) > 2 and churn > params["churn_ratio"] * max(net, 1) \
                and churn >= 30 and "rework" not in causes[-1:]:
            evidence.append(Evidence(records[-1].turn,
                                     f"{path}: {churn} lines written over {len(records)} edits "
                                     f"for a net change of {net}"))
            causes.append("churn")
    if rework:  # one signal for the session: the work was redone rather than done once
        path, turns = max(rework, key=lambda pt: len(pt[1]))
        evidence.append(Evidence(turns[0], f"lines this session added were rewritten again for "
                                           f"the same request: {len(turns)} later edits of "
                                           f"{path}" + (f" and {len(rework) - 1} more "
                                                        f"{'file' if len(rework) == 2 else 'files'}"
                                                        if len(rework) > 1 else "")))
        causes.append("rework")
    duplicate = _duplicated_block(facts.edits)
    if duplicate:
        (first, first_path), (second, second_path), line = duplicate
        where = (f"in turn {first}, in {first_path} and {second_path}" if first == second
                 else f"(turns {first} and {second})")
        evidence.append(Evidence(second, f"the same block of new code was written twice {where}: "
                                         f"{quote(line, 80)}"))
        causes.append("duplicated")
    evidence.sort(key=lambda e: e.turn)
    n = len(evidence)
    return Measurement(n, tuple(evidence), "surgical edits" if n == 0 else
                       f"{_plural(n, 'bloat signal')}: " + ", ".join(
                           dict.fromkeys(_SHORT[c] for c in causes)),
                       _ranked_causes(causes, _CAUSES))


def _asks_for_docs(facts: Facts, turn: int) -> bool:
    """Whether the request a new document was written for (with its follow-ups) asks for
    documentation: a report asked for in one request does not license documents written for
    the next. A request the log does not keep (a headless run) may have asked for anything."""
    request = facts.request_at(turn)
    if request is None:
        return any(_DOC_REQUEST.search(r.text) or not r.text for r in facts.main_requests)
    if not request.text:
        return True
    return any(_DOC_REQUEST.search(r.text) for r in facts.requests
               if request.turn <= r.turn <= request.end)


def _duplicated_block(edits) -> tuple[tuple[int, str], tuple[int, str], str] | None:
    """Two places in code files where the session wrote the same `_BLOCK` consecutive
    non-trivial lines (pasted logic), as ((turn, path) of the first, (turn, path) of the
    second, first line), or None. Documents and settings are left out: a README quoting the
    config it documents, two audit reports sharing a section, are no logic pasted."""
    seen: dict[tuple[str, ...], tuple[int, str]] = {}
    for r in edits:
        if not _CODE_SUFFIX.search(r.path):
            continue
        plus, _ = edit_lines(r.edit)
        lines = [" ".join(line.split()) for line in plus]
        lines = [line for line in lines if len(line) >= 8 and not _TRIVIAL.match(line)]
        own: set[tuple[str, ...]] = set()
        for i in range(len(lines) - _BLOCK + 1):
            block = tuple(lines[i:i + _BLOCK])
            if block in own:
                continue
            own.add(block)
            earlier = seen.get(block)
            if earlier is not None and earlier[1] == r.path and r.edit.whole_file \
                    and r.edit.before is None:
                # The file written whole again over a text the log does not show: the block
                # replaces itself, it is not a second copy.
                continue
            if earlier is not None and (earlier[0], earlier[1]) != (r.turn, r.path):
                return earlier, (r.turn, r.path), block[0]
            seen.setdefault(block, (r.turn, r.path))
    return None


def _reworked_edits(records, facts: Facts) -> list[int]:
    """Edits of a file that remove lines an earlier edit for the same request added to it
    (changes a later request asks for are not rework)."""
    added_so_far: set[str] = set()
    reworked: list[int] = []
    request = None
    for r in records:
        request_of = facts.request_at(r.turn)
        serving = request_of.turn if request_of is not None else None
        if serving != request:
            request, added_so_far = serving, set()
        plus, minus = edit_lines(r.edit)
        removed = {line.strip() for line in minus if len(line.strip()) > 3}
        if removed & added_so_far:
            reworked.append(r.turn)
        added_so_far |= {line.strip() for line in plus if len(line.strip()) > 3}
    return reworked


def _net_change(records: list[EditRecord]) -> int | None:
    first, last = records[0].edit, records[-1].edit
    if first.before is not None and last.after is not None:
        a, b = first.before.splitlines(), last.after.splitlines()
    elif first.created and last.after is not None:
        return len(last.after.splitlines())
    else:
        return None
    diff = difflib.unified_diff(a, b, n=0, lineterm="")
    return sum(1 for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")))
