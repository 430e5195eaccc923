"""Streaming, fault-tolerant reading of JSON Lines and whole-JSON files.

A session file is read line by line (never whole into memory). Invalid JSON lines, a truncated
last line, non-UTF-8 bytes, absurd nesting and oversized lines are skipped or repaired and
counted, never fatal: the counts become notes on the report.

Lines are decoded with orjson (a declared dependency: three to four times the standard
library's speed on real sessions, and the decode is most of the floor a session's size sets).

Hostile input guards (each has a test in tests/test_hostile_inputs.py):
- lone surrogates and invalid UTF-8: lines orjson refuses are re-read by the standard library
  (bytes repaired, surrogates kept; every writer encodes with replacement);
- nesting: orjson from 3.9.15 on refuses documents nested deeper than 1,024 levels instead of
  recursing on the C stack (older versions crash the process near 100,000, which is why the
  dependency has that floor); those, like every line orjson refuses, are read again by the
  standard library, whose parser stops at the interpreter's recursion limit. Anything nested
  deeper than `MAX_DEPTH` is refused: a line with more opening brackets than that is walked
  once to measure its depth;
- size: a line longer than `MAX_LINE_BYTES` is skipped without being held in memory, and a
  whole-JSON file larger than `MAX_DOCUMENT_BYTES` is refused.
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO, Iterator

import orjson as _orjson

from .builder import TranscriptBuilder

_DECODE_ERRORS = (ValueError, RecursionError, TypeError)

MAX_DEPTH = 512  # deeper than any real session; keeps every later recursive walk safe
# orjson's own nesting limit (1,024 levels since 3.9.15): readers that batch lines into one
# document (asciicast) keep lines with more opening brackets than this for `parse`.
_ORJSON_MAX_OPENERS = 1024
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
_CHUNK = 1024 * 1024


class TooDeep(ValueError):
    """A JSON document nested deeper than MAX_DEPTH."""


def _openers(data: bytes | str) -> int:
    if isinstance(data, str):
        return data.count("{") + data.count("[")
    return data.count(b"{") + data.count(b"[")


def _check_depth(value: Any) -> None:
    """Raise TooDeep when `value` nests deeper than MAX_DEPTH (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise TooDeep(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))


def _stdlib_loads(data: bytes | str, openers: int | None = None) -> Any:
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    value = json.loads(data)
    if openers is None or openers > MAX_DEPTH:  # fewer brackets cannot nest deeper: no walk
        _check_depth(value)
    return value


def parse(data: bytes | str) -> tuple[Any, bool]:
    """(value, whether orjson read it). orjson rejects invalid UTF-8, so a line it read needs
    no second look at its bytes.

    Raises ValueError (TooDeep for nesting past MAX_DEPTH) or RecursionError for anything that
    is not JSON or nests too deeply.
    """
    try:
        value = _orjson.loads(data)
    except _orjson.JSONDecodeError:
        # orjson refuses invalid UTF-8 and escaped lone surrogates ("\ud83d", which JavaScript
        # writes when it cuts a string inside an emoji); the standard library reads both, with
        # the bytes repaired. Only lines orjson refused pay for the second parse.
        return _stdlib_loads(data), False
    # Fewer brackets than MAX_DEPTH (certainly in a line shorter than that) cannot nest
    # deeper: skip the walk.
    if len(data) > MAX_DEPTH and _openers(data) > MAX_DEPTH:
        _check_depth(value)
    return value, True


def loads(data: bytes | str) -> Any:
    """Parse one JSON document; bytes that are not UTF-8 are decoded with replacement."""
    return parse(data)[0]


def _lines(stream: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """The stream's lines; None stands for a line longer than `limit`, which is read past in
    chunks and never held whole."""
    while True:
        raw = stream.readline(limit + 1)
        if not raw:
            return
        if len(raw) > limit and not raw.endswith(b"\n"):
            while True:  # drop the rest of this line
                chunk = stream.readline(_CHUNK)
                if not chunk or chunk.endswith(b"\n"):
                    break
            yield None
            continue
        yield raw


def _valid_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def iter_records(stream: BinaryIO, builder: TranscriptBuilder) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for every JSON-object line; count and note the rest."""
    invalid = non_utf8 = not_objects = too_deep = too_long = 0
    last_bad_line = 0
    for lineno, raw in enumerate(_lines(stream, MAX_LINE_BYTES), start=1):
        if raw is None:
            too_long += 1
            last_bad_line = lineno
            continue
        if raw.isspace():  # a blank line (the test copies nothing, unlike strip())
            continue
        try:
            record, utf8_checked = parse(raw)
        except (TooDeep, RecursionError):
            too_deep += 1
            last_bad_line = lineno
            continue
        except _DECODE_ERRORS:
            invalid += 1
            last_bad_line = lineno
            continue
        # Checked after parsing, only where orjson did not already validate the bytes and the
        # line holds non-ASCII bytes, so a large line is not decoded a second time to count it.
        if not utf8_checked and not raw.isascii() and not _valid_utf8(raw):
            non_utf8 += 1
        if not isinstance(record, dict):
            not_objects += 1
            continue
        yield lineno, record
    if invalid:
        builder.note(f"{invalid} line(s) were not valid JSON and were skipped"
                     f" (last at line {last_bad_line})")
        builder.skip("invalid-json", invalid)
    if too_deep:
        builder.note(f"{too_deep} line(s) nested deeper than {MAX_DEPTH} levels were skipped")
        builder.skip("too-deep", too_deep)
    if too_long:
        builder.note(f"{too_long} line(s) longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB "
                     f"were skipped")
        builder.skip("too-long", too_long)
    if non_utf8:
        builder.note(f"{non_utf8} line(s) held bytes that are not UTF-8 (replaced)")
    if not_objects:
        builder.skip("non-object-json", not_objects)


def read_json(stream: BinaryIO) -> Any:
    """A whole-JSON file (a chat export, a trajectory). Raises ValueError when it is not JSON,
    nests too deeply or is larger than MAX_DOCUMENT_BYTES."""
    data = stream.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
    try:
        return loads(data)
    except _DECODE_ERRORS as exc:
        raise ValueError(f"not valid JSON: {exc}") from None


UNREADABLE = object()  # what read_document returns when the file is no JSON document


def read_document(stream: BinaryIO, builder: TranscriptBuilder) -> Any:
    """A whole-JSON session file, or UNREADABLE with the reason set as the builder's problem."""
    try:
        return read_json(stream)
    except ValueError as exc:
        from ..model import ParseProblem

        builder.problem = ParseProblem(message=str(exc))
        return UNREADABLE
