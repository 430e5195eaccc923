"""facts: what happened in a session, computed once from the Transcript.

Pure functions over the turn list: the goal, files read and edited (with their diffs), shell
commands and the checks among them (tests, builds, linters) with their outcome, failed calls,
interruptions, and the request ledger (ledger.py: every user message classified, with the
turns that served it and whether the user had to ask again). Every detector reads these
facts, never raw harness JSON, so a rule works the same for every harness.
"""

from __future__ import annotations

import bisect
import functools
import posixpath
import re
from dataclasses import dataclass, field
from typing import Mapping

from .diffs import edit_counts, make_diff
from . import ledger
from .ledger import Request
from .model import FileEdit, Role, ToolKind, Transcript, Turn
from . import tools
from .text import ascii_folded, harness_cut
from .tools import shell_read_windows

# Programs that check the work: test runners, builds, type checkers, linters. Each pattern is
# matched at the start of one command of a command line (after unwrapping `cd x &&`, `bash -c`,
# env assignments, `uv run` ...), so a commit message or an echo that mentions pytest is none.
_CHECK_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern)) for kind, pattern in (
        ("test", r"(pytest|py\.test|python\d?(\.\d+)?\s+-m\s+(pytest|unittest|nose2?)|unittest|tox"
                 r"|nox|jest|vitest|mocha|ava|karma|playwright\s+test|cypress\s+run|rspec|phpunit"
                 r"|ctest|go\s+test|cargo\s+(test|nextest)|(npm|pnpm|yarn|bun)\s+(run\s+)?test"
                 r"|deno\s+test|bun\s+test|mvn\w*\s+(.*\s)?(test|verify)|\S*gradlew?\s+(test|check)"
                 r"|dotnet\s+test|swift\s+test|mix\s+test|make\s+(test|check)|rake\s+test"
                 r"|bundle\s+exec\s+(rspec|rake)|(python\d?(\.\d+)?\s+)?\S*manage\.py\s+test|php\s+artisan\s+test)\b"),
        ("typecheck", r"(tsc|mypy|pyright|cargo\s+check|go\s+vet|(npm|pnpm|yarn)\s+(run\s+)?"
                      r"(typecheck|type-check|check|tsc))\b"),
        ("lint", r"(ruff|flake8|pylint|eslint|clippy|cargo\s+clippy|golangci-lint|shellcheck"
                 r"|black\s+--check|prettier\s+(--check|-c)|rubocop|(npm|pnpm|yarn)\s+(run\s+)?lint"
                 r"|pre-commit\s+run|biome\s+(check|lint)|stylelint|hadolint|actionlint)\b"),
        ("build", r"(cargo\s+build|go\s+build|(npm|pnpm|yarn|bun)\s+(run\s+)?build|make\b"
                  r"|mvn\w*\s+(package|compile|install)|\S*gradlew?\s+(build|assemble)"
                  r"|dotnet\s+build|swift\s+build|cmake\s+--build|ninja\b|vite\s+build"
                  r"|python\d?(\.\d+)?\s+-m\s+(build|compileall|py_compile)|next\s+build"
                  r"|docker\s+build|go\s+run\s+\.|(gcc|g\+\+|clang(\+\+)?|cc|rustc|javac|kotlinc|scalac"
                  r"|swiftc|ghc|ocamlopt|ocamlc|coqc|gfortran|nasm|iverilog|zig\s+build)\s)"),
        # An output compared with the expected one, its verdict asked for (`diff a b && echo
        # same`, `cmp -s`, `diff -q`): a golden-file test. A bare `diff` only shows changes.
        ("test", r"(diff|cmp)\s+(.*\s)?(-[a-z]*[qs][a-z]*|--brief|--quiet|--silent)\s"),
        # A request to the service the session set up (`curl localhost:8080/`) runs it.
        ("run", r"(curl|wget|http|xh)\s+(?:-\S+\s+(?:'[^']*'\s+|\"[^\"]*\"\s+|\S+\s+)?)*['\"]?(?:https?://)?"
                r"(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])\b"),
    )
)
# Running the program itself (a script, a module, a binary the project builds).
_RUN_PROGRAM = re.compile(r"(python\d?(\.\d+)?|node|ruby|deno\s+run|bun\s+run|go\s+run|cargo\s+run"
                          r"|php|perl|bash|sh|\./\S+|\S+\.(py|js|mjs|ts|sh|rb))\b")
# A request that only asks whether the server answers (`curl -I`, the status code alone, the
# body thrown away) shows it is up, not that the work does what was asked.
_STATUS_ONLY = re.compile(r"^(curl|wget|http|xh)\b.*(\s-I\b|\s--head\b|\s-o\s*/dev/null\b|\s--spider\b)")
_NOT_A_RUN = re.compile(r"\s-(c|m\s+(pip|venv|http\.server|json\.tool))\b|^(bash|sh)\s*$"
                        r"|--version\b|\s-V\b")
# Wrappers whose arguments are the command really run.
_WRAPPER = re.compile(
    r"^(?:(?:sudo|nohup|time|exec|env|nice|stdbuf(?:\s+-\S+)*|timeout\s+(?:-\S+\s+)*\S+"
    r"|xvfb-run(?:\s+-\S+)*|npx(?:\s+-\S+)*|pnpx|bunx|uvx|uv\s+run(?:\s+--?\S+)*|poetry\s+run"
    r"|pipenv\s+run|hatch\s+run|pdm\s+run|rye\s+run|conda\s+run(?:\s+-\S+\s+\S+)*"
    r"|docker\s+(?:compose\s+)?exec(?:\s+-\S+)*\s+\S+|docker\s+run(?:\s+(?:-\S+\s+)?\S+)*?\s+\S+:\S*"
    r"|kubectl\s+exec\s+\S+\s+--|\w+=\S*)\s+)+")
_SHELL_C = re.compile(r"""^(?:ba|z|da)?sh\s+(?:-\w+\s+)*-\w*c\s+(['"])(.*)\1\s*$|^(?:powershell|pwsh)(?:\.exe)?\s+(?:-\w+\s+)*-Command\s+(['"]?)(.*)\3\s*$""", re.S | re.I)
_SEGMENT_SPLIT = re.compile(r"&&|\|\||;|\|&|\||\n")


def _split_unquoted(text: str) -> list[str]:
    """A command line cut at its separators (`&&`, `||`, `;`, `|`, newlines) outside quotes."""
    parts: list[str] = []
    start = 0
    quote = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        else:
            match = _SEGMENT_SPLIT.match(text, i)
            if match:
                parts.append(text[start:i])
                start = i = match.end()
                continue
        i += 1
    parts.append(text[start:])
    return parts


