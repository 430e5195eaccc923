"""End-to-end speed and memory of skill-doctor against the cost of decoding the bytes.

Builds deterministic inputs from the shared corpus's real sessions (ids rewritten so copies
stay unique): Claude Code JSONL of 1, 10 and 100 MB (and 1 GB with --gb), a 10 MB Codex
rollout, a 10 MB plain-text log (and one of 100 MB with --gb), a 10 MB asciinema recording
(bench_asciicast.build_cast) and an archive of 2,000 small corpus sessions of several harnesses
(bench_batch_memory's, `--batch N`). Then times, side by side, the decode floor (read and
JSON-decode every line with the standard library and with orjson), `skill-doctor report`,
`skill-doctor check` (when the command exists), start-up, and claude-code-log when it is
installed. Prints CPU seconds (for the Claude Code inputs the least of the runs of each, taken
in turn; medians elsewhere), MB/s, peak RSS and the ratios the targets are stated in (report and
check against the orjson per-line floor of the same run, check against report, the fixed cost
of start-up plus page building on 1 MB, a minimal Python reader of the same JSONL (the least
any reader must do, and so a bound under `report`), what importing the page renderer costs), and writes
everything as JSON (benchmarks/out/pipeline.json); the last lines hold each speed and memory
target against its figure in this run. The inputs are built in the system's
temporary folder (skill-doctor-bench/, kept for the next run), never in the repository.

    python benchmarks/bench_pipeline.py            # 1, 10, 100 MB
    python benchmarks/bench_pipeline.py --gb       # also 1 GB (memory bound check)
    python benchmarks/bench_pipeline.py --quick    # 1 and 10 MB, one run each, a 200-session batch
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
OUT = ROOT / "benchmarks" / "out"
INPUTS = Path(tempfile.gettempdir()) / "skill-doctor-bench"
MB = 1024 * 1024
# --in-place: measure this checkout's code with this interpreter, wherever the command runs from.
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p)}


def fresh_install() -> str:
    """The interpreter of a new virtual environment holding a plain `pip install .` of this
    checkout (dependencies as declared, bytecode compiled by pip): what a user runs."""
    global ENV
    venv = INPUTS / "venv"
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(ROOT)], check=True)
    ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    return python
_ID = re.compile(r'"(uuid|parentUuid|sessionId|id|tool_use_id|leafUuid|messageId|call_id)":\s*"([^"]+)"')


def _rewrite(line: str, copy: int) -> str:
    return _ID.sub(lambda m: f'"{m.group(1)}": "{m.group(2)}-c{copy}"', line)


def build_jsonl(name: str, folder: str, size_mb: int) -> Path:
    """Concatenate the folder's real sessions, ids rewritten per copy, up to `size_mb`."""
    target = INPUTS / f"{name}-{size_mb}mb.jsonl"
    if target.exists() and target.stat().st_size >= size_mb * MB:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    sources = sorted(p for p in (CORPUS / folder).glob("*.jsonl") if p.stat().st_size > 0)
    lines = [l for p in sources for l in p.read_text(encoding="utf-8", errors="replace").splitlines()
             if l.strip()]
    written = copy = 0
    with open(target, "w", encoding="utf-8") as out:
        while written < size_mb * MB:
            for line in lines:
                text = _rewrite(line, copy) + "\n"
                out.write(text)
                written += len(text.encode("utf-8"))
                if written >= size_mb * MB:
                    break
            copy += 1
    return target


def build_plaintext(size_mb: int) -> Path:
    target = INPUTS / f"plain-{size_mb}mb.txt"
    if target.exists() and target.stat().st_size >= size_mb * MB:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    block = ("User: Fix the page count in src/pager.py, it drops the last partial page.\n\n"
             "Assistant: I'll read the pager module first and then make the change.\n"
             "It divides with floor division, so a partial page is lost.\n\n"
             "Tool: Bash pytest -q\n" + "".join(f"tests/test_{i}.py ....  [{i}%]\n" for i in range(20))
             + "4 passed in 0.02s\n\n"
             "Assistant: Fixed; page_count rounds up now and the tests pass.\n\n")
    with open(target, "w", encoding="utf-8") as out:
        written = 0
        while written < size_mb * MB:
            out.write(block)
            written += len(block)
    return target


