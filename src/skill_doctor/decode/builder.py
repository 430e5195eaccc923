"""TranscriptBuilder: what every decoder uses to emit turns in order.

Decoders push user text, assistant text, tool calls and tool results as they stream through a
file; the builder numbers turns, pairs each result with its call by id (so a call and its
result are one tool turn, at the position of the call), classifies tools and derives edits,
and counts what was kept out of the turn list. Nothing here knows any harness.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Mapping

from .. import tools
from ..model import FileEdit, ParseProblem, Role, ToolKind, Transcript, Turn
from ..text import OUTPUT_CHARS, SMALL_CHARS, clip, clip_small, cut

_LIST_ITEMS = 64  # items kept of a list inside a tool input
# Record kinds and notes often quote a field of the file; a retyped field can be megabytes.
_SKIP_KEY_CHARS = 80
_NOTE_CHARS = 400
_COMMAND_KEYS = ("command", "cmd")


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
        if all(type(v) is not str or len(v) <= SMALL_CHARS for v in value.values()) and not any(
                isinstance(v, (dict, list, tuple)) for v in value.values()):
            return value  # the common case: a few short scalars, nothing to bound
        return {str(k): compact(v, str(k), depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [compact(v, key, depth + 1) for v in value[:_LIST_ITEMS]]
        if len(value) > _LIST_ITEMS:
            items.append(f"[... {len(value) - _LIST_ITEMS} more items]")
        return items
    return value


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
        self._turns: list[dict[str, Any]] = []
        self._open_calls: dict[str, dict[str, Any]] = {}
        self._last_text: dict[str, str] = {}  # path -> its whole text after the latest edit
        self._notes: list[str] = []
        self._skipped: Counter[str] = Counter()

    # -- what decoders call -------------------------------------------------------------

    def seen_time(self, timestamp: Any) -> None:
        """Record a record's timestamp for the session's start and end."""
        if isinstance(timestamp, str) and timestamp:
            if self.started_at is None or timestamp < self.started_at:
                self.started_at = timestamp
            if self.ended_at is None or timestamp > self.ended_at:
                self.ended_at = timestamp

    def user(self, text: str, *, line: int = 0, column: int = 1, timestamp: str | None = None,
             meta: str | None = None) -> None:
        self._add(role=Role.USER, content=clip(text), line=line, column=column,
                  timestamp=timestamp, meta=meta)

    def assistant(self, text: str, *, line: int = 0, column: int = 1,
                  timestamp: str | None = None, meta: str | None = None,
                  merge_key: str | None = None) -> None:
        """Assistant text. Consecutive pieces with the same `merge_key` (an API message id) join."""
        last = self._turns[-1] if self._turns else None
        if (merge_key and last is not None and last["role"] is Role.ASSISTANT
                and last.get("merge_key") == merge_key):
            last["content"] = clip(f"{last['content']}\n\n{text}" if last["content"] else text)
            return
        self._add(role=Role.ASSISTANT, content=clip(text), line=line, column=column,
                  timestamp=timestamp, meta=meta, merge_key=merge_key)

    def tool_call(self, call_id: str | None, name: str | None, tool_input: Any, *,
                  line: int = 0, column: int = 1, timestamp: str | None = None,
                  meta: str | None = None) -> None:
        """A tool call; its result arrives later through `tool_result` with the same id."""
        if not isinstance(tool_input, dict):
            tool_input = {"input": tool_input} if tool_input not in (None, "") else {}
        turn = self._add(role=Role.TOOL, tool_name=name or "unknown", tool_input=dict(tool_input),
                         line=line, column=column, timestamp=timestamp, meta=meta)
        if call_id:
            self._open_calls[call_id] = turn

    def tool_result(self, call_id: str | None, output: str | None, *, is_error: bool = False,
                    exit_code: int | None = None, result: Mapping[str, Any] | None = None,
                    line: int = 0, timestamp: str | None = None) -> None:
        """The result of an earlier call. A result with no known call becomes its own tool turn."""
        turn = self._open_calls.pop(call_id, None) if call_id else None
        if turn is None:
            self._notes_once("tool results without a matching call")
            turn = self._add(role=Role.TOOL, tool_name="unknown", tool_input={}, line=line,
                             timestamp=timestamp)
        self._fill(turn, output, is_error, exit_code, result)

    def tool(self, name: str | None, tool_input: Any, output: str | None, *,
             is_error: bool = False, exit_code: int | None = None,
             result: Mapping[str, Any] | None = None, line: int = 0, column: int = 1,
             timestamp: str | None = None, meta: str | None = None) -> None:
        """A tool call whose result is known at once."""
        self.tool_call(None, name, tool_input, line=line, column=column, timestamp=timestamp,
                       meta=meta)
        self._fill(self._turns[-1], output, is_error, exit_code, result)

    def has_open_call(self, call_id: str) -> bool:
        return call_id in self._open_calls

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

    # -- result ---------------------------------------------------------------------------

    def build(self) -> Transcript:
        turns = []
        drafts = self._turns
        for index, draft in enumerate(drafts, start=1):
            draft.pop("merge_key", None)
            if draft["role"] is Role.TOOL and "kind" not in draft:
                self._finish_tool(draft)
            turns.append(Turn(index=index, **draft))
            drafts[index - 1] = None  # free each draft as its Turn is made: bounded peak memory
        self._turns = []
        if self._open_calls:
            self.note(f"{len(self._open_calls)} tool call(s) never got a result")
        return Transcript(
            source=self.source, harness=self.harness, turns=tuple(turns),
            session_id=self.session_id, started_at=self.started_at, ended_at=self.ended_at,
            cwd=self.cwd, model=self.model, notes=tuple(self._notes),
            skipped=tuple(sorted(self._skipped.items())), problem=self.problem,
            not_a_transcript=self.not_a_transcript, extra=tuple(sorted(self.extra.items())),
        )

    # -- internals ------------------------------------------------------------------------

    def _add(self, **fields: Any) -> dict[str, Any]:
        self.seen_time(fields.get("timestamp"))
        self._turns.append(fields)
        return fields

    def _fill(self, turn: dict[str, Any], output: str | None, is_error: bool,
              exit_code: int | None, result: Mapping[str, Any] | None) -> None:
        text = output if isinstance(output, str) else ("" if output is None else str(output))
        turn["tool_output"] = clip(text, OUTPUT_CHARS)
        turn["output_length"] = len(text)
        turn["is_error"] = bool(is_error) or (exit_code not in (None, 0))
        turn["exit_code"] = exit_code
        self._finish_tool(turn, result)

    def _finish_tool(self, turn: dict[str, Any], result: Mapping[str, Any] | None = None) -> None:
        """Classify a completed call and derive its edits, then keep only a bounded input.

        Done as soon as the result is known, so the full input and the harness's structured
        result (whole original files) are dropped at once instead of held to the end.
        """
        tool_input = turn["tool_input"]
        kind, paths, edits = tools.describe(turn["tool_name"], tool_input, result)
        if kind is ToolKind.SHELL:
            # A shell call that only reads, searches, lists or edits files is that kind.
            command = tools.command_text(tool_input)
            turn["via_shell"] = True
            turn["command"] = clip(command, OUTPUT_CHARS) if command else None
            if command:
                kind = tools.shell_kind(command)
        if turn.get("is_error"):
            edits = ()  # a failed edit changed nothing
        elif edits:
            edits = tuple(self._share_text(edit) for edit in edits)
        turn.update(kind=kind, paths=paths, edits=edits, tool_input=compact(tool_input))

    def _share_text(self, edit: FileEdit) -> FileEdit:
        """One copy of a file's text between consecutive edits of it.

        A harness that logs whole files logs the same text twice: after one edit and again as
        the original of the next. Holding one object for both halves what edits cost in memory.
        """
        previous = self._last_text.get(edit.path)
        if edit.before is not None and previous is not None and edit.before is not previous \
                and len(edit.before) == len(previous) and edit.before == previous:
            edit = replace(edit, before=previous)
        if edit.after is not None:
            self._last_text[edit.path] = edit.after
        return edit

    def _notes_once(self, message: str) -> None:
        self.note(message)
