"""Discovery: the sessions each harness keeps on this machine, newest first.

Pure over an environment mapping and a home folder (the CLI passes `os.environ` and
`Path.home()`; tests pass a fake home), so nothing here reads the real stores unless asked.
Stores and their overrides:

- Claude Code  `$CLAUDE_CONFIG_DIR` or `~/.claude`: `projects/<enc-cwd>/<session>.jsonl`;
  subagents `projects/<enc>/agent-*.jsonl` (older) and `projects/<enc>/<session>/subagents/*.jsonl`
- Codex        `$CODEX_HOME` or `~/.codex`: `sessions/**/rollout-*.jsonl`, `archived_sessions/*.jsonl`;
  a rollout whose `session_meta` names a parent thread is that parent's subagent
- Gemini CLI   `$GEMINI_CLI_HOME` or `~` + `/.gemini/tmp/<project>/chats/session-*.json[l]`;
  subagents in `chats/<parentSessionId>/*.jsonl`
- Pi           `$PI_CODING_AGENT_DIR` or `~/.pi/agent`: `sessions/<enc-cwd>/*.jsonl`
- OpenCode     `$XDG_DATA_HOME` or `~/.local/share` + `/opencode/storage/session/<project>/ses_*.json`;
  a session with `parentID` is a subagent
- Cline/Roo/Kilo  VS Code globalStorage `<ext>/tasks/<id>/api_conversation_history.json`

Subagent files are attached to their parent (`SessionInfo.subagents`) and never listed on
their own; a subagent whose parent is not found is listed. Files are only opened for reading,
and only their first bytes are read here. Order: newest modification time first, then path.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from .patterns import compile_later

_PEEK = 64 * 1024
_CWD = compile_later(r'"(?:cwd|directory)"\s*:\s*"((?:[^"\\]|\\.)*)"')
_TIME = compile_later(r'"(?:timestamp|startTime)"\s*:\s*"([^"]+)"')
_SESSION_ID = compile_later(r'"(?:sessionId|session_id)"\s*:\s*"([^"]+)"')
_PARENT_THREAD = compile_later(r'"parent_thread_id"\s*:\s*"([^"]+)"')
_PARENT_ID = compile_later(r'"parentID"\s*:\s*"([^"]+)"')
_META_ID = compile_later(r'"type"\s*:\s*"session_meta"\s*,\s*"payload"\s*:\s*\{\s*"id"\s*:\s*"([^"]+)"')

_VSCODE_EXTENSIONS = ("saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline", "kilocode.kilo-code")


@dataclass(frozen=True)
class SessionInfo:
    """One session found in a store. `turns` is None until `with_details` decodes it."""

    path: Path
    harness: str
    mtime: float
    session_id: str | None = None
    cwd: str | None = None
    started_at: str | None = None
    turns: int | None = None
    subagents: tuple[Path, ...] = field(default=())


# -- where the stores are ----------------------------------------------------------------------

def store_dirs(env: Mapping[str, str], home: Path) -> dict[str, list[Path]]:
    """The root folder(s) of every store, by harness, honouring the override variables."""
    def under(var: str, default: Path) -> Path:
        value = env.get(var)
        return Path(value).expanduser() if value else default

    xdg_data = under("XDG_DATA_HOME", home / ".local" / "share")
    xdg_config = under("XDG_CONFIG_HOME", home / ".config")
    gemini_home = under("GEMINI_CLI_HOME", home)
    code_dirs = [xdg_config / "Code" / "User" / "globalStorage",
                 home / "Library" / "Application Support" / "Code" / "User" / "globalStorage"]
    if env.get("APPDATA"):
        code_dirs.append(Path(env["APPDATA"]) / "Code" / "User" / "globalStorage")
    return {
        "claude-code": [under("CLAUDE_CONFIG_DIR", home / ".claude") / "projects"],
        "codex": [under("CODEX_HOME", home / ".codex")],
        "gemini": [gemini_home / ".gemini" / "tmp"],
        "pi": [under("PI_CODING_AGENT_DIR", home / ".pi" / "agent") / "sessions"],
        "opencode": [under("OPENCODE_DATA_DIR", xdg_data / "opencode") / "storage"],
        "cline": [d / ext / "tasks" for d in code_dirs for ext in _VSCODE_EXTENSIONS],
    }


# -- discovery ---------------------------------------------------------------------------------

def discover(env: Mapping[str, str], home: Path) -> list[SessionInfo]:
    """Every session in every store, newest first (mtime desc, then path)."""
    dirs = store_dirs(env, home)
    found: list[SessionInfo] = []
    for finder, harness in ((_claude, "claude-code"), (_codex, "codex"), (_gemini, "gemini"),
                            (_pi, "pi"), (_opencode, "opencode"), (_cline, "cline")):
        for root in dirs[harness]:
            if _is_dir(root):
                found.extend(finder(root))
    found.sort(key=lambda s: (-s.mtime, s.path.as_posix()))
    return found


def belongs_to(session: SessionInfo, cwd: str | os.PathLike[str]) -> bool:
    """Whether the session was recorded in `cwd` or a folder inside it."""
    target = _norm(str(cwd))
    if session.harness == "claude-code" and session.path.parent.name == re.sub(
            r"[^A-Za-z0-9]", "-", str(cwd)):
        return True  # the store's own folder for this project (the cwd field may differ)
    if session.cwd and (_norm(session.cwd) == target
                        or _norm(session.cwd).startswith(target.rstrip("/") + "/")):
        return True
    project_hash = hashlib.sha256(str(cwd).encode("utf-8")).hexdigest()
    return session.harness == "gemini" and session.path.parent.parent.name == project_hash


def newest_for_project(cwd: str | os.PathLike[str], env: Mapping[str, str], home: Path
                       ) -> SessionInfo | None:
    """The newest session recorded in `cwd` (or a folder inside it), across all stores."""
    for session in discover(env, home):
        if belongs_to(session, cwd):
            return session
    return None


def started_epoch(session: SessionInfo) -> float:
    """When the session started, in seconds since the epoch: its recorded start time, else its
    file's modification time (a store that records no start, or a time that is not ISO)."""
    from datetime import datetime, timezone

    if session.started_at:
        try:
            moment = datetime.fromisoformat(session.started_at.strip().replace("Z", "+00:00"))
        except ValueError:
            return session.mtime
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    return session.mtime


