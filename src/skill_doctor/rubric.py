"""rubric: load `rubric.yaml` (and a user's partial override) and validate it.

The rubric is data: which detector measures each criterion, with which parameters, how the
measured value maps to points, and what to suggest. It is validated on load so a mistake fails
fast with the file, line and key (exit 2), never half-way through grading. Unknown keys, wrong
types, bands that leave values uncovered, unknown detectors and points above a criterion's
maximum are all errors.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from . import resources
from .resources import yaml_loader
from .errors import RubricError

SCALES = ("efficiency", "code_quality")
CRITERIA: dict[str, tuple[str, int]] = {  # stable criterion ids -> (scale, contract maximum)
    "task_completion": ("efficiency", 3),
    "unnecessary_exploration": ("efficiency", 3),
    "retry_waste": ("efficiency", 2),
    "turn_economy": ("efficiency", 2),
    "correct_file_identification": ("code_quality", 3),
    "minimal_diff": ("code_quality", 3),
    "pattern_adherence": ("code_quality", 2),
    "regression_avoidance": ("code_quality", 2),
}
_TOP_KEYS = {"version", "extends", "thresholds", "criteria", "prices"}
_CRITERION_KEYS = {"id", "name", "category", "scale", "max", "detector", "params", "bands",
                   "suggestion", "suggestions", "enabled"}
_BAND_KEYS = {"at_most", "at_least", "points", "label"}


@dataclass(frozen=True, slots=True)
class Band:
    points: int
    at_most: float | None = None
    at_least: float | None = None
    label: str = ""

    def matches(self, value: float) -> bool:
        if self.at_most is not None:
            return value <= self.at_most
        if self.at_least is not None:
            return value >= self.at_least
        return True

    def describe(self) -> str:
        if self.at_most is not None:
            return f"value <= {_num(self.at_most)}"
        if self.at_least is not None:
            return f"value >= {_num(self.at_least)}"
        return "otherwise"


@dataclass(frozen=True, slots=True)
class Criterion:
    key: str
    rule_id: str
    name: str
    category: str
    scale: str
    max: int
    detector: str
    params: Mapping[str, Any]
    bands: tuple[Band, ...]
    suggestion: str
    enabled: bool = True
    suggestions: Mapping[str, str] = field(default_factory=dict)  # cause -> suggestion

    def suggestion_for(self, causes: tuple[str, ...] = ()) -> str:
        """The suggestion for the weightiest cause the rubric has advice for, else the default."""
        for cause in causes:
            if cause in self.suggestions:
                return self.suggestions[cause]
        return self.suggestion

    def band_for(self, value: float) -> Band:
        for band in self.bands:
            if band.matches(value):
                return band
        return self.bands[-1]  # unreachable: validation guarantees a catch-all band


@dataclass(frozen=True, slots=True)
class Rubric:
    source: str
    criteria: tuple[Criterion, ...]
    thresholds: Mapping[str, float]
    prices: tuple = ()  # tokens.Price entries declared by the rubric, tried before the defaults
    user_file: str | None = None  # the user's rubric file (its name); None: the default alone

    def scale(self, name: str) -> tuple[Criterion, ...]:
        return tuple(c for c in self.criteria if c.scale == name)

    def detector_params(self, detector: str) -> Mapping[str, Any] | None:
        """The parameters the rubric gives a detector (those of the first enabled criterion
        that uses it), or None when no enabled criterion does."""
        for criterion in self.criteria:
            if criterion.detector == detector and criterion.enabled:
                return criterion.params
        return None

    def get(self, key: str) -> Criterion:
        for criterion in self.criteria:
            if criterion.key == key:
                return criterion
        raise KeyError(key)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# -- loading ------------------------------------------------------------------------------


def _parse(text: str, source: str) -> tuple[Any, dict[tuple, int]]:
    """Parse YAML, keeping the line of every key path for positioned error messages."""
    import yaml

    loader = yaml_loader()
    try:
        # One parse: the node tree gives the lines, and the same tree is constructed.
        parser = loader(text)
        try:
            node = parser.get_single_node()
            if node is not None:
                _check_nodes(node, source)
            data = parser.construct_document(node) if node is not None else None
        finally:
            parser.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RubricError(f"not valid YAML: {problem}", path=source, line=line) from None
    return data, key_lines(node)


def key_lines(root: Any) -> dict[tuple, int]:
    """The line of every key path of a composed YAML (or JSON) node tree, for positioned
    error messages: a mapping's entry is where its key is written, a list item where it
    starts. Iterative: a deep document does not recurse."""
    import yaml

    lines: dict[tuple, int] = {}
    stack = [(root, ())] if root is not None else []
    while stack:
        node, path = stack.pop()
        lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                child = path + (key_node.value,)
                lines[child] = key_node.start_mark.line + 1
                stack.append((value_node, child))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, path + (i,)) for i, item in enumerate(node.value))
    return lines


MAX_RUBRIC_BYTES = 4 * 1024 * 1024  # a rubric is a few KB
# A rubric is small: far fewer values than this, even with every alias expanded. Nested
# aliases ("a billion laughs") expand exponentially; they are refused before anything is built.
MAX_VALUES = 100_000
_LONG_NUMBER = 100  # digits; a threshold or a band needs a handful


def _check_nodes(root: Any, source: str) -> None:
    """Refuse, with the line, what would exhaust memory or fail while the rubric is built: a
    document whose aliases expand past MAX_VALUES values, a number of more than _LONG_NUMBER
    digits, and a key given twice in one mapping (YAML keeps the last silently). Each node is
    visited once: the expanded size is summed with each shared node counted from its own."""
    import yaml

    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes and not done:
            continue
        children = ([v for pair in node.value for v in pair]
                    if isinstance(node, yaml.MappingNode) else
                    list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if not done:
            if isinstance(node, yaml.ScalarNode) and len(node.value) > _LONG_NUMBER and \
                    node.tag.endswith((":int", ":float")):
                raise RubricError(f"a number of {len(node.value)} digits is no rubric value",
                                  path=source, line=node.start_mark.line + 1)
            if isinstance(node, yaml.MappingNode):
                seen: set[str] = set()
                for key, _ in node.value:
                    if isinstance(key, yaml.ScalarNode):
                        if key.value in seen:
                            raise RubricError("given twice in the same mapping (YAML would keep "
                                              "only the last)", path=source,
                                              line=key.start_mark.line + 1, key=key.value)
                        seen.add(key.value)
            sizes[id(node)] = -1  # visiting
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        total = 1 + sum(max(sizes.get(id(child), 1), 1) for child in children)
        if total > MAX_VALUES:
            raise RubricError(f"the rubric expands to more than {MAX_VALUES:,} values (nested "
                              f"YAML aliases); a rubric needs a few hundred",
                              path=source, line=node.start_mark.line + 1)
        sizes[id(node)] = total


def _merge(base: Any, override: Any) -> Any:
    """A partial rubric overrides only the keys it names; lists (bands) are replaced whole."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = _merge(base.get(key), value) if key in base else value
        return merged
    return copy.deepcopy(override)


