"""Sessions and a runner shared by the check, batch and pre-commit tests."""

from __future__ import annotations

from conftest import run_cli as run  # noqa: F401  (shared with the check and batch tests)
from sessionkit import claude_jsonl

# The file to fix read seven times over without a change, then three commands each failed
# twice in a row, and no edit: efficiency 0/10 (below the default threshold of 5), code
# quality N/A.
POOR_STEPS = (
    [{"user": "Fix the page count in src/pager.py: it drops the last partial page."}]
    + [{"tool": "Read", "input": {"file_path": "/home/dev/proj/src/pager.py"},
        "output": "def pages(items, per_page):\n    return len(items) // per_page\n"}] * 7
    + [{"tool": "Bash", "input": {"command": cmd}, "output": "Exit code 127\nsh: not found",
        "error": True}
       for cmd in ("npm test", "npm test", "make test", "make test", "yarn test", "yarn test")]
    + [{"assistant": "I could not run the tests."}]
)

# A question and its answer, no code: efficiency 10, code quality N/A.
CHAT_STEPS = [
    {"user": "What does the pager module in this project do, in one sentence?"},
    {"assistant": "It splits a list of items into pages of a fixed size and reports how "
                  "many pages there are, including a last partial page."},
]


def poor_session(session_id: str = "99999999-0000-4000-8000-000000000001") -> str:
    return claude_jsonl(POOR_STEPS, session_id=session_id)


