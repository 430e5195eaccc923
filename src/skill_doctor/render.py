"""render: the report as one self-contained HTML page, built with dominate.

The page is a view of a `Report` (and its `Overview`): it computes nothing. CSS is embedded;
there is no JavaScript, no external font, image or URL, and a Content-Security-Policy meta tag
forbids every load. All transcript text goes through dominate's escaping (never
`dominate.util.raw`).

The contract's sections come first and keep its wording: the "Skill Doctor Report" header with
the session id and timestamp, the score summary with two bars out of 10, the findings, and the
ranked suggestions. After them, for a graded session: the setup in play, a timeline of turns,
the files table, each edited file's net diff and an appendix of every cited turn, which each
evidence citation links to (`#turn-14`). The page stays bounded whatever the session's length
(see overview.py): dominate costs about 0.1 ms per element, so element counts are what matter.
"""

from __future__ import annotations

from .overview import KIND_LABELS, Cell, CitedTurn, FileDiff, Overview, SetupItem
from .report import Report, display_path
from .scoring import CriterionScore, ScaleScore

CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; font-src 'none'; "
       "connect-src 'none'; script-src 'none'; object-src 'none'; frame-src 'none'; "
       "base-uri 'none'; form-action 'none'")

SCALE_TITLES = {"efficiency": "Efficiency", "code_quality": "Code quality"}
FOLD_DIFF_LINES = 40  # longer diffs start folded