_FLOOR = """
import sys, time
if sys.argv[2] == "orjson":
    import orjson
    loads = orjson.loads
else:
    import json
    loads = json.loads
start = time.process_time()  # CPU time, like the children's figures below
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        try:
            loads(line)
        except ValueError:
            pass
print(time.process_time() - start)
"""
# The least any reader of a Claude Code session must do, in Python: decode every line with
# orjson, drop a resumed session's copies by uuid, and keep one small tuple per message text,
# tool call and tool result with its line number. No validation, no pairing, no grading, no
# page. What the Python loop over the records costs above the bare decode sets a bound under
# `report` that no design of the grading can go below.
_READER = """
import sys, time, orjson
start = time.process_time()
turns, seen = [], set()
with open(sys.argv[1], "rb") as fh:
    for number, line in enumerate(fh, 1):
        try:
            record = orjson.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        uuid = record.get("uuid")
        if uuid in seen:
            continue
        seen.add(uuid)
        message = record.get("message")
        role = record.get("type")
        if role not in ("user", "assistant") or not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            turns.append((role, content, number))
            continue
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                turns.append((role, block.get("text"), number))
            elif kind == "tool_use":
                turns.append(("call", block.get("name"), block.get("input"), block.get("id"), number))
            elif kind == "tool_result":
                turns.append(("result", block.get("tool_use_id"), block.get("content"), number))
print(time.process_time() - start)
"""
PYTHON = sys.executable  # the interpreter measured (a fresh install's unless --in-place)

# The asciinema decoder alone: CPU seconds of `decode_file` on a recording, imports paid first.
_CAST = """
import sys, time
from skill_doctor.decode import decode_file
decode_file(sys.argv[1])
start = time.process_time()
transcript = decode_file(sys.argv[1])
assert transcript.harness == "claude-code" and transcript.problem is None, transcript.problem
print(time.process_time() - start)
"""
# `batch` over an archive, in the measured interpreter: the exit code, then the peak RSS (KiB)
# of the main process and of the largest worker.
_BATCH = """
import resource, sys
from skill_doctor.cli import main
code = main(["batch", "sessions", "-o", "out", "-j", sys.argv[1]])
print(code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
      resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
"""


def _script_seconds(script: str, *args: str) -> float:
    """The CPU seconds a timing script prints, run in the measured interpreter."""
    out = subprocess.run([PYTHON, "-c", script, *args], capture_output=True, text=True,
                         check=True, env=ENV)
    return float(out.stdout)


def floor(path: Path, decoder: str) -> float:
    """CPU seconds to read and JSON-decode every line, in the measured interpreter."""
    return _script_seconds(_FLOOR, str(path), decoder)


def reader(path: Path) -> float:
    """CPU seconds of the minimal Python reader (`_READER`) on a Claude Code session."""
    return _script_seconds(_READER, str(path))


