"""The report and the batch index in a real browser: headless Chromium opens them from disk.

Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`, stdlib
only). Every request the page makes is recorded from the Network domain, and the browser is
started with a resolver and proxy that send any network attempt nowhere, so nothing leaves the
machine even if the page tried. A control page with an external image proves the recorder
sees requests, so the "no request" assertion can fail.

What a user sees is asserted from the browser's computed styles, not from the HTML text: the
page's own font (not the default serif, which is what a dropped `font` declaration gives),
the body's colours, the score bars' widths, the verdict and scores above the session strip,
tables that scroll inside their box on a phone, and the print layout.

Full-page screenshots of a Claude Code, a Codex, an Aider and a Gemini session and of a batch
index, at 1280 and 375 px, are saved under `test-artifacts/browser/` (gitignored) for people
to look at. The tests skip only when no Chromium binary exists (CI installs Debian's
`chromium`, see `.ci/run`).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT, needs_corpus
from skill_doctor import batch, rubric
from skill_doctor.decode import decode_file
from skill_doctor.render import render
from skill_doctor.report import grade

ARTIFACTS = ROOT / "test-artifacts" / "browser"
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
SESSION = CORPUS / "claude-code" / "M-Claude_f225835b-3612.jsonl"
FALLBACK = ROOT / "examples" / "retry-fix.jsonl"
# One real session per harness for the screenshots, each with something the page must show.
HARNESS_SESSIONS = {
    "claude-code": CORPUS / "claude-code" / "M-Claude_3af9b1a7-6512.jsonl",  # notes, 196 turns
    "codex": CORPUS / "codex" / "Hoper-J_cpolar-connect_2025-09-16T12-47-48.jsonl",
    "aider": CORPUS / "aider" / "Simple-Calulator.aider.chat.history.md",
    "gemini": CORPUS / "gemini-stream" / "figma-010ac575_transcript.jsonl",  # several runs
}
WIDTHS = (1280, 375)
DEFAULT_SERIF = ("times", "serif", "dejavu serif", "liberation serif", "tinos")


def chromium_binary() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


BINARY = chromium_binary()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BINARY is None, reason="no Chromium binary on PATH (chromium, "
                       "chromium-browser, google-chrome); .ci/run installs Debian's chromium"),
]


class Browser:
    """A headless Chromium driven over the DevTools pipe (fd 3 in, fd 4 out, NUL-framed JSON)."""

    def __init__(self, binary: str, profile: str):
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire_pipes() -> None:  # runs in the child: the protocol's fixed descriptors
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        args = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--remote-debugging-pipe", f"--user-data-dir={profile}",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage", "--mute-audio",
                # The network trap: names resolve nowhere and any proxied request hits a
                # closed port, so a stray load cannot leave the machine.
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
                "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, preexec_fn=wire_pipes,
                                     pass_fds=(3, 4))  # kept open after wire_pipes
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                err = self.proc.stderr.read().decode("utf-8", "replace")[-2000:]
                raise RuntimeError(f"Chromium closed the DevTools pipe: {err}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 30) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method and event.get("sessionId") == session:
                return event
        while True:
            event = self._read_message(deadline)
            self.events.append(event)
            if event.get("method") == method and event.get("sessionId") == session:
                return event

    def open(self, url: str, width: int) -> "Page":
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Network.enable", session=session)
        self.send("Page.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 500},
            session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        return Page(self, target, session)


class Page:
    def __init__(self, browser: Browser, target: str, session: str):
        self.browser, self.target, self.session = browser, target, session

    def send(self, method: str, params: dict | None = None) -> dict:
        return self.browser.send(method, params, session=self.session)

    @property
    def title(self) -> str:
        return self.browser.send("Target.getTargetInfo", {"targetId": self.target})["targetInfo"]["title"]

    def requests(self) -> list[str]:
        # A cheap round trip first, so events already queued on the pipe are collected.
        self.send("Page.getLayoutMetrics")
        return [e["params"]["request"]["url"] for e in self.browser.events
                if e.get("sessionId") == self.session
                and e.get("method") == "Network.requestWillBeSent"]

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (DevTools only: the page itself
        runs no script, its CSP forbids it; the protocol evaluates outside that policy)."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def style(self, selector: str, prop: str) -> str:
        return self.evaluate(f"getComputedStyle(document.querySelector({json.dumps(selector)}))"
                             f".getPropertyValue({json.dumps(prop)})")

    def top(self, selector: str) -> float:
        return self.evaluate(f"document.querySelector({json.dumps(selector)})"
                             ".getBoundingClientRect().top + window.scrollY")

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})

    def content_size(self) -> tuple[int, int]:
        size = self.send("Page.getLayoutMetrics")["cssContentSize"]
        return int(size["width"]), int(size["height"])

    def screenshot(self, path: Path, scale: float = 1.0) -> bytes:
        width, height = self.content_size()
        data = self.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": scale}})["data"]
        png = base64.b64decode(data)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png)
        return png


def png_pixels(png: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) bytes of an 8-bit, non-interlaced PNG (stdlib only)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        body = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and interlace == 0 and colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, [bytes(r[i:i + 3]) for r in rows for i in range(0, stride, bpp)]


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="skill-doctor-chromium-")
    b = Browser(BINARY, profile)
    try:
        b.send("Browser.getVersion", timeout=60)
    except Exception as exc:  # the binary is there but cannot run: that is a failure, not a skip
        b.close()
        shutil.rmtree(profile, ignore_errors=True)
        pytest.fail(f"{BINARY} is installed but could not start: {exc}")
    yield b
    b.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    session = SESSION if SESSION.is_file() else FALLBACK
    report = grade(decode_file(session), rubric.load(), "2026-01-01T00:00:00Z")
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(render(report), encoding="utf-8")
    return report, path


@pytest.mark.parametrize("width", [1280, 375])
def test_report_renders_offline_in_chromium(browser, report_file, width):
    report, path = report_file
    url = path.as_uri()
    page = browser.open(url, width)
    assert page.title == f"Skill Doctor Report — {report.session_id}"
    # The only load is the report itself: no fonts, images, styles or anything on the network.
    assert page.requests() == [url]

    page_width, page_height = page.content_size()
    assert page_width <= width, f"the page scrolls sideways at {width} px ({page_width} px wide)"
    assert page_height > 1500  # every section laid out, not a blank or collapsed page
    page.screenshot(ARTIFACTS / f"report-{width}.png")

    # Non-blank: a scaled-down copy of the whole page has ink, and more than one colour of it.
    w, h, pixels = png_pixels(page.screenshot(None, scale=0.125))
    inked = [p for p in pixels if min(p) < 200]
    assert w > 0 and h > 0 and len(inked) > 0.02 * len(pixels)
    assert len({p for p in inked if max(p) - min(p) > 60}) > 3  # coloured bars and timeline


def test_the_request_recorder_sees_a_page_that_loads_something(browser, tmp_path):
    control = tmp_path / "control.html"
    control.write_text('<!doctype html><title>control</title>'
                       '<img src="http://example.invalid/pixel.png" alt="">', encoding="utf-8")
    page = browser.open(control.as_uri(), 800)
    assert page.title == "control"
    assert "http://example.invalid/pixel.png" in page.requests()


def assert_own_typography(page: Page, body_colour: str = "rgb(26, 26, 26)") -> None:
    """The style sheet reached the browser whole: a dropped `font` declaration would leave
    the default serif and 16 px, and the body's colours would be the browser's."""
    family = page.style("body", "font-family").lower()
    first = family.split(",")[0].strip().strip('"')
    assert first == "system-ui", family
    assert not any(family.startswith(name) for name in DEFAULT_SERIF), family
    assert page.style("body", "color") == body_colour
    assert page.style("body", "background-color") == "rgb(255, 255, 255)"
    assert page.evaluate("!!document.querySelector('code')")
    assert page.style("code", "font-family").lower().startswith("ui-monospace")


def bar_widths(page: Page) -> list[list[float]]:
    """Each score bar's segments as shares of the bar's width, as laid out."""
    return page.evaluate("""[...document.querySelectorAll('.bar')].map(bar => {
        const total = bar.getBoundingClientRect().width;
        return [...bar.children].map(s => s.getBoundingClientRect().width / total);
    })""")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_looks_as_designed(browser, report_file, width):
    report, path = report_file
    page = browser.open(path.as_uri(), width)
    assert_own_typography(page)
    # The bars as drawn: one segment per scored criterion, its width its share of the points.
    drawn = bar_widths(page)
    expected = [[r.points / sum(x.criterion.max for x in scale.criteria if x.points is not None)
                 for r in scale.criteria if r.points]
                for scale in report.scores.scales() if scale.score is not None]
    assert len(drawn) == len(expected)
    for got, want in zip(drawn, expected):
        assert [round(g, 2) for g in got] == [round(w, 2) for w in want]
    # Verdict under the header, then the scores, and the session strip after them at every width.
    assert page.top("h1") < page.top(".verdict") < page.top("#score-summary") \
        < page.top("#findings") < page.top("dl.strip")
    assert page.evaluate("document.querySelector('.verdict').innerText").startswith(
        ("Passes", "Needs work"))
    page.close()


@needs_corpus
@pytest.mark.parametrize("harness", sorted(HARNESS_SESSIONS))
def test_screenshots_of_one_session_per_harness(browser, tmp_path, harness):
    report = grade(decode_file(HARNESS_SESSIONS[harness]), rubric.load(), "2026-01-01T00:00:00Z")
    assert report.transcript.harness.startswith(harness.split("-")[0]), report.transcript.harness
    path = tmp_path / "report.html"
    path.write_text(render(report), encoding="utf-8")
    for width in WIDTHS:
        page = browser.open(path.as_uri(), width)
        assert page.requests() == [path.as_uri()]
        page_width, _ = page.content_size()
        assert page_width <= width, f"{harness} scrolls sideways at {width} px ({page_width} px)"
        assert_own_typography(page)
        # The score tables fit whole: the points column never hides behind a sideways scroll.
        hidden = page.evaluate("""[...document.querySelectorAll('table.arith')].map(
            t => t.parentElement.scrollWidth - t.parentElement.clientWidth)""")
        assert len(hidden) == 2 and not any(hidden), f"{harness} at {width} px: {hidden}"
        # Every gap report.json carries is on the page, in its section.
        shown = page.evaluate("document.querySelectorAll('#gaps ~ article.gap').length")
        assert shown == len(report.overview.gaps)
        page.screenshot(ARTIFACTS / f"report-{harness}-{width}.png")
        page.close()


@pytest.fixture(scope="module")
def batch_dir(tmp_path_factory):
    """A batch over real sessions of several harnesses and days, or the examples without the
    corpus."""
    sessions = ([str(p) for p in HARNESS_SESSIONS.values()]
                + [str(CORPUS / "claude-code" / "M-Claude_f225835b-3612.jsonl"),
                   str(CORPUS / "pi" / "pi-mono_session.jsonl"),
                   str(CORPUS / "claude-code" / "M-Claude_cc9f9e19-22a8.jsonl")]
                if CORPUS.is_dir() else [str(p) for p in sorted((ROOT / "examples").glob("*.jsonl"))])
    target = tmp_path_factory.mktemp("batch") / "out"
    batch.run(sessions, target, rubric.load(), "2026-01-01T00:00:00Z")
    return target


@pytest.mark.parametrize("width", WIDTHS)
def test_the_batch_index_fits_and_sorts(browser, batch_dir, width):
    index = batch_dir / "index.html"
    page = browser.open(index.as_uri(), width)
    assert page.requests() == [index.as_uri()]
    assert_own_typography(page)
    page_width, _ = page.content_size()
    assert page_width <= width, f"the index scrolls sideways at {width} px ({page_width} px)"
    # The sessions table scrolls inside its own box when it does not fit (a phone).
    # On a phone the sessions are cards: nothing scrolls sideways, the scores come first.
    box = page.evaluate("""(() => { const b = document.querySelector('table.sessions').parentElement;
        return [getComputedStyle(b).overflowX, b.scrollWidth, b.clientWidth]; })()""")
    assert box[0] == ("visible" if width == 375 else "auto")
    assert box[1] <= box[2], f"the sessions table scrolls inside its box at {width} px"
    # Each sort order is a page of its own, linked from the header.
    views = page.evaluate("[...document.querySelectorAll('nav.sort a')].map(a => a.href)")
    assert sorted(v.rsplit("/", 1)[1] for v in views) == sorted(
        f"{v.file}#sessions" for v in batch.VIEWS if v.file != "index.html")
    if CORPUS.is_dir():  # the sessions span several days: the chart is drawn
        chart = page.evaluate("document.querySelector('.chart svg').getBoundingClientRect().width")
        assert 200 < chart <= width
    page.screenshot(ARTIFACTS / f"index-{width}.png")
    page.close()


@needs_corpus
@pytest.mark.parametrize("name", ["M-Claude_3af9b1a7-6512.jsonl", "M-Claude_21037e11-89de.jsonl"])
def test_print_keeps_table_headers_and_a_long_session_prints_in_a_few_pages(browser, tmp_path,
                                                                            name):
    report = grade(decode_file(CORPUS / "claude-code" / name), rubric.load(),
                   "2026-01-01T00:00:00Z")
    assert 170 < len(report.transcript.turns) < 300  # a long session (calls only announced are dropped)
    path = tmp_path / "report.html"
    path.write_text(render(report), encoding="utf-8")
    page = browser.open(path.as_uri(), 1280)
    page.send("Emulation.setEmulatedMedia", {"media": "print"})
    # Table headers repeat on every printed page and a heading stays with what follows it.
    assert page.style("thead", "display") == "table-header-group"
    assert page.style("h2", "break-after") == "avoid"
    assert page.style("tr", "break-inside") == "avoid"
    assert page.style("nav.toc", "display") == "none"
    page.send("Emulation.setEmulatedMedia", {"media": ""})
    pdf = base64.b64decode(page.send("Page.printToPDF", {"paperWidth": 8.27, "paperHeight": 11.69,
                                                         "printBackground": True})["data"])
    pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"print-{name.split('_')[1][:8]}.pdf").write_bytes(pdf)
    # What prints is the findings and their cited turns, not the session: a page count that
    # stays near ten for a 200-turn session with five findings, and is never a page per ten turns.
    assert 1 < pages <= 10, f"{pages} printed pages for a {len(report.transcript.turns)}-turn session"
    assert pages < len(report.transcript.turns) / 15, (pages, len(report.transcript.turns))
    page.close()


# Every table that holds scores, as laid out: its box and each of its cells fit their width,
# and no text in it may break inside a word (no `break-all`, no `overflow-wrap: anywhere`) but
# a path, which wraps after its separators. Fitting without breaking means no word was broken.
_FITS_WHOLE = """(() => {
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > innerWidth) problems.push('the document is ' + doc.scrollWidth + ' px wide');
  for (const t of document.querySelectorAll('table.cards, table.arith, table.sessions')) {
    const box = t.parentElement;
    if (box.scrollWidth > box.clientWidth + 1)
      problems.push(t.className + ': its box scrolls (' + box.scrollWidth + ' > ' + box.clientWidth + ')');
    for (const cell of t.querySelectorAll('td, th')) {
      if (cell.scrollWidth > cell.clientWidth + 1 && getComputedStyle(cell).position !== 'absolute'
          && !cell.closest('thead'))
        problems.push(t.className + ': a cell overflows: ' + cell.textContent.trim().slice(0, 40));
    }
    for (const el of t.querySelectorAll('td, th, td *, th *')) {
      if (el.closest('code.path')) continue;
      const s = getComputedStyle(el);
      if (s.wordBreak === 'break-all' || s.overflowWrap === 'anywhere' || s.overflowWrap === 'break-word')
        problems.push(t.className + ': words may break inside: ' + el.textContent.trim().slice(0, 40));
    }
  }
  return problems;
})()"""


def _page_kinds(tmp_path):
    """A page of each kind over real sessions: reports of several harnesses, a batch index,
    a comparison and check --html's index. (name, path, selector of its first score)."""
    from skill_doctor.cli import main

    pages = []
    for harness, session in sorted(HARNESS_SESSIONS.items()):
        report = grade(decode_file(session), rubric.load(), "2026-01-01T00:00:00Z")
        path = tmp_path / f"report-{harness}.html"
        path.write_text(render(report), encoding="utf-8")
        pages.append((f"report {harness}", path, "section[aria-labelledby=score-summary] .value"))
    sessions = [str(p) for p in HARNESS_SESSIONS.values()] + [
        str(CORPUS / "claude-code" / "M-Claude_cc9f9e19-22a8.jsonl")]
    batch.run(sessions, tmp_path / "batch", rubric.load(), "2026-01-01T00:00:00Z")
    pages.append(("batch index", tmp_path / "batch" / "index.html", "table.sessions td.o1"))
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert main(["compare", str(HARNESS_SESSIONS["claude-code"]),
                     str(HARNESS_SESSIONS["codex"]), "-o", "cmp"]) == 0
        main(["check", *sessions[:3], "--html", "gate", "--exit-zero"])
    finally:
        os.chdir(old)
    pages.append(("compare", tmp_path / "cmp" / "compare.html", "table.cards td.o2"))
    pages.append(("check --html", tmp_path / "gate" / "index.html", "table.sessions td.o1"))
    return pages


@needs_corpus
def test_every_page_kind_fits_a_phone_and_a_desktop_without_breaking_words(
        browser, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    for name, path, first_score in _page_kinds(tmp_path):
        for width in WIDTHS:
            page = browser.open(path.as_uri(), width)
            assert page.requests() == [path.as_uri()], name
            assert page.evaluate(_FITS_WHOLE) == [], f"{name} at {width} px"
            # The scores are in the first screen (900 px tall), not below a sideways scroll.
            where = page.evaluate(f"""(() => {{ const r = document.querySelector({json.dumps(first_score)})
                .getBoundingClientRect(); return [r.top, r.right, r.width]; }})()""")
            assert 0 < where[0] < 900 and where[1] <= width and where[2] > 0, (name, width, where)
            if name.startswith(("batch", "check")) and width == 375:
                # A card shows the verdict before the session's id and path.
                assert page.top("table.sessions td.o3") < page.top("table.sessions td.o5"), name
            page.screenshot(ARTIFACTS / f"kind-{name.replace(' ', '-').replace('--', '')}-{width}.png")
            page.close()
    capsys.readouterr()