# The CSS holds no "<", ">" or "&": dominate escapes a style element's text like any other.
# Colours: text at least 4.5:1 on its background, graphics at least 3:1 on white (WCAG AA).
CSS = """
:root { color-scheme: light; --ink: #1a1a1a; --muted: #4a4a4a; --line: #d6d6d6; --link: #1d4ed8;
  --user: #1d4ed8; --assistant: #6b7280; --read: #0f766e; --edit: #7c3aed; --shell: #b45309;
  --other: #be185d; --failed: #dc2626; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: #fff; color: var(--ink); font: 16px/1.55 system-ui, -apple-system,
  "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
.wrap { max-width: 62rem; margin: 0 auto; padding: 0 1.25rem; }
header.wrap { padding-top: 2rem; }
main.wrap { padding-bottom: 2rem; }
a { color: var(--link); }
a:focus-visible { outline: 3px solid #111; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem; }
.skip:focus { left: .5rem; }
h1 { font-size: 2rem; margin: 0 0 .25rem; }
h2 { font-size: 1.4rem; margin: 2.5rem 0 1rem; padding-bottom: .3rem; border-bottom: 2px solid #e3e3e3; }
h3 { font-size: 1.1rem; margin: 0 0 .5rem; }
h4 { font-size: 1rem; margin: .75rem 0 .25rem; }
.meta { color: var(--muted); margin: 0; }
code { font: .9em/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.meta code, td code, dd code { word-break: break-all; }
.status { padding: .9rem 1rem; border-left: 4px solid #8a5a00; background: #fff8e6; margin: 1.5rem 0; }
dl.strip { display: grid; grid-template-columns: repeat(auto-fill, minmax(13.5rem, 1fr)); gap: .5rem;
  margin: 1.25rem 0 0; }
dl.strip div { border: 1px solid var(--line); border-radius: .35rem; padding: .45rem .65rem; }
dl.strip dt { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
dl.strip dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
dl.strip dd .sub { font-weight: 400; color: var(--muted); }
nav.toc { margin: 1rem 0 0; }
nav.toc ul { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
.scale { display: grid; grid-template-columns: 9rem 1fr 5.5rem; gap: .75rem; align-items: center; margin: .6rem 0; }
.scale .name { font-weight: 600; }
.bar { height: 1.25rem; background: #ececec; border-radius: .25rem; overflow: hidden; display: flex; }
.bar span { display: block; height: 100%; background: #1f6f43; border-right: 2px solid #fff; }
.bar span:nth-child(even) { background: #2f8a57; }
.bar.mid span { background: #8a5a00; }
.bar.mid span:nth-child(even) { background: #a86e00; }
.bar.low span { background: #b3261e; }
.bar.low span:nth-child(even) { background: #c9443b; }
.value { font-weight: 700; text-align: right; font-variant-numeric: tabular-nums; }
.na { color: var(--muted); }
.reason { color: var(--muted); margin: -.3rem 0 .5rem; font-size: .95rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: .95rem; }
caption { text-align: left; color: var(--muted); font-size: .9rem; padding-bottom: .25rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { background: #f6f6f6; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tfoot td { font-weight: 700; border-bottom: 0; }
.pips { white-space: nowrap; margin-right: .35rem; }
.pips span { display: inline-block; width: .7rem; height: .7rem; border-radius: 50%;
  border: 2px solid #1f6f43; margin-right: 2px; vertical-align: -1px; }
.pips span.on { background: #1f6f43; }
.card { border: 1px solid var(--line); border-radius: .4rem; padding: 1rem 1.1rem; margin: 1rem 0; }
.card .score { font-weight: 700; }
.rule { color: var(--muted); font-size: .9rem; }
blockquote { margin: .75rem 0; padding: .5rem .9rem; border-left: 4px solid #6b8bab; background: #f4f7fa; }
blockquote p { margin: .35rem 0; overflow-wrap: anywhere; }
.turn { font-weight: 700; }
.excerpt { color: #333; }
.suggestion { margin: .5rem 0 0; }
ol.suggestions li { margin: .5rem 0; }
.impact { font-weight: 600; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: .75rem;
  border-radius: .25rem; font: .85rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.setup th { width: 12rem; background: none; }
.none { color: var(--muted); }
.tl { display: flex; flex-wrap: wrap; gap: 7px 2px; padding: 6px 0 2px; margin: .5rem 0; }
.tl .c { display: block; width: 12px; height: 24px; border-radius: 2px; background: var(--assistant); }
.k-user { background: var(--user) !important; }
.k-assistant { background: var(--assistant) !important; }
.k-read { background: var(--read) !important; }
.k-edit { background: var(--edit) !important; }
.k-shell { background: var(--shell) !important; }
.k-other { background: var(--other) !important; }
.k-failed { background: repeating-linear-gradient(45deg, var(--failed) 0 3px, #7f1d1d 3px 5px) !important; }
.k-injected { background: #fff !important; box-shadow: inset 0 0 0 2px var(--assistant); }
.tl .cited { box-shadow: 0 -6px 0 -1px #111; }
.tl .k-injected.cited { box-shadow: inset 0 0 0 2px var(--assistant), 0 -6px 0 -1px #111; }
ul.legend { list-style: none; padding: 0; margin: .5rem 0; display: flex; flex-wrap: wrap; gap: .3rem 1.1rem; font-size: .9rem; }
ul.legend .sw { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; margin-right: .35rem; vertical-align: -1px; }
ul.legend .sw.marker { background: #111; height: .3rem; vertical-align: .2rem; }
tr.flagged td:first-child { border-left: 4px solid var(--failed); }
.add { color: #14532d; }
.del { color: #7f1d1d; }
pre.diff { padding: .5rem 0; }
pre.diff span { display: block; padding: 0 .75rem; }
pre.diff .d-add { background: #e3f4e8; color: #14532d; }
pre.diff .d-del { background: #fbe9e7; color: #7f1d1d; }
pre.diff .d-hunk { background: #eef0fb; color: #3730a3; }
pre.diff .d-note, pre.diff .d-ctx { color: #333; }
details { border: 1px solid var(--line); border-radius: .35rem; margin: .6rem 0; }
details summary { cursor: pointer; padding: .45rem .7rem; overflow-wrap: anywhere; }
details pre.diff { margin: 0; border-radius: 0 0 .35rem .35rem; }
.cut { color: var(--muted); font-size: .9rem; padding: 0 .7rem .5rem; margin: 0; }
article.entry { border-top: 1px solid var(--line); padding: .75rem 0; }
article.entry:target, article.card:target { outline: 3px solid var(--link); outline-offset: 4px; }
.badge { display: inline-block; font-size: .8rem; font-weight: 600; padding: 0 .4rem; border-radius: .25rem;
  border: 1px solid currentColor; margin-left: .35rem; }
.badge.failed { color: #b91c1c; }
footer.wrap { margin: 1rem auto 3rem; color: #555; font-size: .85rem; }
@media (max-width: 40rem) {
  .wrap { padding: 0 .85rem; }
  h1 { font-size: 1.6rem; }
  .scale { grid-template-columns: 1fr auto; }
  .scale .bar { grid-column: 1 / 3; grid-row: 2; }
  table { font-size: .85rem; }
  th, td { padding: .3rem .3rem; }
  .setup th { width: 7rem; }
  dl.strip { grid-template-columns: 1fr 1fr; }
  dl.strip div.wide { grid-column: 1 / 3; }
}
@media print {
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { font-size: 11pt; }
  .wrap { max-width: none; padding: 0; }
  nav.toc, .skip { display: none; }
  a { color: inherit; text-decoration: none; }
  h2 { break-after: avoid; }
  .card, article.entry, details, tr { break-inside: avoid; }
  pre { white-space: pre-wrap; }
}
"""


