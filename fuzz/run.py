"""The long fuzz run: mutated seed sessions through the whole pipeline, every decoder.

    PYTHONPATH=src:tests python3 fuzz/run.py [--iterations N] [--seconds S] [--seed K]

Each iteration takes a seed file (the examples and the smallest file of each corpus folder),
applies 1-4 random mutations (truncation, dropped/duplicated/swapped lines, flipped bytes,
fields removed/retyped/replaced by huge or deeply nested values), and runs decode -> grade ->
render -> JSON, once sniffed and once forced through each registered decoder. A failure is an
exception, an invalid status or the decoder safety net firing; failing inputs are saved under
fuzz/failures/ (ignored by git) and the figures are printed at the end. Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent / "tests")]

import fuzzkit  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=0, help="stop after this long (0: no limit)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    seeds = [(p, fuzzkit.read_seed(p)) for p in fuzzkit.seed_files()]
    harnesses = [None, *(fuzzkit.harness_of(n) for n in fuzzkit.decoder_names())]
    failures: Counter[str] = Counter()
    saved = HERE / "failures"
    tried = 0
    by_mutation: Counter[str] = Counter()
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "input"
        for i in range(args.iterations):
            if args.seconds and time.monotonic() - start > args.seconds:
                break
            source, data = seeds[rng.randrange(len(seeds))]
            data, applied = fuzzkit.mutate(data, rng, rounds=rng.randint(1, 4))
            by_mutation.update(applied)
            target.write_bytes(data)
            for harness in harnesses:
                tried += 1
                problem = fuzzkit.run_pipeline(target, harness)
                if problem is not None:
                    key = problem.splitlines()[0][:160]
                    failures[key] += 1
                    saved.mkdir(exist_ok=True)
                    digest = hashlib.sha1(data).hexdigest()[:12]
                    (saved / f"{digest}.bin").write_bytes(data)
                    if failures[key] == 1:
                        print(f"FAIL [{harness or 'sniffed'}] {source.name} {applied}: {key}",
                              flush=True)
    elapsed = time.monotonic() - start
    print(f"seeds: {len(seeds)}; decoders: {len(harnesses) - 1} (+ sniffing)")
    print(f"mutated inputs: {i + 1}; pipeline runs: {tried}; elapsed: {elapsed:.1f} s "
          f"({tried / elapsed:.0f} runs/s)")
    print("mutations applied: " + ", ".join(f"{k}={v}" for k, v in sorted(by_mutation.items())))
    print(f"failures: {sum(failures.values())} ({len(failures)} distinct)")
    for key, count in failures.most_common():
        print(f"  {count:5d}  {key}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
