"""facts.retries: the session's retry episodes, failed or ineffective attempts tried again.

Two criteria read them (retry waste counts them, turn economy the calls they cost), so they
are found once, with the parameters the rubric gives the retry criterion (`DEFAULTS` when it
gives none). See the retry_episodes detector for what makes an episode.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from typing import Any, Mapping

from ..patterns import compile_later
from ..model import Role, ToolKind, Turn
from ..shell import classify_check, found_nothing, normal_command, operation_key, says_program_missing
from ..text import CaselessPattern, quote
from .changes import TEST_FILE, is_doc_file, relative_path
from .record import Episode, Facts

# How far apart two attempts may be (tool calls), how many identical calls make a loop and how
# close each must follow the last, how many calls failing in a row make an episode.
DEFAULTS: Mapping[str, int] = {"window": 12, "loop_repeats": 3, "loop_window": 2, "failing_streak": 3}


_INVOCATION_ERROR = compile_later(
    r"command not found|is not recognized as|No module named|ModuleNotFoundError|Missing script"
    r"|Unknown (command|script)|no tests ran|file or directory not found|Cannot find module"
    r"|could not find|not installed|No such file or directory|Exit code 127|unrecognized arguments"
    r"|no such option|not a valid command|No rule to make target", re.I)


def _error_text(turn: Turn) -> str:
    text = re.sub(r"\d+", "#", (turn.tool_output or "").strip())[:300]
    return text if len(text) >= 10 else ""


# A command left running in the background whose result the agent never read.
# Case-insensitive, matched at case-sensitive speed (text.CaselessPattern): run on every call.
_STILL_RUNNING = CaselessPattern(r"process running with session id|still running"
                                 r"|running in the background|command running in background",
                                 required=("running",))


_ASKS_TO_RETRY = CaselessPattern(r"\b(try|run|do) (it |that |this )?again\b|\bretry\b|\bone more time\b",
                                 required=("again", "retry", "one more time"))


# What a failing run reports, without what moves between two runs of one failure: where it
# happened (file:line:col, "line 42"), how long it took, addresses. Counts of a test summary
# ("2 failed", "1 passed") stay: they tell a failure that changed from one that did not.
_MOVING_NUMBERS = compile_later(
    r"\b0x[0-9a-f]+\b|\d+(?:\.\d+)?(?!\.?\d|\s+(?:failed|passed|errors?|skipped|xfailed|xpassed"
    r"|tests?|failures?|warnings?|examples?|specs?|assertions?)\b)", re.I)


def masked_output(output: str) -> str:
    """A run's output with its moving numbers masked, for telling one result from another."""
    return _MOVING_NUMBERS.sub("#", output.strip())


_EMPTY_SEARCH = compile_later(r"^\s*(no files found|no matches found|found 0 |0 matches|no results)", re.I)


