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
- size: a line longer than `MAX_LINE_BYTES`, or a whole-JSON file larger than
  `MAX_DOCUMENT_BYTES`, is streamed through `Bounder`, which keeps its structure and every
  short value and cuts each long string to its head and tail (`STRING_KEEP` bytes each, the
  cut marked): a 100 MB tool output keeps the call, its exit status and the end of the output
  (where a failing test's summary is) without the whole line ever being held;
- a whole-JSON document nested deeper than `MAX_DEPTH` keeps everything but the values below
  that depth, which `Bounder` replaces by null (noted), so the session is still read.
"""

from __future__ import annotations

import json
import re
from typing import Any, BinaryIO, Iterator

import orjson as _orjson

from ..patterns import compile_later
from .builder import TranscriptBuilder

_DECODE_ERRORS = (ValueError, RecursionError, TypeError)

MAX_DEPTH = 512  # deeper than any real session; keeps every later recursive walk safe
# orjson's own nesting limit (1,024 levels since 3.9.15): readers that batch lines into one
# document (asciicast) keep lines with more opening brackets than this for `parse`.
_ORJSON_MAX_OPENERS = 1024
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
_CHUNK = 1024 * 1024
STRING_KEEP = 32 * 1024  # bytes kept at each end of a long string in an oversized document
MAX_BOUNDED_BYTES = 64 * 1024 * 1024  # structure left after cutting strings; more is refused


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


_STRING_BODY = compile_later(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_STRUCTURE = compile_later(rb'["{}\[\]]')


class Bounder:
    """JSON text rewritten as it streams by, in bounded memory: every string longer than twice
    `keep` bytes becomes its head and tail around a `[... N bytes not kept ...]` marker, and
    every value nested deeper than `max_depth` becomes null. Structure, keys and short values
    are kept as they are. Not a validator: what it cannot follow is left for the parser to
    refuse. `feed()` the bytes, then `result()`; `cut` and `pruned` count what was changed."""

    def __init__(self, keep: int = STRING_KEEP, max_depth: int = MAX_DEPTH,
                 max_bytes: int = MAX_BOUNDED_BYTES) -> None:
        self.keep, self.max_depth, self.max_bytes = keep, max_depth, max_bytes
        self.out = bytearray()
        self.depth = 0
        self.skip_from = 0  # depth of the too-deep value being skipped (0: none)
        self.in_string = False
        self.head = bytearray()
        self.tail = bytearray()
        self.length = 0
        self.carry = b""  # a backslash that ended the last chunk (its escape is in the next)
        self.cut = 0
        self.pruned = 0

    def feed(self, data: bytes) -> None:
        buf = self.carry + data if self.carry else data
        self.carry = b""
        view = memoryview(buf)  # string pieces are looked at, not copied
        pos, size = 0, len(buf)
        while pos < size:
            if self.in_string:
                end = _STRING_BODY.match(buf, pos).end()
                if end < size and buf[end] == 0x22:  # the closing quote
                    self._string(view[pos:end])
                    self._close_string()
                    pos = end + 1
                    continue
                if end < size:  # a backslash with nothing after it: wait for the next chunk
                    self.carry = bytes(buf[end:])
                self._string(view[pos:end])
                break
            match = _STRUCTURE.search(buf, pos)
            stop = match.start() if match else size
            if not self.skip_from:
                self.out += buf[pos:stop]
            if match is None:
                break
            char = buf[stop]
            pos = stop + 1
            if char == 0x22:
                self.in_string, self.length = True, 0
                self.head.clear()
                self.tail.clear()
            elif char in (0x7B, 0x5B):  # { [
                self.depth += 1
                if not self.skip_from:
                    if self.depth > self.max_depth:
                        self.skip_from = self.depth
                        self.pruned += 1
                        self.out += b"null"
                    else:
                        self.out.append(char)
            else:  # } ]
                if self.skip_from:
                    if self.depth == self.skip_from:
                        self.skip_from = 0
                else:
                    self.out.append(char)
                self.depth -= 1
            if len(self.out) > self.max_bytes:
                raise ValueError(f"larger than {self.max_bytes // (1024 * 1024)} MiB even with "
                                 f"its long strings cut")

    def _string(self, piece: bytes | memoryview) -> None:
        if self.skip_from or not len(piece):
            return
        room = self.keep - len(self.head)
        if room > 0:
            self.head += piece[:room]
            piece = piece[room:]
        self.length += len(piece)
        cap = self.keep + 64
        if len(piece) >= cap:  # only the last `cap` bytes can end up in the tail
            self.tail[:] = piece[-cap:]
            return
        self.tail += piece
        if len(self.tail) > 2 * cap:
            del self.tail[: len(self.tail) - cap]

    def _close_string(self) -> None:
        self.in_string = False
        if self.skip_from:
            return
        if self.length <= len(self.tail):  # nothing was dropped: the string as it was
            self.out += b'"' + self.head + self.tail + b'"'
            return
        head, tail = _safe_head(bytes(self.head)), _safe_tail(bytes(self.tail[-self.keep - 64:]))
        dropped = len(self.head) + self.length - len(head) - len(tail)
        self.cut += 1
        self.out += (b'"' + head + b"\\n[... %d bytes not kept ...]\\n" % dropped + tail + b'"')

    def result(self) -> bytes:
        if self.in_string:  # unterminated: close what was kept, the parser judges the rest
            self._close_string()
        return bytes(self.out)


def _safe_head(head: bytes) -> bytes:
    """`head` without a trailing escape or UTF-8 sequence that the cut left unfinished."""
    slash = head.rfind(b"\\", max(0, len(head) - 6))
    if slash >= 0:
        run = slash - len(head[:slash + 1].rstrip(b"\\")) + 1  # backslashes ending at `slash`
        if run % 2:  # an escape starts there
            need = 6 if head[slash + 1:slash + 2] == b"u" else 2
            if slash + need > len(head):
                head = head[:slash]
    for back in range(1, min(4, len(head)) + 1):
        byte = head[-back]
        if byte & 0xC0 == 0xC0:  # a lead byte: complete only if its sequence is all here
            width = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return head if back >= width else head[:-back]
        if byte & 0xC0 != 0x80:
            break
    return head


def _safe_tail(tail: bytes) -> bytes:
    """`tail` from its first byte that starts a character outside any escape."""
    for i in range(1, min(len(tail), 64)):
        if tail[i - 1] != 0x5C and tail[i] & 0xC0 != 0x80 and tail[i] != 0x5C:
            return tail[i:]
    return b""


class Cut(bytes):
    """A line that was longer than the limit, as Bounder left it."""


def _lines(stream: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """The stream's lines. A line longer than `limit` is streamed through a Bounder in chunks,
    never held whole, and comes as `Cut`; None stands for one that is too big even then."""
    while True:
        raw = stream.readline(limit + 1)
        if not raw:
            return
        if len(raw) > limit and not raw.endswith(b"\n"):
            bounder = Bounder()
            try:
                bounder.feed(raw)
                while True:
                    chunk = stream.readline(_CHUNK)
                    if not chunk:
                        break
                    bounder.feed(chunk)
                    if chunk.endswith(b"\n"):
                        break
                yield Cut(bounder.result())
            except ValueError:
                while chunk and not chunk.endswith(b"\n"):  # drop the rest of this line
                    chunk = stream.readline(_CHUNK)
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
    invalid = non_utf8 = not_objects = too_deep = too_long = cut = 0
    last_bad_line = 0
    for lineno, raw in enumerate(_lines(stream, MAX_LINE_BYTES), start=1):
        if raw is None:
            too_long += 1
            last_bad_line = lineno
            continue
        if isinstance(raw, Cut):
            cut += 1
        if not raw or raw.isspace():  # a blank line (the test copies nothing, unlike strip())
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
    if cut:
        builder.note(f"{cut} line(s) longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB were "
                     f"read with their long strings cut to head and tail")
    if non_utf8:
        builder.note(f"{non_utf8} line(s) held bytes that are not UTF-8 (replaced)")
    if not_objects:
        builder.skip("non-object-json", not_objects)


def read_json(stream: BinaryIO, notes: list[str] | None = None) -> Any:
    """A whole-JSON file (a chat export, a trajectory). A file larger than MAX_DOCUMENT_BYTES
    has its long strings cut, and values nested deeper than MAX_DEPTH are replaced by null;
    each is said in `notes`. Raises ValueError when it is not JSON even then."""
    said = notes if notes is not None else []
    data = stream.read(MAX_DOCUMENT_BYTES + 1)
    bounder = None
    if len(data) > MAX_DOCUMENT_BYTES:
        bounder = Bounder()
        try:
            bounder.feed(data)
            del data
            for chunk in iter(lambda: stream.read(_CHUNK), b""):
                bounder.feed(chunk)
        except ValueError as exc:
            raise ValueError(f"larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB and "
                             f"{exc}") from None
        data = bounder.result()
        said.append(f"the file is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB: "
                    f"{bounder.cut} long string(s) were cut to head and tail")
    try:
        return loads(data)
    except (TooDeep, RecursionError):
        pass
    except _DECODE_ERRORS as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    # Too deep somewhere: keep the document, without what lies below MAX_DEPTH.
    pruner = Bounder(keep=len(data) + 1)
    try:
        pruner.feed(data)
        value = loads(pruner.result())
    except _DECODE_ERRORS as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    said.append(f"{pruner.pruned} value(s) nested deeper than {MAX_DEPTH} levels were skipped")
    return value


UNREADABLE = object()  # what read_document returns when the file is no JSON document


def read_document(stream: BinaryIO, builder: TranscriptBuilder) -> Any:
    """A whole-JSON session file, or UNREADABLE with the reason set as the builder's problem."""
    notes: list[str] = []
    try:
        value = read_json(stream, notes)
    except ValueError as exc:
        from ..model import ParseProblem

        builder.problem = ParseProblem(message=str(exc))
        return UNREADABLE
    for note in notes:
        builder.note(note)
    return value
