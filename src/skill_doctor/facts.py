"""facts: what happened in a session, computed once from the Transcript.

Pure functions over the turn list: the goal, files read and edited (with their diffs), shell
commands and the checks among them (tests, builds, linters) with their outcome, failed calls,
interruptions and corrections. Every detector reads these facts, never raw harness JSON, so a
rule works the same for every harness.
"""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass, field
from typing import Mapping

from .diffs import count_changes
from .model import FileEdit, Role, ToolKind, Transcript, Turn
from .tools import shell_read_windows

# Commands that check the work: test runners, builds, type checkers, linters.
_CHECK_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern)) for kind, pattern in (
        ("test", r"\b(pytest|py\.test|unittest|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest"
                 r"|go\s+test|cargo\s+(test|nextest)|(npm|pnpm|yarn|bun)\s+(run\s+)?test"
                 r"|deno\s+test|bun\s+test|mvn\s+(test|verify)|gradlew?\s+(test|check)"
                 r"|dotnet\s+test|swift\s+test|mix\s+test|make\s+(test|check)|rake\s+test)\b"),
        ("typecheck", r"\b(tsc|mypy|pyright|cargo\s+check|go\s+vet|(npm|pnpm|yarn)\s+(run\s+)?"
                      r"(typecheck|type-check|check))\b"),
        ("lint", r"\b(ruff|flake8|pylint|eslint|clippy|golangci-lint|shellcheck|black\s+--check"
                 r"|prettier\s+--check|rubocop|(npm|pnpm|yarn)\s+(run\s+)?lint|pre-commit\s+run)\b"),
        ("build", r"\b(cargo\s+build|go\s+build|(npm|pnpm|yarn|bun)\s+(run\s+)?build|make\b"
                  r"|mvn\s+(package|compile|install)|gradlew?\s+(build|assemble)|dotnet\s+build"
                  r"|swift\s+build|cmake\s+--build|python\d?\s+-m\s+(build|compileall|py_compile))"),
    )
)
_RUN_PROGRAM = re.compile(r"^(?:\S+=\S+\s+)*(python\d?(\.\d+)?|node|ruby|go\s+run|cargo\s+run|deno\s+run"
                          r"|bun\s+run|\./\S+)\b")
_FAILED_OUTPUT = re.compile(r"(\b\d+ (failed|errors?)\b|^FAILED\b|^FAIL\b|Traceback \(most recent"
                            r"|^error(\[\w+\])?:|\bBUILD FAILED\b|npm ERR!)", re.MULTILINE)
_PASSED_OUTPUT = re.compile(r"(\b\d+ passed\b|^OK\b|\ball tests passed\b|^PASS\b|\b0 failed\b"
                            r"|\bBUILD SUCCESS|Finished .*target|test result: ok)", re.MULTILINE | re.I)

_CHANGE_WORDS = re.compile(
    r"\b(fix|add|implement|create|write|update|change|modify|refactor|remove|delete|rename|make"
    r"|build|convert|migrate|replace|edit|improve|optimi[sz]e|support|bump|upgrade|set ?up"
    r"|generate|redact|move|rewrite|port|extend|enable|disable|handle|introduce|clean ?up"
    r"|patch|correct|adjust|tweak|translate|document|speed ?up|publish|save|put|wire|hook ?up"
    r"|resolve|repair|restore|split|merge|inline|extract|simplify|format|stop|dont|don'?t"
    r"|avoid|allow|block|prevent|ensure)\b", re.I)
_CORRECTION = re.compile(
    r"^\s*(no\b|nope|wrong|that'?s (not|wrong)|this is wrong|it (still )?(doesn'?t|does not|didn'?t)"
    r"|still (fail|broken|not|doesn)|you broke|undo|revert|not what i|why did you|stop\b"
    r"|that (broke|didn'?t)|it'?s broken|this (doesn'?t|does not) work)", re.I)

# Files that document or configure rather than run: no test is expected after editing them.
_DOC_SUFFIXES = (".md", ".mdx", ".txt", ".rst", ".adoc", ".json", ".yaml", ".yml", ".toml",
                 ".ini", ".cfg", ".csv", ".env", ".gitignore", ".lock", ".svg", ".html", ".css")


@dataclass(frozen=True, slots=True)
class Check:
    """A command that checks the work, and how it ended (None when the log cannot tell)."""

    turn: int
    command: str
    kind: str  # test | typecheck | lint | build | run
    passed: bool | None


@dataclass(frozen=True, slots=True)
class EditRecord:
    turn: int
    edit: FileEdit
    path: str  # project-relative, POSIX
    added: int
    removed: int


