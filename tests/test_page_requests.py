"""The page's request ledger: each request, what was done for it, the check after it."""

from __future__ import annotations

import re

from sessionkit import claude_jsonl
from skill_doctor import rubric
from skill_doctor.decode import decode_file
from skill_doctor.render import render
from skill_doctor.report import grade

STEPS = [
    {"user": "Fix the page count in src/pager.py, it drops the last partial page."},
    {"tool": "Edit", "input": {"file_path": "/home/dev/proj/src/pager.py",
                               "old_string": "return len(items) // per_page",
                               "new_string": "return -(-len(items) // per_page)"},
     "output": "The file has been updated."},
    {"tool": "Bash", "input": {"command": "pytest -q"}, "output": "4 passed in 0.01s"},
    {"assistant": "Fixed; the four pager tests pass."},
    {"user": "commit and push"},
    {"tool": "Bash", "input": {"command": "git commit -am 'Round up'"}, "output": "[main 1a2b3c4] Round up"},
    {"assistant": "Committed."},
]


def _rows(html: str) -> list[list[str]]:
    section = html[html.index('id="requests"'):]
    body = section[section.index("<tbody>"):section.index("</tbody>")]
    return [[" ".join(re.sub(r"<[^>]+>", "", cell).split())
             for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def test_each_request_is_a_row_with_its_files_and_check(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(claude_jsonl(STEPS), encoding="utf-8")
    html = render(grade(decode_file(path), rubric.load(), "2026-01-01T00:00:00Z"))
    rows = _rows(html)
    assert [r[:4] for r in rows] == [
        ["turn 1", "Fix the page count in src/pager.py, it drops the last partial page.",
         "change", "2"],
        ["turn 5", "commit and push", "to run", "1"]]
    assert rows[0][4] == "src/pager.py" and rows[0][5] == "pytest -q: passed (turn 3)"
    assert rows[1][4] == "none" and rows[1][5] == "none"
    # The push never ran: task completion cites the request, and the row links to it.
    assert '<a href="#turn-5">turn 5</a>' in html


def test_a_request_asked_again_many_times_lists_the_first_turns_and_a_count(tmp_path):
    ask = {"user": "Fix the page count in src/pager.py, it drops the last partial page."}
    steps = [ask, *STEPS[1:4]]
    for _ in range(30):
        steps += [ask, {"assistant": "It is fixed already; the tests pass."}]
    path = tmp_path / "s.jsonl"
    path.write_text(claude_jsonl(steps), encoding="utf-8")
    rows = _rows(render(grade(decode_file(path), rubric.load(), "2026-01-01T00:00:00Z")))
    assert len(rows) == 1
    again = rows[0][6]
    assert again.startswith("turn 5, turn 7, turn 9") and again.endswith(" and 10 more")
    assert again.count("turn ") == 20


def test_rows_built_a_few_at_a_time_make_the_page_built_whole(tmp_path):
    # The request table's rows are built and rendered in pieces so a long session's page never
    # holds them all as elements; the bytes must be the whole page's, texts with line breaks
    # (a hostile file name), secrets and deep indentation included.
    asks = ["Fix the page count in src/mod0.py", "Add a --verbose flag to the CLI in src/mod1.py",
            "Rename the helper in src/mod2.py to parse_header", "Write tests for src/mod3.py",
            "Make the cache in src/mod4.py expire after an hour",
            "Log the request id in src/mod5.py", "Remove the dead branch from src/mod6.py"]
    steps = []
    for i, ask in enumerate(asks):
        steps += [
            {"user": f"{ask}; the key is AKIAIOSFODNN7EXAMPL{i}."},
            {"tool": "Edit", "input": {"file_path": f"/home/dev/proj/src/mod{i}\n  <b>x</b>.py",
                                       "old_string": "a = 1", "new_string": "a = 2"},
             "output": "The file has been updated."},
            {"tool": "Bash", "input": {"command": f"pytest -q \\\n  tests/test_{i}.py"},
             "output": "1 passed in 0.01s"},
            {"assistant": f"Fixed bug {i}."}]
    path = tmp_path / "s.jsonl"
    path.write_text(claude_jsonl(steps), encoding="utf-8")
    report = grade(decode_file(path), rubric.load(), "2026-01-01T00:00:00Z")
    whole = render(report, rows_per_piece=None)
    assert len(_rows(whole)) > 3 and "AKIAIOSFODNN7EXAMPL" not in whole  # several pieces
    assert "mod3\n" in whole  # the line break inside a row's text is kept, not re-indented
    for per_piece in (1, 3, 100):
        assert render(report, rows_per_piece=per_piece) == whole
