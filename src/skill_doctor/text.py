"""Small text helpers shared by decoders, detectors and the report."""

from __future__ import annotations

import difflib
import re
from typing import Iterator

from .patterns import compile_later

# Texts past these sizes are kept as head and tail only (with the full length recorded on
# the turn), so memory per turn is bounded whatever a tool printed or an agent wrote.
KEEP_CHARS = 16 * 1024  # user and assistant messages
OUTPUT_CHARS = 4 * 1024  # tool output: its head and its tail (where test summaries are)
SMALL_CHARS = 1024  # tool input values, shown or matched only by their beginning


# A cut never leaves part of a token (a key, a password, a URL's query): the run of token
# characters it falls in is left out whole, unless that run is longer than this (then it is cut
# where it is; a provider token's prefix, kept, is still recognised by redaction).
_WORD_BACKOFF = 128
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                         "+/=_-.~%:@")


def _head_end(text: str, end: int) -> int:
    """Where to end a head cut at `end` so that no token is cut in two."""
    if end <= 0 or end >= len(text):
        return max(0, min(end, len(text)))
    if text[end] not in _TOKEN_CHARS or text[end - 1] not in _TOKEN_CHARS:
        return end
    start = end - 1
    floor = max(0, end - _WORD_BACKOFF)
    while start > floor and text[start - 1] in _TOKEN_CHARS:
        start -= 1
    return start if start > floor or (start == 0 and floor == 0) else end


def _tail_start(text: str, start: int) -> int:
    """Where to start a tail cut at `start` so that no token is cut in two."""
    if start <= 0 or start >= len(text):
        return max(0, min(start, len(text)))
    if text[start - 1] not in _TOKEN_CHARS or text[start] not in _TOKEN_CHARS:
        return start
    end = start
    ceiling = min(len(text), start + _WORD_BACKOFF)
    while end < ceiling and text[end] in _TOKEN_CHARS:
        end += 1
    return end if end < ceiling or end == len(text) else start


def cut(text: str, limit: int) -> str:
    """At most `limit` characters of `text`, cut before a token rather than inside one."""
    return text if len(text) <= limit else text[:_head_end(text, limit)]


def quote(text: str, limit: int) -> str:
    """At most `limit` characters of session text for a note or an excerpt, with no part of a
    secret left behind by the cut: a text that must be cut is redacted whole first and then
    cut (a URL's password cut off before its `@host`, or 30 of 36 characters of a key, is a
    string no pattern recognises afterwards). A text that fits is returned whole: it is
    redacted with the rest of the note, where the output is redacted. The cut never falls
    inside a `[redacted: ...]` marker."""
    if len(text) <= limit:
        return text
    from .redact import redact

    return cut_redacted(redact(text, home=""), limit)


def cut_redacted(text: str, limit: int) -> str:
    """`cut` of a text already redacted, never inside a `[redacted: ...]` marker (half a
    marker would read as text of the session)."""
    head = cut(text, limit)
    opened = head.rfind("[redacted:")
    if opened != -1 and "]" not in head[opened:]:
        head = head[:opened].rstrip()
    return head


