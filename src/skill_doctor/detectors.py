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
import bisect
import difflib
import functools
import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .diffs import changed_lines
from .facts import EditRecord, Facts, classify_check, is_doc_file, relative_path, word_count
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
    # What caused the lost points, most weighty first; the rubric may hold a suggestion per
    # cause (`suggestions:`), so the advice names the set-up change that fits this session.
    causes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Detector:
    name: str
    func: Callable[[Facts, Mapping[str, Any]], Measurement]
    params: Mapping[str, tuple[type, Any]] = field(default_factory=dict)
    causes: tuple[str, ...] = ()

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip()

    def __call__(self, facts: Facts, params: Mapping[str, Any] | None = None) -> Measurement:
        merged = {name: default for name, (_, default) in self.params.items()}
        merged.update(params or {})
        return self.func(facts, merged)


DETECTORS: dict[str, Detector] = {}


def detector(name: str, causes: tuple[str, ...] = (), **params: tuple[type, Any]):
    """Register a detector under `name`: its causes and its parameters as name=(type, default)."""
    def register(func: Callable[[Facts, Mapping[str, Any]], Measurement]):
        DETECTORS[name] = Detector(name, func, params, causes)
        return func
    return register


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def _ranked_causes(found: list[str], declared: tuple[str, ...]) -> tuple[str, ...]:
    """Causes by how often they were seen, ties in declaration order (deterministic)."""
    counts = Counter(found)
    return tuple(sorted(counts, key=lambda c: (-counts[c], declared.index(c))))


# -- efficiency ---------------------------------------------------------------------------

_CLAIMS_SUCCESS = re.compile(
    r"\b(all (\d+ )?(tests|checks) (now )?pass(ed|ing)?|tests? (now )?pass(es|ed|ing)?|(is|are) (now )?"
    r"(fixed|working|passing|green)|successfully|works now|now works|build (now )?succeeds"
    r"|fixed (it|the|both|all)|everything (works|passes)|done[.!])", re.I)
_ADMITS_FAILURE = re.compile(r"\b(still (fail|broken|not)|fails?\b|failing|not (yet )?(pass|work)"
                             r"|couldn'?t|could not|unable|error remains|remaining (failure|error))",
                             re.I)


@detector("goal_outcome", causes=("unfinished", "false_claim", "check_failed", "no_check",
                                  "corrected", "interrupted", "last_call_failed", "unanswered"),
          min_answer_words=(int, 8))
