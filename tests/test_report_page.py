"""report.html and report.json: the contract's structure, word for word, and a safe page."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from conftest import ROOT
from sessionkit import claude_jsonl
from skill_doctor import rubric
from skill_doctor.decode import decode_file
from skill_doctor.render import render
from skill_doctor.report import SCHEMA, grade, no_history, to_json

EXAMPLES = ROOT / "examples"
CRITERIA = ["task_completion", "unnecessary_exploration", "retry_waste", "turn_economy",
            "correct_file_identification", "minimal_diff", "pattern_adherence",
            "regression_avoidance"]


class Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Collector:
    c = Collector()
    c.feed(html)
    return c


def graded(path):
    return grade(decode_file(path), rubric.load(), "2026-01-01T00:00:00Z")


def test_page_has_the_contract_sections_in_order():
    html = render(graded(EXAMPLES / "retry-fix.jsonl"))
    order = [html.index(s) for s in ("<h1>Skill Doctor Report</h1>", ">Score summary</h2>",
                                     ">Findings</h2>", ">Suggestions</h2>")]
    assert order == sorted(order)
    page = parse(html)
    assert "4e7a1f1c-0000-4000-8000-000000000002" in "".join(page.text)  # session id
    assert any(tag == "time" for tag, _ in page.tags)  # session timestamp
    bars = [a for tag, a in page.tags if tag == "div" and "bar" in a.get("class", "")]
    assert len(bars) == 2 and all("out of 10" in b["aria-label"] for b in bars)
    assert any(tag == "blockquote" for tag, _ in page.tags)
    assert any(tag == "article" and "card" in a.get("class", "") for tag, a in page.tags)
    assert "Turn 4" in html and "Suggestion: " in html


def test_page_loads_nothing_and_runs_nothing():
    html = render(graded(EXAMPLES / "retry-fix.jsonl"))
    page = parse(html)
    tags = {tag for tag, _ in page.tags}
    assert not tags & {"script", "img", "link", "iframe", "object", "embed", "audio", "video"}
    assert all(not k.startswith("on") for _, attrs in page.tags for k in attrs)
    assert "http://" not in html and "https://" not in html and "@import" not in html
    [csp] = [a["content"] for t, a in page.tags if t == "meta"
             and a.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'none'" in csp


def test_code_quality_na_shows_reason_instead_of_a_bar(tmp_path):
    session = tmp_path / "q.jsonl"
    session.write_text(claude_jsonl([
        {"user": "What does page_count return for an empty list?"},
        {"assistant": "It returns zero because the length of an empty list is zero."}]))
    report = graded(session)
    html = render(report)
    assert report.scores.code_quality.score is None
    assert "made no code changes" in html
    page = parse(html)
    assert len([a for t, a in page.tags if t == "div" and "bar" in a.get("class", "")]) == 1
    # "N/A" stands in the bar's place once, with the reason beside it, not again as a value.
    summary = html.split('id="scale-code_quality"', 1)[1].split("<table", 1)[0]
    assert summary.count("N/A") == 1
    assert 'class="na">N/A: the session made no code changes' in summary


def test_transcript_text_is_escaped(tmp_path):
    session = tmp_path / "x.jsonl"
    evil = '<script>alert(1)</script><img src=x onerror=alert(2)>'
    session.write_text(claude_jsonl([
        {"user": f"Fix {evil} in a.py"},
        {"tool": "Edit", "input": {"file_path": f"/home/dev/proj/{evil}.py", "old_string": "a",
                                   "new_string": evil}, "output": evil, "error": True},
        {"tool": "Edit", "input": {"file_path": f"/home/dev/proj/{evil}.py", "old_string": "b",
                                   "new_string": evil}, "output": evil, "error": True},
        {"assistant": evil}]))
    html = render(graded(session))
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_json_report_shape():
    data = to_json(graded(EXAMPLES / "retry-fix.jsonl"))
    assert data["schema"] == SCHEMA and data["status"] == "ok" and data["message"] is None
    assert set(data["session"]) == {"id", "harness", "source", "turns", "started_at", "ended_at",
                                    "task"}
    assert data["session"]["task"] == "retry-fix"  # what `check --baseline` matches on
    assert data["session"]["harness"] == "claude-code" and data["session"]["turns"] == 7
    for scale in ("efficiency", "code_quality"):
        assert data["scores"][scale]["max"] == 10
        assert list(data["scores"][scale]["criteria"]) == [
            c for c in CRITERIA if rubric.CRITERIA[c][0] == scale]
    finding = data["findings"][0]
    assert {"criterion", "category", "score", "max", "impact", "evidence", "suggestion"} <= set(finding)
    assert data["suggestions"][0] == {"rank": 1, "criterion": "retry_waste", "id": "SD103",
                                      "impact": 1, "text": finding["suggestion"]}
    json.dumps(data, sort_keys=True)


def test_na_scales_keep_their_criteria():
    data = to_json(no_history(rubric.load(), "2026-01-01T00:00:00Z"))
    assert data["status"] == "no_history"
    for scale in ("efficiency", "code_quality"):
        assert data["scores"][scale]["score"] is None
        assert all(c["score"] is None for c in data["scores"][scale]["criteria"].values())
    assert len(data["scores"]["efficiency"]["criteria"]) == 4
