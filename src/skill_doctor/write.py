"""write: put the report directory in place, all or nothing, and replace only our own work.

Files are written into a temporary directory beside the target and renamed into place in one
step, so a reader never sees a half-written report and a failure leaves nothing behind. The
target must lie inside the current working directory (the contract's authority), and its name
must be one the file system can hold (a bad `-o` is a usage error, exit 2, never a crash).

Every directory written gets a manifest, `.skill-doctor-files`, listing each file in it with
its SHA-256 (the format of `sha256sum`). `--force` replaces an existing directory only when the
manifest is there and accounts for every file and folder in it, unchanged: a directory that
merely holds a `report.json`, or one a user added a file to, is refused (exit 2). The earlier
directory is then removed file by file from that list, so nothing else is ever deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from .errors import OutputError, UsageError

MARKER = "report.json"  # what an earlier report holds (batch: summary.jsonl), besides the manifest
MANIFEST = ".skill-doctor-files"
# Bounds on `-o`: a folder name the file system can hold with the temporary name made from it
# (`.<name>.XXXXXXXX.tmp`), and a whole path the files below it still fit under (PATH_MAX).
MAX_NAME_BYTES = 200
MAX_PATH_BYTES = 3000
MAX_DEPTH = 32


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def resolve_output(directory: str | os.PathLike[str], cwd: Path) -> Path:
    """The absolute target, refusing anything outside the working tree or that the file system
    cannot hold (one-line usage errors)."""
    given = os.fspath(directory)
    if not given.strip():
        raise UsageError("the output directory name is empty")
    if "\0" in given:
        raise UsageError("the output directory name holds a NUL byte")
    for part in Path(given).parts:
        size = len(os.fsencode(part))
        if size > MAX_NAME_BYTES:
            raise UsageError(f"output directory {_short(given)}: a folder name of {size} bytes; "
                             f"names are limited to {MAX_NAME_BYTES}")
    try:
        target = (cwd / Path(given)).resolve()
        root = cwd.resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise UsageError(f"output directory {_short(given)}: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    if target != root and root not in target.parents:
        raise UsageError(f"output directory {_short(given)} is outside the current working "
                         f"directory; reports are only written under {root}")
    if target == root:
        raise UsageError("the output directory cannot be the working directory itself")
    size = len(os.fsencode(str(target)))
    if size > MAX_PATH_BYTES:
        raise UsageError(f"output directory {_short(given)}: a path of {size} bytes; paths are "
                         f"limited to {MAX_PATH_BYTES}")
    depth = len(target.relative_to(root).parts)
    if depth > MAX_DEPTH:
        raise UsageError(f"output directory {_short(given)}: {depth} folders deep; at most "
                         f"{MAX_DEPTH} are allowed")
    return target


def write_report(target: Path, files: Mapping[str, str | bytes | Iterable[bytes]], *,
                 force: bool = False) -> Path:
    """Write `files` (name -> text, bytes already encoded, or such bytes in pieces) as the
    directory `target`; all or nothing."""
    with staged(target, force=force) as tmp:
        for name, text in sorted(files.items()):
            write_file(tmp / name, text)
    return target


def write_file(path: Path, text: str | bytes | Iterable[str | bytes]) -> None:
    """One file, flushed to disk (callers stage it in a temporary directory first); `text`
    may come in pieces, written as they come (a large page need not be held whole), or as
    bytes already encoded (`json_bytes`)."""
    with open(path, "wb") as fh:
        # Lone surrogates from hostile transcripts cannot be encoded; replace, never crash.
        for piece in (text,) if isinstance(text, (str, bytes)) else text:
            fh.write(piece if isinstance(piece, bytes) else
                     piece.encode("utf-8", errors="replace"))
        fh.flush()
        os.fsync(fh.fileno())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_manifest(folder: Path) -> None:
    """List every file under `folder` (all written by this run) with its SHA-256."""
    lines = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            if rel != MANIFEST:
                lines.append(f"{_sha256(path)}  {rel}\n")
    write_file(folder / MANIFEST, "".join(sorted(lines, key=lambda line: line[66:])))


def own_files(target: Path, marker: str) -> list[str] | None:
    """The files of `target` when skill-doctor wrote every file and folder in it (its manifest
    lists them all, unchanged, and includes `marker`), else None."""
    manifest = target / MANIFEST
    try:
        if not stat.S_ISREG(manifest.lstat().st_mode):
            return None
        listed: dict[str, str] = {}
        for line in manifest.read_text(encoding="utf-8").splitlines():
            digest, sep, rel = line.partition("  ")
            if not sep or len(digest) != 64 or not rel or rel.startswith("/") or ".." in rel.split("/"):
                return None
            listed[rel] = digest
        if marker not in listed:
            return None
        folders = {str(Path(rel).parent.as_posix()) for rel in listed}
        folders |= {p.as_posix() for rel in listed for p in Path(rel).parents}
        for root, dirs, files in os.walk(target):
            base = Path(root).relative_to(target)
            for name in dirs:
                rel = (base / name).as_posix()
                if (Path(root) / name).is_symlink() or rel not in folders:
                    return None
            for name in files:
                path = Path(root) / name
                rel = (base / name).as_posix()
                if rel == MANIFEST:
                    continue
                if rel not in listed or not stat.S_ISREG(path.lstat().st_mode):
                    return None
                if _sha256(path) != listed[rel]:
                    return None
        return sorted(listed)
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _refuse_unless_own(target: Path, marker: str) -> None:
    if not target.is_dir() or target.is_symlink() or own_files(target, marker) is None:
        raise UsageError(f"{target.name} exists and is not a skill-doctor report (not every "
                         f"file in it was written by skill-doctor); refusing to replace it")


def check_target(target: Path, *, force: bool = False, marker: str = MARKER) -> None:
    """Refuse an output directory that may not be written: one that exists, unless `force`
    and skill-doctor wrote every file in it. Callers check before the work that fills it,
    so a long grading is not thrown away over a name (`staged` checks again)."""
    if target.exists() or target.is_symlink():
        if not force:
            raise UsageError(f"output directory {target.name} already exists; "
                             f"choose another with -o or replace it with --force")
        _refuse_unless_own(target, marker)


@contextmanager
def staged(target: Path, *, force: bool = False, marker: str = MARKER) -> Iterator[Path]:
    """A temporary directory beside `target` that becomes `target` when the block ends.

    The body fills the yielded directory (subdirectories allowed); on success the manifest is
    added and the directory renamed into place in one step, on any error it is removed and
    nothing is left behind. An existing `target` is replaced only with `force` and only if
    skill-doctor wrote every file in it (its manifest, holding `marker`), checked before
    anything is written and again just before it is removed.
    """
    check_target(target, force=force, marker=marker)
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
        _write_manifest(tmp)
        os.chmod(tmp, 0o755)
        if target.exists():
            _refuse_unless_own(target, marker)
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
    """Replace the earlier output `target` by `new`; on failure the earlier one stays."""
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
            _remove_own(old / "report")
            for folder in (old / "report", old):
                try:
                    folder.rmdir()
                except OSError:
                    pass


def _remove_own(folder: Path) -> None:
    """Delete the files `folder`'s manifest lists, then its emptied folders; anything else (a
    file added since it was checked) stays where it is."""
    if not folder.is_dir():
        return
    manifest = folder / MANIFEST
    try:
        listed = [line.partition("  ")[2] for line in
                  manifest.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError):
        return
    for rel in listed:
        path = folder / rel
        if rel and ".." not in rel.split("/") and path.is_file() and not path.is_symlink():
            try:
                path.unlink()
            except OSError:
                pass
    try:
        manifest.unlink()
    except OSError:
        pass
    for root, dirs, _ in sorted(os.walk(folder, topdown=False), key=lambda w: -len(w[0])):
        for name in dirs:
            try:
                (Path(root) / name).rmdir()
            except OSError:
                pass


def json_bytes(data: object) -> bytes:
    """`dump_json(data)` as the UTF-8 bytes a file holds, without a text copy between: a long
    session's report.json is tens of megabytes, and the text and its encoding were two more
    copies of it at the moment memory peaks."""
    try:
        return _orjson_dump(data)
    except TypeError:
        return _stdlib_dump(data).encode("utf-8", errors="replace")


def dump_json(data: object) -> str:
    """`data` as indented JSON with sorted keys and a final line end.

    Written by orjson (a declared dependency): the standard library indents in pure Python,
    about a tenth of orjson's speed on a large report. What orjson refuses (a lone surrogate
    kept from a damaged file, an integer past 64 bits, a key that is not a string) is written
    by the standard library, so every input still gets its file.
    """
    try:
        return _orjson_dump(data).decode("utf-8")
    except TypeError:
        return _stdlib_dump(data)


def _orjson_dump(data: object) -> bytes:
    """Raises TypeError (orjson.JSONEncodeError is one) for what orjson refuses."""
    import orjson

    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
                        | orjson.OPT_APPEND_NEWLINE)


def _stdlib_dump(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
