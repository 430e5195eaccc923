"""The report page stays inert whatever a transcript holds.

Each payload is planted in every field that can reach the page (user text, assistant text, tool
names, tool inputs, outputs, file paths, the session id, the working folder, the source file
name, parse-error context), then every generated page is parsed: no script, no event-handler
attribute, nothing that loads (img, link, iframe, object, embed, style @import/url()), no
`javascript:` URL, the CSP forbids loads, and bidi controls are shown, not obeyed.
"""

from __future__ import annotations

import re

import json
import os
from html.parser import HTMLParser
from pathlib import Path

import pytest

from sessionkit import claude_jsonl
from skill_doctor import rubric
from skill_doctor.decode import decode_file
from skill_doctor.render import render
from skill_doctor.report import grade

PAYLOADS = [
    "<script>alert(1)</script>",
    "</code></p></blockquote></article><script>alert(2)</script>",
    "</style><script>alert(3)</script>",
    "</title><script>alert(4)</script>",
    '" onmouseover="alert(5)" x="',
    "' onfocus='alert(6)' autofocus '",
    '"><img src=x onerror=alert(7)>',
    "javascript:alert(8)",
    '<a href="javascript:alert(9)">click</a>',
    "<iframe src=https://evil.example/></iframe>",
    "<object data=x></object><embed src=x>",
    "<link rel=stylesheet href=https://evil.example/x.css>",
    "<style>@import url(https://evil.example/x.css); body{background:url(//e.x/i)}</style>",
    "\\3c script\\3e  expression(alert(10))",
    "<svg/onload=alert(11)>",
    "<!-- comment --><![CDATA[x]]>",
    "<meta http-equiv=refresh content='0;url=https://evil.example'>",
    "<base href=https://evil.example/>",
    "abc\u202edcba\u2066isolated\u2069\u200f",
    "&lt;script&gt; already escaped &amp;",
]

LOADING = {"script", "img", "link", "iframe", "object", "embed", "audio", "video", "source",
           "frame", "frameset", "applet", "base", "form", "input", "svg", "math", "track",
           "picture", "portal"}
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.style: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        (self.style if self._in_style else self.text).append(data)


def assert_inert(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    names = [tag for tag, _ in page.tags]
    assert not set(names) & LOADING, set(names) & LOADING
    assert names.count("style") == 1 and names.count("title") == 1
    allowed_meta = {"charset", "http-equiv", "content", "name"}
    for tag, attrs in page.tags:
        for key, value in attrs.items():
            assert not key.startswith("on"), (tag, key)
            assert key not in ("src", "srcset", "action", "formaction", "data", "poster")
            if key == "href":  # only links to anchors on the page itself, which load nothing
                assert tag == "a" and re.fullmatch(r"#[A-Za-z][\w-]*", value or ""), (tag, value)
            assert "javascript:" not in (value or "").lower(), (tag, key, value)
            if key == "style":
                assert "url(" not in (value or "") and "expression" not in (value or "")
        if tag == "meta":
            assert set(attrs) <= allowed_meta
            if attrs.get("http-equiv"):
                assert attrs["http-equiv"] == "Content-Security-Policy"
    css = "".join(page.style)
    assert "@import" not in css and "url(" not in css and "expression(" not in css
    [csp] = [a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";") if d.strip())
    assert directives["default-src"] == "'none'"
    for name in ("script-src", "img-src", "font-src", "connect-src", "object-src", "frame-src",
                 "base-uri", "form-action"):
        assert directives[name] == "'none'", name
    assert directives["style-src"] == "'unsafe-inline'"  # the page's own stylesheet only
    assert not any(ch in html for ch in BIDI)
    return page


def hostile_session(tmp_path: Path, payload: str) -> Path:
    safe = payload.replace("/", "∕")  # a file name cannot hold '/'
    session = tmp_path / f"s-{safe[:60]}.jsonl"
    session.write_text(claude_jsonl([
        {"user": f"Fix {payload} in a.py"},
        {"tool": payload, "input": {"command": payload}, "output": payload},
        {"tool": "Read", "input": {"file_path": f"/home/dev/proj/{payload}.py"}, "output": payload},
        {"tool": "Edit", "input": {"file_path": f"/home/dev/proj/{payload}.py", "old_string": payload,
                                   "new_string": payload}, "output": payload, "error": True},
        {"tool": "Edit", "input": {"file_path": f"/home/dev/proj/{payload}.py", "old_string": payload,
                                   "new_string": payload}, "output": payload, "error": True},
        {"tool": "Bash", "input": {"command": f"pytest {payload}"}, "output": f"FAILED {payload}",
         "error": True},
        {"assistant": payload},
    ], cwd=f"/home/dev/{payload}", session_id=payload))
    return session


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_payload_in_every_field_leaves_the_page_inert(tmp_path, payload):
    session = hostile_session(tmp_path, payload)
    report = grade(decode_file(session), rubric.load(), "2026-01-01T00:00:00Z")
    assert report.status == "ok" and report.findings  # the payload reaches findings and excerpts
    html = render(report)
    page = assert_inert(html)
    text = "".join(page.text)
    if "<" in payload and not any(ch in payload for ch in BIDI):
        assert payload.split()[0] in text  # shown as text, not dropped
    # --no-redact shows more of the raw text: still inert.
    unredacted = grade(decode_file(session), rubric.load(), "2026-01-01T00:00:00Z",
                       redact_secrets=False)
    assert_inert(render(unredacted))


@pytest.mark.parametrize("payload", PAYLOADS[:8], ids=range(8))
def test_payload_in_a_parse_error_context_leaves_the_page_inert(tmp_path, payload):
    session = tmp_path / "notes.txt"
    session.write_text(f"first line\n{payload}\nmore {payload}\n")
    report = grade(decode_file(session), rubric.load(), "2026-01-01T00:00:00Z")
    assert report.status == "parse_error"
    assert_inert(render(report))


def test_payload_in_plain_text_turns_leaves_the_page_inert(tmp_path):
    session = tmp_path / "log.md"
    session.write_text("".join(f"User: {p}\nAssistant: {p}\n" for p in PAYLOADS))
    report = grade(decode_file(session), rubric.load(), "2026-01-01T00:00:00Z")
    assert report.status in ("ok", "parse_error")
    assert_inert(render(report))


def test_bidi_controls_are_shown_as_code_points(tmp_path):
    session = hostile_session(tmp_path, "evil\u202etxt.exe")
    html = render(grade(decode_file(session), rubric.load(), "2026-01-01T00:00:00Z"))
    assert "evil[U+202E]txt.exe" in html and "\u202e" not in html


def test_cli_written_pages_are_inert(tmp_path, capsys):
    """The files on disk, not just render()'s string: every status the CLI can write."""
    from skill_doctor.cli import main

    hostile = hostile_session(tmp_path, PAYLOADS[1])
    (tmp_path / "short.jsonl").write_text(claude_jsonl([{"user": PAYLOADS[0]}]))
    (tmp_path / "notes.txt").write_text(f"not a transcript {PAYLOADS[6]}\n")
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        for i, target in enumerate([hostile.name, "short.jsonl", "notes.txt", "missing<x>.jsonl"]):
            assert main(["report", target, "-o", f"r{i}"]) == 0
    finally:
        os.chdir(old)
    statuses = []
    for i in range(4):
        assert_inert((tmp_path / f"r{i}" / "report.html").read_text(encoding="utf-8"))
        statuses.append(json.loads((tmp_path / f"r{i}" / "report.json").read_text())["status"])
    assert statuses == ["ok", "too_short", "parse_error", "no_history"]
