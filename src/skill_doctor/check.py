"""check: grade many sessions against the rubric's thresholds and say so in lines CI parses.

`skill-doctor check PATH...` is the linter face of skill-doctor (a pre-commit hook, a CI step).
Each session becomes a `SessionCheck`: its report, whether it meets the thresholds, and one
`Diagnostic` per finding in flake8's shape, positioned at the cited turn's line and column in
the source file. Formatters turn a list of checks into text, JSON or GitHub annotations.

What passes (and why):
- a graded session passes when each scored scale meets its threshold; a scale that is N/A
  (code quality of a session that changed no code) passes, since there is nothing to judge;
- a session too short to assess, or an empty file, is not graded and does not fail: a commit
  that saves a two-line session has done nothing wrong;
- a file that cannot be parsed (or read) fails, even when the turns decoded before the error
  were scored: CI must not pass over a session it could not fully read.

Severity: a finding is an `error` when its scale is below the threshold (it is why the session
fails), otherwise a `warning`. A parse problem is `SD001 unparseable-session`, always an error.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .errors import UsageError
from .locate import iter_transcripts
from .report import Report, task_id
from .rubric import SCALES, Rubric
from .redact import scrub_data, shown, terminal
from .text import excerpt
from .tokens import to_json as usage_json

CHECK_SCHEMA = "skill-doctor/check/v1"
PARSE_CODE, PARSE_RULE = "SD001", "unparseable-session"
BASELINE_CODE, BASELINE_RULE = "SD002", "below-baseline"
DEFAULT_TOLERANCE = 1.0
SCALE_LABELS = {"efficiency": "efficiency", "code_quality": "code quality"}
FORMATS = ("text", "json", "github")
NOTE_CHARS = 160
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One line of output: `path:line:col: CODE [severity] turn N: Criterion n/max: message
    (rule)`."""

    path: str
    line: int
    column: int
    code: str
    severity: str  # "error" or "warning"
    turn: int | None
    message: str
    rule: str

    def __str__(self) -> str:
        where = f"turn {self.turn}: " if self.turn is not None else ""
        return (f"{self.path}:{self.line}:{self.column}: {self.code} [{self.severity}] "
                f"{where}{self.message} ({self.rule})")


@dataclass(frozen=True, slots=True)
class SessionCheck:
    path: str  # as the user named it (or as found under the folder they named)
    # The report without the session's turns, facts and page data (see `_kept`): a check of
    # a thousand sessions holds a thousand verdicts, not a thousand sessions.
    report: Report
    passed: bool
    failures: tuple[str, ...]  # why it fails, e.g. "efficiency 4 < 5"
    diagnostics: tuple[Diagnostic, ...]
    graded: bool = False  # scored (a parse error that stopped part-way is scored on what came)
    turns: int = 0  # the session's turns


def _kept(report: Report) -> Report:
    """What a check keeps of a report once judged: scores, findings, the usage summary and
    the session's description, without its turns (and the spill file they may hold open), its
    per-call token records, facts or page data."""
    t = report.transcript
    kept = replace(t, turns=(), session_starts=(), usage=()) if t is not None else None
    return replace(report, transcript=kept, facts=None, overview=None)


# -- which files ---------------------------------------------------------------------------


def transcripts_under(folder: Path, links: list[Path] | None = None) -> list[Path]:
    """Every transcript file below `folder`, sorted by path (subagent files and symbolic links
    left out; the links are added to `links`)."""
    return sorted(iter_transcripts(folder, links=links), key=lambda p: p.as_posix())


