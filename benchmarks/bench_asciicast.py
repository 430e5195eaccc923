"""asciinema recording decode speed: a 10 MB `.cast` of a headless Claude Code run.

Builds a recording deterministically (no randomness): the harness's shell prompt and typed
`claude -p '...'` command, then stream-json records (assistant text, Bash calls, their results)
printed in pieces of a few hundred bytes each, as a terminal receives them, between ANSI-coloured
debug lines of the client. Times `decode_file` (events read, output rebuilt, ANSI stripped,
the inner JSON decoded, times and lines mapped back) and the whole `skill-doctor report`, and
the largest real recording beside the repository when it is there.

    PYTHONPATH=src python benchmarks/bench_asciicast.py [MB]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "labelled" / "tb1-claude-code"
SID = "bench000-0000-4000-8000-000000000000"


def _record_lines(n: int) -> list[str]:
    call = f"toolu_{n:08d}"
    return [
        json.dumps({"type": "assistant", "message": {
            "id": f"msg_{n}", "role": "assistant", "model": "claude-sonnet-4-5", "content": [
                {"type": "text", "text": f"Step {n}: checking the build output before the next "
                                         f"change to module_{n % 97}.py."}]},
            "parent_tool_use_id": None, "session_id": SID, "uuid": f"a{n}"}),
        json.dumps({"type": "assistant", "message": {
            "id": f"msg_{n}", "role": "assistant", "content": [
                {"type": "tool_use", "id": call, "name": "Bash",
                 "input": {"command": f"python -m pytest -q tests/test_module_{n % 13}.py"}}]},
            "parent_tool_use_id": None, "session_id": SID, "uuid": f"b{n}"}),
        json.dumps({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call,
             "content": "".join(f"tests/test_module.py::test_case_{i} PASSED\n" for i in range(12))
             + "12 passed in 0.12s"}]},
            "parent_tool_use_id": None, "session_id": SID, "uuid": f"c{n}"}),
    ]


def build_cast(size: int) -> str:
    """A v2 recording of about `size` bytes."""
    header = {"version": 2, "width": 160, "height": 40, "timestamp": 1767225600,
              "env": {"SHELL": "/bin/bash", "TERM": "tmux-256color"}}
    out = [json.dumps(header)]
    clock = 0.0

    def event(code: str, data: str) -> None:
        nonlocal clock
        clock += 0.0137
        out.append(json.dumps([round(clock, 6), code, data]))

    event("o", "\x1b[?2004hroot@bench:/app# ")
    event("i", "claude --verbose --output-format stream-json -p 'Make the test suite pass' "
               "--allowedTools Bash Edit Read; tmux wait -S done\r")
    event("o", json.dumps({"type": "system", "subtype": "init", "cwd": "/app", "session_id": SID,
                           "tools": ["Bash", "Edit", "Read"], "model": "claude-sonnet-4-5"}) + "\r\n")
    total = sum(len(line) + 1 for line in out)
    n = 0
    while total < size:
        n += 1
        start = len(out)
        event("o", f"[log_{n:06x}] sending request {{\r\n  method: \x1b[32m'post'\x1b[39m,\r\n}}\r\n")
        for record in _record_lines(n):
            text = record + "\r\n"
            for i in range(0, len(text), 300):  # a terminal receives a line in pieces
                event("o", text[i:i + 300])
        total += sum(len(line) + 1 for line in out[start:])
    event("o", json.dumps({"type": "result", "subtype": "success", "is_error": False,
                           "result": "All tests pass.", "session_id": SID}) + "\r\n")
    return "\n".join(out) + "\n"


def timed(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cpu_timed(fn, runs: int = 3) -> float:
    """CPU seconds of this process: steadier than wall time on a shared machine."""
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def _has_orjson() -> bool:
    try:
        import orjson  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> int:
    from skill_doctor.decode import decode_file

    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.cast"
        path.write_text(build_cast(int(megabytes * 1024 * 1024)), encoding="utf-8")
        size = path.stat().st_size / (1024 * 1024)
        t = decode_file(path)
        assert t.harness == "claude-code" and t.problem is None, (t.harness, t.problem)
        seconds = timed(lambda: decode_file(path))
        cpu = cpu_timed(lambda: decode_file(path))
        print(f"synthetic cast {size:.1f} MB, {len(t.turns)} turns: decode {seconds:.2f} s wall, "
              f"{cpu:.2f} s CPU ({size / seconds:.1f} MB/s; medians of 3; orjson "
              f"{'installed' if _has_orjson() else 'absent'})")
        env = dict(os.environ, SOURCE_DATE_EPOCH="1767225600", HOME=tmp)
        report = timed(lambda: subprocess.run(
            [sys.executable, "-m", "skill_doctor", "report", str(path), "-o", "r", "--force"],
            cwd=tmp, env=env, check=True, capture_output=True), runs=3)
        print(f"synthetic cast {size:.1f} MB: skill-doctor report {report:.2f} s (median of 3)")
    if REAL.is_dir():
        largest = max(REAL.glob("*.cast"), key=lambda p: p.stat().st_size)
        size = largest.stat().st_size / (1024 * 1024)
        seconds = timed(lambda: decode_file(largest))
        cpu = cpu_timed(lambda: decode_file(largest))
        print(f"real cast {largest.name} {size:.1f} MB: decode {seconds:.2f} s wall, "
              f"{cpu:.2f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
