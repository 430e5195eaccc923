"""Small text helpers shared by decoders, detectors and the report."""

from __future__ import annotations

# A turn's text past this many characters is kept as head and tail only, with its full length
# recorded, so memory stays bounded whatever a tool printed.
KEEP_CHARS = 16 * 1024
_HALF = KEEP_CHARS // 2


def clip(text: str) -> str:
    """Keep head and tail of a long text, marking what was dropped."""
    if len(text) <= KEEP_CHARS:
        return text
    dropped = len(text) - 2 * _HALF
    return f"{text[:_HALF]}\n[... {dropped} characters not kept ...]\n{text[-_HALF:]}"


SMALL_CHARS = 2 * 1024


def clip_small(text: str) -> str:
    """Like `clip`, for values only ever shown or matched by their beginning (tool inputs)."""
    if len(text) <= SMALL_CHARS:
        return text
    head, tail = SMALL_CHARS * 3 // 4, SMALL_CHARS // 4
    return f"{text[:head]}\n[... {len(text) - head - tail} characters not kept ...]\n{text[-tail:]}"


def excerpt(text: str, limit: int = 240) -> str:
    """A one-paragraph excerpt: whitespace folded, cut at `limit` characters with an ellipsis."""
    folded = " ".join(text.split())
    if len(folded) <= limit:
        return folded
    return folded[: limit - 1].rstrip() + "…"


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