def load(path: str | Path | None = None) -> Rubric:
    """The default rubric, with the file at `path` (if any) laid over it, validated."""
    default_path = resources.rubric_path()
    data, lines = _parse(default_path.read_text(encoding="utf-8"), str(default_path))
    _validate(data, lines, str(default_path))
    source = str(default_path)
    if path is not None:
        user_path = Path(path)
        from .safe_io import read_named_text

        try:
            text = read_named_text(user_path, MAX_RUBRIC_BYTES)
        except (OSError, UnicodeDecodeError) as exc:
            raise RubricError(f"cannot read rubric: {getattr(exc, 'strerror', None) or exc}",
                              path=str(user_path)) from None
        override, user_lines = _parse(text, str(user_path))
        if override is None:
            override = {}
        if not isinstance(override, dict):
            raise RubricError("a rubric must be a mapping of keys", path=str(user_path), line=1)
        _check_keys(override, user_lines, str(user_path))
        extends = override.pop("extends", True)
        if not isinstance(extends, bool):
            raise _err(f"must be true or false, got {extends!r}", str(user_path), user_lines,
                       ("extends",))
        # `extends: false` makes the file the whole rubric: every criterion must be given.
        data = _merge(data, override) if extends else override
        # Positions of merged values: the user's line where they came from, else none.
        lines = {k: v for k, v in user_lines.items()}
        source = str(user_path)
        _validate(data, lines, source)
    return _build(data, source, Path(path).name if path is not None else None)


