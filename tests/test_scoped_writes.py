"""Read-only inputs and scoped output: each command, run in a temporary tree, changes nothing
but its own output directory.

The tree holds the working folder, a transcript (and a folder of them), an isolated home with a
Claude Code store, and a rubric. Before and after each command every path's bytes, mode and
modification time are compared; the only difference allowed is the new DIR. Adding a command
(check, batch, sessions ...) is one line in COMMANDS.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import ROOT
from sessionkit import claude_jsonl
from skill_doctor.cli import main

EXAMPLES = ROOT / "examples"

# (id, argv with {session}/{folder}/{rubric} placeholders, the directory it may create or None)
COMMANDS = [
    ("report-file", ["report", "{session}", "-o", "out"], "out"),
    ("report-folder", ["report", "{folder}", "-o", "out"], "out"),
    ("report-default", ["report", "-o", "out"], "out"),
    ("report-no-redact", ["report", "{session}", "-o", "out", "--no-redact"], "out"),
    ("report-parse-error", ["report", "{notes}", "-o", "out"], "out"),
    ("report-missing", ["report", "{missing}", "-o", "out"], "out"),
    ("report-refused", ["report", "{session}", "-o", "../outside"], None),
    ("rubric-explain", ["rubric", "explain"], None),
    ("rubric-validate", ["rubric", "validate", "{rubric}"], None),
    ("sessions", ["sessions"], None),
    ("check-file", ["check", "{session}"], None),
    ("check-folder-json", ["check", "{folder}", "--format", "json"], None),
    ("check-github", ["check", "{session}", "--format", "github", "--exit-zero"], None),
    ("check-html", ["check", "{session}", "--html", "out"], "out"),
    ("batch", ["batch", "{folder}", "{session}", "-o", "out"], "out"),
    ("batch-parallel", ["batch", "{folder}", "-o", "out", "-j", "2"], "out"),
    ("compare", ["compare", "{session}", "{folder}", "-o", "out"], "out"),
    ("skill-install", ["skill", "install"], ".claude"),
    ("calibrate-readings", ["calibrate", "{readings}", "--sessions", "{data}", "-j", "2"], None),
    ("calibrate-labels", ["calibrate", "{labels}", "--format", "json"], None),
]
# What a command that writes must write, besides anything else inside its directory.
REPORT_FILES = {"report.html", "report.json"}
BATCH_FILES = {"index.html", "summary.jsonl", "sessions"}
COMPARE_FILES = {"compare.html", "compare.json", ".skill-doctor-files"}  # the manifest --force reads


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under root: kind, mode, mtime (ns) and bytes for files."""
    state: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISREG(info.st_mode):
                state[rel] = ("file", info.st_mode, info.st_mtime_ns, path.read_bytes())
            elif stat.S_ISLNK(info.st_mode):
                state[rel] = ("link", os.readlink(path))
            else:
                state[rel] = ("dir", info.st_mode)
    return state


