"""Plain-text parsing speed: MB/s of the generic dialect, parser construction time, and time
per MB from 100 KB to 10 MB for ordinary logs and for the constructs that once made lexing
quadratic (it must stay flat: decoding is linear).

Builds generic role-marker logs deterministically (no randomness), then times the parse alone
and the whole decode (parse plus turn building), and the construction of the LALR parser: the
first build, a rebuild, and the in-process cache (there is no disk cache). The pathological
inputs are the cases of tests/test_plaintext_linear.py.

    PYTHONPATH=src:tests python benchmarks/bench_plaintext.py [--quick]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from skill_doctor.decode import decode_file  # noqa: E402
from skill_doctor.decode import textparse  # noqa: E402

PARAGRAPH = (
    "Looking at the failing test, the problem is in how the parser handles an empty list of\n"
    "arguments: it returns None instead of an empty tuple, and the caller then iterates it.\n"
    "I'll change the return value and add a regression test next to the existing ones.\n"
)


def build_log(size: int) -> str:
    """A generic log of about `size` bytes: prompts, replies, fenced commands and tool output."""
    chunks = []
    total = 0
    n = 0
    while total < size:
        n += 1
        chunk = (
            f"User: request number {n}: please fix the bug in module_{n % 97}.py\n\n"
            f"Assistant: {PARAGRAPH}{PARAGRAPH}\n"
            "```bash\npytest -q tests/test_module.py\n```\n\n"
            f"Tool: Bash pytest -q tests/test_module_{n % 13}.py\n"
            + "".join(f"tests/test_module.py::test_case_{i} PASSED\n" for i in range(12))
            + "12 passed in 0.12s\n\n"
        )
        chunks.append(chunk)
        total += len(chunk.encode("utf-8"))
    return "".join(chunks)


def best_of(runs: int, fn) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    start = time.perf_counter()
    import lark  # noqa: F401  (its import is timed apart from building the tables)
    imported = time.perf_counter() - start
    start = time.perf_counter()
    textparse.parser("generic")
    first = time.perf_counter() - start
    textparse.parser.cache_clear()
    start = time.perf_counter()
    textparse.parser("generic")
    again = time.perf_counter() - start
    start = time.perf_counter()
    textparse.parser("generic")
    in_process = time.perf_counter() - start
    print(f"lark import {imported * 1000:.1f} ms; parser construction: first {first * 1000:.1f} ms, "
          f"rebuilt {again * 1000:.1f} ms, cached in-process {in_process * 1000:.3f} ms")

    with tempfile.TemporaryDirectory() as folder:
        for megabytes in (1, 10):
            text = build_log(megabytes * 1024 * 1024)
            size = len(text.encode("utf-8")) / (1024 * 1024)
            path = Path(folder) / f"log-{megabytes}mb.txt"
            path.write_text(text, encoding="utf-8")
            runs = 3
            parse_time = best_of(runs, lambda: textparse.parse("generic", text))
            decode_time = best_of(runs, lambda: decode_file(path))
            turns = len(decode_file(path).turns)
            print(f"{size:5.1f} MB: parse {size / parse_time:6.1f} MB/s, "
                  f"decode {size / decode_time:6.1f} MB/s ({turns} turns)")
        flat(Path(folder), quick="--quick" in sys.argv)
    return 0


def cpu_best_of(runs: int, fn) -> float:
    """Least CPU time of `runs` calls: on a shared machine wall time says more about the
    neighbours than about the work."""
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def flat(folder: Path, quick: bool) -> None:
    """CPU seconds per MB of the whole decode at 0.1, 1 and 10 MB (quick: 0.1 and 1 MB)."""
    from test_plaintext_linear import PATHOLOGICAL

    sizes = (0.1, 1.0) if quick else (0.1, 1.0, 10.0)
    cases = {"generic log": ("", build_log(64 * 1024), "")}
    for name in ("generic-unclosed-fences", "generic-unclosed-details", "generic-tool-results",
                 "specstory-unclosed-details", "specstory-unclosed-tool-use",
                 "aider-unclosed-fence4", "aider-search-markers", "terminal-unclosed-fences",
                 "terminal-many-sections"):
        cases[name] = PATHOLOGICAL[name]
    print("\nCPU seconds per MB of decode_file (flat = linear):")
    print(f"{'input':<30}" + "".join(f"{f'{size:g} MB':>10}" for size in sizes) + f"{'max/min':>9}")
    for name, (head, unit, tail) in cases.items():
        per_mb = []
        for size in sizes:
            path = folder / "flat.txt"
            count = max(1, int(size * 1024 * 1024) // len(unit.encode("utf-8")))
            path.write_text(head + unit * count + tail, encoding="utf-8")
            megabytes = path.stat().st_size / (1024 * 1024)
            per_mb.append(cpu_best_of(1 if size >= 10 else 3, lambda: decode_file(path)) / megabytes)
        print(f"{name:<30}" + "".join(f"{t:>10.3f}" for t in per_mb)
              + f"{max(per_mb) / min(per_mb):>9.2f}")


if __name__ == "__main__":
    sys.exit(main())
