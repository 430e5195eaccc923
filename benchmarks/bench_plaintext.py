"""Plain-text parsing speed: MB/s of the generic dialect and parser construction time.

Builds 1 MB and 10 MB generic role-marker logs deterministically (no randomness), then times
the Lark parse alone and the whole decode (parse plus turn building), and the construction of
the LALR parser: the first build, a rebuild, and the in-process cache (there is no disk cache).

    PYTHONPATH=src python benchmarks/bench_plaintext.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
