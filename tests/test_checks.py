"""Which commands are checks of the work, and how each ended (facts.checks)."""

from __future__ import annotations

from sessionkit import claude_jsonl
from skill_doctor import facts
from skill_doctor.decode import decode_file

SCRIPT = ("python3 - <<'PY'\nfrom pathlib import Path\npath = Path('tasks.md')\n"
          "path.write_text(path.read_text().replace('- [ ] T1', '- [X] T1'))\nPY")


def _checks(tmp_path, steps):
    path = tmp_path / "s.jsonl"
    path.write_text(claude_jsonl(steps), encoding="utf-8")
    return [(c.turn, c.kind, c.passed) for c in facts.compute(decode_file(path)).checks]


def test_an_inline_script_that_writes_a_file_is_an_edit_not_a_check(tmp_path):
    assert _checks(tmp_path, [
        {"user": "Mark task T1 done in tasks.md."},
        {"tool": "Bash", "input": {"command": SCRIPT}, "output": ""},
        {"tool": "Bash", "input": {"command": "python3 app.py --total 1 2"}, "output": "3"},
        {"assistant": "Marked T1 done."},
    ]) == [(3, "run", True)]


def test_a_silent_type_check_or_lint_that_exits_0_passed(tmp_path):
    assert _checks(tmp_path, [
        {"user": "Rename the option in src/session.ts."},
        {"tool": "Bash", "input": {"command": "npx tsc --noEmit"}, "output": ""},
        {"tool": "Bash", "input": {"command": "npx eslint src"}, "output": ""},
        # Masked by a pipe, silence says nothing; a silent test run says nothing either.
        {"tool": "Bash", "input": {"command": "npx tsc --noEmit | head"}, "output": ""},
        {"tool": "Bash", "input": {"command": "pytest -q > /dev/null"}, "output": ""},
        {"assistant": "Done."},
    ]) == [(2, "typecheck", True), (3, "lint", True), (4, "typecheck", None), (5, "test", None)]