def by_start(sessions: Iterable[SessionInfo]) -> list[SessionInfo]:
    """Newest start first, then path (see `started_epoch`)."""
    return sorted(sessions, key=lambda s: (-started_epoch(s), s.path.as_posix()))


def with_details(session: SessionInfo) -> SessionInfo:
    """The session with its turn count and start time, by decoding it."""
    from .decode import decode_file

    transcript = decode_file(session.path)
    return replace(session, turns=len(transcript.turns),
                   started_at=transcript.started_at or session.started_at,
                   cwd=session.cwd or transcript.cwd)


# -- per store ---------------------------------------------------------------------------------

def _claude(root: Path) -> Iterator[SessionInfo]:
    mains: dict[Path, SessionInfo] = {}
    by_id: dict[str, Path] = {}
    loose: list[tuple[Path, str | None]] = []  # agent-*.jsonl siblings: (file, parent id)
    for project in _children(root):
        if not _is_dir(project):
            continue
        for file in _children(project):
            if file.suffix != ".jsonl" or not _is_file(file):
                continue
            head = _peek(file)
            if file.name.startswith("agent-"):
                loose.append((file, _first(_SESSION_ID, head)))
                continue
            info = _info(file, "claude-code", head, session_id=file.stem)
            mains[file] = info
            by_id[file.stem] = file
        for folder in _children(project):  # <session>/subagents/*.jsonl
            subagents = folder / "subagents"
            if _is_dir(subagents):
                for file in _children(subagents):
                    if file.suffix == ".jsonl" and _is_file(file):
                        loose.append((file, folder.name))
    yield from _attach(mains, by_id, loose, "claude-code")


def _codex(root: Path) -> Iterator[SessionInfo]:
    mains: dict[Path, SessionInfo] = {}
    by_id: dict[str, Path] = {}
    loose: list[tuple[Path, str | None]] = []
    files = list(_walk(root / "sessions", lambda p: p.name.startswith("rollout-") and p.suffix == ".jsonl"))
    files += [p for p in _children(root / "archived_sessions") if p.suffix == ".jsonl" and _is_file(p)]
    for file in files:
        head = _peek(file, first_line=True)
        parent = _first(_PARENT_THREAD, head)
        if parent and ('"subagent"' in head):
            loose.append((file, parent))
            continue
        session_id = _first(_META_ID, head)
        info = _info(file, "codex", head, session_id=session_id)
        mains[file] = info
        if session_id:
            by_id[session_id] = file
    yield from _attach(mains, by_id, loose, "codex")


