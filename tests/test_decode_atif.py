"""Harbor ATIF trajectories, and parity with the Claude Code stream-json copy of each run."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import FIXTURES, ROOT
from decode_counts import counts
from skill_doctor import rubric
from skill_doctor.decode import decode_file
from skill_doctor.model import Role, ToolKind, Transcript
from skill_doctor.report import grade

HARBOR = ROOT.parent / "shared" / "labelled" / "harbor-claude-code"
needs_harbor = pytest.mark.skipif(not HARBOR.is_dir(), reason="../shared/labelled is not present")


def test_atif_steps_become_typed_turns():
    t = decode_file(FIXTURES / "atif" / "run.atif.json")
    assert t.harness == "claude-code" and t.problem is None
    assert t.session_id == "0a1b2c3d-0000-4000-8000-00000000a71f" and t.model == "claude-sonnet-4-5"
    assert t.cwd == "/app"  # where the run started, not the first of `agent.extra.cwds`
    assert dict(t.extra) == {"branch": "main", "format": "ATIF-v1.2", "version": "2.1.89"}
    assert counts(t) == (7, 1, 3, 1)
    read, edit, bash = (x for x in t.turns if x.role is Role.TOOL)
    # The raw result is read, not the converter's `[metadata]` trailer.
    assert read.kind is ToolKind.READ and read.tool_output.endswith("return xs[len(xs)]\n")
    assert edit.kind is ToolKind.EDIT and edit.edits[0].path == "/app/calc.py"
    assert bash.is_error and bash.exit_code == 1 and bash.command == "python -m pytest -q"
    # "Executed Read ..." placeholders are no assistant text; injected text is marked.
    assert [x.content for x in t.turns if x.role is Role.ASSISTANT] == [
        "I'll read the file first.", "Fixed the index; one unrelated test still fails."]
    assert t.turns[5].meta == "task-notification"
    skipped = dict(t.skipped)
    assert skipped["sidechain"] == 1 and skipped["announced-call-never-run"] == 1
    assert t.started_at == "2026-04-01T10:00:00.000Z" and t.ended_at == "2026-04-01T10:00:12.000Z"


def test_an_atif_file_without_steps_is_not_a_transcript(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"schema_version": "ATIF-v1.2", "steps": 3}', encoding="utf-8")
    t = decode_file(path)
    assert t.not_a_transcript and not t.turns


def _with_request(stream: Transcript, atif: Transcript) -> Transcript:
    """The stream-json copy with the request put back: it is the one thing its log lacks."""
    request = [x for x in atif.turns if x.role is Role.USER and x.meta is None][:1]
    turns = request + [x for x in stream.turns if x.meta != "request-unknown"]
    return dataclasses.replace(stream, turns=tuple(
        x.replace(index=i) for i, x in enumerate(turns, start=1)))


def _signature(t: Transcript) -> list[tuple]:
    return [(x.role, x.meta, x.tool_name, x.kind, x.is_error, x.exit_code, x.command,
             tuple(e.path for e in x.edits), x.content.strip())
            for x in t.turns if x.role is not Role.USER]


def _criteria(t: Transcript, rb) -> tuple[str, dict]:
    report = grade(t, rb, "2026-01-01T00:00:00Z", overview=False)
    return report.status, {c.criterion.key: c.points for s in report.scores.scales()
                           for c in s.criteria}


@needs_harbor
def test_every_harbor_run_decodes_alike_from_its_atif_and_its_stream_json():
    rb = rubric.load()
    runs = sorted(HARBOR.glob("*.atif.json"))
    assert len(runs) >= 80
    same_turns = 0
    for atif_path in runs:
        atif = decode_file(atif_path)
        stream = decode_file(atif_path.with_name(atif_path.name.replace(".atif.json",
                                                                        ".claude-code.jsonl")))
        assert atif.harness == stream.harness == "claude-code"
        assert atif.session_id == stream.session_id and atif.cwd == stream.cwd
        # The stream-json log has no user record: its request is marked unknown, never guessed.
        assert stream.turns[0].meta == "request-unknown"
        assert atif.turns[0].role is Role.USER and atif.turns[0].meta is None
        # Parallel calls may be listed in another order within one step; the multiset agrees.
        a, s = _signature(atif), _signature(stream)
        assert sorted(a, key=repr) == sorted(s, key=repr), atif_path.name
        same_turns += a == s
        assert _criteria(atif, rb) == _criteria(_with_request(stream, atif), rb), atif_path.name
    assert same_turns >= len(runs) - 10
