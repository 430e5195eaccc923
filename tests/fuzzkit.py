"""Shared pieces of the fuzz tests and the longer fuzz runner (fuzz/run.py).

`mutations` turn one real session file into hostile variants: truncated anywhere, lines
dropped, duplicated or swapped, JSON fields removed or retyped, strings replaced by huge or
deeply nested values. `run_pipeline` runs decode -> grade -> render -> JSON on a file and
checks the outcome, returning a description of what went wrong (None when all is well).
Seeds come from every decoder registered in `decode.DECODERS`, the plain-text decoder and
every corpus folder, so a newly registered decoder is fuzzed without touching the tests.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable

from skill_doctor import decode, rubric
from skill_doctor.render import render
from skill_doctor.report import grade, to_json
from skill_doctor.write import dump_json

STATUSES = {"ok", "no_history", "too_short", "parse_error"}
ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
CORPUS = ROOT.parent / "shared" / "corpus"
MAX_SEED_BYTES = 200_000  # seeds bigger than this are cut (at a line end) to keep runs short

_RUBRIC = None


def default_rubric():
    global _RUBRIC
    if _RUBRIC is None:
        _RUBRIC = rubric.load()
    return _RUBRIC


def run_pipeline(path: Path, harness: str | None = None) -> str | None:
    """None when the whole pipeline ran and produced a well-formed report; else what failed."""
    try:
        transcript = decode.decode_file(path, harness=harness)
        report = grade(transcript, default_rubric(), "2026-01-01T00:00:00Z")
        html = render(report)
        data = to_json(report)
        text = dump_json(data)
        html.encode("utf-8", errors="replace")
        text.encode("utf-8", errors="replace")
    except RecursionError as exc:  # BaseException subclasses are not expected either
        return f"RecursionError: {exc}"
    except Exception as exc:  # noqa: BLE001 - this is the property under test
        return f"{type(exc).__name__}: {exc}"
    if report.status not in STATUSES:
        return f"invalid status {report.status!r}"
    if data["status"] != report.status:
        return "report.json status differs from the report"
    problem = transcript.problem
    if problem is not None and problem.message.startswith("the decoder failed"):
        return f"decoder fault: {problem.message}"  # the safety net caught a bug
    if "<script" in html.lower():
        return "a script element reached the page"
    return None


def seed_files() -> list[Path]:
    """Small deterministic seeds: the examples and the smallest file of each corpus folder
    (every format a decoder exists for, or will)."""
    seeds = sorted(EXAMPLES.glob("*.jsonl"))
    # The labelled benchmark runs hold the recordings and trajectories the corpus lacks.
    folders = [CORPUS, CORPUS.parent / "labelled"]
    for base in (f for f in folders if f.is_dir()):
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            files = sorted((p for p in folder.rglob("*") if p.is_file()),
                           key=lambda p: (p.stat().st_size, str(p)))
            if files:
                seeds.append(files[0])  # the smallest of each format
    # Formats whose smallest real file is another format's (a folder of pairs): their fixtures.
    fixtures = Path(__file__).resolve().parent / "fixtures"
    seeds += sorted((fixtures / "atif").glob("*")) + sorted((fixtures / "asciicast").glob("*"))
    return seeds


def decoder_names() -> list[str]:
    """Every decoder module: the registered JSON decoders and the plain-text front end."""
    return [*decode.DECODERS, decode.TEXT_DECODER]


def harness_of(module_name: str) -> str:
    return decode._module(module_name).HARNESS


def read_seed(path: Path) -> bytes:
    data = path.read_bytes()
    if len(data) > MAX_SEED_BYTES:
        cut = data.rfind(b"\n", 0, MAX_SEED_BYTES)
        data = data[: cut + 1 if cut > 0 else MAX_SEED_BYTES]
    return data


# -- mutations ------------------------------------------------------------------------------

def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [data]


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def drop_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def duplicate_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return b"".join(lines)


def swap_lines(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        buf[rng.randrange(len(buf))] = rng.randrange(256)
    return bytes(buf)


_NESTED_TEXT = '{"k":[' * 1500 + '1' + ']}' * 1500


def _replacement(rng: random.Random) -> Any:
    return rng.choice([
        None, True, 0, -1, 2 ** 70, 1.5e308, "", [], {}, "x" * rng.choice([1, 1000, 200_000]),
        [[[[[]]]]], {"type": "tool_use"}, {"type": "tool_result", "content": [{"type": "text"}]},
        "\ud800 lone surrogate", "<script>alert(1)</script>", "\u202eevil\u202c",
        "\x00\x01\x02", ["text", {"text": None}], {"a": {"b": {"c": {"d": {}}}}},
        # text that decoders parse further: JSON nested past the stack as a string (tool
        # arguments, saved state) and exit codes too long for int()
        _NESTED_TEXT, "Exit code " + "9" * 5000, "<returncode>" + "9" * 5000 + "</returncode>",
    ])


def _nested(depth: int) -> str:
    """A placeholder that `_dumps` expands into JSON nested `depth` levels deep (written as
    text: the standard library cannot serialise such depth)."""
    return f"\x00nested:{depth}\x00"


def _expand(depth: int) -> bytes:
    return b'{"k":[' * (depth // 2) + b'"deep"' + b']}' * (depth // 2)


def _dumps(value: Any) -> bytes:
    text = json.dumps(value).encode("utf-8", "surrogatepass")
    if b"\\u0000nested:" not in text:
        return text
    for depth in (50, 400, 600, 3000):
        text = text.replace(b'"\\u0000nested:%d\\u0000"' % depth, _expand(depth))
    return text


def _mutate_json(value: Any, rng: random.Random, budget: list[int]) -> Any:
    """Walk a parsed record, removing, retyping or replacing a few fields."""
    if budget[0] <= 0:
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            roll = rng.random()
            if roll < 0.08 and budget[0] > 0:
                budget[0] -= 1
                continue  # field removed
            if roll < 0.16 and budget[0] > 0:
                budget[0] -= 1
                out[key] = _replacement(rng)  # field retyped
                continue
            if roll < 0.18 and budget[0] > 0:
                budget[0] -= 1
                out[key] = _nested(rng.choice([50, 400, 600, 3000]))
                continue
            out[key] = _mutate_json(item, rng, budget)
        return out
    if isinstance(value, list):
        return [_mutate_json(v, rng, budget) for v in value]
    if isinstance(value, str) and rng.random() < 0.1 and budget[0] > 0:
        budget[0] -= 1
        return _replacement(rng)
    return value


def mutate_fields(data: bytes, rng: random.Random) -> bytes:
    """Retype/remove fields of JSON lines (or of a whole JSON document)."""
    try:
        whole = json.loads(data)
    except (ValueError, RecursionError):
        whole = None
    if whole is not None:
        return _dumps(_mutate_json(whole, rng, [6]))
    out = []
    for line in _lines(data):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            out.append(line)
            continue
        if rng.random() < 0.3:
            record = _mutate_json(record, rng, [3])
        out.append(_dumps(record) + b"\n")
    return b"".join(out)


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "truncate": truncate, "drop-line": drop_line, "duplicate-line": duplicate_line,
    "swap-lines": swap_lines, "flip-bytes": flip_bytes, "mutate-fields": mutate_fields,
}


def mutate(data: bytes, rng: random.Random, rounds: int = 1) -> tuple[bytes, list[str]]:
    applied = []
    for _ in range(rounds):
        name = rng.choice(sorted(MUTATIONS))
        data = MUTATIONS[name](data, rng)
        applied.append(name)
    return data, applied


def traceback_of(path: Path, harness: str | None = None) -> str:
    """The traceback behind a "decoder failed" report (decode_file hides it by design)."""
    import traceback

    with open(path, "rb") as stream:
        head = stream.read(decode.HEAD_BYTES).decode("utf-8", errors="replace")
        module = decode._forced(harness) if harness else (decode.sniff(head)
                                                          or decode._module(decode.TEXT_DECODER))
        stream.seek(0)
        try:
            module.decode(path, stream).build()
        except Exception:  # noqa: BLE001
            return traceback.format_exc()
    return ""
