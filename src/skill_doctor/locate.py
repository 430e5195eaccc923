"""locate: find the transcript to grade — a file, the newest file in a folder, or the newest
session in the harness stores (preferring the current project's).

Only what it is pointed at is opened, read-only. Subagent files (`agent-*.jsonl`,
`*/subagents/*`) are never picked as "the session".

Folder walks never follow a symbolic link, to a folder or to a file: a repository could ship
`sessions/b.jsonl -> /proc/self/environ` or a link to a key outside it. A link named on the
command line is followed (the decoder notes that it was). Whatever is opened, `safe_io.refusal()` keeps
out what is no transcript file: FIFOs, devices and sockets (they block or never end) and the
kernel's pseudo-files under /proc, /sys and /dev (a process's environment, memory maps).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".md", ".txt", ".log", ".traj", ".cast")
MAX_SCAN = 20000  # files looked at in one folder walk; a huge tree is cut, not hung on
MAX_DEPTH = 4


@dataclass(frozen=True, slots=True)
class Located:
    path: Path | None
    reason: str | None = None  # why nothing was found
    harness: str | None = None  # the store it came from, when picked from the stores
    own_project: bool = False  # picked from the stores as the current project's session


def is_subagent_file(path: Path) -> bool:
    return path.name.startswith("agent-") or "subagents" in path.parts


def _walked_dir(name: str) -> bool:
    """Folders worth looking in for sessions: not subagent parts, reports, deps or git."""
    return name not in ("subagents", "node_modules", ".git") and not name.startswith(".skill-doctor")


def iter_transcripts(folder: Path, max_depth: int | None = None,
                     max_files: int | None = None,
                     links: list[Path] | None = None) -> Iterator[Path]:
    """Transcript files below `folder` (subagent files left out: they are parts of another
    session), folders and files in name order; `max_depth`/`max_files` bound the walk so a huge
    tree is cut, not hung on. Symbolic links are not followed (to folders or files); the ones
    passed over are added to `links` when it is given."""
    scanned = 0
    base_depth = len(folder.parts)
    for root, dirs, files in os.walk(folder, followlinks=False):
        depth = len(Path(root).parts) - base_depth
        if links is not None:
            links.extend(Path(root) / d for d in sorted(dirs)
                         if _walked_dir(d) and os.path.islink(os.path.join(root, d)))
        dirs[:] = sorted(d for d in dirs if _walked_dir(d)
                         and (max_depth is None or depth < max_depth))
        for name in sorted(files):
            scanned += 1
            if max_files is not None and scanned > max_files:
                return
            path = Path(root) / name
            if (name.endswith(TRANSCRIPT_SUFFIXES) and not name.endswith(".meta.json")
                    and not is_subagent_file(path)):
                if path.is_symlink():
                    if links is not None:
                        links.append(path)
                    continue
                yield path


def _candidates(folder: Path) -> list[tuple[float, str, Path]]:
    found: list[tuple[float, str, Path]] = []
    for path in iter_transcripts(folder, MAX_DEPTH, MAX_SCAN):
        try:
            st = path.stat()
        except OSError:
            continue
        found.append((st.st_mtime, str(path), path))
    return found


def newest_in(folder: Path) -> Path | None:
    """The newest transcript file under `folder` (by modification time, ties by name)."""
    candidates = _candidates(folder)
    if not candidates:
        return None
    candidates.sort(key=lambda c: (-c[0], c[1]))
    return candidates[0][2]


def default_session(cwd: Path, env: Mapping[str, str], home: Path) -> Located:
    """The newest session of the current project across the harness stores, else the newest
    session at all (one discovery pass for both)."""
    from . import stores

    sessions = stores.discover(env, home)  # newest first
    if not sessions:
        return Located(None, "no session found in the harness stores")
    own = next((s for s in sessions if stores.belongs_to(s, cwd)), None)
    picked = own or sessions[0]
    return Located(picked.path, harness=picked.harness, own_project=own is not None)


def locate(path: str | None, cwd: Path, env: Mapping[str, str], home: Path) -> Located:
    if path is None:
        return default_session(cwd, env, home)
    p = Path(path)
    if not p.is_absolute():
        p = cwd / p
    try:
        if p.is_dir():
            newest = newest_in(p)
            return Located(newest, None if newest else f"no transcript files in {path}")
        if not os.path.lexists(p):
            return Located(None, f"{path} does not exist")
    except OSError as exc:
        return Located(None, f"cannot look at {path}: {exc.strerror or exc}")
    return Located(p)
