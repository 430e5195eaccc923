"""batch: grade many sessions into one directory with an index page and `summary.jsonl`.

Each session goes through the same pipeline as `skill-doctor report` (decode_file, grade,
render, to_json) and gets its own `sessions/<id>/` report. Around them the batch writes:

- `index.html`: a static table (session, harness, date, turns, both scores, pass or fail
  against the thresholds by `check.judge`'s rule, worst criterion, a link to the session's
  report), lowest scores first, with the aggregate figures, a per-harness summary and, when
  the sessions span more than a day, an inline SVG chart of the scores over time; embedded CSS,
  no JavaScript, the same Content-Security-Policy as report.html. The same page sorted by date,
  by harness and in input order is pre-rendered beside it (`index-by-*.html`, linked from
  each page's header), since sorting without JavaScript means one page per order;
- `summary.jsonl`: one report.json-shaped line per session, in input order, plus a `report`
  key with the relative path of its page; `summary.csv` the same sessions as spreadsheet rows;
- `aggregate.json`: the figures shown on the index (sample sizes, mean, median and
  distribution of each score, pass and fail counts, per-harness figures, most frequent
  findings).

Grading runs over processes with `jobs > 1`, or on the workers of a Dask cluster (`remote`,
which cluster.py connects; batch never imports it); results are collected in input order, so
the output is byte-identical whatever the number of processes or machines, and at most a few
sessions per worker are given out ahead of the next one to hand on, so memory follows the
workers, not the number of sessions. Everything is built in a temporary directory beside the
target and renamed into place at the end (write.staged). A session that cannot be read becomes
a parse-error report like any other; one that makes the grader fail is listed in the index
with the error, and the batch goes on.
"""

from __future__ import annotations

import heapq
import json
import os
import queue
import re
import shutil
import statistics
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Protocol, Sequence
from urllib.parse import quote

from .patterns import compile_later
from .errors import SkillDoctorError
from .rubric import SCALES, Rubric

if TYPE_CHECKING:
    from .model import Transcript

BATCH_MARKER = "summary.jsonl"  # a directory holding this is an earlier batch and may be replaced
MAX_NAME = 80
TOP_FINDINGS = 10
SCALE_TITLES = {"efficiency": "Efficiency", "code_quality": "Code quality"}
# What a row keeps of a session's token usage: the sums on the index (not the per-model list,
# which stays in report.json), so the rows held for the index stay small.
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
              "total_tokens", "cost_usd")


