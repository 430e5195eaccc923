"""Peak memory of `skill-doctor batch` as the number of sessions grows.

Writes N copies of the bundled example sessions (session ids rewritten, so every copy gets its
own report folder) and runs `batch` over them in a fresh process for each N and -j, printing
the peak resident memory of the main process and of the largest worker. Memory should follow
-j, not N: pages and records go to disk as each session is graded, and a row of the index keeps
only what it shows.

    python3 benchmarks/bench_batch_memory.py [N ...]      (default: 200 1000 4000)
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import resource, sys
sys.path.insert(0, {src!r})
from skill_doctor.cli import main
code = main(["batch", "sessions", "-o", "out", "-j", {jobs!r}])
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(code, own, kids, file=sys.stderr)
"""


def write_sessions(folder: Path, n: int) -> None:
    folder.mkdir()
    sources = [ROOT / "examples" / "clean-fix.jsonl", ROOT / "examples" / "retry-fix.jsonl"]
    texts = [p.read_text(encoding="utf-8").splitlines() for p in sources]
    for i in range(n):
        lines = texts[i % len(texts)]
        out = []
        for line in lines:
            record = json.loads(line)
            if "sessionId" in record:
                record["sessionId"] = f"copy-{i:06d}"
            out.append(json.dumps(record))
        (folder / f"s{i:06d}.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")


def main(counts: list[int]) -> None:
    print(f"{'sessions':>8} {'-j':>3} {'seconds':>8} {'main MiB':>9} {'worker MiB':>10}")
    for n in counts:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            write_sessions(work / "sessions", n)
            for jobs in ("1", "2"):
                start = time.perf_counter()
                done = subprocess.run([sys.executable, "-c", CHILD.format(src=str(ROOT / "src"),
                                                                          jobs=jobs)],
                                      cwd=work, capture_output=True, text=True, check=False)
                seconds = time.perf_counter() - start
                code, own, kids = done.stderr.strip().splitlines()[-1].split()
                print(f"{n:>8} {jobs:>3} {seconds:>8.1f} {int(own) / 1024:>9.1f} "
                      f"{int(kids) / 1024 if jobs != '1' else 0:>10.1f}")
                subprocess.run(["rm", "-rf", str(work / "out")], check=False)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [200, 1000, 4000])