@functools.lru_cache(maxsize=8192)
def command_segments(command: str) -> tuple[str, ...]:
    """The commands a command line runs, each without its wrappers, in order.

    `cd app && FOO=1 uv run pytest -q | tail -5` gives ("cd app", "pytest -q", "tail -5");
    `bash -lc 'npm test'` gives ("npm test",). A heredoc's body is data, not commands.
    """
    lines = command.split("\n")
    kept: list[str] = []
    terminator = None
    for line in lines:
        if terminator is not None:
            if line.strip() == terminator:
                terminator = None
            continue
        kept.append(line)
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        if heredoc:
            terminator = heredoc.group(1)
    segments: list[str] = []
    for part in _split_unquoted("\n".join(kept)):
        part = part.strip().lstrip("({").strip()
        if not part:
            continue
        wrapped = _SHELL_C.match(part)
        if wrapped:
            inner = wrapped.group(2) if wrapped.group(2) is not None else wrapped.group(4)
            segments.extend(command_segments(inner))
            continue
        part = _WRAPPER.sub("", part)
        if part:
            segments.append(part)
    return tuple(segments)


# An output compared with the expected one and the verdict printed (`diff a b && echo same`).
_COMPARED_AND_TOLD = re.compile(r"(?:^|&&|;|\|\||\n)\s*(?:diff|cmp)\s[^\n;|&]*&&\s*echo\b")


@functools.lru_cache(maxsize=8192)
def classify_check(command: str) -> str | None:
    """The kind of check a command runs (test, typecheck, lint, build, run), or None.

    Judged by the programs the command line actually runs; the first check found decides, and
    a run of the program itself counts only when nothing else checks.
    """
    if _COMPARED_AND_TOLD.search(command):
        return "test"
    run = False
    system_folder = False  # the command went into a system program folder (`cd /usr/bin`)
    for segment in command_segments(command):
        if segment.startswith("cd "):
            system_folder = bool(_SYSTEM_BIN.match(segment[3:].strip().strip("'\"")))
        for kind, pattern in _CHECK_PATTERNS:
            if pattern.match(segment) and not (kind == "run" and _STATUS_ONLY.match(segment)):
                return kind
        if _RUN_PROGRAM.match(segment) and not _NOT_A_RUN.search(segment) and \
                not (system_folder and segment.startswith("./")):
            run = True
    return "run" if run else None


# The machine's own program folders: `cd /usr/bin && ./rebase -O` runs a system tool, which
# does something, not the work the session made.
_SYSTEM_BIN = re.compile(r"(?:/usr(?:/local)?)?/s?bin/?$", re.I)


# A check's own summary of how it ended; it overrides the exit code of a pipeline, `|| true`
# or `; echo`, whose exit status is not the check's.
_FAILED_OUTPUT = re.compile(
    r"(\b[1-9]\d* (failed|failures?|errors?)\b|^FAILED\b|^FAIL\b|\bFAILURES?!?$|^error(\[\w+\])?:"
    r"|^\S+\(\d+,\d+\): error|error TS\d+|\bBUILD FAILED\b|npm ERR!|^ERROR[: ]|test result: FAILED"
    r"|Tests?:\s+[1-9]\d* failed|^[^\S\n]*✖ [1-9]\d* problems?|Found [1-9]\d* errors?|\bno tests ran\b"
    r"|\bcollected 0 items\b|command not found|^panic:|Segmentation fault|\bexit (code|status) [1-9]"
    # The shell could not even enter the folder: the check never ran.
    r"|^(?:ba|z)?sh: (?:line \d+: )?cd: [^\n]*: No such file or directory)",
    re.MULTILINE)
# Signs of a failure that a run can print and still pass (a logged traceback, an expected
# failure): they decide only when no summary says it passed.
_FAILURE_SIGN = re.compile(r"Traceback \(most recent|SyntaxError|ModuleNotFoundError|ImportError"
                           r"|AssertionError|\bException\b|\bError:|Kernel panic"
                           # an exception's last line without its traceback (a cut output)
                           r"|^(?:[a-z_]\w*\.)*[A-Z]\w*Error: ", re.MULTILINE)
# Texts one of which every failure sign contains (case as written): a substring test first.
_FAILURE_SIGN_TEXTS = ("Traceback (most recent", "SyntaxError", "ModuleNotFoundError",
                       "ImportError", "AssertionError", "Exception", "Error:", "Kernel panic")
# A check's own word that it passed: each alternative (written in lower case: the pattern is
# case-insensitive) with the text it cannot match without. One search of the whole
# alternation tries every alternative at every position (about 0.2 ms on a 500-character
# output); on output whose letters fold exactly as re.IGNORECASE does (text.ascii_folded),
# only the alternatives whose text is there are tried, case-sensitively on the folded copy and
# from the start of the line where that text first appears (every alternative but the last
# matches within one line, or starts on the line of its text).
_PASSED_PARTS: tuple[tuple[str, str], ...] = (
    (" passed", r"\b\d+ passed\b"), ("ok", r"^ok\b"), ("all tests passed", r"\ball tests passed\b"),
    ("pass", r"^pass\b"), ("0 failed", r"\b0 failed\b"), ("build success", r"\bbuild success"),
    ("finished ", r"finished .*target"), ("test result: ok", r"test result: ok"),
    ("ok", r"^ok\s+\S+"), ("all checks passed", r"all checks passed"),
    ("found 0 errors", r"found 0 errors"), ("success: no issues", r"success: no issues"),
    ("compiled successfully", r"\bcompiled successfully"), ("built in", r"\bbuilt in\b"),
    ("no errors", r"\bno errors\b"), ("0 error", r"0 errors?\b"),
    ("✓", r"^[^\S\n]*✓"))  # may start lines before its text: searched from the start
_PASSED_OUTPUT = re.compile("(" + "|".join(rx for _, rx in _PASSED_PARTS) + ")", re.MULTILINE | re.I)
_PASSED_FOLDED = tuple((text, re.compile(rx, re.MULTILINE)) for text, rx in _PASSED_PARTS)
# Words one of which every failure summary above contains: a substring test rules most
# outputs out far faster than the pattern would.
_FAILURE_WORDS = ("fail", "error", "panic", "not found", "segmentation", "exit code",
                  "exit status", "no tests ran", "collected 0", "✖", "found ", "no such file")
_MASKS_EXIT = re.compile(r"\|\||\|(?!\|)|;\s*(echo|true|exit\s+0)\b")


