"""How long the report takes, and how big it gets, for a 10,000-turn session.

Builds a synthetic Claude Code session (deterministic) with every kind of turn in volume:
thousands of distinct files read, hundreds of edits with whole-file originals (so net diffs are
computed), failing and retried shell commands, and long tool outputs. Then it times each stage
(decode, grade with the overview, render) and prints the sizes of report.html and report.json.

    PYTHONPATH=src:tests python3 benchmarks/bench_report.py [TURNS] [REPEATS]

The issue's bounds: render under 2 s and report.html under 5 MB for 10,000 turns.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from sessionkit import claude_jsonl  # noqa: E402
from skill_doctor import rubric  # noqa: E402
from skill_doctor.decode import decode_file  # noqa: E402
from skill_doctor.render import render  # noqa: E402
from skill_doctor.report import grade, to_json  # noqa: E402


def module_text(i: int, lines: int = 200) -> str:
    return "".join(f"def f{i}_{n}(x):\n    return x + {n}  # line {n}\n" for n in range(lines // 2))


def steps(turns: int) -> list[dict]:
    out: list[dict] = [{"user": "Fix the failing totals in src/app/module_0.py and make the tests pass"}]
    n = 0
    while len(out) < turns:
        n += 1
        k = n % 10
        path = f"/home/dev/proj/src/app/module_{n % 3000}.py"
        if k in (0, 5):
            out.append({"assistant": f"Looking at step {n}: the totals are computed in several places."})
        elif k in (1, 2, 6):
            out.append({"tool": "Read", "input": {"file_path": path},
                        "output": module_text(n % 3000, 60)})
        elif k == 3 and n % 20 == 3:
            before = module_text((n // 20) % 100)
            out.append({"tool": "Edit", "input": {"file_path": f"/home/dev/proj/src/app/module_{(n // 20) % 100}.py",
                                                  "old_string": "return x + 1  # line 1",
                                                  "new_string": f"return x + 2  # line 1 (fix {n})"},
                        "output": "The file has been updated.",
                        "result": {"originalFile": before, "structuredPatch": []}})
        elif k in (3, 7):
            failing = n % 7 == 0
            out.append({"tool": "Bash", "input": {"command": "python -m pytest -q tests"},
                        "output": ("E" * 30000 + "\n1 failed, 20 passed") if failing
                        else "20 passed in 0.5s", "error": failing})
        elif k == 4:
            out.append({"tool": "Grep", "input": {"pattern": f"total_{n}", "path": "/home/dev/proj/src"},
                        "output": f"src/app/module_{n % 3000}.py:3: total_{n} = 0"})
        else:
            out.append({"tool": "TodoWrite", "input": {"todos": [{"content": f"step {n}",
                                                                  "status": "completed"}]},
                        "output": "ok"})
    out[-1] = {"assistant": "All tests pass now: the totals are fixed and 20 tests pass."}
    return out[:turns]


def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / "long.jsonl"
        session.write_text(claude_jsonl(steps(turns)), encoding="utf-8")
        print(f"session: {turns} steps, {session.stat().st_size / 1e6:.1f} MB of JSONL")
        rub = rubric.load()
        times: dict[str, list[float]] = {"decode": [], "grade": [], "render": [], "json": []}
        for _ in range(repeats):
            t0 = time.perf_counter()
            transcript = decode_file(session)
            t1 = time.perf_counter()
            report = grade(transcript, rub, "2026-01-01T00:00:00Z")
            t2 = time.perf_counter()
            html = render(report)
            t3 = time.perf_counter()
            data = json.dumps(to_json(report), indent=2, sort_keys=True, ensure_ascii=False)
            t4 = time.perf_counter()
            for name, value in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                times[name].append(value)
    ov = report.overview
    print(f"turns decoded: {len(transcript.turns)}; findings: {len(report.findings)}; "
          f"timeline cells: {len(ov.timeline.cells)} ({ov.timeline.bucket} turns each); "
          f"file rows: {len(ov.files)} (+{ov.more_files} in json only); diffs: {len(ov.diffs)}; "
          f"cited turns in the appendix: {len(ov.appendix)}")
    for name, values in times.items():
        print(f"{name:>7}: median {statistics.median(values):.3f} s  (min {min(values):.3f} s, "
              f"{repeats} runs)")
    render_total = statistics.median(times["grade"]) + statistics.median(times["render"])
    print(f"grade + render (the report from a decoded session): {render_total:.3f} s")
    print(f"report.html: {len(html.encode()) / 1e6:.2f} MB; report.json: "
          f"{len(data.encode()) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