def find(facts: Facts, params: Mapping[str, Any] | None = None) -> tuple[Episode, ...]:
    """The session's retry episodes in order, overlapping ones merged (see the retry_episodes
    detector); `params` as the rubric gives them, `DEFAULTS` for those it does not."""
    params = {**DEFAULTS, **(params or {})}
    window, loop_repeats, loop_window = params["window"], params["loop_repeats"], params["loop_window"]
    streak_length = params["failing_streak"]
    cwd = facts.transcript.cwd
    code_edit_turns = [turn for turn, path in facts.changes
                       if path is not None and not TEST_FILE.search(path) and not is_doc_file(path)]
    test_edit_turns = [turn for turn, path in facts.changes if path is not None and TEST_FILE.search(path)]
    failed_turns = facts.failed
    episodes: list[Episode] = []
    by_key: dict[tuple[str, int], Episode] = {}  # (key, request) -> its episode
    open_attempts: dict[str, tuple[int, Turn, int]] = {}  # key -> (position, turn, request)
    errors_seen: dict[tuple[str, str], tuple[Turn, int]] = {}  # (key, error) -> first failure
    hunt: list[Turn] = []
    in_retry: set[int] = set()
    loops: dict[tuple, tuple[int, int, int, list[int]]] = {}
    user_epoch = file_epoch = 0
    position = 0
    streak: list[Turn] = []  # the calls failing one after another, nothing succeeding between

    def add(key: str, request: int, first: Turn, again: Turn, cause: str) -> None:
        episode = by_key.get((key, request))
        if episode is None:
            episode = _new_episode(episodes, first, cause)
            by_key[(key, request)] = episode
        if again.index not in episode.turns:
            episode.turns.append(again.index)
        episode.last = max(episode.last, again.index)
        in_retry.update((first.index, again.index))

    missing: tuple[int, Turn, int] | None = None  # the last call whose program was missing
    check_failed = {c.turn for c in facts.checks if c.passed is False}
    checks_by_turn = {c.turn: c.kind for c in facts.checks}
    for t in facts.transcript.turns:
        if t.meta is not None and t.meta != "interrupt":
            continue
        if t.role is Role.USER:
            user_epoch += 1
            _hunt_episode(episodes, hunt, in_retry)
            hunt = []
            if _ASKS_TO_RETRY.search(t.content):
                open_attempts.clear()  # the user asked for the next attempt
            continue
        if t.role is not Role.TOOL:
            continue
        position += 1
        request = _request_of(facts, t.index)
        t_failed = t.index in failed_turns or t.index in check_failed
        key = _attempt_key(t, cwd)
        if t.command and t.kind is not ToolKind.PLAN:
            # A program the machine lacks, then another call for the same step (`systemctl`
            # not found, then `service nginx start`): the first attempt was wasted.
            lacks = t_failed and says_program_missing((t.tool_output or "")[:2000])
            if missing is not None and missing[2] == request and position - missing[0] == 1 \
                    and not lacks and missing[1].index not in in_retry \
                    and t.index not in in_retry \
                    and _operands(missing[1].command) & _operands(t.command):
                add("missing:" + str(missing[1].index), request, missing[1], t, "missing_program")
            missing = (position, t, request) if lacks and classify_check(t.command) is None \
                else None
        ineffective = (t.kind in (ToolKind.SEARCH, ToolKind.LIST) and _found_nothing(t)) or \
            bool(_STILL_RUNNING.search((t.tool_output or "")[:600]))
        if key is not None:
            opened = open_attempts.get(key)
            if opened is not None:
                pos, before, before_request = opened
                if before_request == request and position - pos <= window and \
                        _same_place(before, t):
                    cause = _retry_cause(before, t, code_edit_turns, test_edit_turns, checks_by_turn)
                    if cause:
                        add(key, request, before, t, cause)
            error = _error_text(t) if t_failed else ""
            if error and (key, error) in errors_seen and (key, request) not in by_key:
                first, _ = errors_seen[(key, error)]
                # A check run again after the code changed, now failing differently ("2
                # failed", then "1 failed": alike only with the numbers taken out), is
                # red-green; failing the same way, the fix did not work (a line number or a
                # duration that moved does not make it another failure).
                changed = t.index in checks_by_turn and bisect.bisect_left(
                    code_edit_turns, first.index) < bisect.bisect_left(code_edit_turns, t.index) \
                    and masked_output(first.tool_output or "") != \
                    masked_output(t.tool_output or "")
                if not changed:
                    add(key, request, first, t, "same_error")
            elif error:
                errors_seen.setdefault((key, error), (t, request))
            if t_failed or ineffective:
                open_attempts[key] = (position, t, request)
            else:
                open_attempts.pop(key, None)
        if t.kind is ToolKind.READ:
            # the file was read again after a failed edit: the next edit is informed
            for path in t.paths:
                open_attempts.pop("edit:" + _place(path, cwd), None)
        elif t.kind in (ToolKind.EDIT, ToolKind.WRITE) and not t_failed:
            # a file missing when read and written since is there to be read: no retry
            for path in t.paths:
                open_attempts.pop(_read_key(path), None)
        # Hunting for the test command: different check commands that cannot even start.
        if t.command and classify_check(t.command) in ("test", "build", "typecheck", "lint"):
            if t_failed and _INVOCATION_ERROR.search(t.tool_output or ""):
                hunt.append(t)
            else:
                _hunt_episode(episodes, hunt, in_retry)
                hunt = []
        # Loops: the same call with the same result, again and again, nothing changed between.
        is_edit = t.kind in (ToolKind.EDIT, ToolKind.WRITE)
        if not is_edit and t.kind is not ToolKind.PLAN and (t.tool_output or t.command):
            loop_key = (t.tool_name, _target(t), (t.tool_output or "")[:2000])
            state = loops.get(loop_key)
            epoch = user_epoch * 1_000_003 + file_epoch
            if state and position - state[0] <= loop_window and state[1] == epoch:
                turns = state[3] + [t.index]
                loops[loop_key] = (position, epoch, state[2] + 1, turns)
                if state[2] + 1 == loop_repeats:
                    episodes.append(Episode(turns[0], t.index, turns, t.tool_name or "call",
                                             "loop", "loop"))
                elif state[2] + 1 > loop_repeats:
                    _extend_loop(episodes, turns[0], t.index)
            else:
                loops[loop_key] = (position, epoch, 1, [t.index])
        if is_edit and not t_failed:
            file_epoch += 1
        if t_failed and t.kind is not ToolKind.PLAN:
            streak.append(t)
        else:
            _streak_episode(episodes, streak, in_retry, streak_length)
            streak = []
    _streak_episode(episodes, streak, in_retry, streak_length)
    _hunt_episode(episodes, hunt, in_retry)
    episodes.extend(_user_redos(facts))
    episodes.extend(_shell_edits_redone(facts, cwd))
    return tuple(_merge_episodes(episodes))