@dataclass(frozen=True, slots=True)
class Graded:
    """One session's outcome, as returned by a worker (plain data, cheap to pickle)."""

    path: str  # as shown to people (home as ~, secrets redacted unless asked not to)
    session_id: str
    status: str  # ok / no_history / too_short / parse_error, or "error" when grading failed
    message: str | None
    harness: str | None = None
    date: str | None = None  # YYYY-MM-DD of the session's start, when recorded
    turns: int = 0
    scores: Mapping[str, float | None] = field(default_factory=dict)
    worst: str | None = None  # the finding that costs most points, e.g. "Retry waste (SD103) 1/2"
    started_at: str | None = None  # the session's recorded start, for sorting by date
    passed: bool | None = None  # against the thresholds (check.judge); None: not graded
    failures: tuple[str, ...] = ()  # why it fails, e.g. "efficiency 4 < 5"
    findings: tuple[tuple[str, str, str], ...] = ()  # (rule id, rule name, category)
    files: Mapping[str, str | bytes] = field(default_factory=dict)  # report.html, report.json
    record: Mapping[str, Any] | None = None  # report.json data
    usage: Mapping[str, Any] | None = None  # the USAGE_KEYS of report.json's usage
    skipped: bool = False  # older than --since
    staged: str | None = None  # the folder the worker wrote files into (then files are {})


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the index: a graded session and the folder its report went to."""

    name: str | None  # folder under sessions/; None when no report could be written
    graded: Graded


@dataclass(frozen=True, slots=True)
class BatchResult:
    target: Path
    rows: tuple[Row, ...]
    aggregate: Mapping[str, Any]
    skipped: int


# -- which sessions --------------------------------------------------------------------------


def default_sessions(env: Mapping[str, str], home: Path) -> list[Path]:
    """Every session in the harness stores, sorted by path."""
    from . import stores

    return sorted({Path(item.path) for item in stores.discover(env, home)},
                  key=lambda p: p.as_posix())


def parse_since(text: str) -> datetime:
    """`--since` as an aware datetime: a date (YYYY-MM-DD, midnight UTC) or an ISO time."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        from .errors import UsageError
        raise UsageError(f"--since must be a date (YYYY-MM-DD) or an ISO time, got {text!r}")
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _started(started_at: str | None) -> datetime | None:
    if not started_at:
        return None
    try:
        moment = datetime.fromisoformat(started_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


# -- grading one session (runs in a worker process) -------------------------------------------


def grade_one(path: str, rubric: Rubric, generated_at: str, since: datetime | None = None,
              redact_secrets: bool = True,
              thresholds: Mapping[str, float] | None = None, out_dir: str | None = None,
              index: int = 0, base: str | None = None,
              home: str | None = None) -> tuple[Graded, ...]:
    """Decode one file and grade each session it holds (most files hold one); never raises
    (a failure becomes an error row).

    Pass or fail is `check.judge`'s verdict for `thresholds` (the rubric's by default), the
    same the session's own page shows. With `out_dir`, the pages are written to
    `out_dir/<index>-<n>/` here (in the worker) and the row carries only that folder's name:
    what waits in memory for its turn in the input order is a few hundred bytes per session,
    whatever the sessions hold.

    On another machine (a Dask worker) `base` is the submitting machine's working directory,
    which a relative `path` is read under (it is still shown as given), and `home` the home
    folder folded as `~` ("" for none), so the pages are the ones a local run writes."""
    from .redact import folding_home

    with folding_home(home):
        return _grade_file(path, rubric, generated_at, since, redact_secrets, thresholds,
                           out_dir, index, base)


def _grade_file(path: str, rubric: Rubric, generated_at: str, since: datetime | None,
                redact_secrets: bool, thresholds: Mapping[str, float] | None,
                out_dir: str | None, index: int, base: str | None) -> tuple[Graded, ...]:
    from .decode import decode_file
    from .decode.sessions import split

    read = path if base is None or os.path.isabs(path) else os.path.join(base, path)
    try:
        transcripts = split(decode_file(read))
    except Exception as exc:  # one file must not stop the batch
        return (failed(path, exc, redact_secrets),)
    if read != path:  # the source as given, as a local run records it
        transcripts = [replace(t, source=path) for t in transcripts]
    return tuple(_grade_session(read, t, rubric, generated_at, since, redact_secrets,
                                thresholds, out_dir, f"{index}-{n}", shown_as=path)
                 for n, t in enumerate(transcripts, start=1))


def _usage_sums(usage: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if usage is None else {k: usage[k] for k in USAGE_KEYS}


def failed(path: str, exc: BaseException, redact_secrets: bool = True) -> Graded:
    """The row of a file whose grading failed: listed in the index with the error."""
    from .redact import shown as shown_text
    from .report import display_path

    name = os.path.splitext(os.path.basename(path))[0] or "session"
    return Graded(display_path(path, redact_secrets), shown_text(name, redact_secrets), "error",
                  f"grading failed: {type(exc).__name__}: {exc}")


def _grade_session(path: str, transcript: Transcript, rubric: Rubric, generated_at: str,
                   since: datetime | None, redact_secrets: bool,
                   thresholds: Mapping[str, float] | None = None, out_dir: str | None = None,
                   folder_key: str = "0", shown_as: str | None = None) -> Graded:
    from .check import judge
    from .render import render
    from .report import display_path, grade, to_json
    from .tokens import to_json as usage_json
    from .write import json_bytes

    shown_as = path if shown_as is None else shown_as  # `path` is where it is read
    shown = display_path(shown_as, redact_secrets)  # home as ~, secrets redacted, as in report.json
    try:
        started = _started(transcript.started_at)
        if since is not None:
            # Without a recorded start, the file's modification time stands in for it.
            when = started
            if when is None:
                try:
                    when = datetime.fromtimestamp(os.stat(path).st_mtime, timezone.utc)
                except OSError:
                    when = None
            if when is not None and when < since:
                return Graded(shown_as, "", "skipped", None, skipped=True)
        report = grade(transcript, rubric, generated_at, redact_secrets=redact_secrets)
        if thresholds is not None:
            report = replace(report, thresholds=dict(thresholds))
        verdict = judge(shown, report, report.thresholds)  # the rule `check` applies
        record = to_json(report)
        worst = None
        if report.findings:
            f = report.findings[0]  # ranked by points recoverable
            worst = f"{f.category} ({f.rule_id}) {f.score}/{f.max}"
        files = {"report.html": render(report), "report.json": json_bytes(record)}
        staged_in = None
        if out_dir is not None:
            from .write import write_file

            folder = Path(out_dir) / folder_key
            # exist_ok: a cluster may run a task again when its first worker was lost
            folder.mkdir(exist_ok=True)
            for name, text in sorted(files.items()):
                write_file(folder / name, text)
            files, record, staged_in = {}, None, str(folder)
        return Graded(
            path=shown, session_id=report.session_id, status=report.status,
            message=report.message, harness=transcript.harness,
            # isoformat, not strftime: the C library writes a year before 1000 without its
            # zeros ("1-01-01"), which is no date to read back.
            date=started.date().isoformat() if started else None,
            turns=len(transcript.turns),
            scores={s.name: s.score for s in report.scores.scales()},
            worst=worst, started_at=transcript.started_at,
            passed=None if report.status in ("no_history", "too_short") else verdict.passed,
            failures=verdict.failures,
            findings=tuple((f.rule_id, f.rule_name, f.category) for f in report.findings),
            files=files, record=record, staged=staged_in,
            usage=_usage_sums(usage_json(report.usage, turns=False)))
    except Exception as exc:  # one session must not stop the batch
        return failed(shown_as, exc, redact_secrets)


# Sessions are given to the workers at most this many per worker ahead of the next result to
# hand on (in input order): the workers stay busy past a slow session, and what waits for its
# turn (a few hundred bytes a session) is bounded by the number of workers, not of sessions.
AHEAD_PER_WORKER = 4

# A session given to a worker: called in the main thread, once the `done` it was started with
# has been called, for its outcome (raises if the task itself failed).
Collect = Callable[[], "tuple[Graded, ...]"]
Start = Callable[[int, Callable[[], None]], Collect]


class Remote(Protocol):
    """Workers elsewhere that grade sessions (cluster.Cluster): how many sessions they grade
    at once, and a `Start` that hands them one."""

    workers: int

    def starter(self, paths: Sequence[str], rubric: Rubric,
                options: Mapping[str, Any]) -> Start: ...


def grade_all(paths: Sequence[str], rubric: Rubric, generated_at: str, *,
              since: datetime | None = None, redact_secrets: bool = True, jobs: int = 1,
              progress: Callable[[int, int], None] | None = None,
              thresholds: Mapping[str, float] | None = None,
              out_dir: str | None = None, remote: Remote | None = None) -> Iterable[Graded]:
    """Grade `paths` in order, over `jobs` processes or on `remote` workers (a connected
    Dask cluster, cluster.connect); yields results in input order (every session of a file
    that holds several, in file order). With `out_dir` the workers write the pages there (see
    grade_one)."""
    for graded in _grade_files(paths, rubric, generated_at, since=since,
                               redact_secrets=redact_secrets, jobs=jobs, progress=progress,
                               thresholds=thresholds, out_dir=out_dir, remote=remote):
        yield from graded


def _grade_files(paths: Sequence[str], rubric: Rubric, generated_at: str, *,
                 since: datetime | None, redact_secrets: bool, jobs: int,
                 progress: Callable[[int, int], None] | None,
                 thresholds: Mapping[str, float] | None,
                 out_dir: str | None, remote: Remote | None = None) -> Iterable[tuple[Graded, ...]]:
    options: dict[str, Any] = dict(generated_at=generated_at, since=since,
                                   redact_secrets=redact_secrets, thresholds=thresholds,
                                   out_dir=out_dir)
    total = len(paths)
    if progress:
        progress(0, total)
    if remote is not None:
        yield from _in_input_order(paths, remote.workers, remote.starter(paths, rubric, options),
                                   progress, redact_secrets)
        return
    work = partial(grade_one, rubric=rubric, **options)
    if jobs <= 1 or total <= 1:
        for done, path in enumerate(paths, start=1):
            yield work(path, index=done - 1)
            if progress:
                progress(done, total)
        return
    import multiprocessing

    # Import what every worker needs once, here: forked workers inherit it instead of each
    # paying for the imports again.
    from . import detectors, overview, render  # noqa: F401
    from .decode import textparse  # noqa: F401
    import dominate  # noqa: F401
    import lark  # noqa: F401

    # Workers ignore Ctrl-C: the terminal sends it to the whole process group, and only the
    # parent should react (one line, exit 130); leaving the `with` terminates the workers.
    workers = min(jobs, total)
    with multiprocessing.get_context().Pool(workers, initializer=_ignore_interrupt) as pool:
        def start(index: int, done: Callable[[], None]) -> Collect:
            task = pool.apply_async(work, (paths[index],), {"index": index},
                                    callback=lambda _: done(), error_callback=lambda _: done())
            return task.get

        yield from _in_input_order(paths, workers, start, progress, redact_secrets)


def _in_input_order(paths: Sequence[str], workers: int, start: Start,
                    progress: Callable[[int, int], None] | None,
                    redact_secrets: bool) -> Iterator[tuple[Graded, ...]]:
    """Have `start` grade every path and yield the outcomes in input order, whichever worker
    finishes first, so the output does not depend on the number of workers or their speed.

    At most AHEAD_PER_WORKER * `workers` sessions past the next one to yield are started, plus
    the `workers` largest files of the batch, which are started first, so that one big file
    late in the input does not leave the other workers idle at the end: what is held, running
    or finished out of turn, is bounded by the workers, not by the number of sessions."""
    total = len(paths)
    window = AHEAD_PER_WORKER * max(1, workers)
    finished: queue.SimpleQueue[int] = queue.SimpleQueue()
    running: dict[int, Collect] = {}
    waiting: dict[int, tuple[Graded, ...]] = {}

    def begin(index: int) -> None:
        running[index] = start(index, partial(finished.put, index))

    early = set(heapq.nlargest(min(workers, total), range(total),
                               key=lambda i: (_size(paths[i]), -i)))
    for index in sorted(early, key=lambda i: (-_size(paths[i]), i)):
        begin(index)
    started = 0  # every session before this one has been started

    def start_window(next_index: int) -> None:
        nonlocal started
        while started < min(total, next_index + window):
            if started not in early:
                begin(started)
            started += 1

    start_window(0)
    next_index = 0
    for done in range(1, total + 1):
        index = finished.get()
        try:
            waiting[index] = running.pop(index)()
        except SkillDoctorError:  # the cluster is gone: the whole batch fails
            raise
        except Exception as exc:  # the task failed outside grade_one (a worker was lost)
            waiting[index] = (failed(paths[index], exc, redact_secrets),)
        if progress:
            progress(done, total)
        while next_index in waiting:
            graded = waiting.pop(next_index)
            next_index += 1
            start_window(next_index)
            yield graded


def _ignore_interrupt() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


# -- folder names ------------------------------------------------------------------------------


def folder_name(session_id: str, taken: set[str]) -> str:
    """A safe, unique folder name for a session: its id, with -2, -3... on collisions.

    Collisions are judged case-insensitively (folders on macOS and Windows are), and the
    caller hands sessions over in input order, so the same inputs always get the same names.
    """
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", session_id).strip(".-")[:MAX_NAME] or "session"
    name, n = base, 1
    while name.lower() in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name.lower())
    return name


# -- aggregate figures ---------------------------------------------------------------------------


def _num(value: float | None) -> float | int | None:
    if value is None:
        return None
    value = round(float(value), 2)
    return int(value) if value.is_integer() else value


def aggregate(rows: Sequence[Row]) -> dict[str, Any]:
    """Sample sizes, mean/median/distribution of each score, and the most frequent findings."""
    graded = [r.graded for r in rows]
    statuses = Counter(g.status for g in graded)
    scales: dict[str, Any] = {}
    for name in SCALES:
        values = [g.scores[name] for g in graded if g.scores.get(name) is not None]
        distribution = Counter(min(10, int(v)) for v in values)
        scales[name] = {
            "n": len(values),
            "mean": _num(statistics.fmean(values)) if values else None,
            "median": _num(statistics.median(values)) if values else None,
            "min": _num(min(values)) if values else None,
            "max": _num(max(values)) if values else None,
            # bucket k holds scores from k up to (not including) k+1; 10 holds 10
            "distribution": {str(k): distribution.get(k, 0) for k in range(11)},
        }
    with_findings = [g for g in graded if g.status in ("ok", "parse_error") and g.scores
                     and any(v is not None for v in g.scores.values())]
    counts: Counter[tuple[str, str, str]] = Counter()
    for g in with_findings:
        counts.update(set(g.findings))
    top = sorted(counts.items(), key=lambda item: (-item[1], item[0][0]))[:TOP_FINDINGS]
    harnesses: dict[str, Any] = {}
    for harness in sorted({g.harness or "unknown" for g in graded}):
        group = [g for g in graded if (g.harness or "unknown") == harness]
        entry: dict[str, Any] = {"sessions": len(group)}
        for name in SCALES:
            values = [g.scores[name] for g in group if g.scores.get(name) is not None]
            entry[name] = {"n": len(values),
                           "mean": _num(statistics.fmean(values)) if values else None}
        entry.update(_verdicts(group))
        harnesses[harness] = entry
    return {
        "sessions": len(graded),
        "statuses": {k: statuses[k] for k in sorted(statuses)},
        "verdicts": _verdicts(graded),
        "harnesses": harnesses,
        "scales": scales,
        "usage": _usage_figures(graded),
        "findings": {
            "sessions_scored": len(with_findings),
            "most_frequent": [{"id": rid, "rule": rule, "category": category, "sessions": n,
                               "share": _num(n / len(with_findings))}
                              for (rid, rule, category), n in top],
        },
    }


def _verdicts(graded: Sequence[Graded]) -> dict[str, int]:
    return {"passed": sum(g.passed is True for g in graded),
            "failed": sum(g.passed is False for g in graded),
            "not_graded": sum(g.passed is None for g in graded)}


def usage_line(figures: Mapping[str, Any]) -> str:
    """`Tokens: 12.3M over 4 sessions that log them; cost $8.20 (1 with an unknown price).`"""
    from .tokens import money, short

    n = figures["sessions_with_tokens"]
    if not n:
        return "Tokens: no session logs token counts."
    text = f"Tokens: {short(figures['total_tokens'])} over {n} session{'s' if n != 1 else ''} that log them"
    if figures["sessions_priced"]:
        text += f"; cost {money(figures['cost_usd'])}"
        if figures["sessions_cost_unknown"]:
            text += f" ({figures['sessions_cost_unknown']} more with an unknown price)"
    else:
        text += "; cost unknown (no price for their models)"
    return text + "."


def _usage_figures(graded: Sequence[Graded]) -> dict[str, Any]:
    """Tokens summed over the sessions whose harness logs them; the cost summed over those
    with a known price (the others are counted, so a total is never mistaken for complete)."""
    logged = [g.usage for g in graded if g.usage]
    kinds = [k for k in USAGE_KEYS if k != "cost_usd"]
    priced = [u["cost_usd"] for u in logged if not isinstance(u["cost_usd"], str)]
    totals = {k: sum(u[k] for u in logged) for k in kinds}
    return {
        "sessions_with_tokens": len(logged),
        **totals,
        "mean_tokens_per_session": _num(totals["total_tokens"] / len(logged)) if logged else None,
        "cost_usd": round(sum(priced), 4) if priced else None,
        "sessions_priced": len(priced),
        "sessions_cost_unknown": len(logged) - len(priced),
    }


# -- the whole batch -----------------------------------------------------------------------------


def run(paths: Sequence[str], target: Path, rubric: Rubric, generated_at: str, *,
        since: datetime | None = None, redact_secrets: bool = True, jobs: int = 1,
        force: bool = False, progress: Callable[[int, int], None] | None = None,
        thresholds: Mapping[str, float] | None = None, remote: Remote | None = None) -> BatchResult:
    """Grade every path and write the batch directory `target`, all or nothing.

    `thresholds` decide pass or fail (the rubric's by default; `check --html` passes its
    `--min-*` options). With `remote` (a connected Dask cluster, cluster.connect), the
    sessions are graded on its workers, which write the pages into the staging folder beside
    `target`: it and the sessions must be on a path the workers share."""
    from .redact import scrub_data
    from .write import dump_json, staged, write_file, write_report

    rows: list[Row] = []
    skipped = 0
    taken: set[str] = set()
    common: dict[Any, Any] = {}  # values many rows hold, kept once (see _shared)
    with staged(target, force=force, marker=BATCH_MARKER) as tmp:
        sessions = tmp / "sessions"
        sessions.mkdir()
        work = tmp / ".work"  # the workers' pages, moved under sessions/ in input order
        work.mkdir()
        # Memory stays bounded by the workers, not by the number of sessions: pages and
        # records go to disk as they come, and a row keeps only what the index shows.
        with open(tmp / "summary.jsonl", "w", encoding="utf-8", errors="replace",
                  newline="\n") as summary:
            for graded in grade_all(paths, rubric, generated_at, since=since,
                                    redact_secrets=redact_secrets, jobs=jobs, progress=progress,
                                    thresholds=thresholds, out_dir=str(work), remote=remote):
                if graded.skipped:
                    skipped += 1
                    continue
                name, record = None, graded.record
                if graded.staged or graded.files:
                    name = folder_name(graded.session_id, taken)
                    if graded.staged:
                        os.rename(graded.staged, sessions / name)
                    else:
                        write_report(sessions / name, graded.files)
                    record = json.loads((sessions / name / "report.json").read_text("utf-8"))
                    graded = replace(graded, files={}, record=None, staged=None)
                rows.append(Row(name, _shared(graded, common)))
                summary.write(json.dumps(
                    scrub_data(_summary_record(graded, name, record), redact_secrets),
                    sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")
            summary.flush()
            os.fsync(summary.fileno())
        shutil.rmtree(work)  # empty unless a worker failed part-way through its pages
        figures = aggregate(rows)
        write_file(tmp / "summary.csv", csv_pieces(rows, redact_secrets))
        write_file(tmp / "aggregate.json", dump_json(scrub_data(figures, redact_secrets)))
        limits = dict(thresholds) if thresholds is not None else dict(rubric.thresholds)
        rendered = RenderedRows(rows, redact_secrets)
        try:
            for view in VIEWS:
                write_file(tmp / view.file, index_pieces(rows, figures, generated_at, skipped,
                                                         view=view.key, thresholds=limits,
                                                         redact_secrets=redact_secrets,
                                                         rendered=rendered))
        finally:
            rendered.close()
    return BatchResult(target, tuple(rows), figures, skipped)


def _shared(graded: Graded, common: dict[Any, Any]) -> Graded:
    """The row with the values that recur from session to session (each finding, failure,
    harness, status, date, worst criterion) taken from `common`: each row comes from its worker as a copy of
    its own, and ten thousand rows would otherwise each hold the same few dozen findings,
    half of what a row weighs."""
    keep = common.setdefault
    return replace(graded, findings=tuple(keep(f, f) for f in graded.findings),
                   failures=tuple(keep(f, f) for f in graded.failures),
                   harness=keep(graded.harness, graded.harness),
                   status=keep(graded.status, graded.status),
                   date=keep(graded.date, graded.date), worst=keep(graded.worst, graded.worst))


def _summary_record(graded: Graded, name: str | None,
                    record: Mapping[str, Any] | None = None) -> dict[str, Any]:
    if record is not None:
        record = dict(record)
    else:  # grading failed: the same shape, with what is known
        from .report import SCHEMA
        from . import __version__
        record = {"schema": SCHEMA, "status": graded.status, "message": graded.message,
                  "session": {"id": graded.session_id, "source": graded.path},
                  "scores": {}, "findings": [], "suggestions": [],
                  "generator": {"name": "skill-doctor", "version": __version__}}
    record["report"] = f"sessions/{name}/report.html" if name else None
    return record



# -- summary.csv -------------------------------------------------------------------------------

CSV_COLUMNS = ("session", "source", "harness", "started_at", "turns", "status", "efficiency",
               "code_quality", "verdict", "failures", "worst_criterion", "findings", "report")


def _csv_text(value: str, redact_secrets: bool = True) -> str:
    """Session text for a spreadsheet cell: as every output shows it (redact.shown: secrets
    redacted, control, bidi and invisible characters as [U+202E]), and a leading = + - @ (or
    tab, CR), which would make a spreadsheet run it as a formula, behind an apostrophe
    (OWASP's advice)."""
    from .redact import shown

    value = shown(value, redact_secrets)
    value = "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
    # A spreadsheet may read each line of a cell on its own: a formula after a line break is
    # neutralised the same way.
    return _FORMULA_AFTER_BREAK.sub(lambda m: m.group(1) + "'" + m.group(2), value)


_FORMULA_AFTER_BREAK = compile_later(r"([\r\n])([=+\-@\t])")


def _csv_row(cells: Sequence[Any]) -> str:
    """One CSV line. A field holding a separator, a quote, a line feed or a bare carriage
    return is quoted (Python's csv module, given "\n" as the line end, leaves a lone CR
    unquoted, and spreadsheet readers end the row there)."""
    out = []
    for cell in cells:
        text = str(cell)
        if any(c in text for c in ',"\r\n'):
            text = '"' + text.replace('"', '""') + '"'
        out.append(text)
    return ",".join(out) + "\n"


def summary_csv(rows: Sequence[Row], redact_secrets: bool = True) -> str:
    """summary.jsonl's sessions as spreadsheet rows, in the same (input) order."""
    return "".join(csv_pieces(rows, redact_secrets))


def csv_pieces(rows: Sequence[Row], redact_secrets: bool = True) -> Iterator[str]:
    """summary_csv's text a line at a time, for writing as it comes."""
    yield _csv_row(CSV_COLUMNS)
    for row in rows:
        g = row.graded
        verdict = {True: "pass", False: "fail", None: "not graded"}[g.passed]
        cells = [
            g.session_id, g.path, g.harness or "", g.started_at or "", g.turns, g.status,
            *("" if g.scores.get(name) is None else _num(g.scores[name]) for name in SCALES),
            verdict, "; ".join(g.failures), g.worst or "", len(g.findings),
            f"sessions/{row.name}/report.html" if row.name else ""]
        yield _csv_row([_csv_text(c, redact_secrets) if isinstance(c, str) else c for c in cells])


# -- the index pages -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class View:
    """One pre-rendered order of the sessions table (sorting without JavaScript)."""

    key: str
    file: str
    label: str
    caption: str


VIEWS = (
    View("score", "index.html", "by score",
         "lowest efficiency first (then code quality); sessions without a score last"),
    View("date", "index-by-date.html", "by date", "newest first; sessions without a date last"),
    View("harness", "index-by-harness.html", "by harness",
         "by harness, then lowest efficiency first"),
    View("input", "index-by-path.html", "by file", "in the order the sessions were given "
                                                  "(the order of summary.jsonl)"),
)

INDEX_CSS = """
:root { color-scheme: light; --ink: #1a1a1a; --muted: #4a4a4a; --line: #d6d6d6; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: #fff; color: var(--ink); font: 15px/1.5 system-ui, -apple-system,
  "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 80rem; margin: 0 auto; padding: 2rem 1.25rem 4rem; }
h1 { font-size: 2rem; margin: 0 0 .25rem; }
h2 { font-size: 1.35rem; margin: 2.25rem 0 .75rem; padding-bottom: .3rem; border-bottom: 2px solid #e3e3e3; }
.meta { color: var(--muted); margin: 0; }
nav.sort { margin: .9rem 0 0; }
nav.sort ul { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .3rem .5rem; }
nav.sort li a, nav.sort li strong { display: inline-block; padding: .2rem .6rem; border: 1px solid var(--line);
  border-radius: 1rem; text-decoration: none; }
nav.sort li strong { background: #1a1a1a; color: #fff; border-color: #1a1a1a; }
.verdicts { margin: .9rem 0 0; font-size: 1.05rem; }
.verdicts .pass { color: #1f6f43; font-weight: 700; }
.verdicts .fail { color: #b3261e; font-weight: 700; }
.scroll { overflow-x: auto; max-width: 100%; border: 1px solid #ececec; border-radius: .3rem; }
.scroll table { margin: 0; }
table.sessions { min-width: 52rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: .93rem; }
caption { text-align: left; color: var(--muted); font-size: .9rem; padding: .35rem .5rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { background: #f6f6f6; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font: .85em/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
td code { color: #444; word-break: break-all; }
/* A path wraps after its separators (the page puts a break opportunity there); a segment too
   long for the line is the only thing that may break elsewhere. */
td code.path { word-break: normal; overflow-wrap: anywhere; }
.low { color: #b3261e; font-weight: 700; }
.mid { color: #8a5a00; font-weight: 600; }
td.date, td.harness { white-space: nowrap; }
td.pass { color: #1f6f43; font-weight: 600; }
td.fail { color: #b3261e; font-weight: 600; }
.status { color: #8a5a00; }
.error { color: #b3261e; }
.bar { display: inline-block; height: .8rem; background: #1f6f43; vertical-align: middle; }
.chart svg { width: 100%; height: auto; max-width: 48rem; display: block; }
.chart .legend { font-size: .9rem; color: var(--muted); margin: .25rem 0 0; }
.key { display: inline-block; width: .9rem; height: .25rem; vertical-align: .2rem; margin-right: .3rem; }
a { color: #0b57d0; }
footer { margin-top: 3rem; color: #555; font-size: .85rem; }
@media (max-width: 40rem) {
  table.sessions.cards { min-width: 0; }
  main { padding: 1.25rem .85rem 3rem; }
  h1 { font-size: 1.6rem; }
  table { font-size: .85rem; }
  th, td { padding: .3rem .35rem; }
}
@media print {
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  nav.sort { display: none; }
  .scroll { overflow: visible; border: 0; }
  table.sessions { min-width: 0; }
  thead { display: table-header-group; }
  tr, .chart { break-inside: avoid; }
  h2, caption { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
"""

EFFICIENCY_COLOUR, CODE_QUALITY_COLOUR = "#1f6f43", "#7c3aed"


def _fmt(value: float | None) -> str:
    if value is None:
        return "N/A"
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _level(value: float | None) -> str:
    if value is None:
        return ""
    return "low" if value < 4 else ("mid" if value < 7 else "")


def _scored(g: Graded) -> bool:
    return g.status in ("ok", "parse_error") and any(v is not None for v in g.scores.values())


def _score_key(g: Graded) -> tuple:
    def value(name: str) -> float:
        v = g.scores.get(name)
        return 11.0 if v is None else float(v)  # N/A sorts after every score
    return (0 if _scored(g) else 1, value("efficiency"), value("code_quality"))


def ordered(rows: Sequence[Row], view: str) -> list[Row]:
    """The rows in one view's order; ties keep input order, so every view is deterministic."""
    indexed = list(enumerate(rows))
    if view == "score":
        indexed.sort(key=lambda item: (_score_key(item[1].graded), item[0]))
    elif view == "date":
        def when(item: tuple[int, Row]) -> tuple:
            moment = _started(item[1].graded.started_at)
            return (moment is None, -moment.timestamp() if moment else 0.0, item[0])
        indexed.sort(key=when)
    elif view == "harness":
        indexed.sort(key=lambda item: (item[1].graded.harness is None,
                                       item[1].graded.harness or "",
                                       _score_key(item[1].graded), item[0]))
    return [row for _, row in indexed]


# The sessions table, the one part of an index page that grows with the batch, is built and
# rendered this many rows at a time (see index_pieces).
ROWS_PER_PIECE = 100
_ROWS_MARK = "SkillDoctorSessionRowsGoHere"  # letters only: no redaction pattern touches it


def render_index(rows: Sequence[Row], figures: Mapping[str, Any], generated_at: str,
                 skipped: int = 0, *, view: str = "score",
                 thresholds: Mapping[str, float] | None = None,
                 redact_secrets: bool = True) -> str:
    """One of the batch's index pages (deterministic for the same rows): `view` picks the
    order of the sessions table; every view shows the same figures. Like report.html it
    leaves through the page boundary (redact.scrub_page): text redacted, hidden characters
    shown."""
    return "".join(index_pieces(rows, figures, generated_at, skipped, view=view,
                                thresholds=thresholds, redact_secrets=redact_secrets))


def index_pieces(rows: Sequence[Row], figures: Mapping[str, Any], generated_at: str,
                 skipped: int = 0, *, view: str = "score",
                 thresholds: Mapping[str, float] | None = None, redact_secrets: bool = True,
                 rows_per_piece: int | None = ROWS_PER_PIECE,
                 rendered: RenderedRows | None = None) -> Iterator[str]:
    """render_index's page as consecutive pieces of text, for writing as they come.

    A page element costs about a kilobyte, a dozen per session: the page of 10,000 sessions
    built whole held over 100 MB. So the page is built and rendered around a placeholder in the
    sessions table, and the table's rows `rows_per_piece` at a time into it, each piece through
    the same page boundary, indented as the whole page would be: the same bytes, with a few
    hundred rows' elements in memory at once (None: the whole page at once, as a reference).
    With `rendered`, the rows of `rows` rendered once for every order of the index, each row's
    text is taken from there."""
    from dominate import tags as h

    from .render import rows_in_pieces, table_around

    in_order = ordered(rows, view) if rows else []
    if rows_per_piece is None:
        yield _index_page(rows, in_order, figures, generated_at, skipped, view, thresholds,
                          redact_secrets)
        return
    page_text = _index_page(rows, None, figures, generated_at, skipped, view, thresholds,
                            redact_secrets)
    if not in_order:  # no sessions: no table
        yield page_text
        return
    around = table_around(page_text, _ROWS_MARK)
    if rendered is not None and around is not None:
        head, tail, depth = around
        yield head
        yield from rendered.texts(in_order, depth)
        yield tail
        return
    yield from rows_in_pieces(page_text, _ROWS_MARK, in_order, lambda row: _session_row(row, h),
                              redact_secrets, rows_per_piece)


class RenderedRows:
    """The index's session rows, each rendered once (the index shows them in several orders),
    kept in a spill file (see `spill`) so a batch of ten thousand does not hold them in memory."""

    def __init__(self, rows: Sequence[Row], redact_secrets: bool,
                 rows_per_piece: int = ROWS_PER_PIECE) -> None:
        from .spill import open_spill

        self._rows = rows
        self._redact_secrets = redact_secrets
        self._per_piece = rows_per_piece
        self._spill = open_spill()
        self._at: dict[int, Any] = {}  # id(row) -> its text's place in the spill (or the text)

    def texts(self, in_order: Sequence[Row], depth: int) -> Iterator[str]:
        """Each row's text, in the order given, for a table body `depth` elements deep (every
        order of the index is one page layout: the rows are rendered on the first call)."""
        from dominate import tags as h

        from .render import row_texts

        if not self._at:
            for row, text in zip(self._rows, row_texts(self._rows, lambda r: _session_row(r, h),
                                                       depth, self._redact_secrets,
                                                       self._per_piece)):
                self._at[id(row)] = self._spill.put_text(text) if self._spill else text
        for row in in_order:
            place = self._at[id(row)]
            yield self._spill.text(place) if self._spill else place

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()


def _index_page(rows: Sequence[Row], in_order: Sequence[Row] | None,
                figures: Mapping[str, Any], generated_at: str, skipped: int, view: str,
                thresholds: Mapping[str, float] | None, redact_secrets: bool) -> str:
    """The index page; with `in_order` None, the sessions table holds a placeholder for its
    rows."""
    from dominate import tags as h

    from .redact import scrub_page
    from .render import CARDS_CSS, page

    limits = dict(thresholds or {})
    current = next(v for v in VIEWS if v.key == view)
    doc = page("Skill Doctor Batch Report", INDEX_CSS + CARDS_CSS)
    n = len(rows)
    with doc:
        with h.main():
            with h.header():
                h.h1("Skill Doctor Batch Report")
                statuses = ", ".join(f"{count} {status.replace('_', ' ')}"
                                     for status, count in figures["statuses"].items())
                h.p(f"{n} session{'s' if n != 1 else ''} graded"
                    + (f" ({statuses})" if statuses else "")
                    + (f"; {skipped} older than --since left out" if skipped else "") + ".",
                    cls="meta")
                verdicts = figures.get("verdicts", {})
                if n:
                    with h.p(cls="verdicts", __pretty=False):
                        if limits:
                            h.span("Against the thresholds (" + ", ".join(
                                f"{SCALE_TITLES[k].lower()} {_fmt(v)}"
                                for k, v in limits.items()) + "), as skill-doctor check "
                                "judges: ")
                        h.span(f"{verdicts.get('passed', 0)} pass", cls="pass")
                        h.span(", ")
                        h.span(f"{verdicts.get('failed', 0)} fail", cls="fail")
                        if verdicts.get("not_graded"):
                            h.span(f", {verdicts['not_graded']} not graded (too short)")
                        h.span(".")
                with h.nav(cls="sort", aria_label="Sort the sessions"):
                    with h.ul():
                        h.li("Sessions:", cls="meta")
                        for v in VIEWS:
                            with h.li():
                                if v.key == view:
                                    h.strong(v.label, aria_current="page")
                                else:
                                    h.a(v.label, href=f"{v.file}#sessions")
            with h.section(aria_labelledby="sessions"):
                h.h2("Sessions", id="sessions")
                if not rows:
                    h.p("No sessions found.")
                else:
                    _sessions_table(in_order, h, current)
            _harness_section(figures, h)
            _chart(rows, limits, h)
            _aggregate_section(figures, h)
            h.footer(f"Generated by skill-doctor at {generated_at}. Deterministic: the same "
                     "sessions and rubric give the same pages. summary.jsonl holds one "
                     "report.json record per session, summary.csv the table above for "
                     "spreadsheets, aggregate.json the figures.")
    return scrub_page(doc, redact_secrets) + "\n"


def _harness_section(figures: Mapping[str, Any], h) -> None:
    harnesses = figures.get("harnesses") or {}
    if not harnesses:
        return
    with h.section(aria_labelledby="harnesses"):
        h.h2("By harness", id="harnesses")
        with h.div(cls="scroll fits"):
            with h.table(cls="cards"):
                with h.thead():
                    with h.tr():
                        for title in ("Harness", "Sessions", "Efficiency mean",
                                      "Code quality mean", "Pass", "Fail", "Not graded"):
                            h.th(title, scope="col", cls="" if title == "Harness" else "num")
                with h.tbody():
                    for harness, entry in harnesses.items():
                        with h.tr():
                            h.td(harness, cls="lead wide o1")
                            h.td(str(entry["sessions"]), cls="num o2", data_label="Sessions")
                            for name in SCALES:
                                s = entry[name]
                                h.td(f"{_fmt(s['mean'])} (n = {s['n']})" if s["n"] else "N/A",
                                     cls="num o3", data_label=f"{SCALE_TITLES[name]} mean")
                            h.td(str(entry["passed"]), cls="num o4", data_label="Pass")
                            h.td(str(entry["failed"]), cls="num o4", data_label="Fail")
                            h.td(str(entry["not_graded"]), cls="num o4",
                                 data_label="Not graded")


def _chart(rows: Sequence[Row], thresholds: Mapping[str, float], h) -> None:
    """Daily mean scores as an inline SVG line chart, when the sessions span over a day.

    Inline SVG is part of the page, so the CSP that forbids every load does not stop it; each
    day's figures are also given as text in a table below the chart, for screen readers and
    for anyone who wants the numbers.
    """
    from datetime import date as Date, timedelta

    days: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        g = row.graded
        if not g.date or not _scored(g):
            continue
        for name in SCALES:
            value = g.scores.get(name)
            if value is not None:
                days.setdefault(g.date, {}).setdefault(name, []).append(float(value))
    if len(days) < 2:
        return
    from dominate import svg

    ordered_days = sorted(days)
    first = Date.fromisoformat(ordered_days[0])
    span = (Date.fromisoformat(ordered_days[-1]) - first).days or 1
    width, height, left, right, top, bottom = 640, 240, 34, 14, 12, 34

    def x(day: str) -> float:
        return left + (Date.fromisoformat(day) - first).days * (width - left - right) / span

    def y(score: float) -> float:
        return top + (10 - score) * (height - top - bottom) / 10

    means = {name: [(day, statistics.fmean(days[day][name])) for day in ordered_days
                    if days[day].get(name)] for name in SCALES}
    colours = {"efficiency": EFFICIENCY_COLOUR, "code_quality": CODE_QUALITY_COLOUR}
    with h.section(aria_labelledby="over-time", cls="chart"):
        h.h2("Scores over time", id="over-time")
        label = (f"Daily mean scores from {ordered_days[0]} to {ordered_days[-1]} over "
                 f"{len(ordered_days)} days with sessions")
        with svg.svg(viewBox=f"0 0 {width} {height}", role="img", aria_label=label):
            svg.title(label)
            for score in (0, 5, 10):
                svg.line(x1=left, x2=width - right, y1=f"{y(score):.1f}", y2=f"{y(score):.1f}",
                         stroke="#d6d6d6", stroke_width=1)
                svg.text(str(score), x=left - 8, y=f"{y(score) + 4:.1f}", text_anchor="end",
                         font_size=12, fill="#4a4a4a")
            for limit in sorted(set(thresholds.values())):
                if 0 < limit < 10:
                    svg.line(x1=left, x2=width - right, y1=f"{y(limit):.1f}",
                             y2=f"{y(limit):.1f}", stroke="#b3261e", stroke_width=1,
                             stroke_dasharray="5 4")
            # Dates along the axis: the first, the last and up to three evenly between.
            ticks = [first + timedelta(days=round(span * k / 4)) for k in range(5)] \
                if span >= 8 else [first, first + timedelta(days=span)]
            for i, day in enumerate(ticks):
                anchor = "start" if i == 0 else "end" if i == len(ticks) - 1 else "middle"
                svg.line(x1=f"{x(day.isoformat()):.1f}", x2=f"{x(day.isoformat()):.1f}",
                         y1=height - bottom, y2=height - bottom + 4, stroke="#4a4a4a")
                svg.text(day.isoformat(), x=f"{x(day.isoformat()):.1f}", y=height - 10,
                         font_size=12, fill="#4a4a4a", text_anchor=anchor)
            for name in SCALES:
                points = means[name]
                if not points:
                    continue
                svg.polyline(points=" ".join(f"{x(d):.1f},{y(v):.1f}" for d, v in points),
                             fill="none", stroke=colours[name], stroke_width=2)
                for d, v in points:
                    svg.circle(cx=f"{x(d):.1f}", cy=f"{y(v):.1f}", r=3.5, fill=colours[name])
        with h.p(cls="legend", __pretty=False):
            for name in SCALES:
                h.span(cls="key", style=f"background: {colours[name]}")
                h.span(f"{SCALE_TITLES[name]} (daily mean)  ")
            if thresholds:
                h.span(cls="key", style="background: #b3261e")
                h.span("threshold")
        with h.details():
            h.summary("The figures per day")
            with h.div(cls="scroll"):
                with h.table():
                    with h.thead():
                        with h.tr():
                            h.th("Day", scope="col")
                            for name in SCALES:
                                h.th(f"{SCALE_TITLES[name]} mean (sessions)", scope="col",
                                     cls="num")
                    with h.tbody():
                        for day in ordered_days:
                            with h.tr():
                                h.td(day)
                                for name in SCALES:
                                    values = days[day].get(name, [])
                                    h.td(f"{_fmt(round(statistics.fmean(values), 1))} "
                                         f"({len(values)})" if values else "N/A", cls="num")


def _aggregate_section(figures: Mapping[str, Any], h) -> None:
    with h.section(aria_labelledby="aggregate"):
        h.h2("Aggregate", id="aggregate")
        total = figures["sessions"]
        with h.div(cls="scroll fits"):
            with h.table(cls="cards"):
                with h.thead():
                    with h.tr():
                        for title in ("Scale", "Sample size", "Mean", "Median", "Min", "Max"):
                            h.th(title, scope="col", cls="" if title == "Scale" else "num")
                with h.tbody():
                    for name in SCALES:
                        s = figures["scales"][name]
                        with h.tr():
                            h.td(SCALE_TITLES[name], cls="lead wide o1")
                            h.td(f"n = {s['n']} of {total}", cls="num o2",
                                 data_label="Sample size")
                            for key in ("mean", "median", "min", "max"):
                                h.td(_fmt(s[key]), cls="num o3", data_label=key.title())
        h.p("Sessions without a score (too short, unparseable, or code quality of a session "
            "that changed no code) are not in the sample.", cls="meta")
        h.p(usage_line(figures["usage"]), cls="meta")
        with h.div(cls="scroll"):
            with h.table():
                with h.thead():
                    with h.tr():
                        h.th("Score", scope="col")
                        for name in SCALES:
                            h.th(SCALE_TITLES[name] + " (sessions)", scope="col", cls="num")
                with h.tbody():
                    for k in range(10, -1, -1):
                        with h.tr():
                            h.td(str(k) if k == 10 else f"{k} to under {k + 1}")
                            for name in SCALES:
                                s = figures["scales"][name]
                                count = s["distribution"][str(k)]
                                with h.td(cls="num"):
                                    if count and s["n"]:
                                        h.span(cls="bar", style=f"width: {max(2, round(60 * count / s['n']))}px")
                                    h.span(f" {count}")
        found = figures["findings"]
        h.h2("Most frequent findings", id="frequent")
        if not found["most_frequent"]:
            h.p("No findings in any scored session." if found["sessions_scored"]
                else "No session could be scored.")
            return
        h.p(f"Share of the {found['sessions_scored']} scored sessions with each finding.",
            cls="meta")
        with h.div(cls="scroll"):
            with h.table():
                with h.thead():
                    with h.tr():
                        h.th("Criterion", scope="col")
                        h.th("Sessions", scope="col", cls="num")
                        h.th("Share", scope="col", cls="num")
                with h.tbody():
                    for item in found["most_frequent"]:
                        with h.tr():
                            h.td(f"{item['category']} ({item['id']})")
                            h.td(str(item["sessions"]), cls="num")
                            h.td(f"{round(100 * item['share'])}%", cls="num")


def _sessions_table(rows: Sequence[Row] | None, h, view: View) -> None:
    """The sessions table; with `rows` None, its body holds the rows' placeholder. On a phone
    each session is a card: its scores, verdict and worst criterion first, then its id and
    path, harness, date and turns."""
    with h.div(cls="scroll fits"):
        with h.table(cls="sessions cards"):
            h.caption(f"Sorted {view.label}: {view.caption}.")
            with h.thead():
                with h.tr():
                    for title in ("Session", "Harness", "Date", "Turns", "Efficiency",
                                  "Code quality", "Verdict", "Worst criterion"):
                        h.th(title, scope="col",
                             cls="num" if title in ("Turns", "Efficiency", "Code quality") else "")
            with h.tbody():
                if rows is None:
                    from dominate.util import text

                    text(_ROWS_MARK)
                for row in rows or ():
                    _session_row(row, h)


def _session_row(row: Row, h) -> None:
    g = row.graded
    with h.tr():
        with h.td(cls="wide o5"):
            if row.name is not None:
                h.a(g.session_id, href=f"sessions/{quote(row.name)}/report.html")
            else:
                h.span(g.session_id)
            h.br()
            _path(g.path, h)
        h.td(g.harness or "—", cls="harness o6", data_label="Harness")
        h.td(g.date or "—", cls="date o7", data_label="Date")
        h.td(str(g.turns), cls="num o8", data_label="Turns")
        verdict = ("not graded" if g.passed is None else "pass" if g.passed
                   else f"fail ({'; '.join(g.failures)})")
        verdict_cls = "" if g.passed is None else ("pass" if g.passed else "fail")
        if _scored(g):
            for n, name in enumerate(SCALES, start=1):
                value = g.scores.get(name)
                h.td(_fmt(value), cls=f"num o{n} {_level(value)}".strip(),
                     data_label=SCALE_TITLES[name])
            h.td(verdict, cls=f"o3 {verdict_cls}".strip(), data_label="Verdict")
            h.td(g.worst or "none: every criterion at its maximum", cls="wide o4",
                 data_label="Worst criterion")
        else:
            label = {"too_short": "too short to assess",
                     "no_history": "no history",
                     "parse_error": "could not be parsed",
                     "error": "not graded"}.get(g.status, g.status)
            h.td("N/A", cls="num o1", data_label=SCALE_TITLES["efficiency"])
            h.td("N/A", cls="num o2", data_label=SCALE_TITLES["code_quality"])
            h.td(verdict, cls=f"o3 {verdict_cls}".strip(), data_label="Verdict")
            h.td(f"{label}: {g.message}" if g.message and g.status == "error"
                 else label, cls="wide o4 " + ("error" if g.status in ("error", "parse_error")
                                               else "status"), data_label="Worst criterion")


def _path(path: str, h) -> None:
    """A path that may wrap after its separators (/, \\, _, -, .) and nowhere else, so a long
    one fits a phone without a word broken inside."""
    from dominate.util import text

    with h.code(cls="path", __pretty=False):
        for piece in _SEPARATED.findall(path):
            text(piece)
            if piece[-1] in _SEPARATORS:
                h.wbr()


_SEPARATORS = "/\\_-."
_SEPARATED = compile_later(r"[^/\\_.-]*[/\\_.-]|[^/\\_.-]+")