def check_outcome(turn: Turn) -> bool | None:
    """How a check ended: its output's own summary first (a failing test piped into `tail`
    still failed), then the exit code, then whether the call errored; None when the log
    cannot tell (no summary, no exit code, or a run that printed nothing)."""
    output = turn.tool_output or ""
    if len(output) > 8000:
        # A check's verdict is in its summary at the end (and a crash at the start): the
        # middle of a long log decides nothing, and skipping it keeps this cheap.
        output = output[:2000] + "\n" + output[-6000:]
    if _summarises_failure(output):
        return False
    passed = _says_passed(output)
    masked = bool(turn.command and _MASKS_EXIT.search(turn.command))
    if turn.exit_code is not None and not masked:
        if turn.exit_code != 0:
            return False
        if not passed and _failure_sign(output):
            return False
        return True if output.strip() else None
    if turn.is_error:
        return False
    if passed:
        return True
    if _failure_sign(output):
        return False
    return None


def _says_passed(output: str) -> bool:
    """Whether `_PASSED_OUTPUT` matches `output`."""
    folded = ascii_folded(output)
    if folded is None:
        return _PASSED_OUTPUT.search(output) is not None
    last = len(_PASSED_FOLDED) - 1
    for number, (text, pattern) in enumerate(_PASSED_FOLDED):
        first = folded.find(text)
        if first < 0:
            continue
        start = folded.rfind("\n", 0, first) + 1 if number < last else 0
        if pattern.search(folded, start) is not None:
            return True
    return False


def _summarises_failure(output: str) -> bool:
    """Whether the output's own summary says it failed (`_FAILED_OUTPUT`)."""
    folded = output.lower()
    return any(word in folded for word in _FAILURE_WORDS) and _FAILED_OUTPUT.search(output) is not None


def _failure_sign(output: str) -> bool:
    return any(text in output for text in _FAILURE_SIGN_TEXTS) and \
        _FAILURE_SIGN.search(output) is not None


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
    shell_writes: tuple[tuple[int, str], ...]  # files changed with no diff known (shell, rendered edits)
    failed_edits: tuple[int, ...]
    checks: tuple[Check, ...]
    failures: tuple[int, ...]  # tool turns that failed
    interruptions: tuple[int, ...]
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
    # Every user message classified, with the turns that served it (see ledger), and the
    # requests that ask for something (follow-ups excluded), in session order.
    requests: tuple[Request, ...] = ()
    main_requests: tuple[Request, ...] = ()
    request_turns: tuple[int, ...] = ()  # the main requests' turns, for bisection
    # Every change (path, or None where the log names no file) by turn, and the turns of the
    # changes and the checks: each request finds its own by bisection, so a session of
    # thousands of requests stays linear.
    changes: tuple[tuple[int, str | None], ...] = ()
    change_turns: tuple[int, ...] = ()
    check_turns: tuple[int, ...] = ()
    # (turn, path, earlier turn) of each read that showed nothing new (see _repeated_reads):
    # exploration and turn economy both count them.
    repeated_reads: tuple[tuple[int, str, int], ...] = ()

    def changes_in(self, request: Request) -> tuple[tuple[int, str | None], ...]:
        """The changes made for a request: (turn, path), in session order."""
        return self.changes[bisect.bisect_right(self.change_turns, request.turn):
                            bisect.bisect_right(self.change_turns, request.end)]

    def checks_after(self, turn: int) -> tuple[Check, ...]:
        """The checks that ran after a turn, in session order."""
        return self.checks[bisect.bisect_right(self.check_turns, turn):]

    def checks_between(self, after: int, until: int) -> tuple[Check, ...]:
        """The checks of turns after `after` up to `until`, in session order."""
        return self.checks[bisect.bisect_right(self.check_turns, after):
                           bisect.bisect_right(self.check_turns, until)]

    def request_at(self, index: int) -> Request | None:
        """The main request a turn served (None before the first); one bisection."""
        position = bisect.bisect_left(self.request_turns, index) - 1
        return self.main_requests[position] if position >= 0 else None

    def served_turns(self, request: Request) -> tuple[Turn, ...]:
        """The turns after a request up to the next main request (turn i sits at i - 1)."""
        return self.transcript.turns[request.turn:request.end]

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
    """Documentation or configuration: prose, data and settings files (dotfiles, `config`,
    files under `.config/`), which need no test run after an edit."""
    name = path.lower()
    base = posixpath.basename(name)
    return name.endswith(_DOC_SUFFIXES) or base in ("license", "readme", "changelog", "notice",
                                                    "config") \
        or name.endswith((".conf", ".config", "rc")) and "." in base \
        or "/.config/" in "/" + name or base.startswith(".") and "." not in base[1:]


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
    written = _WrittenNames()

    requests = ledger.build(transcript.turns)
    request_text = ""
    for turn in transcript.turns:
        if turn.role is Role.USER and turn.meta is None:
            request_text = turn.content
        if turn.meta == "interrupt":
            interruptions.append(turn.index)
        if turn.meta is not None:
            continue
        if turn.role is Role.USER:
            user_turns.append(turn)
        elif turn.role is Role.ASSISTANT:
            assistant_turns.append(turn)
        else:
            tool_turns.append(turn)
            _tool_facts(turn, cwd, reads, explorations, edits, shell_writes, failed_edits,
                        checks, failures, read_windows, unlocated, written, request_text)

    final_answer = assistant_turns[-1] if assistant_turns else None
    mains = [r for r in requests if r.kind != ledger.FOLLOW_UP]
    changes = tuple(sorted([(e.turn, e.path) for e in edits] + shell_writes
                           + [(turn, None) for turn in unlocated], key=lambda c: c[0]))
    # The goal is the first main request (a greeting or "clear" is none), else the first message.
    goal = transcript.turns[mains[0].turn - 1] if mains else (user_turns[0] if user_turns else None)
    by_path: dict[str, list[EditRecord]] = {}
    for record in edits:
        by_path.setdefault(record.path, []).append(record)
    return Facts(
        transcript=transcript, goal=goal,
        asks_for_change=any(r.kind == ledger.CHANGE for r in mains),
        user_turns=tuple(user_turns), assistant_turns=tuple(assistant_turns),
        tool_turns=tuple(tool_turns), reads=tuple(reads), explorations=tuple(explorations),
        edits=tuple(edits), shell_writes=tuple(shell_writes), failed_edits=tuple(failed_edits),
        checks=tuple(checks), failures=tuple(failures), interruptions=tuple(interruptions),
        final_answer=final_answer,
        read_windows=read_windows, unlocated_edits=tuple(unlocated), failed=frozenset(failures),
        edits_by_path={path: tuple(records) for path, records in by_path.items()},
        requests=requests, main_requests=tuple(mains),
        request_turns=tuple(r.turn for r in mains),
        changes=changes, change_turns=tuple(turn for turn, _ in changes),
        check_turns=tuple(c.turn for c in checks),
        repeated_reads=_repeated_reads(transcript.turns, reads, read_windows,
                                       [(e.turn, e.path) for e in edits] + shell_writes),
    )


