"""The GitHub Action (`action.yml`): its steps' command lines run as a runner would run them,
with the inputs mapped into each step's environment the way GitHub does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
_INPUT = re.compile(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}")


def step_env(step: dict, inputs: dict[str, str]) -> dict[str, str]:
    """A step's `env:` with `${{ inputs.x }}` filled in (given values, else the defaults)."""
    values = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    values.update(inputs)
    out = {}
    for key, value in (step.get("env") or {}).items():
        out[key] = _INPUT.sub(lambda m: values[m.group(1)], str(value))
    return out


def run_step(step: dict, inputs: dict[str, str], workspace: Path, runner_temp: Path):
    assert "${{" not in step["run"], "inputs must reach the script through env, not inline"
    env = {**os.environ, **step_env(step, inputs), "GITHUB_ACTION_PATH": str(ROOT),
           "RUNNER_TEMP": str(runner_temp)}
    assert step["shell"] == "bash"
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=600)


def steps() -> tuple[dict, dict]:
    install, check = ACTION["runs"]["steps"]
    assert ACTION["runs"]["using"] == "composite"
    return install, check


@pytest.fixture
def runner(tmp_path):
    """A workspace with the examples, and the install step's result stood in for by a
    `skill-doctor` that runs this checkout (the install step itself runs in the slow test)."""
    workspace = tmp_path / "ws"
    (workspace / "sessions").mkdir(parents=True)
    for name in ("clean-fix.jsonl", "retry-fix.jsonl"):
        (workspace / "sessions" / name).write_bytes((ROOT / "examples" / name).read_bytes())
    (workspace / "sessions" / "poor.jsonl").write_bytes(
        (ROOT / "examples" / "sessions" / "poor-session.jsonl").read_bytes())
    temp = tmp_path / "runner-temp"
    bin_dir = temp / "skill-doctor-venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "skill-doctor"
    script.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT / "src"}" exec "{sys.executable}" '
                      f'-m skill_doctor "$@"\n')
    script.chmod(0o755)
    return workspace, temp


def test_check_step_annotates_and_fails_on_a_poor_session(runner):
    workspace, temp = runner
    _, check = steps()
    result = run_step(check, {"paths": "sessions/clean-fix.jsonl\nsessions/poor.jsonl"},
                      workspace, temp)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("::error file=sessions/poor.jsonl,line=") for line in lines)
    assert any(re.fullmatch(r"::error file=sessions/poor\.jsonl,title=skill-doctor::session "
                            r"below the thresholds: efficiency \d < 5", line) for line in lines)
    assert lines[-1] == "Checked 2 sessions: 1 failed."


def test_check_step_thresholds_args_and_globs(runner):
    workspace, temp = runner
    _, check = steps()
    result = run_step(check, {"paths": "sessions/*.jsonl"}, workspace, temp)
    assert result.returncode == 1  # the poor session, at the default thresholds
    result = run_step(check, {"paths": "sessions/*.jsonl", "min-efficiency": "0"},
                      workspace, temp)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "Checked 3 sessions: 0 failed."
    result = run_step(check, {"paths": "sessions", "args": "--exit-zero -q"}, workspace, temp)
    assert result.returncode == 0
    assert all("poor.jsonl" in line or line.startswith("Checked ")
               for line in result.stdout.splitlines())


def test_check_step_with_a_baseline(runner):
    workspace, temp = runner
    _, check = steps()
    baseline = workspace / "baseline"
    subprocess.run([str(temp / "skill-doctor-venv" / "bin" / "skill-doctor"), "batch",
                    "sessions/clean-fix.jsonl", "-o", "baseline"], cwd=workspace, check=True,
                   capture_output=True, env={**os.environ, "SOURCE_DATE_EPOCH": "0"})
    # this run's clean-fix is the retried one: one point down
    (workspace / "sessions" / "clean-fix.jsonl").write_bytes(
        (ROOT / "examples" / "retry-fix.jsonl").read_bytes())
    result = run_step(check, {"paths": "sessions/clean-fix.jsonl",
                              "baseline": str(baseline / "summary.jsonl"), "tolerance": "0"},
                      workspace, temp)
    assert result.returncode == 1
    assert any(line.startswith("::error file=sessions/clean-fix.jsonl,line=1,col=1,title=SD002 "
                               "below-baseline::") for line in result.stdout.splitlines())


def test_inputs_cannot_inject_shell(runner):
    workspace, temp = runner
    _, check = steps()
    result = run_step(check, {"paths": "$(touch pwned) `touch pwned2`; touch pwned3"},
                      workspace, temp)
    assert result.returncode == 2  # no such file: a usage error, nothing run
    assert not any((workspace / name).exists() for name in ("pwned", "pwned2", "pwned3"))


def test_no_paths_is_an_error(runner):
    workspace, temp = runner
    _, check = steps()
    result = run_step(check, {"paths": "  "}, workspace, temp)
    assert result.returncode == 2 and "no paths given" in result.stdout


@pytest.mark.slow
def test_both_steps_install_and_check_for_real(runner):
    """The install step builds a fresh venv and installs this checkout, as on a runner."""
    workspace, temp = runner
    for path in (temp / "skill-doctor-venv").rglob("*"):
        if path.is_file():
            path.unlink()
    install, check = steps()
    result = run_step(install, {}, workspace, temp)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().startswith("skill-doctor ")
    result = run_step(check, {"paths": "sessions/poor.jsonl"}, workspace, temp)
    assert result.returncode == 1 and "session below the thresholds: efficiency" in result.stdout