def _check_keys(data: dict, lines: dict[tuple, int], source: str) -> None:
    """Unknown keys in a partial override are caught before merging hides where they were."""
    for key in data:
        if key not in _TOP_KEYS:
            raise _err(f"unknown key (expected one of {', '.join(sorted(_TOP_KEYS))})",
                       source, lines, (key,))
    for key, crit in (data.get("criteria") or {}).items():
        if key not in CRITERIA:
            raise _err(f"unknown criterion (expected one of {', '.join(CRITERIA)})", source,
                       lines, ("criteria", key))
        if isinstance(crit, dict):
            for entry in crit:
                if entry not in _CRITERION_KEYS:
                    raise _err(f"unknown key (expected one of {', '.join(sorted(_CRITERION_KEYS))})",
                               source, lines, ("criteria", key, entry))


def _err(message: str, source: str, lines: dict[tuple, int], path: tuple) -> RubricError:
    line = None
    probe = path
    while probe and line is None:
        line = lines.get(probe)
        probe = probe[:-1]
    key = ".".join(str(p) for p in path)
    return RubricError(message, path=source, line=line, key=key or None)


def _validate(data: Any, lines: dict[tuple, int], source: str) -> None:
    from .detectors import DETECTORS

    if not isinstance(data, dict):
        raise _err("a rubric must be a mapping of keys", source, lines, ())
    _check_keys(data, lines, source)
    thresholds = data.get("thresholds", {})
    if not isinstance(thresholds, dict):
        raise _err("must be a mapping of scale to minimum score", source, lines, ("thresholds",))
    for scale, value in thresholds.items():
        if scale not in SCALES:
            raise _err(f"unknown scale (expected one of {', '.join(SCALES)})", source, lines,
                       ("thresholds", scale))
        if not _is_number(value) or not 0 <= value <= 10:
            raise _err(f"must be a number from 0 to 10, got {value!r}", source, lines,
                       ("thresholds", scale))
    if "prices" in data:
        from .tokens import check_prices
        check_prices(data["prices"],
                     lambda message, at: _err(message, source, lines, ("prices", *at)))
    criteria = data.get("criteria")
    if not isinstance(criteria, dict):
        raise _err("must be a mapping of criterion id to its definition", source, lines,
                   ("criteria",))
    for key in CRITERIA:
        if key not in criteria:
            raise _err(f"criterion {key!r} is missing", source, lines, ("criteria",))
    for key, crit in criteria.items():
        where = ("criteria", key)
        if not isinstance(crit, dict):
            raise _err("must be a mapping", source, lines, where)
        for entry in ("id", "name", "category", "scale", "max", "detector", "bands", "suggestion"):
            if entry not in crit:
                raise _err(f"missing required key {entry!r}", source, lines, where)
        for entry in ("id", "name", "category", "suggestion", "detector", "scale"):
            if not isinstance(crit[entry], str) or not crit[entry].strip():
                raise _err(f"must be a non-empty string, got {crit[entry]!r}", source, lines,
                           where + (entry,))
        scale, contract_max = CRITERIA[key]
        if crit["scale"] != scale:
            raise _err(f"criterion {key} belongs to scale {scale!r}, got {crit['scale']!r}",
                       source, lines, where + ("scale",))
        if not isinstance(crit["max"], int) or isinstance(crit["max"], bool) or crit["max"] < 1:
            raise _err(f"must be a positive whole number, got {crit['max']!r}", source, lines,
                       where + ("max",))
        if crit["max"] != contract_max:
            raise _err(f"the maximum of {key} is {contract_max} (the scale sums to 10), "
                       f"got {crit['max']!r}", source, lines, where + ("max",))
        if "enabled" in crit and not isinstance(crit["enabled"], bool):
            raise _err(f"must be true or false, got {crit['enabled']!r}", source, lines,
                       where + ("enabled",))
        detector = DETECTORS.get(crit["detector"])
        if detector is None:
            raise _err(f"unknown detector {crit['detector']!r} (known: "
                       f"{', '.join(sorted(DETECTORS))})", source, lines, where + ("detector",))
        params = crit.get("params") or {}
        if not isinstance(params, dict):
            raise _err("must be a mapping", source, lines, where + ("params",))
        for name, value in params.items():
            spec = detector.params.get(name)
            if spec is None:
                known = ", ".join(sorted(detector.params)) or "none"
                raise _err(f"unknown parameter for detector {crit['detector']} (known: {known})",
                           source, lines, where + ("params", name))
            if not _type_ok(value, spec[0]):
                raise _err(f"must be of type {spec[0].__name__}, got {value!r}", source, lines,
                           where + ("params", name))
        _validate_bands(crit["bands"], crit["max"], source, lines, where + ("bands",))
        advice = crit.get("suggestions") or {}
        if not isinstance(advice, dict):
            raise _err("must be a mapping of cause to suggestion text", source, lines,
                       where + ("suggestions",))
        for cause, text in advice.items():
            if cause not in detector.causes:
                known = ", ".join(detector.causes) or "none"
                raise _err(f"unknown cause for detector {crit['detector']} (known: {known})",
                           source, lines, where + ("suggestions", cause))
            if not isinstance(text, str) or not text.strip():
                raise _err(f"must be a non-empty string, got {text!r}", source, lines,
                           where + ("suggestions", cause))


