"""facts.reads: which part of a file each read showed, and the reads that showed nothing new."""

from __future__ import annotations

import bisect
from typing import Mapping

from ..patterns import compile_later
from ..model import Turn
from ..text import harness_cut


def whole_if_shorter(window: tuple, turn: Turn) -> tuple:
    """A read of the first N lines that printed fewer than N showed the whole file (`head -10`
    of an 8-line file): a later `cat` of it shows nothing new."""
    if len(window) != 3 or window[0] != 1 or not isinstance(window[1], int):
        return window
    output = turn.tool_output or ""
    if not output.strip() or turn.output_length > len(output):
        return window  # nothing printed, or the log kept only part of what was
    if output.count("\n") + (not output.endswith("\n")) < window[1]:
        return (1, None, window[2])
    return window


def repeated_reads(turns: tuple[Turn, ...], reads: list[tuple[int, str]],
                    read_windows: Mapping[tuple[int, str], tuple],
                    changed: list[tuple[int, str]]) -> tuple[tuple[int, str, int], ...]:
    """(turn, path, earlier turn) for each read of a part of a file already read since the
    file last changed: the same tool window again, or a line range inside an earlier one
    (`nl -ba f | sed -n '1,200p'` after `sed -n '1,240p' f`: numbering lines shows nothing
    new). Reads whose range the log does not keep are never repeats, nor are reads after a
    compaction of what was read before it (the model no longer has it) or after the task was
    resumed (the project may have changed meanwhile). A read whose output
    the harness cut ("[... output truncated to fit 10240 bytes ...]") showed only part of
    its window: reading that part again is no repeat."""
    changes: dict[str, list[int]] = {}
    for turn, path in changed:
        changes.setdefault(path, []).append(turn)
    for edit_turns in changes.values():
        edit_turns.sort()
    since_change: dict[str, list[tuple[int, tuple]]] = {}
    repeats: list[tuple[int, str, int]] = []
    # After a compaction the model no longer has what it read; after a resumption (Cline's
    # "[TASK RESUMPTION] ... the project state may have changed") the files may not be the same.
    compactions = [t.index for t in turns if t.meta in ("compaction", "resumption")]
    next_compaction = 0
    by_index = {t.index: t for t in turns} if reads else {}
    for turn, path in reads:
        if next_compaction < len(compactions) and compactions[next_compaction] < turn:
            since_change.clear()
            while next_compaction < len(compactions) and compactions[next_compaction] < turn:
                next_compaction += 1
        window = read_windows.get((turn, path))
        earlier = since_change.setdefault(path, [])
        edits = changes.get(path, ())
        i = bisect.bisect_left(edits, turn)
        if earlier and i and edits[i - 1] > earlier[0][0]:
            # What was read before the file last changed shows it no more.
            last_change = edits[i - 1]
            earlier[:] = [(t, w) for t, w in earlier if t > last_change]
        if window is None:
            continue
        seen = next((t for t, w in earlier if _covers(w, window)), None)
        if seen is not None:
            repeats.append((turn, path, seen))
        else:
            read = by_index.get(turn)
            if read is not None and harness_cut(read.tool_output or ""):
                continue  # the harness cut what it printed: part of the window is still unread
            earlier.append((turn, window))
            if len(earlier) > _WINDOWS_KEPT:
                del earlier[0]  # a file read a few lines at a time, thousands of times
    return tuple(repeats)


_WINDOWS_KEPT = 32  # distinct parts of one file remembered as read (bounds the cost per read)


def _covers(earlier: tuple, window: tuple) -> bool:
    """Whether a read's window shows nothing an earlier one did not: equal, or a shell line
    range (first, last or None, numbered) inside an earlier one."""
    if earlier == window:
        return True
    if len(earlier) != 3 or len(window) != 3 or not all(
            isinstance(w[0], int) for w in (earlier, window)):
        return False
    first, last, _ = earlier
    start, end, _ = window
    return first <= start and (last is None or (end is not None and end <= last))


# A line of a numbered read (Claude Code's Read: "    12→text", older versions a tab).
_NUMBERED_LINE = compile_later(r" *(\d+)[→\t](.*)")


def numbered_text(turn: Turn) -> str | None:
    """The whole file a numbered read showed, or None when the log kept only part of it, the
    lines are not numbered 1, 2, 3 ... to the end, or the read failed."""
    output = turn.tool_output or ""
    if not output or turn.output_length > len(output) or turn.is_error or harness_cut(output):
        return None  # the log kept part of it, the read failed, or the harness cut lines
    lines = []
    for number, line in enumerate(output.split("\n"), 1):
        match = _NUMBERED_LINE.fullmatch(line)
        if match is None:
            # What a harness appends after the file (a blank line, a <system-reminder>).
            if not line.strip() or line.lstrip().startswith("<"):
                break
            return None
        if int(match.group(1)) != number:
            return None
        lines.append(match.group(2))
    if not lines:
        return None
    return "\n".join(lines)


# Range parameters of the read tools of every harness (Read offset/limit, view_range ...).
_RANGE_KEYS = ("offset", "limit", "start_line", "end_line", "view_range", "line_number",
               "startLine", "endLine", "start_line_one_indexed", "end_line_one_indexed_inclusive",
               "line_range", "lines")


def input_window(turn: Turn) -> tuple | None:
    """The part of the file a read tool asked for, from its input.

    No range asked means the whole file, when the output shows what came back; with neither
    a range nor an output (exports that keep only "Read file: X"), the part read is unknown.
    """
    inp = turn.tool_input or {}
    asked = tuple((key, _hashable(inp[key])) for key in _RANGE_KEYS if inp.get(key) is not None)
    if asked:
        return asked
    return ("whole",) if turn.tool_output or turn.output_length else None


def _hashable(value: object) -> object:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    return value