def expand(args: Sequence[str], cwd: Path, notes: list[str] | None = None) -> list[Path]:
    """Files, folders (every transcript below) and globs -> session files, first mention wins.

    A path that does not exist or a glob that matches nothing is a usage error: a CI step
    pointed at the wrong place must not pass quietly. Symbolic links found by a folder walk or
    a glob are not followed; one named as an argument is. Both are said in `notes`.
    """
    said: list[str] = notes if notes is not None else []
    out: list[Path] = []
    seen: set[str] = set()

    def add(path: Path) -> None:
        key = os.path.normcase(os.path.abspath(cwd / path))
        if key not in seen:
            seen.add(key)
            out.append(path)

    for arg in args:
        path = Path(arg)
        full = path if path.is_absolute() else cwd / path
        if os.path.lexists(full):
            if full.is_symlink():
                said.append(f"{arg}: a symbolic link, followed because it was named")
            if full.is_dir():
                links: list[Path] = []
                for found in transcripts_under(full, links):
                    add(path / found.relative_to(full))
                said.extend(f"{(path / link.relative_to(full)).as_posix()}: a symbolic link, "
                            f"not followed in a folder (name it to check it)" for link in links)
            else:
                add(path)
            continue
        if _GLOB_CHARS & set(arg):
            # root_dir keeps the working directory's own name out of the pattern
            matches = sorted(glob.glob(arg, root_dir=cwd, recursive=True))
            files = [Path(m) for m in matches if (cwd / m).is_file()]
            linked = [f for f in files if (cwd / f).is_symlink()]
            said.extend(f"{f.as_posix()}: a symbolic link, not followed from a pattern "
                        f"(name it to check it)" for f in linked)
            files = [f for f in files if f not in linked]
            if not files and not linked:
                raise UsageError(f"{arg}: no file matches")
            for match in files:
                add(match)
            continue
        raise UsageError(f"{arg}: no such file or directory")
    return out


def display(path: Path, redact_secrets: bool = True) -> str:
    """A session's path as check lines show it: home as ~, secrets redacted (unless switched
    off), hidden characters visible; shown on its own, so a pattern never runs over the
    `path:line:col:` that follows it."""
    return shown(path.as_posix(), redact_secrets)


# -- judging one session ---------------------------------------------------------------------


def thresholds_for(rubric: Rubric, overrides: Mapping[str, float | None]) -> dict[str, float]:
    """The rubric's `thresholds:`, with command-line values laid over them."""
    out = {scale: float(rubric.thresholds.get(scale, 0)) for scale in SCALES}
    for scale, value in overrides.items():
        if value is not None:
            if not 0 <= value <= 10:
                raise UsageError(f"--min-{scale.replace('_', '-')} must be from 0 to 10, "
                                 f"got {value:g}")
            out[scale] = float(value)
    return out


def judge(path: str, report: Report, thresholds: Mapping[str, float]) -> SessionCheck:
    """Does this graded session meet the thresholds? With one diagnostic per finding."""
    failures: list[str] = []
    failing_scales: set[str] = set()
    diagnostics: list[Diagnostic] = []
    t = report.transcript
    if report.status == "parse_error":
        problem = t.problem if t is not None else None
        line = problem.line if problem is not None and problem.line else 1
        column = problem.column if problem is not None and problem.column else 1
        failures.append("parse error")
        diagnostics.append(Diagnostic(path, line, column, PARSE_CODE, "error", None,
                                      _one_line(report.message or "cannot parse the file"),
                                      PARSE_RULE))
    if report.status in ("ok", "parse_error"):
        for scale in report.scores.scales():
            if scale.score is None:
                continue  # N/A meets any threshold: there was nothing of that kind to judge
            minimum = thresholds.get(scale.name, 0)
            if scale.score < minimum:
                failing_scales.add(scale.name)
                failures.append(f"{SCALE_LABELS[scale.name]} {_num(scale.score)} < {_num(minimum)}")
    for f in report.findings:
        first = f.evidence[0] if f.evidence else None
        # The criterion by its plain name, as every page names it; the code before it is
        # what editors and CI read.
        message = f"{f.category} {f.score}/{f.max}: {_one_line(f.message)}"
        if first is not None and first.note and _one_line(first.note) != _one_line(f.message):
            message += f": {excerpt(first.note, NOTE_CHARS)}"
        extra = len(f.evidence) - 1 + f.more_evidence
        if extra > 0:
            message += f" (+{extra} more)"
        diagnostics.append(Diagnostic(
            path, max(1, first.line) if first else 1, max(1, first.column) if first else 1,
            f.rule_id, "error" if f.scale in failing_scales else "warning",
            first.turn if first else None, message, f.rule_name))
    graded = report.status == "ok" or (report.status == "parse_error" and report.facts is not None)
    return SessionCheck(path, _kept(report), not failures, tuple(failures), tuple(diagnostics),
                        graded, len(t.turns) if t is not None else 0)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def summary_line(check: SessionCheck) -> str:
    """`path: efficiency 7/10, code quality N/A, 2 findings: pass` and the like."""
    report = check.report
    part = report.transcript.part if report.transcript is not None else None
    if part is not None:  # one of several sessions in the file: say which
        check = replace(check, path=f"{check.path} (session {part[0]} of {part[1]}, "
                                    f"{report.session_id})")
    if report.status in ("no_history", "too_short"):
        return f"{check.path}: {_one_line(report.message or report.status)}: not graded"
    if report.status == "parse_error" and not check.graded:
        return f"{check.path}: parse error: FAIL"
    parts = []
    for scale in report.scores.scales():
        score = "N/A" if scale.score is None else f"{_num(scale.score)}/10"
        parts.append(f"{SCALE_LABELS[scale.name]} {score}")
    n = len(report.findings)
    parts.append(f"{n} finding{'s' if n != 1 else ''}")
    verdict = "pass" if check.passed else f"FAIL ({'; '.join(check.failures)})"
    return f"{check.path}: {', '.join(parts)}: {verdict}"