def _validate_bands(bands: Any, maximum: int, source: str, lines: dict, where: tuple) -> None:
    if not isinstance(bands, list) or not bands:
        raise _err("must be a non-empty list of bands", source, lines, where)
    direction = None
    previous = None
    for i, band in enumerate(bands):
        at = where + (i,)
        if not isinstance(band, dict):
            raise _err("a band must be a mapping like {at_most: 1, points: 2}", source, lines, at)
        for entry in band:
            if entry not in _BAND_KEYS:
                raise _err(f"unknown key (expected one of {', '.join(sorted(_BAND_KEYS))})",
                           source, lines, at + (entry,))
        points = band.get("points")
        if not isinstance(points, int) or isinstance(points, bool) or points < 0:
            raise _err(f"points must be a whole number >= 0, got {points!r}", source, lines,
                       at + ("points",))
        if points > maximum:
            raise _err(f"points {points} exceed the criterion's maximum of {maximum}", source,
                       lines, at + ("points",))
        bounds = [k for k in ("at_most", "at_least") if k in band]
        if len(bounds) > 1:
            raise _err("a band takes at_most or at_least, not both", source, lines, at)
        last = i == len(bands) - 1
        if not bounds:
            if not last:
                raise _err("only the last band may omit its bound", source, lines, at)
            continue
        bound_key = bounds[0]
        value = band[bound_key]
        if not _is_number(value):
            raise _err(f"must be a number, got {value!r}", source, lines, at + (bound_key,))
        if direction is None:
            direction = bound_key
        elif direction != bound_key:
            raise _err("all bands of a criterion must use the same bound (at_most or at_least)",
                       source, lines, at + (bound_key,))
        if previous is not None and ((bound_key == "at_most" and value <= previous)
                                     or (bound_key == "at_least" and value >= previous)):
            raise _err("bands must be ordered so each bound is looser than the one before",
                       source, lines, at + (bound_key,))
        previous = value
        if last:
            raise _err("the last band must have no bound, so every value gets points", source,
                       lines, at)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _type_ok(value: Any, expected: type) -> bool:
    if expected is float:
        return _is_number(value)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)


def _build(data: dict, source: str, user_file: str | None = None) -> Rubric:
    criteria = []
    for key in CRITERIA:  # fixed, documented order: the report lists criteria this way
        crit = data["criteria"][key]
        bands = tuple(Band(points=b["points"], at_most=b.get("at_most"),
                           at_least=b.get("at_least"), label=str(b.get("label", "")))
                      for b in crit["bands"])
        criteria.append(Criterion(
            key=key, rule_id=crit["id"], name=crit["name"], category=crit["category"],
            scale=crit["scale"], max=crit["max"], detector=crit["detector"],
            params=dict(crit.get("params") or {}), bands=bands,
            suggestion=" ".join(str(crit["suggestion"]).split()),
            enabled=crit.get("enabled", True),
            suggestions={cause: " ".join(str(text).split())
                         for cause, text in sorted((crit.get("suggestions") or {}).items())},
        ))
    thresholds = {scale: float(data.get("thresholds", {}).get(scale, 0)) for scale in SCALES}
    prices = ()
    if data.get("prices"):
        from .tokens import parse_prices
        prices = parse_prices(data["prices"])
    return Rubric(source=source, criteria=tuple(criteria), thresholds=thresholds, prices=prices,
                  user_file=user_file)
