"""Session discovery over fake stores built in a temporary home (never the real ones)."""

from __future__ import annotations

import os
from pathlib import Path

from skill_doctor.stores import discover, newest_for_project, store_dirs, with_details


def _write(path: Path, text: str, mtime: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


def _claude_line(session: str, cwd: str, text: str, uuid: str, sidechain: bool = False) -> str:
    return ('{"parentUuid":null,"isSidechain":%s,"sessionId":"%s","cwd":"%s","type":"user",'
            '"message":{"role":"user","content":"%s"},"uuid":"%s","timestamp":"2026-01-0%sT10:00:00Z"}\n'
            % ("true" if sidechain else "false", session, cwd, text, uuid, uuid[-1]))


def _fake_home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects" / "-work-shop"
    _write(projects / "s1.jsonl", _claude_line("s1", "/home/dev/shop", "fix cart", "u1"), 1000)
    _write(projects / "agent-abc1234.jsonl", _claude_line("s1", "/home/dev/shop", "Warmup", "u2", True), 1500)
    _write(projects / "s1" / "subagents" / "agent-x.jsonl",
           _claude_line("s1", "/home/dev/shop", "sub", "u3", True), 1600)
    codex_home = tmp_path / "codexhome"
    _write(codex_home / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02T10-00-00-c1.jsonl",
           '{"timestamp":"2026-01-02T10:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/home/dev/shop","source":"cli"}}\n'
           '{"timestamp":"2026-01-02T10:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"hello"}}\n',
           3000)
    _write(codex_home / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02T10-05-00-c2.jsonl",
           '{"timestamp":"2026-01-02T10:05:00Z","type":"session_meta","payload":{"id":"c2","parent_thread_id":"c1","cwd":"/home/dev/shop","thread_source":"subagent","source":{"subagent":{"thread_spawn":{"parent_thread_id":"c1","depth":1}}}}}\n',
           4000)
    _write(codex_home / "archived_sessions" / "rollout-2025-12-01T10-00-00-c0.jsonl",
           '{"timestamp":"2025-12-01T10:00:00Z","type":"session_meta","payload":{"id":"c0","cwd":"/elsewhere"}}\n',
           500)
    _write(home / ".pi" / "agent" / "sessions" / "--work-other--" / "2026_p1.jsonl",
           '{"type":"session","id":"p1","timestamp":"2026-01-03T10:00:00Z","cwd":"/home/dev/other"}\n', 2000)
    _write(home / ".local" / "share" / "opencode" / "storage" / "session" / "proj" / "ses_a.json",
           '{"id":"ses_a","projectID":"proj","directory":"/home/dev/shop/sub","time":{"created":1}}', 2500)
    _write(home / ".local" / "share" / "opencode" / "storage" / "session" / "proj" / "ses_b.json",
           '{"id":"ses_b","projectID":"proj","parentID":"ses_a","directory":"/home/dev/shop/sub"}', 2600)
    return home, {"CODEX_HOME": str(codex_home)}


def test_discover_lists_newest_first_and_attaches_subagents(tmp_path):
    home, env = _fake_home(tmp_path)
    sessions = discover(env, home)
    assert [(s.harness, s.path.name) for s in sessions] == [
        ("codex", "rollout-2026-01-02T10-00-00-c1.jsonl"),
        ("opencode", "ses_a.json"),
        ("pi", "2026_p1.jsonl"),
        ("claude-code", "s1.jsonl"),
        ("codex", "rollout-2025-12-01T10-00-00-c0.jsonl"),
    ]
    by_name = {s.path.name: s for s in sessions}
    assert [p.name for p in by_name["s1.jsonl"].subagents] == ["agent-abc1234.jsonl", "agent-x.jsonl"]
    assert [p.name for p in by_name["rollout-2026-01-02T10-00-00-c1.jsonl"].subagents] == [
        "rollout-2026-01-02T10-05-00-c2.jsonl"]
    assert [p.name for p in by_name["ses_a.json"].subagents] == ["ses_b.json"]
    assert by_name["s1.jsonl"].cwd == "/home/dev/shop"


def test_newest_for_project(tmp_path):
    home, env = _fake_home(tmp_path)
    assert newest_for_project("/home/dev/shop", env, home).path.name.endswith("c1.jsonl")
    assert newest_for_project("/home/dev/other", env, home).harness == "pi"
    assert newest_for_project("/nowhere", env, home) is None


def test_overrides_are_honoured(tmp_path):
    env = {"CLAUDE_CONFIG_DIR": "/c", "CODEX_HOME": "/x", "GEMINI_CLI_HOME": "/g",
           "PI_CODING_AGENT_DIR": "/p", "XDG_DATA_HOME": "/d"}
    dirs = store_dirs(env, tmp_path)
    assert dirs["claude-code"] == [Path("/c/projects")]
    assert dirs["codex"] == [Path("/x")]
    assert dirs["gemini"] == [Path("/g/.gemini/tmp")]
    assert dirs["pi"] == [Path("/p/sessions")]
    assert dirs["opencode"] == [Path("/d/opencode/storage")]


def test_empty_home_has_no_sessions(tmp_path):
    assert discover({}, tmp_path) == []


def test_details_count_turns(tmp_path):
    home, env = _fake_home(tmp_path)
    first = with_details(discover(env, home)[0])
    assert first.turns == 1 and first.started_at == "2026-01-02T10:00:00Z"


def test_sessions_command_lists_every_store(tmp_path, monkeypatch, capsys):
    from skill_doctor.cli import main

    home, env = _fake_home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", env["CODEX_HOME"])
    assert main(["sessions", "--limit", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["HARNESS", "STARTED", "TURNS", "PATH"]
    # newest start first (Pi's session started last, though its file is older than Codex's)
    assert out[1].startswith("pi") and "2026-01-03T10:00:00Z" in out[1]
    assert out[2].startswith("codex") and "rollout-2026-01-02T10-00-00-c1.jsonl" in out[2]
    assert "(+1 subagent file(s))" in out[2]
    assert out[3] == "... 3 more (use --limit 0 to list all)"


def test_sessions_command_with_no_stores(tmp_path, monkeypatch, capsys):
    from skill_doctor.cli import main

    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["sessions"]) == 0
    assert capsys.readouterr().out.strip() == "No sessions found in the harness stores."


def test_report_without_path_takes_the_projects_newest_session(tmp_path, monkeypatch, capsys):
    from skill_doctor.cli import main

    home, env = _fake_home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", env["CODEX_HOME"])
    work = tmp_path / "work" / "mine"
    work.mkdir(parents=True)
    _write(home / ".pi" / "agent" / "sessions" / "--mine--" / "2026_p2.jsonl",
           '{"type":"session","id":"p2","timestamp":"2026-01-03T10:00:00Z","cwd":"%s"}\n'
           % work.as_posix(), 100)  # older than every other session, but this project's
    monkeypatch.chdir(work)
    assert main(["report", "-o", "r"]) == 0
    import json
    data = json.loads((work / "r" / "report.json").read_text())
    assert data["session"]["source"].endswith("2026_p2.jsonl")
