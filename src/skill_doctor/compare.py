"""compare: two graded sessions side by side (two runs of one task, before and after a change).

`skill-doctor compare A B` grades both sessions with the same rubric and reports what changed
from A to B: both scores and every criterion with its delta, the findings that appear,
disappear or change, the size of each run (turns, tool calls, failed calls, tokens, cost,
duration) and the first turn where the runs diverge. It works from the two `report.json`
records (the versioned contract, so it reads what users read) plus the decoded turns for the
divergence. Views: `compare.json` (schema `skill-doctor/compare/v1`), `compare.html` (the
report's CSP and style) and text lines for the terminal.

Where two runs diverge: turns are compared in order as actions, not words. A tool call is
its kind, tool and target (paths, or the command it ran); a user turn is its text; an
assistant turn is only "the assistant spoke" (two runs never phrase a reply alike, and the
reply is not what moves the work). Injected turns (reminders, hooks) are left out. The first
position where the actions differ, or where one run ends, is the divergence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from . import __version__
from .model import Role, Transcript, Turn
from .redact import redact
from .text import cut_redacted

SCHEMA = "skill-doctor/compare/v1"
SCALE_TITLES = {"efficiency": "Efficiency", "code_quality": "Code quality"}
RUN_FIGURES = (  # (key, label): the size of each run
    ("turns", "Turns"), ("tool_calls", "Tool calls"), ("failed_calls", "Failed tool calls"),
    ("total_tokens", "Tokens"), ("cost_usd", "Cost (USD)"), ("duration_seconds", "Duration (s)"),
)
_TARGET_CHARS = 160


@dataclass(frozen=True, slots=True)
class Side:
    """One of the two sessions: its report.json record and its decoded turns."""

    label: str  # "A" or "B"
    path: str  # as shown to people
    record: Mapping[str, Any]
    transcript: Transcript | None


# -- the comparison as data --------------------------------------------------------------------


def _delta(a: Any, b: Any) -> float | int | None:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        d = round(b - a, 4)
        return int(d) if float(d).is_integer() else d
    return None


def _scales(record: Mapping[str, Any]) -> Mapping[str, Any]:
    return record.get("scores") or {}


def _criteria(a: Mapping[str, Any], b: Mapping[str, Any],
              names: Mapping[str, str]) -> list[dict[str, Any]]:
    """Every criterion of either report, in the rubric's order, with both scores and its plain
    name ("Task completion")."""
    rows = []
    for scale in SCALE_TITLES:
        ca = (_scales(a).get(scale) or {}).get("criteria") or {}
        cb = (_scales(b).get(scale) or {}).get("criteria") or {}
        for key in list(ca) + [k for k in cb if k not in ca]:
            x, y = ca.get(key) or {}, cb.get(key) or {}
            rows.append({
                "criterion": key, "name": names.get(key),
                "id": x.get("id") or y.get("id"), "scale": scale,
                "max": x.get("max") or y.get("max"),
                "a": {"score": x.get("score"), "value": x.get("value"), "band": x.get("band")},
                "b": {"score": y.get("score"), "value": y.get("value"), "band": y.get("band")},
                "delta": _delta(x.get("score"), y.get("score")),
            })
    return rows


def _findings(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Findings by criterion: in B only (appeared), in A only (disappeared), in both with a
    different score or message (changed)."""
    fa = {f["criterion"]: f for f in a.get("findings") or ()}
    fb = {f["criterion"]: f for f in b.get("findings") or ()}

    def brief(f: Mapping[str, Any]) -> dict[str, Any]:
        return {"criterion": f["criterion"], "name": f.get("category"), "id": f.get("id"),
                "rule": f.get("rule"),
                "score": f.get("score"), "max": f.get("max"), "message": f.get("message"),
                "turns": [e.get("turn") for e in f.get("evidence") or ()]}

    changed = []
    for key in fa:
        if key in fb and (fa[key].get("score"), fa[key].get("message")) != (
                fb[key].get("score"), fb[key].get("message")):
            changed.append({"criterion": key, "name": fa[key].get("category"),
                            "id": fa[key].get("id"),
                            "rule": fa[key].get("rule"), "a": brief(fa[key]),
                            "b": brief(fb[key]),
                            "delta": _delta(fa[key].get("score"), fb[key].get("score"))})
    return {"appeared": [brief(f) for k, f in fb.items() if k not in fa],
            "disappeared": [brief(f) for k, f in fa.items() if k not in fb],
            "changed": changed}


