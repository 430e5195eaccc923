"""report: the graded session as data — the statuses of the contract and `report.json`.

`grade()` runs the pipeline on a decoded transcript (facts -> scores -> findings) and decides
the report status: `ok`, `no_history`, `too_short` or `parse_error`. `to_json()` is the
versioned contract other tools read (schema `skill-doctor/report/v1`). The HTML page is a view
of the same `Report` (render.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping

from . import __version__, facts as facts_mod
from .findings import Finding, Suggestion, compile_findings
from .model import Role, Transcript
from .overview import Overview, build as build_overview, to_json as overview_json
from .redact import redact, scrub_data
from .rubric import Rubric
from .scoring import Scores, score, unscored
from .write import json_bytes
from .tokens import UsageSummary, summarize as summarize_usage, table as price_table, \
    to_json as usage_json, turns_json as usage_turns_json

SCHEMA = "skill-doctor/report/v1"
NO_HISTORY = "No conversation history found"
TOO_SHORT = "Session too short to assess"
MIN_TURNS = 2


@dataclass(frozen=True, slots=True)
class Report:
    status: str
    message: str | None
    transcript: Transcript | None
    scores: Scores
    findings: tuple[Finding, ...]
    suggestions: tuple[Suggestion, ...]
    generated_at: str
    facts: facts_mod.Facts | None = None
    redacted: bool = True
    overview: Overview | None = None  # the session at a glance (graded sessions only)
    # The rubric's minimum scores, so a view can say pass or fail by `check.judge`'s rule.
    thresholds: Mapping[str, float] = field(default_factory=dict)
    usage: UsageSummary | None = None  # tokens and cost, when the harness logs them
    # The user's rubric file (its name) when one was laid over or replaced the default; None
    # with the default rubric, the one whose agreement with careful readers is measured.
    rubric: str | None = None

    @property
    def session_id(self) -> str:
        t = self.transcript
        if t is None:
            return "none"
        if t.session_id:
            return t.session_id
        return os.path.splitext(os.path.basename(t.source))[0] or "session"


def no_history(rubric: Rubric, generated_at: str, detail: str | None = None, *,
               redact_secrets: bool = True) -> Report:
    message = NO_HISTORY + (f": {detail}" if detail else "")
    if redact_secrets:
        message = redact(message)
    return Report("no_history", message, None, unscored(rubric, f"N/A: {NO_HISTORY.lower()}"),
                  (), (), generated_at, redacted=redact_secrets,
                  thresholds=dict(rubric.thresholds))


def grade(transcript: Transcript, rubric: Rubric, generated_at: str, *,
          redact_secrets: bool = True, overview: bool = True) -> Report:
    """Grade one decoded transcript; never raises for odd sessions (they get a status).

    With `redact_secrets` (the default) every transcript-derived string the report carries
    outside the turns themselves is redacted here, once, so no view can leak it; turn text
    reaches a view only through `findings.turn_excerpt`, which redacts too. `overview=False`
    skips the page's view data for callers that render no page (`check`).
    """
    report = _grade(transcript, rubric, generated_at, redact_secrets=redact_secrets,
                    with_overview=overview)
    report = replace(report, thresholds=dict(rubric.thresholds), rubric=rubric.user_file)
    # Tokens are counted for every status: a session too short to grade still cost money.
    report = replace(report, usage=summarize_usage(transcript, price_table(rubric.prices)))
    return scrubbed(report) if redact_secrets else report


def _grade(transcript: Transcript, rubric: Rubric, generated_at: str, *,
           redact_secrets: bool, with_overview: bool = True) -> Report:
    # A request known to exist but absent from the log (a headless run takes it on its
    # command line) is a turn of the session all the same: with one call it is no 1-turn stub.
    real = [t for t in transcript.turns if t.meta is None or t.meta == "request-unknown"]
    problem = transcript.problem
    if problem is not None and (transcript.not_a_transcript or len(real) < MIN_TURNS):
        where = f" (line {problem.line}, column {problem.column})" if problem.line else ""
        message = f"Unparseable format: {problem.message}{where}"
        if transcript.not_a_transcript:
            message = f"Not a transcript: {problem.message}{where}"
        return Report("parse_error", message, transcript,
                      unscored(rubric, "N/A: the transcript could not be parsed"), (), (),
                      generated_at, redacted=redact_secrets)
    # A log of the user's prompts alone (a prompt log whose answers were never saved) holds
    # nothing the agent did: there is no session of the agent's to assess.
    agentless = bool(real) and all(t.role is Role.USER for t in real)
    if len(real) < MIN_TURNS or agentless:
        message = TOO_SHORT
        if transcript.not_started:
            message = f"{TOO_SHORT}: the agent never started ({transcript.not_started})"
        elif agentless and len(real) >= MIN_TURNS:
            message = f"{TOO_SHORT}: the log keeps none of the agent's turns, only the prompts"
        elif not real:
            message = f"{TOO_SHORT}: " + ("the file holds no turns" if not transcript.turns else
                                          f"it holds no turn of the conversation, only "
                                          f"{len(transcript.turns)} the harness injected "
                                          f"(reminders, summaries, local commands)")
        else:
            message = f"{TOO_SHORT}: it holds one turn, " + _one_turn(real[0])
            injected = sorted({t.meta for t in transcript.turns if t.meta is not None})
            if injected:
                message += f" (besides what the harness injected: {', '.join(injected)})"
        return Report("too_short", message, transcript,
                      unscored(rubric, f"N/A: {TOO_SHORT.lower()}"), (), (), generated_at,
                      redacted=redact_secrets)
    facts = facts_mod.compute(transcript, rubric.detector_params("retry_episodes"))
    scores = score(facts, rubric)
    findings, suggestions = compile_findings(scores, transcript, redact_secrets=redact_secrets)
    status, message = "ok", None
    if problem is not None:
        where = f" (line {problem.line}, column {problem.column})" if problem.line else ""
        status = "parse_error"
        message = (f"Parsing stopped early: {problem.message}{where}; the scores cover the "
                   f"{len(transcript.turns)} turns decoded before it")
    return Report(status, message, transcript, scores, findings, suggestions, generated_at,
                  facts, redacted=redact_secrets,
                  overview=build_overview(transcript, facts, findings,
                                          redact_secrets=redact_secrets)
                  if with_overview else None)


def _one_turn(turn) -> str:
    """What a session of a single turn holds, in words."""
    if turn.role is Role.USER:
        return "a request the agent never answered"
    if turn.role is Role.ASSISTANT:
        return "an answer with no request"
    return f"one tool call ({turn.tool_name or 'unknown tool'}) with no request"


def scrubbed(report: Report) -> Report:
    """The report with secrets redacted and the home folder shown as `~` in its message, the
    transcript's metadata (source, session id, cwd, notes, parse problem) and every measurement
    summary and evidence note. Turns are left as decoded (they feed no view directly)."""
    done: dict[str, str] = {}  # one redaction per distinct text (evidence notes repeat)

    def r(text: str | None) -> str | None:
        if not text:
            return text
        shown = done.get(text)
        if shown is None:
            shown = done[text] = redact(text)
        return shown

    t = report.transcript
    if t is not None:
        problem = t.problem
        if problem is not None:
            problem = replace(problem, message=r(problem.message), context=r(problem.context))
        t = replace(t, source=r(t.source), session_id=r(t.session_id), cwd=r(t.cwd),
                    notes=tuple(r(n) for n in t.notes), problem=problem,
                    extra=tuple((k, r(v)) for k, v in t.extra))

    def scale(s):
        criteria = []
        for c in s.criteria:
            m = c.measurement
            if m is not None:
                m = replace(m, summary=r(m.summary),
                            evidence=tuple(replace(e, note=r(e.note)) for e in m.evidence))
            criteria.append(replace(c, measurement=m, reason=r(c.reason)))
        return replace(s, criteria=tuple(criteria), reason=r(s.reason))

    scores = replace(report.scores, efficiency=scale(report.scores.efficiency),
                     code_quality=scale(report.scores.code_quality))
    findings = tuple(replace(f, message=r(f.message)) for f in report.findings)
    return replace(report, message=r(report.message), transcript=t, scores=scores,
                   findings=findings, redacted=True)


def _number(value: float | None) -> float | int | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else round(float(value), 2)


def display_path(path: str, redact_secrets: bool = True) -> str:
    """Paths shown to people: home folder as ~ (and secrets redacted)."""
    return redact(path) if redact_secrets else path


def task_id(source: str | None, explicit: str | None = None) -> str | None:
    """A session's task: the one its log names, else its file name without the transcript
    suffix (runs of one task saved under the same name, e.g. `sessions/fix-pager.jsonl`).
    `check --baseline` matches sessions to the baseline's by it."""
    if explicit:
        return explicit
    if not source:
        return None
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".jsonl", ".json", ".traj", ".md", ".txt", ".log"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name or None


