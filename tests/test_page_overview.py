"""The page's data (overview.py): session strip, setup, timeline, files, net diffs, appendix."""

from __future__ import annotations

from sessionkit import claude_jsonl
from skill_doctor import overview, rubric
from skill_doctor.decode import decode_file
from skill_doctor.redact import redact
from skill_doctor.report import grade, to_json

APP_BEFORE = "def total(items):\n    return sum(items)\n\n\ndef count(items):\n    return len(items)\n"
GH_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

SETUP_SESSION = [
    {"user": "<system-reminder>As you answer, use this context:\nContents of "
             "/home/dev/proj/CLAUDE.md (project instructions, checked into the codebase):\n"
             "Run make test.</system-reminder>"},                                     # 1
    {"user": "Fix total() in app.py so it skips None values and the tests pass"},    # 2
    {"user": "<command-name>/review</command-name>\n<command-message>review</command-message>"},  # 3
    {"tool": "Skill", "input": {"skill": "python-style"}, "output": "Launching skill"},  # 4
    {"tool": "Task", "input": {"subagent_type": "Explore", "description": "find total()"},
     "output": "total() is in app.py"},                                              # 5
    {"tool": "mcp__github__get_issue", "input": {"number": 3}, "output": "None breaks it"},  # 6
    {"tool": "mcp__github__list_pulls", "input": {}, "output": "[]"},                 # 7
    {"tool": "Read", "input": {"file_path": "/home/dev/proj/AGENTS.md"}, "output": "rules"},  # 8
    {"tool": "Read", "input": {"file_path": "/home/dev/proj/app.py"}, "output": APP_BEFORE},  # 9
    {"tool": "Bash", "input": {"command": "git push"}, "error": True,
     "output": "PreToolUse:Bash hook error: pushing from agents is blocked"},        # 10
    {"tool": "Edit", "input": {"file_path": "/home/dev/proj/app.py",
                               "old_string": "    return sum(items)",
                               "new_string": "    return sum(i for i in items if i is not None)"},
     "output": "The file has been updated.", "result": {"originalFile": APP_BEFORE}},  # 11
    {"tool": "Edit", "input": {"file_path": "/home/dev/proj/app.py",
                               "old_string": "    return len(items)",
                               "new_string": "    return len([i for i in items if i is not None])"},
     "output": "The file has been updated.", "result": {"originalFile": APP_BEFORE.replace(
         "    return sum(items)", "    return sum(i for i in items if i is not None)")}},  # 12
    {"tool": "Bash", "input": {"command": "pytest -q"}, "output": f"3 passed; token {GH_TOKEN}"},  # 13
    {"assistant": "total() and count() now skip None values; pytest reports 3 passed."},  # 14
]


def graded(tmp_path, steps, name="s.jsonl", **kwargs):
    path = tmp_path / name
    path.write_text(claude_jsonl(steps))
    return grade(decode_file(path), rubric.load(), "2026-01-01T00:00:00Z", **kwargs)


def test_strip_counts_what_the_session_did(tmp_path):
    report = graded(tmp_path, SETUP_SESSION)
    s = report.overview.strip
    assert (s.harness, s.model, s.project, s.version) == ("claude-code", "claude-sonnet-4-5",
                                                           "/home/dev/proj", "2.1.1")
    assert s.turns == 14 and s.user_turns == 1 and s.assistant_turns == 1
    assert s.tool_calls == 10 and s.failed_calls == 1
    assert s.files_read == 2 and s.files_edited == 1  # AGENTS.md and app.py; app.py
    assert s.checks == 1 and s.last_check_turn == 13 and s.last_check_passed is True
    # sessionkit stamps one second per record; tool steps take two records.
    assert s.duration_seconds == (s.turns + 10) - 1


def test_setup_lists_skills_agents_mcp_hooks_instructions_and_commands(tmp_path):
    setup = graded(tmp_path, SETUP_SESSION).overview.setup
    names = {key: [(i.name, i.count, i.first_turn) for i in items] for key, _, items in setup.rows()}
    assert names == {
        "skills": [("python-style", 1, 4)],
        "subagents": [("Explore", 1, 5)],
        "mcp_servers": [("github", 2, 6)],
        "hooks": [("PreToolUse:Bash", 1, 10)],
        "instruction_files": [("CLAUDE.md", 1, 1), ("AGENTS.md", 1, 8)],
        "slash_commands": [("/review", 1, 3)],
    }
    assert setup.subagents[0].detail == "find total()"
    assert setup.instruction_files[0].detail == "loaded by the harness"
    assert setup.instruction_files[1].detail == "read by the agent"


