"""calibrate: how far the grade is from careful readers, and from benchmark verifiers.

Two kinds of yardstick, both files a user keeps beside their sessions:

- Readings: sessions graded by hand, criterion by criterion, one JSON file per session and
  reader (the format is below; `calibration/README.md` says how a reading is made). With two
  or more readers, their agreement with each other is the ceiling the grade is measured against.
- Labels: benchmark runs with their verifier's pass or fail (a TSV). Task completion should rank
  the passing runs above the failing ones; the AUC says how well it does, per source.

This module is pure: it validates what it is given (positioned errors, as for the rubric), and
turns graded sessions and readings into figures. The CLI reads the files and grades the sessions.

A readings folder holds either `*.json` (one reader) or one sub-folder per reader (`a/`, `b/`,
...), each with `*.json`; a session's readings are matched by file name across readers. A
reading:

    {"session": "corpus/codex/x.jsonl",          # the session file, relative to --sessions
     "scores": {"task_completion": 0-3, ...},     # every criterion: its points, or null (N/A)
     "status": ["too_short"],                     # instead of scores: the statuses a correct
                                                  # grader may give a session it cannot grade
     "p_pass": 0-100,                             # optional, benchmark runs: the reader's
                                                  # probability that the verifier passes
     ... "harness", "goal", "counts", "confidence", "evidence", "notes", "source": free text}

A labels file is tab-separated with a header: `file` (the session, relative to the labels file's
folder or --sessions) and `resolved` (true/false) are required; `suite` groups the
runs (default: the first folder of `file`); `agent_ran` (true/false) says whether the log shows
the agent at work.

A split file (`--split`) is tab-separated with a header holding `session` and `half`
(`tune` or `check`); the figures are then given per half.
"""

from __future__ import annotations

import bisect
import csv
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .errors import SkillDoctorError
from .rubric import CRITERIA

STATUSES = ("ok", "no_history", "too_short", "parse_error")
HALVES = ("tune", "check")
_FREE_KEYS = {"harness", "goal", "counts", "confidence", "evidence", "notes", "source",
              "p_pass_evidence"}
_READING_KEYS = {"session", "scores", "status", "p_pass"} | _FREE_KEYS
STATUS_ITEM = "(status)"  # the item a status reading gives, beside the criteria


class CalibrationError(SkillDoctorError):
    """An invalid readings, labels or split file; names the file, line and key (exit 2)."""


@dataclass(frozen=True, slots=True)
class Reading:
    """One reader's grading of one session."""

    reader: str
    name: str  # the reading's file stem: how readings of one session are matched
    session: str  # the session file, relative to the sessions root
    scores: Mapping[str, int | None]  # empty for a status reading
    status: tuple[str, ...] = ()  # statuses a correct grader may give; () when graded
    p_pass: float | None = None


@dataclass(frozen=True, slots=True)
class Label:
    """One benchmark run and its verifier's outcome."""

    file: str
    resolved: bool
    source: str
    agent_ran: bool | None = None


@dataclass(frozen=True, slots=True)
class Grade:
    """What skill-doctor gave one session: its status and every criterion's points."""

    status: str
    criteria: Mapping[str, int | None] = field(default_factory=dict)
    efficiency: float | None = None


# -- reading the files -------------------------------------------------------------------------


