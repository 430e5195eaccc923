"""Small text helpers shared by decoders, detectors and the report."""

from __future__ import annotations

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


def clip(text: str, limit: int = KEEP_CHARS) -> str:
    """Keep the head (three quarters) and tail (one quarter) of a long text, marking the cut.
    The cut falls between words, so no part of a secret is kept without the rest of it."""
    if len(text) <= limit:
        return text
    head = _head_end(text, limit * 3 // 4)
    tail = _tail_start(text, len(text) - limit // 4)
    return f"{text[:head]}\n[... {tail - head} characters not kept ...]\n{text[tail:]}"


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
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
