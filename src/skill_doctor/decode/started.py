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

# A line that says a program could not run.
_FAILURE = re.compile(r"^.*(?:command not found|No such file or directory|INSTALL_FAIL_STATUS"
                      r"|not installed|Permission denied|No module named|No space left on device"
                      r"|Traceback \(most recent call last\)).*$", re.MULTILINE)
# A harness's own progress lines: the agent at work. OpenHands (agent state changes, one
# `POST /execute_action` per action), mini-swe-agent and SWE-agent step markers, Aider's
# token report, Claude Code's and Gemini CLI's stream-json messages, Codex exec's log lines.
ACTIVITY = re.compile(
    r"AgentState\.(?:RUNNING|FINISHED|ERROR|AWAITING_USER_INPUT|STOPPED)"
    r"|POST /execute_action|\bAgentController\b.*\baction\b"
    r"|^\s*mini-swe-agent \(step \d+|^\s*(?:STEP|Step) \d+\b|🎬 ACTION|💭 THOUGHT"
    r"|^Tokens: [\d.]+k? sent"
    r"|^\s*\{\"type\":\s*\"(?:assistant|tool_use|tool_result|message)\""
    r"|^\[\d{4}-\d\d-\d\dT[\d:]+\] (?:exec|tokens used|codex)\b",
    re.MULTILINE)


def start_failure(output: str) -> str | None:
    """The line that shows the agent failed to start in the output after its launch, or None:
    when no such line is there, or when the harness's own progress lines follow it (the agent
    ran; what failed was incidental). The first failure is the one quoted."""
    failure = _FAILURE.search(output)
    if failure is None:
        return None
    if ACTIVITY.search(output, failure.end()):
        return None
    return failure.group(0).strip()[:200]