def _key_lines(text: str) -> dict[tuple, int]:
    """The line of every key path of a JSON text (JSON is YAML), for positioned errors; {} when
    the YAML parser cannot follow it (the message then names the key without a line)."""
    import yaml

    from .resources import yaml_loader
    from .rubric import key_lines

    try:
        loader = yaml_loader()(text)
        try:
            return key_lines(loader.get_single_node())
        finally:
            loader.dispose()
    except yaml.YAMLError:
        return {}


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def parse_reading(text: str, source: str, reader: str, name: str) -> Reading:
    """A reading from its JSON text, validated; `source` is the file shown in errors."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"not valid JSON: {exc.msg} (column {exc.colno})", path=source,
                               line=exc.lineno) from None
    except ValueError as exc:  # a duplicate key
        raise CalibrationError(str(exc), path=source) from None
    lines = _key_lines(text)

    def fail(message: str, *path: Any) -> CalibrationError:
        probe, line = path, None
        while probe and line is None:
            line = lines.get(probe)
            probe = probe[:-1]
        return CalibrationError(message, path=source, line=line or lines.get(()),
                                key=".".join(str(p) for p in path) or None)

    if not isinstance(data, dict):
        raise fail("a reading must be a JSON object")
    for key in data:
        if key not in _READING_KEYS:
            raise fail(f"unknown key (expected one of {', '.join(sorted(_READING_KEYS))})", key)
    session = data.get("session")
    if not isinstance(session, str) or not session.strip():
        raise fail("must name the session file (a path relative to the sessions root)",
                   "session")
    status: tuple[str, ...] = ()
    if data.get("status") is not None:
        raw = data["status"]
        raw = [raw] if isinstance(raw, str) else raw
        if not isinstance(raw, list) or not raw or any(s not in STATUSES for s in raw):
            raise fail(f"must be a list of statuses ({', '.join(STATUSES)})", "status")
        status = tuple(raw)
    scores: dict[str, int | None] = {}
    raw_scores = data.get("scores")
    if raw_scores is None and not status:
        raise fail("a reading needs scores (or a status for a session it cannot grade)",
                   "scores")
    if raw_scores is not None and not isinstance(raw_scores, dict):
        raise fail("must be an object of criterion: points", "scores")
    if not status:
        for crit in raw_scores:
            if crit not in CRITERIA:
                raise fail(f"unknown criterion (expected one of {', '.join(CRITERIA)})",
                           "scores", crit)
        for crit, (_, maximum) in CRITERIA.items():
            if crit not in raw_scores:
                raise fail(f"missing (give 0-{maximum}, or null for N/A)", "scores", crit)
            value = raw_scores[crit]
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 0 <= value <= maximum):
                raise fail(f"must be a whole number from 0 to {maximum} or null, got "
                           f"{json.dumps(value)}", "scores", crit)
            scores[crit] = value
    p_pass = data.get("p_pass")
    if p_pass is not None:
        if isinstance(p_pass, bool) or not isinstance(p_pass, (int, float)) \
                or not 0 <= p_pass <= 100:
            raise fail("must be a number from 0 to 100", "p_pass")
        p_pass = float(p_pass)
    return Reading(reader, name, session.strip(), scores, status, p_pass)


def read_text(path: Path, shown: str) -> str:
    """A readings, labels or split file's text; a file that is missing, unreadable, not a
    regular file or over 256 MiB is a CalibrationError (exit 2) naming it as `shown`."""
    from .safe_io import read_named_text

    if not path.exists():
        raise CalibrationError("no such file", path=shown)
    try:
        return read_named_text(path, 256 * 1024 * 1024)
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"cannot read: {getattr(exc, 'strerror', None) or exc}",
                               path=shown) from None


def load_readings(folder: Path) -> dict[str, dict[str, Reading]]:
    """{reader: {reading name: Reading}} from a readings folder (see the module docstring)."""
    if not folder.is_dir():
        raise CalibrationError("not a folder of readings", path=str(folder))
    flat = sorted(p for p in folder.glob("*.json"))
    subs = sorted(p for p in folder.iterdir() if p.is_dir() and any(p.glob("*.json")))
    if flat and subs:
        raise CalibrationError("holds both readings (*.json) and reader folders "
                               f"({', '.join(p.name for p in subs)}); use one layout",
                               path=str(folder))
    groups = [(folder.name or "reader", flat)] if flat else \
        [(sub.name, sorted(sub.glob("*.json"))) for sub in subs]
    if not any(files for _, files in groups):
        raise CalibrationError("holds no readings (*.json, or one folder of them per reader)",
                               path=str(folder))
    readers: dict[str, dict[str, Reading]] = {}
    for reader, files in groups:
        readings: dict[str, Reading] = {}
        for path in files:
            reading = parse_reading(read_text(path, str(path)), str(path), reader, path.stem)
            readings[path.stem] = reading
        readers[reader] = readings
    # Readings of one session by several readers must name the same session file.
    for name in sorted({n for r in readers.values() for n in r}):
        named = {r[name].session for r in readers.values() if name in r}
        if len(named) > 1:
            raise CalibrationError(f"the readers name different sessions: "
                                   f"{', '.join(sorted(named))}", path=f"{folder}/*/{name}.json")
    return readers


def _truth(value: str, source: str, line: int, column: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "pass", "passed"):
        return True
    if lowered in ("false", "0", "no", "fail", "failed"):
        return False
    raise CalibrationError(f"must be true or false, got {value!r}", path=source, line=line,
                           key=column)


def _tsv_rows(text: str, source: str, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    lines = text.splitlines()
    if not lines:
        raise CalibrationError("empty file (a header line is needed)", path=source, line=1)
    header = lines[0].split("\t")
    missing = [c for c in required if c not in header]
    if missing:
        raise CalibrationError(f"the header lacks {', '.join(missing)} (it has "
                               f"{', '.join(header)})", path=source, line=1)
    rows = []
    for number, row in enumerate(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE),
                                 start=2):
        if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
            continue
        for column in required:
            if not (row.get(column) or "").strip():
                raise CalibrationError("empty", path=source, line=number, key=column)
        rows.append((number, row))
    return rows


def parse_labels(text: str, source: str) -> list[Label]:
    """Labelled runs from a labels TSV (see the module docstring)."""
    labels = []
    for number, row in _tsv_rows(text, source, ("file", "resolved")):
        file = row["file"].strip()
        # `source` in a labels file often names each run's origin (repo@commit:path): the
        # group is the suite, or the folder the runs are kept in.
        group = (row.get("suite") or "").strip() or file.split("/")[0]
        ran = row.get("agent_ran")
        labels.append(Label(file, _truth(row["resolved"], source, number, "resolved"), group,
                            None if not (ran or "").strip() else
                            _truth(ran, source, number, "agent_ran")))
    if not labels:
        raise CalibrationError("holds no runs", path=source)
    return labels


def parse_split(text: str, source: str) -> dict[str, str]:
    """{session: half} from a split TSV (see the module docstring)."""
    halves = {}
    for number, row in _tsv_rows(text, source, ("session", "half")):
        half = row["half"].strip()
        if half not in HALVES:
            raise CalibrationError(f"must be {' or '.join(HALVES)}, got {half!r}", path=source,
                                   line=number, key="half")
        halves[row["session"].strip()] = half
    return halves


# -- the figures -------------------------------------------------------------------------------


def auc(pairs: Iterable[tuple[float, bool]]) -> float | None:
    """The probability that a passing run scores above a failing one (ties count half);
    None without both kinds."""
    pairs = list(pairs)
    positives = sorted(s for s, y in pairs if y)
    negatives = sorted(s for s, y in pairs if not y)
    if not positives or not negatives:
        return None
    # One binary search per passing run instead of comparing every pair.
    wins = 0.0
    for p in positives:
        below = bisect.bisect_left(negatives, p)
        equal = bisect.bisect_right(negatives, p) - below
        wins += below + 0.5 * equal
    return wins / (len(positives) * len(negatives))


@dataclass
class _Tally:
    n: int = 0
    exact: int = 0
    near: int = 0
    bias_sum: float = 0.0
    bias_n: int = 0

    def add(self, have: int | None, want: int | None) -> None:
        """One item: `have` against `want`; a score against N/A is a disagreement."""
        self.n += 1
        if have is None or want is None:
            self.exact += have == want
            self.near += have == want
            return
        self.exact += have == want
        self.near += abs(have - want) <= 1
        self.bias_sum += have - want
        self.bias_n += 1

    def add_match(self, ok: bool) -> None:
        """An item with no scale (a status allowed, or not): no "within one", no bias."""
        self.n += 1
        self.exact += ok
        self.near += ok

    def merge(self, other: "_Tally") -> None:
        self.n += other.n
        self.exact += other.exact
        self.near += other.near
        self.bias_sum += other.bias_sum
        self.bias_n += other.bias_n

    def figures(self) -> dict[str, Any]:
        return {"n": self.n,
                "exact": _ratio(self.exact, self.n), "within_one": _ratio(self.near, self.n),
                "bias": round(self.bias_sum / self.bias_n, 2) if self.bias_n else None}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _items(reading: Reading, grade: Grade | None) -> list[tuple[str, Any, Any]]:
    """(item, reader's value, ours) for every item of one reading: a status reading gives
    one item (whether our status is one it allows); a graded one a criterion each (our
    points, None when we gave no score), N/A on both sides left out."""
    status = grade.status if grade is not None else "error"
    if reading.status:
        return [(STATUS_ITEM, True, status in reading.status)]
    items = []
    for crit, want in reading.scores.items():
        have = grade.criteria.get(crit) if grade is not None and status == "ok" else None
        if want is None and have is None and status == "ok":
            continue
        items.append((crit, want, have))
    return items


def compare_readings(readers: Mapping[str, Mapping[str, Reading]],
                     grades: Mapping[str, Grade],
                     names: Iterable[str] | None = None,
                     verdicts: Mapping[str, bool] | None = None,
                     sources: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The figures for the readings named `names` (default: all): per criterion and overall,
    each reader's agreement with us (exact, within one, bias), the readers' agreement with
    each other, our agreement on the items where every reader gave the same value, a confusion
    table (reader's value -> ours), and the always-full-marks baseline. `grades` maps a session
    path to what we gave it. With `verdicts` (session -> the verifier passed), the AUC of our
    task completion, of each reader's and of each reader's p_pass, per source."""
    reader_names = sorted(readers)
    wanted = sorted({n for r in readers.values() for n in r} if names is None else set(names))
    ours = defaultdict(lambda: defaultdict(_Tally))  # item -> reader -> tally
    between = defaultdict(_Tally)  # item -> readers' agreement (every pair)
    agreed = defaultdict(_Tally)  # item -> ours on items every reader agrees on
    baseline = defaultdict(_Tally)  # item -> full marks against each reader
    confusion: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(
        lambda: defaultdict(int)))
    each: list[dict[str, Any]] = []
    for name in wanted:
        present = [readers[r][name] for r in reader_names if name in readers[r]]
        if not present:
            continue
        grade = grades.get(present[0].session)
        items_of = {reading.reader: _items(reading, grade) for reading in present}
        each.append(_session_row(name, present, grade, items_of))
        per_reader = {}  # reader -> item -> the reader's value
        ours_of = {}  # item -> ours
        for reading in present:
            items = items_of[reading.reader]
            per_reader[reading.reader] = {item: want for item, want, _ in items}
            ours_of.update((item, have) for item, _, have in items)
            for item, want, have in items:
                if item == STATUS_ITEM:
                    ours[item][reading.reader].add_match(have)
                    continue
                ours[item][reading.reader].add(have, want)
                confusion[item][_cell(want)][_cell(have)] += 1
                if want is not None:
                    baseline[item].add(CRITERIA[item][1], want)
        for i, a in enumerate(present):
            for b in present[i + 1:]:
                for item in sorted(set(per_reader[a.reader]) & set(per_reader[b.reader])):
                    if item == STATUS_ITEM:
                        continue
                    between[item].add(per_reader[b.reader][item], per_reader[a.reader][item])
        if len(present) > 1:
            values = [per_reader[r.reader] for r in present]
            for item in sorted(set.intersection(*(set(v) for v in values))):
                if item != STATUS_ITEM and len({v[item] for v in values}) == 1:
                    agreed[item].add(ours_of[item], values[0][item])
    items = [c for c in CRITERIA if c in ours] + ([STATUS_ITEM] if STATUS_ITEM in ours else [])
    result: dict[str, Any] = {"sessions": len(each), "readers": reader_names, "criteria": {}}
    total = defaultdict(_Tally)
    total_between, total_agreed, total_base = _Tally(), _Tally(), _Tally()
    for item in items:
        row: dict[str, Any] = {"readers": {}}
        for reader in reader_names:
            tally = ours[item][reader]
            row["readers"][reader] = tally.figures()
            total[reader].merge(tally)
        if item in between:
            row["between_readers"] = between[item].figures()
            total_between.merge(between[item])
        if item in agreed:
            row["where_readers_agree"] = agreed[item].figures()
            total_agreed.merge(agreed[item])
        if item in baseline:
            row["full_marks"] = baseline[item].figures()
            total_base.merge(baseline[item])
        if item in confusion:
            row["confusion"] = {want: dict(sorted(cols.items()))
                                for want, cols in sorted(confusion[item].items())}
        result["criteria"][item] = row
    result["sessions_graded"] = each
    result["overall"] = {"readers": {r: total[r].figures() for r in reader_names},
                         "between_readers": total_between.figures(),
                         "where_readers_agree": total_agreed.figures(),
                         "full_marks": total_base.figures()}
    if verdicts:
        result["auc"] = _reading_aucs(readers, reader_names, wanted, grades, verdicts,
                                      sources or {})
    return result


