"""asciinema recordings (.cast v2 and v3): the rebuilt terminal stream decodes as what it holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, run_cli
from skill_doctor.decode import decode_file, harness_names
from skill_doctor.decode.asciicast import agent_task
from skill_doctor.model import Role, ToolKind
from skill_doctor.report import grade
from skill_doctor import rubric

CAST = FIXTURES / "asciicast" / "claude-stream-json.cast"
TB1 = ROOT.parent / "shared" / "labelled" / "tb1-claude-code"
needs_tb1 = pytest.mark.skipif(not TB1.is_dir(), reason="../shared/labelled is not present")


def events(path: Path) -> tuple[dict, list[list]]:
    lines = path.read_text(encoding="utf-8").split("\n")
    return json.loads(lines[0]), [json.loads(l) for l in lines[1:] if l.strip()]


def write_cast(path: Path, header: dict, evs: list, extra_lines: tuple[str, ...] = ()) -> Path:
    body = [json.dumps(header), *extra_lines, *(json.dumps(e) for e in evs)]
    path.write_text("\n".join(body) + "\n", encoding="utf-8")
    return path


def test_recorded_stream_json_run_decodes_as_claude_code_with_the_typed_task_first():
    t = decode_file(CAST)
    assert t.harness == "claude-code" and t.problem is None
    assert dict(t.extra)["recording"] == "asciicast v2"
    assert [x.role for x in t.turns] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    task = t.turns[0]
    assert task.meta is None and task.content.startswith("Create a file called hello.txt")
    assert "'" not in task.content[:40]  # shell quoting undone
    write = t.turns[2]
    assert write.kind is ToolKind.WRITE and write.edits[0].path == "/app/hello.txt"
    # The events' times are the timestamps (stream-json has none); lines point into the cast.
    assert all(x.timestamp and x.timestamp.startswith("2025-11-09T06:57") for x in t.turns)
    assert t.started_at == task.timestamp and t.ended_at == t.turns[-1].timestamp
    cast_lines = CAST.read_text(encoding="utf-8").split("\n")
    assert '"i", "claude --verbose' in cast_lines[task.line - 1]
    assert "tool_use" in cast_lines[write.line - 1] or "Write" in cast_lines[write.line - 1]
    assert not any(n.startswith("the request is unknown") for n in t.notes)


def test_v3_intervals_and_comment_lines_give_the_same_turns(tmp_path):
    header, evs = events(CAST)
    v3_header = {"version": 3, "term": {"cols": header["width"], "rows": header["height"]},
                 "timestamp": header["timestamp"]}
    previous = 0.0
    v3_events = []
    for moment, code, data in evs:
        v3_events.append([round(moment - previous, 6), code, data])
        previous = moment
    v3_events.append([0.5, "x", "0"])
    path = write_cast(tmp_path / "run.cast", v3_header, v3_events, ("# recorded by asciinema 3",))
    t, v2 = decode_file(path), decode_file(CAST)
    assert dict(t.extra)["recording"] == "asciicast v3" and dict(t.extra)["exit_status"] == "0"
    assert [(x.role, x.tool_name, x.content) for x in t.turns] == \
        [(x.role, x.tool_name, x.content) for x in v2.turns]
    assert [x.timestamp[:19] for x in t.turns] == [x.timestamp[:19] for x in v2.turns]


def test_malformed_events_are_skipped_and_counted(tmp_path):
    header, evs = events(CAST)
    path = tmp_path / "damaged.cast"
    lines = [json.dumps(header), '[1.0, "o"]', "not json", '{"an": "object"}', '[2.0, 5, "x"]',
             '["t", "o", "y"]', *(json.dumps(e) for e in evs)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    t = decode_file(path)
    assert t.harness == "claude-code" and len(t.turns) == 4
    assert any(n.startswith("5 event(s) of the recording were malformed") for n in t.notes)


def test_an_agent_that_never_started_is_too_short_with_the_reason(tmp_path):
    header, evs = events(CAST)
    launch = next(i for i, e in enumerate(evs) if e[1] == "i" and e[2].startswith("claude"))
    failed = evs[:launch + 1] + [[evs[launch][0] + 0.1, "o", "\r\nbash: claude: command not found\r\n"],
                                 [evs[launch][0] + 0.2, "o", "root@box:/app# "]]
    t = decode_file(write_cast(tmp_path / "agent.cast", header, failed))
    assert t.not_started == "bash: claude: command not found"
    assert [x.role for x in t.turns] == [Role.USER]
    report = grade(t, rubric.load(), "2026-01-01T00:00:00Z")
    assert report.status == "too_short"
    assert report.message == ("Session too short to assess: the agent never started "
                              "(bash: claude: command not found)")


def test_a_plain_shell_recording_is_one_shell_call_per_typed_command(tmp_path):
    header = {"version": 2, "width": 80, "height": 24, "timestamp": 1767225600}
    evs = [[0.1, "o", "$ "], [1.0, "i", "ls\r"], [1.01, "o", "ls\r\nREADME.md  app.py\r\n$ "],
           [2.0, "i", "python -m pytest -q\r"],
           [2.01, "o", "python -m pytest -q\r\n\x1b[32m3 passed\x1b[0m in 0.01s\r\n$ "],
           [3.0, "i", "exit\r"], [3.01, "o", "exit\r\n"]]
    t = decode_file(write_cast(tmp_path / "shell.cast", header, evs))
    assert t.harness == "shell-recording"
    shells = [x for x in t.turns if x.role is Role.TOOL]
    assert [x.command for x in shells] == ["ls", "python -m pytest -q"]
    assert shells[1].tool_output == "3 passed in 0.01s"  # ANSI stripped, echo and prompt cut
    assert shells[0].kind is ToolKind.LIST and shells[0].timestamp == "2026-01-01T00:00:01.000Z"


def test_a_recorded_mini_swe_agent_console_goes_to_the_plain_text_dialect(tmp_path):
    log = (ROOT.parent / "shared" / "corpus" / "terminal-log" / "mini-swe-agent_hello-world.log")
    if not log.is_file():
        pytest.skip("the shared corpus is not present")
    text = log.read_text(encoding="utf-8", errors="replace")
    header = {"version": 2, "width": 160, "height": 40, "timestamp": 1767225600}
    evs = [[i * 0.01, "o", chunk] for i, chunk in
           enumerate(text[j:j + 4000] for j in range(0, len(text), 4000))]
    t = decode_file(write_cast(tmp_path / "mini.cast", header, evs))
    plain = decode_file(log)
    assert t.harness == plain.harness == "mini-swe-agent-log"
    assert [(x.role, x.command) for x in t.turns] == [(x.role, x.command) for x in plain.turns]


def test_agent_task_reads_the_task_option_of_known_agents():
    assert agent_task("claude --verbose -p 'it'\"'\"'s here' --allowedTools Bash; tmux wait") == \
        ("claude", "it's here")
    assert agent_task("mini -m gpt --task 'fix it'") == ("mini", "fix it")
    assert agent_task("ls -la") is None
    assert agent_task("claude -p 'unterminated") is None


def test_the_new_names_can_be_forced():
    assert {"asciicast", "atif", "aider", "specstory"} <= set(harness_names())
    assert decode_file(CAST, harness="asciicast").harness == "claude-code"


@needs_tb1
def test_every_terminal_bench_recording_is_scored_unless_its_agent_never_started(tmp_path, capsys):
    rb = rubric.load()
    not_started = []
    for path in sorted(TB1.glob("*.cast")):
        t = decode_file(path)
        report = grade(t, rb, "2026-01-01T00:00:00Z", overview=False)
        if t.not_started:
            not_started.append(path.name)
            assert report.status == "too_short", path.name
            continue
        assert report.status == "ok", (path.name, report.message)
        assert t.harness == "claude-code"
        first = t.turns[0]
        assert first.role is Role.USER and first.meta is None and len(first.content) > 20
        assert any(x.role is Role.TOOL for x in t.turns), path.name
        assert all(x.timestamp for x in t.turns), path.name
    assert not_started == ["extract-safely.fail.agent.cast"]
    code, out, _ = run_cli(["report", str(TB1 / "extract-safely.fail.agent.cast"), "-o", "r"],
                           tmp_path, capsys)
    data = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    assert code == 0 and data["status"] == "too_short"
    assert "the agent never started (bash: claude: command not found)" in data["message"]


def test_a_run_whose_turns_are_not_in_the_log_is_a_parse_error_that_says_what_it_holds(tmp_path):
    log = tmp_path / "agent.log"
    server = "".join(f"\x1b[92m10:00:{i:02d} - openhands:INFO\x1b[0m: action_execution_server.py:"
                     f"{i}: Running CmdRunAction step {i}\n" for i in range(30))
    log.write_text("\x1b[?2004hroot@box:/app# openhands --max-iterations 100 --task 'Fix the "
                   "build'; tmux wait -S done\n\x1b[?2004l" + server + "root@box:/app# \n",
                   encoding="utf-8")
    t = decode_file(log)
    assert t.not_started is None and t.problem is not None
    assert t.problem.message == ("the agent ran, but its turns are not in this log: after its "
                                 "launch it holds 30 lines of the runtime server's log")
    report = grade(t, rubric.load(), "2026-01-01T00:00:00Z")
    assert report.status == "parse_error" and "too short" not in (report.message or "").lower()


def test_a_recording_whose_agent_printed_nothing_readable_is_a_parse_error(tmp_path):
    header, evs = events(CAST)
    launch = next(i for i, e in enumerate(evs) if e[1] == "i" and e[2].startswith("claude"))
    noise = evs[:launch + 1] + [[evs[launch][0] + i, "o", f"[log_{i}] sending request {{\r\n"]
                                for i in range(1, 6)]
    t = decode_file(write_cast(tmp_path / "quiet.cast", header, noise))
    assert t.not_started is None
    assert t.problem.message.startswith("the agent (claude) was started, but none of its turns")
    assert grade(t, rubric.load(), "2026-01-01T00:00:00Z").status == "parse_error"


def test_output_past_the_bound_is_cut_with_a_note_and_keystroke_floods_stay_bounded(
        tmp_path, monkeypatch):
    from skill_doctor.decode import asciicast

    monkeypatch.setattr(asciicast, "MAX_OUTPUT_CHARS", 200)
    monkeypatch.setattr(asciicast, "MAX_TYPED_CHARS", 50)
    header = {"version": 2, "width": 80, "height": 24}
    evs = [[i * 0.001, "i", "x"] for i in range(5000)] + [[5.0, "i", "\r"]]
    evs += [[5.0 + i, "o", "line of output\r\n"] for i in range(100)]
    t = decode_file(write_cast(tmp_path / "big.cast", header, evs))
    assert any(n.startswith("only the first 0 MiB of the recording's output") for n in t.notes)
    shell = next(x for x in t.turns if x.role is Role.TOOL)
    assert shell.command == "x" * 50
    assert t.turns[0].timestamp is None  # no start time in the header: no invented times


def test_chunk_boundaries_and_overlong_lines_do_not_change_the_turns(tmp_path, monkeypatch):
    from skill_doctor.decode import asciicast

    header, evs = events(CAST)
    long_event = json.dumps([1.0, "o", "z" * 50_000])
    lines = [json.dumps(header), long_event, *(json.dumps(e) for e in evs), long_event]
    path = tmp_path / "chunked.cast"
    path.write_text("\n".join(lines), encoding="utf-8")  # no newline after the last line
    expected = [(x.role, x.tool_name, x.content, x.line) for x in decode_file(CAST).turns]
    monkeypatch.setattr(asciicast, "_BATCH_BYTES", 997)  # a chunk ends inside most lines
    monkeypatch.setattr(asciicast, "MAX_LINE_BYTES", 20_000)
    t = decode_file(path)
    assert [(x.role, x.tool_name, x.content, x.line - 1) for x in t.turns] == expected
    assert any(n.startswith("2 event(s) of the recording were malformed") for n in t.notes)