def _figures(record: Mapping[str, Any]) -> dict[str, Any]:
    session = (record.get("overview") or {}).get("session") or {}
    usage = record.get("usage") or {}
    return {
        "turns": (record.get("session") or {}).get("turns"),
        "tool_calls": session.get("tool_calls"),
        "failed_calls": session.get("failed_calls"),
        "total_tokens": usage.get("total_tokens"),
        "input_tokens": usage.get("input_tokens"),
        "output_tokens": usage.get("output_tokens"),
        "cache_read_tokens": usage.get("cache_read_tokens"),
        "cache_write_tokens": usage.get("cache_write_tokens"),
        "cost_usd": usage.get("cost_usd") if usage else None,
        "duration_seconds": session.get("duration_seconds"),
    }


def action(turn: Turn) -> tuple:
    """What a turn did, for finding where two runs part (see the module docstring)."""
    if turn.role is Role.TOOL:
        target = turn.command if turn.command else ", ".join(turn.paths)
        return ("tool", turn.kind.value if turn.kind else "", turn.tool_name or "",
                " ".join(target.split()), turn.is_error)
    if turn.role is Role.USER:
        return ("user", " ".join(turn.content.split()))
    return ("assistant",)


def describe_turn(turn: Turn | None, redact_secrets: bool = True) -> str | None:
    """A one-line account of a turn: `Read src/pager.py`, `user: fix the pager` ..."""
    if turn is None:
        return None
    if turn.role is Role.TOOL:
        target = turn.command if turn.command else ", ".join(turn.paths)
        text = f"{turn.tool_name or 'tool'} {' '.join(target.split())}".strip()
        if turn.is_error:
            text += " (failed)"
    elif turn.role is Role.USER:
        text = "user: " + " ".join(turn.content.split())
    else:
        text = "assistant: " + " ".join(turn.content.split())
    # Redacted whole, then cut: a cut first could leave part of a secret no pattern knows.
    if redact_secrets:
        text = redact(text)
    if len(text) > _TARGET_CHARS:
        text = cut_redacted(text, _TARGET_CHARS - 1).rstrip() + "…"
    return text


def divergence(a: Transcript | None, b: Transcript | None, *,
               redact_secrets: bool = True) -> dict[str, Any] | None:
    """The first position where the two runs' actions differ, with each side's turn there;
    None when either session has no turns or the runs do the same things throughout."""
    if a is None or b is None or not a.turns or not b.turns:
        return None
    ta, tb = a.real_turns, b.real_turns
    same = 0
    for x, y in zip(ta, tb):
        if action(x) != action(y):
            break
        same += 1
    else:
        if len(ta) == len(tb):
            return None
    x = ta[same] if same < len(ta) else None
    y = tb[same] if same < len(tb) else None
    return {
        "step": same + 1,  # position among the turns compared (injected ones left out)
        "same_before": same,
        "a": {"turn": x.index if x else None, "did": describe_turn(x, redact_secrets)},
        "b": {"turn": y.index if y else None, "did": describe_turn(y, redact_secrets)},
    }