def _whole_if_shorter(window: tuple, turn: Turn) -> tuple:
    """A read of the first N lines that printed fewer than N showed the whole file (`head -10`
    of an 8-line file): a later `cat` of it shows nothing new."""
    if len(window) != 3 or window[0] != 1 or not isinstance(window[1], int):
        return window
    output = turn.tool_output or ""
    if not output.strip() or turn.output_length > len(output):
        return window  # nothing printed, or the log kept only part of what was
    if output.count("\n") + (not output.endswith("\n")) < window[1]:
        return (1, None, window[2])
    return window


def _repeated_reads(turns: tuple[Turn, ...], reads: list[tuple[int, str]],
                    read_windows: Mapping[tuple[int, str], tuple],
                    changed: list[tuple[int, str]]) -> tuple[tuple[int, str, int], ...]:
    """(turn, path, earlier turn) for each read of a part of a file already read since the
    file last changed: the same tool window again, or a line range inside an earlier one
    (`nl -ba f | sed -n '1,200p'` after `sed -n '1,240p' f`: numbering lines shows nothing
    new). Reads whose range the log does not keep are never repeats, nor are reads after a
    compaction of what was read before it (the model no longer has it) or after the task was
    resumed (the project may have changed meanwhile). A read whose output
    the harness cut ("[... output truncated to fit 10240 bytes ...]") showed only part of
    its window: reading that part again is no repeat."""
    changes: dict[str, list[int]] = {}
    for turn, path in changed:
        changes.setdefault(path, []).append(turn)
    for edit_turns in changes.values():
        edit_turns.sort()
    since_change: dict[str, list[tuple[int, tuple]]] = {}
    repeats: list[tuple[int, str, int]] = []
    # After a compaction the model no longer has what it read; after a resumption (Cline's
    # "[TASK RESUMPTION] ... the project state may have changed") the files may not be the same.
    compactions = [t.index for t in turns if t.meta in ("compaction", "resumption")]
    next_compaction = 0
    by_index = {t.index: t for t in turns} if reads else {}
    for turn, path in reads:
        if next_compaction < len(compactions) and compactions[next_compaction] < turn:
            since_change.clear()
            while next_compaction < len(compactions) and compactions[next_compaction] < turn:
                next_compaction += 1
        window = read_windows.get((turn, path))
        earlier = since_change.setdefault(path, [])
        edits = changes.get(path, ())
        i = bisect.bisect_left(edits, turn)
        if earlier and i and edits[i - 1] > earlier[0][0]:
            # What was read before the file last changed shows it no more.
            last_change = edits[i - 1]
            earlier[:] = [(t, w) for t, w in earlier if t > last_change]
        if window is None:
            continue
        seen = next((t for t, w in earlier if _covers(w, window)), None)
        if seen is not None:
            repeats.append((turn, path, seen))
        else:
            read = by_index.get(turn)
            if read is not None and harness_cut(read.tool_output or ""):
                continue  # the harness cut what it printed: part of the window is still unread
            earlier.append((turn, window))
            if len(earlier) > _WINDOWS_KEPT:
                del earlier[0]  # a file read a few lines at a time, thousands of times
    return tuple(repeats)


_WINDOWS_KEPT = 32  # distinct parts of one file remembered as read (bounds the cost per read)


def _covers(earlier: tuple, window: tuple) -> bool:
    """Whether a read's window shows nothing an earlier one did not: equal, or a shell line
    range (first, last or None, numbered) inside an earlier one."""
    if earlier == window:
        return True
    if len(earlier) != 3 or len(window) != 3 or not all(
            isinstance(w[0], int) for w in (earlier, window)):
        return False
    first, last, _ = earlier
    start, end, _ = window
    return first <= start and (last is None or (end is not None and end <= last))


def _edited_unnamed(reads: list[tuple[int, str]], request_text: str) -> str | None:
    """The file an edit that names none most likely changed: of the files read since the
    request, one the request names, else the last one read."""
    if not reads:
        return None
    looked_at: set[str] = set()  # a file read again and again is tested once
    for _, path in reversed(reads):
        if path in looked_at:
            continue
        looked_at.add(path)
        if path in request_text or posixpath.basename(path) in request_text:
            return path
    return reads[-1][1]


def _edit_record(turn: int, edit: FileEdit, cwd: str | None, read: set[str],
                 read_texts: dict[str, Turn] | None = None) -> EditRecord:
    """An edit as the facts keep it: its project-relative path and line counts. A file written
    whole over one the session had read (`read`: the paths read so far) was rewritten, not
    created, whatever the harness says (Cline's write_to_file logs no original, so every write
    looks new); its original, when the harness logged none, is the text the last full read of
    it showed (`read_texts`: the last full read of each file), so the write is measured as the
    change it made."""
    path = relative_path(edit.path, cwd)
    if edit.created and path in read:
        edit = edit.replace(created=False)
    if read_texts is not None:
        last_read = read_texts.pop(path, None)
        original = _numbered_text(last_read) if last_read is not None and edit.whole_file and \
            edit.before is None and not edit.created and edit.new is not None else None
        if original is not None:
            # A numbered read does not show whether the file ended with a newline: take it to
            # end as the new text does, so the diff shows no change the log cannot show.
            if edit.new.endswith("\n"):
                original += "\n"
            edit = edit.replace(before=original, patch=make_diff(edit.path, original, edit.new))
    added, removed = edit_counts(edit)
    return EditRecord(turn, edit, path, added, removed)


# A line of a numbered read (Claude Code's Read: "    12→text", older versions a tab).
_NUMBERED_LINE = re.compile(r" *(\d+)[→\t](.*)")


def _numbered_text(turn: Turn) -> str | None:
    """The whole file a numbered read showed, or None when the log kept only part of it, the
    lines are not numbered 1, 2, 3 ... to the end, or the read failed."""
    output = turn.tool_output or ""
    if not output or turn.output_length > len(output) or turn.is_error or harness_cut(output):
        return None  # the log kept part of it, the read failed, or the harness cut lines
    lines = []
    for number, line in enumerate(output.split("\n"), 1):
        match = _NUMBERED_LINE.fullmatch(line)
        if match is None:
            # What a harness appends after the file (a blank line, a <system-reminder>).
            if not line.strip() or line.lstrip().startswith("<"):
                break
            return None
        if int(match.group(1)) != number:
            return None
        lines.append(match.group(2))
    if not lines:
        return None
    return "\n".join(lines)


