"""Digest of the report every corpus and labelled session gets, to show a rework changes nothing.

Grades each file under ../shared/corpus and ../shared/labelled the way `skill-doctor report`
does (shipped rubric, fixed generation time, secrets redacted), renders report.html and
report.json, and prints one line per session: its path relative to ../shared and the SHA-256
of each file. Run it before and after a change and diff the two outputs:

    python benchmarks/snapshot_reports.py > /tmp/before.txt
    ... change ...
    python benchmarks/snapshot_reports.py > /tmp/after.txt && diff /tmp/before.txt /tmp/after.txt

A line that differs is a report that changed; `--show PATH` prints that session's report.json
so the two can be compared by eye.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT / "src"))

GENERATED_AT = "2026-01-01T00:00:00Z"
SKIP = {".md", ".tsv", ".keep"}


def sessions() -> list[Path]:
    found = []
    for top in ("corpus", "labelled"):
        found += [p for p in sorted((SHARED / top).rglob("*"))
                  if p.is_file() and p.suffix not in SKIP]
    return found


def report_files(path: Path) -> dict[str, bytes]:
    from skill_doctor import rubric as rubric_mod
    from skill_doctor.decode import decode_file
    from skill_doctor.decode.sessions import last
    from skill_doctor.render import render_pieces
    from skill_doctor.report import grade, report_json

    report = grade(last(decode_file(path)), rubric_mod.load(None), GENERATED_AT)
    return {"report.html": _joined(render_pieces(report)), "report.json": _joined(report_json(report))}


def _joined(pieces) -> bytes:
    """The bytes `write.write_file` writes for these pieces."""
    return b"".join(p if isinstance(p, bytes) else p.encode("utf-8", errors="replace")
                    for p in pieces)


def digest(path: Path) -> str:
    name = path.relative_to(SHARED).as_posix()
    try:
        files = report_files(path)
    except Exception as exc:  # a snapshot records a failure instead of stopping
        return f"{name}\terror {type(exc).__name__}: {exc}"
    return name + "".join(f"\t{hashlib.sha256(body).hexdigest()[:16]}" for body in files.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--show", metavar="PATH", help="print one session's report.json")
    args = parser.parse_args()
    if args.show:
        sys.stdout.write(report_files(SHARED / args.show)["report.json"].decode())
        return 0
    with ProcessPoolExecutor(args.j) as pool:
        for line in pool.map(digest, sessions(), chunksize=4):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