def test_net_diff_goes_from_the_first_state_to_the_last(tmp_path):
    [d] = graded(tmp_path, SETUP_SESSION).overview.diffs
    assert d.path == "app.py" and d.net and d.turns == (11, 12)
    added = [x.text for x in d.lines if x.tag == "add"]
    removed = [x.text for x in d.lines if x.tag == "del"]
    assert added == ["+    return sum(i for i in items if i is not None)",
                     "+    return len([i for i in items if i is not None])"]
    assert removed == ["-    return sum(items)", "-    return len(items)"]
    assert (d.added, d.removed, d.hidden_lines) == (2, 2, 0)
    assert any(x.tag == "hunk" for x in d.lines)


def test_snippet_only_edits_fall_back_to_each_edits_diff(tmp_path):
    steps = [{"user": "Rename the helper in util.py to make_total"},
             {"tool": "Edit", "input": {"file_path": "/home/dev/proj/util.py", "old_string": "def tot(",
                                        "new_string": "def make_total("}, "output": "ok"},
             {"tool": "Edit", "input": {"file_path": "/home/dev/proj/util.py", "old_string": "tot(x)",
                                        "new_string": "make_total(x)"}, "output": "ok"},
             {"assistant": "Renamed tot to make_total in util.py and its one caller."}]
    [d] = graded(tmp_path, steps).overview.diffs
    assert not d.net and d.turns == (2, 3)
    assert [x.text for x in d.lines if x.tag == "add"] == ["+def make_total(", "+make_total(x)"]


def test_files_table_marks_the_finding_that_flags_a_file(tmp_path):
    steps = [{"user": "Fix the typo in README.md"},
             {"tool": "Read", "input": {"file_path": "/home/dev/proj/docs/history.md"}, "output": "v1"},
             {"tool": "Read", "input": {"file_path": "/home/dev/proj/README.md"}, "output": "teh"},
             {"tool": "Edit", "input": {"file_path": "/home/dev/proj/README.md", "old_string": "teh",
                                        "new_string": "the"}, "output": "ok"},
             {"assistant": "Fixed the typo in README.md: teh is now the."}]
    report = graded(tmp_path, steps)
    rows = {r.path: r for r in report.overview.files}
    exploration = [f for f in report.findings if f.criterion == "unnecessary_exploration"]
    assert exploration and [e.turn for e in exploration[0].evidence] == [2]
    assert rows["docs/history.md"].flagged_by == (("SD102", "unnecessary_exploration",
                                            "Unnecessary exploration"),)
    assert rows["README.md"].flagged_by == ()
    assert (rows["README.md"].reads, rows["README.md"].edits, rows["README.md"].added,
            rows["README.md"].removed) == (1, 1, 1, 1)
    assert [r.path for r in report.overview.files][0] == "docs/history.md"  # flagged first


def test_appendix_holds_only_cited_turns_with_bounded_redacted_excerpts(tmp_path):
    long_output = "\n".join(f"line {i} {GH_TOKEN}" for i in range(400))
    steps = [{"user": "Fix the failing test in calc.py"},
             {"tool": "Bash", "input": {"command": "pytest -q"}, "output": long_output,
              "error": True},
             {"tool": "Bash", "input": {"command": "pytest -q"}, "output": long_output,
              "error": True},
             {"tool": "Bash", "input": {"command": "pytest -q"}, "output": long_output,
              "error": True},
             {"assistant": "The tests still fail."}]
    report = graded(tmp_path, steps)
    cited = sorted({e.turn for f in report.findings for e in f.evidence})
    assert [t.index for t in report.overview.appendix] == cited and 2 in cited
    entry = next(t for t in report.overview.appendix if t.index == 2)
    assert entry.is_error and entry.tool == "Bash" and entry.input_text == "pytest -q"
    assert GH_TOKEN not in entry.output_text and "[redacted: github-token]" in entry.output_text
    assert len(entry.output_text) <= overview.OUTPUT_CHARS + 60
    assert entry.output_text.count("\n") <= overview.EXCERPT_LINES
    assert entry.output_text.endswith("characters in all]")

    raw = graded(tmp_path, steps, redact_secrets=False)
    assert GH_TOKEN in next(t for t in raw.overview.appendix if t.index == 2).output_text


