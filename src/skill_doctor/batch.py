"""batch: grade many sessions into one directory with an index page and `summary.jsonl`.

Each session goes through the same pipeline as `skill-doctor report` (decode_file, grade,
render, to_json) and gets its own `sessions/<id>/` report. Around them the batch writes:

- `index.html`: a static table (session, harness, date, turns, both scores, worst criterion,
  a link to the session's report) and the aggregate figures; embedded CSS, no JavaScript, the
  same Content-Security-Policy as report.html;
- `summary.jsonl`: one report.json-shaped line per session, in index order, plus a `report`
  key with the relative path of its page;
- `aggregate.json`: the figures shown on the index (sample sizes, mean, median and
  distribution of each score, most frequent findings).

Grading runs over processes with `jobs > 1`; results are collected in input order, so the
output is byte-identical whatever the number of processes. Everything is built in a temporary
directory beside the target and renamed into place at the end (write.staged). A session that
cannot be read becomes a parse-error report like any other; one that makes the grader fail is
listed in the index with the error, and the batch goes on.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence
from urllib.parse import quote

from .rubric import SCALES, Rubric

BATCH_MARKER = "summary.jsonl"  # a directory holding this is an earlier batch and may be replaced
MAX_NAME = 80
TOP_FINDINGS = 10
SCALE_TITLES = {"efficiency": "Efficiency", "code_quality": "Code quality"}


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
    worst: str | None = None  # the finding that costs most points, e.g. "Retry waste 1/2"
    findings: tuple[tuple[str, str, str], ...] = ()  # (rule id, rule name, category)
    files: Mapping[str, str] = field(default_factory=dict)  # report.html, report.json
    record: Mapping[str, Any] | None = None  # report.json data
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
              redact_secrets: bool = True, out_dir: str | None = None, index: int = 0) -> Graded:
    """Decode, grade and render one session; never raises (a failure becomes an error row).

    With `out_dir`, the pages are written to `out_dir/<index>/` here (in the worker) and the
    row carries only that folder's name: what waits in memory for its turn in the input order
    is a few hundred bytes per session, whatever the sessions hold."""
    from .decode import decode_file
    from .render import render
    from .report import display_path, grade, to_json
    from .write import dump_json

    shown = display_path(path, redact_secrets)  # home as ~, secrets redacted, as in report.json
    try:
        transcript = decode_file(path)
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
                return Graded(path, "", "skipped", None, skipped=True)
        report = grade(transcript, rubric, generated_at, redact_secrets=redact_secrets)
        record = to_json(report)
        worst = None
        if report.findings:
            f = report.findings[0]  # ranked by points recoverable
            worst = f"{f.category} {f.score}/{f.max}"
        files = {"report.html": render(report), "report.json": dump_json(record)}
        staged_in = None
        if out_dir is not None:
            from .write import write_file

            folder = Path(out_dir) / str(index)
            folder.mkdir()
            for name, text in sorted(files.items()):
                write_file(folder / name, text)
            files, record, staged_in = {}, None, str(folder)
        return Graded(
            path=shown, session_id=report.session_id, status=report.status,
            message=report.message, harness=transcript.harness,
            date=started.strftime("%Y-%m-%d") if started else None,
            turns=len(transcript.turns),
            scores={s.name: s.score for s in report.scores.scales()},
            worst=worst,
            findings=tuple((f.rule_id, f.rule_name, f.category) for f in report.findings),
            files=files, record=record, staged=staged_in)
    except Exception as exc:  # one session must not stop the batch
        from .redact import shown as shown_text

        name = os.path.splitext(os.path.basename(path))[0] or "session"
        return Graded(shown, shown_text(name, redact_secrets), "error",
                      f"grading failed: {type(exc).__name__}: {exc}")


def grade_all(paths: Sequence[str], rubric: Rubric, generated_at: str, *,
              since: datetime | None = None, redact_secrets: bool = True, jobs: int = 1,
              progress: Callable[[int, int], None] | None = None,
              out_dir: str | None = None) -> Iterable[Graded]:
    """Grade `paths` in order, over `jobs` processes; yields results in input order. With
    `out_dir` the workers write the pages there (see grade_one)."""
    work = partial(grade_one, rubric=rubric, generated_at=generated_at, since=since,
                   redact_secrets=redact_secrets, out_dir=out_dir)
    total = len(paths)
    if progress:
        progress(0, total)
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

    # Largest sessions first, so one big file started last does not leave a core idle at the
    # end; results are handed on in input order all the same, so the output does not depend on
    # which worker finished first.
    order = sorted(range(total), key=lambda i: (-_size(paths[i]), i))
    indexed = partial(_grade_indexed, work=work)
    waiting: dict[int, Graded] = {}
    next_index = 0
    with multiprocessing.get_context().Pool(min(jobs, total)) as pool:
        for done, (index, graded) in enumerate(
                pool.imap_unordered(indexed, [(i, paths[i]) for i in order], chunksize=1), start=1):
            waiting[index] = graded
            if progress:
                progress(done, total)
            while next_index in waiting:
                yield waiting.pop(next_index)
                next_index += 1


def _grade_indexed(item: tuple[int, str], work: Callable[..., Graded]) -> tuple[int, Graded]:
    index, path = item
    return index, work(path, index=index)


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
    return {
        "sessions": len(graded),
        "statuses": {k: statuses[k] for k in sorted(statuses)},
        "scales": scales,
        "findings": {
            "sessions_scored": len(with_findings),
            "most_frequent": [{"id": rid, "rule": rule, "category": category, "sessions": n,
                               "share": _num(n / len(with_findings))}
                              for (rid, rule, category), n in top],
        },
    }


# -- the whole batch -----------------------------------------------------------------------------


def run(paths: Sequence[str], target: Path, rubric: Rubric, generated_at: str, *,
        since: datetime | None = None, redact_secrets: bool = True, jobs: int = 1,
        force: bool = False, progress: Callable[[int, int], None] | None = None) -> BatchResult:
    """Grade every path and write the batch directory `target`, all or nothing."""
    from .redact import scrub_data
    from .write import dump_json, staged, write_file, write_report

    rows: list[Row] = []
    skipped = 0
    taken: set[str] = set()
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
                                    out_dir=str(work)):
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
                rows.append(Row(name, graded))
                summary.write(json.dumps(
                    scrub_data(_summary_record(graded, name, record), redact_secrets),
                    sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")
            summary.flush()
            os.fsync(summary.fileno())
        shutil.rmtree(work)  # empty unless a worker failed part-way through its pages
        figures = aggregate(rows)
        write_file(tmp / "aggregate.json", dump_json(scrub_data(figures, redact_secrets)))
        write_file(tmp / "index.html", render_index(rows, figures, generated_at, skipped,
                                                    redact_secrets=redact_secrets))
    return BatchResult(target, tuple(rows), figures, skipped)


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


# -- the index page ------------------------------------------------------------------------------

INDEX_CSS = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: #1a1a1a; font: 15px/1.5 system-ui, -apple-system,
  "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 80rem; margin: 0 auto; padding: 2rem 1.25rem 4rem; }
h1 { font-size: 2rem; margin: 0 0 .25rem; }
h2 { font-size: 1.35rem; margin: 2.25rem 0 .75rem; padding-bottom: .3rem; border-bottom: 2px solid #e3e3e3; }
.meta { color: #444; margin: 0; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: .93rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { background: #f6f6f6; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td code { font-size: .85em; color: #444; word-break: break-all; }
.low { color: #b3261e; font-weight: 700; }
.mid { color: #8a5a00; font-weight: 600; }
.status { color: #8a5a00; }
.error { color: #b3261e; }
.bar { display: inline-block; height: .8rem; background: #1f6f43; vertical-align: middle; }
a { color: #0b57d0; }
footer { margin-top: 3rem; color: #555; font-size: .85rem; }
"""


