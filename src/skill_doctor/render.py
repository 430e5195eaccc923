"""render: the report as one self-contained HTML page, built with dominate.

The page is a view of a `Report` (and its `Overview`): it computes nothing. CSS is embedded;
there is no JavaScript, no external font, image or URL, and a Content-Security-Policy meta tag
forbids every load. All transcript text goes through dominate's escaping; the one thing
embedded unescaped is the style sheet, a constant of this module (see `page`), because a
browser does not decode entities inside `<style>` and an escaped `"Segoe UI"` would drop the
whole `font` declaration.

The contract's sections come first and keep its wording: the "Skill Doctor Report" header with
the session id and timestamp, the score summary with two bars out of 10, the findings, and the
ranked suggestions. Under the header sits the verdict: both scores, pass or fail by the rule
`skill-doctor check` applies (`check.judge`), and the suggestion that recovers most points, in
one line a person can paste. After the contract's sections, for a graded session: what the
grade could not see (every decoder note, in words, with its turns), the session strip, the
setup in play, a timeline of turns, the files table, each edited file's net diff, how each
criterion is measured (the detector's own documentation, as `rubric explain` prints it) and an
appendix of every cited turn, which each evidence citation links to (`#turn-14`). The page stays bounded whatever the session's length
(see overview.py): dominate costs about 0.1 ms per element, so element counts are what matter.
"""

from __future__ import annotations

import gc
import re
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Sequence

from .overview import KIND_LABELS, Cell, CitedTurn, FileDiff, Gap, Overview, RequestRow, \
    SetupItem
from .report import Report, display_path
from .rubric import Band, Criterion
from .scoring import CriterionScore, ScaleScore

CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; font-src 'none'; "
       "connect-src 'none'; script-src 'none'; object-src 'none'; frame-src 'none'; "
       "base-uri 'none'; form-action 'none'")

SCALE_TITLES = {"efficiency": "Efficiency", "code_quality": "Code quality"}
FOLD_DIFF_LINES = 40  # longer diffs start folded

# On a phone a table whose columns do not fit becomes a list of cards: each row a block whose
# cells flow as lines, labelled by their column (`data-label`), in the order their `oN` class
# gives (the scores and the verdict before the names and paths). The header row stays in the
# page for screen readers. No word is broken to make a column fit: there are no columns.
# Shared by every page (report, batch index, compare).
CARDS_CSS = """
@media (max-width: 40rem) {
  .scroll.fits { overflow-x: visible; border: 0; }
  table.cards, table.cards > tbody, table.cards > tfoot { display: block; }
  table.cards > caption { display: block; }
  table.cards > thead { position: absolute; width: 1px; height: 1px; overflow: hidden;
    clip-path: inset(50%); white-space: nowrap; }
  table.cards tr { display: flex; flex-wrap: wrap; align-items: baseline; column-gap: .9rem;
    row-gap: .15rem; padding: .5rem .35rem; border-bottom: 1px solid #e3e3e3; }
  table.cards td { display: block; border: 0; padding: 0; text-align: left; white-space: normal; }
  table.cards td[data-label]::before { content: attr(data-label) ": "; color: var(--muted);
    font-weight: 400; }
  table.cards td.lead { flex: 1 1 auto; font-weight: 600; }
  table.cards td.wide { flex-basis: 100%; }
  table.cards .o1 { order: 1; } table.cards .o2 { order: 2; } table.cards .o3 { order: 3; }
  table.cards .o4 { order: 4; } table.cards .o5 { order: 5; } table.cards .o6 { order: 6; }
  table.cards .o7 { order: 7; } table.cards .o8 { order: 8; } table.cards .o9 { order: 9; }
}
"""