@dataclass(frozen=True, slots=True)
class Facts:
    transcript: Transcript
    goal: Turn | None
    asks_for_change: bool
    user_turns: tuple[Turn, ...]
    assistant_turns: tuple[Turn, ...]
    tool_turns: tuple[Turn, ...]
    reads: tuple[tuple[int, str], ...]  # (turn, path) for every file read
    explorations: tuple[int, ...]  # search and listing turns
    edits: tuple[EditRecord, ...]  # successful edits with a known diff
    shell_writes: tuple[tuple[int, str], ...]  # files changed by shell commands (no diff known)
    failed_edits: tuple[int, ...]
    checks: tuple[Check, ...]
    failures: tuple[int, ...]  # tool turns that failed
    interruptions: tuple[int, ...]
    corrections: tuple[int, ...]  # user messages rejecting or correcting the work
    final_answer: Turn | None  # the last real assistant message
    # Which part of the file each read showed, by (turn, path): (first, last, numbered) or
    # ("filter", text); missing when the log cannot tell (no range asked, no output kept).
    read_windows: Mapping[tuple[int, str], tuple] = field(default_factory=dict)
    # Edit turns whose file the log does not name (old SpecStory exports): a change was made,
    # but no file can be graded.
    unlocated_edits: tuple[int, ...] = ()
    # `failures` as a set, for detectors that ask about each turn (a search that found
    # nothing is no failure; an edit whose output says it did not apply is one).
    failed: frozenset[int] = frozenset()
    # `edits` grouped by file, each file's edits in session order.
    edits_by_path: Mapping[str, tuple[EditRecord, ...]] = field(default_factory=dict)

    @property
    def made_changes(self) -> bool:
        """Whether the session changed anything, even where the log does not say which file."""
        return self.changed_code or bool(self.unlocated_edits)

    @property
    def edited_paths(self) -> tuple[str, ...]:
        return tuple(sorted({e.path for e in self.edits} | {p for _, p in self.shell_writes}))

    @property
    def changed_code(self) -> bool:
        return bool(self.edits or self.shell_writes)

    @property
    def last_edit_turn(self) -> int | None:
        turns = [e.turn for e in self.edits] + [t for t, _ in self.shell_writes] + list(
            self.unlocated_edits)
        return max(turns) if turns else None

    @property
    def changed_lines(self) -> int:
        return sum(e.added + e.removed for e in self.edits)

    def turn(self, index: int) -> Turn:
        return self.transcript.turns[index - 1]


def relative_path(path: str, cwd: str | None) -> str:
    """A path as the project sees it: relative to the session's cwd when under it, POSIX."""
    # Paths taken from shell commands can keep their quotes (`cat "/etc/config/dhcp"`).
    p = _posix(path.strip().strip("\"'`"))
    if cwd:
        root = _posix(cwd).rstrip("/")
        if p == root:
            return "."
        if p.startswith(root + "/"):
            p = p[len(root) + 1:]
    if p.startswith("./"):
        p = p[2:]
    return posixpath.normpath(p) if p else p


def _posix(path: str) -> str:
    """Windows paths in POSIX form; `C:\\x` and Git Bash's `/c/x` become the same `/c/x`."""
    p = path.replace("\\", "/")
    match = re.match(r"^([A-Za-z]):/", p)
    if match:
        p = f"/{match.group(1).lower()}/{p[3:]}"
    return p


# Chinese, Japanese and Korean text has no spaces between words: count its characters.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def word_count(text: str) -> int:
    """Words in a text, for any script: space-separated words, plus one word per two CJK
    characters (a Chinese or Japanese word averages about two characters)."""
    cjk = len(_CJK.findall(text))
    if not cjk:
        return len(text.split())
    return len(_CJK.sub(" ", text).split()) + (cjk + 1) // 2


def is_doc_file(path: str) -> bool:
    name = path.lower()
    return name.endswith(_DOC_SUFFIXES) or posixpath.basename(name) in ("license", "readme",
                                                                       "changelog", "notice")


# Any check at all: one search rejects the many commands that are none before the
# per-kind patterns (tried in priority order) run.
_ANY_CHECK = re.compile("|".join(f"(?:{p.pattern})" for _, p in _CHECK_PATTERNS))


@functools.lru_cache(maxsize=8192)
def classify_check(command: str) -> str | None:
    """The kind of check a command is (test, typecheck, lint, build, run), or None."""
    if not _ANY_CHECK.search(command):
        return _run_kind(command)
    for kind, pattern in _CHECK_PATTERNS:
        if pattern.search(command):
            return kind
    return _run_kind(command)


def _run_kind(command: str) -> str | None:
    stripped = command.strip()
    if stripped.startswith("cd ") and "&&" in stripped:
        stripped = stripped.split("&&", 1)[1].strip()
    if _RUN_PROGRAM.match(stripped) and not re.search(r"\s-(c|m\s+pip|m\s+venv)\b", stripped):
        return "run"
    return None


