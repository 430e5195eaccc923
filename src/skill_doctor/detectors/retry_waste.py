"""Retry waste (0-2, inverted): failed or ineffective attempts that were tried again."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from ..facts import Facts, classify_check
from ..model import Role, ToolKind, Turn
from ._base import Evidence, Measurement, _plural, _ranked_causes, detector
from .common import _changes_state, _edit_turns, _normal_command, _target


_INVOCATION_ERROR = re.compile(
    r"command not found|is not recognized as|No module named|ModuleNotFoundError|Missing script"
    r"|Unknown (command|script)|no tests ran|file or directory not found|Cannot find module"
    r"|could not find|not installed|No such file or directory|Exit code 127|unrecognized arguments"
    r"|no such option|not a valid command|No rule to make target", re.I)


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
