"""decode: one saved session file -> one `Transcript`.

The format is sniffed from the file's first bytes, never from its name. Each harness has a
module here with `HARNESS`, `sniff(head) -> bool` and `decode(path, stream) -> TranscriptBuilder`;
they are tried in the order of `DECODERS` (most specific first). Text that no JSON decoder
claims goes to the plain-text front end (the Lark grammar). Decoding never raises on bad
input: an unreadable or unrecognisable file yields a Transcript carrying a `ParseProblem`.
"""

from __future__ import annotations

import importlib
import os
import stat
from pathlib import Path
from types import ModuleType

from ..model import ParseProblem, Transcript

# Module names under skill_doctor.decode, in sniffing order. Imported only when needed.
DECODERS: tuple[str, ...] = ("claude_code", "codex", "gemini", "pi", "cline", "trajectories", "opencode", "messages")
TEXT_DECODER = "plaintext"
HEAD_BYTES = 64 * 1024


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def harness_names() -> list[str]:
    """Names accepted by `--harness`."""
    names = []
    for name in (*DECODERS, TEXT_DECODER):
        try:
            names.append(_module(name).HARNESS)
        except ImportError:
            continue
    return names


def sniff(head: str) -> ModuleType | None:
    for name in DECODERS:
        module = _module(name)
        if module.sniff(head):
            return module
    return None


def decode_file(path: str | os.PathLike[str], harness: str | None = None) -> Transcript:
    """Decode one file. Never raises for bad input; problems are carried on the Transcript."""
    path = Path(path)
    try:
        info = path.stat()
    except OSError as exc:
        return _problem(path, f"cannot read {path.name}: {exc.strerror or exc}")
    if not stat.S_ISREG(info.st_mode):
        # FIFOs and devices would block or never end: refuse them before opening.
        return _problem(path, f"{path.name} is not a regular file")
    try:
        stream = open(path, "rb")  # read-only, always
    except OSError as exc:
        return _problem(path, f"cannot read {path.name}: {exc.strerror or exc}")
    with stream:
        head_bytes = stream.read(HEAD_BYTES)
        if not head_bytes.strip():
            return Transcript(source=str(path), harness="unknown", notes=("the file is empty",))
        head = head_bytes.decode("utf-8", errors="replace")
        module = _forced(harness) if harness else sniff(head)
        stream.seek(0)
        try:
            if module is None:
                module = _module(TEXT_DECODER)
            builder = module.decode(path, stream)
        except (OSError, MemoryError) as exc:
            return _problem(path, f"cannot read {path.name}: {exc}")
        return builder.build()


def _forced(harness: str) -> ModuleType:
    for name in (*DECODERS, TEXT_DECODER):
        module = _module(name)
        if module.HARNESS == harness:
            return module
    raise ValueError(f"unknown harness {harness!r}; known: {', '.join(harness_names())}")


def _problem(path: Path, message: str) -> Transcript:
    return Transcript(source=str(path), harness="unknown", problem=ParseProblem(message=message))
