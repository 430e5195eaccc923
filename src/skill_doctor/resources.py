"""Where the shipped data files live: `rubric.yaml`, `grammar/` and the agent skill.

In a built wheel they sit inside the package (the build copies the repository's top-level
files there); in a source checkout or an editable install they are read from the repository
root, which stays their single source of truth.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for base in (_PACKAGE, _PACKAGE.parent.parent):
        candidate = base / name
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"{name} is missing from the installation")


def yaml_loader():
    """PyYAML's C safe loader when it has it (its wheels do), else the pure-Python one: the
    loader of the shipped rubric and price table and of a user's rubric."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def rubric_path() -> Path:
    return _find("rubric.yaml")


def grammar_path(name: str) -> Path:
    return _find("grammar") / name


def skill_path() -> Path:
    """The agent skill's folder (`skill-doctor/`, holding SKILL.md)."""
    return _find("skill") / "skill-doctor"