def _request_of(facts: Facts, index: int) -> int:
    """The turn of the main request a turn served (0 before any)."""
    request = facts.request_at(index)
    return request.turn if request is not None else 0


def _place(path: str, cwd: str | None) -> str:
    """A path the same way whichever form the log gives it (absolute, relative, quoted)."""
    parts = relative_path(path, cwd).split("/")
    return "/".join(parts[-2:])


def _attempt_key(turn: Turn, cwd: str | None) -> str | None:
    """What a tool call attempts, so that two attempts at the same thing compare equal."""
    if turn.kind in (ToolKind.EDIT, ToolKind.WRITE) and turn.paths and not turn.via_shell:
        return "edit:" + _place(turn.paths[0], cwd)
    if turn.kind is ToolKind.READ and not turn.command:
        # Reading is how a failed attempt is understood, not an attempt; but a read that
        # failed (no such file) and the read of the same name elsewhere that follows it are
        # two attempts at one file.
        return _read_key(turn.paths[0]) if turn.paths else None
    if turn.command:
        return "cmd:" + operation_key(turn.command)
    if turn.kind in (ToolKind.SEARCH, ToolKind.LIST):
        inp = turn.tool_input or {}
        where = turn.paths[0] if turn.paths else str(inp.get("path") or inp.get("dir") or "")
        return "look:" + _place(where, cwd) if where else None
    if turn.tool_name == "unknown" and not turn.tool_input:
        return None  # a result whose call the log lost (a damaged line): what it tried is unknown
    if turn.tool_name:
        # Two tools given the same input (a file key and a node id) are two attempts at
        # different things. What names the target is in the text values; numbers and
        # switches beside them are options, like a command's flags (`depth: 2`, then 1).
        inp = turn.tool_input or {}
        # A commit message or a description is what the call says, not what it acts on:
        # push_files to one repo and branch is the same push whatever message it carries.
        names = sorted((k, v) for k, v in inp.items() if isinstance(v, str)
                       and k.lower() not in _PROSE_KEYS)
        if names and not turn.paths and not turn.command:
            return f"tool:{turn.tool_name}:" + repr(names)[:300]
        return f"tool:{turn.tool_name}:" + _target(turn)[:300]
    return None


_PROSE_KEYS = frozenset({"message", "commit_message", "description", "body", "title", "comment",
                         "summary", "reason", "explanation"})


def _read_key(path: str) -> str:
    """Reads of one file name are attempts at one file, wherever the path put it (and in
    whichever form: `/c/Users/me/README.md` failed, then `C:\\Users\\me\\README.md`)."""
    return "read:" + posixpath.basename(relative_path(path, None))


