"""Pattern adherence (0-2): do the added lines follow the code base's own conventions?"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping

from ..patterns import compile_later
from ..diffs import edit_lines
from ..facts import Facts
from ..facts.changes import TEST_FILE
from ..model import ToolKind
from ..text import quote
from ._base import Evidence, Measurement, _plural, _ranked_causes, detector
from .common import _CODE_SUFFIX, _SCRATCH


_CAUSES = ("unlearned", "indent", "naming", "quotes", "line_length", "trailing_space",
           "final_newline")


@detector("style_drift", causes=_CAUSES, max_line_length=(int, 120))
def style_drift(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Added lines that break the edited file's own conventions.

    What it measures: for each edited file whose surrounding text is known, the conventions
    the added lines break, each counted once per file: indentation kind (tabs vs spaces) and
    width (2 vs 4 spaces, from consistent indent steps on both sides; a mixed file has none), naming case of new functions and variables (snake_case vs
    camelCase), quote style in Python, trailing whitespace, code lines longer than both
    `max_line_length` and the file's longest line (only where the whole file is known, 20
    lines or more), a final newline dropped. Prose files (Markdown, text) are not held to a
    line length. Only text that existed before the session is the baseline: a file the
    session created is never judged against what the agent itself wrote. And a new code file
    written in a language (or a new test written) without the agent first reading any
    existing file of that kind in the session counts once per kind: the conventions it was
    to follow were never looked at (logs that show no reads at all are not judged on this).

    Why it matters: code that ignores local conventions reads as foreign, causes noisy diffs
    and formatter churn.

    Example: a file indented with tabs gains a function indented with four spaces: one deviation.

    Instead: match the file's style, and run the project's formatter after editing.
    """
    evidence: list[Evidence] = []
    causes: list[str] = []
    seen: set[tuple[str, str]] = set()
    limit = params["max_line_length"]
    created = facts.new_files
    for turn, note, kind in _unlearned_conventions(facts, created):
        evidence.append(Evidence(turn, note))
        causes.append(kind)
    by_path = facts.edits_by_path
    originals: dict[str, _Conventions] = {}
    for r in facts.edits:
        edit = r.edit
        # The file's conventions are those of its text before the session (its first edit's
        # original, when the log shows it), not of what the agent wrote into it since.
        records = by_path[r.path]
        original = records[0].edit.before
        context = original if original is not None else edit.old
        added, _ = edit_lines(edit)
        if not added or context is None or edit.created or r.path in created:
            continue
        if original is not None:  # a file's conventions learned once, however often edited
            conventions = originals.get(r.path)
            if conventions is None:
                conventions = originals[r.path] = _learn(original.splitlines(), r.path)
        else:
            conventions = _learn(context.splitlines(), r.path)
        problems = _style_problems(conventions, added, r.path, limit, whole=original is not None)
        last = records[-1].edit
        if r is records[-1] and original is not None and last.after is not None and \
                original.endswith("\n") and last.after and not last.after.endswith("\n"):
            problems.append(("final_newline", "dropped the final newline"))
        for key, message in problems:
            if (r.path, key) not in seen:
                seen.add((r.path, key))
                evidence.append(Evidence(r.turn, f"{r.path}: {message}"))
                causes.append(key)
    n = len(evidence)
    return Measurement(n, tuple(evidence), "consistent with the files' style" if n == 0 else
                       f"{_plural(n, 'style deviation')}",
                       _ranked_causes(causes, _CAUSES))


def _unlearned_conventions(facts: Facts, created: set[str]) -> list[tuple[int, str, str]]:
    """New code files (and new tests) of a kind the agent had read no existing file of."""
    if not facts.reads:
        return []  # the harness keeps files in context without logging reads (Aider)
    later_deleted = {path for path, records in facts.edits_by_path.items() if records[-1].edit.deleted}
    found: list[tuple[int, str, str]] = []
    judged: set[str] = set()
    for path in sorted(created, key=lambda p: (facts.edits_by_path[p][0].turn, p)):
        first = facts.edits_by_path[path][0].turn
        if path in later_deleted or _SCRATCH.search(path) or not _CODE_SUFFIX.search(path):
            continue
        is_test = bool(TEST_FILE.search(path))
        kind = "test" if is_test else posixpath.splitext(path)[1].lower()
        if kind in judged:
            continue
        judged.add(kind)
        earlier = [p for turn, p in facts.reads if turn < first and p not in created]
        if is_test:
            seen = any(TEST_FILE.search(p) for p in earlier)
            what = "a new test, without reading any existing test first"
        else:
            seen = any(p.lower().endswith(kind) for p in earlier)
            what = f"new {kind} code, without reading any existing {kind} file first"
        if not seen and not _shown_absent(facts, kind, first, created):
            found.append((first, f"{path}: {what}, so the project's conventions were never "
                                 f"looked at", "unlearned"))
    return found


# A file name in a tool output (`src/app.ts`, `test_pager.py:12:`), outside the folders of
# dependencies and tools, whose conventions are not the project's.
_LISTED_NAME = compile_later(r"(?<![\w./-])((?:[\w.@-]+/)*[\w.-]+\.[A-Za-z0-9]+)\b")
_NOT_THE_PROJECTS = compile_later(r"(^|/|['\"])(node_modules|vendor|site-packages|dist|build|target"
                               r"|\.venv|venv|\.git|__pycache__)/")


