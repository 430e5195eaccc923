"""safe_io: reading files without being stalled or flooded, below every stage that reads.

A session's store is hostile input: a file in it may be a link to /dev/zero (memory grows by
gigabytes a minute), a FIFO (an open that never returns), or a link out of the store.
- `refusal`: why a file named as a transcript is not read (not a regular file, a kernel file).
- `read_regular`: files found inside a store (OpenCode's message and part files) and files
  skill-doctor replaces (an installed SKILL.md): a regular file reached without following a
  link, opened so that a FIFO cannot block, read up to a size bound.
- `read_named_text`: files the user named (a rubric, a baseline, readings): the same, but a
  link the user named is followed.
- `within`: whether a path, links resolved, stays inside a folder (where skill install writes).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


# Kernel file systems: their files are no saved sessions, whatever their names.
PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


def refusal(path: Path, info: os.stat_result) -> str | None:
    """Why `path` (whose stat, links followed, is `info`) is not read as a transcript, or None."""
    mode = info.st_mode
    if not stat.S_ISREG(mode):
        return f"not a regular file ({_kind(mode)})"
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    for root in PSEUDO_ROOTS:
        if real == root or real.startswith(root + "/"):
            return f"not a regular file (a file of the kernel's {root}, not a saved session)"
    return None


class Refused(OSError):
    """The file is not read: a link, not a regular file, or larger than the bound."""


def _kind(mode: int) -> str:
    return ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else
            "a character device" if stat.S_ISCHR(mode) else
            "a block device" if stat.S_ISBLK(mode) else
            "a socket" if stat.S_ISSOCK(mode) else
            "a folder" if stat.S_ISDIR(mode) else "of an unknown kind")


def read_regular(path: Path | str, limit: int, *, follow: bool = False) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them.

    Raises Refused when the last component is a link (not followed, unless `follow`: a file
    the user named on the command line may be one), when it is not a regular file (a FIFO is
    opened without blocking and then refused), or when it holds more than `limit` bytes;
    OSError when it cannot be opened."""
    flags = os.O_RDONLY | (0 if follow else getattr(os, "O_NOFOLLOW", 0)) \
        | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(errno.ELOOP, "a link, not followed", str(path)) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(errno.EINVAL, _kind(info.st_mode), str(path))
        if info.st_size > limit:
            raise Refused(errno.EFBIG, f"larger than {limit} bytes", str(path))
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:  # it grew while being read
            raise Refused(errno.EFBIG, f"larger than {limit} bytes", str(path))
        return data
    finally:
        os.close(fd)


def read_named_text(path: Path | str, limit: int) -> str:
    """The UTF-8 text of a file the user named (a rubric, a baseline, readings): a link is
    followed, but a FIFO, a device or a file over `limit` bytes is refused (Refused), never
    read until memory runs out or forever. UnicodeDecodeError and OSError pass through."""
    return read_regular(path, limit, follow=True).decode("utf-8")


def within(path: Path, root: Path) -> bool:
    """Whether `path`, every link in it resolved, lies inside `root` (resolved too)."""
    try:
        real, base = os.path.realpath(path), os.path.realpath(root)
    except (OSError, ValueError):
        return False
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)
