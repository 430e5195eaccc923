"""The agent skill (skill/skill-doctor/SKILL.md): Agent Skills front matter, and commands that
the command line really accepts."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml

from conftest import ROOT
from skill_doctor.cli import _parser

SKILL_DIR = ROOT / "skill" / "skill-doctor"
ALLOWED_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


def split() -> tuple[dict, str]:
    text = (SKILL_DIR / "SKILL.md").read_text(encoding="utf-8")
    m = re.match(r"---\n(.*?)\n---\n(.*)", text, re.S)
    assert m, "SKILL.md must start with YAML front matter between --- lines"
    return yaml.safe_load(m.group(1)), m.group(2)


def test_front_matter_follows_the_agent_skills_format():
    meta, body = split()
    assert isinstance(meta, dict) and set(meta) <= ALLOWED_KEYS, set(meta) - ALLOWED_KEYS
    name = meta["name"]
    # 1-64 lowercase letters, digits and single hyphens, the same as the skill's folder
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) and len(name) <= 64
    assert name == SKILL_DIR.name
    description = meta["description"]
    assert isinstance(description, str) and 0 < len(description) <= 1024
    assert "Use when" in description  # says when an agent should reach for it
    assert len(meta.get("compatibility", "")) <= 500
    assert body.strip()


def commands() -> list[str]:
    _, body = split()
    blocks = re.findall(r"```sh\n(.*?)```", body, re.S)
    inline = re.findall(r"`(skill-doctor [^`]+)`", body)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines + inline if line.startswith("skill-doctor ")]


def test_the_skill_names_the_commands_it_needs():
    found = commands()
    assert any(c.startswith("skill-doctor report") for c in found)
    assert any(c.startswith("skill-doctor check") for c in found)


@pytest.mark.parametrize("command", commands())
def test_every_command_in_the_skill_is_accepted_by_the_cli(command, capsys):
    args = shlex.split(command)[1:]
    try:
        parsed = _parser().parse_args(args)
    except SystemExit as exc:  # --version prints and exits 0; anything else is a usage error
        assert exc.code == 0, (command, capsys.readouterr().err)
        return
    assert parsed.command is not None, command


def test_readme_explains_installing_the_skill():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".claude/skills" in readme and ".agents/skills" in readme
    assert "skill/skill-doctor" in readme


def test_install_refuses_a_skills_folder_linked_out_of_the_project(tmp_path, capsys,
                                                                   monkeypatch):
    import os

    from skill_doctor.cli import main

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    (outside / "skills").mkdir(parents=True)
    os.symlink(outside, project / ".claude")
    monkeypatch.chdir(project)
    assert main(["skill", "install"]) == 2
    err = capsys.readouterr().err
    assert "leads through a link to" in err and "refusing to write the skill there" in err
    assert list((outside / "skills").iterdir()) == []


def test_install_refuses_to_read_a_skill_file_that_is_a_fifo_or_a_link(tmp_path, capsys,
                                                                      monkeypatch):
    import os
    import threading

    from skill_doctor.cli import main

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / ".claude" / "skills" / "skill-doctor"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "SKILL.md")
    codes: list = []
    worker = threading.Thread(target=lambda: codes.append(main(["skill", "install"])),
                              daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert codes == [2], "the install hung on a FIFO"
    assert "is a FIFO (named pipe); refusing to read or replace it" in capsys.readouterr().err
    (folder / "SKILL.md").unlink()
    os.symlink("/dev/zero", folder / "SKILL.md")
    assert main(["skill", "install"]) == 2
    assert "is a link, not followed" in capsys.readouterr().err
