"""Where a long session's turn texts wait while it is graded: an unnamed temporary file.

A session of a gigabyte holds a few hundred megabytes of message text, tool inputs and outputs
and edits, even with every tool output clipped to head and tail. Grading reads each of them a
few times at most, so holding them all in memory buys nothing: the decoder writes them here as
each turn is finished (in batches of a megabyte), and the turn keeps their place (an int:
offset and length) and reads them back with one `pread` when asked (a few microseconds; the
operating system's page cache keeps recent ones, outside the process's memory). The texts and
values read last are kept, as one turn's are asked for several times in a row. Short texts
stay in memory.

The file is created unlinked (nothing is left behind, whatever happens to the process), in
the system's temporary folder (TMPDIR), readable by the user alone. When it cannot be made or
written (a full disk, a read-only temporary folder) texts simply stay in memory, and so does
the batch the disk would not take.
"""

from __future__ import annotations

import functools
import os
import pickle
import tempfile
from typing import Any, Callable

# Below this many characters a text costs less in memory than its place in the file would.
SPILL_MIN_CHARS = 96
_LENGTH_BITS = 32
_LENGTH_MASK = (1 << _LENGTH_BITS) - 1
# The texts and values read last are kept: a detector asks for one turn's output or input
# several times in a row (did it fail, what error, which test counts), and each read is a
# system call.
_RECENT = 64


# Texts are written in batches of this many bytes: one system call per text was a third of
# what spilling cost. What is not written yet is read from memory.
_FLUSH_BYTES = 1 << 20


class Spill:
    """An append-only file of texts and values, read back by place: `text(handle)` and
    `value(handle)` (each keeps its last reads, see `_RECENT`)."""

    __slots__ = ("_file", "_store", "text", "value")

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="skill-doctor-")
        self._store = store = _Store(self._file.fileno())
        # The reads kept are the standard library's least-recently-used cache, in C: a read
        # of a kept text costs one dictionary lookup, and grading reads texts several
        # hundred thousand times in a long session. Handles never collide (each is its own
        # place in the file), so a handle names its text for the file's whole life. (The
        # caches hold the store, not the Spill: no cycle keeps the file open.)
        self.text: Callable[[int], str] = functools.lru_cache(_RECENT)(
            lambda handle: _decode(store.read(handle)))
        # Only what this process wrote is ever read back; nothing from outside is unpickled.
        # A value kept from a recent read is shared, as one held in memory was: callers read
        # a tool input, never change it.
        self.value: Callable[[int], Any] = functools.lru_cache(_RECENT // 2)(
            lambda handle: pickle.loads(store.read(handle)))

    def _put(self, data: bytes) -> int:
        """The handle of `data`, now in the file or waiting to be written with the next batch
        (OSError when a batch cannot be written: what it held stays readable, in memory)."""
        store = self._store
        handle = ((store.pending_at + len(store.pending)) << _LENGTH_BITS) | len(data)
        store.pending += data
        if len(store.pending) >= _FLUSH_BYTES:
            store.flush()
        return handle

    def put_text(self, text: str) -> int:
        # surrogatepass: hostile logs carry lone surrogates, and they must come back as they were.
        return self._put(text.encode("utf-8", "surrogatepass"))

    def put_value(self, value: Any) -> int:
        return self._put(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))

    def close(self) -> None:
        self._file.close()


class _Store:
    """The spill file's descriptor and the bytes not written to it yet."""

    __slots__ = ("fd", "pending", "pending_at", "kept")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = bytearray()  # the bytes from `pending_at` on, not written yet
        self.pending_at = 0
        self.kept: list[tuple[int, bytes]] = []  # batches the disk would not take

    def read(self, handle: int) -> bytes:
        at, length = handle >> _LENGTH_BITS, handle & _LENGTH_MASK
        if at >= self.pending_at:
            start = at - self.pending_at
            return bytes(self.pending[start:start + length])
        for kept_at, data in self.kept:
            if kept_at <= at < kept_at + len(data):
                return data[at - kept_at:at - kept_at + length]
        return os.pread(self.fd, length, at)

    def flush(self) -> None:
        data, at = self.pending, self.pending_at
        self.pending = bytearray()
        self.pending_at = at + len(data)
        try:
            if os.pwrite(self.fd, data, at) != len(data):
                raise OSError("short write to the spill file")
        except OSError:
            self.kept.append((at, bytes(data)))
            raise


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
