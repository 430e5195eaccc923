"""`skill-doctor batch --dask ADDRESS`: grading on a real Dask cluster (a LocalCluster of two
worker processes started here), byte for byte the output of `-j 1`."""

from __future__ import annotations

import filecmp
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT, needs_corpus
from sessionkit import claude_jsonl
from workflowkit import run

# Real corpus sessions of several harnesses, JSON and plain text, one file holding several
# sessions (an Aider history): given by relative paths from the batch's working directory,
# which is not the workers'.
SESSIONS = [
    "claude-code/M-Claude_1249ff48-75ab.jsonl",
    "codex/Xu-Wentao_dotfile_2026-04-08T22-02-46.jsonl",
    "aider/zen-mcp-server.aider.chat.history.md",
    "gemini-stream/figma-6d91b0b6_transcript.jsonl",
    "mini-swe-agent/local.traj.json",
    "plain-log/ticketFlow1_prompt-log.md",
]


def tree(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


@pytest.fixture(scope="module")
def scheduler():
    """A LocalCluster of two worker processes with one thread each; its workers' working
    directory is the repository, not the test's folder."""
    import distributed  # the test extra installs it
    before = os.getcwd()
    os.chdir(ROOT)
    try:
        cluster = distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                           host="127.0.0.1", dashboard_address=None)
    finally:
        os.chdir(before)
    with cluster, distributed.Client(cluster, set_as_default=False) as client:
        yield cluster.scheduler_address, client


@pytest.fixture
def work(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "corpus").symlink_to(CORPUS)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # both runs carry the same time
    # A session whose paths are under this home, folded as ~ by a local run; the workers have
    # another HOME, and must fold the submitting user's all the same.
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    steps = [{"user": "Fix the pager"},
             {"tool": "Read", "input": {"file_path": f"{home}/proj/pager.py"},
              "output": "def page(items, size):\n    return items[:size]\n"},
             {"assistant": f"Read {home}/proj/pager.py; it is fine."}]
    (tmp_path / "at-home.jsonl").write_text(claude_jsonl(steps, cwd=f"{home}/proj"),
                                            encoding="utf-8")
    return tmp_path


@needs_corpus
def test_dask_output_is_byte_identical_to_one_process(scheduler, work, capsys):
    address, client = scheduler
    assert sorted(client.nthreads().values()) == [1, 1]
    paths = [f"corpus/{s}" for s in SESSIONS] + ["at-home.jsonl"]
    assert run(["batch", *paths, "-o", "local", "-j", "1"], work, capsys)[0] == 0
    assert '"project":"~/proj"' in (work / "local" / "summary.jsonl").read_text(encoding="utf-8")
    started = time.time()
    client.get_task_stream(start=started)  # the scheduler records the tasks from now on
    code, out, err = run(["batch", *paths, "-o", "remote", "--dask", address], work, capsys)
    assert code == 0, err
    assert out.startswith("Batch report written to ./remote/index.html\n")
    # The workers graded every file: one task each, all finished.
    tasks = [t for t in client.get_task_stream(start=started)
             if str(t["key"]).startswith("skill-doctor-")]
    assert len(tasks) == len(paths)
    local, remote = work / "local", work / "remote"
    assert tree(local) == tree(remote)
    assert len([p for p in tree(local) if p.endswith("/report.html")]) > len(paths)
    for rel in tree(local):
        if (local / rel).is_file():
            assert filecmp.cmp(local / rel, remote / rel, shallow=False), rel
    assert not [p for p in work.iterdir() if p.name.startswith(".remote.")]  # no staging left