def _session_row(name: str, present: Sequence[Reading], grade: Grade | None,
                 items_of: Mapping[str, list[tuple[str, Any, Any]]]) -> dict[str, Any]:
    """One session: what we gave it and what each reader gave it, and where they differ
    (`items_of`: each reader's `_items`)."""
    status = grade.status if grade is not None else "error"
    ours = dict(grade.criteria) if grade is not None and status == "ok" else {}
    row: dict[str, Any] = {"name": name, "session": present[0].session, "status": status,
                           "ours": ours, "readers": {}, "differs": {}}
    for reading in present:
        row["readers"][reading.reader] = {"status": list(reading.status)} if reading.status \
            else dict(reading.scores)
        row["differs"][reading.reader] = sorted(
            item for item, want, have in items_of[reading.reader]
            if (have is not True if item == STATUS_ITEM else have != want))
    return row


def _cell(value: Any) -> str:
    return "N/A" if value is None else str(value)


def _reading_aucs(readers, reader_names, wanted, grades, verdicts, sources) -> dict[str, Any]:
    """Per source: runs, passes, and the AUC of ours and each reader's task completion and
    p_pass against the verifier."""
    rows: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for name in wanted:
        present = [readers[r][name] for r in reader_names if name in readers[r]]
        if not present or present[0].session not in verdicts:
            continue
        session = present[0].session
        passed = verdicts[session]
        grade = grades.get(session)
        task = grade.criteria.get("task_completion") if grade and grade.status == "ok" else None
        for group in (sources.get(session, session.split("/")[0]), "all"):
            rows[group]["ours"].append((-1 if task is None else task, passed))
            for reading in present:
                want = reading.scores.get("task_completion")
                rows[group][f"{reading.reader} task_completion"].append(
                    (-1 if want is None else want, passed))
                if reading.p_pass is not None:
                    rows[group][f"{reading.reader} p_pass"].append((reading.p_pass, passed))
    out = {}
    for group in sorted(rows, key=lambda g: (g == "all", g)):
        pairs = rows[group]["ours"]
        out[group] = {"runs": len(pairs), "pass": sum(y for _, y in pairs),
                      **{who: _round(auc(p)) for who, p in sorted(rows[group].items())}}
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def compare_labels(labels: Sequence[Label], grades: Mapping[str, Grade]) -> dict[str, Any]:
    """Per source and overall: runs, passes, runs given no score (and how many of those show the
    agent at work), and the AUC of task completion and of efficiency. A run given no score
    counts as the lowest score."""
    groups: dict[str, list[tuple[Label, Grade | None]]] = defaultdict(list)
    for label in labels:
        grade = grades.get(label.file)
        for group in (label.source, "all"):
            groups[group].append((label, grade))
    out = {}
    for group in sorted(groups, key=lambda g: (g == "all", g)):
        runs = groups[group]
        task, eff = [], []
        unscored = unscored_ran = 0
        for label, grade in runs:
            t = grade.criteria.get("task_completion") if grade and grade.status == "ok" else None
            e = grade.efficiency if grade and grade.status == "ok" else None
            if t is None:
                unscored += 1
                unscored_ran += label.agent_ran is not False
            task.append((-1 if t is None else t, label.resolved))
            eff.append((-1 if e is None else e, label.resolved))
        out[group] = {"runs": len(runs), "pass": sum(l.resolved for l, _ in runs),
                      "unscored": unscored, "unscored_agent_ran": unscored_ran,
                      "auc_task_completion": _round(auc(task)),
                      "auc_efficiency": _round(auc(eff))}
    return out


