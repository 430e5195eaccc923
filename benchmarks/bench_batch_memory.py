"""Peak memory of `skill-doctor batch` as the number of sessions grows.

Synthesises an archive of N sessions in the system temp folder, copies of real corpus sessions
of several harnesses (../shared/corpus; each copy under its own file name, with its session id
made unique where the file records one, so every copy gets its own report folder), and runs
`batch` over it in a fresh process for each N and -j, printing the wall time, the peak resident
memory of the main process and of the largest worker. Memory should follow -j, not N: pages
and records go to disk as each session is graded, at most a few sessions per worker are given
out ahead of the next result to hand on (batch.AHEAD_PER_WORKER), and a row of the index keeps
only what it shows. What does grow with N is the index itself (the rows, and the index pages,
built one at a time), about a kilobyte a session.

    python3 benchmarks/bench_batch_memory.py [N ...] [-j J ...] [--examples] [--src DIR]

Defaults: N = 1000 10000, -j 2. --examples copies the two bundled example sessions instead of
the corpus; --src runs another checkout's src/ folder (to compare before and after a change).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"

# Small and mid-sized real sessions of several harnesses (a few kB to 90 kB; graded, too short
# and multi-turn ones), so 10,000 of them take minutes, not hours.
CORPUS_SESSIONS = (
    "claude-code/M-Claude_1249ff48-75ab.jsonl",
    "claude-code/M-Claude_8914a511-2982.jsonl",
    "claude-code/M-Claude_d9c6fe1d-de36.jsonl",
    "codex/0h-n0_local-voice-assistant-codex_2025-12-26T01-48-36.jsonl",
    "aider/metadata-aider.aider.chat.history.md",
    "plain-log/ticketFlow1_prompt-log.md",
    "swe-agent-traj/sweagenttestrepo-1c2844.traj",
    "mini-swe-agent/local.traj.json",
    "fixtures-from-other-projects/pi/arcreflex_with-tools.jsonl",
    "gemini-export-md/mcp-tools-debt_chat_share.md",
)

CHILD = """
import resource, sys
sys.path.insert(0, {src!r})
from skill_doctor.cli import main
code = main(["batch", "sessions", "-o", "out", "-j", {jobs!r}])
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(code, own, kids, file=sys.stderr)
"""


def _sources(examples: bool) -> list[tuple[str, str, str | None]]:
    """(file name, text, session id to make unique or None) for each source session."""
    sys.path.insert(0, str(ROOT / "src"))
    from skill_doctor.decode import decode_file

    if examples:
        paths = [ROOT / "examples" / "clean-fix.jsonl", ROOT / "examples" / "retry-fix.jsonl"]
    else:
        if not CORPUS.is_dir():
            sys.exit(f"the corpus is not at {CORPUS}; use --examples")
        paths = [CORPUS / rel for rel in CORPUS_SESSIONS]
    out = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        sid = decode_file(path).session_id
        # An id the file records as a JSON string is rewritten per copy; one taken from the
        # file name is made unique by the copy's name.
        out.append((path.name, text, sid if sid and json.dumps(sid) in text else None))
    return out


def write_sessions(folder: Path, n: int, sources: list[tuple[str, str, str | None]]) -> None:
    folder.mkdir()
    for i in range(n):
        name, text, sid = sources[i % len(sources)]
        if sid:
            text = text.replace(json.dumps(sid), json.dumps(f"{sid}-copy{i:06d}"))
        (folder / f"c{i:06d}-{name}").write_text(text, encoding="utf-8")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("counts", nargs="*", type=int, default=[1000, 10000])
    parser.add_argument("-j", dest="jobs", action="append", default=None)
    parser.add_argument("--examples", action="store_true")
    parser.add_argument("--src", default=str(ROOT / "src"))
    args = parser.parse_args(argv)
    sources = _sources(args.examples)
    print(f"sources: {len(sources)} {'example' if args.examples else 'corpus'} sessions; "
          f"temp folder {tempfile.gettempdir()}")
    print(f"{'sessions':>8} {'-j':>3} {'seconds':>8} {'main MiB':>9} {'worker MiB':>10}")
    for n in args.counts:
        with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
            work = Path(tmp)
            write_sessions(work / "sessions", n, sources)
            for jobs in args.jobs or ["2"]:
                start = time.perf_counter()
                done = subprocess.run([sys.executable, "-c", CHILD.format(src=args.src,
                                                                          jobs=jobs)],
                                      cwd=work, capture_output=True, text=True, check=False)
                seconds = time.perf_counter() - start
                code, own, kids = done.stderr.strip().splitlines()[-1].split()
                if code != "0":
                    sys.exit(f"batch exited {code}: {done.stderr[-2000:]}")
                print(f"{n:>8} {jobs:>3} {seconds:>8.1f} {int(own) / 1024:>9.1f} "
                      f"{int(kids) / 1024 if jobs != '1' else 0:>10.1f}", flush=True)
                shutil.rmtree(work / "out", ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