def _fmt(value: float | None) -> str:
    if value is None:
        return "N/A"
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _value(value: float) -> str:
    """A measured value as the rubric compares it: up to two decimals, no trailing zeros."""
    return f"{float(value):.2f}".rstrip("0").rstrip(".")


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def page(title: str, css: str):
    """A dominate document with the head every skill-doctor page has: UTF-8, the CSP that
    forbids every load, a viewport for small screens, no referrer, and the embedded CSS."""
    import dominate
    from dominate import tags as h

    doc = dominate.document(title=title)
    doc["lang"] = "en"
    with doc.head:
        h.meta(charset="utf-8")
        h.meta(http_equiv="Content-Security-Policy", content=CSP)
        h.meta(name="viewport", content="width=device-width, initial-scale=1")
        h.meta(name="referrer", content="no-referrer")
        h.style(css)
    return doc


def render(report: Report) -> str:
    """The whole page as a string (deterministic for the same report)."""
    from dominate import tags as h

    doc = page(f"Skill Doctor Report — {report.session_id}", CSS)
    ov = report.overview
    with doc:
        h.a("Skip to the report", href="#main", cls="skip")
        _header(report, ov, h)
        with h.main(id="main", cls="wrap"):
            if report.status in ("no_history", "too_short"):
                h.p(report.message or "", cls="status", role="status")
            else:
                if report.message:
                    h.p(report.message, cls="status", role="status")
                _scores(report, h)
                if report.status == "parse_error" and report.transcript is not None:
                    _parse_problem(report, h)
                _findings(report, h)
                _suggestions(report, h)
                if ov is not None:
                    _setup(ov, h)
                    _timeline(report, ov, h)
                    _files(ov, h)
                    _diffs(ov, h)
                    _appendix(report, ov, h)
        h.footer(f"Generated by skill-doctor at {report.generated_at}. Deterministic: "
                 "the same session and rubric give the same report.", cls="wrap")
    # The output boundary: every text and attribute of the page redacted (unless switched
    # off) as one text, so nothing a view forgot leaks; hidden characters shown, never obeyed.
    from .redact import scrub_page
    return scrub_page(doc, report.redacted) + "\n"


# The contract's sections ---------------------------------------------------------------------

def _header(report: Report, ov: Overview | None, h) -> None:
    with h.header(cls="wrap"):
        h.h1("Skill Doctor Report")
        t = report.transcript
        with h.p(cls="meta"):
            h.span("Session ")
            h.code(report.session_id)
            if t is not None:
                h.span(f" · {t.harness}")
                when = t.started_at or "time not recorded"
                h.span(" · started ")
                h._time(when, datetime=t.started_at) if t.started_at else h.span(when)
        if t is not None:
            with h.p(cls="meta"):
                h.span("Source ")
                h.code(display_path(t.source, report.redacted))
                h.span(f" · {len(t.turns)} turns")
        if ov is not None:
            _strip(ov, h)
            with h.nav(cls="toc", aria_label="Sections of this report"):
                with h.ul():
                    for anchor, label in (("score-summary", "Score summary"),
                                          ("findings", "Findings"),
                                          ("suggestions", "Suggestions"),
                                          ("setup", "Setup in play"), ("timeline", "Timeline"),
                                          ("files", "Files"), ("changes", "Changes"),
                                          ("cited-turns", "Cited turns")):
                        h.li(h.a(label, href=f"#{anchor}"))


