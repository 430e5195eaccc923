"""Minimal diff (0-3): were the changes precise, without unrequested bloat?"""

from __future__ import annotations

import difflib
from typing import Any, Mapping

from ..facts import EditRecord, Facts
from ._base import Evidence, Measurement, _plural, _ranked_causes, detector


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


@detector("diff_bloat", causes=("whole_file_rewrite", "whitespace_only", "churn"),
          churn_ratio=(float, 3.0), small_change=(float, 0.5))
def diff_bloat(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Bloat in the changes: whole-file rewrites for small changes, whitespace-only hunks, churn.

    What it measures: the number of bloat signals. A whole-file write over an existing file
    that changed less than `small_change` of its lines (a targeted edit would do); an edit with
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
    for path, records in sorted(by_path.items()):
        for r in records:
            edit = r.edit
            if edit.whole_file and not edit.created and edit.before:
                total = max(len(edit.before.splitlines()), 1)
                share = max(r.added, r.removed) / total
                if total >= 20 and share < params["small_change"]:
                    evidence.append(Evidence(r.turn, f"rewrote all of {path} ({total} lines) to "
                                                     f"change {max(r.added, r.removed)}"))
                    causes.append("whole_file_rewrite")
                continue
            blank = _whitespace_only_hunks(edit.diff)
            if blank:
                evidence.append(Evidence(r.turn, f"{_plural(blank, 'whitespace-only hunk')} in "
                                                 f"{path}"))
                causes.append("whitespace_only")
        churn = sum(r.added + r.removed for r in records)
        net = _net_change(records)
        if net is not None and len(records) > 2 and churn > params["churn_ratio"] * max(net, 1) \
                and churn >= 30:
            evidence.append(Evidence(records[-1].turn,
                                     f"{path}: {churn} lines written over {len(records)} edits "
                                     f"for a net change of {net}"))
            causes.append("churn")
    evidence.sort(key=lambda e: e.turn)
    n = len(evidence)
    return Measurement(n, tuple(evidence), "surgical edits" if n == 0 else
                       f"{_plural(n, 'bloat signal')}",
                       _ranked_causes(causes, ("whole_file_rewrite", "whitespace_only", "churn")))


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
