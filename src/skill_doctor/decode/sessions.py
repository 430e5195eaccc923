"""Files that hold several sessions one after another, as one transcript per session.

Aider appends every session to `.aider.chat.history.md` (each opened by `# aider chat
started at`), SpecStory can save several chats (each with its own id) in one file, and a Gemini
stream log can hold several runs. Decoders mark where each session begins
(`TranscriptBuilder.session_start`); `split` cuts the decoded transcript there. `report` grades
the last session (`last`) and says how many the file holds; `check` and `batch` grade every
session as its own, with its own id.
"""

from __future__ import annotations

import dataclasses
import os

from ..model import Transcript


def split(transcript: Transcript) -> list[Transcript]:
    """One transcript per session the file holds (the transcript itself when it holds one)."""
    starts = transcript.session_starts
    if len(starts) < 2:
        return [transcript]
    turns = transcript.turns
    segments = []
    for position, (first, sid, started) in enumerate(starts):
        end = starts[position + 1][0] - 1 if position + 1 < len(starts) else len(turns)
        part = turns[first - 1:end]
        if position == 0 and first > 1:
            part = turns[:end]  # turns before the first marker belong to the first session
        if part:
            segments.append((part, sid, started))
    if len(segments) < 2:
        return [dataclasses.replace(transcript, session_starts=())]
    base = transcript.session_id or os.path.splitext(os.path.basename(transcript.source))[0] \
        or "session"
    count = len(segments)
    # Each session's own id when the file gives every session a distinct one, else the
    # file's id (or name) with the session's number.
    ids = [sid for _, sid, _ in segments]
    own_ids = all(ids) and len(set(ids)) == count
    out = []
    for number, (part, sid, started) in enumerate(segments, start=1):
        renumbered = tuple(t.replace(index=i) for i, t in enumerate(part, start=1))
        stamps = sorted(s for s in [started, *(t.timestamp for t in part)] if s)
        last = number == count
        out.append(dataclasses.replace(
            transcript, turns=renumbered,
            session_id=sid if own_ids else f"{base}#{number}",
            started_at=stamps[0] if stamps else None, ended_at=stamps[-1] if stamps else None,
            part=(number, count), session_starts=(),
            # Where parsing stopped is past every turn decoded: it belongs to the last session.
            problem=transcript.problem if last else None,
            notes=(*transcript.notes, f"this file holds {count} sessions one after another; "
                                      f"this is session {number} of {count}")))
    return out


def last(transcript: Transcript) -> Transcript:
    """The last session of a file that holds several (what `report` grades), else the file."""
    return split(transcript)[-1]
