"""Every stage linear on adversarial shapes: seconds per MB at 0.1, 1 and 10 MB.

A session handed to a user is hostile input. Each shape below is built to make some stage's
patterns or scanners do more than linear work (runs of blank lines in a Write or Edit, a shell
command continued with backslashes or left inside an open quote, `python -c` full of `open(`,
cookie and authorization headers followed by runs of colons or digits, user messages repeating
`<a `, a long command typed key by key in an asciinema recording). Each size of each shape is
decoded, turned into facts, graded by the detectors, graded whole (redaction and the page's
data included) and rendered, in a child process with a time limit, and the time of each stage
is printed per MB.

The script fails (exit 1) when a stage's time per MB at 10 MB is more than 1.5 times its time
per MB at 0.1 MB, or when a size does not finish within the limit.

    PYTHONPATH=src python3 benchmarks/bench_adversarial.py [--sizes 0.1,1,10] [--limit 300]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("decode", "facts", "detectors", "grade", "page")
GROWTH_LIMIT = 1.5


# -- the shapes: each a function of a repeat count giving a session file's text ----------------


def _claude(steps: list[dict]) -> str:
    """Claude Code JSONL for a list of steps: {user}, {assistant}, {tool, input, output}."""
    lines, parent = [], None
    for n, step in enumerate(steps, start=1):
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        base = {"parentUuid": parent, "isSidechain": False, "type": "user", "uuid": uuid,
                "sessionId": "adversarial", "cwd": "/home/dev/proj", "version": "2.1.1",
                "timestamp": f"2026-01-01T10:{n // 3600 % 60:02d}:{n % 60:02d}.000Z"}
        if "user" in step:
            base["message"] = {"role": "user", "content": step["user"]}
        elif "assistant" in step:
            base.update(type="assistant")
            base["message"] = {"role": "assistant", "content": [{"type": "text",
                                                                "text": step["assistant"]}]}
        else:
            call = f"toolu_{n:08d}"
            lines.append(json.dumps({**base, "type": "assistant", "message": {
                "role": "assistant", "content": [{"type": "tool_use", "id": call,
                                                  "name": step["tool"], "input": step["input"]}]}}))
            parent = uuid
            uuid = f"00000000-0000-4000-9000-{n:012d}"
            base.update(uuid=uuid, parentUuid=parent)
            base["message"] = {"role": "user", "content": [{"type": "tool_result",
                                                           "tool_use_id": call,
                                                           "content": step["output"]}]}
        lines.append(json.dumps(base))
        parent = uuid
    return "\n".join(lines) + "\n"


def blank_write(n: int) -> str:
    content = "x = 1\n" + " \n\t\n" * n + "import os\n"
    return _claude([{"user": "Write a.py"}, {"tool": "Write", "input": {
        "file_path": "/home/dev/proj/a.py", "content": content}, "output": "ok"},
        {"assistant": "Written."}])


def blank_edit(n: int) -> str:
    return _claude([{"user": "Edit a.py"}, {"tool": "Edit", "input": {
        "file_path": "/home/dev/proj/a.py", "old_string": "a = 1",
        "new_string": "\n" * n + "# TODO later"}, "output": "ok"}, {"assistant": "Edited."}])


def backslash(n: int) -> str:
    return _claude([{"user": "Run it"}, {"tool": "Bash", "input": {
        "command": "echo a \\\n" * n + "done"}, "output": "a"}, {"assistant": "Ran it."}])


def open_quote(n: int) -> str:
    return _claude([{"user": "Run it"}, {"tool": "Bash", "input": {
        "command": "git commit -m 'subject\n" + "body line\n" * n}, "output": "a"},
        {"assistant": "Committed."}])


def python_open(n: int) -> str:
    return _claude([{"user": "Run it"}, {"tool": "Bash", "input": {
        "command": 'python -c "' + "open('x.txt', 'w');" * n + '"'}, "output": ""},
        {"assistant": "Ran it."}])


def headers(n: int) -> str:
    colons, digits = ":" * n, "1" * n
    return _claude([{"user": f"cookie: {colons}\nset-cookie: {digits}"},
                    {"tool": "Bash", "input": {"command": f'curl -u "{colons}'},
                     "output": f"authorization: {colons}\ncookie: {digits}"},
                    {"assistant": f"set-cookie: {colons}"}])


def header_names(n: int) -> str:
    """Header names repeated with no value after them (each one a place a pattern starts)."""
    return _claude([{"user": "cookie:" * n}, {"assistant": "authorization:" * n},
                    {"tool": "Bash", "input": {"command": "set-cookie:" * n},
                     "output": "authorization:" * n}])


def anchors(n: int) -> str:
    return _claude([{"user": "<a " * n}, {"assistant": "I read the links."},
                    {"user": "<a href=" * n}, {"assistant": "Done."}])


def typed_command(n: int) -> str:
    """An asciinema recording in which a long command is typed one key at a time."""
    command = "echo " + "word " * n
    events = [json.dumps({"version": 2, "width": 120, "height": 40, "timestamp": 1767225600}),
              json.dumps([0.1, "o", "$ "])]
    t = 0.2
    for ch in command:
        events.append(json.dumps([round(t, 4), "i", ch]))
        events.append(json.dumps([round(t, 4), "o", ch]))
        t += 0.001
    events.append(json.dumps([round(t, 4), "i", "\r"]))
    events.append(json.dumps([round(t + 0.01, 4), "o", "\r\n" + "word " * 10 + "\r\n$ "]))
    return "\n".join(events) + "\n"


SHAPES = {"blank lines in a Write": (blank_write, ".jsonl"),
          "blank lines in an Edit": (blank_edit, ".jsonl"),
          "lines continued with \\": (backslash, ".jsonl"),
          "an open quote over lines": (open_quote, ".jsonl"),
          "python -c full of open(": (python_open, ".jsonl"),
          "headers then : or digits": (headers, ".jsonl"),
          "header names repeated": (header_names, ".jsonl"),
          "user messages of '<a '": (anchors, ".jsonl"),
          "a long typed command (cast)": (typed_command, ".cast")}


def sized(make, megabytes: float) -> str:
    """The shape's text at about `megabytes` MB (the repeat count scaled from a probe)."""
    probe = 1000
    per_repeat = max(1, (len(make(2 * probe)) - len(make(probe))) / probe)
    return make(max(1, int(megabytes * 1e6 / per_repeat)))


