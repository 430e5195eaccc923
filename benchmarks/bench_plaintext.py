"""Plain-text speed and memory: `skill-doctor report` end to end on plain-text logs (MB/s of
CPU time, peak RSS), the generic dialect's parse and decode alone, parser construction, and
time per MB from 100 KB to 10 MB for ordinary logs and for the constructs that once made
lexing quadratic (it must stay flat: decoding is linear).

End to end: bench_pipeline.py's generic logs of 10 and 100 MB (`build_plaintext`, kept in the
system's temporary folder) and a 10 MB concatenation of the real plain-text logs of the shared
corpus beside the repository (generic dialect: prompt logs, Claude exports and renders, Cursor
and Gemini exports), each graded by `python -m skill_doctor report LOG -o DIR` in a child
process of this interpreter running this checkout's `src/`, HOME a temporary folder; CPU
seconds (user + system) and peak RSS of the child: the least CPU time of `--runs` runs (on a
shared machine the neighbours' load only ever adds to it) and the largest peak. Plain text is read
up to 32 MiB (`decode.MAX_TEXT_BYTES`), so the 100 MB log grades its first 32 MiB: MB/s is
given of the file and of what was read.

The rest builds generic role-marker logs deterministically (no randomness) and times the
parse alone and the whole decode (parse plus turn building), and the construction of the LALR
parser: the first build, a rebuild, and the in-process cache (there is no disk cache). The
pathological inputs are the cases of tests/test_plaintext_linear.py.

    PYTHONPATH=src:tests python benchmarks/bench_plaintext.py [--quick] [--runs N] [--e2e]

`--quick`: end to end on 10 MB only, one run, and the flat table up to 1 MB; `--e2e`: only the
end-to-end figures.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests"), str(ROOT / "benchmarks")]

from skill_doctor.decode import MAX_TEXT_BYTES, decode_file  # noqa: E402
from skill_doctor.decode import textparse  # noqa: E402
from bench_pipeline import CORPUS, INPUTS, MB, build_plaintext  # noqa: E402

# Real plain-text logs of the generic dialect in the shared corpus, concatenated for the mix.
REAL_LOGS = ("plain-log", "claude-export", "claude-derived-md", "cursor-export", "gemini-export-md")

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


def build_real_mix(size_mb: int) -> Path | None:
    """The corpus's real generic-dialect logs, concatenated (in name order, again and again)
    up to `size_mb`; None without the corpus."""
    target = INPUTS / f"plain-real-{size_mb}mb.txt"
    if target.exists() and target.stat().st_size >= size_mb * MB:
        return target
    sources = sorted(p for folder in REAL_LOGS if (CORPUS / folder).is_dir()
                     for p in (CORPUS / folder).iterdir() if p.suffix in (".md", ".txt"))
    if not sources:
        return None
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sources]
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(target, "w", encoding="utf-8") as out:
        while written < size_mb * MB:
            for text in texts:
                text = text if text.endswith("\n") else text + "\n"
                out.write(text)
                written += len(text.encode("utf-8"))
    return target


def report_run(path: Path) -> tuple[float, float]:
    """(CPU seconds, peak RSS MiB) of one `skill-doctor report` of `path` in a child process."""
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "HOME": folder,
               "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"),
                                                         os.environ.get("PYTHONPATH")) if p)}
        proc = subprocess.Popen([sys.executable, "-m", "skill_doctor", "report", str(path),
                                 "-o", "r"], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        errors = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"report of {path} failed: {errors[-500:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def end_to_end(runs: int, quick: bool) -> None:
    """`report` on the generic logs of 10 and 100 MB and on 10 MB of real logs."""
    inputs = [("generic log 10 MB", build_plaintext(10))]
    if not quick:
        inputs.append(("generic log 100 MB", build_plaintext(100)))
    real = build_real_mix(10) if CORPUS.is_dir() else None
    if real is not None:
        inputs.append(("real logs 10 MB", real))
    print(f"\nskill-doctor report end to end (CPU seconds, least of {runs} runs; peak RSS the most):")
    print(f"{'input':<22}{'MB':>7}{'read MB':>9}{'CPU s':>8}{'MB/s':>7}{'read MB/s':>11}"
          f"{'peak RSS':>10}")
    for name, path in inputs:
        size = path.stat().st_size / MB
        read = min(path.stat().st_size, MAX_TEXT_BYTES) / MB
        measured = [report_run(path) for _ in range(runs)]
        cpu = min(m[0] for m in measured)
        peak = max(m[1] for m in measured)
        print(f"{name:<22}{size:>7.1f}{read:>9.1f}{cpu:>8.2f}{size / cpu:>7.1f}{read / cpu:>11.1f}"
              f"{peak:>8.0f} MiB")


def main() -> int:
    quick = "--quick" in sys.argv
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else (1 if quick else 3)
    end_to_end(runs, quick)
    if "--e2e" in sys.argv:
        return 0
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