_CD = compile_later(r"^\s*cd\s+(\S+)\s*(?:&&|;)")


def _same_place(before: Turn, again: Turn) -> bool:
    """Whether two commands ran in the same folder: `cd ~/a && git status` and `cd ~/b/a &&
    git status` are two places, not a retry (either without a `cd` is taken as the same)."""
    a = _CD.match(before.command or "")
    b = _CD.match(again.command or "")
    return not (a and b) or a.group(1).rstrip("/") == b.group(1).rstrip("/")


def _found_nothing(turn: Turn) -> bool:
    output = (turn.tool_output or "").strip()
    return found_nothing(turn) or not output or bool(_EMPTY_SEARCH.match(output))


def _retry_cause(before: Turn, again: Turn, code_edits: list[int], test_edits: list[int],
                 checks_by_turn: Mapping[int, str]) -> str | None:
    """Why `again` retries the failed or empty `before`, or None when it is no retry.

    `checks_by_turn`: the kind of each check the facts recorded; any other command a check
    would run counts too, except a script that writes files (it makes a change, it checks
    none)."""
    if before.kind in (ToolKind.EDIT, ToolKind.WRITE) and not before.via_shell:
        return "failed_edit"
    if before.kind in (ToolKind.SEARCH, ToolKind.LIST) and _found_nothing(before) and \
            not before.is_error:
        return "searched_again"
    check_kind = checks_by_turn.get(before.index) or (
        classify_check(before.command) if before.command and before.kind is not ToolKind.EDIT
        else None)
    if check_kind and not _INVOCATION_ERROR.search(before.tool_output or ""):
        def between(turns: list[int]) -> bool:  # sorted turns: one bisection
            i = bisect.bisect_right(turns, before.index)
            return i < len(turns) and turns[i] < again.index
        if between(code_edits):
            return None  # red-green: the code changed and the check ran again
        if between(test_edits):
            # A failing test run fixed by editing only the tests bent the test to the code; a
            # failing type check or build fixed in the tests is the tests following a changed
            # interface, and the rerun checks that work.
            return "test_rewritten" if check_kind == "test" else None
    if check_kind and _INVOCATION_ERROR.search(before.tool_output or ""):
        return "test_command_hunt"
    return "repeated_command"


def _shell_edits_redone(facts: Facts, cwd: str | None) -> list[Episode]:
    """In-place shell edits (`sed -i`, `perl -pi`) of a file, each looked at and then edited
    again with nothing else done between: the look showed the edit was wrong, and each
    re-edit is one more attempt at the same change."""
    episodes = []
    reads: dict[str, list[int]] = {}
    for turn, path in facts.reads:  # in session order, so each list is sorted
        reads.setdefault(_place(path, cwd), []).append(turn)
    other_work = sorted(set(facts.change_turns))
    last_write: dict[str, int] = {}
    for turn, path in facts.shell_writes:
        place = _place(path, cwd)
        previous = last_write.get(place)
        last_write[place] = turn
        if previous is None:
            continue
        looked = _any_between(reads.get(place, []), previous, turn)
        busy = _any_between(other_work, previous, turn)
        if looked and not busy:
            episodes.append(Episode(turn, turn, [previous, turn], path, "failed_edit", "redo"))
    return episodes


def _any_between(turns: list[int], low: int, high: int) -> bool:
    """Whether a sorted list holds a turn strictly between `low` and `high`."""
    i = bisect.bisect_right(turns, low)
    return i < len(turns) and turns[i] < high


def _agent_acted(facts: Facts, after: int, before: int) -> bool:
    """Whether the agent did anything between two turns (stops at the first such turn)."""
    turns = facts.transcript.turns
    for index in range(after, before - 1):  # turn i sits at position i - 1
        t = turns[index]
        if t.meta is None and t.role is not Role.USER:
            return True
    return False


def _user_redos(facts: Facts) -> list[Episode]:
    """The user had to ask again, or said the work was wrong, after the agent acted on it."""
    episodes = []
    for request in facts.main_requests:
        for turn in sorted(request.restated_at + request.rejected_at):
            acted = _agent_acted(facts, request.turn, turn)
            if acted:
                episodes.append(Episode(turn, turn, [turn], quote(facts.turn(turn).content, 120),
                                         "redo_after_user", "user"))
    return episodes


