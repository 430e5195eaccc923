"""`skill-doctor batch`: per-session reports, the index page, summary.jsonl and the aggregates."""

from __future__ import annotations

import filecmp
import io
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT, needs_corpus
from sessionkit import claude_jsonl
from skill_doctor import batch as batch_mod
from skill_doctor.check import transcripts_under
from workflowkit import CHAT_STEPS, poor_session, run

EXAMPLES = ROOT / "examples"
CLEAN_ID = "c1ea0f1c-0000-4000-8000-000000000001"
POOR_ID = "99999999-0000-4000-8000-000000000001"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    s = tmp_path / "sessions"
    s.mkdir()
    shutil.copy(EXAMPLES / "clean-fix.jsonl", s / "a-clean.jsonl")
    shutil.copy(EXAMPLES / "retry-fix.jsonl", s / "b-retry.jsonl")
    (s / "c-poor.jsonl").write_text(poor_session(POOR_ID), encoding="utf-8")
    (s / "d-short.jsonl").write_text(claude_jsonl([{"user": "hi"}]), encoding="utf-8")
    (s / "e-garbage.md").write_text("a shopping list\nmilk\n", encoding="utf-8")
    return tmp_path


def links(index: str) -> list[str]:
    """The links to session reports (the header's links to the other sort orders left out)."""
    return re.findall(r'<a href="(sessions/[^"]+)"', index)


