"""The batch index as a team lead reads it: sort orders without JavaScript, pass or fail by
check's rule, per-harness figures, the score chart, and summary.csv for spreadsheets."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from sessionkit import claude_jsonl
from skill_doctor import batch as batch_mod
from skill_doctor.render import CARDS_CSS
from workflowkit import CHAT_STEPS, poor_session, run

EXAMPLES = ROOT / "examples"
POOR_ID = "99999999-0000-4000-8000-000000000001"
CLEAN_ID = "c1ea0f1c-0000-4000-8000-000000000001"
RETRY_ID = "4e7a1f1c-0000-4000-8000-000000000002"


def dated(text: str, day: str) -> str:
    """A session's text moved to another day (its records' timestamps rewritten)."""
    return re.sub(r"\d{4}-\d{2}-\d{2}T", f"{day}T", text)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    s = tmp_path / "sessions"
    s.mkdir()
    (s / "a-clean.jsonl").write_text(
        dated((EXAMPLES / "clean-fix.jsonl").read_text(encoding="utf-8"), "2026-01-03"),
        encoding="utf-8")
    shutil.copy(EXAMPLES / "retry-fix.jsonl", s / "b-retry.jsonl")  # 2026-01-01
    (s / "c-poor.jsonl").write_text(dated(poor_session(POOR_ID), "2026-01-05"), encoding="utf-8")
    (s / "d-short.jsonl").write_text(claude_jsonl([{"user": "hi"}]), encoding="utf-8")
    return tmp_path


def session_order(page: str) -> list[str]:
    return [m.split("/")[1] for m in re.findall(r'<a href="(sessions/[^"]+)"', page)]


def test_each_sort_order_is_a_page_linked_from_every_header(work, capsys):
    code, _, err = run(["batch", "sessions", "-o", "out"], work, capsys)
    assert code == 0, err
    out = work / "out"
    pages = {v.key: (out / v.file).read_text(encoding="utf-8") for v in batch_mod.VIEWS}
    assert set(pages) == {"score", "date", "harness", "input"}
    for view in batch_mod.VIEWS:
        page = pages[view.key]
        nav = page[page.index('<nav aria-label="Sort the sessions"'):page.index("</nav>")]
        linked = re.findall(r'<a href="([^"#]+)#sessions"', nav)
        assert sorted(linked) == sorted(v.file for v in batch_mod.VIEWS if v is not view)
        assert f'<strong aria-current="page">{view.label}</strong>' in nav
        assert "<script" not in page and "default-src 'none'" in page
    short = "11111111-2222-3333-4444-555555555555"
    # index.html: lowest efficiency first (3, 9, 10), the session without a score last
    assert session_order(pages["score"]) == [POOR_ID, RETRY_ID, CLEAN_ID, short]
    # newest first; the short one shares the retry session's day and comes after it by input
    assert session_order(pages["date"]) == [POOR_ID, CLEAN_ID, RETRY_ID, short]
    assert session_order(pages["input"]) == [CLEAN_ID, RETRY_ID, POOR_ID, short]
    records = [json.loads(line) for line in (out / "summary.jsonl").read_text().splitlines()]
    assert [r["report"].split("/")[1] for r in records] == session_order(pages["input"])


def test_verdict_column_and_counts_follow_the_thresholds(work, capsys):
    assert run(["batch", "sessions", "-o", "out"], work, capsys)[0] == 0
    index = (work / "out" / "index.html").read_text(encoding="utf-8")
    row = index[index.index(POOR_ID):].split("</tr>")[0]
    assert '<td class="o3 fail" data-label="Verdict">fail (efficiency 0 &lt; 5)</td>' in row
    assert index.count('<td class="o3 pass" data-label="Verdict">pass</td>') == 2
    assert "not graded" in index
    figures = json.loads((work / "out" / "aggregate.json").read_text(encoding="utf-8"))
    assert figures["verdicts"] == {"passed": 2, "failed": 1, "not_graded": 1}
    # check --html judges by its own --min-* options, on the index as in its output
    code, out, _ = run(["check", "sessions", "--min-efficiency", "9.5", "--html", "gate"],
                       work, capsys)
    assert code == 1
    gate = (work / "gate" / "index.html").read_text(encoding="utf-8")
    assert "fail (efficiency 9 &lt; 9.5)" in gate and "efficiency 9.5" in gate
    report = (work / "gate" / "sessions" / RETRY_ID / "report.html").read_text(encoding="utf-8")
    assert 'class="verdict fail"' in report


def test_per_harness_summary(work, capsys):
    shutil.copy(ROOT / "tests" / "fixtures" / "codex" / "legacy-mid-2025.jsonl",
                work / "sessions" / "e-codex.jsonl")
    assert run(["batch", "sessions", "-o", "out"], work, capsys)[0] == 0
    figures = json.loads((work / "out" / "aggregate.json").read_text(encoding="utf-8"))
    assert set(figures["harnesses"]) == {"claude-code", "codex"}
    claude = figures["harnesses"]["claude-code"]
    assert claude["passed"] + claude["failed"] + claude["not_graded"] == claude["sessions"]
    assert sum(h["sessions"] for h in figures["harnesses"].values()) == figures["sessions"]
    index = (work / "out" / "index.html").read_text(encoding="utf-8")
    table = index[index.index('id="harnesses"'):index.index('id="aggregate"')]
    for harness, entry in figures["harnesses"].items():
        assert f'<td class="lead wide o1">{harness}</td>' in table
    assert f"{round(claude['efficiency']['mean'], 1):g} (n = {claude['efficiency']['n']})" in table


def test_the_chart_appears_only_when_sessions_span_more_than_a_day(work, capsys):
    assert run(["batch", "sessions", "-o", "spread"], work, capsys)[0] == 0
    index = (work / "spread" / "index.html").read_text(encoding="utf-8")
    svg = index[index.index("<svg"):index.index("</svg>")]
    assert 'role="img"' in svg and "<title>" in svg
    assert svg.count("<polyline") == 2  # efficiency and code quality
    assert svg.count("<circle") == 3 + 2  # one point per day with a score, per scale
    assert "2026-01-01" in svg and "2026-01-05" in svg
    assert 'stroke-dasharray="5 4"' in svg  # the threshold
    assert "The figures per day" in index
    assert run(["batch", "sessions/b-retry.jsonl", "sessions/d-short.jsonl", "-o", "one-day"],
               work, capsys)[0] == 0
    assert "<svg" not in (work / "one-day" / "index.html").read_text(encoding="utf-8")


def test_summary_csv_matches_summary_jsonl(work, capsys):
    assert run(["batch", "sessions", "-o", "out"], work, capsys)[0] == 0
    out = work / "out"
    rows = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text(encoding="utf-8"))))
    records = [json.loads(line) for line in (out / "summary.jsonl").read_text().splitlines()]
    assert list(rows[0]) == list(batch_mod.CSV_COLUMNS)
    assert [r["session"] for r in rows] == [r["session"]["id"] for r in records]
    for row, record in zip(rows, records):
        assert row["status"] == record["status"] and row["report"] == record["report"]
        for scale in ("efficiency", "code_quality"):
            score = record["scores"][scale]["score"]
            assert row[scale] == ("" if score is None else str(score))
    poor = next(r for r in rows if r["session"] == POOR_ID)
    assert poor["verdict"] == "fail" and poor["failures"] == "efficiency 0 < 5"


def test_csv_cells_never_run_as_spreadsheet_formulas(work, capsys):
    evil = '=HYPERLINK("http://example.invalid","x")'
    (work / "evil.jsonl").write_text(claude_jsonl(CHAT_STEPS, session_id=evil), encoding="utf-8")
    flipped = "report\u202egpj.exe"
    (work / "flip.jsonl").write_text(claude_jsonl(CHAT_STEPS, session_id=flipped),
                                     encoding="utf-8")
    assert run(["batch", "evil.jsonl", "flip.jsonl", "-o", "out"], work, capsys)[0] == 0
    rows = list(csv.DictReader(io.StringIO(
        (work / "out" / "summary.csv").read_text(encoding="utf-8"))))
    assert [r["session"] for r in rows] == ["'" + evil, "report[U+202E]gpj.exe"]
    index = (work / "out" / "index.html").read_text(encoding="utf-8")
    assert "\u202e" not in index and "report[U+202E]gpj.exe" in index


def test_csv_quotes_a_bare_carriage_return_and_neutralises_formulas_after_a_line_break(
        work, capsys):
    # Spreadsheet readers end a row at a bare CR and may read each line of a cell on its own.
    for name, session_id in (("cr", "a\r=cmd|'/C calc'!A0"), ("lf", "b\n@SUM(1+1)")):
        (work / f"{name}.jsonl").write_text(claude_jsonl(CHAT_STEPS, session_id=session_id),
                                            encoding="utf-8")
    assert run(["batch", "cr.jsonl", "lf.jsonl", "-o", "out"], work, capsys)[0] == 0
    with open(work / "out" / "summary.csv", encoding="utf-8", newline="") as f:
        text = f.read()
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert len(rows) == 2 and text.count('"a\r') == 1  # the CR inside a quoted field
    assert [r["session"] for r in rows] == ["a\r'=cmd|'/C calc'!A0", "b\n'@SUM(1+1)"]
    for row in rows:
        for cell in row.values():
            assert not re.search(r"(^|[\r\n])[=+@-]", cell or ""), cell


def test_the_index_stays_identical_whatever_the_number_of_processes(work, capsys):
    assert run(["batch", "sessions", "-o", "one", "-j", "1"], work, capsys)[0] == 0
    assert run(["batch", "sessions", "-o", "two", "-j", "2"], work, capsys)[0] == 0
    for view in batch_mod.VIEWS:
        assert (work / "one" / view.file).read_bytes() == (work / "two" / view.file).read_bytes()
    assert (work / "one" / "summary.csv").read_bytes() == (work / "two" / "summary.csv").read_bytes()


def test_the_index_style_sheet_is_embedded_whole_and_nothing_else_reaches_it(work, capsys):
    evil = '</style><style>body{display:none}</style>'
    (work / "evil.jsonl").write_text(claude_jsonl(CHAT_STEPS, session_id=evil), encoding="utf-8")
    assert run(["batch", "evil.jsonl", "sessions", "-o", "out"], work, capsys)[0] == 0
    for view in batch_mod.VIEWS:
        page = (work / "out" / view.file).read_text(encoding="utf-8")
        assert re.findall(r"<style>(.*?)</style>", page, re.S) == [
            batch_mod.INDEX_CSS + CARDS_CSS]
        assert '"Segoe UI"' in batch_mod.INDEX_CSS and page.count("<style") == 1