def totals_line(checks: Sequence[SessionCheck], baseline: BaselineResult | None = None) -> str:
    failed = sum(not c.passed for c in checks)
    skipped = sum(c.report.status in ("no_history", "too_short") for c in checks)
    n = len(checks)
    text = f"Checked {n} session{'s' if n != 1 else ''}: {failed} failed"
    if skipped:
        text += f", {skipped} not graded (too short)"
    if baseline is not None and not baseline.passed:
        text += "; the mean fell below the baseline"
    return text + "."


# -- against a baseline (a batch's summary.jsonl) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Standing:
    """What a baseline knows of a task (or of the whole baseline): the scores of each scale
    and the points of each criterion, averaged over its sessions."""

    scales: Mapping[str, float | None]
    criteria: Mapping[str, float]
    sessions: int


@dataclass(frozen=True, slots=True)
class Baseline:
    path: str
    tasks: Mapping[str, Standing]
    overall: Standing


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None


def _standing(records: Sequence[Mapping]) -> Standing:
    scales: dict[str, list[float]] = {}
    criteria: dict[str, list[float]] = {}
    for r in records:
        for scale, data in (r.get("scores") or {}).items():
            if not isinstance(data, dict):
                continue
            if isinstance(data.get("score"), (int, float)):
                scales.setdefault(scale, []).append(float(data["score"]))
            for key, c in (data.get("criteria") or {}).items():
                if isinstance(c, dict) and isinstance(c.get("score"), (int, float)):
                    criteria.setdefault(key, []).append(float(c["score"]))
    return Standing({scale: _mean(scales.get(scale, [])) for scale in SCALES},
                  {key: _mean(v) for key, v in criteria.items()}, len(records))


def parse_baseline(text: str, path: str) -> Baseline:
    """A batch's `summary.jsonl` (one report.json record per line), read from `path`. Records
    of sessions that were not graded are left out; a line that is not a JSON object is a
    usage error."""
    by_task: dict[str, list[Mapping]] = {}
    graded: list[Mapping] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line, parse_constant=_no_constant)
        except RecursionError:
            raise UsageError(f"--baseline {path}:{lineno}: not a summary record (nested too "
                             f"deeply)") from None
        except ValueError as exc:
            raise UsageError(f"--baseline {path}:{lineno}: not a JSON line ({exc})") from None
        if not isinstance(record, dict) or "scores" not in record:
            raise UsageError(f"--baseline {path}:{lineno}: not a skill-doctor summary record "
                             f"(expected the summary.jsonl that `skill-doctor batch` writes)")
        if record.get("status") not in ("ok", "parse_error") or not record.get("scores"):
            continue
        graded.append(record)
        session = record.get("session") or {}
        task = session.get("task") or task_id(session.get("source"))
        if task:
            by_task.setdefault(task, []).append(record)
    if not graded:
        raise UsageError(f"--baseline {path}: no graded session in it")
    return Baseline(path, {t: _standing(r) for t, r in by_task.items()}, _standing(graded))


