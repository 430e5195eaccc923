"""facts.checks: the commands that checked the work, and how each ended.

A command is a check by what it runs (shell.classify_check); a run of a program counts only
when it runs the project's own code (a script the session wrote, a module of the project, a
program it compiled, a background program whose output was read), and a check typed into a
tmux pane ends with what the pane's capture shows.
"""

from __future__ import annotations

import posixpath
import re

from ..patterns import compile_later
from .. import tools
from ..model import ToolKind, Turn
from ..shell import BACKGROUND_ID, BACKGROUND_OUTPUT, MASKS_EXIT, SCRIPT_ARG, TMUX_CAPTURE, TMUX_KEY, \
    TMUX_SEND, background_outcome, built_programs, check_outcome, classify_check, command_segments, \
    failure_sign, imports_changed_code, launches_in_background, runs_built_program, says_passed, \
    summarises_failure
from .changes import WrittenNames, relative_path
from .record import Check


def record(turn: Turn, kind: ToolKind, failed: bool, cwd: str | None, edits: list,
           shell_writes: list, checks: list, written: WrittenNames) -> None:
    """Add the check a tool call ran, if it ran one, to `checks`; remember what it launched
    in the background or compiled, for the calls after it."""
    command = turn.command
    if command and "tmux" in command and not failed:
        typed_checks(turn, command, cwd, edits, shell_writes, checks, written)
    if not command and written.launched and (turn.tool_name or "") in BACKGROUND_OUTPUT:
        # Reading what a program started in the background printed (`jupyter notebook &`,
        # then BashOutput): a run of it, judged by its status, exit code and output.
        inputs = turn.tool_input or {}
        key = next((inputs[k] for k in ("bash_id", "shell_id", "task_id") if k in inputs), None)
        launched = written.launched.get(key) if isinstance(key, str) else None
        outcome = background_outcome(turn.tool_output or "")
        if outcome is not None:
            checks.append(Check(turn.index, launched or written.launched[None], "run", outcome))
    if command and kind in (ToolKind.SHELL, ToolKind.EDIT, ToolKind.READ):
        check_kind = classify_check(command)
        if check_kind == "run" and (kind is ToolKind.EDIT or not runs_own_code(
                command, cwd, written.of(edits, shell_writes))) and not (
                kind is ToolKind.EDIT and checks_with_by_products(
                    command, turn.index, shell_writes, written.modules(edits))):
            # A script that writes files (`python - <<EOF ... write_text`) makes a change,
            # it does not check one.
            check_kind = None
        elif check_kind is None and kind is not ToolKind.EDIT and "-c" in command and \
                imports_changed_code(command, written.modules(edits)):
            # `python -c "import fasttext; fasttext.load_model(...)"` after editing fasttext
            # runs the changed code; a `python -c` that imports nothing changed only looks.
            check_kind = "run"
        if check_kind is None and kind is ToolKind.SHELL and launches_in_background(turn):
            written.launched[None] = command
            started = BACKGROUND_ID.search(turn.tool_output or "")
            if started:
                written.launched[started.group(1)] = command
        if check_kind is None and kind is ToolKind.SHELL and written.built and \
                runs_built_program(command, written.built):
            # `sqlite3 :memory: "SELECT 1"` after `gcc -o sqlite3 ...`: the program the
            # session compiled, run by its name, exercises the build.
            check_kind = "run"
        if check_kind:
            outcome = check_outcome(turn)
            if outcome is None and check_kind in ("typecheck", "lint", "build") and turn.exit_code == 0 \
                    and not MASKS_EXIT.search(command) and not (turn.tool_output or "").strip():
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
            written.built.update(built_programs(command))


def typed_checks(turn: Turn, command: str, cwd: str | None, edits: list, shell_writes: list,
                  checks: list, written: WrittenNames) -> None:
    """A check typed into a tmux pane runs there: the capture of the pane that follows shows
    how it ended (its summary, a traceback, or its output)."""
    for segment in command_segments(command):
        if TMUX_SEND.match(segment):
            words = tools.shell_words(segment)[2:]
            typed = [w for i, w in enumerate(words) if not w.startswith("-")
                     and not (i and words[i - 1] == "-t") and not TMUX_KEY.match(w)]
            text = " ".join(typed).strip()
            kind = classify_check(text) if text else None
            if kind == "run" and not runs_own_code(text, cwd, written.of(edits, shell_writes)):
                kind = None
            if kind:
                written.typed = (text, kind)
        elif TMUX_CAPTURE.match(segment) and written.typed and (turn.tool_output or "").strip():
            text, kind = written.typed
            output = turn.tool_output or ""
            outcome = False if summarises_failure(output) or (
                not says_passed(output) and failure_sign(output)) else True
            checks.append(Check(turn.index, text, kind, outcome))
            written.typed = None


def checks_with_by_products(command: str, turn: int, shell_writes: list,
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
        imports_changed_code(command, modules)


# Files a program writes as its output or by-product: data, logs, images, pickles, models.
_DATA_FILE = compile_later(r"\.(bin|pkl|pickle|npy|npz|json|csv|tsv|txt|log|out|png|jpe?g|gif|ppm"
                        r"|pgm|wav|parquet|db|sqlite3?|h5|pt|pth)$", re.I)


def runs_own_code(command: str, cwd: str | None, written: set[str]) -> bool:
    """Whether a run of a program exercises the project: a script the session wrote (its base
    name in `written`), or one inside the project (not a helper under a hidden tool folder
    such as `.gemini/skills`, not a file outside the project); a module or entry point
    (`python -m app`, `node .`) counts."""
    for segment in command_segments(command):
        match = SCRIPT_ARG.match(segment)
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