@pytest.fixture
def tree(tmp_path, isolated_home, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    data = tmp_path / "data"
    (data / "many").mkdir(parents=True)
    session = data / "session.jsonl"
    session.write_bytes((EXAMPLES / "retry-fix.jsonl").read_bytes())
    session.chmod(0o444)  # read-only, as a stored transcript may be
    for i in range(3):
        (data / "many" / f"s{i}.jsonl").write_text(claude_jsonl(
            [{"user": f"question {i}"}, {"assistant": f"answer {i}"}]))
    (data / "notes.txt").write_text("no turns in here\n")
    (data / "rubric.yaml").write_text("criteria:\n  retry_waste:\n    enabled: true\n")
    (data / "readings" / "a").mkdir(parents=True)
    (data / "readings" / "a" / "session.json").write_text(
        '{"session": "session.jsonl", "status": ["ok"]}')
    (data / "labels.tsv").write_text("file\tresolved\nsession.jsonl\ttrue\n")
    store = isolated_home / ".claude" / "projects" / "-work-proj"
    store.mkdir(parents=True)
    (store / "abc.jsonl").write_bytes((EXAMPLES / "clean-fix.jsonl").read_bytes())
    values = {"session": str(session), "folder": str(data / "many"),
              "notes": str(data / "notes.txt"), "missing": str(data / "missing.jsonl"),
              "rubric": str(data / "rubric.yaml"), "readings": str(data / "readings"),
              "data": str(data), "labels": str(data / "labels.tsv")}
    return (tmp_path, isolated_home), work, values


@pytest.mark.parametrize("argv,creates", [(a, c) for _, a, c in COMMANDS],
                         ids=[name for name, _, _ in COMMANDS])
def test_command_changes_nothing_but_its_output(tree, capsys, argv, creates):
    roots, work, values = tree
    before = {f"{i}/{k}": v for i, root in enumerate(roots) for k, v in snapshot(root).items()}
    old = Path.cwd()
    os.chdir(work)
    try:
        code = main([part.format(**values) for part in argv])
    finally:
        os.chdir(old)
    capsys.readouterr()
    after = {f"{i}/{k}": v for i, root in enumerate(roots) for k, v in snapshot(root).items()}
    new_paths = {p for p in after if p not in before}
    if creates is None:
        assert new_paths == set()
    else:
        prefix = f"0/work/{creates}"
        assert all(p == prefix or p.startswith(prefix + "/") for p in new_paths), new_paths
        top = {p[len(prefix) + 1:] for p in new_paths if p.count("/") == prefix.count("/") + 1}
        if argv[0] == "report":
            assert code == 0
            assert new_paths == {prefix, f"{prefix}/report.html", f"{prefix}/report.json",
                                 f"{prefix}/.skill-doctor-files"}  # the manifest --force reads
        elif argv[0] == "compare":
            assert code == 0 and top == COMPARE_FILES, top
        elif argv[0] == "skill":
            assert code == 0 and new_paths == {
                prefix, f"{prefix}/skills", f"{prefix}/skills/skill-doctor",
                f"{prefix}/skills/skill-doctor/SKILL.md"}, new_paths
        else:
            assert BATCH_FILES <= top, top
    assert {p: after[p] for p in before} == before  # bytes, modes and mtimes unchanged


def test_every_cli_command_is_listed():
    """A command added to the CLI must be added to COMMANDS too."""
    from skill_doctor.cli import _parser

    parser = _parser()
    [sub] = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    covered = {argv[0] for _, argv, _ in COMMANDS}
    assert set(sub.choices) <= covered, set(sub.choices) - covered


def test_transcript_mtime_and_atime_untouched_by_decoding(tmp_path):
    """No write, no metadata change (atime aside, which only the filesystem's policy moves)."""
    from skill_doctor.decode import decode_file

    session = tmp_path / "s.jsonl"
    session.write_bytes((EXAMPLES / "retry-fix.jsonl").read_bytes())
    os.utime(session, ns=(1_000_000_000, 2_000_000_000))
    before = (session.read_bytes(), session.stat().st_mtime_ns, session.stat().st_mode)
    decode_file(session)
    assert (session.read_bytes(), session.stat().st_mtime_ns, session.stat().st_mode) == before


# -- --force replaces only what skill-doctor wrote ----------------------------------------------


def _force(argv: list[str], cwd: Path, capsys) -> tuple[int, str]:
    from conftest import run_cli

    code, _, err = run_cli(argv + ["--force"], cwd, capsys)
    return code, err


@pytest.mark.parametrize("command", ["report", "batch"])
def test_force_replaces_only_a_directory_whose_every_file_skill_doctor_wrote(tmp_path, capsys,
                                                                            command):
    from conftest import run_cli

    session = str(EXAMPLES / "clean-fix.jsonl")
    argv = [command, session, "-o", "out"]
    assert run_cli(argv, tmp_path, capsys)[0] == 0
    manifest = (tmp_path / "out" / ".skill-doctor-files").read_text()
    assert "report.html" in manifest and "report.json" in manifest
    assert _force(argv, tmp_path, capsys)[0] == 0  # an untouched earlier output: replaced

    # A file added, a file changed, a folder added, a link added, the manifest missing or
    # lying: each is refused with exit 2 and leaves everything as it was.
    def added_file(d: Path) -> None:
        (d / "notes.txt").write_text("precious")

    def changed_file(d: Path) -> None:
        (d / "report.json").write_text("{}\n")

    def added_folder(d: Path) -> None:
        (d / "mine").mkdir()

    def added_link(d: Path) -> None:
        (d / "link").symlink_to(tmp_path)

    def no_manifest(d: Path) -> None:
        (d / ".skill-doctor-files").unlink()

    def manifest_claims_more(d: Path) -> None:
        (d / "notes.txt").write_text("precious")
        with open(d / ".skill-doctor-files", "a") as fh:
            fh.write("0" * 64 + "  notes.txt\n")

    for tamper in (added_file, changed_file, added_folder, added_link, no_manifest,
                   manifest_claims_more):
        if (tmp_path / "out").exists():
            import shutil
            shutil.rmtree(tmp_path / "out")
        assert run_cli(argv, tmp_path, capsys)[0] == 0
        tamper(tmp_path / "out")
        before = snapshot(tmp_path / "out")
        code, err = _force(argv, tmp_path, capsys)
        assert code == 2, tamper.__name__
        assert "not a skill-doctor report" in err and len(err.strip().splitlines()) == 1
        assert snapshot(tmp_path / "out") == before, tamper.__name__


def test_a_directory_that_merely_holds_a_report_json_is_not_replaced(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text("{}")
    (tmp_path / "out" / "summary.jsonl").write_text("")
    for command in ("report", "batch"):
        code, err = _force([command, str(EXAMPLES / "clean-fix.jsonl"), "-o", "out"], tmp_path,
                           capsys)
        assert code == 2 and "not a skill-doctor report" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.json", "summary.jsonl"]


@pytest.mark.parametrize("output", [
    "x" * 300,                      # a folder name longer than a file system allows
    "/".join(["d"] * 2000),         # a path deeper and longer than PATH_MAX
    "a/" + "b" * 256 + "/c",
    "bad\0name",
])
def test_a_bad_output_directory_is_a_one_line_usage_error(tmp_path, capsys, output):
    from conftest import run_cli

    for command in ("report", "batch"):
        code, out, err = run_cli([command, str(EXAMPLES / "clean-fix.jsonl"), "-o", output],
                                 tmp_path, capsys)
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1 and "output directory" in err
        assert list(tmp_path.iterdir()) == []
    code, _, err = run_cli(["check", str(EXAMPLES / "clean-fix.jsonl"), "--html", output],
                           tmp_path, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