def _no_constant(name: str) -> Any:
    """NaN and Infinity are no scores: a baseline holding them is refused, not compared."""
    raise ValueError(f"{name} is not a number a score can be")


def _current(check: SessionCheck) -> Standing:
    scales = {s.name: (None if s.score is None else float(s.score))
              for s in check.report.scores.scales()}
    criteria = {c.criterion.key: float(c.points) for s in check.report.scores.scales()
                for c in s.criteria if c.points is not None}
    return Standing(scales, criteria, 1)


def _fell(now: Standing, base: Standing) -> list[str]:
    """`retry_waste 2 -> 0` for every criterion with fewer points than the baseline's."""
    out = []
    for key, before in base.criteria.items():
        after = now.criteria.get(key)
        if before is not None and after is not None and after < before:
            out.append(f"{key} {_num(before)} -> {_num(after)}")
    return out


def _drops(now: Standing, base: Standing, tolerance: float) -> list[tuple[str, float, float]]:
    return [(scale, now.scales[scale], base.scales[scale]) for scale in SCALES
            if now.scales.get(scale) is not None and base.scales.get(scale) is not None
            and now.scales[scale] < base.scales[scale] - tolerance]


@dataclass(frozen=True, slots=True)
class BaselineResult:
    """How the run measured up: per task when sessions share a task with the baseline, else
    by the mean of every graded session."""

    path: str
    tolerance: float
    mode: str  # "task" or "mean"
    matched: int  # sessions compared with a task of the baseline
    failures: tuple[str, ...]  # run-level ones (mean mode)
    diagnostics: tuple[Diagnostic, ...]  # run-level ones (mean mode)
    means: Mapping[str, Mapping[str, float | None]]  # scale -> {"now", "baseline"}

    @property
    def passed(self) -> bool:
        return not self.failures


def against_baseline(checks: Sequence[SessionCheck], baseline: Baseline, tolerance: float
                     ) -> tuple[list[SessionCheck], BaselineResult]:
    """Checks with the baseline's verdict laid over them, and the run-level result."""
    from dataclasses import replace

    out: list[SessionCheck] = []
    matched = 0
    graded = [c for c in checks if c.graded]
    for check in checks:
        t = check.report.transcript
        task = task_id(t.source, dict(t.extra).get("task")) if t else None
        base = baseline.tasks.get(task) if task and check.graded else None
        if base is None:
            out.append(check)
            continue
        matched += 1
        now = _current(check)
        drops = _drops(now, base, tolerance)
        if not drops:
            out.append(check)
            continue
        fell = _fell(now, base)
        failures = list(check.failures)
        diagnostics = list(check.diagnostics)
        for scale, score, before in drops:
            failures.append(f"{SCALE_LABELS[scale]} {_num(score)} < baseline {_num(before)} "
                            f"- {_num(tolerance)}")
            diagnostics.insert(0, Diagnostic(
                check.path, 1, 1, BASELINE_CODE, "error", None,
                f"{SCALE_LABELS[scale]} {_num(score)}/10 is {_below(tolerance)} the "
                f"baseline's {_num(before)} for task {task}"
                + (f"; fell: {', '.join(fell)}" if fell else ""), BASELINE_RULE))
        out.append(replace(check, passed=False, failures=tuple(failures),
                           diagnostics=tuple(diagnostics)))
    now = _standing([]) if not graded else Standing(
        {scale: _mean([c.scales[scale] for c in map(_current, graded)
                       if c.scales.get(scale) is not None]) for scale in SCALES},
        {key: _mean(values) for key, values in _collect(map(_current, graded)).items()},
        len(graded))
    means = {scale: {"now": now.scales.get(scale), "baseline": baseline.overall.scales.get(scale)}
             for scale in SCALES}
    failures: list[str] = []
    diagnostics: list[Diagnostic] = []
    mode = "task" if matched else "mean"
    if not matched and graded:
        fell = _fell(now, baseline.overall)
        for scale, score, before in _drops(now, baseline.overall, tolerance):
            failures.append(f"mean {SCALE_LABELS[scale]} {_num(score)} < baseline "
                            f"{_num(before)} - {_num(tolerance)}")
            diagnostics.append(Diagnostic(
                baseline.path, 1, 1, BASELINE_CODE, "error", None,
                f"mean {SCALE_LABELS[scale]} {_num(score)} of {len(graded)} session(s) is "
                f"{_below(tolerance)} the baseline's {_num(before)} "
                f"({baseline.overall.sessions} session(s), no task in common)"
                + (f"; fell: {', '.join(fell)}" if fell else ""), BASELINE_RULE))
    return out, BaselineResult(baseline.path, tolerance, mode, matched, tuple(failures),
                               tuple(diagnostics), means)


