"""tokens: what a session cost, in tokens per session and per turn and in US dollars.

Decoders record the tokens of every model call the harness logs (`model.Usage`: Claude Code
`message.usage`, Codex `token_count` events and `turn.completed`, Gemini `tokens` and
stream-json `stats`, Pi `usage`, OpenCode message `tokens`, SWE-agent `model_stats`). Here they are summed per session,
per turn and per model, and priced from a table of model-name patterns to dollars per million
tokens: the entries of the rubric's `prices:` first, then the shipped table (`prices.yaml`,
dated in the file). A model neither table knows makes the cost "unknown" rather than a wrong
number. Prices are never fetched: the same session and tables always give the same cost.
"""

from __future__ import annotations

import fnmatch
from array import array
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .model import Transcript, Usage, WordRows

KINDS = ("input", "output", "cache_read", "cache_write")
PRICE_KEYS = {"model", "input", "output", "cache_read", "cache_write"}
UNKNOWN = "unknown"
_PRICES_FILE = Path(__file__).resolve().parent / "prices.yaml"


@dataclass(frozen=True, slots=True)
class Price:
    """Dollars per million tokens for the models whose name matches `pattern` (a shell-style
    pattern, case-insensitive, tried on the name with and without a `provider/` prefix)."""

    pattern: str
    input: float
    output: float
    cache_read: float
    cache_write: float

    def matches(self, model: str) -> bool:
        name = model.lower()
        pattern = self.pattern.lower()
        return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(
            name.rpartition("/")[2], pattern)

    def cost(self, counts: Mapping[str, int]) -> float:
        return sum(counts[k] * getattr(self, k) for k in KINDS) / 1_000_000


@dataclass(frozen=True, slots=True)
class PriceTable:
    entries: tuple[Price, ...]
    as_of: str  # the date the shipped table's prices were taken from the vendors' pages
    custom: int = 0  # how many entries (at the front) came from the rubric

    def lookup(self, model: str | None) -> Price | None:
        if not model:
            return None
        return next((p for p in self.entries if p.matches(model)), None)


@dataclass(frozen=True, slots=True)
class ModelUsage:
    model: str | None
    counts: Mapping[str, int]
    calls: int
    cost_usd: float | None  # None: no price known for this model


@dataclass(frozen=True, slots=True)
class UsageSummary:
    """A session's tokens: totals, per model (with cost) and per turn."""

    counts: Mapping[str, int]
    calls: int
    models: tuple[ModelUsage, ...]
    # (turn, counts in the order of KINDS), by turn; 0 = the run.
    turns: TurnTokens
    cost_usd: float | None  # None when a model's price is unknown
    unpriced: tuple[str, ...]  # models without a price ("not recorded" when unnamed)
    prices_as_of: str
    custom_prices: bool

    @property
    def total(self) -> int:
        return sum(self.counts.values())


class TurnTokens(WordRows):
    """Each turn's tokens as (turn, counts in the order of KINDS), in turn order, from a
    session's usage records (a turn's records summed): five words a turn, where 100,000 nested
    tuples took 13 MB at 1 GB. Sums past a machine word (absurd counts in a damaged or hostile
    log) keep the whole list in Python numbers instead."""

    __slots__ = ()
    _SLICE = list

    def __init__(self, usages: Sequence[Usage]) -> None:
        words: list[int] | array = array("q")
        by_turn = attrgetter("turn")
        try:
            if not self._fill(words, usages):
                words = array("q")
                self._fill(words, sorted(usages, key=by_turn))  # stable: a turn's calls in order
        except OverflowError:
            words = []
            self._fill(words, sorted(usages, key=by_turn))
        super().__init__(words)

    @staticmethod
    def _fill(words: list[int] | array, usages: Iterable[Usage]) -> bool:
        """Sum `usages`, in turn order, into `words`; False (`words` left unfinished) at a call
        out of turn order (a request learnt at the end, a call pinned to the last turn)."""
        for usage in usages:
            last = words[-5] if words else None
            if last == usage.turn:
                words[-4] += usage.input
                words[-3] += usage.output
                words[-2] += usage.cache_read
                words[-1] += usage.cache_write
            elif last is not None and last > usage.turn:
                return False
            else:
                words.extend((usage.turn, usage.input, usage.output, usage.cache_read,
                              usage.cache_write))
        return True

    def _read(self, index: int) -> tuple[int, tuple[int, ...]]:
        at = index * self._WIDTH
        row = self._words[at:at + self._WIDTH]
        return row[0], tuple(row[1:])


