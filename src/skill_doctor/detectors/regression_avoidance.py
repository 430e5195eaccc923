"""Regression avoidance (0-2): did the changes leave bugs, dead code or broken checks?"""

from __future__ import annotations

import ast
import bisect
import re
from typing import Any, Mapping

from ..patterns import compile_later
from ..diffs import edit_lines
from ..facts import Facts
from ..facts.changes import PROSE_ONLY, TEST_FILE
from ..model import ToolKind
from ..text import CaselessPattern, line_of, quote
from ._base import Evidence, Measurement, _plural, _ranked_causes, detector
from .common import _CODE_SUFFIX, PROJECT_CHECKS, runs_one_of


_DEBUG = compile_later(r"\b(breakpoint\(\)|pdb\.set_trace\(\)|import i?pdb|debugger;|binding\.pry"
                    r"|dbg!\(|console\.log\(\s*['\"]debug|var_dump\()", re.I)


_TODO = compile_later(r"(#|//|/\*|--|<!--)\s*(TODO|FIXME|XXX|HACK)\b")


_SKIP = compile_later(r"(@pytest\.mark\.skip|@unittest\.skip|\bpytest\.skip\(|\b(it|describe|test)"
                   r"\.skip\(|\bx(it|describe)\(|\bt\.Skip\(|#\[ignore\])")


# Patterns run over whole texts with re.M start lines with `[^\S\n]*`, not `\s*`, which would
# run across a run of blank lines from every line start in it (quadratic in the run's length).
_COMMENT_LINE = compile_later(r"^[^\S\n]*(#|//)", re.M)


# Literal words one of which each leftover pattern needs: a substring test rules most edits
# out far faster than the regular expression would.
_NEEDS = {
    "debug": ("pdb", "breakpoint", "debugger", "binding.pry", "dbg!", "console.log", "var_dump"),
    "todo": ("TODO", "FIXME", "XXX", "HACK"),
    "skip": (".skip", ".Skip(", "xit(", "xdescribe(", "#[ignore]"),
}


def _line_matching(pattern: re.Pattern[str], text: str, needs: tuple[str, ...] = (),
                   folded: str | None = None) -> str | None:
    """The first line of `text` (lines joined by newlines) in which `pattern` matches.

    `needs` are literals the pattern cannot match without (checked in `folded`, the
    lower-cased text, when given, for case-insensitive patterns).
    """
    if needs and not any(word in (folded if folded is not None else text) for word in needs):
        return None
    match = pattern.search(text)
    return line_of(text, match) if match is not None else None


_COMMENTED_CODE = compile_later(
    r"^\s*(#|//)(?![!:])\s*(?!(type|noqa|pylint|eslint|ts-|prettier|fmt|nosec|pragma)\b)"
    r"((def|class|import|from|if|elif|else|for|while|try|except|const|let|var|function"
    r"|await|yield)\b.*[:;)\]}]\s*$|return\s+(\S+|.*[-+*/%<>=(\[].*)\s*;?\s*$|[A-Za-z_][\w.\[\]'\"]*\s*(\(.*\)|[-+*/]?=(?!=)\s*\S.*)\s*;?\s*$)")


# A comment standing in for code a whole-file write left out ("/* ... rest of your existing
# styles remain unchanged ... */", "// ... existing code ..."): the file is what was written,
# so the code it stands for is gone.
_ELIDED = compile_later(
    r"^[^\S\n]*(?://|#|/\*|<!--|\{/\*|--)[^\S\n]*(?:\.{3}|\u2026)?[^\S\n]*(?:the )?(?:rest of|remaining|other|existing"
    r"|previous)\b[^\n]{0,60}?(?:unchanged|the same|as before|as is|as-is|here|remains?|stays?"
    r"|omitted|\.{3}|\u2026)"
    r"|^[^\S\n]*(?://|#|/\*|<!--|\{/\*)[^\S\n]*(?:\.{3}|\u2026)[^\S\n]*(?:existing|rest|other|previous|remaining)\b",
    re.I | re.M)
# Stylesheets and markup lose their rules to such a comment as code does.
_ELIDABLE = compile_later(r"\.(?:css|scss|sass|less|html?)$")


_RM = compile_later(r"(?:^|&&|;|\|\|)\s*(?:git\s+)?rm\s+((?:-\S+\s+)*)([^;&|]+)")


_CAUSES = ("broken_check", "final_check_failed", "code_elided", "syntax_error", "test_deleted",
           "test_skipped", "test_weakened", "user_found", "debug_left", "unused_import",
           "commented_code", "todo_added", "unverified")
# Signals of a regression left in the final state; the rest are minor issues.
_SEVERE = {"broken_check", "final_check_failed", "code_elided", "syntax_error"}
_LABELS = {0: "no regressions seen", 1: "minor issues", 2: "a regression left in the final state"}


