"""asciinema terminal recordings (`.cast`, asciicast v2 and v3): a container, not a harness.

A recording is JSON Lines: a header object (`{"version": 2, "width", "height", "timestamp"}`,
or v3's `{"version": 3, "term": {"cols", "rows"}, ...}`), then one `[time, code, data]` event
per line: `o` output written to the terminal, `i` typed input, `m` markers, `r` resizes and
v3's `x` exit status. v2 times are seconds since the start; v3 times are intervals since the
previous event, and v3 allows `#` comment lines.

Concatenating the `o` data rebuilds the byte stream the terminal saw; that stream is what the
agent printed, so it is sniffed again: JSON records in it (a headless `claude -p
--output-format stream-json` run prints one per line, among the harness's setup commands and
the client's debug lines) go to the JSON decoder that claims them, anything else to the
plain-text front end (mini-swe-agent and OpenHands terminal sessions). A recording of a shell
with no agent in it becomes one shell call per typed command, with the output it printed.

What the container adds to the inner turns: the time of the event that printed each turn's
first line as its timestamp (when the inner format has none), the line of that event in the
`.cast` file as the turn's source line (so findings cite the recording), and the task typed on
the agent's command line (`claude -p '...'`) as the first user turn when the stream has none.
An agent command that failed to start (`bash: claude: command not found`) leaves a session
that is too short, with that reason.

Hostile input: events are read one line at a time (a line over the JSONL limit is skipped
without being held), a malformed event is counted and skipped, and only the first
`MAX_OUTPUT_CHARS` of output are kept (with a note).
"""

from __future__ import annotations

import bisect
import dataclasses
import importlib
import io
import json
import re
import shlex
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO

from ..patterns import compile_later
from ..model import ParseProblem, Role
from .builder import TranscriptBuilder
from .started import ACTIVITY, start_failure
from .jsonl import _ORJSON_MAX_OPENERS, MAX_LINE_BYTES, _orjson, parse

HARNESS = "asciicast"

MAX_OUTPUT_CHARS = 32 * 1024 * 1024
_BATCH_BYTES = 4 * 1024 * 1024  # events parsed per call into the JSON parser
MAX_TYPED_CHARS = 1024 * 1024  # of one typed command line; the rest is dropped
_HEADER = compile_later(r'\A\s*\{[^\n]*"version"\s*:\s*([23])\b')
_HEADER_SIZE = compile_later(r'"(?:width|height|term)"\s*:')
_EVENT = compile_later(r'^\[\s*-?[\d.eE+-]+\s*,\s*"[a-z]"', re.MULTILINE)
# What the terminal shows that is no part of the stream: CSI and OSC sequences, charset and
# keypad switches. None of them spans a line end, so line numbers survive stripping.
_ANSI = compile_later(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?"
                   r"|\x1b[()][0-9A-Za-z]|\x1b[=>78cDEHM]")
# Agents whose task is an argument of their command line, and the options that carry it.
_AGENT_TASK_OPTIONS = {
    "claude": ("-p", "--print"),
    "mini": ("-t", "--task"),
    "mini-swe-agent": ("-t", "--task"),
    "aider": ("-m", "--message"),
    "openhands": ("-t", "--task"),
    "gemini": ("-p", "--prompt"),
    "codex": ("exec",),
}


def sniff(head: str) -> bool:
    match = _HEADER.match(head)
    if not match:
        return False
    first_line = head.lstrip().split("\n", 1)[0]
    return bool(_HEADER_SIZE.search(first_line)) and (
        bool(_EVENT.search(head)) or "\n" not in head.strip())


@dataclasses.dataclass
class _Recording:
    """The events of one recording, reduced to what decoding needs."""

    version: int = 2
    start: float | None = None  # unix seconds of the first event's clock
    output: list[str] = dataclasses.field(default_factory=list)
    # Per output event: newlines before it, its line in the .cast, its time.
    newlines_before: list[int] = dataclasses.field(default_factory=list)
    event_lines: list[int] = dataclasses.field(default_factory=list)
    event_times: list[float] = dataclasses.field(default_factory=list)
    commands: list[tuple[str, int, float, int]] = dataclasses.field(default_factory=list)
    bad_events: int = 0
    cut: bool = False
    exit_status: str | None = None