# -- text --------------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _bias(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def format_readings(figures: Mapping[str, Any], title: str, verbose: bool = False) -> list[str]:
    """The readings figures as text: one table of agreement, then the confusion tables (and,
    `verbose`, every session's differences from each reader)."""
    readers = figures["readers"]
    out = [f"{title}: {figures['sessions']} sessions, {len(readers)} "
           f"{'reader' if len(readers) == 1 else 'readers'} ({', '.join(readers)}); "
           f"exact and within one point, bias = ours minus the reader's"]
    head = f"{'criterion':28} {'n':>4}"
    for r in readers:
        head += f" |{r[:6] + ' exact':>13} {'±1':>5} {'bias':>5}"
    if len(readers) > 1:
        head += f" |{'readers exact':>14} {'±1':>5} |{'agreed n':>9} {'exact':>5}"
    head += f" |{'full marks':>11}"
    out.append(head)
    rows = [(item, figures["criteria"][item]) for item in figures["criteria"]]
    rows.append(("all", figures["overall"]))
    for item, row in rows:
        first = next(iter(row["readers"].values()))
        line = f"{item:28} {first['n']:4}"
        for r in readers:
            f = row["readers"][r]
            line += f" |{_pct(f['exact']):>13} {_pct(f['within_one']):>5} {_bias(f['bias']):>5}"
        if len(readers) > 1:
            b = row.get("between_readers") or {}
            a = row.get("where_readers_agree") or {}
            line += (f" |{_pct(b.get('exact')):>14} {_pct(b.get('within_one')):>5}"
                     f" |{a.get('n', 0):9} {_pct(a.get('exact')):>5}")
        full = row.get("full_marks") or {}
        line += f" |{_pct(full.get('exact')):>11}"
        out.append(line)
    for item, row in figures["criteria"].items():
        table = row.get("confusion")
        if not table:
            continue
        columns = sorted({c for cols in table.values() for c in cols}, key=_cell_order)
        out.append(f"{item}: readers' points (rows) against skill-doctor's (columns)")
        out.append("       " + "".join(f"{c:>5}" for c in columns))
        for want in sorted(table, key=_cell_order):
            out.append(f"  {want:>4} " + "".join(f"{table[want].get(c, 0):5}" for c in columns))
    if figures.get("auc"):
        out.extend(_auc_lines(figures["auc"]))
    if verbose:
        out.append("sessions where skill-doctor differs from a reader (ours/reader's):")
        for row in figures["sessions_graded"]:
            parts = []
            for reader, items in row["differs"].items():
                for item in items:
                    want = row["readers"][reader].get(item) if item != STATUS_ITEM else \
                        "|".join(row["readers"][reader]["status"])
                    have = row["status"] if item == STATUS_ITEM or row["status"] != "ok" \
                        else _cell(row["ours"].get(item))
                    parts.append(f"{item} {have}/{_cell(want)} ({reader})")
            out.append(f"  {row['name']}: " + ("; ".join(parts) if parts else "agrees"))
    return out


