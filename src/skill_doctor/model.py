"""The transcript model every decoder produces and every later stage reads.

One saved session becomes one `Transcript`: an ordered tuple of `Turn` records. The JSON
adapters and the Lark grammar both build this same model, so facts, detectors and the report
never see harness-specific shapes. Nodes are frozen; each remembers where it came from
(source line and column) so findings can cite `file:line`.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterator, Mapping, Sequence


class Role(str, Enum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class ToolKind(str, Enum):
    """Harness-independent kinds of tool call; detectors test these, never tool names."""

    READ = "read"
    EDIT = "edit"
    WRITE = "write"
    SHELL = "shell"
    SEARCH = "search"
    LIST = "list"
    WEB = "web"
    SUBAGENT = "subagent"
    PLAN = "plan"
    OTHER = "other"


_set = object.__setattr__


class _Spillable:
    """What FileEdit and Turn share: read-only slotted records whose texts may wait in the
    session's spill file (see `spill`). An int in place of a text is its place there; `_text`
    reads it back. `_FIELDS` are the public fields: constructor keywords and pickled state."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only (use replace): "
                             f"cannot set {name}")

    def _text(self, value: str | int | None) -> str | None:
        # `_spill` is a slot of each subclass: the session's spill file, or None.
        return self._spill.text(value) if type(value) is int else value  # type: ignore

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed; texts still in the spill file stay there."""
        fields = {name.lstrip("_"): getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return type(self)(**fields)

    def __getstate__(self) -> dict[str, Any]:  # a pickled record carries its texts, not places
        return {name: getattr(self, name) for name in self._FIELDS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, **state)


class FileEdit(_Spillable):
    """One change to one file made by a tool turn, as a unified diff (parsable by unidiff).

    `before`/`after` hold whole-file contents when the transcript shows them (a Write, or a
    harness that logs the original file); otherwise they are None and only `old`/`new`
    snippets are known.

    `patch` is the diff as logged or built. It is None when the diff is that of `new` written
    into an empty text (a new file, a file written whole from nothing known): that diff is
    every line of `new` again, so it is built when asked for (`diff`) instead of being held
    beside `new` for the whole run.

    Read-only. In a long session its texts may live in the spill file (see `spill`); an int
    in place of a text is its place there, and the properties read it back.
    """

    __slots__ = ("path", "_patch", "_old", "_new", "_before", "_after", "created", "deleted",
                 "whole_file", "_spill")

    path: str
    created: bool
    deleted: bool
    whole_file: bool  # the tool wrote the whole file rather than a region of it

    def __init__(self, path: str, patch: str | int | None, old: str | int | None = None,
                 new: str | int | None = None, before: str | int | None = None,
                 after: str | int | None = None, created: bool = False, deleted: bool = False,
                 whole_file: bool = False, spill: Any = None) -> None:
        _set(self, "path", path)
        _set(self, "_patch", patch)
        _set(self, "_old", old)
        _set(self, "_new", new)
        _set(self, "_before", before)
        _set(self, "_after", after)
        _set(self, "created", created)
        _set(self, "deleted", deleted)
        _set(self, "whole_file", whole_file)
        _set(self, "_spill", spill)

    _FIELDS = ("path", "patch", "old", "new", "before", "after", "created", "deleted",
               "whole_file")

    patch = property(lambda self: self._text(self._patch))
    old = property(lambda self: self._text(self._old))
    new = property(lambda self: self._text(self._new))
    before = property(lambda self: self._text(self._before))
    after = property(lambda self: self._text(self._after))

    @property
    def diff(self) -> str:
        patch = self.patch
        if patch is not None:
            return patch
        from .text import make_diff
        return make_diff(self.path, "", self.new or "", created=self.created)

    def spilled(self, spill: Any, min_chars: int) -> "FileEdit":
        """This edit with its texts of `min_chars` or more moved to `spill` (see `spill`)."""
        moved = {}
        for name in ("patch", "old", "new", "before", "after"):
            value = getattr(self, "_" + name)
            if type(value) is str and len(value) >= min_chars:
                moved[name] = spill.put_text(value)
        return self.replace(spill=spill, **moved)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileEdit):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._FIELDS)

    def __hash__(self) -> int:  # by value, as equality is
        return hash(tuple(getattr(self, name) for name in self._FIELDS))

    def __repr__(self) -> str:
        return "FileEdit(" + ", ".join(f"{name}={getattr(self, name)!r}"
                                       for name in self._FIELDS) + ")"


class Turn(_Spillable):
    """One step of the session: a user message, an assistant message, or a tool call with its result.

    `index` is the 1-based position in the transcript's turn list and is what reports cite.
    `meta` is None for real content; otherwise it names the kind of injected or harness-made
    text (e.g. "system-reminder", "command", "compaction", "interrupt") so it is kept but
    never mistaken for what the user asked.

    A turn is read-only. Its message text, command, tool input and output and its edits' texts
    may live in the session's spill file (see `spill`: a long session's decoder puts them there
    as it goes); they read the same either way, through properties.
    """

    __slots__ = ("index", "role", "_content", "tool_name", "_tool_input", "_tool_output",
                 "is_error", "exit_code", "timestamp", "line", "column", "meta", "kind", "paths",
                 "edits", "output_length", "via_shell", "_command", "_spill")

    _FIELDS = ("index", "role", "content", "tool_name", "tool_input", "tool_output", "is_error",
               "exit_code", "timestamp", "line", "column", "meta", "kind", "paths", "edits",
               "output_length", "via_shell", "command")

    index: int
    role: Role
    tool_name: str | None
    is_error: bool
    exit_code: int | None
    timestamp: str | None
    line: int
    column: int
    meta: str | None
    kind: ToolKind | None
    paths: tuple[str, ...]
    edits: tuple[FileEdit, ...]
    output_length: int  # full length of the tool output, even when only head and tail are kept
    via_shell: bool  # the call ran a shell command (whatever kind of work it did)

    def __init__(self, index: int, role: Role, content: str | int = "",
                 tool_name: str | None = None,
                 tool_input: Mapping[str, Any] | int | None = None,
                 tool_output: str | int | None = None, is_error: bool = False,
                 exit_code: int | None = None, timestamp: str | None = None, line: int = 0,
                 column: int = 1, meta: str | None = None, kind: ToolKind | None = None,
                 paths: tuple[str, ...] = (), edits: tuple[FileEdit, ...] = (),
                 output_length: int = 0, via_shell: bool = False, command: str | None = None,
                 spill: Any = None) -> None:
        # An int in place of the content, the input, the output or the command is its place
        # in `spill`.
        _set(self, "index", index)
        _set(self, "role", role)
        _set(self, "_content", content)
        _set(self, "tool_name", tool_name)
        _set(self, "_tool_input", tool_input)
        _set(self, "_tool_output", tool_output)
        _set(self, "is_error", is_error)
        _set(self, "exit_code", exit_code)
        _set(self, "timestamp", timestamp)
        _set(self, "line", line)
        _set(self, "column", column)
        _set(self, "meta", meta)
        _set(self, "kind", kind)
        _set(self, "paths", paths)
        _set(self, "edits", edits)
        _set(self, "output_length", output_length)
        _set(self, "via_shell", via_shell)
        _set(self, "_command", command)
        _set(self, "_spill", spill)

    # The texts are read written out rather than through `_text`: grading reads them several
    # hundred thousand times in a long session, and the extra call was a tenth of it.
    @property
    def content(self) -> str:
        value = self._content
        return self._spill.text(value) if type(value) is int else value

    @property
    def command(self) -> str | None:
        """The command line a shell call ran (argv lists joined, `bash -lc` unwrapped), taken
        from the full input before it was bounded; None for other calls."""
        value = self._command
        return self._spill.text(value) if type(value) is int else value

    @property
    def tool_output(self) -> str | None:
        value = self._tool_output
        return self._spill.text(value) if type(value) is int else value

    @property
    def tool_input(self) -> Mapping[str, Any] | None:
        value = self._tool_input
        return self._spill.value(value) if type(value) is int else value

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS if
                          getattr(self, name) not in (None, "", (), False, 0) or name == "index")
        return f"Turn({shown})"


@dataclass(frozen=True, slots=True)
class Usage:
    """The tokens one model call used, as the harness logged them.

    Counts are normalised across harnesses so they can be priced alike: `input` is the prompt
    tokens billed at the full rate (cache reads excluded, whatever the harness's own `input`
    includes), `output` includes reasoning tokens, `cache_read` / `cache_write` are the
    prompt tokens read from / written to the provider's cache. `turn` is the turn the call
    produced (its first), or 0 when the harness logs a run total with no turn to pin it to.
    """

    turn: int
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    model: str | None = None

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write


class WordRows(Sequence):
    """Records of whole numbers, a fixed number of machine words each in one array, read as
    the objects they stand for: a long session has a hundred thousand such records, and as
    objects, each with its own number objects, they took about 190 bytes apiece. A subclass
    says how a row reads (`_read`) and what a slice is (`_SLICE`); it equals a tuple or list
    of what it reads as."""

    __slots__ = ("_words",)
    _WIDTH = 5
    _SLICE: type = tuple

    def __init__(self, words: Any) -> None:
        self._words = words  # an array of machine words, or a list where numbers outgrow one

    def _read(self, index: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._words) // self._WIDTH

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return self._SLICE(self._read(i) for i in range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._read(index)

    def __iter__(self) -> Iterator[Any]:
        return map(self._read, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (WordRows, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._SLICE(self)!r})"


class UsageLog(WordRows):
    """A session's Usage records in the order they were first logged, read as a tuple of them:
    five words a call (turn and counts) and its model's shared name. Counts are bounded when
    decoded, so they always fit a word. The decoder adds to it as it reads (`add`,
    `keep_larger`, `pin`)."""

    __slots__ = ("_models",)

    def __init__(self, words: array | None = None, models: list[str | None] | None = None) -> None:
        super().__init__(array("q") if words is None else words)
        self._models = [] if models is None else models

    def _read(self, index: int) -> Usage:
        at = index * self._WIDTH
        return Usage(*self._words[at:at + self._WIDTH], model=self._models[index])

    def add(self, turn: int, counts: Sequence[int], model: str | None) -> int:
        """A new record; its row."""
        self._words.append(turn)
        self._words.extend(counts)
        self._models.append(model)
        return len(self._models) - 1

    def keep_larger(self, row: int, counts: Sequence[int], model: str | None) -> None:
        """The same call logged again: each count the larger of the two, the first model
        named."""
        at = row * self._WIDTH + 1  # its counts, after its turn
        words = self._words
        for offset, count in enumerate(counts, at):  # most repeats are equal: nothing written
            if count > words[offset]:
                words[offset] = count
        self._models[row] = self._models[row] or model

    def pin(self, last_turn: int) -> None:
        """Calls logged after the last turn (or before any) belong to the last turn."""
        words = self._words
        for at in range(0, len(words), self._WIDTH):
            if words[at] > last_turn:
                words[at] = last_turn

    def __hash__(self) -> int:  # as the tuple it equals: a Transcript stays hashable
        return hash(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return UsageLog, (self._words, self._models)


@dataclass(frozen=True, slots=True)
class ParseProblem:
    """Where decoding stopped: a positioned message plus the surrounding source text."""

    message: str
    line: int = 0
    column: int = 0
    context: str = ""


@dataclass(frozen=True, slots=True)
class Transcript:
    """A decoded session: turns in order plus what the decoder noticed about the file."""

    source: str
    harness: str
    turns: tuple[Turn, ...] = ()
    session_id: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    cwd: str | None = None
    model: str | None = None
    notes: tuple[str, ...] = ()
    skipped: tuple[tuple[str, int], ...] = ()  # records kept out of the turn list, by kind, sorted
    problem: ParseProblem | None = None  # set when decoding could not finish
    not_a_transcript: bool = False  # the file is readable but is no session at all
    extra: tuple[tuple[str, str], ...] = field(default=())  # harness facts worth showing (version, branch)
    # Tokens per model call, where the harness logs them (a UsageLog from the decoders).
    usage: Sequence[Usage] = ()
    # Why the agent never ran (its install failed, its command was not found): such a run is
    # too short to assess, for that reason, rather than a session that went badly.
    not_started: str | None = None
    # A run with no one at the keyboard (`claude -p`, a benchmark's agent): it ends when the
    # agent stops, and so does everything it left running in the harness's own shells.
    headless: bool = False
    # When the file holds several sessions one after another: how many, and which one (1-based)
    # this transcript is.
    part: tuple[int, int] | None = None
    # Where each session of a file holding several begins: (first turn index, session id or
    # None, start time or None). Empty for a file holding one session.
    session_starts: tuple[tuple[int, str | None, str | None], ...] = ()

    @property
    def real_turns(self) -> tuple[Turn, ...]:
        return tuple(t for t in self.turns if t.meta is None)
