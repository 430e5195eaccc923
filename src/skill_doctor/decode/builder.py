"""TranscriptBuilder: what every decoder uses to emit turns in order.

Decoders push user text, assistant text, tool calls and tool results as they stream through a
file; the builder numbers turns, pairs each result with its call by id (so a call and its
result are one tool turn, at the position of the call), classifies tools and derives edits,
and counts what was kept out of the turn list. Nothing here knows any harness.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any, Callable, Mapping

import orjson

from .. import spill as spill_mod, tools
from ..model import FileEdit, ParseProblem, Role, ToolKind, Transcript, Turn, UsageLog
from ..text import OUTPUT_CHARS, SMALL_CHARS, clip, clip_output, clip_small, cut

_LIST_ITEMS = 64  # items kept of a list inside a tool input
# Record kinds and notes often quote a field of the file; a retyped field can be megabytes.
_SKIP_KEY_CHARS = 80
_NOTE_CHARS = 400
_COMMAND_KEYS = ("command", "cmd")
# Once the turns so far hold this many characters of message text, tool output and edits, the
# session's texts go to a spill file (see `spill`) instead of memory: a session of a few
# megabytes never makes one; in a longer one, memory no longer grows with what tools printed.
SPILL_AFTER_CHARS = 16 * 2**20


def compact(value: Any, key: str | None = None, depth: int = 0) -> Any:
    """A tool input with every long string kept as head and tail, and lists and depth bounded.

    Detectors need the shape and the beginning of each value (paths, commands, patterns),
    never whole file contents, which can be megabytes per call.
    """
    if isinstance(value, str):
        return clip(value, OUTPUT_CHARS) if key in _COMMAND_KEYS else clip_small(value)
    if depth > 8:
        return "[...]"
    if isinstance(value, dict):
        for v in value.values():
            if type(v) is str:
                if len(v) > SMALL_CHARS:
                    break
            elif isinstance(v, (dict, list, tuple)):
                break
        else:
            return value  # the common case: a few short scalars, nothing to bound
        return {str(k): compact(v, str(k), depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [compact(v, key, depth + 1) for v in value[:_LIST_ITEMS]]
        if len(value) > _LIST_ITEMS:
            items.append(f"[... {len(value) - _LIST_ITEMS} more items]")
        return items
    return value


_MAX_COUNT = 10**15


def _count(value: Any) -> int:
    """A token count from the file: a whole number >= 0 (bounded), anything else 0."""
    if type(value) is int and 0 <= value <= _MAX_COUNT:  # the common case, answered first
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if value != value or value < 0 or value > 10**15:  # NaN, negative or absurd
        return 0
    return int(value)


_ERROR_STATUSES = frozenset({"error", "failed", "failure", "fail"})


def _reports_error(output: str) -> bool:
    """Whether a tool's output is a JSON object that says the call failed: an MCP server or
    API tool answering `{"status": "error", ...}` or `{"isError": true, ...}` while the
    harness logged the call as a success. A program's printed output is no such verdict."""
    if not output.startswith("{") or len(output) > 64 * 1024 or '"' not in output[:40]:
        return False
    try:  # orjson refuses deep nesting instead of recursing; hostile outputs stay harmless
        value = orjson.loads(output)
    except (ValueError, RecursionError):
        return False
    if not isinstance(value, dict):
        return False
    status = value.get("status")
    return (isinstance(status, str) and status.lower() in _ERROR_STATUSES) or \
        value.get("isError") is True or value.get("success") is False


class Draft:
    """A turn being built, read and set like a dict (which is how decoders' `remap` and
    `retain` callbacks see it); a field not known yet holds Turn's default (None for the
    output and the kind until the call is answered and finished).

    A slotted object rather than a dict: every turn of the session is a draft until `build`,
    180,000 at once at 1 GB, and a dict of a dozen keys takes two and a half times the memory.
    """

    __slots__ = ("role", "content", "tool_name", "tool_input", "tool_output", "is_error",
                 "exit_code", "timestamp", "line", "column", "meta", "kind", "paths", "edits",
                 "output_length", "via_shell", "command", "merge_key")

    def __init__(self, role: Role, content: str = "", tool_name: str | None = None,
                 tool_input: Any = None, timestamp: str | None = None, line: int = 0,
                 column: int = 1, meta: str | None = None, merge_key: str | None = None) -> None:
        self.role = role
        self.content = content
        self.tool_name = tool_name
        self.tool_input = tool_input
        self.tool_output: Any = None
        self.is_error = False
        self.exit_code: int | None = None
        self.timestamp = timestamp
        self.line = line
        self.column = column
        self.meta = meta
        self.kind: ToolKind | None = None
        self.paths: tuple[str, ...] = ()
        self.edits: tuple[FileEdit, ...] = ()
        self.output_length = 0
        self.via_shell = False
        self.command: str | None = None
        self.merge_key = merge_key

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    __setitem__ = object.__setattr__  # a misspelt field is an error, not a new key

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)

    def update(self, **fields: Any) -> None:
        for key, value in fields.items():
            setattr(self, key, value)

    def turn(self, index: int, spill: Any) -> Turn:
        return Turn(index, self.role, self.content, self.tool_name, self.tool_input,
                    self.tool_output, self.is_error, self.exit_code, self.timestamp, self.line,
                    self.column, self.meta, self.kind, self.paths, self.edits,
                    self.output_length, self.via_shell, self.command, spill)