def _tool_facts(turn: Turn, cwd: str | None, reads: list, explorations: list, edits: list,
                shell_writes: list, failed_edits: list, checks: list, failures: list,
                read_windows: dict, unlocated: list, written: _WrittenNames,
                request_text: str = "") -> None:
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
                if window is not None and len(turn.paths) == 1:
                    window = _whole_if_shorter(window, turn)
                if window is not None:
                    read_windows[(turn.index, path)] = window
                    # Only a file the session has not written: its text is the project's.
                    # (Parsed only if a write needs it: most reads are never written over.)
                    if len(turn.paths) == 1 and window in (("whole",), (1, None, True)) and \
                            path not in written.paths(edits, shell_writes):
                        written.read_texts[path] = turn
    elif kind in (ToolKind.SEARCH, ToolKind.LIST):
        explorations.append(turn.index)
    elif kind in (ToolKind.EDIT, ToolKind.WRITE):
        if failed:
            failed_edits.append(turn.index)
        elif turn.edits:
            for edit in turn.edits:
                edits.append(_edit_record(turn.index, edit, cwd, written.read_paths(reads),
                                          written.read_texts))
        elif turn.via_shell or turn.paths:
            # A shell command that wrote files, or an edit the log shows only by its file (an
            # IDE chat pasted as text): a change whose diff is unknown.
            shell_writes.extend((turn.index, relative_path(p, cwd)) for p in turn.paths)
            for p in turn.paths:
                written.read_texts.pop(relative_path(p, cwd), None)  # no longer what was read
        elif not turn.paths and _has_new_text(turn):
            # Old exports name no file for an edit; the agent edits what it just read.
            target = _edited_unnamed(reads, request_text)
            inferred = tools.edits_of(turn.tool_name or "edit", {**(turn.tool_input or {}),
                                      "file_path": target}) if target else []
            if inferred:
                for edit in inferred:
                    edits.append(_edit_record(turn.index, edit, cwd, written.read_paths(reads)))
            else:
                unlocated.append(turn.index)
    command = turn.command
    if command and "tmux" in command and not failed:
        _typed_checks(turn, command, cwd, edits, shell_writes, checks, written)
    if not command and written.launched and (turn.tool_name or "") in _BACKGROUND_OUTPUT:
        # Reading what a program started in the background printed (`jupyter notebook &`,
        # then BashOutput): a run of it, judged by its status, exit code and output.
        inputs = turn.tool_input or {}
        key = next((inputs[k] for k in ("bash_id", "shell_id", "task_id") if k in inputs), None)
        launched = written.launched.get(key) if isinstance(key, str) else None
        outcome = _background_outcome(turn.tool_output or "")
        if outcome is not None:
            checks.append(Check(turn.index, launched or written.launched[None], "run", outcome))
    if command and kind in (ToolKind.SHELL, ToolKind.EDIT, ToolKind.READ):
        check_kind = classify_check(command)
        if check_kind == "run" and (kind is ToolKind.EDIT or not _runs_own_code(
                command, cwd, written.of(edits, shell_writes))) and not (
                kind is ToolKind.EDIT and _checks_with_by_products(
                    command, turn.index, shell_writes, written.modules(edits))):
            # A script that writes files (`python - <<EOF ... write_text`) makes a change,
            # it does not check one.
            check_kind = None
        elif check_kind is None and kind is not ToolKind.EDIT and "-c" in command and \
                _imports_changed_code(command, written.modules(edits)):
            # `python -c "import fasttext; fasttext.load_model(...)"` after editing fasttext
            # runs the changed code; a `python -c` that imports nothing changed only looks.
            check_kind = "run"
        if check_kind is None and kind is ToolKind.SHELL and launches_in_background(turn):
            written.launched[None] = command
            started = _BACKGROUND_ID.search(turn.tool_output or "")
            if started:
                written.launched[started.group(1)] = command
        if check_kind is None and kind is ToolKind.SHELL and written.built and \
                _runs_built_program(command, written.built):
            # `sqlite3 :memory: "SELECT 1"` after `gcc -o sqlite3 ...`: the program the
            # session compiled, run by its name, exercises the build.
            check_kind = "run"
        if check_kind:
            outcome = check_outcome(turn)
            if outcome is None and check_kind in ("typecheck", "lint", "build") and turn.exit_code == 0 \
                    and not _MASKS_EXIT.search(command) and not (turn.tool_output or "").strip():
                # Type checkers, linters and compilers say nothing when they find nothing
                # (tsc, eslint, go vet, gcc): silence with a recorded exit code 0 is a pass.
                outcome = True
            elif outcome is None and check_kind == "run" and turn.exit_code is None and \
                    not turn.is_error and (turn.tool_output or "").strip():
                # A run with output and no error in a log without exit codes (trajectories):
                # the program ran; what it printed is the evidence.
                outcome = True
            checks.append(Check(turn.index, command, check_kind, outcome))
        if not failed and kind is ToolKind.SHELL:
            written.built.update(_built_programs(command))


def shows_pane(command: str) -> bool:
    """Whether a command line prints what a tmux pane shows (`tmux capture-pane -p`)."""
    return "tmux" in command and any(_TMUX_CAPTURE.match(segment)
                                     for segment in command_segments(command))


_TMUX_SEND = re.compile(r"^tmux\s+(?:-\S+\s+)*(?:send-keys|send)\b")
_TMUX_CAPTURE = re.compile(r"^tmux\s+(?:-\S+\s+)*(?:capture-pane|capturep)\b")
# Key names tmux send-keys takes, which type no text.
_TMUX_KEY = re.compile(r"^(?:C-\w|M-\w|S-\w|Enter|Escape|Tab|Space|BSpace|Up|Down|Left|Right"
                       r"|Home|End|F\d+)$")


def _typed_checks(turn: Turn, command: str, cwd: str | None, edits: list, shell_writes: list,
                  checks: list, written: _WrittenNames) -> None:
    """A check typed into a tmux pane runs there: the capture of the pane that follows shows
    how it ended (its summary, a traceback, or its output)."""
    for segment in command_segments(command):
        if _TMUX_SEND.match(segment):
            words = tools.shell_words(segment)[2:]
            typed = [w for i, w in enumerate(words) if not w.startswith("-")
                     and not (i and words[i - 1] == "-t") and not _TMUX_KEY.match(w)]
            text = " ".join(typed).strip()
            kind = classify_check(text) if text else None
            if kind == "run" and not _runs_own_code(text, cwd, written.of(edits, shell_writes)):
                kind = None
            if kind:
                written.typed = (text, kind)
        elif _TMUX_CAPTURE.match(segment) and written.typed and (turn.tool_output or "").strip():
            text, kind = written.typed
            output = turn.tool_output or ""
            outcome = False if _summarises_failure(output) or (
                not _says_passed(output) and _failure_sign(output)) else True
            checks.append(Check(turn.index, text, kind, outcome))
            written.typed = None


