"""Shared test set-up: the real-session corpus beside the project, and an isolated home.

Every test runs with HOME, CLAUDE_CONFIG_DIR, CODEX_HOME and the other harness homes pointed at
a temporary folder, so no test ever reads the real session stores of the machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "PI_CODING_AGENT_DIR",
                "XDG_DATA_HOME", "XDG_CONFIG_HOME", "OPENCODE_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01T00:00:00Z
    monkeypatch.setenv("NO_COLOR", "1")
    return home


def corpus_files(folder: str) -> list[Path]:
    """Every file of one corpus format folder, sorted; empty when the corpus is absent."""
    base = CORPUS / folder
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*") if p.is_file())


needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(),
                                  reason="the shared corpus (../shared/corpus) is not present")


def run_cli(args: list[str], cwd: Path, capsys) -> tuple[int, str, str]:
    """The CLI's main(args) run from `cwd`: its exit code, stdout and stderr."""
    import os

    from skill_doctor.cli import main

    old = Path.cwd()
    os.chdir(cwd)
    try:
        code = main(args)
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    return code, out, err