def _gemini(root: Path) -> Iterator[SessionInfo]:
    mains: dict[Path, SessionInfo] = {}
    by_id: dict[str, Path] = {}
    loose: list[tuple[Path, str | None]] = []
    for project in _children(root):
        chats = project / "chats"
        if not _is_dir(chats):
            continue
        for file in _children(chats):
            if _is_file(file) and file.name.startswith("session-") and file.suffix in (".json", ".jsonl"):
                head = _peek(file)
                session_id = _first(_SESSION_ID, head)
                mains[file] = _info(file, "gemini", head, session_id=session_id)
                if session_id:
                    by_id[session_id] = file
            elif _is_dir(file):  # chats/<parentSessionId>/<sessionId>.jsonl
                loose.extend((sub, file.name) for sub in _children(file)
                             if sub.suffix in (".json", ".jsonl") and _is_file(sub))
    yield from _attach(mains, by_id, loose, "gemini")


def _pi(root: Path) -> Iterator[SessionInfo]:
    for project in _children(root):
        if _is_dir(project):
            for file in _children(project):
                if file.suffix == ".jsonl" and _is_file(file):
                    yield _info(file, "pi", _peek(file, first_line=True))


def _opencode(root: Path) -> Iterator[SessionInfo]:
    mains: dict[Path, SessionInfo] = {}
    by_id: dict[str, Path] = {}
    loose: list[tuple[Path, str | None]] = []
    for project in _children(root / "session"):
        if not _is_dir(project):
            continue
        for file in _children(project):
            if file.suffix != ".json" or not _is_file(file):
                continue
            head = _peek(file)
            parent = _first(_PARENT_ID, head)
            if parent:
                loose.append((file, parent))
                continue
            mains[file] = _info(file, "opencode", head, session_id=file.stem)
            by_id[file.stem] = file
    yield from _attach(mains, by_id, loose, "opencode")


def _cline(root: Path) -> Iterator[SessionInfo]:
    for task in _children(root):
        file = task / "api_conversation_history.json"
        if _is_file(file):
            yield _info(file, "cline", b"", session_id=task.name)


def _attach(mains: dict[Path, SessionInfo], by_id: dict[str, Path],
            loose: list[tuple[Path, str | None]], harness: str) -> Iterator[SessionInfo]:
    children: dict[Path, list[Path]] = {}
    for file, parent_id in loose:
        parent = by_id.get(parent_id or "")
        if parent is None:
            mains[file] = _info(file, harness, _peek(file))  # orphan: list it on its own
        else:
            children.setdefault(parent, []).append(file)
    for path, info in mains.items():
        kids = tuple(sorted(children.get(path, ()), key=lambda p: p.as_posix()))
        yield replace(info, subagents=kids) if kids else info


# -- small file helpers (read-only, bounded) ---------------------------------------------------

def _info(path: Path, harness: str, head: bytes | str, session_id: str | None = None) -> SessionInfo:
    text = head.decode("utf-8", errors="replace") if isinstance(head, bytes) else head
    cwd = _first(_CWD, text)
    if cwd is not None:
        try:
            cwd = json.loads(f'"{cwd}"')
        except ValueError:
            pass
    return SessionInfo(path=path, harness=harness, mtime=_mtime(path),
                       session_id=session_id or _first(_SESSION_ID, text),
                       cwd=cwd, started_at=_first(_TIME, text))


def _peek(path: Path, first_line: bool = False) -> str:
    try:
        with open(path, "rb") as handle:  # read-only
            data = handle.readline(4 * _PEEK) if first_line else handle.read(_PEEK)
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text) if text else None
    return match.group(1) if match else None


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError:
        return []


def _walk(folder: Path, keep) -> Iterable[Path]:
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if keep(path) and _is_file(path):
                yield path


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _norm(path: str) -> str:
    return path.replace("\\", "/").rstrip("/") or "/"
