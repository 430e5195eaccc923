"""Time and peak memory of the pipeline on hostile inputs, one fresh process per case.

    PYTHONPATH=src python3 benchmarks/hostile_inputs.py

Cases: a 50 MB single JSONL line, a 100 MB tool output line (over the 64 MiB line cap, kept
as head and tail), 40 MB of plain text (over the 32 MiB cap), JSON nested
100,000 deep (objects and arrays), a folder of 10,000 files, 1 MB of NUL bytes. Each case runs
`skill-doctor report` in a child process; the figures are wall time, peak RSS (ru_maxrss of the
child) and the report status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TURNS = ('{"parentUuid":null,"isSidechain":false,"type":"user","uuid":"u1","sessionId":"s",'
         '"message":{"role":"user","content":"Fix the bug"}}\n'
         '{"parentUuid":"u1","isSidechain":false,"type":"assistant","uuid":"a1","sessionId":"s",'
         '"message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Done."}]}}\n')


def make_cases(base: Path) -> dict[str, Path]:
    cases = {}
    big = base / "line50mb.jsonl"
    with open(big, "w") as fh:
        fh.write(TURNS)
        fh.write('{"parentUuid":null,"type":"user","uuid":"big","message":{"role":"user",'
                 '"content":"')
        chunk = "A" * (1 << 20)
        for _ in range(50):
            fh.write(chunk)
        fh.write('"}}\n')
    cases["50 MB single JSONL line"] = big
    # A failing test run whose output (twice: content and toolUseResult) is past the 64 MiB
    # line cap: the call must keep its exit status and the end of its output.
    tool = base / "tool100mb.jsonl"
    with open(tool, "w") as fh:
        fh.write(TURNS)
        fh.write('{"parentUuid":"a1","type":"assistant","uuid":"a2","sessionId":"s","message":'
                 '{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t1",'
                 '"name":"Bash","input":{"command":"pytest"}}]}}\n')
        passed = "test_x.py::test_case PASSED\\n" * (1 << 15)
        fh.write('{"parentUuid":"a2","type":"user","uuid":"u2","sessionId":"s","message":'
                 '{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1",'
                 '"is_error":true,"content":"')
        for _ in range(50):
            fh.write(passed)
        fh.write('1 failed"}]},"toolUseResult":{"stdout":"')
        for _ in range(50):
            fh.write(passed)
        fh.write('1 failed","stderr":"","interrupted":false}}\n')
    cases["100 MB tool output line (cap 64 MiB)"] = tool
    text = base / "text40mb.txt"
    with open(text, "w") as fh:
        line = "User: " + "words " * 100 + "\nAssistant: " + "reply " * 100 + "\n"
        while fh.tell() < 40 * (1 << 20):
            fh.write(line * 100)
    cases["40 MB plain text (cap 32 MiB)"] = text
    for shape, opener, closer in (("objects", '{"a":', "}"), ("arrays", "[", "]")):
        deep = base / f"deep-{shape}.jsonl"
        inner = opener * 100_000 + ("1" if shape == "objects" else "") + closer * 100_000
        deep.write_text(TURNS + '{"parentUuid":null,"type":"user","x":' + inner + "}\n")
        cases[f"nesting 100,000 deep ({shape})"] = deep
    folder = base / "many"
    folder.mkdir()
    for i in range(10_000):
        (folder / f"f{i:05d}.txt").write_bytes(b"")
    (folder / "session.jsonl").write_text(TURNS)
    cases["folder of 10,000 files"] = folder
    nul = base / "nul.bin"
    nul.write_bytes(b"\0" * (1 << 20))
    cases["1 MB of NUL bytes"] = nul
    return cases


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        cases = make_cases(base)
        env = dict(os.environ, SOURCE_DATE_EPOCH="1767225600",
                   PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
        print(f"{'case':36} {'seconds':>8} {'peak RSS MB':>12}  status")
        for n, (label, path) in enumerate(cases.items()):
            out = base / f"out{n}"
            code = ("import resource, sys; from skill_doctor.cli import main; rc = main(sys.argv[1:]);"
                    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr);"
                    "sys.exit(rc)")
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", code, "report", str(path), "-o",
                                   out.name], cwd=base, env=env, capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            rss_kb = int(done.stderr.strip().splitlines()[-1])
            status = json.loads((out / "report.json").read_text())["status"] \
                if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[:80]}"
            print(f"{label:36} {elapsed:8.2f} {rss_kb / 1024:12.0f}  {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