def test_bounded_never_shows_part_of_a_secret_cut_at_the_edge():
    text = "x" * 90 + " " + GH_TOKEN + " tail"
    out = overview.bounded(text, 100, redact)
    assert "ghp_" not in out and "A1b2" not in out


def test_timeline_buckets_long_sessions_and_keeps_failures_and_citations(tmp_path):
    steps = [{"user": "Make the build pass in main.c"}]
    for i in range(1, 1200):
        steps.append({"tool": "Read", "input": {"file_path": f"/home/dev/proj/f{i}.c"}, "output": "x"}
                     if i % 2 else {"assistant": f"Step {i}: reading the next file."})
    steps[700] = {"tool": "Bash", "input": {"command": "make"}, "output": "error: x", "error": True}
    steps.append({"assistant": "I could not make the build pass."})
    report = graded(tmp_path, steps)
    tl = report.overview.timeline
    assert len(tl.cells) <= overview.MAX_CELLS and tl.bucket == 3
    assert tl.cells[0].start == 1 and tl.cells[-1].end == len(steps)
    assert all(a.end + 1 == b.start for a, b in zip(tl.cells, tl.cells[1:]))
    failed = [c for c in tl.cells if c.start <= 701 <= c.end]
    assert failed[0].kind == "failed"
    cited = {e.turn for f in report.findings for e in f.evidence}
    marked = {c.link for c in tl.cells if c.cited}
    assert cited and all(any(c.start <= t <= c.end and c.cited for c in tl.cells) for t in cited)
    assert marked <= cited
    assert dict(tl.counts)["read"] == 600 and dict(tl.counts)["failed"] == 1


def test_every_turn_gets_one_kind():
    from skill_doctor.model import Role, ToolKind, Turn
    assert overview.turn_kind(Turn(1, Role.USER, "hi")) == "user"
    assert overview.turn_kind(Turn(1, Role.USER, "x", meta="system-reminder")) == "injected"
    assert overview.turn_kind(Turn(1, Role.ASSISTANT, "ok")) == "assistant"
    assert overview.turn_kind(Turn(1, Role.TOOL, kind=ToolKind.SEARCH)) == "read"
    assert overview.turn_kind(Turn(1, Role.TOOL, kind=ToolKind.WRITE)) == "edit"
    assert overview.turn_kind(Turn(1, Role.TOOL, kind=ToolKind.SHELL)) == "shell"
    assert overview.turn_kind(Turn(1, Role.TOOL, kind=ToolKind.PLAN)) == "other"
    assert overview.turn_kind(Turn(1, Role.TOOL, kind=ToolKind.EDIT, is_error=True)) == "failed"


def test_report_json_carries_the_overview(tmp_path):
    data = to_json(graded(tmp_path, SETUP_SESSION))
    ov = data["overview"]
    assert ov["session"]["tool_calls"] == 10
    assert ov["session"]["last_check"] == {"turn": 13, "command": "pytest -q", "passed": True}
    assert ov["setup"]["mcp_servers"] == [{"name": "github", "count": 2, "first_turn": 6}]
    assert ov["turn_kinds"]["failed"] == 1
    assert [f["path"] for f in ov["files"]] == ["app.py", "AGENTS.md"]


def test_minimal_reports_have_no_overview(tmp_path):
    report = graded(tmp_path, [{"user": "hi"}])
    assert report.status == "too_short" and report.overview is None
    assert "overview" not in to_json(report)


def test_a_log_with_one_timestamp_has_no_duration():
    from skill_doctor.overview import _seconds

    assert _seconds("2025-05-04T17:02:36", "2025-05-04T17:02:36") is None
    assert _seconds("2025-05-04T17:02:36Z", "2025-05-04T17:03:06Z") == 30
    assert _seconds(None, "2025-05-04T17:03:06Z") is None
