"""The pre-commit hook, end to end, with the real `pre-commit` package.

A throwaway git repository's `.pre-commit-config.yaml` points at a snapshot of this project (a
temporary git repository holding the working tree as it is now, committed; so uncommitted work
is tested too and the project's own git state is never touched). pre-commit builds the hook's
environment from it (`pip install .`), then a commit that stages a poor session is refused with
the finding lines, and one that stages a good session goes through.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from workflowkit import poor_session

HOOKS = ROOT / ".pre-commit-hooks.yaml"

IGNORED = shutil.ignore_patterns(".git", ".venv*", "__pycache__", "*.egg-info", "build", "dist",
                                 ".pytest_cache", ".hypothesis", "skill-doctor-report-*",
                                 "skill-doctor-batch-*")


def git_env(tmp: Path) -> dict[str, str]:
    # Nothing from an enclosing git operation (GIT_DIR, GIT_INDEX_FILE... when the tests run
    # inside a hook) and no PYTHONPATH: the hook must run the package pre-commit installed.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "PRE_COMMIT")) and k != "PYTHONPATH"}
    env.update({
        "GIT_AUTHOR_NAME": "skill-doctor tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
        "GIT_COMMITTER_NAME": "skill-doctor tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull, "PRE_COMMIT_HOME": str(tmp / "pre-commit-home"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1", "NO_COLOR": "1",
    })
    return env


def git(cwd: Path, env: dict[str, str], *args: str, check: bool = True):
    return subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main",
                           *args], cwd=cwd, env=env, capture_output=True, text=True, check=check)


def project_files() -> list[Path] | None:
    """The project's files as git sees them (tracked or new, not ignored); None outside git."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return [Path(name) for name in out.stdout.decode().split("\0") if name]


def snapshot(dest: Path, env: dict[str, str]) -> str:
    """Copy the working tree to `dest`, commit it there, and return the commit id."""
    files = project_files()
    if files is None:
        shutil.copytree(ROOT, dest, ignore=IGNORED)
    else:
        for rel in files:
            source = ROOT / rel
            if source.is_file():  # a tracked file deleted in the working tree is left out
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest / rel)
    git(dest, env, "init", "-q")
    git(dest, env, "add", "-A")
    git(dest, env, "commit", "-q", "--no-verify", "-m", "snapshot")
    return git(dest, env, "rev-parse", "HEAD").stdout.strip()


def commit(repo: Path, env: dict[str, str], message: str):
    result = git(repo, env, "commit", "-m", message, check=False)
    return result.returncode, result.stdout + result.stderr


def test_hooks_file_declares_the_skill_doctor_hook():
    [hook] = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    assert (hook["id"], hook["language"], hook["entry"]) == (
        "skill-doctor", "python", "skill-doctor check")
    files = re.compile(hook["files"])
    for path in (".specstory/history/2026-01-01_10-00-fix-pager.md",
                 "docs/.specstory/history/x.md", ".aider.chat.history.md",
                 "app/.aider.chat.history.md", "sessions/2026-01-01.jsonl",
                 "ai/sessions/claude/abc.jsonl", "transcripts/run-1.jsonl"):
        assert files.search(path), path
    for path in ("README.md", "data/events.jsonl", "mysessions/a.jsonl", ".aider.input.history",
                 "sessions/notes.txt"):
        assert not files.search(path), path


def test_readme_config_snippet_uses_the_hook():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippets = [yaml.safe_load(block) for block in
                re.findall(r"```yaml\n(repos:.*?)```", readme, re.S)]
    assert snippets, "README has no .pre-commit-config.yaml example"
    hook_ids = {h["id"] for h in yaml.safe_load(HOOKS.read_text(encoding="utf-8"))}
    for config in snippets:
        [repo] = config["repos"]
        assert {h["id"] for h in repo["hooks"]} <= hook_ids | {"skill-doctor-local"}


@pytest.mark.slow
def test_hook_refuses_a_poor_session_and_lets_a_good_one_through(tmp_path):
    pytest.importorskip("pre_commit", reason="the pre-commit package is not installed "
                                             "(pip install '.[test]' installs it)")
    if shutil.which("git") is None:  # pragma: no cover - git is everywhere pre-commit is
        pytest.skip("git is not installed")
    env = git_env(tmp_path)
    source = tmp_path / "skill-doctor-src"
    rev = snapshot(source, env)

    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, env, "init", "-q")
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {source.as_posix()}\n"
        f"    rev: {rev}\n"
        "    hooks:\n"
        "      - id: skill-doctor\n", encoding="utf-8")
    git(repo, env, "add", ".pre-commit-config.yaml")
    git(repo, env, "commit", "-q", "--no-verify", "-m", "configure pre-commit")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env,
                   check=True, capture_output=True)

    # A poor session where sessions are saved: the commit is refused, with the finding lines.
    (repo / "sessions").mkdir()
    (repo / "sessions" / "poor.jsonl").write_text(poor_session(), encoding="utf-8")
    git(repo, env, "add", "sessions/poor.jsonl")
    code, output = commit(repo, env, "add a poor session")
    assert code != 0, output
    assert re.search(r"^sessions/poor\.jsonl:\d+:\d+: SD103 \[error\] turn \d+: .+ "
                     r"\(repeated-failing-call\)$", output, re.M), output
    assert ("sessions/poor.jsonl: efficiency 0/10, code quality N/A, 4 findings: "
            "FAIL (efficiency 0 < 5)") in output
    assert git(repo, env, "rev-list", "--count", "HEAD").stdout.strip() == "1"

    # A good session goes through.
    git(repo, env, "rm", "-q", "--cached", "sessions/poor.jsonl")
    shutil.copy(ROOT / "examples" / "clean-fix.jsonl", repo / "sessions" / "good.jsonl")
    git(repo, env, "add", "sessions/good.jsonl")
    code, output = commit(repo, env, "add a good session")
    assert code == 0, output
    assert re.search(r"^skill-doctor\.+Passed$", output, re.M), output

    # The files pattern: a .jsonl outside a sessions folder is not a session to the hook.
    (repo / "data").mkdir()
    (repo / "data" / "poor.jsonl").write_text(poor_session(), encoding="utf-8")
    git(repo, env, "add", "data/poor.jsonl")
    code, output = commit(repo, env, "add data")
    assert code == 0, output
    assert re.search(r"^skill-doctor\.+\(no files to check\)Skipped$", output, re.M), output
    assert git(repo, env, "rev-list", "--count", "HEAD").stdout.strip() == "3"
