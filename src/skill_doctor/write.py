"""write: put the report directory in place, all or nothing.

Files are written into a temporary directory beside the target and renamed into place in one
step, so a reader never sees a half-written report and a failure leaves nothing behind. The
target must lie inside the current working directory (the contract's authority).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

from .errors import OutputError, UsageError

MARKER = "report.json"  # a directory holding this is a skill-doctor report and may be replaced


def resolve_output(directory: str | os.PathLike[str], cwd: Path) -> Path:
    """The absolute target, refusing anything outside the working tree."""
    target = (cwd / Path(directory)).resolve()
    root = cwd.resolve()
    if target != root and root not in target.parents:
        raise UsageError(f"output directory {directory} is outside the current working "
                         f"directory; reports are only written under {root}")
    if target == root:
        raise UsageError("the output directory cannot be the working directory itself")
    return target


def write_report(target: Path, files: Mapping[str, str], *, force: bool = False) -> Path:
    """Write `files` (name -> text) as the directory `target`; all or nothing."""
    with staged(target, force=force) as tmp:
        for name, text in sorted(files.items()):
            write_file(tmp / name, text)
    return target


def write_file(path: Path, text: str) -> None:
    """One file, flushed to disk (callers stage it in a temporary directory first)."""
    # Lone surrogates from hostile transcripts cannot be encoded; replace, never crash.
    data = text.encode("utf-8", errors="replace")
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


@contextmanager
def staged(target: Path, *, force: bool = False, marker: str = MARKER) -> Iterator[Path]:
    """A temporary directory beside `target` that becomes `target` when the block ends.

    The body fills the yielded directory (subdirectories allowed); on success it is renamed
    into place in one step, on any error it is removed and nothing is left behind. An existing
    `target` is replaced only with `force` and only if it holds `marker` (an earlier report).
    """
    if target.exists() or target.is_symlink():
        if not force:
            raise UsageError(f"output directory {target.name} already exists; "
                             f"choose another with -o or replace it with --force")
        if not target.is_dir() or target.is_symlink() or not (target / marker).is_file():
            raise UsageError(f"{target.name} exists and is not a skill-doctor report; "
                             f"refusing to replace it")
    parent = target.parent
    tmp: Path | None = None
    created: list[Path] = []  # parent folders made here, removed again if the write fails
    try:
        missing = [d for d in (parent, *parent.parents) if not d.exists()]
        for folder in reversed(missing):
            folder.mkdir()
            created.append(folder)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
        yield tmp
        os.chmod(tmp, 0o755)
        if target.exists():
            _swap(tmp, target)
        else:
            os.rename(tmp, target)
        tmp = None
        created.clear()
    except OSError as exc:
        raise OutputError(f"cannot write the report to {target}: "
                          f"{exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                pass


def _swap(new: Path, target: Path) -> None:
    """Replace the earlier report `target` by `new`; on failure the earlier report stays."""
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    try:
        os.rename(target, old / "report")
        try:
            os.rename(new, target)
        except OSError:
            os.rename(old / "report", target)  # put the earlier report back
            raise
    finally:
        if target.is_dir():  # never delete the only copy of the earlier report
            shutil.rmtree(old, ignore_errors=True)


def dump_json(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
