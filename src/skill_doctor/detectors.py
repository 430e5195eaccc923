"""detectors: small registered functions that measure one thing about a session.

Each detector takes the session's `Facts` and its parameters and returns a `Measurement`: the
measured value (which the rubric's bands turn into points), the turns that justify it, and a
one-line summary. Detectors declare their parameters (type, default) beside their code; ids,
points, bands and suggestion text live in `rubric.yaml`. A detector never reads files or config.

Each docstring is the detector's documentation (`skill-doctor rubric explain`): what it
measures, why it matters, an example, and what to do instead.
"""

from __future__ import annotations

import ast
import difflib
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .diffs import changed_lines
from .facts import EditRecord, Facts, is_doc_file, mentions, relative_path
from .model import Role, ToolKind, Turn


@dataclass(frozen=True, slots=True)
class Evidence:
    turn: int
    note: str


@dataclass(frozen=True, slots=True)
class Measurement:
    value: float
    evidence: tuple[Evidence, ...] = ()
    summary: str = ""


@dataclass(frozen=True, slots=True)
class Detector:
    name: str
    func: Callable[[Facts, Mapping[str, Any]], Measurement]
    params: Mapping[str, tuple[type, Any]] = field(default_factory=dict)

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip()

    def __call__(self, facts: Facts, params: Mapping[str, Any] | None = None) -> Measurement:
        merged = {name: default for name, (_, default) in self.params.items()}
        merged.update(params or {})
        return self.func(facts, merged)


DETECTORS: dict[str, Detector] = {}


def detector(name: str, **params: tuple[type, Any]):
    """Register a detector under `name` with its parameters as name=(type, default)."""
    def register(func: Callable[[Facts, Mapping[str, Any]], Measurement]):
        DETECTORS[name] = Detector(name, func, params)
        return func
    return register


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# -- efficiency ---------------------------------------------------------------------------


