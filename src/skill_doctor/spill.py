"""Where a long session's turn texts wait while it is graded: an unnamed temporary file.

A session of a gigabyte holds a few hundred megabytes of message text, tool inputs and outputs
and edits, even with every tool output clipped to head and tail. Grading reads each of them a
few times at most, so holding them all in memory buys nothing: the decoder writes them here as
each turn is finished, and the turn keeps their place (an int: offset and length) and reads
them back with one `pread` when asked (a few microseconds; the operating system's page cache
keeps recent ones, outside the process's memory). The texts and values read last are kept, as
one turn's are asked for several times in a row. Short texts stay in memory.

The file is created unlinked (nothing is left behind, whatever happens to the process), in
the system's temporary folder (TMPDIR), readable by the user alone. When it cannot be made or
written (a full disk, a read-only temporary folder) texts simply stay in memory.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from typing import Any, Callable

# Below this many characters a text costs less in memory than its place in the file would.
SPILL_MIN_CHARS = 96
_LENGTH_BITS = 32
# The texts and values read last are kept: a detector asks for one turn's output or input
# several times in a row (did it fail, what error, which test counts), and each read is a
# system call.
_RECENT = 64


class Spill:
    """An append-only file of texts and values, read back by place."""

    __slots__ = ("_file", "_fd", "_end", "_recent")

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="skill-doctor-")
        self._fd = self._file.fileno()
        self._end = 0
        self._recent: dict[int, Any] = {}  # handle -> text or value, oldest read first

    def _put(self, data: bytes) -> int:
        written = os.pwrite(self._fd, data, self._end)
        if written != len(data):
            raise OSError("short write to the spill file")
        handle = (self._end << _LENGTH_BITS) | len(data)
        self._end += len(data)
        return handle

    def _get(self, handle: int, load: Callable[[bytes], Any]) -> Any:
        """What is at `handle`, made by `load` from its bytes (or kept from a recent read:
        handles never collide, each is its own place in the file)."""
        recent = self._recent
        found = recent.get(handle)
        if found is None:
            length = handle & ((1 << _LENGTH_BITS) - 1)
            found = load(os.pread(self._fd, length, handle >> _LENGTH_BITS))
            if len(recent) >= _RECENT:
                del recent[next(iter(recent))]  # the oldest read
            recent[handle] = found
        return found

    def put_text(self, text: str) -> int:
        # surrogatepass: hostile logs carry lone surrogates, and they must come back as they were.
        return self._put(text.encode("utf-8", "surrogatepass"))

    def text(self, handle: int) -> str:
        return self._get(handle, _decode)

    def put_value(self, value: Any) -> int:
        return self._put(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))

    def value(self, handle: int) -> Any:
        # Only what this process wrote is ever read back; nothing from outside is unpickled.
        # A value kept from a recent read is shared, as one held in memory was: callers read
        # a tool input, never change it.
        return self._get(handle, pickle.loads)

    def close(self) -> None:
        self._file.close()


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def open_spill() -> Spill | None:
    """A new spill file, or None when the temporary folder cannot take one (or the system
    has no positioned reads and writes: Windows keeps the texts in memory)."""
    if not (hasattr(os, "pread") and hasattr(os, "pwrite")):
        return None
    try:
        return Spill()
    except OSError:
        return None