def _duration(seconds: int | None) -> str:
    if seconds is None:
        return "not recorded"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{secs} s"


def _strip(ov: Overview, h) -> None:
    s = ov.strip
    outcome = {True: "passed", False: "failed", None: "outcome unknown"}

    def item(label: str, value: str, sub: str = "", code: bool = False) -> None:
        with h.div(cls="wide" if label in ("Project", "Checks run", "Model") else None):
            h.dt(label)
            with h.dd(__pretty=False):
                h.code(value) if code else h.span(value)
                if sub:
                    h.span(f" {sub}", cls="sub")

    with h.dl(cls="strip", aria_label="The session at a glance"):
        item("Harness", s.harness, f"v{s.version}" if s.version else "")
        item("Model", s.model or "not recorded")
        item("Project", s.project or "not recorded", f"branch {s.branch}" if s.branch else "",
             code=bool(s.project))
        item("Duration", _duration(s.duration_seconds))
        item("Turns", str(s.turns), f"{s.user_turns} user · {s.assistant_turns} assistant")
        item("Tool calls", str(s.tool_calls), f"{s.failed_calls} failed" if s.failed_calls else "")
        item("Files", f"{s.files_read} read · {s.files_edited} edited")
        if s.checks:
            item("Checks run", str(s.checks),
                 f"last {outcome[s.last_check_passed]} (turn {s.last_check_turn}: "
                 f"{s.last_check_command})")
        else:
            item("Checks run", "0", "no test, build or lint command")


def _scores(report: Report, h) -> None:
    with h.section(aria_labelledby="score-summary"):
        h.h2("Score summary", id="score-summary")
        linked = {f.criterion for f in report.findings}
        for scale in report.scores.scales():
            _bar(scale, linked, h)


def _bar(scale: ScaleScore, linked: set[str], h) -> None:
    title = SCALE_TITLES[scale.name]
    scored = [r for r in scale.criteria if r.points is not None]
    with h.div(cls="scale"):
        h.span(title, cls="name", id=f"scale-{scale.name}")
        if scale.score is None:
            h.span("N/A", cls="na")
            h.span("N/A", cls="value")
        else:
            level = "" if scale.score >= 7 else (" mid" if scale.score >= 4 else " low")
            active_max = sum(r.criterion.max for r in scored) or 10
            # One segment per criterion, so the bar itself shows where the points came from.
            with h.div(cls="bar" + level, role="img",
                       aria_label=f"{title}: {_fmt(scale.score)} out of 10"):
                for r in scored:
                    if r.points:
                        h.span(style=f"width: {r.points * 100 / active_max:.2f}%",
                               title=f"{r.criterion.category}: {r.points} / {r.criterion.max}")
            h.span(f"{_fmt(scale.score)} / 10", cls="value")
    if scale.reason:
        h.p(scale.reason, cls="reason")
    with h.div(cls="scroll"):
        with h.table(cls="arith"):
            h.caption(f"How the {title.lower()} score was reached: each criterion's measured "
                      "value falls in a band of the rubric, and the band gives the points.")
            with h.thead():
                with h.tr():
                    h.th("Criterion", scope="col")
                    h.th("Measured", scope="col")
                    h.th("Band (why)", scope="col")
                    h.th("Points", scope="col", cls="num")
            with h.tbody():
                for result in scale.criteria:
                    _criterion_row(result, linked, h)
            if scored and scale.score is not None:
                total = sum(r.points for r in scored)
                active_max = sum(r.criterion.max for r in scored)
                with h.tfoot():
                    with h.tr():
                        h.td("Total")
                        h.td(" + ".join(str(r.points) for r in scored) + f" = {total}",
                             colspan=2)
                        h.td(f"{total} / {active_max}" + (
                            "" if active_max == 10 else f" → {_fmt(scale.score)} / 10"),
                            cls="num")