def tree(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


def test_batch_writes_index_reports_summary_and_aggregates(work, capsys):
    code, out, err = run(["batch", "sessions", "-o", "out"], work, capsys)
    assert code == 0, err
    assert out.splitlines()[:2] == [
        "Batch report written to ./out/index.html",
        "5 sessions (3 ok, 1 parse error, 1 too short)"]
    out_dir = work / "out"
    names = sorted(p.name for p in (out_dir / "sessions").iterdir())
    assert len(names) == 5 and CLEAN_ID in names and POOR_ID in names
    index = (out_dir / "index.html").read_text(encoding="utf-8")
    assert sorted(links(index)) == sorted(f"sessions/{n}/report.html" for n in names)
    for name in names:
        assert (out_dir / "sessions" / name / "report.html").is_file()
        assert (out_dir / "sessions" / name / "report.json").is_file()
    # self-contained like report.html: no script, no external URL, a CSP that forbids loads
    assert "<script" not in index and "http" not in index.replace('http-equiv', '')
    assert "Content-Security-Policy" in index and "default-src 'none'" in index
    # the poor session's row: harness, date, turns, scores, worst criterion
    row = index[index.index(POOR_ID):].split("</tr>")[0]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
    assert cells == ["claude-code", "2026-01-01", "15", "0", "N/A", "fail (efficiency 0 &lt; 5)",
                     "Task completion (SD101) 0/3"]
    lines = (out_dir / "summary.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["session"]["source"] for r in records] == [
        "sessions/a-clean.jsonl", "sessions/b-retry.jsonl", "sessions/c-poor.jsonl",
        "sessions/d-short.jsonl", "sessions/e-garbage.md"]
    for record in records:
        assert record["schema"] == "skill-doctor/report/v1"
        stored = json.loads((out_dir / record["report"]).with_name("report.json").read_text())
        assert {k: v for k, v in record.items() if k != "report"} == stored
    figures = json.loads((out_dir / "aggregate.json").read_text(encoding="utf-8"))
    assert figures["sessions"] == 5
    assert figures["statuses"] == {"ok": 3, "parse_error": 1, "too_short": 1}
    eff = figures["scales"]["efficiency"]
    assert (eff["n"], eff["mean"], eff["median"], eff["min"], eff["max"]) == (3, 6.33, 9, 0, 10)
    assert eff["distribution"]["0"] == 1 and eff["distribution"]["9"] == 1
    assert eff["distribution"]["10"] == 1 and sum(eff["distribution"].values()) == 3
    assert figures["scales"]["code_quality"]["n"] == 2  # the poor session changed no code
    top = figures["findings"]["most_frequent"]
    assert top[0] == {"id": "SD103", "rule": "repeated-failing-call", "category": "Retry waste",
                      "sessions": 2, "share": 0.67}
    assert "n = 3 of 5" in index and "n = 2 of 5" in index  # the sample size is stated
    assert "Efficiency: mean 6.33, median 9 (n = 3)" in out


def test_output_is_identical_whatever_the_number_of_processes(work, capsys):
    assert run(["batch", "sessions", "-o", "one", "-j", "1"], work, capsys)[0] == 0
    assert run(["batch", "sessions", "-o", "three", "-j", "3"], work, capsys)[0] == 0
    assert tree(work / "one") == tree(work / "three")
    for rel in tree(work / "one"):
        a, b = work / "one" / rel, work / "three" / rel
        if a.is_file():
            assert filecmp.cmp(a, b, shallow=False), rel


def test_colliding_session_ids_get_deterministic_suffixes(work, capsys):
    for name in ("x1.jsonl", "x2.jsonl"):
        shutil.copy(EXAMPLES / "clean-fix.jsonl", work / name)
    code, _, _ = run(["batch", "x2.jsonl", "x1.jsonl", "sessions/a-clean.jsonl", "-o", "out"],
                     work, capsys)
    assert code == 0
    records = [json.loads(line) for line in
               (work / "out" / "summary.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["session"]["source"], r["report"]) for r in records] == [
        ("x2.jsonl", f"sessions/{CLEAN_ID}/report.html"),
        ("x1.jsonl", f"sessions/{CLEAN_ID}-2/report.html"),
        ("sessions/a-clean.jsonl", f"sessions/{CLEAN_ID}-3/report.html")]


def test_folder_names_are_safe_and_unique_case_insensitively():
    taken: set[str] = set()
    assert batch_mod.folder_name("../../etc/passwd", taken) == "etc-passwd"
    assert batch_mod.folder_name("..", taken) == "session"
    assert batch_mod.folder_name("Abc", taken) == "Abc"
    assert batch_mod.folder_name("abc", taken) == "abc-2"
    assert batch_mod.folder_name("<script>x</script>", taken) == "script-x-script"
    assert len(batch_mod.folder_name("a" * 500, taken)) == batch_mod.MAX_NAME


def test_an_unreadable_session_is_listed_and_does_not_stop_the_batch(work, capsys):
    os.mkfifo(work / "pipe.jsonl")  # a FIFO would block a reader: refused, not opened
    os.symlink(work / "gone.jsonl", work / "dangling.jsonl")
    code, out, _ = run(["batch", "pipe.jsonl", "dangling.jsonl", "sessions/a-clean.jsonl",
                        "-o", "out"], work, capsys)
    assert code == 0
    index = (work / "out" / "index.html").read_text(encoding="utf-8")
    assert len(links(index)) == 3
    records = [json.loads(line) for line in
               (work / "out" / "summary.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["status"] for r in records] == ["parse_error", "parse_error", "ok"]
    assert "not a regular file" in records[0]["message"]
    assert "cannot read" in records[1]["message"]
    assert index.count("could not be parsed") == 2


def test_a_session_that_breaks_the_grader_is_reported_and_the_batch_goes_on(work, capsys,
                                                                           monkeypatch):
    import skill_doctor.report as report_mod

    real = report_mod.grade

    def fragile(transcript, *args, **kwargs):
        if transcript.source.endswith("b-retry.jsonl"):
            raise RuntimeError("detector exploded")
        return real(transcript, *args, **kwargs)

    monkeypatch.setattr(report_mod, "grade", fragile)
    code, out, _ = run(["batch", "sessions", "-o", "out", "-j", "1"], work, capsys)
    assert code == 0
    index = (work / "out" / "index.html").read_text(encoding="utf-8")
    assert "not graded: grading failed: RuntimeError: detector exploded" in index
    assert len(links(index)) == 4
    records = [json.loads(line) for line in
               (work / "out" / "summary.jsonl").read_text(encoding="utf-8").splitlines()]
    broken = records[1]
    assert broken["status"] == "error" and broken["report"] is None
    assert broken["session"]["source"] == "sessions/b-retry.jsonl"
    assert "1 error" in out


def test_since_keeps_only_sessions_started_on_or_after_the_date(work, capsys):
    code, out, _ = run(["batch", "sessions/a-clean.jsonl", "sessions/c-poor.jsonl", "-o", "late",
                        "--since", "2026-01-02"], work, capsys)
    assert code == 0
    assert "0 sessions; 2 older than 2026-01-02 left out" in out
    code, out, _ = run(["batch", "sessions/a-clean.jsonl", "sessions/c-poor.jsonl", "-o", "early",
                        "--since", "2026-01-01"], work, capsys)
    assert code == 0 and out.splitlines()[1] == "2 sessions (2 ok)"


def test_since_falls_back_to_the_modification_time(work, capsys):
    undated = work / "undated.jsonl"
    undated.write_text("".join(
        json.dumps({k: v for k, v in json.loads(line).items() if k != "timestamp"}) + "\n"
        for line in claude_jsonl(CHAT_STEPS).splitlines()), encoding="utf-8")
    os.utime(undated, (1_700_000_000, 1_700_000_000))  # November 2023
    code, out, _ = run(["batch", "undated.jsonl", "-o", "a", "--since", "2024-01-01"], work, capsys)
    assert "1 older than 2024-01-01 left out" in out
    code, out, _ = run(["batch", "undated.jsonl", "-o", "b", "--since", "2023-01-01"], work, capsys)
    assert out.splitlines()[1] == "1 session (1 ok)"


@pytest.mark.parametrize("args, message", [
    (["batch", "sessions", "-o", "../out"], "outside the current working directory"),
    (["batch", "sessions", "-o", "out", "--since", "last tuesday"], "--since must be a date"),
    (["batch", "sessions", "-o", "out", "-j", "-1"], "-j must be 0"),
    (["batch", "missing", "-o", "out"], "missing: no such file or directory"),
])
def test_usage_errors_exit_2_and_write_nothing(work, capsys, args, message):
    before = tree(work)
    code, out, err = run(args, work, capsys)
    assert code == 2 and message in err and out == ""
    assert tree(work) == before and not (work.parent / "out").exists()


def test_existing_output_is_replaced_only_with_force_and_only_if_a_batch(work, capsys):
    assert run(["batch", "sessions/a-clean.jsonl", "-o", "out"], work, capsys)[0] == 0
    code, _, err = run(["batch", "sessions", "-o", "out"], work, capsys)
    assert code == 2 and "already exists" in err
    assert run(["batch", "sessions", "-o", "out", "--force"], work, capsys)[0] == 0
    assert len((work / "out" / "summary.jsonl").read_text().splitlines()) == 5
    (work / "mine").mkdir()
    (work / "mine" / "notes.txt").write_text("keep me")
    code, _, err = run(["batch", "sessions", "-o", "mine", "--force"], work, capsys)
    assert code == 2 and "not a skill-doctor report" in err
    assert (work / "mine" / "notes.txt").read_text() == "keep me"
    assert not [p for p in work.iterdir() if p.name.startswith(".out.")]  # no temp dirs left


def test_a_write_failure_leaves_nothing_behind(work, capsys, monkeypatch):
    import skill_doctor.write as write_mod

    calls = {"n": 0}
    real = write_mod.write_file

    def failing(path, text):
        calls["n"] += 1
        if path.name == "index.html":
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(write_mod, "write_file", failing)
    code, _, err = run(["batch", "sessions", "-o", "out"], work, capsys)
    assert code == 3 and "No space left on device" in err
    assert calls["n"] > 10  # the session reports had been written before the failure
    assert sorted(p.name for p in work.iterdir()) == ["sessions"]


def test_default_is_every_session_in_the_harness_stores(work, capsys, isolated_home):
    project = isolated_home / ".claude" / "projects" / "-work-proj"
    (project / "subagents").mkdir(parents=True)
    shutil.copy(EXAMPLES / "clean-fix.jsonl", project / "one.jsonl")
    (project / "two.jsonl").write_text(poor_session(POOR_ID), encoding="utf-8")
    shutil.copy(EXAMPLES / "retry-fix.jsonl", project / "subagents" / "agent-x.jsonl")
    day = isolated_home / ".codex" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    codex_id = "019a0000-0000-7000-8000-000000000001"
    records = [
        {"type": "session_meta", "payload": {"id": codex_id, "cwd": "/home/dev/proj",
                                             "timestamp": "2026-01-01T09:00:00.000Z"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "What does src/pager.py do?"}]}},
        {"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "It splits items into pages of a fixed size."}]}},
    ]
    (day / f"rollout-2026-01-01T09-00-00-{codex_id}.jsonl").write_text(
        "".join(json.dumps(dict(r, timestamp="2026-01-01T09:00:00.000Z")) + "\n"
                for r in records), encoding="utf-8")
    code, out, _ = run(["batch", "-o", "out"], work, capsys)
    assert code == 0
    records = [json.loads(line) for line in
               (work / "out" / "summary.jsonl").read_text(encoding="utf-8").splitlines()]
    # every store (here Claude Code's and Codex's), subagent files left out, in path order
    assert [(r["session"]["harness"], r["session"]["id"]) for r in records] == [
        ("claude-code", CLEAN_ID), ("claude-code", POOR_ID), ("codex", codex_id)]
    # paths under the home folder are shown as ~, as in report.json
    assert records[0]["session"]["source"] == "~/.claude/projects/-work-proj/one.jsonl"


def test_progress_bar_only_on_a_terminal():
    from skill_doctor.cli import _progress_bar

    assert _progress_bar(io.StringIO()) is None

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    draw = _progress_bar(stream)
    draw(0, 4)
    draw(4, 4)
    assert stream.getvalue() == ("\r[" + "." * 30 + "] 0/4 sessions"
                                 "\r[" + "#" * 30 + "] 4/4 sessions\n")


def test_hostile_session_text_is_escaped_in_the_index(work, capsys):
    evil = '<script>alert(1)</script>"'
    (work / "evil.jsonl").write_text(claude_jsonl(CHAT_STEPS, session_id=evil), encoding="utf-8")
    assert run(["batch", "evil.jsonl", "-o", "out"], work, capsys)[0] == 0
    index = (work / "out" / "index.html").read_text(encoding="utf-8")
    assert "<script" not in index
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in index
    assert links(index) == ["sessions/script-alert-1-script/report.html"]


@needs_corpus
def test_whole_corpus_batch_links_every_session(tmp_path, capsys):
    from skill_doctor.decode import decode_file
    from skill_doctor.decode.sessions import split

    files = transcripts_under(CORPUS)
    assert len(files) > 50
    # A file holding several sessions (an Aider history) gives a row per session.
    expected = [p for p in files for _ in split(decode_file(p))]
    assert len(expected) > len(files)
    code, out, err = run(["batch", str(CORPUS), "-o", "corpus", "-j", "2"], tmp_path, capsys)
    assert code == 0, err
    out_dir = tmp_path / "corpus"
    index = (out_dir / "index.html").read_text(encoding="utf-8")
    records = [json.loads(line) for line in
               (out_dir / "summary.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) == len(expected)
    assert [r["session"]["source"] for r in records] == [str(p) for p in expected]
    hrefs = links(index)
    assert len(hrefs) == len(set(hrefs)) == len(expected)
    assert sorted(hrefs) == sorted(r["report"] for r in records)
    for href in hrefs:
        assert (out_dir / href).is_file(), href
    figures = json.loads((out_dir / "aggregate.json").read_text(encoding="utf-8"))
    assert figures["sessions"] == len(expected)
    assert figures["scales"]["efficiency"]["n"] == figures["statuses"].get("ok", 0)


def test_sessions_in_flight_are_bounded_by_the_workers_not_the_batch(tmp_path):
    """The scheduler both paths share: results come out in input order however the workers
    finish, and at no time are more than AHEAD_PER_WORKER per worker (plus the few largest
    files, started first) given out ahead of the next result to hand on."""
    import threading

    paths = []
    for i in range(300):
        path = tmp_path / f"s{i:03d}.jsonl"
        path.write_bytes(b"x" * {7: 5000, 250: 6000}.get(i, 10 + i % 13))  # two large files
        paths.append(str(path))
    workers = 3
    started: list[int] = []
    handed_on = [0]
    most_ahead = [0]
    lock = threading.Lock()

    def start(index, done):
        with lock:
            started.append(index)
            most_ahead[0] = max(most_ahead[0], len(started) - handed_on[0])
        # Every tenth session is slow, so later ones finish first and wait for their turn.
        threading.Timer(0.02 if index % 10 == 0 else 0.0, done).start()
        return lambda: (f"result {index}",)

    progress = []
    out = []
    for result in batch_mod._in_input_order(paths, workers, start,
                                            lambda d, t: progress.append((d, t)), True):
        out.append(result)
        with lock:
            handed_on[0] += 1
    assert out == [(f"result {i}",) for i in range(300)]
    assert sorted(started) == list(range(300))  # each started once
    assert started[:2] == [250, 7]  # the largest first
    assert progress[-1] == (300, 300) and len(progress) == 300
    # + 1: the result being handed on when the next session is started
    assert most_ahead[0] <= batch_mod.AHEAD_PER_WORKER * workers + workers + 1
    assert most_ahead[0] >= batch_mod.AHEAD_PER_WORKER * workers  # the window was used


def test_a_task_that_fails_outside_the_grader_becomes_an_error_row(tmp_path):
    paths = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]

    def start(index, done):
        done()
        if index == 1:
            def lost():
                raise RuntimeError("worker lost")
            return lost
        return lambda: ("fine",)

    out = list(batch_mod._in_input_order(paths, 2, start, None, True))
    assert out[0] == ("fine",)
    (row,) = out[1]
    assert (row.status, row.message) == ("error", "grading failed: RuntimeError: worker lost")
    assert row.path.endswith("b.jsonl")


def test_index_rendered_in_pieces_is_the_page_rendered_whole(work, capsys):
    """The sessions table is rendered a few rows at a time into the page: the same bytes as
    the whole page built at once, in every view, hostile text and secrets included."""
    from skill_doctor import rubric as rubric_mod

    evil = 'evil <b>"bold"</b> \u202e sk-ant-api03-' + "A" * 40
    (work / "sessions" / "f-evil.jsonl").write_text(claude_jsonl(CHAT_STEPS, session_id=evil),
                                                   encoding="utf-8")
    rubric = rubric_mod.load(None)
    result = batch_mod.run([str(p) for p in sorted((work / "sessions").iterdir())] * 3,
                           work / "out", rubric, "2026-01-01T00:00:00Z")
    assert len(result.rows) == 18
    rendered = batch_mod.RenderedRows(result.rows, True, rows_per_piece=4)
    for view in batch_mod.VIEWS:
        pieces = list(batch_mod.index_pieces(result.rows, result.aggregate,
                                             "2026-01-01T00:00:00Z", view=view.key,
                                             thresholds=rubric.thresholds, rows_per_piece=4))
        assert len(pieces) == 7  # before the rows, 5 pieces of at most 4 rows, after them
        whole = batch_mod.index_pieces(result.rows, result.aggregate, "2026-01-01T00:00:00Z",
                                       view=view.key, thresholds=rubric.thresholds,
                                       rows_per_piece=None)
        assert "".join(pieces) == "".join(whole)
        assert "".join(pieces) == (work / "out" / view.file).read_text(encoding="utf-8")
        # Rows rendered once, 4 at a time in input order, and taken in each view's order.
        once = batch_mod.index_pieces(result.rows, result.aggregate, "2026-01-01T00:00:00Z",
                                      view=view.key, thresholds=rubric.thresholds,
                                      rendered=rendered)
        assert "".join(once) == "".join(pieces)
    index = (work / "out" / "index.html").read_text(encoding="utf-8")
    assert "sk-ant-api03-AAAA" not in index and "<b>" not in index and "\u202e" not in index
    table = index[index.index('<table class="sessions cards">'):]
    assert table[:table.index("</table>")].count("<tr>") == 18 + 1  # the rows and the header