# Commands whose successful run changes the machine a task is about, where a task is done
# through commands rather than file edits: packages installed, permissions set, files made,
# moved or deleted, services and users configured, a repository's history changed, images
# built, outputs written by converters and compilers.
_SYSTEM_CHANGE = re.compile(
    r"^(?:sudo\s+(?:-\S+\s+)*)?(?:"
    # `python -m pip install ...` is pip run through the interpreter.
    r"(?:python[\d.]*\s+(?:-\S+\s+)*-m\s+)?"
    r"(?:pip3?|uv|pipx|poetry|conda|mamba|micromamba|npm|pnpm|yarn|bun|gem|cargo|go|apt(?:-get)?"
    r"|yum|dnf|apk|brew|snap|pacman|zypper|R|Rscript)\s+(?:\S+\s+)*?(?:install|add|remove"
    r"|uninstall|upgrade|update|sync|create|build|env)\b"
    r"|(?:chmod|chown|chgrp|mkdir|rmdir|rm|mv|cp|ln|touch|install|tar|unzip|gunzip|gzip|bzip2|xz"
    r"|7z|zip|shred|truncate|dd|rsync|patch|useradd|adduser|usermod|userdel|groupadd|passwd"
    r"|chpasswd|crontab|sysctl|mount|ldconfig|update-alternatives|systemctl|service|supervisorctl"
    r"|a2ensite|a2enmod|ufw|iptables|ssh-keygen|htpasswd|mkfifo)\b"
    r"|git\s+(?:-\S+\s+)*(?:commit|checkout|switch|merge|rebase|reset|revert|cherry-pick|stash"
    r"|add|rm|mv|init|clone|pull|apply|am|config|branch|tag|remote|restore|filter-branch"
    r"|filter-repo|gc|prune|update-ref|reflog\s+expire)\b"
    r"|(?:docker|podman)\s+(?:compose\s+)?(?:build|run|create|start|stop|restart|rm|up|down"
    r"|commit|tag|load|network|volume)\b"
    # A terminal multiplexer driven by commands: sessions and panes made, keys typed into the
    # programs running in them (an editor, a REPL), which is how work gets done there.
    r"|tmux\s+(?:-\S+\s+)*(?:new-session|new|new-window|neww|split-window|splitw|send-keys|send"
    r"|kill-session|kill-pane|kill-window|select-layout|resize-pane|rename-window)\b"
    r"|kubectl\s+(?:apply|create|delete|patch|scale|rollout|set|label|annotate)\b"
    r"|(?:make|cmake|ninja|meson|gcc|g\+\+|cc|clang|rustc|javac|ffmpeg|gpg|openssl|convert"
    r"|magick|sqlite3|psql|mysql|wget)\b"
    r"|curl\b.*\s-(?:o|O|-output)\b"
    r")")


# What a program says about itself changes nothing (`gcc --version`, `pip --help`).
_ABOUT_ITSELF = re.compile(r"\s(?:--version|--help|-h)\s*(?:2>&1\s*)?$")
# A database client given only a reading statement, or a database that lives in memory.
_DB_CLIENT = re.compile(r"^(?:sqlite3|psql|mysql)\b")
_READING_SQL = r"\s*(?:SELECT|PRAGMA|EXPLAIN|SHOW|DESCRIBE|\\d|\.tables|\.schema)\b"
_DB_READS_ONLY = re.compile(r"""\s(?:"%s[^"]*"|'%s[^']*')\s*(?:2>&1\s*)?$""" % (_READING_SQL, _READING_SQL),
                            re.I)
# `git branch`, `git tag` and `git remote` with no name (or only listing options) list.
_GIT_LISTS = re.compile(r"^git\s+(?:-\S+\s+)*(?:branch|tag|remote)(?:\s+(?:-a|-r|-v+|-l|--list"
                        r"|--all|--remotes|--verbose|--show-current|--merged|--no-merged|--contains"
                        r"|--sort=\S+|--format=\S+))*\s*$")
# ffmpeg with no output file after its last input only probes the input (`ffmpeg -i a.mp4`).
_FFMPEG_PROBE = re.compile(r"^ffmpeg\b.*\s-i\s+\S+\s*(?:2>&1\s*)?$|^ffmpeg\b.*\s-f\s+null\s+-\s*(?:2>&1\s*)?$")


def _segment_changes(segment: str) -> bool:
    if not _SYSTEM_CHANGE.match(segment) or _ABOUT_ITSELF.search(segment):
        return False
    if _GIT_LISTS.match(segment):
        return False
    if _DB_CLIENT.match(segment):
        return ":memory:" not in segment and not _DB_READS_ONLY.search(segment)
    return not _FFMPEG_PROBE.match(segment)


def changing_segments(command: str) -> tuple[str, ...]:
    """The commands of a command line that change the machine (see _SYSTEM_CHANGE). A
    redirection into a file is an edit already (tools.shell_file_effects); a database client
    that only reads, an ffmpeg that only probes its input, `git branch` listing branches and
    a program asked for its version change nothing."""
    return tuple(segment for segment in command_segments(command) if _segment_changes(segment))


def changes_system(command: str) -> bool:
    """Whether a command line changes the machine (see changing_segments)."""
    return bool(changing_segments(command))


# The tools that show what a program started in the background has printed so far.
_BACKGROUND_OUTPUT = ("BashOutput", "TaskOutput")
_BACKGROUND_STATUS = re.compile(r"<status>\s*(\w+)\s*</status>")
_BACKGROUND_EXIT = re.compile(r"<exit_code>\s*(-?\d+)\s*</exit_code>")
_BACKGROUND_ID = re.compile(r"running in background with ID: (\w+)")


# Programs told to detach themselves (`qemu ... -daemonize`, `docker run -d`, `nohup`).
_DETACHES = re.compile(r"\s-daemonize\b|\s--daemon(?:ize)?\b|\s--detach\b|^(?:nohup|setsid)\s"
                       r"|^(?:docker|podman)\s+(?:compose\s+)?(?:run|up|start)\b.*\s-d\b")


def launches_in_background(turn: Turn) -> bool:
    """Whether a shell call started a program that keeps running after the call returned
    (`server &`, the harness's own run-in-background option, a daemonizing flag)."""
    if (turn.tool_input or {}).get("run_in_background") is True:
        return True
    return detaches(turn.command or "")