def _criterion_row(result: CriterionScore, linked: set[str], h) -> None:
    c = result.criterion
    with h.tr():
        with h.td(__pretty=False):
            if c.key in linked:
                h.a(c.category, href=f"#finding-{c.key}")
            else:
                h.span(c.category)
            h.span(f" {c.rule_id}", cls="rule")
        m = result.measurement
        if m is None:
            h.td(result.reason or "", colspan=2)
            h.td("N/A", cls="num")
            return
        h.td(f"{m.summary} (value {_value(m.value)})")
        band = result.band
        h.td(f"{band.describe()}" + (f": {band.label}" if band and band.label else "")
             if band else "")
        with h.td(cls="num", __pretty=False):
            with h.span(cls="pips", aria_hidden="true"):
                for i in range(c.max):
                    h.span(cls="on" if i < (result.points or 0) else "off")
            h.span(f"{result.points} / {c.max}")


def _parse_problem(report: Report, h) -> None:
    t = report.transcript
    with h.section(aria_labelledby="parsing"):
        h.h2("Parsing error", id="parsing")
        if t.problem is not None:
            where = f"line {t.problem.line}, column {t.problem.column}: " if t.problem.line else ""
            h.p(where + t.problem.message)
            if t.problem.context:
                from .redact import redact
                h.pre(redact(t.problem.context) if report.redacted else t.problem.context)
        if t.turns:
            from .findings import turn_excerpt
            h.h3(f"Turns decoded before parsing stopped ({len(t.turns)})")
            with h.ol():
                for turn in t.turns[:200]:
                    h.li(f"{turn.role.value}: {turn_excerpt(turn, 160, redact_secrets=report.redacted)}")


def _findings(report: Report, h) -> None:
    with h.section(aria_labelledby="findings"):
        h.h2("Findings", id="findings")
        if not report.findings:
            h.p("No findings: every scored criterion is at its maximum."
                if report.status == "ok" else "No findings: nothing could be scored.")
            return
        linked = report.overview is not None
        for f in report.findings:
            with h.article(cls="card", id=f"finding-{f.criterion}"):
                h.h3(f.category)
                with h.p():
                    h.span(f"Score {f.score} / {f.max}", cls="score")
                    h.span(f" · {f.message}")
                h.p(f"{f.rule_id} {f.rule_name} · recovers up to {f.impact} "
                    f"point{'s' if f.impact != 1 else ''}", cls="rule")
                with h.blockquote():
                    for e in f.evidence:
                        with h.p():
                            if linked:
                                h.a(f"Turn {e.turn}", href=f"#turn-{e.turn}", cls="turn")
                            else:
                                h.span(f"Turn {e.turn}", cls="turn")
                            h.span(f" — {e.note}")
                            h.br()
                            h.span(e.excerpt, cls="excerpt")
                    if f.more_evidence:
                        h.p(f"… and {f.more_evidence} more (see report.json)")
                with h.p(cls="suggestion"):
                    h.strong("Suggestion: ")
                    h.span(f.suggestion)


def _suggestions(report: Report, h) -> None:
    with h.section(aria_labelledby="suggestions"):
        h.h2("Suggestions", id="suggestions")
        if not report.suggestions:
            h.p("No suggestions: every scored criterion is at its maximum."
                if report.status == "ok" else "No suggestions.")
            return
        with h.ol(cls="suggestions"):
            for s in report.suggestions:
                with h.li():
                    h.span(f"+{s.impact} point{'s' if s.impact != 1 else ''} ", cls="impact")
                    h.span(f"({s.rule_id}, {s.criterion}): ")
                    h.span(s.text)


# Beyond the contract: the session in detail ---------------------------------------------------

def _setup(ov: Overview, h) -> None:
    with h.section(aria_labelledby="setup"):
        h.h2("Setup in play", id="setup")
        h.p("What the session used of your setup: this is what the suggestions above would "
            "change.", cls="meta")
        with h.div(cls="scroll"):
            with h.table(cls="setup"):
                with h.tbody():
                    for _, label, items in ov.setup.rows():
                        with h.tr():
                            h.th(label, scope="row")
                            with h.td(__pretty=False):
                                if not items:
                                    h.span("none seen", cls="none")
                                for i, item in enumerate(items):
                                    if i:
                                        h.span(", ")
                                    _setup_item(item, h)