def check_outcome(turn: Turn) -> bool | None:
    if turn.exit_code is not None:
        return turn.exit_code == 0
    if turn.is_error:
        return False
    output = turn.tool_output or ""
    if _FAILED_OUTPUT.search(output):
        return False
    if _PASSED_OUTPUT.search(output):
        return True
    return None


_QUESTION = re.compile(r"^\s*(how|what|why|where|which|who|is|are|does|do|did|should"
                       r"|explain|tell me|describe|show me|investigate|look into|find out|figure out"
                       r"|research|review|analy[sz]e|audit|explore|understand|diagnose|summari[sz]e"
                       r"|check|compare|list|trace|troubleshoot)\b", re.I)
# A change verb only asks for a change where it gives an order: at the start of a clause or
# after "please", "can you", "and", "to" ... ; "when I add a tab" describes, it does not ask.
_IMPERATIVE_BEFORE = re.compile(r"(^|[.!?;:\n(]|^\s*[-*\d.)]+|\b(please|you|and|then|also|to|lets|let's"
                                r"|pls|now|just|should|must|can|could|would|we|i'?d like you to|go ahead"
                                r"|and then|first|finally|instead|but)\s*,?)\s*$", re.I)
_FIX_REQUEST = re.compile(r"\b(and|then|also|please|,)\s+(fix|change|update|implement|add|apply|patch"
                          r"|correct|resolve|repair)\b", re.I)


def asks_for_change(text: str) -> bool:
    """Whether a request asks for something to be changed (vs. a question to answer).

    A request that opens like a question or an investigation ("how do we enable X?",
    "investigate why the tab freezes") asks for an answer unless it also orders a fix
    ("... and fix it"); otherwise a change verb counts only where it gives an order, so
    "investigate why it freezes when I add a tab" is no change request.
    """
    if _QUESTION.match(text):
        return bool(_FIX_REQUEST.search(text))
    for match in _CHANGE_WORDS.finditer(text):
        before = text[max(0, match.start() - 40):match.start()]
        if _IMPERATIVE_BEFORE.search(before):
            return True
    return False


def compute(transcript: Transcript) -> Facts:
    """All facts of one transcript, in one pass over its turns."""
    cwd = transcript.cwd
    user_turns: list[Turn] = []
    assistant_turns: list[Turn] = []
    tool_turns: list[Turn] = []
    reads: list[tuple[int, str]] = []
    explorations: list[int] = []
    edits: list[EditRecord] = []
    shell_writes: list[tuple[int, str]] = []
    failed_edits: list[int] = []
    checks: list[Check] = []
    failures: list[int] = []
    read_windows: dict[tuple[int, str], tuple] = {}
    unlocated: list[int] = []
    interruptions: list[int] = []
    corrections: list[int] = []
    goal: Turn | None = None
    worked = False

    for turn in transcript.turns:
        if turn.meta == "interrupt":
            interruptions.append(turn.index)
        if turn.meta is not None:
            continue
        if turn.role is Role.USER:
            user_turns.append(turn)
            # The goal is the first real request: a bare greeting ("hi") does not count.
            if goal is None or (word_count(goal.content) < 3 and not worked
                                and word_count(turn.content) >= 3):
                goal = turn
            elif worked and _CORRECTION.search(turn.content):
                corrections.append(turn.index)
        elif turn.role is Role.ASSISTANT:
            assistant_turns.append(turn)
        else:
            tool_turns.append(turn)
            worked = True
            _tool_facts(turn, cwd, reads, explorations, edits, shell_writes, failed_edits,
                        checks, failures, read_windows, unlocated)

    final_answer = assistant_turns[-1] if assistant_turns else None
    by_path: dict[str, list[EditRecord]] = {}
    for record in edits:
        by_path.setdefault(record.path, []).append(record)
    return Facts(
        transcript=transcript, goal=goal,
        asks_for_change=asks_for_change(goal.content) if goal else False,
        user_turns=tuple(user_turns), assistant_turns=tuple(assistant_turns),
        tool_turns=tuple(tool_turns), reads=tuple(reads), explorations=tuple(explorations),
        edits=tuple(edits), shell_writes=tuple(shell_writes), failed_edits=tuple(failed_edits),
        checks=tuple(checks), failures=tuple(failures), interruptions=tuple(interruptions),
        corrections=tuple(corrections), final_answer=final_answer,
        read_windows=read_windows, unlocated_edits=tuple(unlocated), failed=frozenset(failures),
        edits_by_path={path: tuple(records) for path, records in by_path.items()},
    )