def _cell_order(cell: str) -> tuple[int, str]:
    return (1, cell) if cell == "N/A" else (0, cell)


def _auc_lines(aucs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    whos = sorted({k for row in aucs.values() for k in row} - {"runs", "pass"},
                  key=lambda k: (k != "ours", k))
    out = ["AUC against the verifier (task completion; p_pass where readers gave it)",
           f"{'source':28} {'runs':>5} {'pass':>5} " + " ".join(f"{w:>22}" for w in whos)]
    for group, row in aucs.items():
        out.append(f"{group:28} {row['runs']:5} {row['pass']:5} "
                   + " ".join(f"{_fmt_auc(row.get(w)):>22}" for w in whos))
    return out


def _fmt_auc(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def format_labels(figures: Mapping[str, Mapping[str, Any]]) -> list[str]:
    out = [f"{'source':34} {'runs':>5} {'pass':>5} {'unscored':>9} {'of which ran':>13} "
           f"{'AUC task':>9} {'AUC eff':>8}"]
    for group, row in figures.items():
        out.append(f"{group[:34]:34} {row['runs']:5} {row['pass']:5} {row['unscored']:9} "
                   f"{row['unscored_agent_ran']:13} {_fmt_auc(row['auc_task_completion']):>9} "
                   f"{_fmt_auc(row['auc_efficiency']):>8}")
    everything = figures.get("all")
    if everything:
        out.append(f"labelled: task completion AUC {_fmt_auc(everything['auc_task_completion'])} "
                   f"on {everything['runs']} runs; {everything['unscored_agent_ran']} given no "
                   f"score although the agent ran")
    return out


# -- grading the sessions (in worker processes with -j) ----------------------------------------


def grade_session(path: str, rubric: Any, generated_at: str) -> Grade:
    """What skill-doctor gives the session file at `path`, graded as `report` grades it (a file
    holding several sessions by its last); never raises (a failure is status "error")."""
    from .decode import decode_file
    from .decode.sessions import last as last_session
    from .report import grade

    try:
        # Only the points are read: no redaction, no page data.
        report = grade(last_session(decode_file(Path(path))), rubric, generated_at,
                       redact_secrets=False, overview=False)
    except Exception:  # one session must not stop the measurement; it counts as no score
        return Grade("error")
    criteria: dict[str, int | None] = {}
    efficiency = None
    for scale in report.scores.scales():
        if scale.name == "efficiency":
            efficiency = scale.score
        for result in scale.criteria:
            criteria[result.criterion.key] = result.points
    return Grade(report.status, criteria, efficiency)


def grade_sessions(paths: Sequence[str], rubric: Any, generated_at: str,
                   jobs: int = 1) -> list[Grade]:
    """`grade_session` for every path, in order, over `jobs` processes."""
    from functools import partial

    work = partial(grade_session, rubric=rubric, generated_at=generated_at)
    if jobs <= 1 or len(paths) <= 1:
        return [work(p) for p in paths]
    import multiprocessing

    with multiprocessing.get_context().Pool(min(jobs, len(paths))) as pool:
        return pool.map(work, paths, chunksize=1)