def to_json(report: Report, *, usage_turns: bool = True) -> dict[str, Any]:
    """report.json as data (`usage_turns=False`: without the per-turn token list)."""
    t = report.transcript
    session = {
        "task": task_id(t.source, dict(t.extra).get("task")) if t else None,
        "id": report.session_id if t else None,
        "harness": t.harness if t else None,
        "source": display_path(t.source, report.redacted) if t else None,
        "turns": len(t.turns) if t else 0,
        "started_at": t.started_at if t else None,
        "ended_at": t.ended_at if t else None,
    }
    if t is not None and t.part is not None:
        # The file holds several sessions one after another: which one this is, of how many.
        session["in_file"] = {"sessions": t.part[1], "graded": t.part[0]}
    scores: dict[str, Any] = {}
    for scale in report.scores.scales():
        criteria = {}
        for result in scale.criteria:
            m = result.measurement
            criteria[result.criterion.key] = {
                "id": result.criterion.rule_id,
                "score": result.points,
                "max": result.criterion.max,
                "value": _number(m.value) if m else None,
                "band": result.band.label if result.band else None,
                "summary": m.summary if m else result.reason,
                "evidence": [{"turn": e.turn, "note": e.note} for e in m.evidence] if m else [],
            }
        scores[scale.name] = {"score": _number(scale.score), "max": scale.max,
                              "reason": scale.reason, "criteria": criteria}
    findings = [{
        "criterion": f.criterion, "id": f.rule_id, "rule": f.rule_name, "category": f.category,
        "scale": f.scale, "score": f.score, "max": f.max, "impact": f.impact,
        "message": f.message,
        "evidence": [{"turn": e.turn, "excerpt": e.excerpt, "note": e.note, "line": e.line}
                     for e in f.evidence],
        "suggestion": f.suggestion,
    } for f in report.findings]
    suggestions = [{"rank": s.rank, "criterion": s.criterion, "id": s.rule_id,
                    "impact": s.impact, "text": s.text} for s in report.suggestions]
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "status": report.status,
        "message": report.message,
        "session": session,
        "scores": scores,
        "findings": findings,
        "suggestions": suggestions,
        "generator": {"name": "skill-doctor", "version": __version__,
                      "generated_at": report.generated_at},
    }
    if report.rubric is not None:
        out["generator"]["rubric"] = report.rubric
    out["usage"] = usage_json(report.usage, turns=False)
    if report.overview is not None:
        out["overview"] = overview_json(report.overview)
    if t is not None:
        out["notes"] = list(t.notes)
        out["skipped"] = dict(t.skipped)
        if t.problem is not None:
            out["parse_error"] = {"message": t.problem.message, "line": t.problem.line,
                                  "column": t.problem.column, "context": t.problem.context}
    # The output boundary of every report record (report.json, summary.jsonl): each string
    # redacted unless switched off, hidden characters shown.
    out = scrub_data(out, report.redacted)
    if report.usage is not None and usage_turns:
        # Added after the scrub, which would copy it for nothing: numbers under fixed keys, a
        # hundred thousand of them in a long session.
        out["usage"]["turns"] = usage_turns_json(report.usage.turns)
    return out


