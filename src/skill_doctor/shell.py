"""shell: what a shell command line runs, and what its output says.

Parsing of the command lines agents run, apart from any session: the commands a line runs
once its wrappers are unwrapped (`cd x && uv run pytest | tail` runs `pytest`), the kind of
check a command is (test, typecheck, lint, build, a run of the program), whether it changes
the machine, starts something in the background or looks at something running, what it does
as "program subcommand target", and how a call ended by its output's own words (a test
summary, a traceback, a missing program). The facts package reads sessions with these; no function here
keeps state.
"""

from __future__ import annotations

import functools
import posixpath
import re

from .patterns import compile_later
from . import tools
from .model import ToolKind, Turn
from .text import CaselessPattern, ascii_folded, quote


# Programs that check the work: test runners, builds, type checkers, linters. Each pattern is
# matched at the start of one command of a command line (after unwrapping `cd x &&`, `bash -c`,
# env assignments, `uv run` ...), so a commit message or an echo that mentions pytest is none.
_CHECK_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, compile_later(pattern)) for kind, pattern in (
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
_RUN_PROGRAM = compile_later(r"(python\d?(\.\d+)?|node|ruby|deno\s+run|bun\s+run|go\s+run|cargo\s+run"
                          r"|php|perl|bash|sh|\./\S+|\S+\.(py|js|mjs|ts|sh|rb))\b")


# A request that only asks whether the server answers (`curl -I`, the status code alone, the
# body thrown away) shows it is up, not that the work does what was asked.
_STATUS_ONLY = compile_later(r"^(curl|wget|http|xh)\b.*(\s-I\b|\s--head\b|\s-o\s*/dev/null\b|\s--spider\b)")


_NOT_A_RUN = compile_later(r"\s-(c|m\s+(pip|venv|http\.server|json\.tool))\b|^(bash|sh)\s*$"
                        r"|--version\b|\s-V\b")


# Wrappers whose arguments are the command really run.
_WRAPPER = compile_later(
    r"^(?:(?:sudo|nohup|time|exec|env|nice|stdbuf(?:\s+-\S+)*|timeout\s+(?:-\S+\s+)*\S+"
    r"|xvfb-run(?:\s+-\S+)*|npx(?:\s+-\S+)*|pnpx|bunx|uvx|uv\s+run(?:\s+--?\S+)*|poetry\s+run"
    r"|pipenv\s+run|hatch\s+run|pdm\s+run|rye\s+run|conda\s+run(?:\s+-\S+\s+\S+)*"
    r"|docker\s+(?:compose\s+)?exec(?:\s+-\S+)*\s+\S+|docker\s+run(?:\s+(?:-\S+\s+)?\S+)*?\s+\S+:\S*"
    r"|kubectl\s+exec\s+\S+\s+--|\w+=\S*)\s+)+")


_SHELL_C = compile_later(r"""^(?:ba|z|da)?sh\s+(?:-\w+\s+)*-\w*c\s+(['"])(.*)\1\s*$|^(?:powershell|pwsh)(?:\.exe)?\s+(?:-\w+\s+)*-Command\s+(['"]?)(.*)\3\s*$""", re.S | re.I)


_SEGMENT_SPLIT = compile_later(r"&&|\|\||;|\|&|\||\n")


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
_COMPARED_AND_TOLD = compile_later(r"(?:^|&&|;|\|\||\n)\s*(?:diff|cmp)\s[^\n;|&]*&&\s*echo\b")


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
_SYSTEM_BIN = compile_later(r"(?:/usr(?:/local)?)?/s?bin/?$", re.I)


# A check's own summary of how it ended; it overrides the exit code of a pipeline, `|| true`
# or `; echo`, whose exit status is not the check's.
_FAILED_OUTPUT = compile_later(
    r"(\b[1-9]\d* (failed|failures?|errors?)\b|^FAILED\b|^FAIL\b|\bFAILURES?!?$|^error(\[\w+\])?:"
    r"|^\S+\(\d+,\d+\): error|error TS\d+|\bBUILD FAILED\b|npm ERR!|^ERROR[: ]|test result: FAILED"
    r"|Tests?:\s+[1-9]\d* failed|^[^\S\n]*✖ [1-9]\d* problems?|Found [1-9]\d* errors?|\bno tests ran\b"
    r"|\bcollected 0 items\b|command not found|^panic:|Segmentation fault|\bexit (code|status) [1-9]"
    # The shell could not even enter the folder: the check never ran.
    r"|^(?:ba|z)?sh: (?:line \d+: )?cd: [^\n]*: No such file or directory)",
    re.MULTILINE)


# Signs of a failure that a run can print and still pass (a logged traceback, an expected
# failure): they decide only when no summary says it passed.
_FAILURE_SIGN = compile_later(r"Traceback \(most recent|SyntaxError|ModuleNotFoundError|ImportError"
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


_PASSED_OUTPUT = compile_later("(" + "|".join(rx for _, rx in _PASSED_PARTS) + ")", re.MULTILINE | re.I)


_PASSED_FOLDED = tuple((text, compile_later(rx, re.MULTILINE)) for text, rx in _PASSED_PARTS)


# Words one of which every failure summary above contains: a substring test rules most
# outputs out far faster than the pattern would.
_FAILURE_WORDS = ("fail", "error", "panic", "not found", "segmentation", "exit code",
                  "exit status", "no tests ran", "collected 0", "✖", "found ", "no such file")


MASKS_EXIT = compile_later(r"\|\||\|(?!\|)|;\s*(echo|true|exit\s+0)\b")


def check_outcome(turn: Turn) -> bool | None:
    """How a check ended: its output's own summary first (a failing test piped into `tail`
    still failed), then the exit code, then whether the call errored; None when the log
    cannot tell (no summary, no exit code, or a run that printed nothing)."""
    output = turn.tool_output or ""
    if len(output) > 8000:
        # A check's verdict is in its summary at the end (and a crash at the start): the
        # middle of a long log decides nothing, and skipping it keeps this cheap.
        output = output[:2000] + "\n" + output[-6000:]
    if summarises_failure(output):
        return False
    passed = says_passed(output)
    masked = bool(turn.command and MASKS_EXIT.search(turn.command))
    if turn.exit_code is not None and not masked:
        if turn.exit_code != 0:
            return False
        if not passed and failure_sign(output):
            return False
        return True if output.strip() else None
    if turn.is_error:
        return False
    if passed:
        return True
    if failure_sign(output):
        return False
    return None


def says_passed(output: str) -> bool:
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


def summarises_failure(output: str) -> bool:
    """Whether the output's own summary says it failed (`_FAILED_OUTPUT`)."""
    folded = output.lower()
    return any(word in folded for word in _FAILURE_WORDS) and _FAILED_OUTPUT.search(output) is not None


def failure_sign(output: str) -> bool:
    return any(text in output for text in _FAILURE_SIGN_TEXTS) and \
        _FAILURE_SIGN.search(output) is not None


def shows_pane(command: str) -> bool:
    """Whether a command line prints what a tmux pane shows (`tmux capture-pane -p`)."""
    return "tmux" in command and any(TMUX_CAPTURE.match(segment)
                                     for segment in command_segments(command))


TMUX_SEND = compile_later(r"^tmux\s+(?:-\S+\s+)*(?:send-keys|send)\b")


TMUX_CAPTURE = compile_later(r"^tmux\s+(?:-\S+\s+)*(?:capture-pane|capturep)\b")


# Key names tmux send-keys takes, which type no text.
TMUX_KEY = compile_later(r"^(?:C-\w|M-\w|S-\w|Enter|Escape|Tab|Space|BSpace|Up|Down|Left|Right"
                       r"|Home|End|F\d+)$")


# Commands whose successful run changes the machine a task is about, where a task is done
# through commands rather than file edits: packages installed, permissions set, files made,
# moved or deleted, services and users configured, a repository's history changed, images
# built, outputs written by converters and compilers.
_SYSTEM_CHANGE = compile_later(
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
_ABOUT_ITSELF = compile_later(r"\s(?:--version|--help|-h)\s*(?:2>&1\s*)?$")


# A database client given only a reading statement, or a database that lives in memory.
_DB_CLIENT = compile_later(r"^(?:sqlite3|psql|mysql)\b")


_READING_SQL = r"\s*(?:SELECT|PRAGMA|EXPLAIN|SHOW|DESCRIBE|\\d|\.tables|\.schema)\b"


_DB_READS_ONLY = compile_later(r"""\s(?:"%s[^"]*"|'%s[^']*')\s*(?:2>&1\s*)?$""" % (_READING_SQL, _READING_SQL),
                            re.I)


# `git branch`, `git tag` and `git remote` with no name (or only listing options) list.
_GIT_LISTS = compile_later(r"^git\s+(?:-\S+\s+)*(?:branch|tag|remote)(?:\s+(?:-a|-r|-v+|-l|--list"
                        r"|--all|--remotes|--verbose|--show-current|--merged|--no-merged|--contains"
                        r"|--sort=\S+|--format=\S+))*\s*$")


# ffmpeg with no output file after its last input only probes the input (`ffmpeg -i a.mp4`).
_FFMPEG_PROBE = compile_later(r"^ffmpeg\b.*\s-i\s+\S+\s*(?:2>&1\s*)?$|^ffmpeg\b.*\s-f\s+null\s+-\s*(?:2>&1\s*)?$")


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
BACKGROUND_OUTPUT = ("BashOutput", "TaskOutput")


_BACKGROUND_STATUS = compile_later(r"<status>\s*(\w+)\s*</status>")


_BACKGROUND_EXIT = compile_later(r"<exit_code>\s*(-?\d+)\s*</exit_code>")


BACKGROUND_ID = compile_later(r"running in background with ID: (\w+)")


# Programs told to detach themselves (`qemu ... -daemonize`, `docker run -d`, `nohup`).
_DETACHES = compile_later(r"\s-daemonize\b|\s--daemon(?:ize)?\b|\s--detach\b|^(?:nohup|setsid)\s"
                       r"|^(?:docker|podman)\s+(?:compose\s+)?(?:run|up|start)\b.*\s-d\b")
_DETACH_WORDS = ("-daemon", "--detach", "nohup", "setsid", "docker", "podman")


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
    # Every match holds one of these words, and every segment is a piece of the command line:
    # a command without them (nearly all) is not cut into segments at all.
    if not any(word in command for word in _DETACH_WORDS):
        return False
    return any(_DETACHES.search(segment) for segment in command_segments(command))


# Commands that look at a running program: its process, its port, its log, or a request to it.
_PROBES = compile_later(r"^(?:ps|pgrep|pidof|ss|netstat|lsof|nc|ncat|telnet|curl|wget|http|xh|tail"
                     r"|journalctl|systemctl\s+(?:status|is-active)|service\s+\S+\s+status"
                     r"|(?:docker|podman)\s+(?:compose\s+)?(?:ps|logs|inspect))\b")


def probes_running(turn: Turn) -> bool:
    """Whether a call looked at a running program and got an answer (a process listed, a
    port answering, a log line, the harness's view of a background job)."""
    if tool_failed(turn) or not (turn.tool_output or "").strip():
        return False
    if (turn.tool_name or "") in BACKGROUND_OUTPUT:
        return background_outcome(turn.tool_output or "") is True
    return bool(turn.command) and any(_PROBES.match(segment)
                                      for segment in command_segments(turn.command))


def background_outcome(output: str) -> bool | None:
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
    return not (summarises_failure(output) or failure_sign(output))


# A compiler's output named on its command line (`gcc -O2 -o sqlite3 sqlite3.c`).
_COMPILED_TO = compile_later(r"^(?:gcc|g\+\+|cc|clang(?:\+\+)?|rustc|gfortran|go\s+build|swiftc|ghc"
                          r"|ocamlopt|nasm|zig\s+build-exe)\s(?:.*\s)?-o\s*(\S+)")


def built_programs(command: str) -> set[str]:
    """The base names of the programs a command line compiled."""
    names = set()
    for segment in command_segments(command):
        match = _COMPILED_TO.match(segment)
        if match:
            name = posixpath.basename(match.group(1).strip("'\""))
            if name and not name.endswith((".o", ".so", ".a", ".dylib", ".dll", ".obj")):
                names.add(name)
    return names


def runs_built_program(command: str, built: set[str]) -> bool:
    """Whether a command line runs, by its name or path, a program the session compiled
    (asking it only for its version or help does not count)."""
    for segment in command_segments(command):
        program = segment.split(None, 1)[0] if segment.strip() else ""
        if posixpath.basename(program.strip("'\"")) in built and not _NOT_A_RUN.search(segment):
            return True
    return False


SCRIPT_ARG = compile_later(r"^(?:python\d?(?:\.\d+)?|node|ruby|deno\s+run|bun(?:\s+run)?|php|perl|bash|sh"
                         r"|tsx|ts-node)\s+(?:-\S+\s+)*([^\s-]\S*)|^(\.{0,2}/\S+|\S+\.(?:py|js|mjs|ts|sh|rb))")


# The code of an inline program (`python -c "..."`) and the modules it imports.
_INLINE_CODE = compile_later(r"^python\d?(?:\.\d+)?\s+(?:-\S+\s+)*?-c\s+(.+)", re.S)


# Python reading its program from a here-document: `python - <<'PY'`, `python3 <<EOF`.
_STDIN_PYTHON = compile_later(r"(?:^|[;&|]\s*)python\d?(?:\.\d+)?\s+(?:-\S+\s+)*?-?\s*<<")


_IMPORTS = compile_later(r"(?:^|[;\s(\"'])(?:import|from)\s+([A-Za-z_]\w*)")


def imports_changed_code(command: str, modules: set[str]) -> bool:
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


# Searchers exit 1 when nothing matched: that is an answer, not a failed call.
_SEARCH_PROGRAM = compile_later(r"(?:^|[;&|(]|\s)(?:rg|grep|egrep|fgrep|ag|ack|git\s+grep)\s")


_ERROR_TEXT = compile_later(r"error|no such file|not found|permission denied|unrecognized|invalid"
                         r"|usage:|cannot|traceback|denied|failed", re.I)


_EXIT_LINE = compile_later(r"^[^\S\n]*(?:Exit code:?[^\S\n]*\d+|Exit Code:[^\S\n]*\d+)[^\S\n]*$", re.I | re.M)


# Edits some harnesses log as successful although the output says the patch did not apply.
_EDIT_FAILED_OUTPUT = compile_later(
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


# Case-insensitive, matched at case-sensitive speed (text.CaselessPattern): run on every call.
_ABORTED = CaselessPattern(r"^\s*(?:aborted by user|\[request interrupted by user)|\naborted by user\s*$",
                           required=("by user",))


# A program the machine does not have, in the shell's own words (bash, dash, cmd, PowerShell,
# their Chinese forms) or by its exit status.
MISSING_PROGRAM = compile_later(
    r"\b[\w.+-]+: (?:command )?not found\s*$|^Exit code 127\b"
    r"|is not recognized as (?:an internal or external command|the name of a cmdlet)"
    r"|不是内部或外部命令|无法将“[^”\n]*”项识别为", re.M)

# Every match of MISSING_PROGRAM holds one of these: an output without them is not searched.
_MISSING_WORDS = ("not found", "Exit code 127", "is not recognized as", "不是内部或外部命令", "无法将“")


def says_program_missing(text: str) -> bool:
    """Whether `text` (an output, or part of one) says a program the machine lacks."""
    return any(word in text for word in _MISSING_WORDS) and MISSING_PROGRAM.search(text) is not None


# What else a shell prints when the command itself failed, for harnesses that log no exit
# code (Cline, exports, SpecStory): a line the shell could not parse (PowerShell's `&&`),
# git's and npm's own failure lines, a module that could not be loaded, a path that does not
# exist. A warning or a NativeCommandError (PowerShell wrapping whatever a native program
# wrote to stderr) is no failure.
_SHELL_FAILED_OUTPUT = compile_later(
    r"FullyQualifiedErrorId\s*:\s*(?!NativeCommandError)\w"
    r"|^fatal: |^npm ERR! |^npm error |^Error: Cannot find module\b"
    r"|^(?:\S+: )?(?:line \d+: )?(?:cd: )?[^\n:]+: No such file or directory\s*\Z", re.M)


# An uncaught exception ending the output: Python's traceback, or Node's error and stack.
_DIED_OF_EXCEPTION = compile_later(
    r"^Traceback \(most recent call last\):\n(?:.*\n)*?[\w.]*(?:Error|Exception|Interrupt)\b.*\s*\Z"
    r"|^[\w.]*Error: .*\n(?:\s+at .*\n|\s*[{}].*\n|\s+\w+: .*\n)*\s*(?:Node\.js v[\d.]+\s*)?\Z", re.M)


def printed_failure(output: str) -> bool:
    """Whether a shell call's output says the command failed (a missing program, one of
    `_SHELL_FAILED_OUTPUT`, an uncaught exception); read where no exit code was logged."""
    tail = output[-4000:]
    return bool(says_program_missing(tail) or _SHELL_FAILED_OUTPUT.search(tail)
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
    return bool(lines) and all(says_program_missing(line) for line in lines)


_COSMETIC = (
    compile_later(r"^\s*cd\s+\S+\s*&&\s*"),            # cd somewhere && ...
    compile_later(r"^\s*(?:\w+=\S+\s+)+"),              # ENV=x ...
    compile_later(r"\s+\d?>>?\s*(?:&\d|/dev/null)"),   # 2>&1, 2>/dev/null
    compile_later(r"\s*\|\s*(?:head|tail|less|more|cat)(?:\s+-?[\w=]+)*\s*$"),  # | tail -20
    compile_later(r"^\s*timeout\s+\S+\s+"),
)


@functools.lru_cache(maxsize=8192)
def normal_command(command: str) -> str:
    """A command without cosmetic wrappers: `cd x && npm test 2>&1 | tail` is `npm test`."""
    text = " ".join(command.split())
    for pattern in _COSMETIC:
        text = pattern.sub("", text)
    return " ".join(text.split())


# Programs whose first word after the program names what they do (`git push`, `npm install`).
_SUBCOMMAND_PROGRAMS = {"git", "gh", "npm", "pnpm", "yarn", "bun", "docker", "kubectl", "brew",
                        "pip", "pip3", "uv", "poetry", "cargo", "go", "apt", "apt-get", "dnf",
                        "yum", "helm", "terraform", "gcloud", "aws", "az", "systemctl", "conda",
                        "dotnet", "mvn", "gradle", "./gradlew", "rustup", "nvm", "pyenv", "make"}


# Different programs that do the same thing.
_SYNONYMS = {"which": "locate", "whereis": "locate", "type": "locate", "command": "locate",
             "fd": "find", "rg": "grep", "ag": "grep", "ack": "grep", "egrep": "grep",
             "python3": "python", "pip3": "pip", "apt-get": "apt"}


_LOOKING = {"cd", "echo", "printf", "true", "sleep", "set", "export", "source", "."}


def program_name(word: str) -> str:
    """A command's program as one name, whatever its path, quotes or synonym
    (`/usr/bin/python3` and `python` are both `python`)."""
    program = posixpath.basename(word.strip("'\""))
    return _SYNONYMS.get(program, program)


@functools.lru_cache(maxsize=8192)
def operation_key(command: str) -> str:
    """What a command line does, as "program subcommand target": two attempts at the same
    operation share it whatever their flags, wrappers, paths or pipes (`git add -f x.py` and
    `cd repo && git add /abs/x.py 2>&1 | tail` are both `git add x.py`)."""
    for segment in command_segments(command):
        words = segment.split()
        if not words or words[0] in _LOOKING:
            continue
        if words[0] == "command" and len(words) > 1 and words[1] == "-v":
            words = ["which"] + words[2:]
        program = program_name(words[0])
        rest = [w.strip("'\"") for w in words[1:] if not w.startswith("-") and "=" not in w[:1]]
        parts = [program]
        if program in _SUBCOMMAND_PROGRAMS and rest:
            parts.append(rest.pop(0))
        if rest:
            target = rest[0].rstrip("/")
            parts.append(posixpath.basename(target) if "/" in target else target)
        return quote(" ".join(parts), 200)
    return quote(" ".join(command.split()), 200)
