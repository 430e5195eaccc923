"""The detector registry and the records every detector returns (Evidence, Measurement)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..facts import Facts


@dataclass(frozen=True, slots=True)
class Evidence:
    turn: int
    note: str


@dataclass(frozen=True, slots=True)
class Measurement:
    value: float
    evidence: tuple[Evidence, ...] = ()
    summary: str = ""
    # What caused the lost points, most weighty first; the rubric may hold a suggestion per
    # cause (`suggestions:`), so the advice names the set-up change that fits this session.
    causes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Detector:
    name: str
    func: Callable[[Facts, Mapping[str, Any]], Measurement]
    params: Mapping[str, tuple[type, Any]] = field(default_factory=dict)
    causes: tuple[str, ...] = ()

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip()

    def __call__(self, facts: Facts, params: Mapping[str, Any] | None = None) -> Measurement:
        merged = {name: default for name, (_, default) in self.params.items()}
        merged.update(params or {})
        return self.func(facts, merged)


DETECTORS: dict[str, Detector] = {}


def detector(name: str, causes: tuple[str, ...] = (), **params: tuple[type, Any]):
    """Register a detector under `name`: its causes and its parameters as name=(type, default)."""
    def register(func: Callable[[Facts, Mapping[str, Any]], Measurement]):
        DETECTORS[name] = Detector(name, func, params, causes)
        return func
    return register


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def _ranked_causes(found: list[str], declared: tuple[str, ...]) -> tuple[str, ...]:
    """Causes by how often they were seen, ties in declaration order (deterministic)."""
    counts = Counter(found)
    return tuple(sorted(counts, key=lambda c: (-counts[c], declared.index(c))))