def _fmt(value: float | None) -> str:
    if value is None:
        return "N/A"
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _level(value: float | None) -> str:
    if value is None:
        return ""
    return "low" if value < 4 else ("mid" if value < 7 else "")


def render_index(rows: Sequence[Row], figures: Mapping[str, Any], generated_at: str,
                 skipped: int = 0, *, redact_secrets: bool = True) -> str:
    """The batch's index.html (deterministic for the same rows). Like report.html it leaves
    through the page boundary (redact.scrub_page): text redacted, hidden characters shown."""
    from dominate import tags as h

    from .redact import scrub_page
    from .render import page

    doc = page("Skill Doctor Batch Report", INDEX_CSS)
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
            _aggregate_section(figures, h)
            with h.section(aria_labelledby="sessions"):
                h.h2("Sessions", id="sessions")
                if not rows:
                    h.p("No sessions found.")
                else:
                    _sessions_table(rows, h)
            h.footer(f"Generated by skill-doctor at {generated_at}. Deterministic: the same "
                     "sessions and rubric give the same pages. summary.jsonl holds one "
                     "report.json record per session; aggregate.json the figures above.")
    return scrub_page(doc, redact_secrets) + "\n"


def _aggregate_section(figures: Mapping[str, Any], h) -> None:
    with h.section(aria_labelledby="aggregate"):
        h.h2("Aggregate", id="aggregate")
        total = figures["sessions"]
        with h.table():
            with h.thead():
                with h.tr():
                    for title in ("Scale", "Sample size", "Mean", "Median", "Min", "Max"):
                        h.th(title, scope="col", cls="" if title == "Scale" else "num")
            with h.tbody():
                for name in SCALES:
                    s = figures["scales"][name]
                    with h.tr():
                        h.td(SCALE_TITLES[name])
                        h.td(f"n = {s['n']} of {total}", cls="num")
                        for key in ("mean", "median", "min", "max"):
                            h.td(_fmt(s[key]), cls="num")
        h.p("Sessions without a score (too short, unparseable, or code quality of a session "
            "that changed no code) are not in the sample.", cls="meta")
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
        with h.table():
            with h.thead():
                with h.tr():
                    h.th("Rule", scope="col")
                    h.th("Criterion", scope="col")
                    h.th("Sessions", scope="col", cls="num")
                    h.th("Share", scope="col", cls="num")
            with h.tbody():
                for item in found["most_frequent"]:
                    with h.tr():
                        h.td(f"{item['id']} {item['rule']}")
                        h.td(item["category"])
                        h.td(str(item["sessions"]), cls="num")
                        h.td(f"{round(100 * item['share'])}%", cls="num")


