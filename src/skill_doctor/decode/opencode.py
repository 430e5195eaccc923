"""OpenCode sessions: the storage directory layout and `opencode export` JSON.

Storage (`$XDG_DATA_HOME/opencode/storage/`) keeps one session in many small files:
`session/<projectID>/<sessionID>.json` (the session info, which is the file handed to the
decoder), `message/<sessionID>/<messageID>.json` and `part/<messageID>/<partID>.json`. IDs are
time-sortable, so messages and parts are ordered by id. The export is the same data nested:
`{info, messages: [{info, parts: [...]}]}`. Tool parts carry their call and result together
(`state{status, input, output, metadata, error}`). All files are opened read-only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO, Iterator

from ..patterns import compile_later
from ..text import iso_from_millis as _iso
from .builder import TranscriptBuilder
from .fields import items
from .jsonl import UNREADABLE, loads, read_document

HARNESS = "opencode"

_SESSION_INFO = compile_later(r'"id"\s*:\s*"ses_[^"]*"')
_EXPORT = compile_later(r'^\{\s*"info"\s*:\s*\{')


def sniff(head: str) -> bool:
    start = head.lstrip()
    if not start.startswith("{"):
        return False
    if _EXPORT.match(start) and '"ses_' in head[:4000] and '"messages"' in head:
        return True
    first = start[:4000]
    return bool(_SESSION_INFO.search(first) and '"projectID"' in first and '"role"' not in first
                and '"messageID"' not in first)


def decode(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    b = TranscriptBuilder(str(path), HARNESS)
    data = read_document(stream, b)
    if data is UNREADABLE:
        return b
    if not isinstance(data, dict):
        b.not_a_transcript = True
        return b
    if isinstance(data.get("info"), dict) and isinstance(data.get("messages"), list):
        _info(b, data["info"])
        messages = ((m.get("info"), items(m.get("parts")))
                    for m in data["messages"] if isinstance(m, dict))
    else:
        _info(b, data)
        session_id = data.get("id")
        messages = _from_storage(b, path, session_id if _storage_name(session_id) else path.stem)
    for position, (info, parts) in enumerate(messages, start=1):
        if isinstance(info, dict):
            _message(b, info, parts, position)
    return b


def _info(b: TranscriptBuilder, info: dict) -> None:
    if isinstance(info.get("id"), str):
        b.session_id = info["id"]
    if isinstance(info.get("directory"), str):
        b.cwd = info["directory"]
    if isinstance(info.get("version"), str):
        b.extra["version"] = info["version"]
    if isinstance(info.get("title"), str):
        b.extra["title"] = info["title"]
    if info.get("parentID"):
        b.extra["subagent"] = "yes"
    created = (info.get("time") or {}).get("created") if isinstance(info.get("time"), dict) else None
    b.seen_time(_iso(created))


def storage_root(session_file: Path) -> Path:
    """`storage/` from `storage/session/<projectID>/<sessionID>.json`."""
    return session_file.parent.parent.parent


# A message or part file is a few KB; a larger one is no OpenCode record.
MAX_RECORD_BYTES = 32 * 1024 * 1024


def _read(path: Path) -> Any:
    """A storage file's JSON, or None. Only a regular file is read, reached without following
    a link and up to MAX_RECORD_BYTES: a link to /dev/zero, a FIFO or a huge file in the store
    is skipped, not read until memory runs out or forever."""
    from ..safe_io import read_regular

    try:
        return loads(read_regular(path, MAX_RECORD_BYTES))
    except (OSError, ValueError, RecursionError, TypeError):
        return None


def _storage_name(value: Any) -> bool:
    """Whether an id from a file can name a folder under storage/: one plain name, so a
    hostile `"id": "../../.."` cannot point the decoder at files outside the session's store."""
    return (isinstance(value, str) and value not in ("", ".", "..") and "/" not in value
            and "\\" not in value and "\0" not in value)


def _from_storage(b: TranscriptBuilder, path: Path, session_id: str) -> Iterator[tuple[dict, list]]:
    root = storage_root(path)
    folder = root / "message" / session_id
    try:
        files = sorted(folder.glob("*.json"))
    except OSError:
        files = []
    if not files:
        b.note(f"no message files found under message/{session_id}")
    for file in files:
        info = _read(file)
        if not isinstance(info, dict):
            b.skip("unreadable-file")
            continue
        message_id = info.get("id") if _storage_name(info.get("id")) else file.stem
        parts = []
        try:
            part_files = sorted((root / "part" / message_id).glob("*.json"))
        except OSError:
            part_files = []
        for part_file in part_files:
            part = _read(part_file)
            if isinstance(part, dict):
                parts.append(part)
        parts.sort(key=lambda p: str(p.get("id", "")))
        yield info, parts
    return


def _message(b: TranscriptBuilder, info: dict, parts: list, position: int) -> None:
    role = info.get("role")
    created = (info.get("time") or {}).get("created") if isinstance(info.get("time"), dict) else None
    ts = _iso(created)
    if isinstance(info.get("modelID"), str):
        b.model = b.model or info["modelID"]
    tokens = info.get("tokens")
    if role == "assistant" and isinstance(tokens, dict):
        cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
        reasoning = tokens.get("reasoning")
        output = tokens.get("output")
        if isinstance(output, int) and isinstance(reasoning, int) and reasoning > 0:
            output += reasoning  # billed as output
        b.usage(f"message{position}", input=tokens.get("input"), output=output,
                cache_read=cache.get("read"), cache_write=cache.get("write"),
                model=info.get("modelID") or b.model)
    for part in parts:
        if not isinstance(part, dict):
            continue
        ptype = part.get("type")
        if ptype == "text":
            text = str(part.get("text") or "")
            if not text.strip():
                continue
            meta = "synthetic" if part.get("synthetic") else None
            if role == "user":
                b.user(text, line=position, timestamp=ts, meta=meta)
            else:
                b.assistant(text, line=position, timestamp=ts, meta=meta,
                            merge_key=f"msg{position}")
        elif ptype == "reasoning":
            b.skip("reasoning")
        elif ptype == "tool":
            _tool(b, part, position, ts)
        elif ptype == "file" and role == "user":
            b.user(f"[file {part.get('filename') or part.get('url') or ''}]", line=position,
                   timestamp=ts, meta="attachment")
        elif ptype == "compaction":
            b.user("[conversation compacted]", line=position, timestamp=ts, meta="compaction")
        else:
            b.skip(str(ptype or "unknown"))
    error = info.get("error")
    if isinstance(error, dict):
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        message = data.get("message") or error.get("name") or "error"
        b.assistant(str(message), line=position, timestamp=ts, meta="api-error")


def _tool(b: TranscriptBuilder, part: dict, position: int, ts: str | None) -> None:
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    status = state.get("status")
    metadata = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
    output = state.get("output")
    if status == "error":
        output = state.get("error") or output
    code = next((metadata[k] for k in ("exit", "exitCode", "exit_code")
                 if isinstance(metadata.get(k), int) and not isinstance(metadata.get(k), bool)), None)
    time = state.get("time") if isinstance(state.get("time"), dict) else {}
    b.tool(str(part.get("tool") or "unknown"), state.get("input"),
           output if isinstance(output, str) else ("" if output is None else str(output)),
           is_error=status == "error", exit_code=code, line=position,
           timestamp=_iso(time.get("start")) or ts)
    if status in ("pending", "running"):
        b.note("some tool calls had not finished when the session was saved")
