"""A set of the lines a decoder has seen, in 8 bytes a line.

A gigabyte Claude Code session has half a million lines, and a resumed one repeats earlier
lines verbatim, so the decoder remembers every line's key. In a Python set each key cost about
100 bytes (its object and the set's slot): 46 MB at a gigabyte, the largest single part of
decoding's peak. Here a key is a 64-bit digest held in an open-addressing table of machine
words. Two different lines share a digest with a chance of about one in 10^8 for half a
million lines (and only someone who searched 2^32 digests for it could make one on purpose);
the cost of that is one line read as a duplicate.
"""

from __future__ import annotations

import hashlib
from array import array

_FIRST_SLOTS = 1 << 12


class SeenKeys:
    """Keys (text) remembered as 64-bit blake2b digests; `add` says whether a key is new."""

    __slots__ = ("_table", "_mask", "_count")

    def __init__(self) -> None:
        self._table = array("Q", [0]) * _FIRST_SLOTS
        self._mask = _FIRST_SLOTS - 1
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, key: str) -> bool:
        """Remember `key`; False when it was seen before."""
        # 0 marks an empty slot, so a zero digest is taken as 1 (one more collision in 2^64).
        digest = int.from_bytes(hashlib.blake2b(
            key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little") or 1
        table, mask = self._table, self._mask
        slot = digest & mask
        while True:  # linear probing: the digests' low bits are already uniform
            held = table[slot]
            if held == 0:
                break
            if held == digest:
                return False
            slot = (slot + 1) & mask
        table[slot] = digest
        self._count += 1
        if self._count * 2 > mask:  # at most half full: probes stay short
            self._grow()
        return True

    def _grow(self) -> None:
        old = self._table
        size = 2 * len(old)
        table = array("Q", [0]) * size
        mask = size - 1
        for digest in old:
            if digest:
                slot = digest & mask
                while table[slot]:
                    slot = (slot + 1) & mask
                table[slot] = digest
        self._table, self._mask = table, mask
