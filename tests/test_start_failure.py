"""'The agent never started' only when nothing of the agent's own follows the failure: a line
a harness prints on every start ("No such file or directory: '/app/.openhands_instructions'")
followed by its progress lines is a run, not a failed start."""

from __future__ import annotations

import json

import pytest

from skill_doctor.decode import decode_file
from skill_doctor.decode.started import start_failure
from skill_doctor.report import grade
from skill_doctor import rubric

LAUNCH = "openhands --max-iterations 100 --task 'Write hello to /app/hello.txt'; tmux wait -S done"
INSTRUCTIONS = ("12:00:01 - openhands:INFO: [Errno 2] No such file or directory: "
                "'/app/.openhands_instructions'")
RUNNING = ("12:00:02 - openhands:INFO: agent_controller.py:520 - [Agent Controller default] "
           "Setting agent(CodeActAgent) state from AgentState.LOADING to AgentState.RUNNING")
ACTION = "12:00:05 - openhands:INFO: POST /execute_action HTTP/1.1 200"
FINISHED = RUNNING.replace("LOADING", "RUNNING").replace("to AgentState.RUNNING",
                                                         "to AgentState.FINISHED")
MISSING_PYTHON = "/usr/local/bin/openhands: line 2: /app/.venv/bin/python: No such file or directory"


@pytest.mark.parametrize("output, failure", [
    ("bash: mini: command not found\n", "bash: mini: command not found"),
    (MISSING_PYTHON + "\n", MISSING_PYTHON),
    ("Traceback (most recent call last):\nModuleNotFoundError: No module named 'litellm'\n",
     "Traceback (most recent call last):"),
    ("write error: No space left on device\n", "write error: No space left on device"),
    # A failure a harness prints on every start, then its own progress: the agent ran.
    ("\n".join([INSTRUCTIONS, RUNNING, ACTION, FINISHED]), None),
    ("warning: /etc/x: No such file or directory\nmini-swe-agent (step 1, $0.01):\n", None),
    ("Permission denied (publickey)\nTokens: 2.1k sent, 310 received.\n", None),
    ("all good\n", None),
])
def test_start_failure(output, failure):
    assert start_failure(output) == failure


def _cast(tmp_path, name, lines):
    events = [json.dumps({"version": 2, "width": 120, "height": 40, "timestamp": 1767225600,
                          "env": {"SHELL": "/bin/bash", "TERM": "tmux-256color"}}),
              json.dumps([0.1, "o", "root@abc:/app# "]),
              json.dumps([1.0, "i", LAUNCH + "\r"]),
              json.dumps([1.01, "o", LAUNCH + "\r\n"])]
    events += [json.dumps([2.0 + n, "o", line + "\r\n"]) for n, line in enumerate(lines)]
    events.append(json.dumps([9.0, "o", "root@abc:/app# "]))
    path = tmp_path / name
    path.write_text("\n".join(events) + "\n")
    return path


def _report(path):
    return grade(decode_file(path), rubric.load(), "2026-01-01T00:00:00Z", overview=False)


def test_an_openhands_run_that_logged_progress_is_not_a_failed_start(tmp_path):
    report = _report(_cast(tmp_path, "run.cast", [INSTRUCTIONS, RUNNING, ACTION, FINISHED]))
    assert "never started" not in (report.message or "")
    assert report.status == "parse_error"
    assert "the agent (openhands) ran, but its turns are not in the recording" in report.message
    assert "not the actions' commands and outputs" in report.message


def test_an_openhands_run_whose_interpreter_is_missing_never_started(tmp_path):
    report = _report(_cast(tmp_path, "dead.cast", [MISSING_PYTHON]))
    assert report.status == "too_short"
    assert report.message == f"Session too short to assess: the agent never started ({MISSING_PYTHON})"
