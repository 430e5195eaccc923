"""Turn economy (0-2, inverted): was the number of turns reasonable for the work?"""

from __future__ import annotations

import bisect
import re
from typing import Any, Mapping

from ..patterns import compile_later
from ..diffs import edit_lines
from ..facts import Facts
from ..facts.changes import PROSE_ONLY
from ..facts.retries import masked_output
from ..model import ToolKind
from ..shell import classify_check, command_segments
from ..text import CaselessPattern
from ._base import Evidence, Measurement, _plural, _ranked_causes, detector
from .common import SUBMITS

_CAUSES = ("plan_updates", "retries", "reasks", "repeated_reads", "repeated_lookups",
           "repeated_runs", "lookup_streak", "failed_calls", "idle_stretch", "same_spot", "nudges",
           "needless_checks", "unasked_git")
_WORDS = {"plan_updates": "todo/plan updates", "retries": "calls inside retry episodes",
          "reasks": "messages asking again for work the user rejected",
          "repeated_reads": "repeated reads", "lookup_streak": "lookups that could have been one",
          "repeated_lookups": "listings or searches repeated with the same result",
          "repeated_runs": "commands run again with the same result",
          "failed_calls": "failed calls", "idle_stretch": "calls without progress",
          "same_spot": "edits of a spot the edit before had just written",
          "nudges": "messages only asking the agent to go on",
          "needless_checks": "checks with no code changed since",
          "unasked_git": "commits and pushes nobody asked for"}
# The same, for one turn ("1 failed call").
_WORD = {"plan_updates": "todo/plan update", "retries": "call inside a retry episode",
         "reasks": "message asking again for work the user rejected",
         "repeated_reads": "repeated read", "lookup_streak": "lookup that could have joined others",
         "repeated_lookups": "listing or search repeated with the same result",
         "repeated_runs": "command run again with the same result",
         "failed_calls": "failed call", "idle_stretch": "call without progress",
         "same_spot": "edit of a spot the edit before had just written",
         "nudges": "message only asking the agent to go on",
         "needless_checks": "check with no code changed since",
         "unasked_git": "commit or push nobody asked for"}


@detector("turns_per_work", causes=_CAUSES, plans_allowed=(int, 3), lookup_streak=(int, 3),
          min_avoidable=(int, 2), excessive_count=(int, 50))