# -- one measurement, in a child process -------------------------------------------------------


def _measure(path: str) -> dict[str, float]:
    """Each stage's seconds on the session at `path` (run in the child)."""
    sys.path.insert(0, str(ROOT / "src"))
    from skill_doctor import facts as facts_mod, rubric
    from skill_doctor.decode import decode_file
    from skill_doctor.decode.sessions import last
    from skill_doctor.render import render
    from skill_doctor.report import grade
    from skill_doctor.scoring import score

    loaded = rubric.load()
    times = {}
    start = time.perf_counter()
    transcript = last(decode_file(Path(path)))
    times["decode"] = time.perf_counter() - start
    start = time.perf_counter()
    facts = facts_mod.compute(transcript)
    times["facts"] = time.perf_counter() - start
    start = time.perf_counter()
    score(facts, loaded)
    times["detectors"] = time.perf_counter() - start
    start = time.perf_counter()
    report = grade(transcript, loaded, "2026-01-01T00:00:00Z")
    times["grade"] = time.perf_counter() - start
    start = time.perf_counter()
    render(report)
    times["page"] = time.perf_counter() - start
    return times


def measure(text: str, suffix: str, limit: float) -> dict[str, float] | None:
    """The stages' seconds for one session text, or None when it did not finish in time."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "session" + suffix)
        path.write_text(text, encoding="utf-8")
        code = (f"import json, sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); "
                f"import bench_adversarial as b; print(json.dumps(b._measure({str(path)!r})))")
        try:
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  timeout=limit, env={**os.environ, "HOME": tmp})
        except subprocess.TimeoutExpired:
            return None
        if done.returncode != 0:
            raise SystemExit(f"the measurement failed: {done.stderr.strip()[-500:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="0.1,1,10", help="sizes in MB (default 0.1,1,10)")
    parser.add_argument("--limit", type=float, default=300, help="seconds allowed per size")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    failed = []
    print(f"{'shape':30} {'stage':10} " + " ".join(f"{f's/MB @{s:g}':>10}" for s in sizes)
          + f" {'growth':>7}")
    for name, (make, suffix) in SHAPES.items():
        per_mb: dict[str, list[float | None]] = {stage: [] for stage in STAGES}
        for size in sizes:
            text = sized(make, size)
            megabytes = len(text.encode("utf-8")) / 1e6
            times = measure(text, suffix, args.limit)
            for stage in STAGES:
                per_mb[stage].append(None if times is None else times[stage] / megabytes)
        for stage in STAGES:
            values = per_mb[stage]
            first, final = values[0], values[-1]
            growth = None if first is None or final is None else final / max(first, 1e-9)
            cells = " ".join(f"{'timeout':>10}" if v is None else f"{v:10.3f}" for v in values)
            print(f"{name:30} {stage:10} {cells} {'-' if growth is None else f'{growth:7.2f}'}")
            if final is None or (growth is not None and growth > GROWTH_LIMIT):
                failed.append(f"{name}: {stage}")
    if failed:
        print(f"not linear (time per MB grew more than {GROWTH_LIMIT}x from "
              f"{sizes[0]:g} to {sizes[-1]:g} MB, or timed out): " + "; ".join(failed))
        return 1
    print(f"every stage linear: time per MB at {sizes[-1]:g} MB within {GROWTH_LIMIT}x of "
          f"{sizes[0]:g} MB on every shape")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