def goal_outcome(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Completion level of the goal, 0-3: 3 done and shown, 2 mostly, 1 partial, 0 no progress.

    What it measures: the goal is the first real user request. A request for a change is done
    when files were changed and a check (tests, build, linter, running the program) ran after
    the last edit and passed; edits to documentation or configuration need no check. A question
    or an investigation ("why does X", "investigate Y") is done when the agent answered it. The
    level drops when a check still fails at the end (and the final message claiming success
    anyway is called out), when the last tool call failed, when the user corrected the work and
    the agent never acted on it, when the user interrupted at the end, or when no check shows
    the outcome (said in the evidence, rather than guessing high). A question is answered by
    any assistant message after it of `min_answer_words` words or more (CJK text counted by
    characters). 0 ("no progress") only when
    nothing toward the goal happened.

    Why it matters: a session that ends without the goal met, or without evidence that it was
    met, leaves the user to finish or verify the work by hand.

    Example: "Fix the failing date parser test" -> two edits, no test run afterwards: level 2,
    citing the last edit ("no check ran after the last edit").

    Instead: run the project's test command after the last edit and report its result
    truthfully; put that command in CLAUDE.md / AGENTS.md so the agent knows it.
    """
    goal = facts.goal
    if goal is None:
        return Measurement(0, (), "no user request found", ("unfinished",))
    after_goal = [t for t in facts.transcript.turns if t.index > goal.index and t.meta is None
                  and t.role is not Role.USER]
    if not after_goal:
        return Measurement(0, (Evidence(goal.index, "the request got no response"),),
                           "the request got no response", ("unfinished",))
    evidence: list[Evidence] = []
    causes: list[str] = []
    answer = facts.final_answer
    if facts.asks_for_change:
        if not facts.made_changes:
            level = 1 if facts.tool_turns else 0
            evidence.append(Evidence(goal.index, "a change was asked for, but no file was changed"))
            causes.append("unfinished")
        else:
            last_edit = facts.last_edit_turn or 0
            decided = [c for c in facts.checks if c.turn > last_edit and c.passed is not None]
            if decided and decided[-1].passed:
                level = 3
            elif decided:
                level = 1
                last = decided[-1]
                evidence.append(Evidence(last.turn, f"the last check still fails: {last.command[:120]}"))
                causes.append("check_failed")
                if answer is not None and answer.index > last.turn and \
                        _CLAIMS_SUCCESS.search(answer.content) and \
                        not _ADMITS_FAILURE.search(answer.content):
                    evidence.append(Evidence(answer.index, f"the final message claims success, but "
                                                           f"the check at turn {last.turn} failed"))
                    causes.insert(0, "false_claim")
            elif facts.edited_paths and not facts.unlocated_edits and \
                    all(is_doc_file(p) for p in facts.edited_paths):
                level = 3  # documentation and configuration need no test run
            else:
                level = 2
                code_edits = [t for t, p in _edits_with_paths(facts) if not is_doc_file(p)]
                code_edits += facts.unlocated_edits  # no file named: cannot be shown to be docs
                undecided = [c for c in facts.checks if c.turn > last_edit]
                if undecided:  # it ran, but its output shows neither a pass nor a failure
                    evidence.append(Evidence(undecided[-1].turn, "the check after the last edit "
                                             "shows no pass or failure: "
                                             f"{undecided[-1].command[:120]}"))
                else:
                    evidence.append(Evidence(max(code_edits, default=last_edit),
                                             "no check ran after the last edit, so the "
                                             "transcript cannot show the change works"))
                causes.append("no_check")
    else:
        # Any real answer after the request counts: a session that goes on to other requests
        # may end on a short "ok" / "thumbs up" exchange.
        if any(a.index > goal.index and word_count(a.content) >= params["min_answer_words"]
               for a in facts.assistant_turns):
            level = 3
        else:
            level = 1
            evidence.append(Evidence((answer or goal).index, "the question got no real answer"))
            causes.append("unanswered")

    tools_after = [t for t in facts.tool_turns if t.index > goal.index]
    if tools_after and tools_after[-1].index in facts.failed:
        last = tools_after[-1]
        answered_later = answer is not None and answer.index > last.index
        if not answered_later or level == 3:
            level = min(level, 2)
            evidence.append(Evidence(last.index, "the last tool call failed"))
            causes.append("last_call_failed")
    # A correction the agent acted on (changed files afterwards, and a check passed if one
    # ran) is part of the work; one it never acted on means the user was left unsatisfied.
    last_edit_turn = facts.last_edit_turn or 0
    unresolved = [t for t in facts.corrections if last_edit_turn < t]
    if unresolved or (facts.corrections and level == 3 and not _passed_after(facts, facts.corrections[-1])):
        level = min(level, 2)
        evidence.extend(Evidence(t, "the user corrected or rejected the work")
                        for t in (unresolved or facts.corrections)[:3])
        causes.append("corrected")
    late_interrupts = [t for t in facts.interruptions if answer is None or t > answer.index]
    if late_interrupts:
        level = min(level, 2)
        evidence.append(Evidence(late_interrupts[-1], "the user interrupted the agent at the end"))
        causes.append("interrupted")
    labels = {3: "goal met and shown", 2: "mostly complete", 1: "partial progress", 0: "no progress"}
    evidence.sort(key=lambda e: e.turn)
    return Measurement(level, tuple(evidence), labels[level],
                       tuple(dict.fromkeys(causes)))


def _edit_turns(facts: Facts) -> list[int]:
    return [e.turn for e in facts.edits] + [t for t, _ in facts.shell_writes] + list(
        facts.unlocated_edits)


def _edits_with_paths(facts: Facts) -> list[tuple[int, str]]:
    return [(e.turn, e.path) for e in facts.edits] + list(facts.shell_writes)


def _passed_after(facts: Facts, turn: int) -> bool:
    decided = [c for c in facts.checks if c.turn > turn and c.passed is not None]
    return bool(decided) and bool(decided[-1].passed)


_ORIENTATION_FILES = {"claude.md", "agents.md", "gemini.md", "readme.md", "readme", "readme.rst",
                      "package.json", "pyproject.toml", "setup.py", "setup.cfg", "cargo.toml",
                      "go.mod", "makefile", "contributing.md", "tsconfig.json", "skill.md",
                      "conftest.py", "tox.ini", "pytest.ini", ".cursorrules"}
# Files a session writes for itself (background command output, scratch files): reading them
# back is following the work, not exploring the project.
_SCRATCH = re.compile(r"^(/private)?/tmp/|^/var/folders/|(^|/)AppData/Local/Temp/|(^|/)tasks/[^/]+"
                      r"\.output$|^/dev/", re.I)
_NAME_TOKEN = re.compile(r"[\w.\-]+")
_IMPORT_SPEC = re.compile(
    r"^\s*(?:from\s+(\.*[\w.]*)\s+import\s+\(?([\w\s,*]+)|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))"
    r"|(?:\bfrom\s+|\bimport\s*\(?\s*|\brequire\s*\(\s*)['\"]([^'\"\n]+)['\"]"
    r"|#\s*include\s*[<\"]([^>\"\n]+)[>\"]|\bmod\s+(\w+)\s*;|\buse\s+((?:crate|super|self)(?:::\w+)+)",
    re.MULTILINE)
_VENDORED_TREE = re.compile(r"(^|/)(node_modules|site-packages|\.venv|venv|vendor|\.git|target"
                            r"|__pycache__|\.cache|Library|\.npm|\.cargo|bower_components)/")
_HOME_OR_ROOT = re.compile(r"^(/|~/?|/Users/[^/]+/?|/home/[^/]+/?|/root/?|/[a-z]/Users/[^/]+/?"
                           r"|[A-Za-z]:[/\\](Users[/\\][^/\\]+[/\\]?)?)$")
_SHELL_BROAD = re.compile(r"^\s*(?:sudo\s+)?(find|grep\s+-\w*[rR]\w*|rg|ag|fd|ls\s+-\w*R\w*|tree)\s+"
                          r"(?:-\S+\s+)*['\"]?(/|~/?|\$HOME/?|/Users/[^/\s]+/?|/home/[^/\s]+/?)['\"]?"
                          r"(\s|$)")


def _name_tokens(text: str) -> set[str]:
    """File-name-like words of a text ("src/pager.py." gives src, pager.py)."""
    return {tok.strip(".-") for tok in _NAME_TOKEN.findall(text)}


def _import_tokens(text: str) -> set[str]:
    """Module names a source text imports, split into parts (`from .util import x` -> util, x)."""
    tokens: set[str] = set()
    for match in _IMPORT_SPEC.finditer(text):
        for group in match.groups():
            if group:
                tokens.update(part for part in re.split(r"[./:\s,()*]+", group) if len(part) > 1)
    return tokens


def _stem(path: str) -> str:
    name = posixpath.basename(path)
    return name.split(".", 1)[0] if not name.startswith(".") else name


def _module_names(path: str) -> set[str]:
    """The names other code imports this file by: its stem, or its folder for package files."""
    stem = _stem(path)
    if stem in ("__init__", "index", "mod", "lib", "main") and posixpath.dirname(path):
        return {posixpath.basename(posixpath.dirname(path))}
    return {stem}


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
    lines = [l for l in (turn.tool_output or "").splitlines() if l.strip()]
    if len(lines) >= 20:
        vendored = sum(1 for l in lines if _VENDORED_TREE.search(l.replace("\\", "/")))
        if vendored * 2 > len(lines):
            return f"{vendored} of {len(lines)} results were inside dependency or tool folders"
    return None


@detector("unused_reads", causes=("unused_read", "repeated_read", "broad_search"))
def unused_reads(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Files read that the work never used, repeated reads of an unchanged file, broad searches.

    What it measures: every file read is checked against the work. A read is used when the
    file was later edited, sits in the folder of an edited file, is imported by an edited file
    (or imports one), is a test of an edited module, is named in the request, or is referred
    to afterwards by the agent (in its messages or its later tool calls). Project orientation
    files (README, CLAUDE.md, AGENTS.md, manifests) and the session's own scratch output are
    always fair reads. When the request is a question or an investigation, reading is the work:
    only repeats and broad searches count. A second read of the same part of a file that did
    not change in between counts (reads of other line ranges, `sed -n '200,340p' f` after
    `sed -n '1,120p' f`, are not repeats; nor are reads whose range and result the log does
    not keep), and so does a search or listing that swept an unrelated tree (the home
    folder, the disk root, or results mostly inside node_modules and the like).

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
    judge_use = facts.asks_for_change and facts.changed_code  # unlocated edits: cannot judge use
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
    edit_turns_by_path: dict[str, list[int]] = {}
    for e in facts.edits:
        edit_turns_by_path.setdefault(e.path, []).append(e.turn)
    for turn, path in facts.shell_writes:
        edit_turns_by_path.setdefault(path, []).append(turn)
    for turns in edit_turns_by_path.values():
        turns.sort()

    evidence: list[Evidence] = []
    causes: list[str] = []
    last_read: dict[str, int] = {}
    judged: set[str] = set()
    for turn, path in facts.reads:
        previous = last_read.get(path)
        last_read[path] = turn
        if previous is not None:
            turns = edit_turns_by_path.get(path, ())
            after = bisect.bisect_right(turns, previous)  # edit turns are in session order
            changed_between = after < len(turns) and turns[after] < turn
            window = facts.read_windows.get((turn, path))
            if not changed_between and not _SCRATCH.search(path) and window is not None \
                    and window == facts.read_windows.get((previous, path)):
                evidence.append(Evidence(turn, f"read {path} again; it had not changed since "
                                               f"turn {previous}"))
                causes.append("repeated_read")
            continue
        if not judge_use or path in judged:
            continue
        judged.add(path)
        name = posixpath.basename(path)
        if (path in edited or posixpath.dirname(path) in edited_dirs
                or name.lower() in _ORIENTATION_FILES or _SCRATCH.search(path)
                or name in goal_names or last_named.get(name, 0) > turn
                or _module_names(path) & imported
                or (_TEST_FILE.search(path) and any(m in _stem(path) for m in edited_modules))
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


# -- retries ------------------------------------------------------------------------------

_COSMETIC = (
    re.compile(r"^\s*cd\s+\S+\s*&&\s*"),            # cd somewhere && ...
    re.compile(r"^\s*(?:\w+=\S+\s+)+"),              # ENV=x ...
    re.compile(r"\s+\d?>>?\s*(?:&\d|/dev/null)"),   # 2>&1, 2>/dev/null
    re.compile(r"\s*\|\s*(?:head|tail|less|more|cat)(?:\s+-?[\w=]+)*\s*$"),  # | tail -20
    re.compile(r"^\s*timeout\s+\S+\s+"),
)
_INVOCATION_ERROR = re.compile(
    r"command not found|is not recognized as|No module named|ModuleNotFoundError|Missing script"
    r"|Unknown (command|script)|no tests ran|file or directory not found|Cannot find module"
    r"|could not find|not installed|No such file or directory|Exit code 127|unrecognized arguments"
    r"|no such option|not a valid command|No rule to make target", re.I)


@functools.lru_cache(maxsize=8192)
def _normal_command(command: str) -> str:
    """A command without cosmetic wrappers: `cd x && npm test 2>&1 | tail` is `npm test`."""
    text = " ".join(command.split())
    for pattern in _COSMETIC:
        text = pattern.sub("", text)
    return " ".join(text.split())


def _target(turn: Turn) -> str:
    """What a tool call acts on: its file, else its command (normalized), else its input."""
    if turn.paths and turn.kind in (ToolKind.EDIT, ToolKind.WRITE):
        return "file:" + turn.paths[0]
    if turn.paths and turn.kind is ToolKind.READ:
        # Reading a file after a failed edit of it is the cure, not a retry of the edit.
        return "read:" + turn.paths[0]
    command = turn.command
    if command:
        return "cmd:" + _normal_command(command)
    if turn.paths:
        return "file:" + turn.paths[0]
    return "input:" + repr(sorted((turn.tool_input or {}).items()))[:500]


def _positional(command: str) -> tuple[str, ...]:
    """A command's words without its flags: `pytest -x -q t/` and `pytest t/` are alike."""
    return tuple(w for w in _normal_command(command).split() if not w.startswith("-"))


_REFUSAL = re.compile(r"denied|rejected|not allowed|doesn'?t want|permission|blocked by", re.I)


def _error_text(turn: Turn) -> str:
    text = re.sub(r"\d+", "#", (turn.tool_output or "").strip())[:300]
    return text if len(text) >= 10 else ""


@dataclass(slots=True)
class _Episode:
    first: int
    last: int
    turns: list[int]
    what: str
    cause: str
    kind: str  # retry | loop | hunt


@detector("retry_episodes", causes=("failed_edit", "test_command_hunt", "repeated_command",
                                    "same_error", "loop"),
          window=(int, 3), loop_repeats=(int, 3), loop_window=(int, 2))
def retry_episodes(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Retry episodes: failed calls repeated (the same or nearly the same), hunts and loops.

    What it measures: episodes of blind repetition, each counted once however long it runs.
    A failed tool call followed within `window` tool calls by the same call (cosmetic wrappers
    such as `cd x &&`, `2>&1` or `| tail` ignored), or at once by a near-identical one (the
    same command words with different flags), is a retry; a failed edit (old text not found,
    file not read) followed by another edit of that file is one too, unless the file was read
    in between. A search that matched nothing (exit 1, no error) did not fail, so searching
    again with another pattern is no retry; an edit whose output says the patch did not apply
    failed even where the log marks no error. A call failing with the
    same error as the call before it (the same permission denial, say) continues the episode.
    Hunting for the test command (several different test or build commands failing because
    they cannot run at all) is one episode. The same call with the same result `loop_repeats`
    times, each within `loop_window` calls of the last (so two actions alternating count too),
    is a loop. A repeat after a real change (a file edited, another command that changed
    something) or after the user spoke is not a retry: that is how fixes are tested.

    Why it matters: each blind retry costs a turn and usually fails the same way; the contract
    scores none 2, one 1, several 0.

    Example: `npm test` fails with "command not found", the agent runs `npm test 2>&1` again,
    then `npx jest`, `yarn test`: one episode, hunting for the test command.

    Instead: read the error, change something (the file, the command, the environment), then
    try again; document the working commands in CLAUDE.md / AGENTS.md.
    """
    window, loop_repeats, loop_window = params["window"], params["loop_repeats"], params["loop_window"]
    edit_turns = set(_edit_turns(facts))
    failed_turns = facts.failed
    episodes: list[_Episode] = []
    # Open failures by target: (position, turn, user epoch, change epoch, episode or None).
    open_failures: dict[str, tuple[int, Turn, int, int, _Episode | None]] = {}
    hunt: list[Turn] = []
    in_retry: set[int] = set()
    loops: dict[tuple, tuple[int, int, int, list[int]]] = {}  # key -> (pos, epoch, count, turns)
    user_epoch = change_epoch = file_epoch = 0
    previous: tuple[int, Turn, _Episode | None] | None = None
    position = 0
    for t in facts.transcript.turns:
        if t.meta is not None and t.meta != "interrupt":
            continue
        if t.role is Role.USER:
            user_epoch += 1
            previous = None
            _hunt_episode(episodes, hunt, in_retry)
            hunt = []
            continue
        if t.role is not Role.TOOL:
            continue
        position += 1
        t_failed = t.index in failed_turns
        target = _target(t)
        is_edit = t.kind in (ToolKind.EDIT, ToolKind.WRITE)
        episode: _Episode | None = None
        opened = open_failures.get(target)
        if opened is not None:
            pos, failed, u_epoch, c_epoch, ep = opened
            if position - pos <= window and u_epoch == user_epoch and \
                    (c_epoch == change_epoch or failed.kind in (ToolKind.EDIT, ToolKind.WRITE)):
                episode = ep or _new_episode(episodes, failed, "failed_edit" if is_edit
                                             else "repeated_command")
        if episode is None and previous is not None and previous[1].index in failed_turns:
            before = previous[1]
            if before.command and t.command and before.tool_name == t.tool_name and \
                    _positional(before.command) == _positional(t.command):
                episode = previous[2] or _new_episode(episodes, before, "repeated_command")
            elif before.tool_name == t.tool_name and t_failed and \
                    _REFUSAL.search(before.tool_output or "") and \
                    _error_text(before) == _error_text(t):
                episode = previous[2] or _new_episode(episodes, before, "same_error")
        if episode is not None:
            episode.turns.append(t.index)
            episode.last = t.index
            in_retry.add(t.index)
            in_retry.add(episode.first)
        if t_failed:
            open_failures[target] = (position, t, user_epoch, change_epoch, episode)
        else:
            open_failures.pop(target, None)
            if t.kind is ToolKind.READ:
                # the file was read again after a failed edit: the next edit is informed
                for p in t.paths:
                    open_failures.pop("file:" + p, None)
        # Hunting for the test command: different check commands that cannot even start.
        if t.command and classify_check(t.command) in ("test", "build", "typecheck", "lint"):
            if t_failed and _INVOCATION_ERROR.search(t.tool_output or ""):
                hunt.append(t)
            else:
                _hunt_episode(episodes, hunt, in_retry)
                hunt = []
        # Loops: the same call with the same result, again and again, nothing changed between.
        # (A read whose result the log does not keep has no known result to repeat.)
        if not is_edit and t.kind is not ToolKind.PLAN and (t.tool_output or t.command):
            key = (t.tool_name, target, (t.tool_output or "")[:2000])
            state = loops.get(key)
            epoch = user_epoch * 1_000_003 + file_epoch
            if state and position - state[0] <= loop_window and state[1] == epoch:
                turns = state[3] + [t.index]
                loops[key] = (position, epoch, state[2] + 1, turns)
                if state[2] + 1 == loop_repeats:
                    episodes.append(_Episode(turns[0], t.index, turns, t.tool_name or "call",
                                             "loop", "loop"))
                elif state[2] + 1 > loop_repeats:
                    _extend_loop(episodes, turns[0], t.index)
            else:
                loops[key] = (position, epoch, 1, [t.index])
        if t.index in edit_turns:
            change_epoch += 1
            file_epoch += 1
        elif not t_failed and t.kind is ToolKind.SHELL and _changes_state(t.command or ""):
            change_epoch += 1
        previous = (position, t, episode)
    _hunt_episode(episodes, hunt, in_retry)
    merged = _merge_episodes(episodes)
    evidence = [Evidence(ep.first, _describe(ep, facts)) for ep in merged]
    n = len(merged)
    return Measurement(n, tuple(evidence), "no retries" if n == 0 else
                       f"{_plural(n, 'retry episode')}",
                       _ranked_causes([ep.cause for ep in merged],
                                      ("failed_edit", "test_command_hunt", "repeated_command",
                                       "same_error", "loop")))


_READ_ONLY = re.compile(
    r"^(cat|head|tail|less|more|ls|ll|tree|find|fd|grep|egrep|rg|ag|ack|wc|stat|file|du|df|pwd|echo"
    r"|printf|which|whereis|type|whoami|id|env|printenv|date|uname|hostname|ps|top|pgrep|lsof"
    r"|netstat|ss|dig|nslookup|host|ping|traceroute|tracert|curl|wget|jq|yq|sort|uniq|diff|cmp"
    r"|sleep|test|\[|true|git\s+(status|log|diff|show|branch|remote|rev-parse|ls-files|blame"
    r"|check-ignore|config\s+--get)|gh\s+\w+\s+(view|list|status))\b")


def _changes_state(command: str) -> bool:
    """Whether a command may have changed something (not a read-only look or a check)."""
    normal = _normal_command(command)
    return bool(normal) and not _READ_ONLY.match(normal) and not classify_check(normal)


def _new_episode(episodes: list[_Episode], failed: Turn, cause: str) -> _Episode:
    what = failed.command or (failed.paths[0] if failed.paths else failed.tool_name) or "call"
    if cause == "repeated_command" and failed.command and \
            classify_check(failed.command) and _INVOCATION_ERROR.search(failed.tool_output or ""):
        cause = "test_command_hunt"
    episode = _Episode(failed.index, failed.index, [failed.index], str(what), cause, "retry")
    episodes.append(episode)
    return episode


def _hunt_episode(episodes: list[_Episode], hunt: list[Turn], in_retry: set[int]) -> None:
    """Two or more different check commands that could not even start, not already retries."""
    left = [t for t in hunt if t.index not in in_retry]
    commands = list(dict.fromkeys(_normal_command(t.command or "") for t in left))
    if len(commands) >= 2:
        episodes.append(_Episode(left[0].index, left[-1].index, [t.index for t in left],
                                 " / ".join(commands), "test_command_hunt", "hunt"))


def _extend_loop(episodes: list[_Episode], first: int, last: int) -> None:
    for ep in reversed(episodes):
        if ep.kind == "loop" and ep.first == first:
            ep.last = last
            ep.turns.append(last)
            return


def _merge_episodes(episodes: list[_Episode]) -> list[_Episode]:
    """Overlapping episodes are one (a loop of failing calls, two actions alternating)."""
    merged: list[_Episode] = []
    for ep in sorted(episodes, key=lambda e: (e.first, e.last)):
        if merged and ep.first <= merged[-1].last:
            head = merged[-1]
            head.last = max(head.last, ep.last)
            head.turns = sorted(set(head.turns) | set(ep.turns))
            if ep.kind == "loop" and head.kind == "loop" and ep.what != head.what:
                head.what = f"{head.what} and {ep.what} alternating"
            continue
        merged.append(_Episode(ep.first, ep.last, list(ep.turns), ep.what, ep.cause, ep.kind))
    return merged


def _describe(ep: _Episode, facts: Facts) -> str:
    shown = ", ".join(str(t) for t in ep.turns[:6]) + (", ..." if len(ep.turns) > 6 else "")
    if ep.kind == "loop":
        return f"{ep.what} repeated {len(ep.turns)} times with the same result (turns {shown})"
    if ep.kind == "hunt":
        return f"hunted for a working test command (turns {shown}): {ep.what[:120]}"
    first = facts.turn(ep.first)
    if ep.cause == "same_error":
        return (f"{first.tool_name} was refused and called again "
                f"{_plural(len(ep.turns) - 1, 'time')} with the same refusal (turns {shown})")
    return (f"{first.tool_name} failed and was tried again {_plural(len(ep.turns) - 1, 'time')} "
            f"(turns {shown}): {ep.what[:120]}")


# -- turns ------------------------------------------------------------------------------


@detector("turns_per_work", causes=("idle_stretch", "verbose"), idle_streak=(int, 12))
def turns_per_work(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Turns spent per unit of work done: long sessions that did long work are fine.

    What it measures: real turns (injected text excluded) divided by the work the session
    shows: 1 per user request, 2 per file changed (1 per edit whose file the log does not
    name), 1 per 20 changed lines, 1 per check run,
    0.5 per distinct file read, 0.5 per distinct successful command that did something other
    than read or search (a commit, an install, a service restarted), 0.5 per distinct web page
    or search consulted, and for a question 1 per 100 words of the final answer (at most 4).
    In a session that changes code, the longest stretch of tool calls with no edit and no check
    (at least `idle_streak` long) is cited as where the turns went.

    Why it matters: turns cost time and context; a 60-turn session for a one-line fix means
    the agent was searching, not working.

    Example: 48 turns to change 3 lines in one file after reading 4 files: work = 1 + 2 + 1 +
    2 = 6, 8 turns per unit of work.

    Instead: give the goal, the files and the acceptance check up front; batch independent reads.
    """
    real = facts.transcript.real_turns
    files_read = {p for _, p in facts.reads}
    actions: set[str] = set()
    for t in facts.tool_turns:
        if t.index in facts.failed:
            continue
        if t.kind is ToolKind.SHELL and t.command and not classify_check(t.command):
            actions.add(_normal_command(t.command))
        elif t.kind is ToolKind.WEB:
            actions.add(_target(t))
    answer_units = 0.0
    if not facts.asks_for_change and facts.final_answer is not None:
        answer_units = min(word_count(facts.final_answer.content) / 100, 4.0)
    # An edit whose file the log does not name still counts, as 1 (it may touch a file
    # already counted, so not the 2 of a file).
    work = (len(facts.user_turns) + 2 * len(facts.edited_paths) + len(facts.unlocated_edits)
            + facts.changed_lines / 20
            + len(facts.checks) + 0.5 * len(files_read) + 0.5 * len(actions) + answer_units)
    work = max(work, 1.0)
    ratio = round(len(real) / work, 2)
    summary = (f"{len(real)} turns for {work:.1f} units of work ({ratio} turns per unit)")
    evidence = []
    causes = ["verbose"]
    if facts.made_changes:
        # The longest stretch of tool calls that neither edits nor checks.
        productive = set(_edit_turns(facts)) | {c.turn for c in facts.checks}
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
        if best[0] >= params["idle_streak"]:
            evidence.append(Evidence(best[1], f"turns {best[1]}-{best[2]}: {best[0]} tool calls "
                                              f"in a row without an edit or a check"))
            causes = ["idle_stretch"]
    if not evidence and facts.tool_turns:
        evidence.append(Evidence(facts.tool_turns[0].index, summary))
    return Measurement(ratio, tuple(evidence), summary, tuple(causes))


# -- code quality -------------------------------------------------------------------------

_GENERATED = re.compile(
    r"(^|/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Pipfile\.lock|uv\.lock"
    r"|Cargo\.lock|go\.sum|composer\.lock|Gemfile\.lock)$"
    r"|(^|/)(node_modules|vendor|third_party|dist|build|target|__pycache__|\.venv|venv)/"
    r"|\.(min\.js|min\.css|pyc|map)$")
_TEST_FILE = re.compile(r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]+$|_test\.\w+$|\.(test|spec)\.\w+$")
_ASSERT = re.compile(r"\b(assert\w*|expect\(|should\b|t\.(Error|Fatal|Fail))")


@detector("misdirected_edits", causes=("generated", "outside_project", "reverted",
                                       "weakened_test", "off_goal"))
def misdirected_edits(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Files edited that should not have been: reverted, generated, outside the project, off the goal, tests weakened.

    What it measures: the number of wrongly targeted files among those the session changed:
    a file whose edits were undone later in the session (net change nil); a generated, lock,
    vendored or build file edited by hand; a file outside the project folder (scratch files in
    /tmp, and places a user message names, excepted); a test file whose assertions were removed
    without replacement; and, when the request names the files to change, a code file in
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
    for path, records in sorted(by_path.items()):
        first, last = records[0], records[-1]
        if _SCRATCH.search(path):
            continue  # the session's own scratch files are never a wrong target
        if _GENERATED.search(path):
            flag(first.turn, f"edited generated or vendored file {path} by hand", "generated", path)
            continue
        if cwd and path.startswith("/") and not _SCRATCH.search(path) and \
                not _user_named_place(path, user_words):
            flag(first.turn, f"edited {path}, outside the project ({cwd})", "outside_project", path)
            continue
        if _reverted(records):
            flag(last.turn, f"the edits to {path} were undone later: net change nil", "reverted", path)
            continue
        if _TEST_FILE.search(path):
            removed = added = 0
            for r in records:
                plus, minus = changed_lines(r.edit.diff)
                removed += sum(1 for line in minus if _ASSERT.search(line))
                added += sum(1 for line in plus if _ASSERT.search(line))
            if removed > added:
                flag(first.turn, f"removed {removed - added} assertion(s) from test file {path}",
                     "weakened_test", path)
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
                       _ranked_causes(causes, ("generated", "outside_project", "reverted",
                                               "weakened_test", "off_goal")))


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


def _edited_imports(records: list[EditRecord]) -> set[str]:
    tokens: set[str] = set()
    for r in records:
        for text in (r.edit.after, r.edit.before, r.edit.new):
            if text:
                tokens |= _import_tokens(text)
    return tokens


def _reverted(records: list[EditRecord]) -> bool:
    """Whether a file's edits cancel out: the final text equals the text before the first edit."""
    first, last = records[0].edit, records[-1].edit
    if first.before is not None and last.after is not None:
        return first.before == last.after and len(records) > 1
    if len(records) > 1:
        olds = [r.edit.old for r in records]
        news = [r.edit.new for r in records]
        # An edit whose new text restores an earlier edit's old text (and removes its new text);
        # one set lookup per edit keeps this linear however often a file is edited.
        seen: set[tuple[str, str | None]] = set()
        for record in records:
            if record.edit.old is not None and (record.edit.old, record.edit.new) in seen:
                return True
            if record.edit.new:
                seen.add((record.edit.new, record.edit.old))
        return olds[0] is not None and olds[0] == news[-1] and news[0] == olds[-1]
    return False


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


_DEBUG = re.compile(r"\b(breakpoint\(\)|pdb\.set_trace\(\)|import i?pdb|debugger;|binding\.pry"
                    r"|dbg!\(|console\.log\(\s*['\"]debug|var_dump\()", re.I)
_TODO = re.compile(r"(#|//|/\*|--|<!--)\s*(TODO|FIXME|XXX|HACK)\b")
_SKIP = re.compile(r"(@pytest\.mark\.skip|@unittest\.skip|\bpytest\.skip\(|\b(it|describe|test)"
                   r"\.skip\(|\bx(it|describe)\(|\bt\.Skip\(|#\[ignore\])")
_CODE_SUFFIX = re.compile(r"\.(py|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|cc|cpp|h|hpp|cs|swift"
                          r"|scala|sh|lua|m|mm|ex|exs|dart|vue|svelte)$")


_COMMENT_LINE = re.compile(r"^\s*(#|//)", re.M)


# Literal words one of which each leftover pattern needs: a substring test rules most edits
# out far faster than the regular expression would.
_NEEDS = {
    "debug": ("pdb", "breakpoint", "debugger", "binding.pry", "dbg!", "console.log", "var_dump"),
    "todo": ("TODO", "FIXME", "XXX", "HACK"),
    "skip": ("skip", "Skip", "xit(", "xdescribe(", "#[ignore]"),
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
    if match is None:
        return None
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start:] if end == -1 else text[start:end]


_COMMENTED_CODE = re.compile(
    r"^\s*(#|//)(?![!:])\s*(?!(type|noqa|pylint|eslint|ts-|prettier|fmt|nosec|pragma)\b)"
    r"((def|class|import|from|if|elif|else|for|while|try|except|const|let|var|function"
    r"|await|yield)\b.*[:;)\]}]\s*$|return\s+(\S+|.*[-+*/%<>=(\[].*)\s*;?\s*$|[A-Za-z_][\w.\[\]'\"]*\s*(\(.*\)|[-+*/]?=(?!=)\s*\S.*)\s*;?\s*$)")
_RM = re.compile(r"(?:^|&&|;|\|\|)\s*(?:git\s+)?rm\s+((?:-\S+\s+)*)([^;&|]+)")


@detector("regressions_introduced", causes=("broken_check", "syntax_error", "test_deleted",
                                            "test_skipped", "debug_left", "unused_import",
                                            "commented_code", "todo_added"))
def regressions_introduced(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Problems the changes introduced: failing checks, syntax errors, leftovers, skipped tests.

    What it measures: the number of regression signals. A check that passed earlier in the
    session and fails after the last edit; a Python file whose resulting text (when the
    transcript shows it whole) does not compile; debug statements or breakpoints, TODO / FIXME
    markers, and commented-out code (two or more commented lines that parse as code) added to
    code and not removed by a later edit; tests skipped, or test files deleted (by an edit or
    by `rm` / `git rm`); imports added to a Python file and never used in it (`__future__`
    imports are directives, never unused). A file is compiled and checked only when the
    transcript shows its whole text after the session's last edit of it.

    Why it matters: these are the defects reviewers most often catch late, and each one means
    the agent left the code worse than a finished change should.

    Example: the agent adds `import pdb; pdb.set_trace()` while debugging and never removes it.

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
                signal(turn, f"passed earlier, fails after the last edit: {key[:120]}", "broken_check")
    # Leftovers (debug, TODO, commented-out code) still present: a later edit of the same file
    # that removes the line clears it.
    pending: dict[str, list[tuple[int, str, str, str]]] = {}  # path -> (turn, line, note, cause)
    latest_after: dict[str, tuple[int, str]] = {}
    diffs_by_path: dict[str, list[str]] = {}
    for r in facts.edits:
        diffs_by_path.setdefault(r.path, []).append(r.edit.diff)
        added, removed = changed_lines(r.edit.diff)
        if removed and r.path in pending:
            gone = {l.strip() for l in removed}
            pending[r.path] = [p for p in pending[r.path] if p[1] not in gone]
        code = bool(_CODE_SUFFIX.search(r.path))
        # Each pattern runs once over all added lines (one C-level search), not line by line.
        joined = "\n".join(added)
        if code:
            found = pending.setdefault(r.path, [])
            debug = _line_matching(_DEBUG, joined, _NEEDS["debug"], joined.lower())
            if debug is not None:
                found.append((r.turn, debug.strip(), f"debug statement added to {r.path}: "
                                                      f"{debug.strip()[:80]}", "debug_left"))
            todo = _line_matching(_TODO, joined, _NEEDS["todo"])
            if todo is not None:
                found.append((r.turn, todo.strip(), f"TODO/FIXME added to {r.path}: "
                                                    f"{todo.strip()[:80]}", "todo_added"))
            if _COMMENT_LINE.search(joined):
                commented = [l for l in added if _COMMENTED_CODE.match(l)]
                if len(commented) >= 2:
                    found.append((r.turn, commented[0].strip(), f"commented-out code added to "
                                                                f"{r.path}: {commented[0].strip()[:80]}",
                                  "commented_code"))
        skipped = _line_matching(_SKIP, joined, _NEEDS["skip"])
        if skipped is not None:
            signal(r.turn, f"test skipped in {r.path}: {skipped.strip()[:80]}", "test_skipped")
        if r.edit.deleted and _TEST_FILE.search(r.path):
            signal(r.turn, f"test file deleted: {r.path}", "test_deleted")
        if r.path.endswith(".py"):
            if r.edit.after is not None:
                latest_after[r.path] = (r.turn, r.edit.after)
            else:  # a snippet edit made the last known whole text stale
                latest_after.pop(r.path, None)
    for path in sorted(pending):
        for turn, _, note, cause in pending[path]:
            signal(turn, note, cause)
    for t in facts.tool_turns:
        command = t.command
        if command and t.index not in facts.failed and "rm " in command:
            for match in _RM.finditer(command):
                tests = [w for w in match.group(2).split() if _TEST_FILE.search(w.strip("'\""))]
                if tests:
                    signal(t.index, f"test file deleted: {tests[0][:100]}", "test_deleted")
                    break
    for path, (turn, text) in sorted(latest_after.items()):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            line = getattr(exc, "lineno", None)
            signal(turn, f"{path} no longer compiles" + (f" (line {line})" if line else ""),
                   "syntax_error")
            continue
        unused = _unused_new_imports(tree, text, diffs_by_path, path)
        if unused:
            signal(turn, f"import added to {path} but never used: {', '.join(unused[:3])}",
                   "unused_import")
    order = sorted(range(len(evidence)), key=lambda i: evidence[i].turn)
    evidence = [evidence[i] for i in order]
    n = len(evidence)
    return Measurement(n, tuple(evidence), "no regressions seen" if n == 0 else
                       f"{_plural(n, 'regression signal')}",
                       _ranked_causes(causes, ("broken_check", "syntax_error", "test_deleted",
                                               "test_skipped", "debug_left", "unused_import",
                                               "commented_code", "todo_added")))


def _unused_new_imports(tree: ast.AST, text: str, added_by_path: Mapping[str, list[str]],
                        path: str) -> list[str]:
    """Names imported on lines this session added to `path` that the file never uses."""
    if path.endswith("__init__.py") or "__all__" in text:
        return []  # re-exports are the point of these files
    added = {line.strip() for diff in added_by_path.get(path, ())
             for line in changed_lines(diff)[0]}
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
