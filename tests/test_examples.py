"""The bundled examples do what examples/README.md says: the clean ones pass `check`, the poor
one fails the default thresholds, and it sits where the pre-commit hook looks."""

from __future__ import annotations

import re

import yaml

from conftest import ROOT, run_cli as run

POOR = "examples/sessions/poor-session.jsonl"


def test_poor_example_fails_the_default_thresholds(capsys):
    code, out, _ = run(["check", POOR], ROOT, capsys)
    assert code == 1
    summary = re.compile(re.escape(POOR) + r": efficiency (\d+)/10, code quality N/A, \d+ "
                         r"findings: FAIL \(efficiency \1 < 5\)$")
    [match] = [m for m in map(summary.match, out.splitlines()) if m]
    assert int(match.group(1)) < 5
    # it asked for a change and made none, re-read a file, and retried failing commands
    assert {"SD101", "SD102", "SD103"} <= {line.split()[1] for line in out.splitlines()
                                          if " [error] " in line}


def test_clean_examples_pass(capsys):
    code, out, _ = run(["check", "examples/clean-fix.jsonl", "examples/retry-fix.jsonl"],
                       ROOT, capsys)
    assert code == 0 and out.splitlines()[-1] == "Checked 2 sessions: 0 failed."


def test_the_hook_picks_up_the_poor_example():
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    files = re.compile(hook["files"])
    assert files.search(POOR)
    assert not files.search("examples/clean-fix.jsonl")


def test_poor_example_logs_tokens_and_cost(tmp_path, capsys):
    code, out, _ = run(["report", str(ROOT / POOR), "-o", "r"], tmp_path, capsys)
    assert code == 0
    tokens_line = next(line for line in out.splitlines() if line.startswith("Tokens: "))
    assert "cache read" in tokens_line and "$" in tokens_line
