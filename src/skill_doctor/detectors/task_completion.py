"""Task completion (0-3): did the agent accomplish what the user asked?"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..facts import Facts, is_doc_file, word_count
from ..model import Role
from ._base import Evidence, Measurement, detector
from .common import _edits_with_paths, _passed_after


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