def _setup_item(item: SetupItem, h) -> None:
    h.code(item.name)
    bits = [f"×{item.count}"] if item.count > 1 else []
    bits.append(f"turn {item.first_turn}" if item.count == 1 else f"first at turn {item.first_turn}")
    if item.detail:
        bits.append(item.detail)
    h.span(f" ({'; '.join(bits)})", cls="meta")


def _timeline(report: Report, ov: Overview, h) -> None:
    tl = ov.timeline
    with h.section(aria_labelledby="timeline"):
        h.h2("Timeline", id="timeline")
        total = sum(n for _, n in tl.counts)
        per = ("Each cell is one turn" if tl.bucket == 1 else
               f"Each cell is {tl.bucket} consecutive turns, coloured by their commonest kind "
               "(failed if any call failed)")
        h.p(f"{_plural(total, 'turn')} in order, left to right. {per}; a black mark above a "
            "cell means a finding cites it, and marked cells link to the cited turn.",
            cls="meta")
        with h.ul(cls="legend"):
            for kind, n in tl.counts:
                with h.li(__pretty=False):
                    h.span(cls=f"sw k-{kind}", aria_hidden="true")
                    h.span(f"{KIND_LABELS[kind]}: {n}")
            with h.li(__pretty=False):
                h.span(cls="sw marker", aria_hidden="true")
                h.span("cited by a finding")
        with h.div(cls="tl"):
            for cell in tl.cells:
                _cell(cell, h)
        cited = [(f, [e.turn for e in f.evidence]) for f in report.findings if f.evidence]
        if cited:
            h.h3("Turns each finding cites")
            with h.ul():
                for f, turns in cited:
                    with h.li(__pretty=False):
                        h.a(f"{f.rule_id} {f.category}", href=f"#finding-{f.criterion}")
                        h.span(": ")
                        for i, turn in enumerate(sorted(set(turns))):
                            if i:
                                h.span(", ")
                            h.a(f"turn {turn}", href=f"#turn-{turn}")


def _cell(cell: Cell, h) -> None:
    span = f"turn {cell.start}" if cell.start == cell.end else f"turns {cell.start}–{cell.end}"
    what = (KIND_LABELS[cell.kind] if cell.start == cell.end else
            ", ".join(f"{n} {KIND_LABELS[k]}" for k, n in cell.counts))
    label = f"{span}: {what}" + (f"; cited by {', '.join(cell.cited)}" if cell.cited else "")
    cls = f"c k-{cell.kind}" + (" cited" if cell.cited else "")
    if cell.link is not None:
        h.a(href=f"#turn-{cell.link}", cls=cls, title=label, aria_label=label)
    else:
        h.span(cls=cls, title=label)


def _files(ov: Overview, h) -> None:
    with h.section(aria_labelledby="files"):
        h.h2("Files", id="files")
        if not ov.files:
            h.p("No file was read or edited.", cls="none")
            return
        with h.div(cls="scroll"):
            with h.table(cls="files"):
                h.caption("Files the session read or edited; files a finding cites come first, "
                          "with the finding that flags them. Lines are summed over the edits; "
                          "the net change of each file is under Changes.")
                with h.thead():
                    with h.tr():
                        h.th("File", scope="col")
                        h.th("Read", scope="col", cls="num")
                        h.th("Edited", scope="col", cls="num")
                        h.th("Lines + / −", scope="col", cls="num")
                        h.th("Flagged by", scope="col")
                with h.tbody():
                    for row in ov.files:
                        with h.tr(cls="flagged" if row.flagged_by else None):
                            h.td(h.code(row.path))
                            h.td(str(row.reads) if row.reads else "–", cls="num")
                            edited = str(row.edits) if row.edits else "–"
                            if row.shell_written:
                                edited += " (shell)"
                            if row.failed_edits:
                                edited += f" ({row.failed_edits} failed)"
                            h.td(edited, cls="num")
                            with h.td(cls="num", __pretty=False):
                                if row.edits:
                                    h.span(f"+{row.added}", cls="add")
                                    h.span(" / ")
                                    h.span(f"−{row.removed}", cls="del")
                                else:
                                    h.span("–")
                            with h.td(__pretty=False):
                                for i, (rule_id, criterion, category) in enumerate(row.flagged_by):
                                    if i:
                                        h.br()
                                    h.a(f"{rule_id} {category}", href=f"#finding-{criterion}")
        if ov.more_files:
            h.p(f"… and {_plural(ov.more_files, 'more file')} (see report.json).", cls="none")