def _shown_absent(facts: Facts, kind: str, before: int, created: set[str]) -> bool:
    """Whether the session showed that the project has no file of this kind ("test" or a
    suffix) to learn from: it listed the project before `before`, and no file of the kind
    that existed before the session appears anywhere (edited without being created, read, or
    named in a tool output before `before`). A new project has no conventions to read first;
    a project never listed may have them."""
    if not any(facts.turn(i).kind is ToolKind.LIST for i in facts.explorations if i < before):
        return False
    return not _existing_of_kind(facts, kind, before, created)


def _existing_of_kind(facts: Facts, kind: str, before: int, created: set[str]) -> bool:
    """Whether the session shows a file of this kind that existed before it (see
    _shown_absent)."""
    def of_kind(path: str) -> bool:
        if _NOT_THE_PROJECTS.search(path) or path in created:
            return False
        return bool(TEST_FILE.search(path)) if kind == "test" else path.lower().endswith(kind)

    if any(of_kind(p) for p in facts.edits_by_path) or any(of_kind(p) for _, p in facts.reads):
        return True
    words = ("test", "spec") if kind == "test" else (kind,)
    for turn in facts.tool_turns:
        if turn.index >= before:
            break
        if any(_NOT_THE_PROJECTS.search(word) for word in
               (*(turn.command or "").split(), *turn.paths)):
            continue  # a look inside a dependency lists its files by their bare names
        output = turn.tool_output or ""
        folded = output.lower()
        # A substring test first: most outputs name no file of the kind at all.
        if any(word in folded for word in words) and \
                any(of_kind(name) for name in _LISTED_NAME.findall(output)):
            return True
    return False


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


_DEF_NAME = compile_later(r"^\s*(?:async\s+)?(?:def|function|func|fn|let|const|var)\s+([A-Za-z_]\w*)"
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


_PROSE = compile_later(r"\.(md|mdx|markdown|txt|rst|adoc|html?|svg|csv|json|lock)$", re.I)


_CONVENTION_SAMPLE = 2000  # lines of the file read to learn its conventions


@dataclass(frozen=True, slots=True)
class _Conventions:
    """What a file's existing text shows of its style, learned once per file."""

    lines: int
    longest: int
    indent: str | None
    indent_width: int | None
    naming: str | None
    trailing_space: bool
    quotes: str | None


def _learn(existing: list[str], path: str) -> _Conventions:
    longest = max(map(len, existing), default=0)
    # Conventions show in any large part of a file; a sample keeps this linear in the edit,
    # not in the size of the file edited.
    sample = existing[:_CONVENTION_SAMPLE]
    indent = _indent_kind(sample)
    return _Conventions(
        lines=len(sample), longest=longest, indent=indent,
        indent_width=_indent_width(sample) if indent == "spaces" else None,
        naming=_naming_case(sample) if _CODE_SUFFIX.search(path) else None,
        trailing_space=any(l != l.rstrip() for l in sample),
        quotes=_quote_style(sample) if path.endswith(".py") else None)


def _style_problems(file: _Conventions, added: list[str], path: str, limit: int,
                    whole: bool = False) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    added_kind = _indent_kind(added)
    if file.indent and added_kind and file.indent != added_kind:
        problems.append(("indent", f"indented with {added_kind} in a file indented with {file.indent}"))
    elif file.indent == "spaces" and added_kind == "spaces" and not _PROSE.search(path):
        added_width = _indent_width(added)
        if file.indent_width and added_width and file.indent_width != added_width:
            problems.append(("indent", f"indented by {added_width} spaces in a file indented "
                                       f"by {file.indent_width}"))
    if _CODE_SUFFIX.search(path):
        added_case = _naming_case(added)
        if file.naming and added_case and file.naming != added_case:
            problems.append(("naming", f"new names in {added_case} in a file that uses "
                                       f"{file.naming}"))
    trailing = [l for l in added if l.strip() and l != l.rstrip()]
    if trailing and not file.trailing_space:
        problems.append(("trailing_space", f"{_plural(len(trailing), 'added line')} with "
                                           f"trailing whitespace"))
    if not _PROSE.search(path) and whole and file.lines >= 20:
        too_long = [l for l in added if len(l) > max(limit, file.longest)]
        if too_long:
            problems.append(("line_length", f"{_plural(len(too_long), 'added line')} longer "
                                            f"than {max(limit, file.longest)} characters, e.g. "
                                            f"`{quote(too_long[0].strip(), 60)}...`"))
    if path.endswith(".py"):
        added_quote = _quote_style(added)
        if file.quotes and added_quote and file.quotes != added_quote:
            problems.append(("quotes", f"{added_quote}-quoted strings in a file that uses "
                                       f"{file.quotes} quotes"))
    return problems


_STRING = compile_later(r"""(?<![\w'"])(['"])(?:(?!\1)[^\\\n]|\\.)*\1""")


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