# Stands for the per-turn token list in the document `report_json` dumps; scrubbed strings
# never hold a NUL, so its dumped form occurs once.
_TURNS_MARK = "\0usage.turns\0"
_TURNS_CHUNK = 4096  # turns dumped at a time


def report_json(report: Report) -> Iterator[bytes]:
    """report.json's bytes, in pieces, exactly as `json_bytes(to_json(report))`: the
    per-turn token list (most of the file in a long session, 15 MB at 1 GB) is dumped a few
    thousand turns at a time into its place instead of being built whole as dicts first."""
    data = to_json(report, usage_turns=False)
    if report.usage is None:
        yield json_bytes(data)
        return
    data["usage"]["turns"] = _TURNS_MARK
    document = json_bytes(data)
    mark = json_bytes(_TURNS_MARK).rstrip(b"\n")
    at = document.index(mark)
    yield document[:at]
    del data
    turns = report.usage.turns
    if not turns:
        yield b"[]"
    else:
        # The list sits two levels deep (usage, turns): orjson indents its items by six
        # spaces and its closing bracket by four; a chunk dumped alone is indented by two.
        yield b"[\n"
        for start in range(0, len(turns), _TURNS_CHUNK):
            items = json_bytes(usage_turns_json(turns[start:start + _TURNS_CHUNK]))[2:-3]
            yield (b",\n" if start else b"") + b"    " + items.replace(b"\n", b"\n    ")
        yield b"\n    ]"
    yield document[at + len(mark):]