class TranscriptBuilder:
    def __init__(self, source: str, harness: str) -> None:
        self.source = source
        self.harness = harness
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.model: str | None = None
        self.started_at: str | None = None
        self.ended_at: str | None = None
        self.problem: ParseProblem | None = None
        self.not_a_transcript = False
        self.extra: dict[str, str] = {}
        self._turns: list[Draft] = []
        self._open_calls: dict[str, Draft] = {}
        self._last_text: dict[str, str] = {}  # path -> its whole text after the latest edit
        self._latest_edit: dict[str, tuple[Draft, int]] = {}  # path -> (draft, position)
        self._notes: list[str] = []
        self._skipped: Counter[str] = Counter()
        self._usage = UsageLog()  # tokens per model call, first-seen order
        self._usage_at: dict[str, int] = {}  # key (API message id ...) -> its row
        # Set by decoders whose harness answers every call it runs (Claude Code): a call left
        # without a result while later calls got theirs was only announced, never run.
        self.drop_unanswered_calls = False
        self._session_starts: list[tuple[Draft | None, str | None, str | None]] = []
        self.not_started: str | None = None  # why the agent never ran, when the log says
        self.headless = False  # a run no one took part in (see Transcript.headless)
        self._held_chars = 0  # texts held in memory by the turns so far (until they spill)
        self._spill: spill_mod.Spill | None = None
        self._spill_failed = False

    # -- what decoders call -------------------------------------------------------------

    def seen_time(self, timestamp: Any) -> None:
        """Record a record's timestamp for the session's start and end."""
        if isinstance(timestamp, str) and timestamp:
            if self.started_at is None or timestamp < self.started_at:
                self.started_at = timestamp
            if self.ended_at is None or timestamp > self.ended_at:
                self.ended_at = timestamp

    def user(self, text: str, *, line: int = 0, column: int = 1, timestamp: str | None = None,
             meta: str | None = None, first: bool = False) -> None:
        """User text; `first` puts it before every turn so far (a request learnt at the end)."""
        fields = dict(role=Role.USER, content=clip(text), line=line, column=column,
                      timestamp=timestamp, meta=meta)
        if first:
            self._turns.insert(0, Draft(**fields))
            return
        self._add(**fields)

    @property
    def has_work(self) -> bool:
        """Whether anything but user text has been seen (an answer or a tool call)."""
        return any(d.role is not Role.USER and d.meta is None for d in self._turns)

    def drop_notes(self, *prefixes: str) -> None:
        """Withdraw notes a later finding made untrue (a container knows more than its content)."""
        self._notes = [n for n in self._notes if not n.startswith(prefixes)]

    @property
    def has_request(self) -> bool:
        """Whether a real (not injected) user message has been seen."""
        return any(d.role is Role.USER and d.meta is None for d in self._turns)

    def assistant(self, text: str, *, line: int = 0, column: int = 1,
                  timestamp: str | None = None, meta: str | None = None,
                  merge_key: str | None = None) -> None:
        """Assistant text. Consecutive pieces with the same `merge_key` (an API message id) join."""
        last = self._turns[-1] if self._turns else None
        if (merge_key and last is not None and last.role is Role.ASSISTANT
                and last.merge_key == merge_key):
            last.content = clip(f"{last['content']}\n\n{text}" if last.content else text)
            return
        self._add(role=Role.ASSISTANT, content=clip(text), line=line, column=column,
                  timestamp=timestamp, meta=meta, merge_key=merge_key)

    def tool_call(self, call_id: str | None, name: str | None, tool_input: Any, *,
                  line: int = 0, column: int = 1, timestamp: str | None = None,
                  meta: str | None = None) -> None:
        """A tool call; its result arrives later through `tool_result` with the same id."""
        if not isinstance(tool_input, dict):
            tool_input = {"input": tool_input} if tool_input not in (None, "") else {}
        if call_id and call_id in self._open_calls:
            # The id is issued again before any result came back: the earlier call was only
            # announced (a streaming proxy's preview of the calls), never run. It is dropped so
            # the session is not charged for calls that did not happen.
            self._drop(self._open_calls.pop(call_id))
        # Interned: a session names a handful of tools a hundred thousand times.
        turn = self._add(role=Role.TOOL, tool_name=sys.intern(str(name or "unknown")),
                         tool_input=dict(tool_input),
                         line=line, column=column, timestamp=timestamp, meta=meta)
        if call_id:
            self._open_calls[call_id] = turn

    def tool_result(self, call_id: str | None, output: str | None, *, is_error: bool = False,
                    exit_code: int | None = None, result: Mapping[str, Any] | None = None,
                    line: int = 0, timestamp: str | None = None) -> Draft:
        """The result of an earlier call. A result with no known call becomes its own tool turn.
        Returns the call's turn, for a decoder that later delivers more of its output."""
        turn = self._open_calls.pop(call_id, None) if call_id else None
        if turn is None:
            self._notes_once("tool results without a matching call")
            turn = self._add(role=Role.TOOL, tool_name="unknown", tool_input={}, line=line,
                             timestamp=timestamp)
        self._fill(turn, output, is_error, exit_code, result)
        return turn

    def later_output(self, turn: Draft, output: str, *, is_error: bool = False,
                     exit_code: int | None = None) -> None:
        """The output so far of a call whose program kept running after it returned (polled
        later for what it printed since, and how it ended): it replaces the turn's output, and
        its exit code and failure replace the turn's, so the call is one turn that ends as the
        program did rather than a run of polls."""
        turn.tool_output = clip_output(output, OUTPUT_CHARS)
        turn.output_length = len(output)
        turn.exit_code = exit_code
        turn.is_error = bool(is_error) or (exit_code not in (None, 0))

    def tool(self, name: str | None, tool_input: Any, output: str | None, *,
             is_error: bool = False, exit_code: int | None = None,
             result: Mapping[str, Any] | None = None, line: int = 0, column: int = 1,
             timestamp: str | None = None, meta: str | None = None) -> None:
        """A tool call whose result is known at once."""
        self.tool_call(None, name, tool_input, line=line, column=column, timestamp=timestamp,
                       meta=meta)
        self._fill(self._turns[-1], output, is_error, exit_code, result)

    def usage(self, key: str, *, turn: int | None = None, input: Any = 0, output: Any = 0,
              cache_read: Any = 0, cache_write: Any = 0, model: Any = None) -> None:
        """Tokens of one model call (see `model.Usage` for what each count means).

        `turn` defaults to the turn added next (call this before emitting the call's turns);
        a key seen again (one API message split over several lines repeats its usage) keeps
        the larger count of each kind, never the sum. Counts that are not whole numbers
        >= 0 read as 0.
        """
        # `_count`'s common case tested here first: every assistant line of a session logs
        # its counts, and the call per count was a fifth of reading them.
        counts = [v if type(v) is int and 0 <= v <= _MAX_COUNT else _count(v)
                  for v in (input, output, cache_read, cache_write)]
        if not any(counts):
            return
        model = sys.intern(str(model)) if isinstance(model, str) and model else None  # shared
        row = self._usage_at.get(key)
        if row is not None:
            self._usage.keep_larger(row, counts, model)
            return
        self._usage_at[key] = self._usage.add(self.turn_count + 1 if turn is None else turn,
                                              counts, model)

    def has_open_call(self, call_id: str) -> bool:
        return call_id in self._open_calls

    def open_call_name(self, call_id: str | None) -> str | None:
        """The tool name of the call still waiting for the result with this id."""
        draft = self._open_calls.get(call_id) if call_id else None
        return None if draft is None else draft.tool_name

    def session_start(self, session_id: str | None = None, started_at: str | None = None) -> None:
        """A new session begins here (files that append sessions: Aider, SpecStory, Gemini).

        Remembered by the turn that comes next, so later drops and inserts keep it in place.
        """
        self._session_starts.append((None, session_id, started_at))
        self._latest_edit = {}  # each session keeps its own first and latest text of a file

    def skip(self, what: str, count: int = 1) -> None:
        """Count a record kept out of the turn list (summaries, progress, sidechains ...)."""
        self._skipped[cut(what, _SKIP_KEY_CHARS)] += count

    def note(self, message: str) -> None:
        message = clip(message, _NOTE_CHARS)
        if message not in self._notes:
            self._notes.append(message)

    @property
    def turn_count(self) -> int:
        return len(self._turns)

    def remap(self, change: Callable[[Draft], None]) -> None:
        """Let a container decoder rewrite each turn's `line` and `timestamp` in place (a
        recording maps the lines of the stream it rebuilt back to its own events)."""
        for draft in self._turns:
            change(draft)

    def retain(self, keep: Callable[[Draft], bool]) -> None:
        """Keep only the turns `keep` accepts (read-only use of each turn's fields)."""
        self._turns = [d for d in self._turns if keep(d)]
        kept = {id(d) for d in self._turns}
        self._open_calls = {k: d for k, d in self._open_calls.items() if id(d) in kept}

    # -- result ---------------------------------------------------------------------------

    def build(self) -> Transcript:
        if self.drop_unanswered_calls and self._open_calls:
            self._drop_announced_calls()
        starts_by_draft = {id(d): (sid, start) for d, sid, start in self._session_starts
                           if d is not None}
        session_starts = []
        turns = []
        drafts = self._turns
        for index, draft in enumerate(drafts, start=1):
            if id(draft) in starts_by_draft:
                session_starts.append((index, *starts_by_draft[id(draft)]))
            if draft.role is Role.TOOL and draft.kind is None:
                self._finish_tool(draft)
            turns.append(draft.turn(index, self._spill))
            drafts[index - 1] = None  # free each draft as its Turn is made: bounded peak memory
        self._turns = []
        if self._open_calls:
            self.note(f"{len(self._open_calls)} tool call(s) never got a result")
        # A call logged after the last turn (or before any) is pinned to the nearest turn.
        usage, self._usage, self._usage_at = self._usage, UsageLog(), {}
        usage.pin(len(turns))
        return Transcript(
            source=self.source, harness=self.harness, turns=tuple(turns),
            session_id=self.session_id, started_at=self.started_at, ended_at=self.ended_at,
            cwd=self.cwd, model=self.model, notes=tuple(self._notes),
            skipped=tuple(sorted(self._skipped.items())), problem=self.problem,
            not_a_transcript=self.not_a_transcript, extra=tuple(sorted(self.extra.items())),
            usage=usage,
            session_starts=tuple(session_starts) if len(session_starts) > 1 else (),
            not_started=self.not_started, headless=self.headless,
        )

    # -- internals ------------------------------------------------------------------------

    def _drop_announced_calls(self) -> None:
        last_answered = max((i for i, d in enumerate(self._turns) if d.tool_output is not None),
                            default=-1)
        announced = {id(d) for d in self._open_calls.values()}
        kept = [d for i, d in enumerate(self._turns) if id(d) not in announced or i > last_answered]
        dropped = len(self._turns) - len(kept)
        if dropped:
            self._turns = kept
            still = {id(d) for d in kept}
            self._open_calls = {k: d for k, d in self._open_calls.items() if id(d) in still}
            self.skip("announced-call-never-run", dropped)

    def _drop(self, draft: Draft) -> None:
        for position in range(len(self._turns) - 1, -1, -1):
            if self._turns[position] is draft:
                del self._turns[position]
                break
        self.skip("announced-call-never-run")

    def _add(self, **fields: Any) -> Draft:
        self.seen_time(fields.get("timestamp"))
        content = fields.get("content")
        if content:
            self._held_chars += len(content)
        if self._turns and self._spilling():
            self._spill_content(self._turns[-1])  # no later piece can join it now
        draft = Draft(**fields)
        self._turns.append(draft)
        if self._session_starts and self._session_starts[-1][0] is None:
            # The sessions announced since the last turn: the latest one owns this turn.
            while len(self._session_starts) > 1 and self._session_starts[-2][0] is None:
                del self._session_starts[-2]
            _, sid, start = self._session_starts[-1]
            self._session_starts[-1] = (draft, sid, start)
        return draft

    def _fill(self, turn: Draft, output: str | None, is_error: bool,
              exit_code: int | None, result: Mapping[str, Any] | None) -> None:
        text = output if isinstance(output, str) else ("" if output is None else str(output))
        turn.tool_output = clip_output(text, OUTPUT_CHARS)
        turn.output_length = len(text)
        turn.is_error = bool(is_error) or (exit_code not in (None, 0)) or (
            exit_code is None and _reports_error(text))
        turn.exit_code = exit_code
        self._finish_tool(turn, result)

    def _finish_tool(self, turn: Draft, result: Mapping[str, Any] | None = None) -> None:
        """Classify a completed call and derive its edits, then keep only a bounded input.

        Done as soon as the result is known, so the full input and the harness's structured
        result (whole original files) are dropped at once instead of held to the end.
        """
        tool_input = turn.tool_input
        kind, paths, edits = tools.describe(turn.tool_name, tool_input, result)
        if kind is ToolKind.SHELL:
            # A shell call that only reads, searches, lists or edits files is that kind.
            command = tools.command_text(tool_input)
            turn.via_shell = True
            turn.command = clip(command, OUTPUT_CHARS) if command else None
            if command:
                kind = tools.shell_kind(command)
        if turn.is_error:
            edits = ()  # a failed edit changed nothing
        elif edits:
            edits = self._keep_ends(turn, [self._share_text(edit) for edit in edits])
        turn.update(kind=kind, paths=paths, edits=edits, tool_input=compact(tool_input))
        self._held_chars += len(turn.tool_output or "") + sum(
            len(e.new or "") + len(e.after or "") + len(e.before or "") for e in edits)
        if self._spilling():
            self._spill_tool(turn)

    def _keep_ends(self, turn: Draft, edits: list[FileEdit]) -> tuple[FileEdit, ...]:
        """Whole-file texts kept only where they are read: the text a file had before its
        first edit of the session and after its latest one (and the original of a whole-file
        write, which measures how much of it was rewritten).

        A harness that logs the whole original file with every edit would otherwise hold one
        copy of the file per edit; every other fact of an edit is in its diff.
        """
        for position, edit in enumerate(edits):
            earlier = self._latest_edit.get(edit.path)
            if earlier is not None:
                if edit.before is not None and not edit.whole_file:
                    edit = edit.replace(before=None)
                draft, at = earlier
                owner = edits if draft is turn else list(draft.edits)
                if owner[at].after is not None:
                    owner[at] = owner[at].replace(after=None)
                    if draft is not turn:
                        draft.edits = tuple(owner)
            edits[position] = edit
            self._latest_edit[edit.path] = (turn, position)
        return tuple(edits)

    def _share_text(self, edit: FileEdit) -> FileEdit:
        """One copy of a file's text between consecutive edits of it.

        A harness that logs whole files logs the same text twice: after one edit and again as
        the original of the next. Holding one object for both halves what edits cost in memory.
        """
        previous = self._last_text.get(edit.path)
        if edit.before is not None and previous is not None and edit.before is not previous \
                and len(edit.before) == len(previous) and edit.before == previous:
            edit = edit.replace(before=previous)
        if edit.after is not None:
            self._last_text[edit.path] = edit.after
        return edit

    def _notes_once(self, message: str) -> None:
        self.note(message)

    # -- the spill file (see `spill`) ------------------------------------------------------

    def _spilling(self) -> bool:
        """Whether texts go to the spill file from now on (it is opened, and every finished
        turn so far spilled, the first time the turns hold too much)."""
        if self._spill is not None:
            return True
        if self._held_chars < SPILL_AFTER_CHARS or self._spill_failed:
            return False
        self._spill = spill_mod.open_spill()
        if self._spill is None:
            self._spill_failed = True
            return False
        for draft in self._turns[:-1]:
            self._spill_content(draft)
            if draft.kind is not None:
                self._spill_tool(draft)
        return True

    def _spill_content(self, draft: Draft) -> None:
        content = draft.content
        if type(content) is str and len(content) >= spill_mod.SPILL_MIN_CHARS:
            draft.content = self._put(content, self._spill.put_text)

    def _spill_tool(self, draft: Draft) -> None:
        """A finished call's input, and its output, command and edits' texts, to the spill
        file."""
        output = draft.tool_output
        if type(output) is str and len(output) >= spill_mod.SPILL_MIN_CHARS:
            draft.tool_output = self._put(output, self._spill.put_text)
        command = draft.command
        if type(command) is str and len(command) >= spill_mod.SPILL_MIN_CHARS:
            draft.command = self._put(command, self._spill.put_text)
        tool_input = draft.tool_input
        if type(tool_input) is dict and tool_input:  # even a small dict is 300 bytes
            draft.tool_input = self._put(tool_input, self._spill.put_value)
        edits = draft.edits
        if edits and not self._spill_failed:
            try:
                draft.edits = tuple(e.spilled(self._spill, spill_mod.SPILL_MIN_CHARS)
                                       for e in edits)
            except OSError:
                self._spill_failed = True

    def _put(self, value: Any, put: Callable[[Any], int]) -> Any:
        """The value's place in the spill file, or the value itself when the file cannot
        take it (the disk is full): it stays in memory, and so do later ones."""
        if self._spill_failed:
            return value
        try:
            return put(value)
        except OSError:
            self._spill_failed = True
            return value