def run(cmd: list[str], cwd: Path) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MiB, exit code) of one child process.

    Ratios are taken on CPU time: on a shared machine the wall clock of one run measures the
    neighbours' load as much as the work.

    HOME is the run's own temporary folder, so no tool (peers keep caches there) reads or
    writes the real session stores.
    """
    # stderr goes to a file: a chatty tool would fill a pipe nobody reads until it exits.
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=errors,
                                env={**ENV, "HOME": str(cwd)})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            errors.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed ({code}): "
                             f"{errors.read().decode(errors='replace')[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code


def _least(runs: list[dict]) -> dict:
    """The run of least CPU time, with the largest peak RSS of them all."""
    best = min(runs, key=lambda r: r["seconds"])
    return {**best, "peak_rss_mib": max(r["peak_rss_mib"] for r in runs)}


def median_run(cmd_for, runs: int) -> dict:
    walls, cpus, rss = [], [], []
    for i in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            wall, cpu, peak, code = run(cmd_for(Path(tmp)), Path(tmp))
            walls.append(wall)
            cpus.append(cpu)
            rss.append(peak)
    return {"wall_seconds": statistics.median(walls), "seconds": statistics.median(cpus),
            "peak_rss_mib": max(rss), "exit": code}


def build_cast(size_mb: int) -> Path:
    """A recording of a headless Claude Code run of `size_mb` (bench_asciicast.build_cast)."""
    target = INPUTS / f"cast-{size_mb}mb.cast"
    if not target.exists():
        sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "src")]
        from bench_asciicast import build_cast as cast_text

        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(cast_text(size_mb * MB), encoding="utf-8")
    return target


def build_archive(count: int) -> Path:
    """A folder of `count` copies of small real sessions of several harnesses, each its own
    session (bench_batch_memory.write_sessions)."""
    target = INPUTS / f"archive-{count}"
    if not (target / "sessions").is_dir():
        sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "src")]
        from bench_batch_memory import _sources, write_sessions

        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        write_sessions(target / "sessions", count, _sources(False))
    return target


def batch_run(archive: Path, jobs: int) -> dict:
    """Wall and CPU seconds (main process and workers) and peak RSS of one `batch -j jobs`."""
    shutil.rmtree(archive / "out", ignore_errors=True)
    start = time.perf_counter()
    before = os.times()
    done = subprocess.run([PYTHON, "-c", _BATCH, str(jobs)], cwd=archive, capture_output=True,
                          text=True, env={**ENV, "HOME": str(archive)})
    wall = time.perf_counter() - start
    after = os.times()
    code, own, kids = done.stderr.strip().splitlines()[-1].split()
    if code != "0":
        raise SystemExit(f"batch -j {jobs} exited {code}: {done.stderr[-1000:]}")
    shutil.rmtree(archive / "out", ignore_errors=True)
    return {"wall_seconds": wall, "seconds": (after.children_user - before.children_user)
            + (after.children_system - before.children_system),
            "main_rss_mib": int(own) / 1024, "worker_rss_mib": int(kids) / 1024 if jobs > 1 else 0.0}


def has_command(name: str) -> bool:
    proc = subprocess.run([PYTHON, "-m", "skill_doctor", name, "--help"],
                          capture_output=True, env=ENV)
    return proc.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", action="store_true", help="also measure a 1 GB Claude Code input")
    parser.add_argument("--quick", action="store_true", help="1 and 10 MB, one run each")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--plain-mb", type=int, default=10, help="size of the plain-text log")
    parser.add_argument("--batch", type=int, default=2000, metavar="N",
                        help="sessions in the batch archive (default 2000)")
    parser.add_argument("--in-place", action="store_true",
                        help="run this checkout's src/ with this interpreter instead of a fresh "
                             "virtual environment with a plain `pip install .`")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"the shared corpus is needed at {CORPUS}", file=sys.stderr)
        return 2
    runs = 1 if args.quick else args.runs
    sizes = [1, 10] if args.quick else [1, 10, 100]
    if args.gb:
        sizes.append(1024)
    global PYTHON
    py = PYTHON = sys.executable if args.in_place else fresh_install()
    results: dict = {"python": sys.version.split()[0], "runs": runs, "claude": {}, "other": {},
                     "install": "in place" if args.in_place else "pip install ."}
    check = has_command("check")

    for size in sizes:
        path = build_jsonl("claude", "claude-code", size)
        mb = path.stat().st_size / MB
        n = 1 if size >= 1024 else runs
        entry = {"mb": round(mb, 1)}
        # The figures the targets compare are taken in turn (floors, reader, report, check,
        # then again) and the least of each kept: a busy spell of the shared machine then
        # lengthens runs of every kind alike, and the least is the run it touched least.
        json_floors, orjson_floors, readers, reports, checks = [], [], [], [], []
        for _ in range(n):
            json_floors.append(floor(path, "json"))
            orjson_floors.append(floor(path, "orjson"))
            readers.append(reader(path))
            reports.append(median_run(lambda d: [py, "-m", "skill_doctor", "report", str(path),
                                                 "-o", "r"], 1))
            if check:
                checks.append(median_run(lambda d: [py, "-m", "skill_doctor", "check", str(path),
                                                    "--exit-zero", "-q"], 1))
        entry["floor_json_s"] = min(json_floors)
        entry["floor_orjson_s"] = min(orjson_floors)
        entry["reader_s"] = min(readers)
        entry["report"] = _least(reports)
        if check:
            entry["check"] = _least(checks)
        if shutil.which("claude-code-log") and size <= 100:
            entry["claude_code_log"] = median_run(
                lambda d: ["claude-code-log", str(path), "-o", str(d / "out.html")], n)
        results["claude"][str(size)] = entry

    codex = build_jsonl("codex", "codex", 10)
    results["other"]["codex_10mb"] = {
        "mb": round(codex.stat().st_size / MB, 1),
        "floor_orjson_s": statistics.median(floor(codex, "orjson") for _ in range(runs)),
        "report": median_run(lambda d: [py, "-m", "skill_doctor", "report", str(codex), "-o", "r"], runs)}
    plain_sizes = [args.plain_mb] + ([100] if args.gb and args.plain_mb != 100 else [])
    for plain_mb in plain_sizes:
        # A plain-text log past 32 MiB is read up to there (the report says so); its memory
        # is measured all the same.
        plain = build_plaintext(plain_mb)
        results["other"][f"plain_{plain_mb}mb"] = {
            "mb": round(plain.stat().st_size / MB, 1),
            "report": median_run(lambda d: [py, "-m", "skill_doctor", "report", str(plain), "-o",
                                            "r"], runs if plain_mb == args.plain_mb else 1)}

    cast = build_cast(10)
    results["other"]["cast_10mb_decode"] = {
        "mb": round(cast.stat().st_size / MB, 1),
        "decode_s": statistics.median(_script_seconds(_CAST, str(cast)) for _ in range(runs))}

    if has_command("batch"):
        count = 200 if args.quick else args.batch
        archive = build_archive(count)
        # Parallelism is measured on wall time, the same work over one and two processes, which
        # the neighbours' load on a shared machine only ever lengthens: the shortest of `runs`
        # runs of each, taken in turn so a busy spell touches both.
        tries: dict[int, list[dict]] = {1: [], 2: []}
        for _ in range(runs):
            for jobs in (1, 2):
                tries[jobs].append(batch_run(archive, jobs))
        batch = {"sessions": count, "runs": runs,
                 **{f"j{jobs}": min(found, key=lambda t: t["wall_seconds"])
                    for jobs, found in tries.items()},
                 "walls": {f"j{jobs}": [round(t["wall_seconds"], 1) for t in found]
                           for jobs, found in tries.items()}}
        batch["throughput_ratio"] = batch["j1"]["wall_seconds"] / batch["j2"]["wall_seconds"]
        results["batch_archive"] = batch

    bare = median_run(lambda d: [py, "-c", "pass"], max(runs, 5))
    version = median_run(lambda d: [py, "-m", "skill_doctor", "--version"], max(runs, 5))
    results["startup"] = {"python_s": bare["seconds"], "version_s": version["seconds"],
                          "overhead_ms": round((version["seconds"] - bare["seconds"]) * 1000, 1)}
    small = ROOT / "examples" / "retry-fix.jsonl"
    if check:
        results["startup"]["check_small_s"] = median_run(
            lambda d: [py, "-m", "skill_doctor", "check", str(small), "--exit-zero", "-q"],
            max(runs, 5))["seconds"]
    # The part of every report that does not grow with the session: start-up, imports, the
    # rubric, the page and report.json, measured on the small example.
    results["startup"]["report_small_s"] = median_run(
        lambda d: [py, "-m", "skill_doctor", "report", str(small), "-o", "r"],
        max(runs, 5))["seconds"]
    # The fixed-cost target is a ratio of two short runs, each a few hundredths of a second:
    # taken in turn and the least of each, so the neighbours' load cannot favour either.
    bare_cpu, small_cpu = [], []
    for _ in range(max(runs, 7)):
        with tempfile.TemporaryDirectory() as tmp:
            bare_cpu.append(run([py, "-c", "pass"], Path(tmp))[1])
            small_cpu.append(run([py, "-m", "skill_doctor", "report", str(small), "-o", "r"],
                                 Path(tmp))[1])
    results["startup"]["fixed_ratio"] = {"python_s": min(bare_cpu), "report_small_s": min(small_cpu)}
    probe = subprocess.run([py, "-c", "import sys; from skill_doctor.cli import main; "
                            "main(['rubric', 'explain', 'retry_waste']); "
                            "print('LOADED', 'lark' in sys.modules, 'dominate' in sys.modules)"],
                           capture_output=True, text=True, env=ENV)
    results["startup"]["json_path_imports_lark_or_dominate"] = probe.stdout.strip().splitlines()[-1]
    # What the page's modules cost to import apart from rendering: skill_doctor.render (with
    # the overview and findings it needs) and dominate, which render imports when it builds
    # the page (and which imports asyncio). Lazy imports cannot take these off `report`.
    for module, key in (("skill_doctor.render", "import_render_ms"), ("dominate", "import_dominate_ms")):
        probe = subprocess.run([py, "-X", "importtime", "-c", f"import {module}"],
                               capture_output=True, text=True, env=ENV)
        cumulative = {line.split("|")[2].strip(): int(line.split("|")[1])
                      for line in probe.stderr.splitlines() if line.count("|") == 2
                      and line.split("|")[1].strip().isdigit()}
        results["startup"][key] = cumulative.get(module, 0) / 1000
        if module == "dominate":
            results["startup"]["import_asyncio_ms"] = cumulative.get("asyncio", 0) / 1000

    _print(results)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "pipeline.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"\nwritten to {(OUT / 'pipeline.json').relative_to(ROOT)}")
    return 0


def _print(r: dict) -> None:
    print("CPU seconds (floors, report, check) unless marked wall")
    print(f"{'input':<14}{'MB':>8}{'json s':>9}{'orjson s':>10}{'report s':>10}{'wall s':>8}{'MB/s':>8}"
          f"{'x floor':>9}{'RSS MiB':>9}{'check s':>9}{'ccl s':>8}")
    for size, e in r["claude"].items():
        rep = e["report"]
        ratio = rep["seconds"] / e["floor_orjson_s"]
        print(f"{'claude ' + size + 'MB':<14}{e['mb']:>8.1f}{e['floor_json_s']:>9.2f}"
              f"{e['floor_orjson_s']:>10.2f}{rep['seconds']:>10.2f}{rep['wall_seconds']:>8.2f}"
              f"{e['mb'] / rep['seconds']:>8.1f}"
              f"{ratio:>9.2f}{rep['peak_rss_mib']:>9.0f}"
              f"{e['check']['seconds'] if 'check' in e else float('nan'):>9.2f}"
              f"{e['claude_code_log']['seconds'] if 'claude_code_log' in e else float('nan'):>8.2f}")
    for name, e in r["other"].items():
        if "report" not in e:
            continue  # the recording's decoder alone: printed below
        rep = e["report"]
        print(f"{name:<14}{e['mb']:>8.1f}{'':>9}{e.get('floor_orjson_s', float('nan')):>10.2f}"
              f"{rep['seconds']:>10.2f}{rep['wall_seconds']:>8.2f}{e['mb'] / rep['seconds']:>8.1f}"
              f"{'':>9}{rep['peak_rss_mib']:>9.0f}")
    c = r["claude"]
    s = r["startup"]
    if "10" in c and "100" in c:
        # Net of start-up (interpreter, imports, rubric), which does not grow with the input.
        fixed = c["1"]["report"]["seconds"] if "1" in c else 0.0
        ratio = c["100"]["report"]["seconds"] / c["10"]["report"]["seconds"]
        net = (c["100"]["report"]["seconds"] - fixed) / max(c["10"]["report"]["seconds"] - fixed, 1e-9)
        print(f"scaling 10 -> 100 MB: {ratio:.1f}x CPU time, {net:.1f}x net of the 1 MB run's fixed cost")
    for size, e in c.items():
        if "check" in e:
            print(f"{size} MB: report {e['report']['seconds'] / e['floor_orjson_s']:.1f}x the orjson "
                  f"floor, check {e['check']['seconds'] / e['floor_orjson_s']:.1f}x; check/report "
                  f"{e['check']['seconds'] / e['report']['seconds']:.2f}")
    for size, e in c.items():
        if size != "1":
            # A bound under `report`: the least a Python reader does, plus what a report of
            # the small example costs (start-up, imports, page), before any grading.
            bound = e["reader_s"] + s["report_small_s"]
            print(f"{size} MB: a minimal Python reader {e['reader_s']:.2f} s, "
                  f"{e['reader_s'] / e['floor_orjson_s']:.2f}x the orjson floor; with start-up "
                  f"and page ({s['report_small_s']:.2f} s) {bound / e['floor_orjson_s']:.2f}x, "
                  f"before any grading")
    if "1" in c:
        print(f"fixed cost on 1 MB (start-up, decode, grade, page): report "
              f"{c['1']['report']['seconds']:.2f} s")
    if "1024" in c:
        print(f"1 GB: {c['1024']['report']['seconds']:.1f} s, peak RSS {c['1024']['report']['peak_rss_mib']:.0f} MiB")
        if "100" in c:
            print(f"scaling 100 MB -> 1 GB: {c['1024']['report']['seconds'] / c['100']['report']['seconds']:.1f}x "
                  f"CPU time, peak RSS {c['100']['report']['peak_rss_mib']:.0f} -> "
                  f"{c['1024']['report']['peak_rss_mib']:.0f} MiB")
    if "cast_10mb_decode" in r["other"]:
        e = r["other"]["cast_10mb_decode"]
        print(f"asciinema recording {e['mb']:.1f} MB: decode {e['decode_s']:.2f} s CPU, "
              f"{e['mb'] / e['decode_s']:.1f} MB/s")
    if "batch_archive" in r:
        b = r["batch_archive"]
        print(f"batch of {b['sessions']} sessions, shortest of {b['runs']} runs (-j 1 "
              f"{b['walls']['j1']} s, -j 2 {b['walls']['j2']} s): -j 1 {b['j1']['wall_seconds']:.1f} s wall "
              f"({b['j1']['main_rss_mib']:.0f} MiB), -j 2 {b['j2']['wall_seconds']:.1f} s wall "
              f"(main {b['j2']['main_rss_mib']:.0f} MiB, largest worker "
              f"{b['j2']['worker_rss_mib']:.0f} MiB): {b['throughput_ratio']:.2f}x the throughput")
    print(f"start-up: python {s['python_s'] * 1000:.0f} ms, --version {s['version_s'] * 1000:.0f} ms "
          f"(+{s['overhead_ms']} ms)" + (f", check of a small session {s['check_small_s'] * 1000:.0f} ms"
                                          if "check_small_s" in s else "")
          + f", report of it {s['report_small_s'] * 1000:.0f} ms")
    print(f"lark/dominate loaded on a JSON-only path: {s['json_path_imports_lark_or_dominate']}")
    print(f"imports of the page: skill_doctor.render {s['import_render_ms']:.0f} ms, dominate "
          f"{s['import_dominate_ms']:.0f} ms (of which asyncio {s['import_asyncio_ms']:.0f} ms)")
    _print_targets(r)


def _print_targets(r: dict) -> None:
    """Each speed and memory target with its figure in this run: met, or not."""
    c, s, o = r["claude"], r["startup"], r["other"]
    rows: list[tuple[str, str, bool]] = []

    def target(text: str, figure: str, met: bool) -> None:
        rows.append((text, figure, met))

    for size in ("100", "1024"):
        if size in c:
            e = c[size]
            name = "1 GB" if size == "1024" else "100 MB"
            ratio = e["report"]["seconds"] / e["reader_s"]
            target(f"report of {name} <= 4x the minimal reader", f"{ratio:.1f}x", ratio <= 4)
            if "check" in e:
                ratio = e["check"]["seconds"] / e["report"]["seconds"]
                target(f"check of {name} <= 0.8x report", f"{ratio:.2f}x", ratio <= 0.8)
    if "plain_10mb" in o:
        rate = o["plain_10mb"]["mb"] / o["plain_10mb"]["report"]["seconds"]
        target("plain-text log of 10 MB >= 15 MB/s end to end", f"{rate:.1f} MB/s", rate >= 15)
    if "cast_10mb_decode" in o:
        rate = o["cast_10mb_decode"]["mb"] / o["cast_10mb_decode"]["decode_s"]
        target("asciinema decoder >= 15 MB/s on 10 MB", f"{rate:.1f} MB/s", rate >= 15)
    if "1024" in c:
        peak = c["1024"]["report"]["peak_rss_mib"]
        target("peak RSS at 1 GB <= 200 MiB", f"{peak:.0f} MiB", peak <= 200)
        if "100" in c:
            growth = peak / c["100"]["report"]["peak_rss_mib"]
            target("peak RSS 100 MB -> 1 GB within 1.5x", f"{growth:.2f}x", growth <= 1.5)
    least = s["fixed_ratio"]
    fixed = least["report_small_s"] / least["python_s"]
    target("report of the 44 KB example <= 25x python -c pass",
           f"{fixed:.0f}x ({least['report_small_s'] * 1000:.0f} / {least['python_s'] * 1000:.0f} ms, "
           f"least of runs in turn)", fixed <= 25)
    if "batch_archive" in r:
        b = r["batch_archive"]
        target(f"batch of {b['sessions']}: -j 2 >= 1.7x the throughput of -j 1",
               f"{b['throughput_ratio']:.2f}x", b["throughput_ratio"] >= 1.7)
    print("\ntargets (issue: one pass over the session)")
    for text, figure, met in rows:
        print(f"  {'met    ' if met else 'NOT met'}  {text}: {figure}")


if __name__ == "__main__":
    raise SystemExit(main())
