"""findings: one finding per criterion below its maximum, and the ranked suggestions.

Each finding carries its rule id and name, category, score/max, the points a fix would
recover (impact), evidence (turn numbers with redacted excerpts) and one concrete suggestion.
Suggestions are ranked by impact; ties keep the rubric's criterion order, so the ranking is
deterministic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .detectors import Evidence
from .model import Role, Transcript, Turn
from .redact import redact
from .scoring import Scores
from .text import excerpt

MAX_EVIDENCE = 8


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    turn: int
    excerpt: str
    note: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Finding:
    criterion: str
    rule_id: str
    rule_name: str
    category: str
    scale: str
    score: int
    max: int
    impact: int
    message: str
    evidence: tuple[EvidenceItem, ...]
    more_evidence: int
    suggestion: str


@dataclass(frozen=True, slots=True)
class Suggestion:
    rank: int
    criterion: str
    rule_id: str
    impact: int
    text: str


def turn_excerpt(turn: Turn, limit: int = 240, *, redact_secrets: bool = True) -> str:
    """A short, redacted, one-paragraph view of a turn for evidence blocks."""
    if turn.role is Role.TOOL:
        target = turn.command or (turn.paths[0] if turn.paths else "")
        if not target and turn.tool_input:
            target = json.dumps(turn.tool_input, ensure_ascii=False, sort_keys=True, default=str)
        status = ""
        if turn.is_error:
            status = f" [failed{'' if turn.exit_code in (None, 0) else f', exit {turn.exit_code}'}]"
        output = (turn.tool_output or "").strip()
        text = f"{turn.tool_name}: {target}{status}" + (f" → {output}" if output else "")
    else:
        text = turn.content
    # Redacted whole before it is cut, so no part of a secret survives the cut.
    return excerpt(redact(text) if redact_secrets else text, limit)


def compile_findings(scores: Scores, transcript: Transcript, *, redact_secrets: bool = True
                     ) -> tuple[tuple[Finding, ...], tuple[Suggestion, ...]]:
    findings: list[Finding] = []
    order = 0
    for scale in scores.scales():
        for result in scale.criteria:
            order += 1
            if not result.below_max or result.measurement is None:
                continue
            c = result.criterion
            evidence = list(result.measurement.evidence)
            if not evidence and transcript.turns:
                evidence = [Evidence(transcript.turns[0].index, result.measurement.summary)]
            items = []
            for ev in evidence[:MAX_EVIDENCE]:
                if not 1 <= ev.turn <= len(transcript.turns):
                    continue
                turn = transcript.turns[ev.turn - 1]
                note = redact(ev.note) if redact_secrets else ev.note
                items.append(EvidenceItem(ev.turn, turn_excerpt(turn, redact_secrets=redact_secrets),
                                          note, turn.line, turn.column))
            findings.append(Finding(
                criterion=c.key, rule_id=c.rule_id, rule_name=c.name, category=c.category,
                scale=scale.name, score=result.points, max=c.max,
                impact=c.max - result.points, message=result.measurement.summary,
                evidence=tuple(items), more_evidence=max(0, len(evidence) - MAX_EVIDENCE),
                suggestion=c.suggestion_for(result.measurement.causes),
            ))
    criterion_order = {f.criterion: i for i, f in enumerate(findings)}
    ranked = sorted(findings, key=lambda f: (-f.impact, criterion_order[f.criterion]))
    suggestions = tuple(Suggestion(rank, f.criterion, f.rule_id, f.impact, f.suggestion)
                        for rank, f in enumerate(ranked, start=1))
    return tuple(ranked), suggestions