# -- price tables ------------------------------------------------------------------------------


def check_prices(value: Any, fail: Callable[[str, tuple], Exception]) -> None:
    """Validate a `prices:` list (the rubric's or the shipped one); `fail(message, path)`
    builds the positioned error to raise."""
    if not isinstance(value, list):
        raise fail("must be a list of {model: PATTERN, input: N, output: N, cache_read: N, "
                   "cache_write: N} entries (dollars per million tokens)", ())
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise fail("must be a mapping with model, input and output", (i,))
        for key in entry:
            if key not in PRICE_KEYS:
                raise fail(f"unknown key (expected one of {', '.join(sorted(PRICE_KEYS))})",
                           (i, key))
        model = entry.get("model")
        if not isinstance(model, str) or not model.strip():
            raise fail("must be a model name or pattern such as claude-sonnet-4*", (i, "model"))
        for key in ("input", "output"):
            if key not in entry:
                raise fail(f"missing {key} (dollars per million tokens)", (i,))
        for key in KINDS:
            if key in entry:
                price = entry[key]
                if (isinstance(price, bool) or not isinstance(price, (int, float))
                        or not 0 <= price < 1e6 or price != price):
                    raise fail(f"must be a number of dollars per million tokens, got {price!r}",
                               (i, key))


def parse_prices(value: Sequence[Mapping[str, Any]]) -> tuple[Price, ...]:
    """Validated entries -> prices; cache prices default to the input price when not given."""
    return tuple(Price(pattern=str(e["model"]).strip(), input=float(e["input"]),
                       output=float(e["output"]),
                       cache_read=float(e.get("cache_read", e["input"])),
                       cache_write=float(e.get("cache_write", e["input"]))) for e in value)


@lru_cache(maxsize=1)
def default_table() -> PriceTable:
    """The shipped table (`prices.yaml`): read once, validated like a rubric's."""
    import yaml

    from .errors import RubricError

    from .resources import yaml_loader  # the C loader: the pure-Python one costs ~10 ms here

    data = yaml.load(_PRICES_FILE.read_text(encoding="utf-8"), Loader=yaml_loader())

    def fail(message: str, path: tuple) -> Exception:
        return RubricError(message, path=str(_PRICES_FILE),
                           key=".".join(str(p) for p in ("models", *path)))

    if not isinstance(data, dict):
        raise fail("must be a mapping with as_of and models", ())
    check_prices(data.get("models"), fail)
    return PriceTable(parse_prices(data["models"]), str(data.get("as_of", UNKNOWN)))


def table(custom: Iterable[Price] = ()) -> PriceTable:
    """The rubric's prices laid before the shipped ones (the first matching pattern wins)."""
    custom = tuple(custom)
    shipped = default_table()
    return PriceTable(custom + shipped.entries, shipped.as_of, len(custom))


# -- summing -----------------------------------------------------------------------------------


def _zero() -> dict[str, int]:
    return {k: 0 for k in KINDS}


def _add(into: dict[str, int], usage: Usage) -> None:
    for k in KINDS:
        into[k] += getattr(usage, k)