@detector("goal_outcome", min_answer_words=(int, 8))
def goal_outcome(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Completion level of the goal, 0-3: 3 done and shown, 2 mostly, 1 partial, 0 no progress.

    What it measures: the goal is the first real user request. A request for a change is done
    when files were changed and a check (tests, build, linter, running the program) ran after
    the last edit and passed; edits to documentation or configuration need no check. A question
    is done when the agent answered it. The level drops when a check still fails at the end,
    when the last tool call failed, when the user corrected or interrupted the work, or when no
    check shows the outcome (said in the evidence, rather than guessing high).

    Why it matters: a session that ends without the goal met, or without evidence that it was
    met, leaves the user to finish or verify the work by hand.

    Example: "Fix the failing date parser test" -> two edits, no test run afterwards: level 2,
    citing the last edit ("no check ran after the last edit").

    Instead: run the project's test command after the last edit and report its result.
    """
    goal = facts.goal
    if goal is None:
        return Measurement(0, (), "no user request found")
    after_goal = [t for t in facts.transcript.turns if t.index > goal.index and t.meta is None
                  and t.role is not Role.USER]
    if not after_goal:
        return Measurement(0, (Evidence(goal.index, "the request got no response"),),
                           "the request got no response")
    evidence: list[Evidence] = []
    if facts.asks_for_change:
        if not facts.changed_code:
            level = 1 if facts.tool_turns else 0
            evidence.append(Evidence(goal.index, "a change was asked for, but no file was changed"))
        else:
            last_edit = facts.last_edit_turn or 0
            later = [c for c in facts.checks if c.turn > last_edit]
            decided = [c for c in later if c.passed is not None]
            if decided and decided[-1].passed:
                level = 3
            elif decided:
                level = 1
                evidence.append(Evidence(decided[-1].turn,
                                         f"the last check still fails: {decided[-1].command}"))
            elif all(is_doc_file(p) for p in facts.edited_paths):
                level = 3  # documentation and configuration need no test run
            else:
                level = 2
                evidence.append(Evidence(last_edit, "no check ran after the last edit, so the "
                                                    "transcript cannot show the change works"))
    else:
        answer = facts.final_answer
        if answer is not None and answer.index > goal.index and \
                len(answer.content.split()) >= params["min_answer_words"]:
            level = 3
        else:
            level = 1 if after_goal else 0
            evidence.append(Evidence((answer or goal).index, "the question got no real answer"))

    tools_after = [t for t in facts.tool_turns if t.index > goal.index]
    if tools_after and tools_after[-1].is_error:
        last = tools_after[-1]
        fixed_later = facts.final_answer is not None and facts.final_answer.index > last.index
        if not fixed_later or level == 3:
            level = min(level, 2)
            evidence.append(Evidence(last.index, "the last tool call failed"))
    if facts.corrections:
        level = min(level, 2)
        evidence.extend(Evidence(t, "the user corrected or rejected the work")
                        for t in facts.corrections[:3])
    late_interrupts = [t for t in facts.interruptions
                       if facts.final_answer is None or t > facts.final_answer.index]
    if late_interrupts:
        level = min(level, 2)
        evidence.append(Evidence(late_interrupts[-1], "the user interrupted the agent at the end"))
    labels = {3: "goal met and shown", 2: "mostly complete", 1: "partial progress", 0: "no progress"}
    return Measurement(level, tuple(evidence), labels[level])


_ORIENTATION_FILES = {"claude.md", "agents.md", "gemini.md", "readme.md", "readme", "readme.rst",
                      "package.json", "pyproject.toml", "setup.py", "setup.cfg", "cargo.toml",
                      "go.mod", "makefile", "contributing.md", "tsconfig.json", "skill.md"}


@detector("unused_reads")
def unused_reads(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Files read that the work never used, plus repeated reads of an unchanged file.

    What it measures: every file read is checked against the work. A read is used when the
    file was later edited, sits in the folder of an edited file, is named in the request, or is
    referred to afterwards by the agent (in its messages or its later tool calls). Project
    orientation files (README, CLAUDE.md, AGENTS.md, manifests) are always fair reads. A
    second read of a file that did not change in between counts as waste.

    Why it matters: every off-task read costs a turn and context, and pushes the relevant
    code out of the model's window.

    Example: to fix `src/api/auth.py` the agent reads `docs/history.md` and `scripts/deploy.sh`,
    never mentions them again: 2 unused reads.

    Instead: name the files involved in the request, and keep a map of the project in
    CLAUDE.md / AGENTS.md.
    """
    edited = set(facts.edited_paths)
    edited_dirs = {posixpath.dirname(p) for p in edited}
    goal_text = facts.goal.content if facts.goal else ""
    later_texts: list[tuple[int, str]] = []
    for t in facts.transcript.turns:
        if t.meta is not None:
            continue
        if t.role is Role.ASSISTANT:
            later_texts.append((t.index, t.content))
        elif t.role is Role.TOOL and t.tool_input:
            later_texts.append((t.index, " ".join(str(v) for v in t.tool_input.values())[:4000]))
    edit_turns_by_path: dict[str, list[int]] = {}
    for e in facts.edits:
        edit_turns_by_path.setdefault(e.path, []).append(e.turn)
    for turn, path in facts.shell_writes:
        edit_turns_by_path.setdefault(path, []).append(turn)

    evidence: list[Evidence] = []
    last_read: dict[str, int] = {}
    judged: set[str] = set()
    for turn, path in facts.reads:
        previous = last_read.get(path)
        last_read[path] = turn
        if previous is not None:
            changed_between = any(previous < e < turn for e in edit_turns_by_path.get(path, ()))
            if not changed_between:
                evidence.append(Evidence(turn, f"read {path} again; it had not changed since "
                                               f"turn {previous}"))
            continue
        if path in judged:
            continue
        judged.add(path)
        name = posixpath.basename(path).lower()
        if (path in edited or posixpath.dirname(path) in edited_dirs or name in _ORIENTATION_FILES
                or mentions([goal_text], path)
                or mentions((text for i, text in later_texts if i > turn), path)):
            continue
        evidence.append(Evidence(turn, f"read {path}; never edited or referred to afterwards"))
    n = len(evidence)
    return Measurement(n, tuple(evidence),
                       "every read served the task" if n == 0 else
                       f"{_plural(n, 'read')} did not serve the task")


def _target(turn: Turn) -> str:
    """What a tool call acts on: its file, else its command (whitespace-folded), else its input."""
    if turn.paths:
        return "file:" + turn.paths[0]
    command = turn.command
    if command:
        return "cmd:" + " ".join(command.split())
    return "input:" + repr(sorted((turn.tool_input or {}).items()))[:500]


def _same_attempt(a: Turn, b: Turn, similarity: float) -> bool:
    if a.tool_name != b.tool_name and a.kind != b.kind:
        return False
    ta, tb = _target(a), _target(b)
    if ta == tb:
        return True
    if ta.startswith("cmd:") and tb.startswith("cmd:"):
        return difflib.SequenceMatcher(None, ta, tb, autojunk=False).ratio() >= similarity
    return False


@detector("retry_episodes", window=(int, 3), similarity=(float, 0.8), loop_repeats=(int, 3))
def retry_episodes(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Retry episodes: failed calls repeated (the same or nearly the same), and loops.

    What it measures: a failed tool call followed, within `window` tool calls, by the same call
    or a near-identical one (same file; or a command at least `similarity` alike) is one retry
    episode, however many attempts it takes; a failed edit (old text not found, file not read)
    followed by another edit of that file is one too. A shell command re-run after a real change
    (an edit in between) is not a retry: that is how fixes are tested. The same call with the
    same result `loop_repeats` times or more is a loop and counts as one episode.

    Why it matters: each blind retry costs a turn and usually fails the same way; the contract
    scores none 2, one 1, several 0.

    Example: `npm test` fails with "command not found", the agent runs `npm test` again, then
    `npm run test`: one episode, cited at the first failure.

    Instead: read the error, change something (the file, the command, the environment), then
    try again; document working commands in CLAUDE.md / AGENTS.md.
    """
    window, similarity = params["window"], params["similarity"]
    tools = [t for t in facts.tool_turns]
    edit_turns = sorted({e.turn for e in facts.edits} | {t for t, _ in facts.shell_writes})
    evidence: list[Evidence] = []
    consumed: set[int] = set()
    for i, failed in enumerate(tools):
        if not failed.is_error or failed.index in consumed:
            continue
        attempts = [failed]
        j = i + 1
        while j < len(tools) and j <= i + window + len(attempts) - 1:
            nxt = tools[j]
            if _same_attempt(attempts[-1], nxt, similarity):
                changed = any(attempts[-1].index < e < nxt.index for e in edit_turns)
                is_edit = failed.kind in (ToolKind.EDIT, ToolKind.WRITE)
                if changed and not is_edit:
                    break  # re-run after a real fix: not a retry
                attempts.append(nxt)
                if not nxt.is_error:
                    break
            j += 1
        if len(attempts) > 1:
            consumed.update(a.index for a in attempts)
            what = failed.command or (failed.paths[0] if failed.paths else failed.tool_name)
            evidence.append(Evidence(failed.index,
                                     f"{failed.tool_name} failed and was tried again "
                                     f"{_plural(len(attempts) - 1, 'time')} "
                                     f"(turns {', '.join(str(a.index) for a in attempts)}): "
                                     f"{str(what)[:120]}"))
    # Loops: the same call with the same result, repeated, with no edit in between.
    runs: dict[tuple, list[Turn]] = {}
    for t in tools:
        if t.index in consumed or t.kind in (ToolKind.EDIT, ToolKind.WRITE, ToolKind.PLAN):
            continue
        key = (t.tool_name, _target(t), (t.tool_output or "")[:2000])
        runs.setdefault(key, []).append(t)
    for repeats in runs.values():
        if len(repeats) >= params["loop_repeats"]:
            first, last = repeats[0].index, repeats[-1].index
            if any(first < e < last for e in edit_turns):
                continue
            evidence.append(Evidence(first, f"{repeats[0].tool_name} repeated "
                                            f"{len(repeats)} times with the same result "
                                            f"(turns {', '.join(str(r.index) for r in repeats[:6])})"))
    evidence.sort(key=lambda e: e.turn)
    n = len(evidence)
    return Measurement(n, tuple(evidence), "no retries" if n == 0 else
                       f"{_plural(n, 'retry episode')}")


@detector("turns_per_work", idle_streak=(int, 12))
def turns_per_work(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Turns spent per unit of work done: long sessions that did long work are fine.

    What it measures: real turns (injected text excluded) divided by the work the session
    shows: 1 per user request, 2 per file changed, 1 per 20 changed lines, 1 per check run,
    and 0.5 per distinct file read. The longest stretch of tool calls with no edit and no check
    (at least `idle_streak` long) is cited as where the turns went.

    Why it matters: turns cost time and context; a 60-turn session for a one-line fix means
    the agent was searching, not working.

    Example: 48 turns to change 3 lines in one file after reading 4 files: work = 1 + 2 + 1 +
    2 = 6, 8 turns per unit of work.

    Instead: give the goal, the files and the acceptance check up front; batch independent reads.
    """
    real = facts.transcript.real_turns
    files_read = {p for _, p in facts.reads}
    work = (len(facts.user_turns) + 2 * len(facts.edited_paths) + facts.changed_lines / 20
            + len(facts.checks) + 0.5 * len(files_read))
    work = max(work, 1.0)
    ratio = round(len(real) / work, 2)
    # The longest stretch of tool calls that neither edits nor checks.
    productive = {e.turn for e in facts.edits} | {t for t, _ in facts.shell_writes} | {
        c.turn for c in facts.checks}
    best: tuple[int, int, int] = (0, 0, 0)
    start = count = 0
    for t in facts.tool_turns:
        if t.index in productive:
            count = 0
            continue
        if count == 0:
            start = t.index
        count += 1
        if count > best[0]:
            best = (count, start, t.index)
    evidence = []
    if best[0] >= params["idle_streak"]:
        evidence.append(Evidence(best[1], f"turns {best[1]}-{best[2]}: {best[0]} tool calls in a "
                                          f"row without an edit or a check"))
    summary = (f"{len(real)} turns for {work:.1f} units of work ({ratio} turns per unit)")
    if not evidence and facts.tool_turns:
        evidence.append(Evidence(facts.tool_turns[0].index, summary))
    return Measurement(ratio, tuple(evidence), summary)


# -- code quality -------------------------------------------------------------------------

_GENERATED = re.compile(
    r"(^|/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Pipfile\.lock|uv\.lock"
    r"|Cargo\.lock|go\.sum|composer\.lock|Gemfile\.lock)$"
    r"|(^|/)(node_modules|vendor|third_party|dist|build|target|__pycache__|\.venv|venv)/"
    r"|\.(min\.js|min\.css|pyc|map)$")
_TEST_FILE = re.compile(r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]+$|_test\.\w+$|\.(test|spec)\.\w+$")
_ASSERT = re.compile(r"\b(assert\w*|expect\(|should\b|t\.(Error|Fatal|Fail))")


@detector("misdirected_edits")
def misdirected_edits(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Files edited that should not have been: reverted, generated, outside the project, or tests weakened.

    What it measures: the number of wrongly targeted files among those the session changed:
    a file whose edits were undone later in the session (net change nil); a generated, lock,
    vendored or build file edited by hand; a file outside the project folder (scratch files in
    /tmp excepted); a test file whose assertions were removed without replacement.

    Why it matters: edits to the wrong file are churn at best and hidden breakage at worst
    (a hand-edited lock file, a test weakened to go green).

    Example: the agent edits `dist/app.min.js` instead of `src/app.js`: 1 wrong file.

    Instead: name the target files in the request and list generated or vendored paths as
    off-limits in CLAUDE.md / AGENTS.md.
    """
    cwd = facts.transcript.cwd
    evidence: list[Evidence] = []
    by_path: dict[str, list[EditRecord]] = {}
    for e in facts.edits:
        by_path.setdefault(e.path, []).append(e)
    flagged: set[str] = set()
    for path, records in sorted(by_path.items()):
        first, last = records[0], records[-1]
        if _GENERATED.search(path):
            evidence.append(Evidence(first.turn, f"edited generated or vendored file {path} by hand"))
            flagged.add(path)
            continue
        if cwd and path.startswith("/") and not path.startswith(("/tmp/", "/var/tmp/")):
            evidence.append(Evidence(first.turn, f"edited {path}, outside the project ({cwd})"))
            flagged.add(path)
            continue
        if _reverted(records):
            evidence.append(Evidence(last.turn, f"the edits to {path} were undone later: "
                                                f"net change nil"))
            flagged.add(path)
            continue
        if _TEST_FILE.search(path):
            removed = added = 0
            for r in records:
                plus, minus = changed_lines(r.edit.diff)
                removed += sum(1 for line in minus if _ASSERT.search(line))
                added += sum(1 for line in plus if _ASSERT.search(line))
            if removed > added:
                evidence.append(Evidence(records[0].turn, f"removed {removed - added} "
                                                          f"assertion(s) from test file {path}"))
                flagged.add(path)
    n = len(flagged)
    return Measurement(n, tuple(evidence), "all edits on target" if n == 0 else
                       f"{_plural(n, 'file')} wrongly targeted")


def _reverted(records: list[EditRecord]) -> bool:
    """Whether a file's edits cancel out: the final text equals the text before the first edit."""
    first, last = records[0].edit, records[-1].edit
    if first.before is not None and last.after is not None:
        return first.before == last.after and len(records) > 1
    if len(records) > 1:
        olds = [r.edit.old for r in records]
        news = [r.edit.new for r in records]
        # An edit whose new text restores an earlier edit's old text (and removes its new text).
        for i, record in enumerate(records):
            for later in records[i + 1:]:
                if (record.edit.new and later.edit.old == record.edit.new
                        and later.edit.new == record.edit.old):
                    return True
        return olds[0] is not None and olds[0] == news[-1] and news[0] == olds[-1]
    return False


def _whitespace_only(edit_diff: str) -> bool:
    plus, minus = changed_lines(edit_diff)
    if not plus and not minus:
        return False
    return ["".join(l.split()) for l in plus if l.strip()] == ["".join(l.split()) for l in minus if l.strip()]


@detector("diff_bloat", churn_ratio=(float, 3.0), small_change=(float, 0.5))
def diff_bloat(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Bloat in the changes: whole-file rewrites for small changes, whitespace-only hunks, churn.

    What it measures: the number of bloat signals. A whole-file write over an existing file
    that changed less than `small_change` of its lines (a targeted edit would do); an edit that
    changes only whitespace or formatting; a file whose lines written across all its edits
    exceed `churn_ratio` times its net change (the agent rewrote its own work over and over).

    Why it matters: bloated diffs are hard to review and hide the real change; rewriting whole
    files risks dropping code the agent never looked at.

    Example: to change one constant, the agent rewrites a 300-line file with Write: one signal.

    Instead: make targeted edits and leave formatting to the project's formatter.
    """
    evidence: list[Evidence] = []
    by_path: dict[str, list[EditRecord]] = {}
    for e in facts.edits:
        by_path.setdefault(e.path, []).append(e)
    for path, records in sorted(by_path.items()):
        for r in records:
            edit = r.edit
            if edit.whole_file and not edit.created and edit.before:
                total = max(len(edit.before.splitlines()), 1)
                share = max(r.added, r.removed) / total
                if total >= 20 and share < params["small_change"]:
                    evidence.append(Evidence(r.turn, f"rewrote all of {path} ({total} lines) to "
                                                     f"change {max(r.added, r.removed)}"))
            elif _whitespace_only(edit.diff):
                evidence.append(Evidence(r.turn, f"whitespace-only change to {path}"))
        churn = sum(r.added + r.removed for r in records)
        net = _net_change(records)
        if net is not None and len(records) > 2 and churn > params["churn_ratio"] * max(net, 1) \
                and churn >= 30:
            evidence.append(Evidence(records[-1].turn,
                                     f"{path}: {churn} lines written over {len(records)} edits "
                                     f"for a net change of {net}"))
    n = len(evidence)
    return Measurement(n, tuple(evidence), "surgical edits" if n == 0 else
                       f"{_plural(n, 'bloat signal')}")


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


@detector("style_drift", max_line_length=(int, 120))
def style_drift(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Added lines that break the edited file's own conventions.

    What it measures: for each edited file whose surrounding text is known, the conventions
    the added lines break, each counted once per file: indentation kind (tabs vs spaces) and
    width, trailing whitespace, lines longer than both `max_line_length` and the file's longest
    line, quote style in Python, a final newline dropped.

    Why it matters: code that ignores local conventions reads as foreign, causes noisy diffs
    and formatter churn.

    Example: a file indented with tabs gains a function indented with four spaces: one deviation.

    Instead: match the file's style, and run the project's formatter after editing.
    """
    evidence: list[Evidence] = []
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
            problems.append(("final-newline", "dropped the final newline"))
        for key, message in problems:
            if (r.path, key) not in seen:
                seen.add((r.path, key))
                evidence.append(Evidence(r.turn, f"{r.path}: {message}"))
    n = len(evidence)
    return Measurement(n, tuple(evidence), "consistent with the files' style" if n == 0 else
                       f"{_plural(n, 'style deviation')}")


def _indent_kind(lines: list[str]) -> str | None:
    tabs = sum(1 for l in lines if l.startswith("\t"))
    spaces = sum(1 for l in lines if l.startswith("  "))
    if tabs + spaces < 2:
        return None
    return "tabs" if tabs > spaces else "spaces"


def _style_problems(existing: list[str], added: list[str], path: str, limit: int
                    ) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    file_kind = _indent_kind(existing)
    added_kind = _indent_kind(added)
    if file_kind and added_kind and file_kind != added_kind:
        problems.append(("indent", f"indented with {added_kind} in a file indented with {file_kind}"))
    existing_trailing = any(l != l.rstrip() for l in existing)
    trailing = [l for l in added if l.strip() and l != l.rstrip()]
    if trailing and not existing_trailing:
        problems.append(("trailing-space", f"{_plural(len(trailing), 'added line')} with trailing "
                                           f"whitespace"))
    longest = max((len(l) for l in existing), default=0)
    too_long = [l for l in added if len(l) > max(limit, longest)]
    if too_long:
        problems.append(("line-length", f"{_plural(len(too_long), 'added line')} longer than "
                                        f"{max(limit, longest)} characters"))
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


_DEBUG = re.compile(r"\b(breakpoint\(\)|pdb\.set_trace\(\)|import i?pdb|debugger;|binding\.pry"
                    r"|dbg!\(|console\.log\(\s*['\"]debug|var_dump\()", re.I)
_TODO = re.compile(r"(#|//|/\*|--|<!--)\s*(TODO|FIXME|XXX|HACK)\b")
_SKIP = re.compile(r"(@pytest\.mark\.skip|@unittest\.skip|\bpytest\.skip\(|\b(it|describe|test)"
                   r"\.skip\(|\bx(it|describe)\(|\bt\.Skip\(|#\[ignore\])")
_CODE_SUFFIX = re.compile(r"\.(py|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|cc|cpp|h|hpp|cs|swift"
                          r"|scala|sh|lua|m|mm|ex|exs|dart|vue|svelte)$")


@detector("regressions_introduced")
def regressions_introduced(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Problems the changes introduced: failing checks, syntax errors, debug leftovers, skipped tests.

    What it measures: the number of regression signals. A check that passed earlier in the
    session and fails after the last edit; a Python file whose resulting text (when the
    transcript shows it whole) does not compile; debug statements or breakpoints added; TODO /
    FIXME markers added to code; tests skipped or deleted; imports added to a Python file and
    never used in it.

    Why it matters: these are the defects reviewers most often catch late, and each one means
    the agent left the code worse than a finished change should.

    Example: the agent adds `import pdb; pdb.set_trace()` while debugging and never removes it.

    Instead: run the checks after the last edit, and remove debugging aids before finishing.
    """
    evidence: list[Evidence] = []
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
                evidence.append(Evidence(turn, f"passed earlier, fails after the last edit: {key[:120]}"))
    latest_after: dict[str, tuple[int, str]] = {}
    for r in facts.edits:
        added, removed = changed_lines(r.edit.diff)
        code = bool(_CODE_SUFFIX.search(r.path))
        for line in added:
            if code and _DEBUG.search(line):
                evidence.append(Evidence(r.turn, f"debug statement added to {r.path}: {line.strip()[:80]}"))
                break
        if code:
            todo = [l for l in added if _TODO.search(l)]
            if todo:
                evidence.append(Evidence(r.turn, f"TODO/FIXME added to {r.path}: {todo[0].strip()[:80]}"))
        skipped = [l for l in added if _SKIP.search(l)]
        if skipped:
            evidence.append(Evidence(r.turn, f"test skipped in {r.path}: {skipped[0].strip()[:80]}"))
        if r.edit.deleted and _TEST_FILE.search(r.path):
            evidence.append(Evidence(r.turn, f"test file deleted: {r.path}"))
        if r.path.endswith(".py") and r.edit.after is not None:
            latest_after[r.path] = (r.turn, r.edit.after)
    for path, (turn, text) in sorted(latest_after.items()):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            line = getattr(exc, "lineno", None)
            evidence.append(Evidence(turn, f"{path} no longer compiles"
                                           + (f" (line {line})" if line else "")))
            continue
        unused = _unused_new_imports(tree, text, facts, path)
        if unused:
            evidence.append(Evidence(turn, f"import added to {path} but never used: "
                                           f"{', '.join(unused[:3])}"))
    evidence.sort(key=lambda e: e.turn)
    n = len(evidence)
    return Measurement(n, tuple(evidence), "no regressions seen" if n == 0 else
                       f"{_plural(n, 'regression signal')}")


def _unused_new_imports(tree: ast.AST, text: str, facts: Facts, path: str) -> list[str]:
    """Names imported on lines this session added to `path` that the file never uses."""
    if path.endswith("__init__.py") or "__all__" in text:
        return []  # re-exports are the point of these files
    added = {line.strip() for r in facts.edits if r.path == path
             for line in changed_lines(r.edit.diff)[0]}
    source_lines = text.splitlines()
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    unused: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if not 0 < node.lineno <= len(source_lines) or source_lines[node.lineno - 1].strip() not in added:
            continue
        for alias in node.names:
            name = (alias.asname or alias.name).split(".")[0]
            if alias.name != "*" and name not in used and name not in unused:
                unused.append(name)
    return sorted(unused)