def clip(text: str, limit: int = KEEP_CHARS, among: str | None = None) -> str:
    """Keep the head (three quarters) and tail (one quarter) of a long text, marking the cut
    (and naming `among` the text it dropped, when given). The cut falls between words, so no
    part of a secret is kept without the rest of it."""
    if len(text) <= limit:
        return text
    head = _head_end(text, limit * 3 // 4)
    tail = _tail_start(text, len(text) - limit // 4)
    if among is None:
        return f"{text[:head]}\n[... {tail - head} characters not kept ...]\n{text[tail:]}"
    return f"{text[:head]}\n[... {tail - head} characters not kept, among them: {among} ...]\n{text[tail:]}"


# How harnesses mark output they cut themselves ("…11637 tokens truncated…", "[Output too
# long]"): an answer resting on such output rests on what was never seen.
HARNESS_CUT = compile_later(r"tokens? truncated|output truncated|\[truncated|\(truncated\)|characters? "
                         r"(?:were )?(?:elided|omitted|truncated)|lines? (?:elided|omitted|truncated)"
                         r"|Output too long", re.I)
# Every marker holds one of these as written, so a plain find spares the search.
_CUT_WORDS = tuple(form for word in ("truncat", "elided", "omitted", "too long")
                   for form in (word, word.capitalize(), word.upper()))


def harness_cut(text: str) -> re.Match[str] | None:
    """The first mark in `text` that the harness cut the output, if any."""
    if not any(word in text for word in _CUT_WORDS):
        return None
    return HARNESS_CUT.search(text)


def clip_output(text: str, limit: int = OUTPUT_CHARS) -> str:
    """`clip` for a tool output, keeping the harness's own cut marker when it falls in the
    part dropped, so that the output still says the harness cut it."""
    clipped = clip(text, limit)
    if clipped is text or harness_cut(clipped):
        return clipped
    marker = harness_cut(text)
    if marker is None:
        return clipped
    line = line_of(text, marker).strip()
    note = line if len(line) <= 200 else marker.group()
    return clip(text, limit, among=note)


def line_of(text: str, match: re.Match[str]) -> str:
    """The whole line (or lines) of `text` that a match falls on, without its line end."""
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start:] if end == -1 else text[start:end]


_SENTENCE_END = compile_later(r"(?<=[.!?:])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of a message, in order, stripped: split after . ! ? and : and at line
    breaks (a list item or a heading is a sentence of its own)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def clip_small(text: str) -> str:
    return clip(text, SMALL_CHARS)


def excerpt(text: str, limit: int = 240) -> str:
    """A one-paragraph excerpt: whitespace folded, cut at `limit` characters with an ellipsis."""
    folded = " ".join(text.split())
    if len(folded) <= limit:
        return folded
    return folded[: _head_end(folded, limit - 1)].rstrip() + "…"


def iso_from_millis(ms: object) -> str | None:
    """An epoch-milliseconds timestamp as ISO-8601 UTC (`2026-01-02T03:04:05.678Z`), else None."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return None
    from datetime import datetime, timezone

    try:
        moment = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    # isoformat, not strftime: the C library writes a year before 1000 without its zeros.
    return moment.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


# -- case-insensitive patterns at case-sensitive speed -------------------------------------------
#
# re.IGNORECASE makes a pattern of many alternatives several times slower per character (the
# engine folds every character it compares). A pattern whose letters are ASCII, run without
# the flag over the lower-cased text, finds the same matches at the same offsets, as long as
# the text holds none of the four non-ASCII letters re.IGNORECASE folds onto ASCII ones
# (U+0130, U+0131, U+017F, U+212A; U+0130 is also the one letter whose lower case is longer):
# text holding one is matched with the flag as before. (Lowering other non-ASCII letters
# changes nothing such a pattern can see: `\w`, `\s`, `\d` and `\b` treat both cases alike.)
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


def ascii_folded(text: str) -> str | None:
    """`text` lower-cased (same length and offsets), or None when it holds a non-ASCII letter
    that re.IGNORECASE folds onto an ASCII one."""
    if not text.isascii() and any(c in text for c in _FOLDS_TO_ASCII):
        return None
    return text.lower()


class CaselessPattern:
    """`re.compile(source, re.IGNORECASE | flags)`, matched over `ascii_folded(text)` with a
    case-sensitive copy of the pattern wherever that is exact.

    The source names letters in lower case only (escapes such as `\\S` aside), its other
    characters are caseless (none given by its code), and it has no backreference.
    `required`, when given, are texts (lower case) one of which every match contains: a text
    holding none of them is not searched. Matches come from the folded copy: offsets are the text's, matched text is
    lower-cased; `sub` keeps the original text around its replacements.
    """

    def __init__(self, source: str, flags: int = 0, required: tuple[str, ...] = ()) -> None:
        letters = re.sub(r"\\.", "", source)
        if any(c.isupper() or (not c.isascii() and c.lower() != c.upper()) for c in letters) \
                or re.search(r"\\[\dxuUN]|\(\?P=|\(\?[a-zA-Z]*i", source):
            raise ValueError(f"not a lower-case pattern without backreferences: {source!r}")
        self.pattern = source
        self.flags = flags
        self.caseless = compile_later(source, flags | re.IGNORECASE)
        self.folded = compile_later(source, flags)
        self.required = required

    def _target(self, text: str) -> tuple[re.Pattern[str], str] | None:
        """The pattern and text to match, or None when no match is possible."""
        folded = ascii_folded(text)
        if folded is None:
            return self.caseless, text
        if self.required and not any(word in folded for word in self.required):
            return None
        return self.folded, folded

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        target = self._target(text)
        return target[0].search(target[1], pos) if target else None

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        target = self._target(text)
        return target[0].match(target[1], pos) if target else None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        target = self._target(text)
        return target[0].finditer(target[1]) if target else iter(())

    def sub(self, replacement: str, text: str) -> str:
        """Every match replaced by `replacement` (a plain string, no group references)."""
        pieces: list[str] = []
        last = 0
        for match in self.finditer(text):
            pieces.append(text[last:match.start()])
            pieces.append(replacement)
            last = match.end()
        if not pieces:
            return text
        pieces.append(text[last:])
        return "".join(pieces)


# -- unified diffs of two texts (the model builds one for a file written whole) -----------


def make_diff(path: str, before: str, after: str, *, created: bool = False,
              deleted: bool = False, context: int = 3) -> str:
    """A unified diff of two texts, with git-style headers unidiff understands."""
    old_name = "/dev/null" if created else f"a/{path}"
    new_name = "/dev/null" if deleted else f"b/{path}"
    if not before:
        return _added_text_diff(old_name, new_name, after.splitlines(keepends=True))
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        old_name, new_name, n=context,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _added_text_diff(old_name: str, new_name: str, lines: list[str]) -> str:
    """What difflib.unified_diff gives for text written into an empty one (one hunk adding
    every line), built directly: the sequence matcher costs more than the rest of reading a
    session's new files."""
    if not lines:
        return ""
    span = "1" if len(lines) == 1 else f"1,{len(lines)}"
    out = [f"--- {old_name}\n+++ {new_name}\n@@ -0,0 +{span} @@\n"]
    for line in lines:
        out.append("+" + line if line.endswith("\n") else "+" + line + "\n\\ No newline at end of file\n")
    return "".join(out)


# Chinese, Japanese and Korean text has no spaces between words: count its characters.
_CJK = compile_later(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def word_count(text: str) -> int:
    """Words in a text, for any script: space-separated words, plus one word per two CJK
    characters (a Chinese or Japanese word averages about two characters)."""
    cjk = len(_CJK.findall(text))
    if not cjk:
        return len(text.split())
    return len(_CJK.sub(" ", text).split()) + (cjk + 1) // 2