@detector("regressions_introduced", causes=_CAUSES)
def regressions_introduced(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Problems the changes left behind: failing checks, syntax errors, leftovers, unverified code.

    What it measures: how serious the worst problem is: 2 for a regression left in the final
    state (a check that passed earlier and fails after the last edit, the last check after
    the last code edit failing, a Python file whose final text (when the transcript shows it
    whole) does not compile, or a file written whole with a comment in place of the code it
    left out, "/* ... rest of your existing styles remain unchanged ... */", still there at
    the end), 1 for minor issues, 0 for none. Minor issues: no test, build,
    type check or lint ran after the last code edit, nor a run of a file the session edited
    but did not write itself, nor, when all the code it changed is its own new code, a run of
    that code (an unverified change; a request that says not to test and
    prose-only edits excepted); a failing check made to pass by editing
    only the tests; the user answering a change by reporting the changed code broken (a
    pasted error, "it crashes now"), a regression the user had to find even if it was fixed
    afterwards; debug statements or breakpoints, TODO / FIXME
    markers, and commented-out code (two or more commented lines that parse as code) added to
    code and not removed by a later edit; tests skipped, or test files deleted (by an edit or
    by `rm` / `git rm`); imports added to a Python file and never used in it (`__future__`
    imports are directives, never unused). A file is compiled and checked only when the
    transcript shows its whole text after the session's last edit of it.

    Why it matters: these are the defects reviewers most often catch late, and each one means
    the agent left the code worse than a finished change should.

    Example: the agent adds `import pdb; pdb.set_trace()` while debugging and never removes it
    (minor: 1 point lost); `pytest` passed at the start and fails after the last edit (2 lost).

    Instead: run the checks after the last edit, and remove debugging aids, dead code and
    skipped tests before finishing.
    """
    evidence: list[Evidence] = []
    causes: list[str] = []

    def signal(turn: int, note: str, cause: str) -> None:
        evidence.append(Evidence(turn, note))
        causes.append(cause)

    last_edit = facts.last_edit_turn
    if last_edit is not None:
        final_by_command: dict[str, tuple[int, bool | None]] = {}
        passed_before: set[str] = set()
        for c in facts.checks:
            key = " ".join(c.command.split())
            if c.turn < last_edit and c.passed:
                passed_before.add(key)
            final_by_command[key] = (c.turn, c.passed)
        for key, (turn, passed) in sorted(final_by_command.items(), key=lambda kv: kv[1][0]):
            if turn > last_edit and passed is False and key in passed_before:
                signal(turn, f"passed earlier, fails after the last edit: {quote(key, 120)}", "broken_check")
    # Leftovers (debug, TODO, commented-out code) still present: a later edit of the same file
    # that removes the line clears it.
    pending: dict[str, list[tuple[int, str, str, str]]] = {}  # path -> (turn, line, note, cause)
    # The lines each Python file was given that can start an import (stripped: a statement's
    # first line holds `import` or `from`), all `_unused_new_imports` asks of the added lines.
    # Keeping every added line of every edit grew with the session.
    imports_added: dict[str, set[str]] = {}
    # The turn each file was first changed: a write that creates it later replaced a text.
    # (A file read before its write is never "created": the facts say so.)
    first_edit: dict[str, int] = {}
    for r in facts.edits:
        first = first_edit.setdefault(r.path, r.turn)
        added, removed = edit_lines(r.edit)
        if r.path.endswith(".py"):
            imports_added.setdefault(r.path, set()).update(
                line.strip() for line in added if "import" in line or "from" in line)
        if r.edit.whole_file:
            pending.pop(r.path, None)  # the file is now what this write holds, nothing before
        elif removed and r.path in pending:
            gone = {l.strip() for l in removed}
            pending[r.path] = [p for p in pending[r.path] if p[1] not in gone]
        code = bool(_CODE_SUFFIX.search(r.path))
        # Each pattern runs once over all added lines (one C-level search), not line by line.
        joined = "\n".join(added)
        replaced = not r.edit.created or first < r.turn
        if r.edit.whole_file and replaced and (code or _ELIDABLE.search(r.path)):
            elided = _line_matching(_ELIDED, joined)
            if elided is not None:
                pending.setdefault(r.path, []).append(
                    (r.turn, elided.strip(), f"{r.path} was written whole with a comment in place "
                                             f"of code, which is gone: {quote(elided.strip(), 80)}",
                     "code_elided"))
        if code:
            found = pending.setdefault(r.path, [])
            debug = _line_matching(_DEBUG, joined, _NEEDS["debug"], joined.lower())
            if debug is not None:
                found.append((r.turn, debug.strip(), f"debug statement added to {r.path}: "
                                                      f"{quote(debug.strip(), 80)}", "debug_left"))
            todo = _line_matching(_TODO, joined, _NEEDS["todo"])
            if todo is not None:
                found.append((r.turn, todo.strip(), f"TODO/FIXME added to {r.path}: "
                                                    f"{quote(todo.strip(), 80)}", "todo_added"))
            if _COMMENT_LINE.search(joined):
                commented = [l for l in added if _COMMENTED_CODE.match(l)]
                if len(commented) >= 2:
                    found.append((r.turn, commented[0].strip(), f"commented-out code added to "
                                                                f"{r.path}: {quote(commented[0].strip(), 80)}",
                                  "commented_code"))
        skipped = _line_matching(_SKIP, joined, _NEEDS["skip"])
        if skipped is not None:
            signal(r.turn, f"test skipped in {r.path}: {quote(skipped.strip(), 80)}", "test_skipped")
        if r.edit.deleted and TEST_FILE.search(r.path):
            signal(r.turn, f"test file deleted: {r.path}", "test_deleted")
    for path in sorted(pending):
        for turn, _, note, cause in pending[path]:
            signal(turn, note, cause)
    for t in facts.tool_turns:
        command = t.command
        if command and t.index not in facts.failed and "rm " in command:
            for match in _RM.finditer(command):
                tests = [w for w in match.group(2).split() if TEST_FILE.search(w.strip("'\""))]
                if tests:
                    signal(t.index, f"test file deleted: {quote(tests[0], 100)}", "test_deleted")
                    break
    for path, (turn, text, tree) in sorted(facts.final_python.items()):
        if isinstance(tree, SyntaxError):
            line = tree.lineno
            signal(turn, f"{path} no longer compiles" + (f" (line {line})" if line else ""),
                   "syntax_error")
            continue
        unused = _unused_new_imports(tree, text, imports_added.get(path, set()), path)
        if unused:
            signal(turn, f"import added to {path} but never used: {', '.join(unused[:3])}",
                   "unused_import")
    _verification_signals(facts, signal)
    _breakages_the_user_met(facts, signal)
    # One entry per turn: a turn behind two signals is cited once, with both notes.
    notes: dict[int, list[str]] = {}
    for e in evidence:
        notes.setdefault(e.turn, []).append(e.note)
    evidence = [Evidence(turn, "; ".join(dict.fromkeys(notes[turn]))) for turn in sorted(notes)]
    level = 2 if _SEVERE & set(causes) else (1 if causes else 0)
    summary = _LABELS[level] if not causes else (
        f"{_LABELS[level]}: " + ", ".join(f"{_plural(n, _WORDS[c][0], _WORDS[c][1])}"
                                          for c, n in _counts(causes)))
    return Measurement(level, tuple(evidence), summary, _ranked_causes(causes, _CAUSES))


_WORDS = {"broken_check": ("check broken", "checks broken"),
          "final_check_failed": ("failing final check", "failing final checks"),
          "code_elided": ("file written with code left out", "files written with code left out"),
          "syntax_error": ("file that does not compile", "files that do not compile"),
          "test_deleted": ("test deleted", "tests deleted"),
          "test_skipped": ("test skipped", "tests skipped"),
          "test_weakened": ("test changed to pass", "tests changed to pass"),
          "user_found": ("breakage the user found", "breakages the user found"),
          "debug_left": ("debug statement left", "debug statements left"),
          "unused_import": ("unused import", "unused imports"),
          "commented_code": ("block of commented-out code", "blocks of commented-out code"),
          "todo_added": ("TODO added", "TODOs added"),
          "unverified": ("change never checked", "changes never checked")}


def _counts(causes: list[str]) -> list[tuple[str, int]]:
    seen: dict[str, int] = {}
    for cause in causes:
        seen[cause] = seen.get(cause, 0) + 1
    return sorted(seen.items(), key=lambda kv: _CAUSES.index(kv[0]))


def _found_and_edited(facts: Facts) -> list[str]:
    """Code files the session edited but did not write itself: the files it found there."""
    # Written whole by the session (a Write, SWE-agent's `create`): the agent's own file.
    written = {p for t in facts.tool_turns if t.kind is ToolKind.WRITE for p in t.paths}
    found = []
    for path, records in facts.edits_by_path.items():
        first = records[0].edit
        if first.created or (first.whole_file and first.before is None) or \
                PROSE_ONLY.search(path) or \
                any(p == path or p.endswith("/" + path) or path.endswith("/" + p) for p in written):
            continue
        found.append(path)
    return found


# The user reports that the changed code now fails: an error met running it ("TypeError: ...",
# "an error pops up when I run the app"), a crash, a page that no longer loads.
_BREAKAGE = CaselessPattern(
    r"\b(?:\w*error|\w*exception|traceback|crash(?:es|ed|ing)?|broken|broke"
    r"|(?:doesn'?t|does not|won'?t|will not|isn'?t|is not|not) (?:work(?:ing)?|start(?:ing)?"
    r"|load(?:ing)?|run(?:ning)?|compil\w+|build\w*)|blank (?:page|screen)|fails?|failing)\b")


def _breakages_the_user_met(facts: Facts, signal) -> None:
    """A change request the user answered by reporting the changed code broken (a pasted error,
    "it crashes now"): the session introduced a regression the user had to find, even when
    it was fixed afterwards."""
    edit_turns = sorted(r.turn for r in facts.edits if not PROSE_ONLY.search(r.path))
    for request in facts.main_requests:
        for at in request.rejected_at:
            i = bisect.bisect_right(edit_turns, request.turn)
            if i >= len(edit_turns) or edit_turns[i] >= at:
                continue  # nothing of the code was changed before the report
            text = facts.turn(at).content or ""
            if _BREAKAGE.search(text[:2000]):
                signal(at, f"the user met a breakage the change produced: {_quote(text)}",
                       "user_found")
                break


def _quote(text: str) -> str:
    line = next((l.strip() for l in text.splitlines() if l.strip()), "")
    return quote(line, 100) + ("…" if len(line) > 100 else "")


def _verification_signals(facts: Facts, signal) -> None:
    """Whether the final code was shown to work: the last check after the last code edit
    failing is a regression left behind; no real check at all leaves the change unverified;
    a failing check turned green by editing only the tests proves nothing about the code."""
    code_edits = [turn for turn, path in facts.changes
                  if path is not None and not PROSE_ONLY.search(path)]
    code_edits += [t for t in facts.unlocated_edits]
    if not code_edits:
        return
    last_code_edit = max(code_edits)
    found = _found_and_edited(facts)
    # A run of the changed code shows it works: of a file found there and edited; or, when
    # the session only wrote code of its own (a new script, a new project), of that code.
    ran = found or [path for path in facts.edits_by_path if not PROSE_ONLY.search(path)]
    after = [c for c in facts.checks if c.turn > last_code_edit and (
        c.kind in PROJECT_CHECKS or (c.kind == "run" and runs_one_of(c.command, ran)))]
    decided = [c for c in after if c.passed is not None]
    if decided and decided[-1].passed is False:
        if not any(e.turn > decided[-1].turn for e in facts.edits):
            signal(decided[-1].turn, f"the last check after the last code edit fails: "
                                     f"{quote(decided[-1].command, 100)}", "final_check_failed")
    elif not decided and not any(r.forbids_checks for r in facts.main_requests):
        if after:  # a check ran, but its output shows no verdict (cut off, printed nothing)
            signal(after[-1].turn, f"the check after the last code edit shows no pass or "
                                   f"failure, so the change is unverified: "
                                   f"{quote(after[-1].command, 100)}", "unverified")
        else:
            signal(last_code_edit, "no test, build or lint ran after the last code edit, so "
                                   "the change is unverified", "unverified")
    test_edits = {turn for turn, path in facts.changes
                  if path is not None and TEST_FILE.search(path)}
    changes = sorted(set(code_edits) | test_edits)
    # One pass over the checks: a test run that failed and the next test run that passed,
    # with only tests edited between them. A failing type check, build or lint fixed by
    # editing tests is the tests following a changed interface (they no longer compiled), not
    # an expectation bent to fit the code.
    pending: dict[str, int] = {}  # kind -> turn of its latest failing run
    for c in facts.checks:
        if c.kind != "test" or c.passed is None:
            continue
        if c.passed is False:
            pending[c.kind] = c.turn
            continue
        failed_at = pending.pop(c.kind, None)
        if failed_at is None:
            continue
        between = changes[bisect.bisect_right(changes, failed_at):bisect.bisect_left(changes, c.turn)]
        if between and all(t in test_edits for t in between):
            signal(between[0], "a failing check was made to pass by changing the test, not "
                               "the code", "test_weakened")




def _unused_new_imports(tree: ast.AST, text: str, added: set[str], path: str) -> list[str]:
    """Names imported on lines this session added to `path` (`added`: those lines, stripped)
    that the file never uses."""
    if path.endswith("__init__.py") or "__all__" in text:
        return []  # re-exports are the point of these files
    source_lines = text.splitlines()
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    unused: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue  # compiler directives, never "used" by name
        if not 0 < node.lineno <= len(source_lines) or source_lines[node.lineno - 1].strip() not in added:
            continue
        for alias in node.names:
            name = (alias.asname or alias.name).split(".")[0]
            if alias.name != "*" and name not in used and name not in unused:
                unused.append(name)
    return sorted(unused)