def turns_per_work(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """The share of the session's tool calls (and user rounds) that were avoidable.

    What it measures: avoidable turns, counted directly, as a share of all tool calls plus the
    user's messages: todo or plan updates beyond `plans_allowed` (plus one per further
    request); the calls inside retry episodes after the first attempt (repairing its own
    in-place edit, the looks between the attempts too), and each time the user had to ask
    again; a read of a part of a file already read since it last changed (see unnecessary
    exploration) and a listing or search that gave the same answer as the same call before,
    with no file changed between; a command run again that printed what its last run printed
    (timings, line numbers and addresses aside), nothing changed since; a command that runs
    nothing (`: installing git...`, an `echo` of a fixed text); an edit that rewrites lines the
    call just before it wrote in the same file, or writes the whole file again over the whole
    text it wrote (one edit would have done both); searches and listings in a row beyond
    `lookup_streak` with nothing read, edited or run between (lookups that one better search
    would do); and calls that failed for a reason other than a check finding a bug (a command
    not found, a denied permission) or a service turning them away for its load (HTTP 429 or
    503); messages that only tell the agent to go on; checks that could tell nothing new
    (passed already with nothing changed since, or run after prose-only edits); and `git add` /
    `commit` / `push` calls when no user message asks to commit or push or names a hosted
    repository (GitHub, GitLab, Bitbucket).
    Fewer than `min_avoidable` avoidable turns count as none, so a short session is not
    judged on one call; `excessive_count` avoidable turns or more are significantly excessive
    however long the session was (the measured share is then 1.0): fifty turns spent on
    repeats and detours are a lot of the user's time whatever else was done.

    Why it matters: turns cost time and context; a session where half the calls were spent
    on bookkeeping, repeats and detours could have been done in half the turns.

    Example: 11 calls to add one line, 6 of them repairing the agent's own broken `sed`
    edits: 6 of 12 turns avoidable (50%), significantly excessive.

    Instead: give the goal, the files and the acceptance check up front; batch independent
    reads; read the error before trying again.
    """
    tools = [t for t in facts.tool_turns]
    avoidable: dict[int, str] = {}

    plans = [t.index for t in tools if t.kind is ToolKind.PLAN]
    allowed = params["plans_allowed"] + max(len(facts.main_requests) - 1, 0)
    for index in plans[allowed:]:
        avoidable.setdefault(index, "plan_updates")

    tool_indexes = [t.index for t in tools]
    user_indexes = [t.index for t in facts.user_turns]
    user_set = set(user_indexes)
    episode_starts: set[int] = set()
    for episode in facts.retries:
        if episode.kind != "user":
            episode_starts.update(episode.attempts)
            for index in episode.turns:
                if index not in episode.attempts:
                    avoidable.setdefault(index, "retries")
        else:
            for index in episode.turns:
                # The user's own message is a round spent, but no call: named for what it is.
                avoidable.setdefault(index, "reasks" if index in user_set else "retries")
            # The user had to ask again: the calls that redid the work, up to the user's next
            # message, are a second attempt like any retry's.
            said = episode.turns[0]
            following = bisect.bisect_right(user_indexes, said)
            until = user_indexes[following] if following < len(user_indexes) else None
            low = bisect.bisect_right(tool_indexes, said)
            high = bisect.bisect_left(tool_indexes, until) if until else len(tools)
            for t in tools[low:high]:
                avoidable.setdefault(t.index, "retries")
        if episode.kind == "redo":
            # Repairing its own edit, the agent looked at the file between the attempts: those
            # looks are part of the repair too.
            low = bisect.bisect_right(tool_indexes, min(episode.turns))
            high = bisect.bisect_left(tool_indexes, max(episode.turns))
            for t in tools[low:high]:
                avoidable.setdefault(t.index, "retries")
    for t in facts.user_turns:
        if t.meta is None and _NUDGE.match(t.content or "") and t.index > user_indexes[0] and \
                "interrupt" not in (t.content or "").lower():
            avoidable.setdefault(t.index, "nudges")
    for index in _needless_checks(facts):
        avoidable.setdefault(index, "needless_checks")
    for index in _unasked_git(facts, tools):
        avoidable.setdefault(index, "unasked_git")

    for turn, _path, _earlier in facts.repeated_reads:
        avoidable.setdefault(turn, "repeated_reads")
    for index, cause in _repeated_results(facts, tools):
        avoidable.setdefault(index, cause)

    streak: list[int] = []
    for t in tools:
        if t.kind in (ToolKind.SEARCH, ToolKind.LIST):
            streak.append(t.index)
            if len(streak) > params["lookup_streak"]:
                avoidable.setdefault(t.index, "lookup_streak")
        elif t.kind is not ToolKind.PLAN:
            streak = []

    for index in _same_spot_edits(facts, tools):
        avoidable.setdefault(index, "same_spot")
    for t in tools:
        if t.command and _does_nothing(t.command):
            avoidable.setdefault(t.index, "idle_stretch")

    for t in tools:
        # The first attempt of a retry episode is counted with its retries: one of the two
        # was needed.
        if t.index in facts.failed and t.index not in episode_starts and \
                not (t.command and classify_check(t.command)) and \
                not _SERVICE_BUSY.search((t.tool_output or "")[:2000]):
            avoidable.setdefault(t.index, "failed_calls")

    rounds = len(tools) + len(facts.requests)  # every user message, a request left unlogged too
    count = len(avoidable)
    share = round(count / rounds, 2) if rounds and count >= params["min_avoidable"] else 0.0
    excessive = count >= params["excessive_count"]
    if excessive:
        share = 1.0
    by_cause: dict[str, list[int]] = {}
    for index, cause in sorted(avoidable.items()):
        by_cause.setdefault(cause, []).append(index)
    parts = [f"{len(turns)} {(_WORD if len(turns) == 1 else _WORDS)[cause]}" for cause, turns in
             sorted(by_cause.items(), key=lambda kv: (-len(kv[1]), _CAUSES.index(kv[0])))]
    summary = (f"{count} of {rounds} turns were avoidable" + (f": {', '.join(parts)}" if parts else "")
               if count else f"no avoidable turns in {rounds}")
    if excessive:
        summary = f"{count} avoidable turns, {params['excessive_count']} or more: " + summary
    evidence = [Evidence(turns[0], f"{_plural(len(turns), 'turn')} of {_WORDS[cause]}"
                                   f" (turns {', '.join(map(str, turns[:8]))}"
                                   f"{', ...' if len(turns) > 8 else ''})")
                for cause, turns in sorted(by_cause.items(), key=lambda kv: kv[1][0])] \
        if share else []
    causes = [cause for cause, turns in by_cause.items() for _ in turns]
    return Measurement(share, tuple(evidence), summary, _ranked_causes(causes, _CAUSES))


def _repeated_results(facts: Facts, tools: list) -> list[tuple[int, str]]:
    """Calls that could tell nothing new, with no file changed since the same call last ran
    (a run after a change shows whether the change did anything):
    - `repeated_lookups`: a listing or search that gave the same answer as the same call
      earlier (`ls -F` twice);
    - `repeated_runs`: a command that printed what its last run printed, timings, line
      numbers and addresses aside (`./mystery` rerun for the checksum it printed before)."""
    changed = {r.turn for r in facts.edits} | {turn for turn, _ in facts.shell_writes}
    seen: set[tuple] = set()  # listings and searches since the last change, with their answer
    last_output: dict[str, str] = {}  # by command: its last output since the last change
    found: list[tuple[int, str]] = []
    for t in tools:
        if t.index in changed:
            seen.clear()
            last_output.clear()
        output = t.tool_output or ""  # held as it is: no copy of every output
        if t.kind in (ToolKind.SEARCH, ToolKind.LIST):
            if not output.strip():
                continue
            key = (t.tool_name, t.command or repr(sorted((t.tool_input or {}).items())), output)
            if key in seen:
                found.append((t.index, "repeated_lookups"))
            seen.add(key)
        elif t.kind is ToolKind.SHELL and t.command and len(output) >= 20:
            # (a silent or one-word result tells little either way)
            command = " ".join(t.command.split())
            before = last_output.get(command)
            # Masked only when the command ran before and printed something else: most
            # commands run once.
            if before is not None and (before == output
                                       or masked_output(before) == masked_output(output)):
                found.append((t.index, "repeated_runs"))
            last_output[command] = output
    return found


# A service that turned the call away for its own load (HTTP 429, 503): nothing the agent
# could have avoided by calling differently.
_SERVICE_BUSY = CaselessPattern(r"rate.?limit(?:ed|\s+(?:exceeded|reached))|too many requests"
                                r"|service (?:temporarily )?unavailable"
                                r"|\b(?:status|error|code|http)\W{0,3}(?:429|503)\b",
                                required=("limit", "too many requests", "unavailable", "429", "503"))
# A command that runs nothing: the `:` no-op (`: installing git...`), `true`, a comment, or
# an echo of a fixed text ("Sanitization complete!"); it reads, changes and checks nothing.
# (`: > file` empties the file: a redirection is never nothing.)
_NO_OP = compile_later(r"""(?::(?:\s[^<>]*)?|true|#.*"""
                    r"""|echo(?:\s+-[neE]+)?(?:\s+(?:"[^"$`\\]*"|'[^']*'|[^\s$`|;&<>'"\\]+))*)""",
                    re.S)


# A message that only tells the agent to go on: it had stopped before the work was done.
_NUDGE = compile_later(r"^\W*(?:ok(?:ay)?\W+|so\W+)?(?:please\W+)?(?:(?:understand|see|check) where you"
                    r" were and )?(?:continue|go on|keep going|carry on|resume|proceed)\b[\w\s']{0,30}"
                    r"\W*$", re.I)
_CHECK_KINDS = ("test", "typecheck", "build", "lint")


def _needless_checks(facts: Facts) -> list[int]:
    """Checks that could not tell anything new: the same check run again after it passed
    with nothing changed since, or a test, type check or build run when only prose files
    (Markdown, text) changed since the last check (or the session's start)."""
    changes = sorted([(r.turn, r.path) for r in facts.edits] + list(facts.shell_writes))
    found: list[int] = []
    seen = 0  # changes before the previous check
    passed: dict[str, bool | None] = {}
    for check in facts.checks:
        if check.kind not in _CHECK_KINDS:
            continue
        since = []
        while seen < len(changes) and changes[seen][0] < check.turn:
            since.append(changes[seen][1])
            seen += 1
        command = " ".join(check.command.split())
        if not since and passed.get(command):
            found.append(check.turn)  # passed already, and nothing changed
        elif since and check.kind != "lint" and all(PROSE_ONLY.search(p or "") for p in since):
            found.append(check.turn)
        passed[command] = check.passed
    return found


_GIT_STEP = compile_later(r"^git\s+(?:-\S+\s+(?:\S+\s+)?)*?(add|commit|push)\b")
# A request that names a hosted repository ("GitHub repo: org/name") asks for the work there.
_ASKS_GIT = compile_later(r"\b(commit\w*|push\w*|git|pr|pull request|github|gitlab|bitbucket)\b", re.I)


def _unasked_git(facts: Facts, tools: list) -> list[int]:
    """`git add`, `git commit` and `git push` calls in a session where no user message asks
    to commit or push (nor says anything about git): steps nobody asked for, each a turn."""
    if any(not r.text or r.operations for r in facts.main_requests) or any(
            _ASKS_GIT.search(t.content or "") for t in facts.user_turns):
        return []
    return [t.index for t in tools if t.command and any(
        _GIT_STEP.match(segment.strip()) for segment in command_segments(t.command))]


def _does_nothing(command: str) -> bool:
    if SUBMITS.match(command):
        return False  # mini-swe-agent's echo that hands the work in
    segments = command_segments(command)
    return bool(segments) and all(_NO_OP.fullmatch(s.strip()) for s in segments)


def _same_spot_edits(facts: Facts, tools: list) -> list[int]:
    """Edits that change lines the call just before them had written, in the same file, with
    nothing run or read in between (a whole file written again over the whole text just
    written too): one edit would have done both."""
    records: dict[int, list] = {}
    for record in facts.edits:
        records.setdefault(record.turn, []).append(record)
    found: list[int] = []
    previous = None
    for t in tools:
        if t.kind is ToolKind.PLAN:
            continue
        current = records.get(t.index)
        if current and previous and len(current) == 1 and len(previous) == 1 and \
                current[0].path == previous[0].path:
            if current[0].edit.whole_file:
                # A whole file written again over the whole text the call before wrote,
                # never run or read between: the first text was never used.
                if previous[0].edit.whole_file:
                    found.append(t.index)
                previous = current
                continue
            written = {line.strip() for line in edit_lines(previous[0].edit)[0]
                       if len(line.strip()) >= 4}
            removed = {line.strip() for line in edit_lines(current[0].edit)[1]}
            if written & removed:
                found.append(t.index)
        previous = current
    return found
