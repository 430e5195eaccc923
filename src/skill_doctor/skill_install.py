"""skill install: copy the bundled agent skill where an agent looks for skills.

`skill-doctor skill install [--user|--project] [--agent claude|codex]` copies the skill's folder
(`skill-doctor/SKILL.md`, shipped inside the package) to:

| agent  | --project (default)                 | --user                                         |
|--------|-------------------------------------|------------------------------------------------|
| claude | `./.claude/skills/skill-doctor/`    | `$CLAUDE_CONFIG_DIR/skills/` or `~/.claude/skills/skill-doctor/` |
| codex  | `./.agents/skills/skill-doctor/`    | `~/.agents/skills/skill-doctor/`               |

Codex reads skills from `.agents/skills` in the repository and `~/.agents/skills` for the user
(the Agent Skills standard's folders, which other agents read too). The project folder is the
default because it is the one place skill-doctor writes to anyway: the working tree.

A file already there with the same bytes is left alone (installing twice is no error); a
different one is never replaced without `force`, since it may be the user's own edit.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .errors import OutputError, UsageError

AGENTS = ("claude", "codex")
SKILL_NAME = "skill-doctor"
MAX_SKILL_BYTES = 1024 * 1024  # a SKILL.md is a few KB


@dataclass(frozen=True, slots=True)
class Installed:
    target: Path  # the skill's folder
    written: tuple[str, ...]  # files written (relative to target)
    unchanged: tuple[str, ...]  # files already there with the same bytes


def skills_dir(agent: str, user: bool, cwd: Path, env: Mapping[str, str], home: Path) -> Path:
    """The folder an agent reads skills from, for this project or for the user."""
    if agent not in AGENTS:
        raise UsageError(f"unknown agent {agent!r}; known: {', '.join(AGENTS)}")
    if agent == "claude":
        if not user:
            return cwd / ".claude" / "skills"
        config = env.get("CLAUDE_CONFIG_DIR")
        return (Path(config).expanduser() if config else home / ".claude") / "skills"
    return (home if user else cwd) / ".agents" / "skills"


def _files(source: Path) -> list[Path]:
    return sorted(p.relative_to(source) for p in source.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)


def install(source: Path, dest_dir: Path, *, force: bool = False,
            base: Path | None = None) -> Installed:
    """Copy the skill folder `source` to `dest_dir/skill-doctor/`.

    With `base` (the project folder), the target must lie inside it once every link is
    resolved: a `.claude/skills` that links out of the project is refused, not written
    through while the project's path is printed. A file already there is read only when it is
    a regular file (not a link, FIFO or device) of a skill's size.
    Refuses (UsageError) when a file there differs from the one shipped, unless `force`.
    Each file is written to a temporary name beside it and renamed into place, so a failure
    never leaves half a SKILL.md.
    """
    from .safe_io import Refused, read_regular, within

    target = dest_dir / SKILL_NAME
    if base is not None and not within(target, base):
        real = os.path.realpath(target)
        raise UsageError(f"{target} leads through a link to {real}, outside {base}; refusing to "
                         f"write the skill there")
    files = _files(source)
    if not files:
        raise OutputError(f"the bundled skill is missing from the installation ({source})")
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a folder; refusing to replace it")

    def present(rel: Path) -> bytes | None:
        """The bytes already at target/rel, None when nothing is there."""
        dest = target / rel
        if not os.path.lexists(dest):
            return None
        try:
            return read_regular(dest, MAX_SKILL_BYTES)
        except Refused as exc:
            raise UsageError(f"{dest} exists and is {exc.strerror}; refusing to read or "
                             f"replace it") from None
        except OSError as exc:
            raise OutputError(f"cannot read {dest}: {exc.strerror or exc}") from None

    there = {rel: present(rel) for rel in files}
    different = [rel for rel in files if there[rel] is not None
                 and there[rel] != (source / rel).read_bytes()]
    if different and not force:
        raise UsageError(f"{target / different[0]} exists and differs from the skill this "
                         f"skill-doctor ships; use --force to replace it")
    written, unchanged = [], []
    try:
        for rel in files:
            dest = target / rel
            data = (source / rel).read_bytes()
            if there[rel] == data:
                unchanged.append(rel.as_posix())
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.chmod(tmp, 0o644)
                os.replace(tmp, dest)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            written.append(rel.as_posix())
    except OSError as exc:
        raise OutputError(f"cannot install the skill into {target}: "
                          f"{exc.strerror or exc}") from None
    return Installed(target, tuple(written), tuple(unchanged))

