"""scoring: run each criterion's detector and map its measured value to points via the rubric.

A scale's score is the sum of its criteria's points (out of 10). A criterion switched off in
the rubric scores nothing and the scale is rescaled to 10 over the criteria left, saying so.
Code quality is N/A, with the reason, when the session changed no code.
"""

from __future__ import annotations

from dataclasses import dataclass

from .detectors import DETECTORS, Measurement
from .facts import Facts
from .rubric import SCALES, Band, Criterion, Rubric

NO_CODE_REASON = "N/A: the session made no code changes, so there is nothing to grade"
UNLOCATED_REASON = ("N/A: the session changed files, but its log does not show which files or "
                    "what changed, so there is nothing to grade")


@dataclass(frozen=True, slots=True)
class CriterionScore:
    criterion: Criterion
    points: int | None
    measurement: Measurement | None = None
    band: Band | None = None
    reason: str | None = None  # why there are no points (N/A, disabled)

    @property
    def below_max(self) -> bool:
        return self.points is not None and self.points < self.criterion.max


@dataclass(frozen=True, slots=True)
class ScaleScore:
    name: str
    score: float | None
    criteria: tuple[CriterionScore, ...]
    reason: str | None = None
    max: int = 10


@dataclass(frozen=True, slots=True)
class Scores:
    efficiency: ScaleScore
    code_quality: ScaleScore

    def scales(self) -> tuple[ScaleScore, ...]:
        return (self.efficiency, self.code_quality)


def score(facts: Facts, rubric: Rubric) -> Scores:
    scales = {}
    for name in SCALES:
        criteria = rubric.scale(name)
        if name == "code_quality" and not facts.changed_code:
            # Edits whose files the log does not name cannot be judged for code quality either,
            # but the reason must say so rather than claim nothing changed.
            reason = UNLOCATED_REASON if facts.made_changes else NO_CODE_REASON
            scales[name] = not_scored(criteria, name, reason)
            continue
        results = []
        for criterion in criteria:
            if not criterion.enabled:
                results.append(CriterionScore(criterion, None, reason="disabled in the rubric"))
                continue
            measurement = DETECTORS[criterion.detector](facts, criterion.params)
            band = criterion.band_for(measurement.value)
            results.append(CriterionScore(criterion, band.points, measurement, band))
        scales[name] = _total(name, tuple(results))
    return Scores(**scales)


def not_scored(criteria: tuple[Criterion, ...], name: str, reason: str) -> ScaleScore:
    return ScaleScore(name, None, tuple(CriterionScore(c, None, reason=reason) for c in criteria),
                      reason=reason)


def unscored(rubric: Rubric, reason: str) -> Scores:
    """Both scales N/A (no history, too short, unparseable)."""
    return Scores(*(not_scored(rubric.scale(name), name, reason) for name in SCALES))


def _total(name: str, results: tuple[CriterionScore, ...]) -> ScaleScore:
    active = [r for r in results if r.points is not None]
    if not active:
        return ScaleScore(name, None, results, reason="N/A: every criterion of this scale is "
                                                      "disabled in the rubric")
    points = sum(r.points for r in active)
    maximum = sum(r.criterion.max for r in active)
    if maximum == 10:
        return ScaleScore(name, points, results)
    scaled = round(points * 10 / maximum, 1)
    disabled = ", ".join(r.criterion.key for r in results if r.points is None)
    return ScaleScore(name, int(scaled) if scaled.is_integer() else scaled, results,
                      reason=f"rescaled to 10 from {points}/{maximum} ({disabled} disabled)")
