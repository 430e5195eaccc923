"""Every real Claude Code session in the shared corpus goes through the whole pipeline."""

from __future__ import annotations

import json
import os

import pytest

from conftest import corpus_files, needs_corpus
from skill_doctor.cli import main

FILES = corpus_files("claude-code")
STATUSES = {"ok", "no_history", "too_short", "parse_error"}


@needs_corpus
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_corpus_session_gets_a_report(tmp_path, capsys, path):
    os.chdir(tmp_path)
    assert main(["report", str(path), "-o", "r"]) == 0
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["status"] in STATUSES
    html = (tmp_path / "r" / "report.html").read_text()
    assert "<h1>Skill Doctor Report</h1>" in html
    if data["status"] == "ok":
        assert isinstance(data["scores"]["efficiency"]["score"], (int, float))
        for finding in data["findings"]:
            assert finding["evidence"], f"{finding['criterion']} cites no turn"
            assert all(1 <= e["turn"] <= data["session"]["turns"] for e in finding["evidence"])


@needs_corpus
def test_corpus_is_present_when_expected():
    assert len(FILES) >= 10