def compare(a: Side, b: Side, generated_at: str, *, redact_secrets: bool = True,
            names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The comparison document (schema `skill-doctor/compare/v1`); `names` gives each
    criterion's plain name (the rubric's category) by its key."""
    ra, rb = a.record, b.record
    scores = {}
    for scale in SCALE_TITLES:
        x = (_scales(ra).get(scale) or {}).get("score")
        y = (_scales(rb).get(scale) or {}).get("score")
        scores[scale] = {"a": x, "b": y, "delta": _delta(x, y)}
    fa, fb = _figures(ra), _figures(rb)
    runs = {key: {"a": fa[key], "b": fb[key], "delta": _delta(fa[key], fb[key])} for key in fa}

    def side(s: Side) -> dict[str, Any]:
        session = s.record.get("session") or {}
        return {"path": s.path, "status": s.record.get("status"),
                "message": s.record.get("message"), "id": session.get("id"),
                "harness": session.get("harness"), "started_at": session.get("started_at"),
                "model": ((s.record.get("overview") or {}).get("session") or {}).get("model")}

    return {
        "schema": SCHEMA,
        "a": side(a),
        "b": side(b),
        "scores": scores,
        "criteria": _criteria(ra, rb, names or {}),
        "findings": _findings(ra, rb),
        "runs": runs,
        "divergence": divergence(a.transcript, b.transcript, redact_secrets=redact_secrets),
        "generator": {"name": "skill-doctor", "version": __version__,
                      "generated_at": generated_at},
    }


# -- views -------------------------------------------------------------------------------------


def _num(value: Any) -> str:
    if value is None:
        return "N/A"
    if isinstance(value, str):
        return value
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _named(item: Mapping[str, Any]) -> str:
    """A criterion as people read it: "Task completion (SD101)" (from its key when the
    rubric's name is not known: "Task completion")."""
    name = item.get("name") or str(item.get("criterion") or "").replace("_", " ").capitalize()
    return f"{name} ({item['id']})" if item.get("id") else name


def _signed(delta: Any) -> str:
    if delta is None:
        return ""
    if delta == 0:
        return "0"
    return f"+{_num(delta)}" if delta > 0 else f"-{_num(-delta)}"


def text_lines(doc: Mapping[str, Any]) -> list[str]:
    """The comparison for the terminal."""
    a, b = doc["a"], doc["b"]
    out = [f"A: {a['path']} ({a['harness'] or 'unknown harness'}, {a['status']})",
           f"B: {b['path']} ({b['harness'] or 'unknown harness'}, {b['status']})"]
    for scale, s in doc["scores"].items():
        out.append(f"{SCALE_TITLES[scale]}: {_num(s['a'])} -> {_num(s['b'])}"
                   + (f" ({_signed(s['delta'])})" if s["delta"] is not None else ""))
    for c in doc["criteria"]:
        if c["delta"]:
            out.append(f"  {_named(c)}: {_num(c['a']['score'])} -> "
                       f"{_num(c['b']['score'])}/{c['max']} ({_signed(c['delta'])})")
    f = doc["findings"]
    for item in f["appeared"]:
        out.append(f"+ finding {_named(item)} {item['score']}/{item['max']}: "
                   f"{item['message']}")
    for item in f["disappeared"]:
        out.append(f"- finding {_named(item)} (was {item['score']}/{item['max']})")
    for item in f["changed"]:
        out.append(f"~ finding {_named(item)}: {item['a']['score']} -> "
                   f"{item['b']['score']}/{item['b']['max']}: {item['b']['message']}")
    for key, label in RUN_FIGURES:
        r = doc["runs"][key]
        if r["a"] is None and r["b"] is None:
            continue
        out.append(f"{label}: {_num(r['a'])} -> {_num(r['b'])}"
                   + (f" ({_signed(r['delta'])})" if r["delta"] is not None else ""))
    d = doc["divergence"]
    if d is None:
        out.append("The runs take the same actions throughout." if a["status"] == b["status"]
                   == "ok" else "No divergence: a session has no turns.")
    else:
        out.append(f"First divergence after {d['same_before']} matching turn(s): "
                   f"A turn {_num(d['a']['turn'])}: {d['a']['did'] or 'the run has ended'}; "
                   f"B turn {_num(d['b']['turn'])}: {d['b']['did'] or 'the run has ended'}")
    return out


COMPARE_CSS = """
.up { color: #14532d; font-weight: 700; }
.down { color: #b3261e; font-weight: 700; }
.same { color: var(--muted); }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: .75rem; }
@media (max-width: 40rem) { .pair { grid-template-columns: 1fr; } }
"""


def _tone(delta: Any, better_up: bool = True) -> str:
    if not delta:
        return "same"
    return "up" if (delta > 0) == better_up else "down"


def render(doc: Mapping[str, Any]) -> str:
    """compare.html: the report's CSP and style, no script, every string escaped."""
    from dominate import tags as h

    from .render import CSS, page

    doc_html = page("Skill Doctor Comparison", CSS + COMPARE_CSS)
    a, b = doc["a"], doc["b"]
    with doc_html:
        with h.header(cls="wrap"):
            h.h1("Skill Doctor Comparison")
            for label, s in (("A", a), ("B", b)):
                with h.p(cls="meta"):
                    h.strong(f"{label}: ")
                    h.code(s["path"])
                    h.span(f" · {s['harness'] or 'unknown harness'} · {s['id'] or ''}"
                           f" · {s['status']}")
        with h.main(cls="wrap", id="main"):
            with h.section(aria_labelledby="scores"):
                h.h2("Scores", id="scores")
                _delta_table(["Scale", "A", "B", "Change"],
                             [(SCALE_TITLES[k], v["a"], v["b"], v["delta"], True)
                              for k, v in doc["scores"].items()], h)
                _delta_table(["Criterion", "A", "B", "Change"],
                             [(f"{_named(c)}, out of {c['max']}", c["a"]["score"],
                               c["b"]["score"], c["delta"], True) for c in doc["criteria"]], h)
            with h.section(aria_labelledby="findings"):
                h.h2("Findings", id="findings")
                f = doc["findings"]
                if not (f["appeared"] or f["disappeared"] or f["changed"]):
                    h.p("The same findings in both runs.", cls="none")
                for title, items in (("Appeared in B", f["appeared"]),
                                     ("Gone in B", f["disappeared"])):
                    if items:
                        h.h3(title)
                        with h.ul():
                            for item in items:
                                h.li(f"{_named(item)} {item['score']}/{item['max']}:"
                                     f" {item['message']}")
                if f["changed"]:
                    h.h3("Changed")
                    with h.ul():
                        for item in f["changed"]:
                            h.li(f"{_named(item)}: {item['a']['score']} → "
                                 f"{item['b']['score']}/{item['b']['max']}. A: "
                                 f"{item['a']['message']} B: {item['b']['message']}")
            with h.section(aria_labelledby="runs"):
                h.h2("The two runs", id="runs")
                _delta_table(["Figure", "A", "B", "Change"],
                             [(label, doc["runs"][key]["a"], doc["runs"][key]["b"],
                               doc["runs"][key]["delta"], False) for key, label in RUN_FIGURES],
                             h)
            with h.section(aria_labelledby="divergence"):
                h.h2("Where the runs diverge", id="divergence")
                d = doc["divergence"]
                if d is None:
                    h.p("The runs take the same actions throughout, or a session has no turns.",
                        cls="none")
                else:
                    h.p(f"The first {d['same_before']} turn(s) match (tool calls by kind, tool "
                        "and target; user turns by text; injected turns left out).")
                    with h.div(cls="pair"):
                        for label, s in (("A", d["a"]), ("B", d["b"])):
                            with h.div(cls="card"):
                                h.h3(f"{label}: turn {_num(s['turn'])}"
                                     if s["turn"] else f"{label}: the run has ended")
                                if s["did"]:
                                    h.p(h.code(s["did"]))
        h.footer(f"Generated by skill-doctor {doc['generator']['version']} at "
                 f"{doc['generator']['generated_at']}. compare.json holds the same data "
                 f"({SCHEMA}).", cls="wrap")
    return doc_html.render(pretty=True) + "\n"


def _delta_table(headers: Sequence[str], rows: Sequence[tuple], h) -> None:
    """A table of A, B and the change; on a phone, a card per row (the name, then A, B and
    the change, each labelled)."""
    with h.div(cls="scroll fits"):
        with h.table(cls="cards"):
            with h.thead():
                with h.tr():
                    for i, title in enumerate(headers):
                        h.th(title, scope="col", cls="num" if i else "")
            with h.tbody():
                for name, x, y, delta, better_up in rows:
                    with h.tr():
                        h.td(name, cls="lead wide o1")
                        h.td(_num(x), cls="num o2", data_label=headers[1])
                        h.td(_num(y), cls="num o3", data_label=headers[2])
                        # Score up is better; a run's size (turns, tokens, cost) down is.
                        h.td(_signed(delta) or "—", cls=f"num o4 {_tone(delta, better_up)}",
                             data_label=headers[3])
