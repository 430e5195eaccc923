"""decode: one saved session file -> one `Transcript`.

The format is sniffed from the file's first bytes, never from its name. Each harness has a
module here with `HARNESS`, `sniff(head) -> bool` and `decode(path, stream) -> TranscriptBuilder`;
they are tried in the order of `DECODERS` (most specific first). Text that no JSON decoder
claims goes to the plain-text front end (the Lark grammar). A container (an asciinema
recording) rebuilds the stream it holds and sniffs that again. Decoding never raises on bad
input: an unreadable or unrecognisable file yields a Transcript carrying a `ParseProblem`.
A file holding several sessions decodes to one Transcript that marks where each begins;
`sessions.split` cuts it.

Hostile paths: only regular files are opened, and the check is repeated on the open descriptor
(opened non-blocking, so a FIFO swapped in after the first look cannot hang a hook). Plain text
is parsed whole, so only its first `MAX_TEXT_BYTES` are read (cut at a line end, with a note).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import io
import os
import stat
from pathlib import Path
from types import ModuleType

from ..model import ParseProblem, Transcript
from ..text import cut as cut_text

# Module names under skill_doctor.decode, in sniffing order. Imported only when needed.
DECODERS: tuple[str, ...] = ("asciicast", "atif", "claude_code", "codex", "gemini", "pi", "cline", "trajectories", "opencode", "messages")
TEXT_DECODER = "plaintext"
HEAD_BYTES = 64 * 1024
MAX_TEXT_BYTES = 32 * 1024 * 1024  # plain text is parsed in one piece; more is cut, with a note
# Read in 64 KiB pieces, not the default 8: fewer system calls for JSONL lines of many KB.
_READ_BUFFER = 64 * 1024


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


# Plain-text dialects `--harness` can force by name, and the dialect module of each.
TEXT_DIALECTS: dict[str, str] = {"aider": "text_aider", "specstory": "text_specstory"}


def harness_names() -> list[str]:
    """Names accepted by `--harness`."""
    return [_module(name).HARNESS for name in (*DECODERS, TEXT_DECODER)] + list(TEXT_DIALECTS)


def sniff(head: str) -> ModuleType | None:
    for name in DECODERS:
        module = _module(name)
        if module.sniff(head):
            return module
    return None


def decode_file(path: str | os.PathLike[str], harness: str | None = None) -> Transcript:
    """Decode one file. Never raises for bad input; problems are carried on the Transcript.

    `ValueError` is raised only for an unknown `harness` name (a usage error, not bad input).
    """
    path = Path(path)
    if harness:
        forced = _forced(harness)
    try:
        info = path.stat()
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        return _problem(path, f"cannot read {path.name}: {_reason(exc)}")
    from ..safe_io import refusal

    # FIFOs and devices would block or never end, /proc files are the kernel's state: refused
    # before opening.
    refused = refusal(path, info)
    if refused:
        return _problem(path, f"{path.name} is {refused}; refused")
    try:
        stream = _open_regular(path)
    except OSError as exc:
        return _problem(path, f"cannot read {path.name}: {_reason(exc)}")
    with stream:
        try:
            head_bytes = stream.read(HEAD_BYTES)
            if not head_bytes.strip():
                return Transcript(source=str(path), harness="unknown",
                                  notes=("the file is empty",))
            head = head_bytes.decode("utf-8", errors="replace")
            module = forced if harness else sniff(head)
            stream.seek(0)
            cut = False
            if module is None:
                module = _module(TEXT_DECODER)
            if module.__name__.rpartition(".")[2] == TEXT_DECODER:
                stream, cut = _bounded(stream, MAX_TEXT_BYTES)
            transcript = module.decode(path, stream).build()
        except (OSError, MemoryError) as exc:
            return _problem(path, f"cannot read {path.name}: {_reason(exc)}")
        except Exception as exc:  # noqa: BLE001 - a decoder bug must not take a hook down
            # Fuzzing keeps this path unreached; if a new input shape finds one, the user gets
            # a parse-error report that names the fault instead of a traceback.
            return _problem(path, f"the decoder failed on {path.name}: "
                                  f"{type(exc).__name__}: {cut_text(str(exc), 200)}")
    if path.is_symlink():  # named on the command line (folder walks never follow links)
        transcript = dataclasses.replace(transcript, notes=(
            *transcript.notes, f"{path.name} is a symbolic link to {os.path.realpath(path)}; "
                               f"it was followed because it was named"))
    if cut:
        transcript = dataclasses.replace(transcript, notes=(
            *transcript.notes, f"only the first {MAX_TEXT_BYTES // (1024 * 1024)} MiB of this "
                               f"text file were read"))
    return transcript


def _reason(exc: BaseException) -> str:
    return (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)


def _open_regular(path: Path) -> io.BufferedReader:
    """Open read-only without blocking, and re-check on the descriptor that it is a regular file
    (the path may have been swapped for a FIFO or device since it was looked at)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=_READ_BUFFER)
    except BaseException:
        os.close(fd)
        raise


def _bounded(stream: io.BufferedReader, limit: int) -> tuple[io.BytesIO | io.BufferedReader, bool]:
    """The first `limit` bytes of `stream`, cut back to the last line end when longer."""
    data = stream.read(limit + 1)
    if len(data) <= limit:
        return io.BytesIO(data), False
    end = data.rfind(b"\n", 0, limit)
    return io.BytesIO(data[: end + 1] if end >= 0 else data[:limit]), True


def _forced(harness: str) -> ModuleType:
    for name in (*DECODERS, TEXT_DECODER):
        module = _module(name)
        if module.HARNESS == harness:
            return module
    if harness in TEXT_DIALECTS:
        # The plain-text front end with its dialect chosen, read like any plain text.
        text = _module(TEXT_DECODER)
        forced = ModuleType(text.__name__)
        forced.HARNESS = harness
        forced.decode = functools.partial(text.decode, forced_dialect=TEXT_DIALECTS[harness])
        return forced
    raise ValueError(f"unknown harness {harness!r}; known: {', '.join(harness_names())}")


def _problem(path: Path, message: str) -> Transcript:
    return Transcript(source=str(path), harness="unknown", problem=ParseProblem(message=message))
