"""Small text helpers shared by decoders, detectors and the report."""

from __future__ import annotations

# Texts past these sizes are kept as head and tail only (with the full length recorded on
# the turn), so memory per turn is bounded whatever a tool printed or an agent wrote.
KEEP_CHARS = 16 * 1024  # user and assistant messages
OUTPUT_CHARS = 4 * 1024  # tool output: its head and its tail (where test summaries are)
SMALL_CHARS = 1024  # tool input values, shown or matched only by their beginning


def clip(text: str, limit: int = KEEP_CHARS) -> str:
    """Keep the head (three quarters) and tail (one quarter) of a long text, marking the cut."""
    if len(text) <= limit:
        return text
    head, tail = limit * 3 // 4, limit // 4
    return f"{text[:head]}\n[... {len(text) - head - tail} characters not kept ...]\n{text[-tail:]}"


def clip_small(text: str) -> str:
    return clip(text, SMALL_CHARS)


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