def _below(tolerance: float) -> str:
    return f"more than {_num(tolerance)} below" if tolerance else "below"


def _collect(items: Iterable[Standing]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for g in items:
        for key, value in g.criteria.items():
            out.setdefault(key, []).append(value)
    return out


def baseline_line(result: BaselineResult) -> str:
    """`Baseline summary.jsonl (tolerance 1): 3 sessions compared by task: pass`."""
    head = f"Baseline {result.path} (tolerance {_num(result.tolerance)}): "
    if result.mode == "task":
        return head + f"{result.matched} session(s) compared by task"
    means = "; ".join(f"mean {SCALE_LABELS[s]} {_num(m['now']) if m['now'] is not None else 'N/A'}"
                      f" vs {_num(m['baseline']) if m['baseline'] is not None else 'N/A'}"
                      for s, m in result.means.items())
    return head + "no task in common, compared by the mean: " + means + (
        f": FAIL ({'; '.join(result.failures)})" if result.failures else ": pass")


# -- output formats ----------------------------------------------------------------------------

_RESET, _BOLD, _RED, _YELLOW, _GREEN = "\033[0m", "\033[1m", "\033[31m", "\033[33m", "\033[32m"


def format_text(checks: Sequence[SessionCheck], *, quiet: bool = False,
                color: bool = False, baseline: BaselineResult | None = None) -> Iterable[str]:
    """flake8-style lines, then one summary per session, then the totals.

    Quiet: only sessions that fail are shown (their findings and summary), then the totals,
    so a quiet run that passes still says what it checked in one line. Each line is made safe
    to print (redact.terminal) before colour is added, so the printer must not treat the
    colour codes as transcript text.
    """
    for check in checks:
        if quiet and check.passed:
            continue
        for d in check.diagnostics:
            line = terminal(str(d), False)
            if color:
                tint = _RED if d.severity == "error" else _YELLOW
                head = terminal(f"{d.path}:{d.line}:{d.column}:", False)
                line = (f"{_BOLD}{head}{_RESET} {tint}{d.code}{_RESET}"
                        + line[len(head) + 1 + len(d.code):])
            yield line
        summary = terminal(summary_line(check), False)
        if color:
            summary = summary.replace(": FAIL", f": {_RED}{_BOLD}FAIL{_RESET}")
            if summary.endswith(": pass"):
                summary = summary[:-4] + f"{_GREEN}pass{_RESET}"
        yield summary
    if baseline is not None:
        for d in baseline.diagnostics:
            yield terminal(str(d), False)
        yield terminal(baseline_line(baseline), False)
    yield terminal(totals_line(checks, baseline), False)


def to_json(checks: Sequence[SessionCheck], thresholds: Mapping[str, float],
            baseline: BaselineResult | None = None) -> dict:
    """The machine-readable result (schema `skill-doctor/check/v1`)."""
    sessions = []
    for check in checks:
        report = check.report
        t = report.transcript
        sessions.append({
            "path": check.path,
            "status": report.status,
            "message": report.message,
            "passed": check.passed,
            "failures": list(check.failures),
            "session": {"id": report.session_id if t else None,
                        "harness": t.harness if t else None,
                        "turns": check.turns if t else 0,
                        **({"in_file": {"sessions": t.part[1], "graded": t.part[0]}}
                           if t is not None and t.part is not None else {})},
            "scores": {s.name: (None if s.score is None else
                                (int(s.score) if float(s.score).is_integer() else s.score))
                       for s in report.scores.scales()},
            "usage": usage_json(report.usage, turns=False),
            "diagnostics": [_diagnostic_json(d) for d in check.diagnostics],
        })
    out = {
        "schema": CHECK_SCHEMA,
        "thresholds": {k: (int(v) if float(v).is_integer() else v)
                       for k, v in sorted(thresholds.items())},
        "passed": all(c.passed for c in checks) and (baseline is None or baseline.passed),
        "counts": {"sessions": len(checks), "failed": sum(not c.passed for c in checks),
                   "not_graded": sum(c.report.status in ("no_history", "too_short")
                                     for c in checks)},
        "sessions": sessions,
    }
    if baseline is not None:
        out["baseline"] = {
            "path": baseline.path, "tolerance": _number(baseline.tolerance),
            "mode": baseline.mode, "sessions_matched": baseline.matched,
            "passed": baseline.passed, "failures": list(baseline.failures),
            "means": {s: {k: _number(v) for k, v in m.items()}
                      for s, m in baseline.means.items()},
            "diagnostics": [_diagnostic_json(d) for d in baseline.diagnostics],
        }
    return out


def _number(value: float | None) -> float | int | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value


def _diagnostic_json(d: Diagnostic) -> dict:
    return {"path": d.path, "line": d.line, "column": d.column, "code": d.code,
            "severity": d.severity, "turn": d.turn, "message": d.message, "rule": d.rule}


def format_json(checks: Sequence[SessionCheck], thresholds: Mapping[str, float],
                baseline: BaselineResult | None = None, redact_secrets: bool = True) -> str:
    return json.dumps(scrub_data(to_json(checks, thresholds, baseline), redact_secrets), indent=2,
                      sort_keys=True, ensure_ascii=False) + "\n"


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _gh_annotation(d: Diagnostic) -> str:
    title = _gh_prop(f"{d.code} {d.rule}")
    where = f"turn {d.turn}: " if d.turn is not None else ""
    return (f"::{d.severity} file={_gh_prop(d.path)},line={d.line},col={d.column},"
            f"title={title}::{_gh_data(where + d.message)}")


def format_github(checks: Sequence[SessionCheck], *, quiet: bool = False,
                  baseline: BaselineResult | None = None) -> Iterable[str]:
    """GitHub Actions workflow commands: one annotation per finding, an error per failing
    session, and the plain summaries for the log. Every value in a command is escaped, so
    transcript text cannot end it or start another; the plain lines are made unable to start
    one (redact.terminal), so the printer may let this output's lines begin with `::`."""
    for check in checks:
        if quiet and check.passed:
            continue
        for d in check.diagnostics:
            yield _gh_annotation(d)
        if not check.passed:
            yield (f"::error file={_gh_prop(check.path)},title=skill-doctor::"
                   f"{_gh_data('session below the thresholds: ' + '; '.join(check.failures))}")
        yield terminal(summary_line(check), False)
    if baseline is not None:
        for d in baseline.diagnostics:
            yield _gh_annotation(d)
        yield terminal(baseline_line(baseline), False)
    yield terminal(totals_line(checks, baseline), False)