@needs_corpus
def test_dask_since_and_unreadable_files_match_one_process(scheduler, work, capsys):
    address, _ = scheduler
    (work / "empty.jsonl").write_text("", encoding="utf-8")
    (work / "list.md").write_text("a shopping list\nmilk\n", encoding="utf-8")
    paths = ["corpus/" + SESSIONS[0], "list.md", "empty.jsonl",
             str(CORPUS / SESSIONS[1])]  # an absolute path too
    args = [*paths, "--since", "2025-06-01"]
    assert run(["batch", *args, "-o", "local"], work, capsys)[0] == 0
    code, _, err = run(["batch", *args, "-o", "remote", "--dask", address], work, capsys)
    assert code == 0, err
    for name in ("summary.jsonl", "summary.csv", "aggregate.json", "index.html"):
        assert filecmp.cmp(work / "local" / name, work / "remote" / name, shallow=False), name


def test_workers_of_another_version_are_refused(scheduler, work, capsys, monkeypatch):
    from skill_doctor import cluster

    monkeypatch.setattr(cluster, "__version__", "0.0.0-other")
    (work / "a.jsonl").write_text("", encoding="utf-8")
    code, out, err = run(["batch", "a.jsonl", "-o", "out", "--dask", scheduler[0]], work,
                         capsys)
    assert code == 2 and out == ""
    assert "run skill-doctor" in err and "install the same version on every worker" in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in work.iterdir()) == ["a.jsonl", "at-home.jsonl", "corpus", "home"]


def test_an_unreachable_scheduler_is_a_one_line_usage_error(work, capsys, monkeypatch):
    from skill_doctor import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 2.0)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (work / "a.jsonl").write_text("", encoding="utf-8")
    code, out, err = run(["batch", "a.jsonl", "-o", "out", "--dask", f"tcp://127.0.0.1:{port}"],
                         work, capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"skill-doctor: error: cannot reach the Dask scheduler at "
                          f"tcp://127.0.0.1:{port}: ")
    assert len(err.strip().splitlines()) == 1
    assert not (work / "out").exists()


def test_dask_without_distributed_installed_says_how_to_install(work, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    (work / "a.jsonl").write_text("", encoding="utf-8")
    code, out, err = run(["batch", "a.jsonl", "-o", "out", "--dask", "tcp://127.0.0.1:8786"],
                         work, capsys)
    assert (code, out) == (2, "")
    assert err == ("skill-doctor: error: --dask needs the distributed package: "
                   "pip install 'skill-doctor[dask]'\n")
    assert not (work / "out").exists()


def test_dask_and_jobs_are_exclusive(work, capsys):
    with pytest.raises(SystemExit) as stopped:
        run(["batch", "x", "-j", "2", "--dask", "tcp://127.0.0.1:8786"], work, capsys)
    assert stopped.value.code == 2
    assert "argument --dask: not allowed with argument -j/--jobs" in capsys.readouterr().err


def test_a_local_batch_never_imports_distributed(tmp_path):
    script = ("import sys\nfrom skill_doctor.cli import main\n"
              "code = main(['batch', 'a.jsonl', '-o', 'out', '-j', '2'])\n"
              "assert code == 0, code\n"
              "assert not [m for m in sys.modules if m.split('.')[0] in ('distributed', 'dask')]\n")
    (tmp_path / "a.jsonl").write_bytes((ROOT / "examples" / "clean-fix.jsonl").read_bytes())
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("address, message", [
    ("nonsense:://x", "--dask 'nonsense:://x' is not a scheduler address (tcp://HOST:PORT): "
                      "unknown address scheme"),
    ("tcp://127.0.0.1", "--dask 'tcp://127.0.0.1' is not a scheduler address (tcp://HOST:PORT): "
                        "missing port number"),
])
def test_a_malformed_address_is_one_line_and_nothing_else(tmp_path, address, message):
    """Run as a user runs it: a half-made client would print a traceback when the
    interpreter exits."""
    (tmp_path / "a.jsonl").write_bytes((ROOT / "examples" / "clean-fix.jsonl").read_bytes())
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-m", "skill_doctor", "batch", "a.jsonl", "-o", "out",
                           "--dask", address], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("skill-doctor: error: " + message)
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl"]
