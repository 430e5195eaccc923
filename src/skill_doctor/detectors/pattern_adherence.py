"""Pattern adherence (0-2): do the added lines follow the code base's own conventions?"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Mapping

from ..diffs import changed_lines
from ..facts import Facts
from ._base import Evidence, Measurement, _plural, _ranked_causes, detector
from .common import _CODE_SUFFIX


@detector("style_drift", causes=("indent", "naming", "quotes", "line_length", "trailing_space",
                                 "final_newline"),
          max_line_length=(int, 120))
def style_drift(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Added lines that break the edited file's own conventions.

    What it measures: for each edited file whose surrounding text is known, the conventions
    the added lines break, each counted once per file: indentation kind (tabs vs spaces) and
    width (2 vs 4 spaces, from consistent indent steps on both sides; a mixed file has none), naming case of new functions and variables (snake_case vs
    camelCase), quote style in Python, trailing whitespace, code lines longer than both
    `max_line_length` and the file's longest line, a final newline dropped. Prose files
    (Markdown, text) are not held to a line length.

    Why it matters: code that ignores local conventions reads as foreign, causes noisy diffs
    and formatter churn.

    Example: a file indented with tabs gains a function indented with four spaces: one deviation.

    Instead: match the file's style, and run the project's formatter after editing.
    """
    evidence: list[Evidence] = []
    causes: list[str] = []
    seen: set[tuple[str, str]] = set()
    limit = params["max_line_length"]
    for r in facts.edits:
        edit = r.edit
        context = edit.before if edit.before is not None else edit.old
        added, _ = changed_lines(edit.diff)
        if not added or context is None or edit.created:
            continue
        existing = context.splitlines()
        problems = _style_problems(existing, added, r.path, limit)
        if edit.before is not None and edit.after is not None and edit.before.endswith("\n") \
                and edit.after and not edit.after.endswith("\n"):
            problems.append(("final_newline", "dropped the final newline"))
        for key, message in problems:
            if (r.path, key) not in seen:
                seen.add((r.path, key))
                evidence.append(Evidence(r.turn, f"{r.path}: {message}"))
                causes.append(key)
    n = len(evidence)
    return Measurement(n, tuple(evidence), "consistent with the files' style" if n == 0 else
                       f"{_plural(n, 'style deviation')}",
                       _ranked_causes(causes, ("indent", "naming", "quotes", "line_length",
                                               "trailing_space", "final_newline")))


def _indent_kind(lines: list[str]) -> str | None:
    tabs = sum(1 for l in lines if l.startswith("\t"))
    spaces = sum(1 for l in lines if l.startswith("  "))
    if tabs + spaces < 2:
        return None
    return "tabs" if tabs > spaces else "spaces"


def _indent_width(lines: list[str], min_steps: int = 2) -> int | None:
    """The text's space-indent step (2 or 4), or None when the evidence is thin or mixed.

    Measured from how much the indent grows from one line to the next, not from absolute
    indents: a snippet cut from deep inside a file, a hanging continuation or a YAML block in
    a string literal says little. At least `min_steps` steps of 2 or 4 are needed, and one of
    them must make three quarters of the steps.
    """
    steps = Counter()
    previous = 0
    for l in lines:
        if not l.strip():
            continue
        width = len(l) - len(l.lstrip(" "))
        if width > previous and width - previous in (2, 4):
            steps[width - previous] += 1
        previous = width
    total = steps[2] + steps[4]
    if total < min_steps:
        return None
    width, count = max(steps.items(), key=lambda kv: (kv[1], kv[0]))
    return width if count * 4 >= total * 3 else None


_DEF_NAME = re.compile(r"^\s*(?:async\s+)?(?:def|function|func|fn|let|const|var)\s+([A-Za-z_]\w*)"
                       r"|^\s*([A-Za-z_]\w*)\s*(?::\s*[\w\[\], .|]+)?=(?!=)")


def _naming_case(lines: list[str]) -> str | None:
    """The case the file names functions and variables in: snake or camel (None if mixed)."""
    snake = camel = 0
    for l in lines:
        match = _DEF_NAME.match(l)
        name = match and (match.group(1) or match.group(2))
        if not name or name.isupper() or name.startswith("_") or name.islower() and "_" not in name:
            continue  # constants, private names and one-word names say nothing about case
        if "_" in name.strip("_") and name.lower() == name:
            snake += 1
        elif re.match(r"^[a-z]+[A-Z]", name) and "_" not in name:
            camel += 1
    if snake + camel < 1:
        return None
    if snake and not camel:
        return "snake_case"
    if camel and not snake:
        return "camelCase"
    return None


_PROSE = re.compile(r"\.(md|mdx|markdown|txt|rst|adoc|html?|svg|csv|json|lock)$", re.I)


_CONVENTION_SAMPLE = 2000  # lines of the file read to learn its conventions


def _style_problems(existing: list[str], added: list[str], path: str, limit: int
                    ) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    longest = max(map(len, existing), default=0)
    # Conventions show in any large part of a file; a sample keeps this linear in the edit,
    # not in the size of the file edited.
    existing = existing[:_CONVENTION_SAMPLE]
    file_kind = _indent_kind(existing)
    added_kind = _indent_kind(added)
    if file_kind and added_kind and file_kind != added_kind:
        problems.append(("indent", f"indented with {added_kind} in a file indented with {file_kind}"))
    elif file_kind == "spaces" and added_kind == "spaces" and not _PROSE.search(path):
        file_width, added_width = _indent_width(existing), _indent_width(added)
        if file_width and added_width and file_width != added_width:
            problems.append(("indent", f"indented by {added_width} spaces in a file indented "
                                       f"by {file_width}"))
    if _CODE_SUFFIX.search(path):
        file_case = _naming_case(existing)
        added_case = _naming_case(added)
        if file_case and added_case and file_case != added_case:
            problems.append(("naming", f"new names in {added_case} in a file that uses "
                                       f"{file_case}"))
    existing_trailing = any(l != l.rstrip() for l in existing)
    trailing = [l for l in added if l.strip() and l != l.rstrip()]
    if trailing and not existing_trailing:
        problems.append(("trailing_space", f"{_plural(len(trailing), 'added line')} with "
                                           f"trailing whitespace"))
    if not _PROSE.search(path):
        too_long = [l for l in added if len(l) > max(limit, longest)]
        if too_long:
            problems.append(("line_length", f"{_plural(len(too_long), 'added line')} longer "
                                            f"than {max(limit, longest)} characters"))
    if path.endswith(".py"):
        file_quote = _quote_style(existing)
        added_quote = _quote_style(added)
        if file_quote and added_quote and file_quote != added_quote:
            problems.append(("quotes", f"{added_quote}-quoted strings in a file that uses "
                                       f"{file_quote} quotes"))
    return problems


_STRING = re.compile(r"""(?<![\w'"])(['"])(?:(?!\1)[^\\\n]|\\.)*\1""")


def _quote_style(lines: list[str]) -> str | None:
    single = double = 0
    for line in lines:
        code = line.split("#", 1)[0]
        for match in _STRING.finditer(code):
            if match.group(1) == "'":
                single += 1
            else:
                double += 1
    if single + double < 3:
        return None
    if single >= 3 * max(double, 1) and double == 0:
        return "single"
    if double >= 3 * max(single, 1) and single == 0:
        return "double"
    return None
