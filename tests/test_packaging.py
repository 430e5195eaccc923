"""The package as users get it: `skill install` into a temporary home and project, the agent
skill and the data files inside the wheel, a LICENSE, and an sdist whose tests pass from a
fresh virtual environment."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, run_cli as run

SKILL = (ROOT / "skill" / "skill-doctor" / "SKILL.md").read_bytes()


@pytest.mark.parametrize("argv, where", [
    (["skill", "install"], "project/.claude/skills/skill-doctor/SKILL.md"),
    (["skill", "install", "--project", "--agent", "claude"],
     "project/.claude/skills/skill-doctor/SKILL.md"),
    (["skill", "install", "--user"], "home/.claude/skills/skill-doctor/SKILL.md"),
    (["skill", "install", "--project", "--agent", "codex"],
     "project/.agents/skills/skill-doctor/SKILL.md"),
    (["skill", "install", "--user", "--agent", "codex"],
     "home/.agents/skills/skill-doctor/SKILL.md"),
])
def test_skill_install_copies_the_skill_where_the_agent_looks(tmp_path, capsys, monkeypatch,
                                                              argv, where):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    code, out, err = run(argv, project, capsys)
    assert code == 0, err
    installed = tmp_path / where
    assert installed.read_bytes() == SKILL
    assert out.startswith("Installed the skill-doctor skill for ")
    # nothing else written anywhere
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")
                     if p.is_file())
    assert written == [where]
    code, out, _ = run(argv, project, capsys)
    assert code == 0 and "already installed" in out and "(unchanged)" in out


def test_skill_install_honours_claude_config_dir(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    code, _, _ = run(["skill", "install", "--user"], tmp_path, capsys)
    assert code == 0
    assert (tmp_path / "cfg" / "skills" / "skill-doctor" / "SKILL.md").read_bytes() == SKILL


def test_skill_install_refuses_a_different_file_without_force(tmp_path, capsys):
    target = tmp_path / ".claude" / "skills" / "skill-doctor" / "SKILL.md"
    target.parent.mkdir(parents=True)
    target.write_text("my own edits\n")
    code, out, err = run(["skill", "install"], tmp_path, capsys)
    assert code == 2 and out == ""
    assert "SKILL.md exists and differs from the skill this skill-doctor ships; use --force" in err
    assert target.read_text() == "my own edits\n"
    code, out, _ = run(["skill", "install", "--force"], tmp_path, capsys)
    assert code == 0 and target.read_bytes() == SKILL
    assert [p.name for p in target.parent.iterdir()] == ["SKILL.md"]  # no temporary left


def test_skill_without_action_is_a_usage_error(tmp_path, capsys):
    code, _, err = run(["skill"], tmp_path, capsys)
    assert code == 2 and "skill-doctor skill install" in err


def test_license_file_is_the_mit_license_the_metadata_names():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert 'license = { text = "MIT" }' in (ROOT / "pyproject.toml").read_text()


def _build(kind: str, out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "build", f"--{kind}", "-o", str(out), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    [built] = out.glob("*.whl" if kind == "wheel" else "*.tar.gz")
    return built


@pytest.mark.slow
def test_wheel_ships_the_skill_rubric_prices_grammar_and_license(tmp_path):
    names = set(zipfile.ZipFile(_build("wheel", tmp_path)).namelist())
    for name in ("skill_doctor/skill/skill-doctor/SKILL.md", "skill_doctor/rubric.yaml",
                 "skill_doctor/prices.yaml", "skill_doctor/grammar/generic.lark"):
        assert name in names, name
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


@pytest.mark.slow
def test_sdist_tests_pass_from_a_fresh_venv(tmp_path):
    """Unpack the sdist, install it with its test extras into a new venv, run its tests (the
    fast ones: the slow ones build packages and need the package index again)."""
    sdist = _build("sdist", tmp_path / "dist")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / "src", filter="data")
    top = names[0].split("/")[0]
    for needed in ("skill/skill-doctor/SKILL.md", ".pre-commit-hooks.yaml", "LICENSE",
                   "action.yml", "examples/sessions/poor-session.jsonl", "rubric.yaml",
                   "tests/conftest.py", "src/skill_doctor/prices.yaml"):
        assert f"{top}/{needed}" in names, needed
    unpacked = tmp_path / "src" / top
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    f"{unpacked}[test]"], check=True, capture_output=True, timeout=900)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider",
         "tests/test_cli.py", "tests/test_check.py", "tests/test_examples.py",
         "tests/test_packaging.py", "tests/test_tokens.py", "tests/test_compare.py"],
        cwd=unpacked, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    # the installed package, not the unpacked source, was tested
    where = subprocess.run([str(python), "-c", "import skill_doctor; print(skill_doctor.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert str(venv) in where
