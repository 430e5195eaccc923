"""Turn economy (0-2, inverted): was the number of turns reasonable for the work?"""

from __future__ import annotations

from typing import Any, Mapping

from ..facts import Facts, classify_check, word_count
from ..model import ToolKind
from ._base import Evidence, Measurement, detector
from .common import _edit_turns, _normal_command, _target


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
