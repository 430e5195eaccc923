"""Whether a terminal capture shows the agent failing to start, shared by the decoders of
terminal recordings (asciinema casts, tmux pane logs).

A capture that holds the harness's launch but none of the agent's steps either shows why the
agent never ran (`command not found`, a missing interpreter, an install that failed) or holds
a log the decoders do not read step by step. The two must not be confused: a harness prints
lines such as "No such file or directory" on every start (OpenHands looks for an optional
instructions file) and then runs normally. A failure counts only when none of a harness's own
progress lines (state changes, actions, step markers) follows it.
"""

from __future__ import annotations

import re

from ..patterns import compile_later

# What a line says when a program could not run; the line around it is quoted. (A plain
# search, expanded to the line by hand: `^.*(?:...).*$` would rescan a long line per start.)
_FAILURE = compile_later(r"command not found|No such file or directory|INSTALL_FAIL_STATUS"
                      r"|not installed|Permission denied|No module named|No space left on device"
                      r"|Traceback \(most recent call last\)")
# Only the start of the output after the launch is searched for a failure: a failed start
# shows at once.
_FAILURE_WINDOW = 64 * 1024
# A harness's own progress lines: the agent at work. OpenHands (agent state changes, one
# `POST /execute_action` per action), mini-swe-agent and SWE-agent step markers, Aider's
# token report, Claude Code's and Gemini CLI's stream-json messages, Codex exec's log lines.
ACTIVITY = compile_later(
    r"AgentState\.(?:RUNNING|FINISHED|ERROR|AWAITING_USER_INPUT|STOPPED)"
    r"|POST /execute_action"
    r"|^[ \t]*mini-swe-agent \(step \d+|^[ \t]*(?:STEP|Step) \d+\b|🎬 ACTION|💭 THOUGHT"
    r"|^Tokens: [\d.]+k? sent"
    r"|^[ \t]*\{\"type\":[ \t]*\"(?:assistant|tool_use|tool_result|message)\""
    r"|^\[\d{4}-\d\d-\d\dT[\d:]+\] (?:exec|tokens used|codex)\b",
    re.MULTILINE)


def start_failure(output: str) -> str | None:
    """The line that shows the agent failed to start in the output after its launch, or None:
    when no such line is there, or when the harness's own progress lines follow it (the agent
    ran; what failed was incidental). The first failure is the one quoted."""
    failure = _FAILURE.search(output, 0, _FAILURE_WINDOW)
    if failure is None:
        return None
    if ACTIVITY.search(output, failure.end()):
        return None
    start = output.rfind("\n", 0, failure.start()) + 1
    end = output.find("\n", failure.end())
    return output[start:end if end >= 0 else len(output)].strip()[:200]
