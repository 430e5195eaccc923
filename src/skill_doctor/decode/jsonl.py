"""Streaming, fault-tolerant reading of JSON Lines and whole-JSON files.

A session file is read line by line (never whole into memory). Invalid JSON lines, a truncated
last line, non-UTF-8 bytes and absurd nesting are skipped and counted, never fatal: the counts
become notes on the report.
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO, Iterator

try:  # optional: several times faster than the standard library on large sessions
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised only where orjson is absent
    _orjson = None

from .builder import TranscriptBuilder

_DECODE_ERRORS = (ValueError, RecursionError, TypeError)
# Valid UTF-8 JSON, nothing else (orjson when present: it rejects invalid UTF-8 itself).
_strict_loads = _orjson.loads if _orjson is not None else json.loads


def loads(data: bytes | str) -> Any:
    """Parse one JSON document; bytes that are not UTF-8 are decoded with replacement."""
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            if isinstance(data, bytes):
                # orjson refuses invalid UTF-8; retry on a repaired string before giving up.
                text = data.decode("utf-8", errors="replace")
                if text.encode("utf-8") != data:
                    return _orjson.loads(text)
            raise
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    return json.loads(data)


def iter_records(stream: BinaryIO, builder: TranscriptBuilder) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for every JSON-object line; count and note the rest."""
    invalid = non_utf8 = not_objects = 0
    last_bad_line = 0
    for lineno, raw in enumerate(stream, start=1):
        if not raw.strip():
            continue
        try:
            record = _strict_loads(raw)
        except _DECODE_ERRORS:
            # The slow path only for lines the strict parser refused: were the bytes UTF-8?
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                non_utf8 += 1
            try:
                record = loads(raw)
            except _DECODE_ERRORS:
                invalid += 1
                last_bad_line = lineno
                continue
        if not isinstance(record, dict):
            not_objects += 1
            continue
        yield lineno, record
    if invalid:
        builder.note(f"{invalid} line(s) were not valid JSON and were skipped"
                     f" (last at line {last_bad_line})")
        builder.skip("invalid-json", invalid)
    if non_utf8:
        builder.note(f"{non_utf8} line(s) held bytes that are not UTF-8 (replaced)")
    if not_objects:
        builder.skip("non-object-json", not_objects)


def read_json(stream: BinaryIO) -> Any:
    """A whole-JSON file (a chat export, a trajectory). Raises ValueError when it is not JSON."""
    data = stream.read()
    try:
        return loads(data)
    except _DECODE_ERRORS as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