def decode(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    rec, problem = _read(stream)
    if problem is not None:
        b = TranscriptBuilder(str(path), HARNESS)
        b.problem = problem
        return b
    raw = "".join(rec.output)
    rec.output = []
    b = _inner(path, raw)
    _with_recording_times(b, rec)
    b = _with_typed_task(b, rec, raw)
    if rec.bad_events:
        b.note(f"{rec.bad_events} event(s) of the recording were malformed and skipped")
    if rec.cut:
        b.note(f"only the first {MAX_OUTPUT_CHARS // (1024 * 1024)} MiB of the recording's "
               f"output were read")
    b.extra["recording"] = f"asciicast v{rec.version}"
    if rec.exit_status is not None:
        b.extra["exit_status"] = rec.exit_status
    return b


# -- reading events ------------------------------------------------------------------------

def _read(stream: BinaryIO) -> tuple[_Recording, ParseProblem | None]:
    rec = _Recording()
    header_line = stream.readline(MAX_LINE_BYTES)
    try:
        header = parse(header_line)[0] if header_line else None
    except (ValueError, RecursionError, TypeError):
        header = None
    if not isinstance(header, dict):
        return rec, ParseProblem(message="the recording's header is not a JSON object", line=1)
    rec.version = 3 if header.get("version") == 3 else 2
    stamp = header.get("timestamp")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        rec.start = float(stamp)
    state = _EventState()
    v3 = rec.version == 3
    output, newlines_before = rec.output, rec.newlines_before
    event_lines, event_times = rec.event_lines, rec.event_times
    for lineno, event in _events(stream, rec):
        # The common event, output text, handled inline: a recording has tens of thousands.
        if (type(event) is list and len(event) == 3 and event[1] == "o"
                and type(event[2]) is str and type(event[0]) in (float, int)):
            data = event[2]
            state.clock = state.clock + event[0] if v3 else float(event[0])
            if state.size + len(data) > MAX_OUTPUT_CHARS:
                rec.cut = True
                continue
            state.size += len(data)
            output.append(data)
            newlines_before.append(state.newlines)
            event_lines.append(lineno)
            event_times.append(state.clock)
            state.newlines += data.count("\n")
            continue
        _event(rec, state, lineno, event)
    if state.typed:
        rec.commands.append(("".join(state.typed), *(state.typed_at or (0, state.clock)),
                             len(rec.output)))
    return rec, None


@dataclasses.dataclass
class _EventState:
    clock: float = 0.0
    newlines: int = 0
    size: int = 0
    typed: list[str] = dataclasses.field(default_factory=list)
    typed_chars: int = 0  # length of `typed`, kept so a flood of keystrokes stays linear
    typed_at: tuple[int, float] | None = None


def _events(stream: BinaryIO, rec: _Recording):
    """(line number, event) of every well-formed event after the header, in order.

    The file is read a chunk at a time and its events parsed a batch at a time, as one JSON
    array (one call into the parser for thousands of lines); a batch holding a malformed line
    is parsed line by line instead, so the bad line is counted and skipped and the others are
    kept. A line longer than the JSONL limit is read past without being held.
    """
    lineno = 1
    carry = b""
    skipping = False  # inside a line longer than the limit
    while True:
        chunk = stream.read(_BATCH_BYTES)
        if not chunk:
            break
        parts = chunk.split(b"\n")
        if skipping:
            if len(parts) == 1:
                continue
            parts = parts[1:]
            lineno += 1
            rec.bad_events += 1
            skipping = False
        parts[0] = carry + parts[0]
        carry = parts.pop()
        batch = []
        for raw in parts:
            lineno += 1
            if len(raw) > MAX_LINE_BYTES:
                rec.bad_events += 1
                continue
            raw = raw.strip()
            if raw and raw[0] != 0x23:  # `#` starts a v3 comment
                batch.append((lineno, raw))
        if len(carry) > MAX_LINE_BYTES:
            carry, skipping = b"", True
        yield from _parse_batch(batch, rec)
    if skipping:
        rec.bad_events += 1
    elif carry.strip() and not carry.strip().startswith(b"#"):
        yield from _parse_batch([(lineno + 1, carry.strip())], rec)


def _parse_batch(batch: list[tuple[int, bytes]], rec: _Recording):
    if not batch:
        return
    try:
        values = _loads_array([raw for _, raw in batch])
    except (ValueError, RecursionError):
        values = None
    if isinstance(values, list) and len(values) == len(batch):
        for (lineno, _), value in zip(batch, values):
            yield lineno, value
        return
    for lineno, raw in batch:
        try:
            yield lineno, parse(raw)[0]
        except (ValueError, RecursionError, TypeError):
            rec.bad_events += 1


def _loads_array(lines: list[bytes]) -> object:
    """A batch of event lines as one JSON array. orjson, when installed, reads it only when no
    line has more brackets than the JSON reader lets orjson see (it has no nesting limit of
    its own); it refuses invalid UTF-8 by raising, and the batch is then read line by line."""
    data = b"[" + b",".join(lines) + b"]"
    if _orjson is not None and all(raw.count(b"[") + raw.count(b"{") <= _ORJSON_MAX_OPENERS
                                   for raw in lines):
        return _orjson.loads(data)
    return json.loads(data)


def _event(rec: _Recording, state: _EventState, lineno: int, event: object) -> None:
    if not (isinstance(event, list) and len(event) >= 3 and isinstance(event[1], str)
            and isinstance(event[0], (int, float)) and not isinstance(event[0], bool)):
        rec.bad_events += 1
        return
    moment, code, data = event[0], event[1], event[2]
    state.clock = state.clock + moment if rec.version == 3 else float(moment)
    if not isinstance(data, str):
        if code == "x":
            rec.exit_status = str(data)[:40]
        else:
            rec.bad_events += 1
        return
    if code == "o":
        if state.size + len(data) > MAX_OUTPUT_CHARS:
            rec.cut = True
            return
        state.size += len(data)
        rec.output.append(data)
        rec.newlines_before.append(state.newlines)
        rec.event_lines.append(lineno)
        rec.event_times.append(state.clock)
        state.newlines += data.count("\n")
    elif code == "i":
        # Typed input: keystrokes up to Enter (\r) make one command line.
        for piece in re.split(r"(\r)", data):
            if piece == "\r":
                if state.typed:
                    rec.commands.append(("".join(state.typed),
                                         *(state.typed_at or (lineno, state.clock)),
                                         len(rec.output)))
                state.typed, state.typed_chars, state.typed_at = [], 0, None
            elif piece:
                if state.typed_at is None:
                    state.typed_at = (lineno, state.clock)
                if state.typed_chars < MAX_TYPED_CHARS:
                    state.typed.append(piece)
                    state.typed_chars += len(piece)
    elif code == "x":
        rec.exit_status = data[:40]


# -- the inner stream ----------------------------------------------------------------------

def _inner(path: Path, raw: str) -> TranscriptBuilder:
    """The rebuilt output, decoded by whichever decoder claims it (not built yet)."""
    from . import sniff as sniff_json  # the package's sniffer over every JSON decoder

    text = _ANSI.sub("", raw).replace("\r\n", "\n")
    json_lines = []
    found = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("{") and stripped.endswith("}"):
            json_lines.append(stripped)
            found += 1
        else:
            json_lines.append("")  # keep line numbers: decoders skip blank lines silently
    if found:
        head = "\n".join(line for line in json_lines if line)[:64 * 1024]
        module = sniff_json(head)
        if module is not None and module.__name__.rpartition(".")[2] != "asciicast":
            data = "\n".join(json_lines).encode("utf-8", errors="replace")
            return module.decode(path, io.BytesIO(data))
    plaintext = importlib.import_module(f"{__package__}.plaintext")
    return plaintext.decode(path, io.BytesIO(raw.encode("utf-8", errors="replace")))


def _iso(seconds: float) -> str | None:
    try:
        moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _event_for_line(rec: _Recording, line: int) -> int | None:
    """Index of the output event in which inner line `line` (1-based) begins."""
    if not rec.newlines_before or line < 1:
        return None
    return max(0, bisect.bisect_right(rec.newlines_before, line - 1) - 1)


def _with_recording_times(b: TranscriptBuilder, rec: _Recording) -> None:
    """Turn lines point at the recording's events; event times fill missing timestamps."""
    def change(turn: dict) -> None:
        event = _event_for_line(rec, turn.get("line") or 0)
        if event is None:
            return
        turn["line"] = rec.event_lines[event]
        turn["column"] = 1
        if turn.get("timestamp") is None and rec.start is not None:
            turn["timestamp"] = _iso(rec.start + rec.event_times[event])
            b.seen_time(turn["timestamp"])

    b.remap(change)


def agent_task(command: str) -> tuple[str, str] | None:
    """(agent, task) when a typed command line starts an agent with its task as an argument."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for position, word in enumerate(words):
        agent = word.rsplit("/", 1)[-1]
        options = _AGENT_TASK_OPTIONS.get(agent)
        if options is None:
            continue
        rest = words[position + 1:]
        for i, arg in enumerate(rest[:-1]):
            if arg in options and not rest[i + 1].startswith("-"):
                return agent, rest[i + 1]
            if arg.split("=", 1)[0] in options and "=" in arg:
                return agent, arg.split("=", 1)[1]
        return agent, ""
    return None


def _with_typed_task(b: TranscriptBuilder, rec: _Recording, raw: str) -> TranscriptBuilder:
    """Add the task typed on the agent's command line when the stream has no request, and say
    why a recording whose agent never ran has no turns."""
    launch = None
    for command, line, moment, outputs_before in rec.commands:
        found = agent_task(command)
        if found:
            launch = (found, line, moment, outputs_before)
    if launch is None:
        if not b.has_work and rec.commands:
            return _shell_session(b, rec, raw)
        return b
    (agent, task), line, moment, outputs_before = launch
    if task.strip() and not b.has_request:
        b.retain(lambda d: d.get("meta") != "request-unknown")
        b.drop_notes("the request is unknown")
        b.user(task, line=line, first=True,
               timestamp=_iso(rec.start + moment) if rec.start is not None else None)
        if rec.start is not None:
            b.seen_time(_iso(rec.start + moment))
    if not b.has_work:
        after = _ANSI.sub("", _output_after(rec, raw, outputs_before))
        failure = start_failure(after)
        ran = ACTIVITY.search(after) is not None  # the harness's own progress lines
        if failure:
            b.not_started = failure
            b.drop_notes("the agent never started", "the capture shows no agent")
            b.note(f"the agent never started: {b.not_started}")
            b.problem = None
            b.not_a_transcript = False
            first_request = [True]

            def keep(d: dict) -> bool:  # the typed task, and nothing a failed start printed
                if d["role"] is Role.USER and d.get("meta") is None and first_request[0]:
                    first_request[0] = False
                    return True
                return False
            b.retain(keep)
        elif not b.not_started and (b.problem is None or ran):
            lines = [line for line in after.split("\n") if line.strip()]
            if ran:
                # The harness logged its own progress (state changes, one line per action)
                # but not the actions: the agent ran, and this log cannot show what it did.
                b.not_a_transcript = False
                b.problem = ParseProblem(
                    message=f"the agent ({agent}) ran, but its turns are not in the recording: "
                            f"after its command line it printed {len(lines)} lines of its "
                            f"harness's own log (state changes, actions counted), not the "
                            f"actions' commands and outputs", line=line, column=1)
            else:
                b.problem = ParseProblem(
                    message=f"the agent ({agent}) was started, but none of its turns are in "
                            f"the recording: after its command line it printed {len(lines)} "
                            f"lines that no decoder reads", line=line, column=1)
    return b


def _output_after(rec: _Recording, raw: str, outputs_before: int) -> str:
    """The output printed after the output event `outputs_before` (bounded to 64 KiB)."""
    if outputs_before >= len(rec.newlines_before):
        return ""
    lines = raw.split("\n")
    first = rec.newlines_before[outputs_before]
    return "\n".join(lines[first:first + 2000])[:64 * 1024]


def _shell_session(inner: TranscriptBuilder, rec: _Recording, raw: str) -> TranscriptBuilder:
    """A recording of a plain shell: each typed command a shell call with what it printed."""
    b = TranscriptBuilder(inner.source, "shell-recording")
    text = _ANSI.sub("", raw).replace("\r\n", "\n")
    lines = text.split("\n")
    bounds = [rec.newlines_before[c[3]] if c[3] < len(rec.newlines_before) else len(lines)
              for c in rec.commands] + [len(lines)]
    for i, (command, line, moment, _) in enumerate(rec.commands):
        command = command.strip()
        if not command or command in ("\x04", "exit"):
            continue
        output_lines = lines[bounds[i]:bounds[i + 1]]
        if output_lines and command in output_lines[0]:
            output_lines = output_lines[1:]  # the shell's echo of the typed line
        if output_lines and _looks_like_prompt(output_lines[-1]):
            output_lines = output_lines[:-1]
        stamp = _iso(rec.start + moment) if rec.start is not None else None
        b.tool("Bash", {"command": command}, "\n".join(output_lines).strip("\n"), line=line,
               timestamp=stamp)
    b.note("a shell recording: no agent ran in it; each typed command is a shell call")
    return b


def _looks_like_prompt(line: str) -> bool:
    return bool(re.match(r"^\S+@\S+:.*[#$] ?$|^[$#>] ?$", line.strip()))