def _sessions_table(rows: Sequence[Row], h) -> None:
    with h.table():
        with h.thead():
            with h.tr():
                for title in ("Session", "Harness", "Date", "Turns", "Efficiency",
                              "Code quality", "Worst criterion"):
                    h.th(title, scope="col",
                         cls="num" if title in ("Turns", "Efficiency", "Code quality") else "")
        with h.tbody():
            for row in rows:
                g = row.graded
                with h.tr():
                    with h.td():
                        if row.name is not None:
                            h.a(g.session_id, href=f"sessions/{quote(row.name)}/report.html")
                        else:
                            h.span(g.session_id)
                        h.br()
                        h.code(g.path)
                    h.td(g.harness or "—")
                    h.td(g.date or "—")
                    h.td(str(g.turns), cls="num")
                    if g.status in ("ok", "parse_error") and any(
                            v is not None for v in g.scores.values()):
                        for name in SCALES:
                            value = g.scores.get(name)
                            h.td(_fmt(value), cls=("num " + _level(value)).strip())
                        h.td(g.worst or "none: every criterion at its maximum")
                    else:
                        label = {"too_short": "too short to assess",
                                 "no_history": "no history",
                                 "parse_error": "could not be parsed",
                                 "error": "not graded"}.get(g.status, g.status)
                        h.td("N/A", cls="num")
                        h.td("N/A", cls="num")
                        h.td(f"{label}: {g.message}" if g.message and g.status == "error"
                             else label, cls="error" if g.status in ("error", "parse_error")
                             else "status")