def detaches(command: str) -> bool:
    """Whether a command line leaves a program running after the shell that ran it is gone
    (`server &`, `nohup`, `setsid`, a daemonizing flag, `docker run -d`)."""
    command = command.rstrip()
    if command.endswith("&") and not command.endswith("&&"):
        return True
    return bool(command) and any(_DETACHES.search(segment) for segment in command_segments(command))


# Commands that look at a running program: its process, its port, its log, or a request to it.
_PROBES = re.compile(r"^(?:ps|pgrep|pidof|ss|netstat|lsof|nc|ncat|telnet|curl|wget|http|xh|tail"
                     r"|journalctl|systemctl\s+(?:status|is-active)|service\s+\S+\s+status"
                     r"|(?:docker|podman)\s+(?:compose\s+)?(?:ps|logs|inspect))\b")


def probes_running(turn: Turn) -> bool:
    """Whether a call looked at a running program and got an answer (a process listed, a
    port answering, a log line, the harness's view of a background job)."""
    if tool_failed(turn) or not (turn.tool_output or "").strip():
        return False
    if (turn.tool_name or "") in _BACKGROUND_OUTPUT:
        return _background_outcome(turn.tool_output or "") is True
    return bool(turn.command) and any(_PROBES.match(segment)
                                      for segment in command_segments(turn.command))


def _background_outcome(output: str) -> bool | None:
    """How a program started in the background is doing, from what the harness shows of it:
    still running or finished with exit code 0, and no failure printed, is a pass; a non-zero
    exit, a failed or killed status, or a printed failure is a failure."""
    status = _BACKGROUND_STATUS.search(output)
    if status is None:
        return None
    state = status.group(1).lower()
    code = _BACKGROUND_EXIT.search(output)
    if state in ("failed", "killed") or code is not None and code.group(1) != "0":
        return False
    if state not in ("running", "completed"):
        return None
    return not (_summarises_failure(output) or _failure_sign(output))


# A compiler's output named on its command line (`gcc -O2 -o sqlite3 sqlite3.c`).
_COMPILED_TO = re.compile(r"^(?:gcc|g\+\+|cc|clang(?:\+\+)?|rustc|gfortran|go\s+build|swiftc|ghc"
                          r"|ocamlopt|nasm|zig\s+build-exe)\s(?:.*\s)?-o\s*(\S+)")


def _built_programs(command: str) -> set[str]:
    """The base names of the programs a command line compiled."""
    names = set()
    for segment in command_segments(command):
        match = _COMPILED_TO.match(segment)
        if match:
            name = posixpath.basename(match.group(1).strip("'\""))
            if name and not name.endswith((".o", ".so", ".a", ".dylib", ".dll", ".obj")):
                names.add(name)
    return names


def _runs_built_program(command: str, built: set[str]) -> bool:
    """Whether a command line runs, by its name or path, a program the session compiled
    (asking it only for its version or help does not count)."""
    for segment in command_segments(command):
        program = segment.split(None, 1)[0] if segment.strip() else ""
        if posixpath.basename(program.strip("'\"")) in built and not _NOT_A_RUN.search(segment):
            return True
    return False


_SCRIPT_ARG = re.compile(r"^(?:python\d?(?:\.\d+)?|node|ruby|deno\s+run|bun(?:\s+run)?|php|perl|bash|sh"
                         r"|tsx|ts-node)\s+(?:-\S+\s+)*([^\s-]\S*)|^(\.{0,2}/\S+|\S+\.(?:py|js|mjs|ts|sh|rb))")


