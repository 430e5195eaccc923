"""Retry waste (0-2, inverted): failed or ineffective attempts that were tried again."""

from __future__ import annotations

from typing import Any, Mapping

from ..facts import Episode, Facts
from ..facts.retries import DEFAULTS
from ..text import quote
from ._base import Evidence, Measurement, _plural, _ranked_causes, detector


_CAUSES = ("failed_edit", "test_command_hunt", "repeated_command", "same_error", "loop",
           "searched_again", "redo_after_user", "test_rewritten", "missing_program",
           "failing_streak")


# The parameters shape the episodes, which the facts find once with the rubric's values for
# them (facts.retries); declared here, with their defaults, so the rubric can set them.
@detector("retry_episodes", causes=_CAUSES,
          **{name: (int, default) for name, default in DEFAULTS.items()})
def retry_episodes(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """Retry episodes: failed or ineffective attempts followed by another attempt at the same thing.

    What it measures: episodes, each counted once however many calls it takes. An episode is a
    failed or ineffective attempt followed, within `window` tool calls and the same request, by
    another attempt at the same operation: the same program and subcommand on the same target
    after unwrapping `cd x &&`, `bash -c`, `docker exec`, env assignments, pipes and flags
    (`git add x` refused, then `git add -f x`; `which tool` then `command -v tool`), an edit that
    did not apply redone on the same file (unless the file was read in between), or a search
    that found nothing followed by another search of the same folder. A program the machine
    does not have ("systemctl: not found") followed at once by another way of doing the same
    step (`service nginx start`, sharing what it acts on) is one too. The same call failing
    with the same error again later in the session, however much later, continues its episode:
    nothing was learned. A check that fails, then a change to the code, then the check again
    is how fixes are tested (red-green), not a retry; a failing check "fixed" by editing only
    the tests is one. Hunting for the test command (different test or build commands failing
    because they cannot even start) is one episode; the same call with the same result
    `loop_repeats` times, each within `loop_window` calls of the last, is a loop. The user
    having to ask again or say the work is wrong ("still doesn't work", "too long") after the
    agent acted on a request is an episode too: the attempt did not do what was asked. So is a
    run of `failing_streak` or more calls in a row that all failed, nothing succeeding between
    (garbled commands, one guess after another at a step that keeps failing), when no other
    episode already holds them.

    Why it matters: each blind retry costs a turn and usually fails the same way; the contract
    scores none 2, one 1, several 0.

    Example: `git fetch` fails ("Operation not permitted"), the agent runs it again with
    escalated permissions; later `git ls-remote` fails the same way and is rerun the same way:
    two episodes.

    Instead: read the error, change something (the file, the command, the environment), then
    try again; document the working commands and the sandbox's rules in CLAUDE.md / AGENTS.md.
    """
    merged = facts.retries  # found once, with these parameters (facts.retries)
    evidence = [Evidence(ep.first, _describe(ep, facts)) for ep in merged]
    n = len(merged)
    kinds: dict[str, int] = {}
    for ep in merged:
        kinds[ep.cause] = kinds.get(ep.cause, 0) + 1
    summary = "no retries" if n == 0 else f"{_plural(n, 'retry episode')}: " + "; ".join(
        _SHORT[cause] if count == 1 else f"{count}x {_SHORT[cause]}"
        for cause, count in sorted(kinds.items(), key=lambda kv: (-kv[1], _CAUSES.index(kv[0]))))
    return Measurement(n, tuple(evidence), summary,
                       _ranked_causes([ep.cause for ep in merged], _CAUSES))


_SHORT = {"failed_edit": "an edit redone", "test_command_hunt": "a hunt for the test command",
          "repeated_command": "a failed command run again", "same_error": "the same error again",
          "loop": "a call repeated with the same result", "searched_again": "a search repeated",
          "redo_after_user": "work redone after the user objected",
          "test_rewritten": "a test changed to pass",
          "missing_program": "a missing program replaced",
          "failing_streak": "calls failing one after another"}


def _describe(ep: Episode, facts: Facts) -> str:
    shown = ", ".join(str(t) for t in ep.turns[:6]) + (", ..." if len(ep.turns) > 6 else "")
    if ep.kind == "loop":
        return f"{ep.what} repeated {len(ep.turns)} times with the same result (turns {shown})"
    if ep.kind == "hunt":
        return f"hunted for a working test command (turns {shown}): {quote(ep.what, 120)}"
    if ep.kind == "streak":
        return f"{len(ep.turns)} calls in a row failed, nothing succeeding between (turns {shown})"
    first = facts.turn(ep.first)
    if ep.kind == "redo":
        return (f"{ep.what} was edited in place, looked at, and edited again to repair the edit "
                f"(turns {shown})")
    if ep.kind == "user":
        return f"the user had to ask again or reject the work: {quote(ep.what, 120)}"
    if ep.cause == "searched_again":
        return f"a search found nothing and the same place was searched again (turns {shown})"
    if ep.cause == "missing_program":
        return (f"the machine lacked the program, and the step was done another way (turns "
                f"{shown}): {quote(ep.what, 120)}")
    if ep.cause == "test_rewritten":
        return f"a check failed and the test, not the code, was changed to pass (turns {shown})"
    if ep.cause == "same_error":
        # A refusal or an error: the call was made again and ended the same way.
        return (f"{first.tool_name} ended with the same error again (turns {shown}): "
                f"{quote(ep.what, 120)}")
    if len(ep.attempts) > 1:
        return (f"{len(ep.attempts)} {first.tool_name} calls failed and were each tried again "
                f"(turns {shown}): {quote(ep.what, 120)}")
    return (f"{first.tool_name} failed and was tried again {_plural(len(ep.turns) - 1, 'time')} "
            f"(turns {shown}): {quote(ep.what, 120)}")


