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