_SHELL_WORDS = frozenset({"sudo", "and", "then", "echo", "grep", "true", "false", "null",
                          "dev", "bin", "usr", "the"})


def _operands(command: str | None) -> set[str]:
    """The words a command line acts on (`nginx` in `systemctl start nginx`), without its
    options, its programs' usual company and short words: what two ways of doing one step
    share."""
    words = set(re.findall(r"(?<![-\w])[A-Za-z_][\w.]{2,}", command or ""))
    return {w.lower() for w in words} - _SHELL_WORDS


def _new_episode(episodes: list[Episode], failed: Turn, cause: str) -> Episode:
    what = failed.command or (failed.paths[0] if failed.paths else failed.tool_name) or "call"
    episode = Episode(failed.index, failed.index, [failed.index], str(what), cause, "retry")
    episodes.append(episode)
    return episode


def _hunt_episode(episodes: list[Episode], hunt: list[Turn], in_retry: set[int]) -> None:
    """Two or more different check commands that could not even start, not already retries."""
    left = [t for t in hunt if t.index not in in_retry]
    commands = list(dict.fromkeys(normal_command(t.command or "") for t in left))
    if len(commands) >= 2:
        episodes.append(Episode(left[0].index, left[-1].index, [t.index for t in left],
                                 " / ".join(commands), "test_command_hunt", "hunt"))


def _streak_episode(episodes: list[Episode], streak: list[Turn], in_retry: set[int],
                    length: int) -> None:
    """Calls that failed one after another, `length` or more, none already in an episode: one
    episode of attempts at a step that kept failing."""
    if len(streak) >= length and not any(t.index in in_retry for t in streak):
        episodes.append(Episode(streak[0].index, streak[-1].index, [t.index for t in streak],
                                 streak[0].tool_name or "call", "failing_streak", "streak"))


def _extend_loop(episodes: list[Episode], first: int, last: int) -> None:
    for ep in reversed(episodes):
        if ep.kind == "loop" and ep.first == first:
            ep.last = last
            ep.turns.append(last)
            return


def _merge_episodes(episodes: list[Episode]) -> list[Episode]:
    """Overlapping episodes are one (a loop of failing calls, two actions alternating)."""
    merged: list[Episode] = []
    turns: list[set[int]] = []  # each merged episode's turns, sorted once at the end
    looping: list[list[str]] = []  # each merged loop's calls, each named once, in order
    for ep in sorted(episodes, key=lambda e: (e.first, e.last)):
        if merged and ep.first <= merged[-1].last:
            head = merged[-1]
            head.last = max(head.last, ep.last)
            turns[-1].update(ep.turns)
            if ep.kind == "retry" and head.kind == "retry" and ep.what != head.what:
                head.firsts = tuple(sorted({*head.attempts, *ep.attempts}))
            if ep.kind == "loop" and head.kind == "loop" and ep.what not in looping[-1]:
                looping[-1].append(ep.what)
                head.what = f"{' and '.join(looping[-1])} alternating"
            continue
        merged.append(Episode(ep.first, ep.last, [], ep.what, ep.cause, ep.kind, ep.attempts))
        turns.append(set(ep.turns))
        looping.append([ep.what])
    for ep, seen in zip(merged, turns):
        ep.turns = sorted(seen)
    return merged


def _target(turn: Turn) -> str:
    """What a tool call acts on: its file, else its command (normalized), else its input."""
    if turn.paths and turn.kind in (ToolKind.EDIT, ToolKind.WRITE):
        return "file:" + turn.paths[0]
    if turn.paths and turn.kind is ToolKind.READ:
        # Reading a file after a failed edit of it is the cure, not a retry of the edit.
        return "read:" + turn.paths[0]
    command = turn.command
    if command:
        return "cmd:" + normal_command(command)
    if turn.paths:
        return "file:" + turn.paths[0]
    return "input:" + repr(sorted((turn.tool_input or {}).items()))[:500]