def _diffs(ov: Overview, h) -> None:
    with h.section(aria_labelledby="changes"):
        h.h2("Changes", id="changes")
        if not ov.diffs:
            h.p("No file was edited with a known diff.", cls="none")
            return
        h.p("Each edited file's net change, from its state before the first edit to after the "
            "last; where the log shows only the edited snippets, the edits' diffs in order.",
            cls="meta")
        for d in ov.diffs:
            _diff(d, h)
        if ov.more_diffs:
            h.p(f"… and {_plural(ov.more_diffs, 'more edited file')} not shown.", cls="none")


def _diff(d: FileDiff, h) -> None:
    shown = len(d.lines)
    attrs = {"open": True} if shown <= FOLD_DIFF_LINES else {}
    turns = ", ".join(str(t) for t in d.turns)
    with h.details(**attrs):
        with h.summary(__pretty=False):
            h.code(d.path)
            h.span(" ")
            h.span(f"+{d.added}", cls="add")
            h.span(" / ")
            h.span(f"−{d.removed}", cls="del")
            h.span(f" · {'net diff' if d.net else 'diffs of each edit'} · "
                   f"{'turn' if len(d.turns) == 1 else 'turns'} {turns}", cls="meta")
        with h.pre(cls="diff"):
            # Consecutive lines of one kind share an element: a long diff stays cheap.
            run: list[str] = []
            tag = None
            for line in d.lines:
                if line.tag != tag and run:
                    h.span("\n".join(run), cls=f"d-{tag}")
                    run = []
                tag = line.tag
                run.append(line.text)
            if run:
                h.span("\n".join(run), cls=f"d-{tag}")
        if d.hidden_lines:
            h.p(f"… {_plural(d.hidden_lines, 'more diff line')} not shown.", cls="cut")


def _appendix(report: Report, ov: Overview, h) -> None:
    with h.section(aria_labelledby="cited-turns"):
        h.h2("Cited turns", id="cited-turns")
        if not ov.appendix:
            h.p("No finding cites a turn.", cls="none")
            return
        h.p("Every turn a finding cites, so each claim can be checked without the session "
            "file. Excerpts are cut to a bounded size" +
            (" and secrets are redacted." if report.redacted else "; redaction is off."),
            cls="meta")
        for turn in ov.appendix:
            _entry(turn, h)


def _entry(turn: CitedTurn, h) -> None:
    with h.article(cls="entry", id=f"turn-{turn.index}"):
        with h.h3(__pretty=False):
            h.span(f"Turn {turn.index} · {turn.role}")
            if turn.tool:
                h.span(" · ")
                h.code(turn.tool)
                h.span(f" ({KIND_LABELS[turn.kind]})")
            elif turn.meta:
                h.span(f" ({turn.meta})")
            if turn.is_error:
                h.span("failed" + (f", exit {turn.exit_code}" if turn.exit_code not in (None, 0)
                                   else ""), cls="badge failed")
        with h.p(cls="meta", __pretty=False):
            h.span("Cited by ")
            for i, (rule_id, criterion, category) in enumerate(turn.cited_by):
                if i:
                    h.span(", ")
                h.a(f"{rule_id} {category}", href=f"#finding-{criterion}")
            where = [f"source line {turn.line}"] if turn.line else []
            if turn.timestamp:
                where.append(turn.timestamp)
            if where:
                h.span(" · " + " · ".join(where))
        if turn.role == "tool":
            h.h4("Input")
            h.pre(turn.input_text or "(none)")
            h.h4("Output" + (f" ({turn.output_length} characters)" if turn.output_length else ""))
            h.pre(turn.output_text or "(none)")
        else:
            h.h4("Text")
            h.pre(turn.input_text or "(empty)")
