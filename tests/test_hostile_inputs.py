"""Bad inputs and bad output places, each with one clear outcome and never a traceback.

Inputs: a folder of 10,000 files, a symlink loop, a FIFO or a device as PATH (never blocks), an
unreadable file, a 50 MB line, nesting 100,000 deep, invalid UTF-8 and lone surrogates, a
NUL-filled file, a file that changes while it is read. Outputs: DIR exists, DIR not writable,
the disk full: one line on stderr, a non-zero exit, nothing left behind.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from conftest import ROOT, run_cli as run
from sessionkit import claude_jsonl
from skill_doctor import decode, rubric
from skill_doctor.cli import main
from skill_doctor.decode import decode_file, jsonl
from skill_doctor.render import render
from skill_doctor.report import grade, to_json
from skill_doctor.write import dump_json

EXAMPLES = ROOT / "examples"
TWO_TURNS = [{"user": "Fix the bug in a.py"}, {"assistant": "Fixed it."}]


def shared_folder() -> Path:
    """A fresh folder an unprivileged user can enter (pytest's own tmp folders are private)."""
    folder = Path(tempfile.mkdtemp(prefix="skill-doctor-perm-"))
    folder.chmod(0o777)
    return folder


def as_unprivileged_user(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run this Python with `args` as an ordinary user (nobody, via setpriv, when we are root),
    so file permissions are enforced for real."""
    import skill_doctor

    # The package and its dependencies exactly as this test process sees them.
    paths = [str(Path(skill_doctor.__file__).resolve().parent.parent)]
    paths += [p for p in sys.path if p.endswith("site-packages")]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd),
           "PYTHONPATH": os.pathsep.join(paths), "SOURCE_DATE_EPOCH": "1767225600",
           "NO_COLOR": "1"}
    cmd = [sys.executable, *args]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root and setpriv is missing: cannot drop privileges")
        drop = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        probe = subprocess.run([*drop, sys.executable, "-c",
                                "import skill_doctor.cli, dominate, lark, yaml, unidiff"], cwd=cwd,
                               env=env, capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"an unprivileged user cannot run this installation: {probe.stderr[-200:]}")
        cmd = [*drop, *cmd]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def report_of(directory: Path) -> dict:
    return json.loads((directory / "report.json").read_text(encoding="utf-8"))


def pipeline(path: Path):
    """decode -> grade -> render -> JSON, as the CLI does; returns (report, html, json text)."""
    report = grade(decode_file(path), rubric.load(), "2026-01-01T00:00:00Z")
    return report, render(report), dump_json(to_json(report))


def finishes(fn, seconds: float = 20.0):
    """Run `fn` on a thread; fail (instead of hanging the suite) if it blocks."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"blocked for more than {seconds} s"
    return result[0]


# -- where the transcript is --------------------------------------------------------------

@pytest.mark.slow
def test_folder_of_ten_thousand_files_picks_the_newest_transcript(tmp_path, capsys):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(10_000):
        (folder / f"note-{i:05d}.txt").write_bytes(b"")
        os.utime(folder / f"note-{i:05d}.txt", (1_000_000, 1_000_000))
    session = folder / "zz-session.jsonl"
    session.write_text(claude_jsonl(TWO_TURNS))
    os.utime(session, (2_000_000, 2_000_000))
    code, _, err = run(["report", "many", "-o", "r"], tmp_path, capsys)
    assert code == 0, err
    data = report_of(tmp_path / "r")
    assert data["status"] == "ok" and data["session"]["source"].endswith("zz-session.jsonl")


def test_symlink_loop_as_path_is_a_one_line_parse_error(tmp_path, capsys):
    (tmp_path / "a.jsonl").symlink_to(tmp_path / "b.jsonl")
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "a.jsonl")
    code, out, err = run(["report", "a.jsonl", "-o", "r"], tmp_path, capsys)
    assert code == 0 and err == ""
    data = report_of(tmp_path / "r")
    assert data["status"] == "parse_error"
    assert "symbolic links" in data["message"] or "not a regular file" in data["message"]


def test_symlink_loop_inside_a_folder_is_skipped(tmp_path, capsys):
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "loop").symlink_to(folder / "loop")
    (folder / "sub").symlink_to(folder)  # a directory cycle, never followed
    (folder / "s.jsonl").write_text(claude_jsonl(TWO_TURNS))
    code, _, err = run(["report", "sessions", "-o", "r"], tmp_path, capsys)
    assert code == 0, err
    assert report_of(tmp_path / "r")["status"] == "ok"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_as_path_never_blocks(tmp_path, capsys):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    transcript = finishes(lambda: decode_file(fifo))
    assert transcript.problem is not None and "not a regular file" in transcript.problem.message
    code, _, _ = finishes(lambda: run(["report", "pipe.jsonl", "-o", "r"], tmp_path, capsys))
    assert code == 0 and report_of(tmp_path / "r")["status"] == "parse_error"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_swapped_in_after_the_first_look_never_blocks(tmp_path, monkeypatch):
    """The path was a regular file when looked at, and is a FIFO when opened."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    regular = os.stat(EXAMPLES / "clean-fix.jsonl")
    real_stat = Path.stat
    monkeypatch.setattr(Path, "stat", lambda self, **kw: regular if self == fifo
                        else real_stat(self, **kw))
    transcript = finishes(lambda: decode_file(fifo))
    assert transcript.problem is not None and "not a regular file" in transcript.problem.message


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero", "/dev/urandom"])
def test_device_as_path_is_refused_without_reading(device):
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    transcript = finishes(lambda: decode_file(device))
    assert transcript.problem is not None and "not a regular file" in transcript.problem.message


def test_unreadable_file_is_a_parse_error_report(tmp_path, capsys, monkeypatch):
    session = tmp_path / "s.jsonl"
    session.write_text(claude_jsonl(TWO_TURNS))
    real_open = os.open

    def denied(path, flags, *args, **kwargs):
        if str(path) == str(session):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(decode.os, "open", denied)
    code, out, err = run(["report", "s.jsonl", "-o", "r"], tmp_path, capsys)
    assert code == 0 and err == ""
    data = report_of(tmp_path / "r")
    assert data["status"] == "parse_error"
    assert data["message"] == "Unparseable format: cannot read s.jsonl: Permission denied"


def test_file_without_read_permission(tmp_path):
    # Run as an unprivileged user, since root reads files whatever their mode.
    folder = shared_folder()
    session = folder / "s.jsonl"
    session.write_text(claude_jsonl(TWO_TURNS))
    session.chmod(0)
    proc = as_unprivileged_user(
        ["-c", "import sys; from skill_doctor.decode import decode_file; "
               "print(decode_file(sys.argv[1]).problem.message)", str(session)], folder)
    assert proc.returncode == 0, proc.stderr
    assert "Permission denied" in proc.stdout


# -- what the transcript holds ------------------------------------------------------------

@pytest.mark.slow
def test_fifty_megabyte_single_line_is_read_and_clipped(tmp_path):
    session = tmp_path / "big.jsonl"
    lines = claude_jsonl(TWO_TURNS).splitlines(keepends=True)
    record = json.loads(lines[0])
    record["message"]["content"] = "A" * (50 * 1024 * 1024)
    record["uuid"] = "big"
    with open(session, "w", encoding="utf-8") as fh:
        fh.write(lines[0])
        fh.write(json.dumps(record) + "\n")
        fh.write(lines[1])
    report, html, _ = pipeline(session)
    assert report.status == "ok"
    big = report.transcript.turns[1]
    assert len(big.content) < 100_000 and "characters not kept" in big.content
    assert len(html) < 1_000_000


def test_line_over_the_cap_keeps_head_and_tail_with_a_note(tmp_path, monkeypatch):
    """A line past the cap is streamed, never held whole, and kept with its long strings cut
    (it used to be dropped, and a failed call with it)."""
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(jsonl, "_CHUNK", 1000)  # the rest of the line is read in pieces
    lines = claude_jsonl(TWO_TURNS).splitlines(keepends=True)
    record = json.loads(lines[0])
    record["message"]["content"] = "B" * 100_000 + " the end"
    record["uuid"] = "big"
    session = tmp_path / "big.jsonl"
    session.write_text(lines[0] + json.dumps(record) + "\n" + lines[1])
    transcript = decode_file(session)
    assert [t.content[:19] for t in transcript.turns] == ["Fix the bug in a.py", "BBBBBBBBBBBBBBBBBBB",
                                                          "Fixed it."]
    assert transcript.turns[1].content.endswith("B the end")
    assert "not kept" in transcript.turns[1].content
    assert "1 line(s) longer than 0 MiB were read with their long strings cut to head and tail" \
        in transcript.notes


def test_an_oversized_tool_output_keeps_its_head_tail_and_exit_status(tmp_path, monkeypatch):
    """A failing test run whose output is past the line cap still fails the call, and the
    summary at the end of the output is still shown."""
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 64 * 1024)
    output = "collecting ...\n" + "test_x.py::test_case PASSED\n" * 40_000 + "1 failed, 39999 passed"
    steps = [{"user": "make the tests pass"},
             {"tool": "Bash", "input": {"command": "pytest -q"}, "output": output, "error": True,
              "result": {"stdout": output, "stderr": "", "interrupted": False}},
             {"assistant": "One test still fails."}]
    session = tmp_path / "big.jsonl"
    session.write_text(claude_jsonl(steps))
    assert session.stat().st_size > 2 * 1024 * 1024
    transcript = decode_file(session)
    call = next(t for t in transcript.turns if t.tool_name == "Bash")
    assert call.is_error and call.command == "pytest -q"
    assert call.tool_output.startswith("collecting ...")
    assert call.tool_output.rstrip().endswith("1 failed, 39999 passed")


def test_a_whole_document_nested_ten_thousand_deep_keeps_the_session(tmp_path):
    depth = 10_000
    deep = '{"a":' * depth + "1" + "}" * depth
    messages = [{"role": "user", "content": "Fix the bug in a.py"},
                {"role": "assistant", "content": "Fixed it.", "metadata": "DEEP"},
                {"role": "user", "content": "thanks"}]
    session = tmp_path / "chat.json"
    session.write_text(json.dumps({"messages": messages}).replace('"DEEP"', deep))
    report, html, _ = pipeline(session)
    assert report.transcript.problem is None, report.message
    assert [t.content for t in report.transcript.turns] == ["Fix the bug in a.py", "Fixed it.",
                                                            "thanks"]
    assert f"1 value(s) nested deeper than {jsonl.MAX_DEPTH} levels were skipped" \
        in report.transcript.notes


def test_plain_text_over_the_cap_is_cut_at_a_line_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setattr(decode, "MAX_TEXT_BYTES", 2048)
    session = tmp_path / "log.txt"
    session.write_text("".join(f"User: question {i}\nAssistant: answer {i}\n" for i in range(500)))
    transcript = decode_file(session)
    assert transcript.harness == "plain-text"
    assert 0 < len(transcript.turns) < 200
    assert transcript.turns[-1].content.startswith("answer ")  # cut at a line end
    assert any("only the first" in n for n in transcript.notes)


@pytest.mark.parametrize("shape", ["objects", "arrays"])
def test_nesting_one_hundred_thousand_deep(tmp_path, shape):
    """orjson crashes the interpreter on this (a segfault, not an exception): it must never
    see such a line."""
    depth = 100_000
    deep = ('{"a":' * depth + "1" + "}" * depth) if shape == "objects" else ("[" * depth + "]" * depth)
    lines = claude_jsonl(TWO_TURNS).splitlines(keepends=True)
    session = tmp_path / "deep.jsonl"
    session.write_text(lines[0] + '{"parentUuid":null,"type":"user","x":' + deep + "}\n"
                       + lines[1])
    report, _, _ = pipeline(session)
    assert report.status == "ok"
    assert f"1 line(s) nested deeper than {jsonl.MAX_DEPTH} levels were skipped" in report.transcript.notes
    bare = tmp_path / "deep.json"
    bare.write_text(deep)
    assert pipeline(bare)[0].status == "parse_error"


def test_nesting_just_over_the_limit_in_a_tool_input_is_refused(tmp_path):
    depth = jsonl.MAX_DEPTH + 5
    value = '{"k":' * depth + "1" + "}" * depth
    lines = claude_jsonl([*TWO_TURNS, {"tool": "Bash", "input": {"command": "X"}}]).splitlines()
    lines[2] = lines[2].replace('{"command": "X"}', value)
    session = tmp_path / "deep.jsonl"
    session.write_text("\n".join(lines) + "\n")
    report, _, _ = pipeline(session)
    assert report.status == "ok" and len(report.transcript.turns) == 3  # the result line stays
    assert any("nested deeper" in n for n in report.transcript.notes)


def test_invalid_utf8_is_replaced_and_noted(tmp_path):
    raw = claude_jsonl(TWO_TURNS).encode()
    raw = raw.replace(b"Fix the bug", b"Fix \xff\xfe the \xc3 bug")
    session = tmp_path / "bad.jsonl"
    session.write_bytes(raw)
    report, html, _ = pipeline(session)
    assert report.status == "ok"
    assert report.transcript.turns[0].content == "Fix \ufffd\ufffd the \ufffd bug in a.py"
    assert "1 line(s) held bytes that are not UTF-8 (replaced)" in report.transcript.notes


def test_lone_surrogates_are_read_and_written_without_crashing(tmp_path, capsys):
    text = claude_jsonl([{"user": "cut emoji X here"}, {"assistant": "ok Y"}],
                        session_id="sid-Z")
    text = (text.replace("X", "\\ud83d").replace("Y", "\\udc00")
            .replace("sid-Z", "sid-\\udfff"))
    session = tmp_path / "s.jsonl"
    session.write_text(text)
    transcript = decode_file(session)
    assert [t.content for t in transcript.turns] == ["cut emoji \ud83d here", "ok \udc00"]
    code, out, err = run(["report", "s.jsonl", "-o", "r"], tmp_path, capsys)
    assert code == 0, err
    html = (tmp_path / "r" / "report.html").read_bytes().decode("utf-8")  # strict: valid UTF-8
    data = report_of(tmp_path / "r")
    assert data["session"]["id"] == "sid-?" and "sid-?" in html


@pytest.mark.parametrize("content", [b"\0" * 100_000, b"\0\n" * 5000,
                                     b'{"parentUuid":null}\n' + b"\0" * 1000],
                         ids=["nul-only", "nul-lines", "nul-after-json"])
def test_nul_filled_file(tmp_path, content):
    session = tmp_path / "nul.jsonl"
    session.write_bytes(content)
    report, html, _ = pipeline(session)
    assert report.status in ("parse_error", "too_short")
    assert "\0" not in html


def test_file_truncated_while_it_is_read(tmp_path, monkeypatch):
    session = tmp_path / "s.jsonl"
    session.write_bytes((EXAMPLES / "retry-fix.jsonl").read_bytes())
    real = decode._open_regular

    def shrinking(path):
        stream = real(path)
        os.truncate(path, 1500)  # another process rewrites the file under us
        return stream

    monkeypatch.setattr(decode, "_open_regular", shrinking)
    report, _, _ = pipeline(session)
    assert report.status in ("ok", "too_short", "parse_error")
    assert 0 < len(report.transcript.turns) < 6


def test_file_growing_while_it_is_read(tmp_path, monkeypatch):
    session = tmp_path / "s.jsonl"
    data = (EXAMPLES / "retry-fix.jsonl").read_bytes()
    session.write_bytes(data)
    real = decode._open_regular

    def growing(path):
        stream = real(path)
        with open(path, "ab") as fh:  # the agent is still writing: half a line lands
            fh.write(data.splitlines(keepends=True)[0][:40])
        return stream

    monkeypatch.setattr(decode, "_open_regular", growing)
    report, _, _ = pipeline(session)
    assert report.status == "ok"
    assert any("not valid JSON" in n for n in report.transcript.notes)


def test_a_decoder_fault_becomes_a_parse_error_not_a_traceback(tmp_path, monkeypatch):
    from skill_doctor.decode import claude_code

    def broken(path, stream):
        raise KeyError("surprise")

    monkeypatch.setattr(claude_code, "decode", broken)
    report, _, _ = pipeline(EXAMPLES / "clean-fix.jsonl")
    assert report.status == "parse_error"
    assert "the decoder failed on clean-fix.jsonl: KeyError" in report.message


def test_path_with_a_nul_byte_or_bad_name(tmp_path, capsys):
    code, _, err = run(["report", "a\0b.jsonl", "-o", "r"], tmp_path, capsys)
    # No traceback: the one warning a path that does not exist gets, the NUL shown, not written
    assert code == 0 and err == ("skill-doctor: warning: a[U+0000]b.jsonl does not exist; "
                                 'writing the "No conversation history found" report\n')
    assert report_of(tmp_path / "r")["status"] in ("no_history", "parse_error")


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses non-UTF-8 file names")
def test_non_utf8_file_name_prints_and_writes(tmp_path, capsys):
    name = os.fsdecode(b"s\xff.jsonl")  # a lone surrogate once decoded
    (tmp_path / name).write_text(claude_jsonl(TWO_TURNS))
    code, out, err = run(["report", name, "-o", "r"], tmp_path, capsys)
    assert code == 0, err
    (tmp_path / "r" / "report.html").read_bytes().decode("utf-8")


def test_closed_stdout_does_not_fail_the_run(tmp_path, monkeypatch):
    closed = io.TextIOWrapper(io.BytesIO())
    closed.close()
    monkeypatch.setattr(sys, "stdout", closed)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert main(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "r"]) == 0
    finally:
        os.chdir(old)
    assert (tmp_path / "r" / "report.html").is_file()


def test_terminal_escapes_in_messages_are_shown_not_obeyed(tmp_path, capsys):
    name = "evil\x1b[2J\u202e.txt"
    (tmp_path / name).write_text("just some words\nwith no turns\n")
    code, out, err = run(["report", name, "-o", "r"], tmp_path, capsys)
    assert code == 0
    assert "\x1b" not in out and "\u202e" not in out
    assert "[U+001B]" in out or "Not a transcript" in out


# -- where the report goes -----------------------------------------------------------------

def test_existing_dir_is_refused_with_one_line(tmp_path, capsys):
    (tmp_path / "r").mkdir()
    code, out, err = run(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "r"], tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and "already exists" in err
    assert list((tmp_path / "r").iterdir()) == []


def test_unwritable_dir_is_one_line_exit_3_and_nothing_left(tmp_path, capsys, monkeypatch):
    import skill_doctor.write as write_mod

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(write_mod.tempfile, "mkdtemp", denied)
    code, _, err = run(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "deep/er/r"],
                       tmp_path, capsys)
    assert code == 3 and err.count("\n") == 1 and "Permission denied" in err
    assert list(tmp_path.iterdir()) == []  # the parents it made are gone too


def test_read_only_parent_folder():
    # Run as an unprivileged user, since root writes into folders whatever their mode.
    folder = shared_folder()
    session = folder / "s.jsonl"
    session.write_bytes((EXAMPLES / "clean-fix.jsonl").read_bytes())
    parent = folder / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    proc = as_unprivileged_user(["-m", "skill_doctor", "report", str(session), "-o", "ro/r"],
                                folder)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Permission denied" in proc.stderr
    assert list(parent.iterdir()) == []


@pytest.mark.parametrize("fail_on", ["report.html", "report.json", "fsync", "rename"])
def test_disk_full_at_any_step_leaves_nothing(tmp_path, capsys, monkeypatch, fail_on):
    import skill_doctor.write as write_mod

    full = OSError(errno.ENOSPC, "No space left on device")
    real_open = open
    if fail_on.startswith("report."):
        def failing_open(path, mode="r", *args, **kwargs):
            if "w" in mode and str(path).endswith(fail_on):
                raise full
            return real_open(path, mode, *args, **kwargs)
        monkeypatch.setattr(write_mod, "open", failing_open, raising=False)
    elif fail_on == "fsync":
        monkeypatch.setattr(write_mod.os, "fsync", lambda fd: (_ for _ in ()).throw(full))
    else:
        monkeypatch.setattr(write_mod.os, "rename", lambda a, b: (_ for _ in ()).throw(full))
    code, out, err = run(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "a/b/r"],
                         tmp_path, capsys)
    monkeypatch.undo()
    assert code == 3 and out == ""
    assert err == f"skill-doctor: error: cannot write the report to {tmp_path / 'a/b/r'}: " \
                  "No space left on device\n"
    assert list(tmp_path.iterdir()) == []


def test_forced_replace_that_fails_keeps_the_earlier_report(tmp_path, capsys, monkeypatch):
    import skill_doctor.write as write_mod

    assert run(["report", str(EXAMPLES / "clean-fix.jsonl"), "-o", "r"], tmp_path, capsys)[0] == 0
    before = (tmp_path / "r" / "report.json").read_bytes()
    real_rename = os.rename

    def rename(src, dst):
        if str(src).endswith(".tmp"):  # the new report cannot be moved into place
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_rename(src, dst)

    monkeypatch.setattr(write_mod.os, "rename", rename)
    code, _, err = run(["report", str(EXAMPLES / "retry-fix.jsonl"), "-o", "r", "--force"],
                       tmp_path, capsys)
    monkeypatch.undo()
    assert code == 3 and err.count("\n") == 1
    assert (tmp_path / "r" / "report.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


# -- symbolic links and pseudo-files (a repository can ship them) ------------------------------


@pytest.fixture
def linked_repo(tmp_path, monkeypatch):
    """A repository whose sessions folder holds a real session, a link to /proc/self/environ and
    a link to a file outside the repository; the environment holds a marker value."""
    monkeypatch.setenv("SD_TEST_ENV_MARKER", "envmarker0123456789")
    repo = tmp_path / "repo"
    (repo / "sessions").mkdir(parents=True)
    (repo / "sessions" / "a.jsonl").write_text(claude_jsonl(TWO_TURNS))
    outside = tmp_path / "outside.jsonl"
    outside.write_text("outsidemarker0123456789 is not a session\n")
    (repo / "sessions" / "b.jsonl").symlink_to("/proc/self/environ")
    (repo / "sessions" / "c.jsonl").symlink_to(outside)
    return repo


def test_folder_walks_do_not_follow_file_symlinks(linked_repo, capsys):
    for argv in (["check", "sessions"], ["check", "sessions/*.jsonl"],
                 ["batch", "sessions", "-o", "out"]):
        code, out, err = run(argv, linked_repo, capsys)
        assert code == 0, err
        shown = out + err
        if argv[0] == "batch":
            shown += "".join(p.read_text() for p in (linked_repo / "out").rglob("*") if p.is_file())
        assert "envmarker0123456789" not in shown and "outsidemarker" not in shown
        assert "b.jsonl: a symbolic link, not followed" in err
        assert "c.jsonl: a symbolic link, not followed" in err
        assert "Checked 1 session" in out or argv[0] == "batch"


def test_a_named_symlink_is_followed_and_said_so(linked_repo, capsys):
    code, out, err = run(["report", "sessions/c.jsonl", "-o", "r"], linked_repo, capsys)
    assert code == 0, err
    data = report_of(linked_repo / "r")
    assert any("symbolic link" in note and "followed" in note for note in data["notes"])
    code, out, err = run(["check", "sessions/c.jsonl"], linked_repo, capsys)
    assert "sessions/c.jsonl: a symbolic link, followed because it was named" in err


def test_proc_files_are_refused_even_when_named(linked_repo, capsys):
    code, out, err = run(["check", "sessions/b.jsonl"], linked_repo, capsys)
    assert code == 1
    assert "envmarker0123456789" not in out + err
    assert "b.jsonl is not a regular file (a file of the kernel's /proc" in out
    code, _, err = run(["report", "sessions/b.jsonl", "-o", "r"], linked_repo, capsys)
    assert code == 0, err
    data = report_of(linked_repo / "r")
    assert data["status"] == "parse_error" and "/proc" in data["message"]
    assert "envmarker0123456789" not in (linked_repo / "r" / "report.html").read_text()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_special_files_are_refused_with_a_one_line_reason(tmp_path, capsys):
    os.mkfifo(tmp_path / "pipe.jsonl")
    code, out, _ = finishes(lambda: run(["check", "pipe.jsonl"], tmp_path, capsys))
    assert code == 1
    line = next(x for x in out.splitlines() if "SD001" in x)
    assert "pipe.jsonl is not a regular file (a FIFO (named pipe)); refused" in line
    if os.path.exists("/dev/null"):
        assert "(a character device)" in decode_file("/dev/null").problem.message


# -- input that must end in a one-line error (exit 2), not in exit 4 --------------------------

_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n"
    for p, n in zip("abcdefgh", "bcdefghi"))


@pytest.mark.parametrize("text, message", [
    (_BOMB, "bomb.yaml:6: the rubric expands to more than 100,000 values"),
    ("thresholds:\n  efficiency: " + "9" * 5000 + "\n", "bomb.yaml:2: a number of 5000 digits"),
    ("thresholds:\n  efficiency: 5\n  efficiency: 6\n",
     "bomb.yaml:3: efficiency: given twice in the same mapping"),
    ("criteria:\n  retry_waste:\n    max: 2\n    max: 3\n",
     "bomb.yaml:4: max: given twice in the same mapping"),
])
def test_a_hostile_rubric_is_refused_with_its_line(tmp_path, capsys, text, message):
    (tmp_path / "bomb.yaml").write_text(text, encoding="utf-8")
    code, out, err = run(["rubric", "validate", "bomb.yaml"], tmp_path, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_a_rubric_with_a_plain_alias_still_loads(tmp_path):
    (tmp_path / "r.yaml").write_text(
        "thresholds: &t {efficiency: 6, code_quality: 6}\n", encoding="utf-8")
    assert rubric.load(str(tmp_path / "r.yaml")).thresholds["efficiency"] == 6


@pytest.mark.parametrize("line, message", [
    ("[" * 100_000 + "]" * 100_000, "base.jsonl:1: not a summary record (nested too deeply)"),
    ('{"status": "ok", "session": {"id": "x"}, "scores": {"efficiency": {"score": NaN}}}',
     "base.jsonl:1: not a JSON line (NaN is not a number a score can be)"),
    ('{"status": "ok", "scores": {"efficiency": {"score": -Infinity}}}',
     "base.jsonl:1: not a JSON line (-Infinity is not"),
])
def test_a_hostile_baseline_is_refused_with_its_line(tmp_path, capsys, line, message):
    (tmp_path / "base.jsonl").write_text(line + "\n", encoding="utf-8")
    shutil.copy(ROOT / "examples" / "clean-fix.jsonl", tmp_path / "s.jsonl")
    code, out, err = run(["check", "s.jsonl", "--baseline", "base.jsonl"], tmp_path, capsys)
    assert code == 2 and message in err and "Traceback" not in err, err


def test_sessions_started_before_the_year_1000_are_graded_and_dated(tmp_path, capsys,
                                                                    monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    steps = [{"user": "Fix the typo in README.md please"}, {"assistant": "Fixed the typo."}]
    for year in ("0001", "0999", "2026"):
        text = claude_jsonl(steps, session_id=f"s{year}").replace("2026-01-01T", f"{year}-01-01T")
        (tmp_path / f"s{year}.jsonl").write_text(text, encoding="utf-8")
    names = ["s0001.jsonl", "s0999.jsonl", "s2026.jsonl"]
    code, out, err = run(["batch", *names, "-o", "out"], tmp_path, capsys)
    assert code == 0 and "Traceback" not in err, err
    dates = sorted(json.loads(line)["session"]["started_at"][:10]
                   for line in (tmp_path / "out" / "summary.jsonl").read_text().splitlines())
    assert dates == ["0001-01-01", "0999-01-01", "2026-01-01"]
    index = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "0001-01-01" in index and "<svg" in index  # the chart spans the two millennia
    code, out, err = run(["check", *names, "--html", "gate"], tmp_path, capsys)
    assert code == 0 and (tmp_path / "gate" / "index.html").is_file(), err


@pytest.mark.parametrize("args, message", [
    (["rubric", "validate", "fifo"], "fifo: cannot read rubric: a FIFO (named pipe)"),
    (["report", "s.jsonl", "--rubric", "/dev/zero", "-o", "r"],
     "/dev/zero: cannot read rubric: a character device"),
    (["check", "s.jsonl", "--baseline", "fifo"], "--baseline fifo: cannot read: a FIFO"),
    (["calibrate", "readings", "--sessions", "."], "readings/a/x.json: cannot read: a FIFO"),
])
def test_a_named_file_that_is_a_fifo_or_a_device_is_refused_at_once(tmp_path, capsys, args,
                                                                    message):
    """A rubric, baseline or reading named by the user is read only when it is a regular
    file: a FIFO would block the run forever, /dev/zero would fill memory."""
    shutil.copy(ROOT / "examples" / "clean-fix.jsonl", tmp_path / "s.jsonl")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "readings" / "a").mkdir(parents=True)
    os.mkfifo(tmp_path / "readings" / "a" / "x.json")
    result: list = []
    worker = threading.Thread(target=lambda: result.append(run(args, tmp_path, capsys)),
                              daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert result, f"{args} hung"
    code, out, err = result[0]
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