def summarize(transcript: Transcript | None, prices: PriceTable | None = None
              ) -> UsageSummary | None:
    """The session's tokens and cost; None when the harness logged no token counts."""
    if transcript is None or not transcript.usage:
        return None
    prices = prices or table()
    totals = _zero()
    by_model: dict[str | None, tuple[dict[str, int], list[int]]] = {}
    for usage in transcript.usage:
        _add(totals, usage)
        model = usage.model or transcript.model
        counts, calls = by_model.setdefault(model, (_zero(), [0]))
        _add(counts, usage)
        calls[0] += 1
    models = []
    unpriced = []
    for model in sorted(by_model, key=lambda m: (m is None, m or "")):
        counts, calls = by_model[model]
        price = prices.lookup(model)
        if price is None:
            unpriced.append(model or "not recorded")
        models.append(ModelUsage(model, counts, calls[0],
                                 None if price is None else round(price.cost(counts), 6)))
    cost = None if unpriced else round(sum(m.cost_usd or 0.0 for m in models), 6)
    return UsageSummary(
        counts=totals, calls=len(transcript.usage), models=tuple(models),
        turns=TurnTokens(transcript.usage), cost_usd=cost, unpriced=tuple(unpriced),
        prices_as_of=prices.as_of, custom_prices=bool(prices.custom))


# -- views -------------------------------------------------------------------------------------


def _counts_json(counts: Mapping[str, int]) -> dict[str, int]:
    return {f"{k}_tokens": counts[k] for k in KINDS}


def cost_json(cost: float | None) -> float | str:
    return UNKNOWN if cost is None else round(cost, 4)


def to_json(summary: UsageSummary | None, *, turns: bool = True) -> dict[str, Any] | None:
    """`usage` in report.json (and, without the per-turn list, in check's JSON)."""
    if summary is None:
        return None
    out: dict[str, Any] = {
        **_counts_json(summary.counts),
        "total_tokens": summary.total,
        "calls": summary.calls,
        "cost_usd": cost_json(summary.cost_usd),
        "unpriced_models": list(summary.unpriced),
        "prices": {"as_of": summary.prices_as_of,
                   "from": "rubric and default table" if summary.custom_prices
                   else "default table"},
        "models": [{"model": m.model, **_counts_json(m.counts), "calls": m.calls,
                    "cost_usd": cost_json(m.cost_usd)} for m in summary.models],
    }
    if turns:
        out["turns"] = turns_json(summary.turns)
    return out


def turns_json(turns: Iterable[tuple[int, tuple[int, ...]]]) -> list[dict[str, int]]:
    """`usage.turns` in report.json: each turn's tokens (numbers under fixed keys), from
    `UsageSummary.turns` (or a stretch of them)."""
    keys = tuple(f"{k}_tokens" for k in KINDS)
    return [{"turn": turn, **dict(zip(keys, counts))} for turn, counts in turns]


def short(n: int) -> str:
    """1234567 -> 1.2M, 45300 -> 45.3k, 812 -> 812."""
    for size, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if n >= size:
            text = f"{n / size:.1f}".rstrip("0").rstrip(".")
            return text + unit
    return str(n)


def money(cost: float | None) -> str:
    if cost is None:
        return "cost unknown"
    return f"${cost:.2f}" if cost >= 0.1 else f"${cost:.4f}"


def describe(summary: UsageSummary) -> str:
    """One line: `1.2M tokens: 10k input, 3k output, 1.1M cache read, 50k cache write`."""
    c = summary.counts
    parts = [f"{short(c['input'])} input", f"{short(c['output'])} output"]
    if c["cache_read"]:
        parts.append(f"{short(c['cache_read'])} cache read")
    if c["cache_write"]:
        parts.append(f"{short(c['cache_write'])} cache write")
    return f"{short(summary.total)} tokens: " + ", ".join(parts)


def cost_line(summary: UsageSummary) -> str:
    if summary.cost_usd is None:
        return f"cost unknown (no price for {', '.join(summary.unpriced)})"
    return f"{money(summary.cost_usd)} at prices of {summary.prices_as_of}"