class _WrittenNames:
    """What the session has made so far that later commands can run: the base names of the
    files it wrote, the module names the edited code can be imported by (both brought up to
    date from the growing edit lists only when asked, once per run of a program, not once
    per edit), the programs it compiled, and the programs it started in the background."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.built: set[str] = set()  # programs the session compiled (`gcc -o NAME`)
        # Programs started in the background, by the id the harness gave them; None: the last.
        self.launched: dict[str | None, str] = {}
        # A check typed into a tmux pane (`tmux send-keys 'pytest' C-m`) and its kind, until a
        # capture of the pane shows how it ended.
        self.typed: tuple[str, str] | None = None
        self._edits = self._writes = 0
        self._modules: set[str] = set()
        self._module_edits = 0
        self._read_paths: set[str] = set()
        self._reads = 0
        # The latest full read of each file (Claude Code's Read: "     1→line"), dropped when
        # the file is written: the original of a whole-file write the harness logged without one.
        self.read_texts: dict[str, Turn] = {}
        self._paths: set[str] = set()

    def _catch_up(self, edits: list, shell_writes: list) -> None:
        """Bring the written paths and their base names up to date from the growing lists."""
        new = [e.path for e in edits[self._edits:]] + [p for _, p in shell_writes[self._writes:]]
        for path in new:
            self._paths.add(path)
            self.names.add(posixpath.basename(path))
        self._edits, self._writes = len(edits), len(shell_writes)

    def paths(self, edits: list, shell_writes: list) -> set[str]:
        """The project paths the session has written so far."""
        self._catch_up(edits, shell_writes)
        return self._paths

    def read_paths(self, reads: list) -> set[str]:
        """The files read so far (brought up to date from the growing read list)."""
        for _, path in reads[self._reads:]:
            self._read_paths.add(path)
        self._reads = len(reads)
        return self._read_paths

    def modules(self, edits: list) -> set[str]:
        """The names an import of the edited code can start with: the file's stem and the
        folders above it (`pkg/sub/mod.py`: mod, sub, pkg)."""
        for record in edits[self._module_edits:]:
            parts = record.path.replace("\\", "/").split("/")
            parts[-1] = posixpath.splitext(parts[-1])[0]
            self._modules.update(part for part in parts[-4:] if part.isidentifier())
        self._module_edits = len(edits)
        return self._modules

    def of(self, edits: list, shell_writes: list) -> set[str]:
        """The base names of the files the session has written so far."""
        self._catch_up(edits, shell_writes)
        return self.names


# The code of an inline program (`python -c "..."`) and the modules it imports.
_INLINE_CODE = re.compile(r"^python\d?(?:\.\d+)?\s+(?:-\S+\s+)*?-c\s+(.+)", re.S)
# Python reading its program from a here-document: `python - <<'PY'`, `python3 <<EOF`.
_STDIN_PYTHON = re.compile(r"(?:^|[;&|]\s*)python\d?(?:\.\d+)?\s+(?:-\S+\s+)*?-?\s*<<")
_IMPORTS = re.compile(r"(?:^|[;\s(\"'])(?:import|from)\s+([A-Za-z_]\w*)")


def _imports_changed_code(command: str, modules: set[str]) -> bool:
    """Whether an inline Python program imports code the session edited."""
    if not modules:
        return False
    for segment in command_segments(command):
        match = _INLINE_CODE.match(segment)
        if match and any(name in modules for name in _IMPORTS.findall(match.group(1))):
            return True
    return any(name in modules for body in _stdin_programs(command)
               for name in _IMPORTS.findall(body))


def _stdin_programs(command: str) -> list[str]:
    """The Python programs a command line gives on standard input (`python - <<'PY' ... PY`)."""
    if "<<" not in command:
        return []
    return [bodies[0] for line, bodies in tools.split_heredocs(tools.unwrap_shell(command))
            if bodies and _STDIN_PYTHON.search(line)]


def inline_program(command: str) -> bool:
    """Whether a command runs a Python program written on its own line (`python -c "..."`,
    `python - <<'PY' ... PY`) rather than a file."""
    return bool(_stdin_programs(command)) or any(
        _INLINE_CODE.match(segment) for segment in command_segments(command))


def _checks_with_by_products(command: str, turn: int, shell_writes: list,
                             modules: set[str]) -> bool:
    """Whether an inline Python program that writes files runs the edited code and writes
    only data (`python - <<'PY'` importing the changed package and pickling one of its
    objects to test_lang.bin): a check whose files are by-products, not a change of code."""
    own = []
    for at, path in reversed(shell_writes):  # this call's writes are the last ones
        if at != turn:
            break
        own.append(path)
    return bool(own) and all(_DATA_FILE.search(path) for path in own) and \
        _imports_changed_code(command, modules)


# Files a program writes as its output or by-product: data, logs, images, pickles, models.
_DATA_FILE = re.compile(r"\.(bin|pkl|pickle|npy|npz|json|csv|tsv|txt|log|out|png|jpe?g|gif|ppm"
                        r"|pgm|wav|parquet|db|sqlite3?|h5|pt|pth)$", re.I)


def _runs_own_code(command: str, cwd: str | None, written: set[str]) -> bool:
    """Whether a run of a program exercises the project: a script the session wrote (its base
    name in `written`), or one inside the project (not a helper under a hidden tool folder
    such as `.gemini/skills`, not a file outside the project); a module or entry point
    (`python -m app`, `node .`) counts."""
    for segment in command_segments(command):
        match = _SCRIPT_ARG.match(segment)
        if not match:
            if classify_check(segment) == "run":
                return True  # python -m pkg, go run ., cargo run ...
            continue
        script = match.group(1) or match.group(2)
        if posixpath.basename(script.strip("'\"")) in written:
            return True
        rel = relative_path(script, cwd)
        if not rel.startswith(("/", "~", "..")) and not any(part.startswith(".") and part not in (".", "..")
                                                          for part in rel.split("/")[:-1]):
            return True
    return False


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
_EXIT_LINE = re.compile(r"^[^\S\n]*(?:Exit code:?[^\S\n]*\d+|Exit Code:[^\S\n]*\d+)[^\S\n]*$", re.I | re.M)
# Edits some harnesses log as successful although the output says the patch did not apply.
_EDIT_FAILED_OUTPUT = re.compile(
    r"^[^\S\n]*(?:error:|execution error:|failed in sandbox\b|Failed to find expected lines"
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


_ABORTED = re.compile(r"^\s*(?:aborted by user|\[Request interrupted by user)|\naborted by user\s*$", re.I)

# A program the machine does not have, in the shell's own words (bash, dash, cmd, PowerShell,
# their Chinese forms) or by its exit status.
MISSING_PROGRAM = re.compile(
    r"\b[\w.+-]+: (?:command )?not found\s*$|^Exit code 127\b"
    r"|is not recognized as (?:an internal or external command|the name of a cmdlet)"
    r"|不是内部或外部命令|无法将“[^”\n]*”项识别为", re.M)
# What else a shell prints when the command itself failed, for harnesses that log no exit
# code (Cline, exports, SpecStory): a line the shell could not parse (PowerShell's `&&`),
# git's and npm's own failure lines, a module that could not be loaded, a path that does not
# exist. A warning or a NativeCommandError (PowerShell wrapping whatever a native program
# wrote to stderr) is no failure.
_SHELL_FAILED_OUTPUT = re.compile(
    r"FullyQualifiedErrorId\s*:\s*(?!NativeCommandError)\w"
    r"|^fatal: |^npm ERR! |^npm error |^Error: Cannot find module\b"
    r"|^(?:\S+: )?(?:line \d+: )?(?:cd: )?[^\n:]+: No such file or directory\s*\Z", re.M)
# An uncaught exception ending the output: Python's traceback, or Node's error and stack.
_DIED_OF_EXCEPTION = re.compile(
    r"^Traceback \(most recent call last\):\n(?:.*\n)*?[\w.]*(?:Error|Exception|Interrupt)\b.*\s*\Z"
    r"|^[\w.]*Error: .*\n(?:\s+at .*\n|\s*[{}].*\n|\s+\w+: .*\n)*\s*(?:Node\.js v[\d.]+\s*)?\Z", re.M)


def printed_failure(output: str) -> bool:
    """Whether a shell call's output says the command failed (a missing program, one of
    `_SHELL_FAILED_OUTPUT`, an uncaught exception); read where no exit code was logged."""
    tail = output[-4000:]
    return bool(MISSING_PROGRAM.search(tail) or _SHELL_FAILED_OUTPUT.search(tail)
                or _DIED_OF_EXCEPTION.search(tail))


def tool_failed(turn: Turn) -> bool:
    """Whether a tool call failed, judged the same way for every harness (a call the user
    aborted did not do its work either)."""
    if turn.is_error:
        return not found_nothing(turn)
    if turn.tool_output and _ABORTED.search(turn.tool_output[-200:]):
        return True
    if turn.exit_code is None and turn.kind in (ToolKind.EDIT, ToolKind.WRITE) and \
            _EDIT_FAILED_OUTPUT.search(turn.tool_output or ""):
        return True
    if turn.exit_code is None and turn.via_shell and turn.tool_output and \
            printed_failure(turn.tool_output):
        return True
    if turn.via_shell and turn.tool_output and _only_missing_program(turn.tool_output):
        return True  # `strings f | head` exits 0, but nothing ran: the pipe hid the failure
    return False


def _only_missing_program(output: str) -> bool:
    """Whether all a shell call printed is that a program is missing (whatever the exit code)."""
    if len(output) > 400:
        return False
    lines = [line for line in output.splitlines() if line.strip()]
    return bool(lines) and all(MISSING_PROGRAM.search(line) for line in lines)


