"""Two runs in fresh interpreters with different PYTHONHASHSEEDs and the same
SOURCE_DATE_EPOCH write byte-identical report files (set and dict order never leaks out)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT
from sessionkit import claude_jsonl

EXAMPLES = ROOT / "examples"


def run_cli(args: list[str], cwd: Path, hash_seed: str, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env.update(PYTHONHASHSEED=hash_seed, SOURCE_DATE_EPOCH="1767225600", HOME=str(home),
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "skill_doctor", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def inputs(tmp_path: Path) -> list[Path]:
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(claude_jsonl([
        {"user": "Fix <b>it</b> with password=hunter22 \u202e"},
        {"tool": "Grep", "input": {"pattern": "x", "path": "/a"}, "output": "a\nb"},
        {"tool": "Edit", "input": {"file_path": "/a/z.py", "old_string": "1", "new_string": "2"},
         "output": "ok"},
        {"tool": "Edit", "input": {"file_path": "/a/y.py", "old_string": "1", "new_string": "2"},
         "output": "String to replace not found", "error": True},
        {"assistant": "done"}]) + "not json\n")
    notes = tmp_path / "notes.txt"
    notes.write_text("no turns\nat all\n")
    chosen = [EXAMPLES / "retry-fix.jsonl", hostile, notes]
    big = sorted((CORPUS / "claude-code").glob("*.jsonl"), key=lambda p: p.stat().st_size)
    if big:
        chosen.append(big[len(big) // 2])  # a real session of middling size
    return chosen


@pytest.mark.slow
def test_different_hash_seeds_give_byte_identical_reports(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    for n, session in enumerate(inputs(tmp_path)):
        outputs = []
        for seed in ("1", "4242"):
            out = f"r{n}-{seed}"
            done = run_cli(["report", str(session), "-o", out], tmp_path, seed, home)
            assert done.returncode == 0, done.stderr
            outputs.append((done.stdout.replace(out, "DIR"),
                            (tmp_path / out / "report.html").read_bytes(),
                            (tmp_path / out / "report.json").read_bytes()))
        assert outputs[0] == outputs[1], session.name
