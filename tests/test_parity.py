"""Parity: the same session written in Claude Code, Codex and OpenHands formats scores the same.

The contract's four scenarios (a clean fix, a fix with one failed retry, an exploration-heavy
fix, a question with no code change) are described once as steps and written by hand-made
writers in each harness's own shapes: Claude Code `Read`/`Edit`/`Bash`; Codex shell reads
(`sed -n`), `apply_patch` and `Exit code: N` outputs; OpenHands `read`/`edit`/`run` events
with `extras.metadata.exit_code`. Every criterion must get the same points in all three.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionkit import claude_jsonl
from skill_doctor import facts, rubric, scoring
from skill_doctor.decode import decode_file

CWD = "/home/dev/proj"
PAGER = f"{CWD}/src/pager.py"
OLD = "    return len(items) // per_page\n"
NEW = "    return -(-len(items) // per_page)\n"
SOURCE = "def page_count(items, per_page):\n" + OLD
ASK = "Fix the page count in src/pager.py: it drops the last partial page."


def read(path: str, output: str) -> dict:
    return {"tool": "Read", "input": {"file_path": path}, "output": output}


def edit(old: str, new: str, ok: bool = True) -> dict:
    step = {"tool": "Edit", "input": {"file_path": PAGER, "old_string": old, "new_string": new},
            "output": "The file has been updated." if ok else "String to replace not found in file."}
    if not ok:
        step["error"] = True
    return step


def bash(command: str, output: str, code: int = 0) -> dict:
    step = {"tool": "Bash", "input": {"command": command}, "output": output, "code": code}
    if code:
        step["error"] = True
    return step


def grep(pattern: str) -> dict:
    return {"tool": "Grep", "input": {"pattern": pattern, "path": CWD},
            "output": "src/pager.py:2:    return len(items) // per_page"}


SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "clean-fix": [
        {"user": ASK},
        {"assistant": "I'll read the pager module first."},
        read(PAGER, SOURCE),
        edit(OLD, NEW),
        bash("python -m pytest -q tests/test_pager.py", "4 passed in 0.02s"),
        {"assistant": "Fixed: page_count now rounds up. Tests pass (4 passed)."},
    ],
    "one-failed-retry": [
        {"user": ASK},
        read(PAGER, SOURCE),
        edit("    return len(items)//per_page\n", NEW, ok=False),
        edit(OLD, NEW),
        bash("python -m pytest -q tests/test_pager.py", "4 passed in 0.02s"),
        {"assistant": "Fixed: page_count now rounds up; the first edit missed the text. Tests pass."},
    ],
    "failing-test-then-fix": [
        {"user": ASK},
        read(PAGER, SOURCE),
        bash("python -m pytest -q tests/test_pager.py", "1 failed, 3 passed", code=1),
        edit(OLD, NEW),
        bash("python -m pytest -q tests/test_pager.py", "4 passed in 0.02s"),
        {"assistant": "Fixed: page_count now rounds up. Tests pass."},
    ],
    "exploration-heavy": [
        {"user": ASK},
        grep("page_count"),
        read(f"{CWD}/README.md", "# proj\n"),
        read(f"{CWD}/setup.py", "from setuptools import setup\n"),
        read(f"{CWD}/src/cli.py", "import sys\n"),
        read(f"{CWD}/src/render.py", "def render():\n    pass\n"),
        read(f"{CWD}/docs/index.md", "# Docs\n"),
        read(f"{CWD}/src/config.py", "DEBUG = False\n"),
        read(PAGER, SOURCE),
        edit(OLD, NEW),
        bash("python -m pytest -q tests/test_pager.py", "4 passed in 0.02s"),
        {"assistant": "Fixed: page_count now rounds up. Tests pass."},
    ],
    "question-no-change": [
        {"user": "What does page_count in src/pager.py return for 5 items, 2 per page?"},
        read(PAGER, SOURCE),
        {"assistant": "It returns 2: integer division drops the last partial page."},
    ],
}


# -- writers -----------------------------------------------------------------------------------

def codex_rollout(steps: list[dict[str, Any]]) -> str:
    lines: list[dict] = []
    second = 0

    def add(kind: str, payload: dict) -> None:
        nonlocal second
        second += 1
        lines.append({"timestamp": f"2026-01-01T10:{second // 60:02d}:{second % 60:02d}.000Z",
                      "type": kind, "payload": payload})

    add("session_meta", {"id": "019b0000-0000-7000-8000-000000000001", "cwd": CWD,
                         "originator": "codex_cli_rs", "cli_version": "0.77.0", "source": "cli"})
    add("response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": f"<environment_context>\n  <cwd>{CWD}</cwd>\n</environment_context>"}]})
    for n, step in enumerate(steps, start=1):
        call_id = f"call_{n:04d}"
        if "user" in step:
            add("response_item", {"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": step["user"]}]})
            add("event_msg", {"type": "user_message", "message": step["user"], "images": []})
            add("turn_context", {"cwd": CWD, "model": "gpt-5-codex"})
        elif "assistant" in step:
            add("event_msg", {"type": "agent_message", "message": step["assistant"]})
            add("response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": step["assistant"]}]})
        elif step["tool"] == "Edit":
            old, new = step["input"]["old_string"], step["input"]["new_string"]
            patch = ("*** Begin Patch\n*** Update File: " + step["input"]["file_path"] + "\n@@\n"
                     + "".join("-" + line + "\n" for line in old.splitlines())
                     + "".join("+" + line + "\n" for line in new.splitlines()) + "*** End Patch\n")
            add("response_item", {"type": "custom_tool_call", "status": "completed",
                                  "call_id": call_id, "name": "apply_patch", "input": patch})
            failed = bool(step.get("error"))
            output = ("apply_patch verification failed: Failed to find expected lines" if failed
                      else "Success. Updated the following files:\nM " + step["input"]["file_path"] + "\n")
            add("response_item", {"type": "custom_tool_call_output", "call_id": call_id,
                                  "output": json.dumps({"output": output, "metadata": {
                                      "exit_code": 1 if failed else 0, "duration_seconds": 0.0}})})
        else:
            if step["tool"] == "Read":
                command = f"sed -n '1,200p' {step['input']['file_path']}"
            elif step["tool"] == "Grep":
                command = f"rg -n {step['input']['pattern']} {step['input']['path']}"
            else:
                command = step["input"]["command"]
            add("response_item", {"type": "function_call", "name": "shell_command", "call_id": call_id,
                                  "arguments": json.dumps({"command": command, "workdir": CWD})})
            add("response_item", {"type": "function_call_output", "call_id": call_id,
                                  "output": f"Exit code: {step.get('code', 0)}\nWall time: 0 seconds\n"
                                            f"Output:\n{step['output']}"})
    return "".join(json.dumps(line) + "\n" for line in lines)  # key order as Codex writes it


def openhands_events(steps: list[dict[str, Any]]) -> str:
    events: list[dict] = []

    def add(event: dict) -> int:
        event = {"id": len(events), "timestamp": f"2026-01-01T10:00:{len(events):02d}", **event}
        events.append(event)
        return event["id"]

    for step in steps:
        if "user" in step:
            add({"source": "user", "action": "message", "message": step["user"],
                 "args": {"content": step["user"]}})
        elif "assistant" in step:
            add({"source": "agent", "action": "message", "message": step["assistant"],
                 "args": {"content": step["assistant"]}})
        elif step["tool"] == "Read":
            cause = add({"source": "agent", "action": "read", "args": {"path": step["input"]["file_path"]}})
            add({"source": "environment", "cause": cause, "observation": "read",
                 "content": step["output"], "extras": {"path": step["input"]["file_path"]}})
        elif step["tool"] == "Edit":
            cause = add({"source": "agent", "action": "edit", "args": {
                "path": step["input"]["file_path"], "command": "str_replace",
                "old_str": step["input"]["old_string"], "new_str": step["input"]["new_string"]}})
            add({"source": "environment", "cause": cause,
                 "observation": "error" if step.get("error") else "edit",
                 "content": step["output"], "extras": {"path": step["input"]["file_path"]}})
        else:
            command = (f"grep -rn {step['input']['pattern']} {step['input']['path']}"
                       if step["tool"] == "Grep" else step["input"]["command"])
            cause = add({"source": "agent", "action": "run", "args": {"command": command}})
            add({"source": "environment", "cause": cause, "observation": "run", "content": step["output"],
                 "extras": {"command": command, "metadata": {"exit_code": step.get("code", 0)}}})
    return json.dumps(events, indent=1, sort_keys=True)


def claude(steps: list[dict[str, Any]]) -> str:
    shaped = []
    for step in steps:
        if step.get("tool") == "Bash" and step.get("code"):
            step = {**step, "output": f"Exit code {step['code']}\n{step['output']}"}
        shaped.append({k: v for k, v in step.items() if k != "code"})
    return claude_jsonl(shaped, cwd=CWD)


WRITERS = {"claude-code": (claude, "session.jsonl"), "codex": (codex_rollout, "rollout.jsonl"),
           "openhands": (openhands_events, "events.json")}


def scores_of(tmp_path: Path, harness: str, steps: list[dict[str, Any]]):
    writer, name = WRITERS[harness]
    path = tmp_path / harness / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(writer(steps), encoding="utf-8")
    transcript = decode_file(path)
    assert transcript.harness == harness
    scores = scoring.score(facts.compute(transcript), rubric.load())
    table = {c.criterion.key: c.points for scale in scores.scales() for c in scale.criteria}
    real = [t for t in transcript.turns if t.meta is None]
    return table, (scores.efficiency.score, scores.code_quality.score), len(real)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_same_scores_in_every_format(tmp_path, scenario):
    steps = SCENARIOS[scenario]
    results = {harness: scores_of(tmp_path, harness, steps) for harness in WRITERS}
    reference = results["claude-code"]
    assert reference[2] == len(steps)  # every step is one real turn
    for harness, result in results.items():
        assert result == reference, f"{harness} differs from claude-code: {result} != {reference}"


def test_the_scenarios_are_told_apart(tmp_path):
    got = {name: scores_of(tmp_path / name, "codex", steps)[0] for name, steps in SCENARIOS.items()}
    assert got["clean-fix"]["retry_waste"] == 2
    assert got["one-failed-retry"]["retry_waste"] == 1
    assert (got["exploration-heavy"]["unnecessary_exploration"]
            < got["clean-fix"]["unnecessary_exploration"])
    assert got["question-no-change"]["minimal_diff"] is None  # no code change: N/A