def _tool_facts(turn: Turn, cwd: str | None, reads: list, explorations: list, edits: list,
                shell_writes: list, failed_edits: list, checks: list, failures: list,
                read_windows: dict, unlocated: list) -> None:
    failed = tool_failed(turn)
    if failed:
        failures.append(turn.index)
    kind = turn.kind
    if kind is ToolKind.READ:
        # A search that matched nothing stopped its `&& sed ...`: nothing was read.
        if not failed and not found_nothing(turn):
            windows = shell_read_windows(turn.command) if turn.command else None
            for raw in turn.paths:
                path = relative_path(raw, cwd)
                reads.append((turn.index, path))
                window = windows.get(raw) if windows is not None else _input_window(turn)
                if window is not None:
                    read_windows[(turn.index, path)] = window
    elif kind in (ToolKind.SEARCH, ToolKind.LIST):
        explorations.append(turn.index)
    elif kind in (ToolKind.EDIT, ToolKind.WRITE):
        if failed:
            failed_edits.append(turn.index)
        elif turn.edits:
            for edit in turn.edits:
                added, removed = count_changes(edit.diff)
                edits.append(EditRecord(turn.index, edit, relative_path(edit.path, cwd),
                                        added, removed))
        elif turn.via_shell:
            shell_writes.extend((turn.index, relative_path(p, cwd)) for p in turn.paths)
        elif not turn.paths and _has_new_text(turn):
            unlocated.append(turn.index)
    command = turn.command
    if command and kind in (ToolKind.SHELL, ToolKind.EDIT, ToolKind.READ):
        check_kind = classify_check(command)
        if check_kind:
            checks.append(Check(turn.index, command, check_kind, check_outcome(turn)))


# Range parameters of the read tools of every harness (Read offset/limit, view_range ...).
_RANGE_KEYS = ("offset", "limit", "start_line", "end_line", "view_range", "line_number",
               "startLine", "endLine", "start_line_one_indexed", "end_line_one_indexed_inclusive",
               "line_range", "lines")


def _input_window(turn: Turn) -> tuple | None:
    """The part of the file a read tool asked for, from its input.

    No range asked means the whole file, when the output shows what came back; with neither
    a range nor an output (exports that keep only "Read file: X"), the part read is unknown.
    """
    inp = turn.tool_input or {}
    asked = tuple((key, _hashable(inp[key])) for key in _RANGE_KEYS if inp.get(key) is not None)
    if asked:
        return asked
    return ("whole",) if turn.tool_output or turn.output_length else None


def _hashable(value: object) -> object:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    return value


def _has_new_text(turn: Turn) -> bool:
    inp = turn.tool_input or {}
    return any(isinstance(inp.get(key), str) and inp[key].strip() for key in (
        "new_string", "newText", "new_str", "newString", "content", "file_text", "code_edit"))


# Searchers exit 1 when nothing matched: that is an answer, not a failed call.
_SEARCH_PROGRAM = re.compile(r"(?:^|[;&|(]|\s)(?:rg|grep|egrep|fgrep|ag|ack|git\s+grep)\s")
_ERROR_TEXT = re.compile(r"error|no such file|not found|permission denied|unrecognized|invalid"
                         r"|usage:|cannot|traceback|denied|failed", re.I)
_EXIT_LINE = re.compile(r"^\s*(?:Exit code:?\s*\d+|Exit Code:\s*\d+)\s*$", re.I | re.M)
# Edits some harnesses log as successful although the output says the patch did not apply.
_EDIT_FAILED_OUTPUT = re.compile(
    r"^\s*(?:error:|execution error:|failed in sandbox\b|Failed to find expected lines"
    r"|String to replace not found|invalid hunk|patch (?:failed|does not apply))"
    r"|^Your proposed edit has introduced new syntax error", re.I | re.M)


def found_nothing(turn: Turn) -> bool:
    """A search (`rg x`, `grep -n x f && sed ...`) that ran and matched nothing: exit 1 with
    no error text. Not a failure, and retrying with another pattern is not a retry."""
    command = turn.command
    if turn.exit_code != 1 or not command or not _SEARCH_PROGRAM.search(" " + command):
        return False
    rest = _EXIT_LINE.sub("", turn.tool_output or "").strip()
    return not rest or not _ERROR_TEXT.search(rest)


def tool_failed(turn: Turn) -> bool:
    """Whether a tool call failed, judged the same way for every harness."""
    if turn.is_error:
        return not found_nothing(turn)
    if turn.exit_code is None and turn.kind in (ToolKind.EDIT, ToolKind.WRITE) and \
            _EDIT_FAILED_OUTPUT.search(turn.tool_output or ""):
        return True
    return False