# Embedded as it is (see `page`): it must never hold "</", which would end the style element.
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
.na { color: var(--muted); grid-column: 2 / 4; }
.reason { color: var(--muted); margin: -.3rem 0 .5rem; font-size: .95rem; }
.own-rubric { padding: .6rem .85rem; border-left: 4px solid #8a5a00; background: #fff8e6; }
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
.verdict { margin: 1.25rem 0 0; padding: .8rem 1rem; border-left: 6px solid #8a5a00;
  background: #fff8e6; border-radius: 0 .35rem .35rem 0; }
.verdict.pass { border-left-color: #1f6f43; background: #f1f8f3; }
.verdict.fail { border-left-color: #b3261e; background: #fdf2f1; }
.verdict p { margin: 0; }
.verdict p + p { margin-top: .35rem; font-size: .95rem; }
.verdict .word { font-weight: 700; }
.verdict.pass .word { color: #1f6f43; }
.verdict.fail .word { color: #b3261e; }
.gap { border-left: 4px solid #8a5a00; padding: .35rem .9rem; margin: .75rem 0; }
.gap h3 { margin: 0 0 .2rem; }
.gap p { margin: .2rem 0; }
.gap.info { border-left-color: var(--line); }
.affects { display: block; font-size: .88rem; color: #7a4f00; margin-top: .2rem; }
.affects a { color: #7a4f00; }
.print-only { display: none; }
.explain { border-top: 1px solid var(--line); padding: .75rem 0; font-size: .95rem; }
.explain:target { outline: 3px solid var(--link); outline-offset: 4px; }
.explain dl { margin: .4rem 0; display: grid; grid-template-columns: 11rem 1fr; gap: .35rem 1rem; }
.explain dt { font-weight: 600; }
.explain dd { margin: 0; }
.explain ul.bands { margin: .25rem 0; padding-left: 1.2rem; }
a.how { font-size: .85rem; white-space: nowrap; }
@media (max-width: 40rem) {
  .wrap { padding: 0 .85rem; }
  h1 { font-size: 1.6rem; }
  .scale { grid-template-columns: 1fr auto; }
  .scale .bar, .scale .na { grid-column: 1 / 3; grid-row: 2; }
  table { font-size: .85rem; }
  th, td { padding: .3rem .3rem; }
  .setup th { width: 7rem; }
  dl.strip { grid-template-columns: 1fr 1fr; }
  dl.strip div.wide { grid-column: 1 / 3; }
  .explain dl { grid-template-columns: 1fr; gap: .1rem; }
  /* The section links wrap onto as many lines as they need; none runs off the edge. */
  nav.toc { font-size: .9rem; }
  nav.toc ul { gap: .2rem .9rem; }
  table.arith .pips { display: none; }
  table.arith td.rating { font-size: .85rem; color: var(--muted); }
  .explain dd { margin-bottom: .4rem; }
}
@media print {
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  @page { margin: 14mm 12mm; }
  body { font-size: 10pt; line-height: 1.4; }
  .wrap { max-width: none; padding: 0; }
  header.wrap { padding-top: 0; }
  nav.toc, .skip, a.how, section.explanations { display: none; }
  a { color: inherit; text-decoration: none; }
  h2 { margin-top: 1.4rem; }
  h2, h3, h4, caption, .scale, summary { break-after: avoid; }
  /* A table never leaves its header behind: the header repeats on every page it spans, and
     a table short enough to fit starts on the page that can hold it whole. */
  thead { display: table-header-group; }
  tfoot { display: table-footer-group; }
  tr, article.entry, .gap, .explain, .verdict, dl.strip div, .card blockquote p,
  .card > p { break-inside: avoid; }
  /* A finding card may span a page break (keeping it whole left half pages blank); its
     heading stays with its first lines. */
  .card h3 { break-after: avoid; }
  .scroll { overflow: visible; }
  table { font-size: 9pt; }
  /* Printed, the page folds to what a reader of paper needs, so a 200-turn session prints in
     a handful of pages: each cited turn keeps its head and the first lines of its input and
     output, the files table its first rows, the changes their one-line summaries. */
  article.entry pre { max-height: 2.9em; overflow: hidden; margin: .15rem 0; padding: .2rem .5rem; }
  article.entry h4 { display: none; }
  article.entry { padding: .35rem 0; }
  details pre.diff, details .cut { display: none; }
  details { border: 0; margin: .1rem 0; }
  details summary { padding: .1rem 0; list-style: none; }
  table.files tbody tr:nth-child(n+21) { display: none; }
  /* A finding keeps every citation, but on paper only the first three show their excerpt,
     each cut to two lines (the appendix holds the rest). */
  .card blockquote .excerpt { display: block; max-height: 2.8em; overflow: hidden; }
  .card blockquote p:nth-child(n+4) .excerpt, .card blockquote p:nth-child(n+4) br { display: none; }
  .print-only { display: block; }
  .screen-only, table.setup tr.empty { display: none; }
  .tl .c { width: 8px; height: 16px; }
  pre { white-space: pre-wrap; }
}
""" + CARDS_CSS


def _fmt(value: float | None) -> str:
    if value is None:
        return "N/A"
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _value(value: float) -> str:
    """A measured value as the rubric compares it: up to two decimals, no trailing zeros."""
    return f"{float(value):.2f}".rstrip("0").rstrip(".")


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


# The one part of a page that grows with the session (or the batch) is a table's rows: a
# page element costs about a kilobyte, and a long session's request table held tens of
# thousands. Such a table's body is rendered with a mark in place of its rows, and the rows are
# built and rendered this many at a time into it (rows_in_pieces).
ROWS_PER_PIECE = 100
REQUEST_ROWS_MARK = "SkillDoctorRequestRowsGoHere"  # letters only: no redaction pattern touches it


def page(title: str, css: str):
    """A dominate document with the head every skill-doctor page has: UTF-8, the CSP that
    forbids every load, a viewport for small screens, no referrer, and the embedded CSS.

    `css` is one of the style sheets defined in this package (never text from a session), so
    it is embedded unescaped: browsers do not decode `&quot;` inside `<style>`, and escaping
    would silently drop every declaration holding a quote. A sheet holding "</" could end the
    style element early, so it is refused.
    """
    import dominate
    from dominate import tags as h
    from dominate.util import raw

    if "</" in css or "<!--" in css:
        raise ValueError("a style sheet must not hold '</' or '<!--'")

    doc = dominate.document(title=title)
    doc["lang"] = "en"
    with doc.head:
        h.meta(charset="utf-8")
        h.meta(http_equiv="Content-Security-Policy", content=CSP)
        h.meta(name="viewport", content="width=device-width, initial-scale=1")
        h.meta(name="referrer", content="no-referrer")
        h.style(raw(css))
    return doc


def render(report: Report, thresholds: Mapping[str, float] | None = None, *,
           rows_per_piece: int | None = ROWS_PER_PIECE) -> str:
    """The whole page as a string (deterministic for the same report).

    `thresholds` are the minimum scores the verdict judges by; by default the rubric's
    (`report.thresholds`), as `check` without `--min-*` options would. The request table's
    rows are built `rows_per_piece` at a time (None: the whole page at once, as a reference).
    """
    return "".join(render_pieces(report, thresholds, rows_per_piece=rows_per_piece))


def render_pieces(report: Report, thresholds: Mapping[str, float] | None = None, *,
                  rows_per_piece: int | None = ROWS_PER_PIECE) -> Iterator[str]:
    """`render`'s page as consecutive pieces of text, for writing as they come (a long
    session's page is never held whole)."""
    from dominate import tags as h

    with _elements_collected():
        page_text = _page_text(report, thresholds, rows_per_piece is None)
    ov = report.overview
    if rows_per_piece is None or ov is None or not ov.requests:
        yield page_text
        return
    cited = _cited_turns(report)
    yield from rows_in_pieces(page_text, REQUEST_ROWS_MARK, ov.requests,
                              lambda row: _request_row(row, cited, h), report.redacted,
                              rows_per_piece)


def _page_text(report: Report, thresholds: Mapping[str, float] | None, rows: bool) -> str:
    """The page through the page boundary; without `rows`, the request table's body holds
    REQUEST_ROWS_MARK."""
    from dominate import tags as h

    doc = page(f"Skill Doctor Report — {report.session_id}", CSS)
    ov = report.overview
    graded = report.status not in ("no_history", "too_short")
    with doc:
        h.a("Skip to the report", href="#main", cls="skip")
        _header(report, ov, h, thresholds if thresholds is not None else report.thresholds)
        with h.main(id="main", cls="wrap"):
            if not graded:
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
                    _gaps(ov, h)
                    _requests(report, ov, h, rows=rows)
                    _session(ov, h, report.usage)
                    _setup(ov, h)
                    _timeline(report, ov, h)
                    _files(ov, h)
                    _diffs(ov, h)
                    _explanations(report, h)
                    _appendix(report, ov, h)
        h.footer(f"Generated by skill-doctor at {report.generated_at}. Deterministic: "
                 "the same session and rubric give the same report.", cls="wrap")
    # The output boundary: every text and attribute of the page redacted (unless switched
    # off) as one text, so nothing a view forgot leaks; hidden characters shown, never obeyed.
    from .redact import scrub_page
    return scrub_page(doc, report.redacted) + "\n"


# The contract's sections ---------------------------------------------------------------------

SECTIONS = (("score-summary", "Score summary"), ("findings", "Findings"),
            ("suggestions", "Suggestions"), ("gaps", "What this grade could not see"),
            ("requests", "Requests"), ("session", "Session"), ("setup", "Setup in play"), ("timeline", "Timeline"),
            ("files", "Files"), ("changes", "Changes"), ("how-measured", "How it is measured"),
            ("cited-turns", "Cited turns"))


def _header(report: Report, ov: Overview | None, h, thresholds: Mapping[str, float]) -> None:
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
            if t.part is not None:
                h.p(f"This file holds {t.part[1]} sessions one after another; this report "
                    f"grades session {t.part[0]}" + (" (the last)." if t.part[0] == t.part[1]
                                                     else "."), cls="meta")
        if report.status not in ("no_history", "too_short"):
            _verdict(report, ov, h, thresholds)
        if ov is not None:
            with h.nav(cls="toc", aria_label="Sections of this report"):
                with h.ul():
                    for anchor, label in SECTIONS:
                        h.li(h.a(label, href=f"#{anchor}"))


def verdict_line(report: Report, thresholds: Mapping[str, float]) -> tuple[bool, str, str]:
    """(passed, verdict word, the rest of the line): one line a person can paste into a chat.

    Pass or fail is `check.judge`'s decision for these thresholds, so the page and
    `skill-doctor check` never disagree.
    """
    from .check import judge

    result = judge(report.session_id, report, thresholds)
    parts = []
    for scale in report.scores.scales():
        title = SCALE_TITLES[scale.name].lower()
        parts.append(f"{title} {_fmt(scale.score)}" + ("" if scale.score is None else "/10"))
    if result.passed:
        minimum = ", ".join(f"{SCALE_TITLES[k].lower()} {_fmt(v)}" for k, v in thresholds.items())
        word, rest = "Passes", (f": {', '.join(parts)}, meeting the thresholds ({minimum})."
                                if minimum else f": {', '.join(parts)} (no thresholds set).")
    else:
        reasons = ["the file could not be parsed whole" if why == "parse error" else why
                   for why in result.failures]
        word, rest = "Needs work", f": {', '.join(parts)}; fails ({'; '.join(reasons)})."
    if report.suggestions:
        top = report.suggestions[0]
        category = next((f.category for f in report.findings if f.criterion == top.criterion),
                        top.criterion)
        rest += (f" {'Fix first' if not result.passed else 'Most points back'} "
                 f"(+{top.impact} {'point' if top.impact == 1 else 'points'}, {category} "
                 f"({top.rule_id})): {top.text}")
    elif report.status == "ok":
        rest += " Nothing to fix: every scored criterion is at its maximum."
    return result.passed, word, rest


def _verdict(report: Report, ov: Overview | None, h, thresholds: Mapping[str, float]) -> None:
    passed, word, rest = verdict_line(report, thresholds)
    with h.section(cls="verdict " + ("pass" if passed else "fail"), aria_label="Verdict"):
        with h.p(__pretty=False):  # one line of text when copied
            h.span(word, cls="word")
            h.span(rest)
        blind = [(i, g) for i, g in enumerate(ov.gaps if ov is not None else (), start=1)
                 if g.criteria]
        if blind:
            with h.p(__pretty=False):
                h.span("This grade could not see everything: ")
                for n, (i, gap) in enumerate(blind):
                    if n:
                        h.span(", ")
                    h.a(gap.title.lower(), href=f"#gap-{i}")
                h.span(".")


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


def _session(ov: Overview, h, usage=None) -> None:
    with h.section(aria_labelledby="session"):
        h.h2("Session", id="session")
        _strip(ov, h, usage)


def _strip(ov: Overview, h, usage=None) -> None:
    s = ov.strip
    outcome = {True: "passed", False: "failed", None: "outcome unknown"}

    def item(label: str, value: str, sub: str = "", code: bool = False) -> None:
        with h.div(cls="wide" if label in ("Project", "Checks run", "Model", "Tokens") else None):
            h.dt(label)
            with h.dd(__pretty=False):
                h.code(value) if code else h.span(value)
                if sub:
                    h.span(f" {sub}", cls="sub")

    with h.dl(cls="strip"):
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
        if usage is None:
            item("Tokens", "not logged by the harness")
        else:
            from .tokens import cost_line, describe
            total, _, detail = describe(usage).partition(": ")
            item("Tokens", total, f"{detail} · {cost_line(usage)}")


def _scores(report: Report, h) -> None:
    with h.section(aria_labelledby="score-summary"):
        h.h2("Score summary", id="score-summary")
        if report.rubric is not None:
            h.p(f"Graded with your own rubric, {report.rubric}, not the default one: the "
                "points and bands are yours, and what is measured of the default rubric's "
                "agreement with careful readers does not apply to these scores.",
                cls="own-rubric")
        linked = {f.criterion for f in report.findings}
        explained = report.overview is not None  # the explanations are on graded pages
        gaps = report.overview.gaps if report.overview is not None else ()
        for scale in report.scores.scales():
            _bar(scale, linked, h, explained, gaps)


def _bar(scale: ScaleScore, linked: set[str], h, explained: bool = False,
         gaps: tuple[Gap, ...] = ()) -> None:
    title = SCALE_TITLES[scale.name]
    scored = [r for r in scale.criteria if r.points is not None]
    with h.div(cls="scale"):
        h.span(title, cls="name", id=f"scale-{scale.name}")
        if scale.score is None:
            # "N/A" instead of a bar, the reason beside it (said once, in the bar's place).
            reason = scale.reason or "N/A"
            h.span(reason if reason.startswith("N/A") else f"N/A: {reason}", cls="na")
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
    if scale.reason and scale.score is not None:  # a rescaled score says why
        h.p(scale.reason, cls="reason")
    with h.div(cls="scroll fits"):
        with h.table(cls="arith cards"):
            h.caption(f"How the {title.lower()} score was reached: what each criterion "
                      "found in this session, the rating the rubric gives it, and its points." +
                      (" Each rule id links to how the criterion is measured." if explained
                       else ""))
            with h.thead():
                with h.tr():
                    h.th("Criterion", scope="col")
                    h.th("What was measured", scope="col")
                    h.th("Rating", scope="col")
                    h.th("Points", scope="col", cls="num")
            with h.tbody():
                for result in scale.criteria:
                    _criterion_row(result, linked, h, explained, gaps)
            if scored and scale.score is not None:
                total = sum(r.points for r in scored)
                active_max = sum(r.criterion.max for r in scored)
                with h.tfoot():
                    with h.tr():
                        h.td("Total", cls="lead o1")
                        h.td(" + ".join(str(r.points) for r in scored) + f" = {total}",
                             colspan=2, cls="wide o3")
                        h.td(f"{total} / {active_max}" + (
                            "" if active_max == 10 else f" → {_fmt(scale.score)} / 10"),
                            cls="num o2")


def _criterion_row(result: CriterionScore, linked: set[str], h, explained: bool = False,
                   gaps: tuple[Gap, ...] = ()) -> None:
    c = result.criterion
    with h.tr():
        with h.td(cls="lead o1", __pretty=False):
            if c.key in linked:
                h.a(c.category, href=f"#finding-{c.key}")
            else:
                h.span(c.category)
            h.span(" ")
            if explained:
                h.a(f"({c.rule_id})", href=f"#rule-{c.key}", cls="rule",
                    title=f"How {c.category.lower()} is measured")
            else:
                h.span(f"({c.rule_id})", cls="rule")
        m = result.measurement
        if m is None:
            h.td(result.reason or "", colspan=2, cls="wide o3")
            h.td("N/A", cls="num o2")
            return
        with h.td(cls="wide o3", __pretty=False):
            h.span(m.summary)
            affecting = [(i, g) for i, g in enumerate(gaps, start=1) if c.key in g.criteria]
            if affecting:
                with h.span(cls="affects"):
                    h.span("May be affected by: ")
                    for n, (i, gap) in enumerate(affecting):
                        if n:
                            h.span(", ")
                        h.a(gap.title.lower(), href=f"#gap-{i}")
        band = result.band
        h.td(band.label if band and band.label else "", cls="rating wide o4",
             data_label="Rating")
        with h.td(cls="num o2", __pretty=False):
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

def _gaps(ov: Overview, h) -> None:
    with h.section(aria_labelledby="gaps"):
        h.h2("What this grade could not see", id="gaps")
        if not ov.gaps:
            h.p("Nothing: the log was read whole, every tool call has its result, and no "
                "secret needed redacting on this page.", cls="none")
            return
        h.p("What the session file leaves out or the decoder noticed, in words, with the turns "
            "concerned. A criterion it may have changed says so in the score summary.",
            cls="meta")
        titles = _criterion_titles()
        in_appendix = {t.index for t in ov.appendix}
        for i, gap in enumerate(ov.gaps, start=1):
            with h.article(cls="gap" + ("" if gap.criteria else " info"), id=f"gap-{i}"):
                h.h3(gap.title)
                h.p(gap.detail)
                if gap.turns:
                    with h.p(cls="meta", __pretty=False):
                        h.span("Turns concerned: ")
                        for n, turn in enumerate(gap.turns):
                            if n:
                                h.span(", ")
                            if turn in in_appendix:  # a cited turn: its entry is below
                                h.a(str(turn), href=f"#turn-{turn}")
                            else:
                                h.span(str(turn))
                        if gap.more_turns:
                            h.span(f" and {gap.more_turns} more (see report.json)")
                if gap.criteria:
                    h.p("May affect: " + ", ".join(titles.get(k, k) for k in gap.criteria) + ".",
                        cls="meta")


def _criterion_titles() -> dict[str, str]:
    from .rubric import CRITERIA
    return {key: key.replace("_", " ").capitalize() for key in CRITERIA}


def explanation(doc: str) -> tuple[str, list[tuple[str, str]]]:
    """A detector's docstring as (summary, [(label, text)]): the paragraphs `rubric explain`
    prints, split where a paragraph opens with a label such as "Why it matters:"."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", doc.strip()) if p.strip()]
    if not paragraphs:
        return "", []
    sections: list[tuple[str, str]] = []
    for para in paragraphs[1:]:
        labelled = re.match(r"([A-Z][\w ,/'-]{1,40}):\s+(.*)", para)
        if labelled:
            text = labelled.group(2)
            sections.append((labelled.group(1), text[:1].upper() + text[1:]))
        elif sections:
            label, text = sections[-1]
            sections[-1] = (label, f"{text} {para}")
        else:
            sections.append(("", para))
    return paragraphs[0], sections


def _prose(element, text: str, h) -> None:
    """Docstring prose into `element`: `code` spans (backquoted, as the docstrings write
    them) become code elements, the rest plain text."""
    with element:
        for i, part in enumerate(text.split("`")):
            if part:
                h.code(part) if i % 2 else h.span(part)


def band_words(band: Band, bands: tuple[Band, ...]) -> str:
    """A band's bound in words: "0", "2 or fewer", "3 or more", "otherwise"."""
    if band.at_most is not None:
        return _fmt(band.at_most) if band.at_most <= 0 else f"{_fmt(band.at_most)} or fewer"
    if band.at_least is not None:
        return f"{_fmt(band.at_least)} or more"
    return "otherwise" if len(bands) > 1 else "any value"


def _explanations(report: Report, h) -> None:
    from .detectors import DETECTORS

    with h.section(aria_labelledby="how-measured", cls="explanations"):
        h.h2("How it is measured", id="how-measured")
        with h.p(cls="meta", __pretty=False):
            h.span("What each criterion measures, why it matters, an example, and the points "
                   "the rubric in force gives; ")
            h.code("skill-doctor rubric explain")
            h.span(" prints the same.")
        for scale in report.scores.scales():
            for result in scale.criteria:
                c: Criterion = result.criterion
                detector = DETECTORS.get(c.detector)
                summary, sections = explanation(detector.doc if detector else "")
                with h.article(cls="explain", id=f"rule-{c.key}"):
                    h.h3(f"{c.category} ({c.rule_id})")
                    h.p(f"{c.name} · {SCALE_TITLES[c.scale].lower()}, up to {c.max} points"
                        + ("" if c.enabled else " · disabled in the rubric"), cls="rule")
                    if summary:
                        _prose(h.p(__pretty=False), summary, h)
                    with h.dl():
                        for label, text in sections:
                            h.dt(label or "Detail")
                            _prose(h.dd(__pretty=False), text, h)
                        h.dt("Points")
                        with h.dd():
                            with h.ul(cls="bands"):
                                for band in c.bands:
                                    h.li(f"{band_words(band, c.bands)}: {band.points} "
                                         f"{'point' if band.points == 1 else 'points'}"
                                         + (f" ({band.label})" if band.label else ""))
                        h.dt("This session")
                        m = result.measurement
                        h.dd(f"{m.summary}: {result.points} / {c.max}" if m is not None
                             else (result.reason or "not scored"))
                        h.dt("Suggestion when points are lost")
                        h.dd(c.suggestion)


_KIND_WORDS = {"change": "change", "question": "question", "operation": "to run"}
_LISTED_ITEMS = 20  # files or turns shown in one cell of the request table


def _requests(report: Report, ov: Overview, h, rows: bool = True) -> None:
    """The request ledger: each request, what was done for it, the check after it. Without
    `rows`, the table body holds REQUEST_ROWS_MARK for `render` to put the rows in."""
    if not ov.requests:
        return
    with h.section(aria_labelledby="requests"):
        h.h2("Requests", id="requests")
        h.p("What the user asked, request by request (follow-ups such as \"ok\" or a "
            "clarification count with the request before them), and what the session did for "
            "each. Task completion is judged on every one; the worst bounds it.", cls="meta")
        with h.div(cls="scroll"):
            with h.table(cls="requests"):
                with h.thead():
                    with h.tr():
                        for title in ("Turn", "Asked", "Kind", "Tool calls", "Files changed",
                                      "Check after the last edit", "Asked again"):
                            h.th(title, scope="col", cls="num" if title == "Tool calls" else "")
                with h.tbody():
                    if not rows:
                        from dominate.util import text

                        text(REQUEST_ROWS_MARK)
                        return
                    cited = _cited_turns(report)
                    for row in ov.requests:
                        _request_row(row, cited, h)


def _cited_turns(report: Report) -> set[int]:
    """The turns the findings cite: the page links to their entries in the appendix."""
    return {e.turn for f in report.findings for e in f.evidence}


def _request_row(row: RequestRow, cited: set[int], h) -> None:
    def turn_link(turn: int) -> None:
        if turn in cited:
            h.a(f"turn {turn}", href=f"#turn-{turn}")
        else:
            h.span(f"turn {turn}")

    def listed(items, show_item, empty: str) -> None:
        """Items separated by commas, or `empty` greyed when there are none. A long list
        (a request asked again thousands of times) shows its first items and a count."""
        if not items:
            h.span(empty, cls="none")
        for i, item in enumerate(items[:_LISTED_ITEMS]):
            if i:
                h.span(", ")
            show_item(item)
        if len(items) > _LISTED_ITEMS:
            h.span(f" and {len(items) - _LISTED_ITEMS:,} more")

    with h.tr():
        with h.td(__pretty=False):
            turn_link(row.turn)
        h.td(row.text)
        h.td(_KIND_WORDS.get(row.kind, row.kind))
        h.td(str(row.tool_calls), cls="num")
        with h.td(__pretty=False):
            listed(row.files, h.code, "none")
        with h.td(__pretty=False):
            if row.check is None:
                h.span("none", cls="none")
            else:
                h.code(row.check)
                h.span(" (")
                turn_link(row.check_turn)
                h.span(")")
        with h.td(__pretty=False):
            listed(row.asked_again, turn_link, "no")


def rows_in_pieces(page_text: str, mark: str, rows: Sequence[Any],
                   show_row: Callable[[Any], None], redact_secrets: bool,
                   rows_per_piece: int = ROWS_PER_PIECE) -> Iterator[str]:
    """`page_text` (a page through the page boundary, redact.scrub_page, whose table body
    holds only `mark`) as consecutive pieces, the body filled with `show_row` of each row
    (at least one), `rows_per_piece` rows' elements in memory at a time.

    Each piece passes the same page boundary, built inside as many wrapping elements as the
    page's table body is deep, so it is indented as the whole page would have it, texts that
    hold line breaks included: the same bytes as the page built whole."""
    around = table_around(page_text, mark)
    if around is None:
        yield page_text
        return
    head, tail, depth = around
    yield head
    for start in range(0, len(rows), rows_per_piece):
        yield _rows_text(rows[start:start + rows_per_piece], show_row, depth, redact_secrets)
    yield tail


def table_around(page_text: str, mark: str) -> tuple[str, str, int] | None:
    """The page before and after the rows of the table body holding only `mark`, and the
    body's depth in elements (None: the page has no such body)."""
    placeholder = f"<tbody>{mark}</tbody>"
    at = page_text.find(placeholder)
    if at < 0:
        return None
    indent = page_text[page_text.rfind("\n", 0, at) + 1:at]
    return (page_text[:at] + "<tbody>", "\n" + indent + "</tbody>" + page_text[at + len(placeholder):],
            len(indent) // len(_INDENT))


def row_texts(rows: Sequence[Any], show_row: Callable[[Any], None], depth: int,
              redact_secrets: bool, rows_per_piece: int = ROWS_PER_PIECE) -> Iterator[str]:
    """Each row's text as rows_in_pieces places it in a table body `depth` elements deep, in
    order: a page that shows the same rows in several orders renders each row once."""
    for start in range(0, len(rows), rows_per_piece):
        text = _rows_text(rows[start:start + rows_per_piece], show_row, depth, redact_secrets)
        # Every row starts a line at the rows' indentation with its opening tag; a `<` in a
        # row's text is escaped, so no text can look like one.
        line_start = text[:text.index("<", 1)]  # the line break and the rows' indentation
        cut = list(_all(text, line_start + "<tr"))
        for begin, end in zip(cut, cut[1:] + [len(text)]):
            yield text[begin:end]


def _all(text: str, needle: str) -> Iterator[int]:
    """Where `needle` starts in `text`, each time, in order."""
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + len(needle))


def _rows_text(rows: Sequence[Any], show_row: Callable[[Any], None], depth: int,
               redact_secrets: bool) -> str:
    """The rows through the page boundary, indented as in a body `depth` elements deep: from
    the line break before the first row to the end of the last."""
    with _elements_collected():
        text = _piece_text(rows, show_row, depth, redact_secrets)
    # The rows: after the body's opening tag, up to the line break before its closing one.
    first = text.index("<tbody>") + len("<tbody>")
    return text[first:text.rindex("\n", first, text.rindex("</tbody>"))]


def _piece_text(rows: Sequence[Any], show_row: Callable[[Any], None], depth: int,
                redact_secrets: bool) -> str:
    """`rows` in a table body `depth` elements deep, through the page boundary."""
    from dominate import tags as h

    from .redact import scrub_page

    outer = body = h.tbody()
    for _ in range(depth):
        outer = h.div(outer)
    with body:
        for row in rows:
            show_row(row)
    return scrub_page(outer, redact_secrets)


_INDENT = "  "  # dominate's indentation step


@contextmanager
def _elements_collected() -> Iterator[None]:
    """Automatic garbage collection paused while a page (or a piece of one) is built and
    rendered inside, and the page's elements collected at once after.

    Page elements refer to each other in cycles (parent and child, an element and its `with`
    block), so only the cycle collector frees them. Left to it, the collections that building
    sets off move them to the oldest generation, which a long session's hundred thousand turns
    make slow to collect and seldom collected: the request table's pieces piled up there, 15 MB
    at 1 GB. Paused, everything made inside stays in the youngest generation, and collecting
    that alone frees the elements the moment they are unreachable."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.collect(0)
        if enabled:
            gc.enable()


def _setup(ov: Overview, h) -> None:
    with h.section(aria_labelledby="setup"):
        h.h2("Setup in play", id="setup")
        h.p("What the session used of your setup: this is what the suggestions above would "
            "change.", cls="meta")
        with h.div(cls="scroll"):
            with h.table(cls="setup"):
                with h.tbody():
                    for _, label, items in ov.setup.rows():
                        with h.tr(cls=None if items else "empty"):
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
            # On paper the findings already list their turns: this index is for the screen.
            h.h3("Turns each finding cites", cls="screen-only")
            with h.ul(cls="screen-only"):
                for f, turns in cited:
                    with h.li(__pretty=False):
                        h.a(f"{f.category} ({f.rule_id})", href=f"#finding-{f.criterion}")
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
                                    h.a(f"{category} ({rule_id})", href=f"#finding-{criterion}")
        if len(ov.files) > 20:
            h.p(f"Printed: the first 20 of {len(ov.files) + ov.more_files} files; the page on "
                "screen and report.json list them all.", cls="none print-only")
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
        h.p("Printed: one line per edited file; the diffs are on the page on screen.",
            cls="none print-only")
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
                h.a(f"{category} ({rule_id})", href=f"#finding-{criterion}")
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
