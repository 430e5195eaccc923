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
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .errors import UsageError
from .locate import iter_transcripts
from .report import Report
from .rubric import SCALES, Rubric
from .redact import scrub_data, shown, terminal
from .text import excerpt

CHECK_SCHEMA = "skill-doctor/check/v1"
PARSE_CODE, PARSE_RULE = "SD001", "unparseable-session"
SCALE_LABELS = {"efficiency": "efficiency", "code_quality": "code quality"}
FORMATS = ("text", "json", "github")
NOTE_CHARS = 160
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One line of output: `path:line:col: CODE [severity] turn N: message (rule)`."""

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
    report: Report
    passed: bool
    failures: tuple[str, ...]  # why it fails, e.g. "efficiency 4 < 5"
    diagnostics: tuple[Diagnostic, ...]

    @property
    def graded(self) -> bool:
        return self.report.status == "ok" or (self.report.status == "parse_error"
                                              and self.report.facts is not None)


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
        message = f"{_one_line(f.message)} ({f.score}/{f.max})"
        if first is not None and first.note and _one_line(first.note) != _one_line(f.message):
            message += f": {excerpt(first.note, NOTE_CHARS)}"
        extra = len(f.evidence) - 1 + f.more_evidence
        if extra > 0:
            message += f" (+{extra} more)"
        diagnostics.append(Diagnostic(
            path, max(1, first.line) if first else 1, max(1, first.column) if first else 1,
            f.rule_id, "error" if f.scale in failing_scales else "warning",
            first.turn if first else None, message, f.rule_name))
    return SessionCheck(path, report, not failures, tuple(failures), tuple(diagnostics))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def summary_line(check: SessionCheck) -> str:
    """`path: efficiency 7/10, code quality N/A, 2 findings: pass` and the like."""
    report = check.report
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


def totals_line(checks: Sequence[SessionCheck]) -> str:
    failed = sum(not c.passed for c in checks)
    skipped = sum(c.report.status in ("no_history", "too_short") for c in checks)
    n = len(checks)
    text = f"Checked {n} session{'s' if n != 1 else ''}: {failed} failed"
    if skipped:
        text += f", {skipped} not graded (too short)"
    return text + "."


# -- output formats ----------------------------------------------------------------------------

_RESET, _BOLD, _RED, _YELLOW, _GREEN = "\033[0m", "\033[1m", "\033[31m", "\033[33m", "\033[32m"


def format_text(checks: Sequence[SessionCheck], *, quiet: bool = False,
                color: bool = False) -> Iterable[str]:
    """flake8-style lines, then one summary per session, then the totals.

    Quiet: only sessions that fail are shown (their findings and summary), no totals. Each
    line is made safe to print (redact.terminal) before colour is added, so the printer must
    not treat the colour codes as transcript text.
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
    if not quiet:
        yield terminal(totals_line(checks), False)


def to_json(checks: Sequence[SessionCheck], thresholds: Mapping[str, float]) -> dict:
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
                        "turns": len(t.turns) if t else 0},
            "scores": {s.name: (None if s.score is None else
                                (int(s.score) if float(s.score).is_integer() else s.score))
                       for s in report.scores.scales()},
            "diagnostics": [{"path": d.path, "line": d.line, "column": d.column, "code": d.code,
                             "severity": d.severity, "turn": d.turn, "message": d.message,
                             "rule": d.rule} for d in check.diagnostics],
        })
    return {
        "schema": CHECK_SCHEMA,
        "thresholds": {k: (int(v) if float(v).is_integer() else v)
                       for k, v in sorted(thresholds.items())},
        "passed": all(c.passed for c in checks),
        "counts": {"sessions": len(checks), "failed": sum(not c.passed for c in checks),
                   "not_graded": sum(c.report.status in ("no_history", "too_short")
                                     for c in checks)},
        "sessions": sessions,
    }


def format_json(checks: Sequence[SessionCheck], thresholds: Mapping[str, float],
                redact_secrets: bool = True) -> str:
    return json.dumps(scrub_data(to_json(checks, thresholds), redact_secrets), indent=2,
                      sort_keys=True, ensure_ascii=False) + "\n"


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(checks: Sequence[SessionCheck], *, quiet: bool = False) -> Iterable[str]:
    """GitHub Actions workflow commands: one annotation per finding, an error per failing
    session, and the plain summaries for the log. Every value in a command is escaped, so
    transcript text cannot end it or start another; the plain lines are made unable to start
    one (redact.terminal), so the printer may let this output's lines begin with `::`."""
    for check in checks:
        if quiet and check.passed:
            continue
        for d in check.diagnostics:
            title = _gh_prop(f"{d.code} {d.rule}")
            where = f"turn {d.turn}: " if d.turn is not None else ""
            yield (f"::{d.severity} file={_gh_prop(d.path)},line={d.line},col={d.column},"
                   f"title={title}::{_gh_data(where + d.message)}")
        if not check.passed:
            yield (f"::error file={_gh_prop(check.path)},title=skill-doctor::"
                   f"{_gh_data('session below the thresholds: ' + '; '.join(check.failures))}")
        yield terminal(summary_line(check), False)
    if not quiet:
        yield terminal(totals_line(checks), False)
