"""The transcript model every decoder produces and every later stage reads.

One saved session becomes one `Transcript`: an ordered tuple of `Turn` records. The JSON
adapters and the Lark grammar both build this same model, so facts, detectors and the report
never see harness-specific shapes. Nodes are frozen; each remembers where it came from
(source line and column) so findings can cite `file:line`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping


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


@dataclass(frozen=True, slots=True)
class FileEdit:
    """One change to one file made by a tool turn, as a unified diff (parsable by unidiff).

    `before`/`after` hold whole-file contents when the transcript shows them (a Write, or a
    harness that logs the original file); otherwise they are None and only `old`/`new`
    snippets are known.

    `patch` is the diff as logged or built. It is None when the diff is that of `new` written
    into an empty text (a new file, a file written whole from nothing known): that diff is
    every line of `new` again, so it is built when asked for (`diff`) instead of being held
    beside `new` for the whole run.
    """

    path: str
    patch: str | None
    old: str | None = None
    new: str | None = None
    before: str | None = None
    after: str | None = None
    created: bool = False
    deleted: bool = False
    whole_file: bool = False  # the tool wrote the whole file rather than a region of it

    @property
    def diff(self) -> str:
        if self.patch is not None:
            return self.patch
        from .diffs import make_diff  # diffs builds FileEdits, so it imports this module
        return make_diff(self.path, "", self.new or "", created=self.created)


@dataclass(frozen=True, slots=True)
class Turn:
    """One step of the session: a user message, an assistant message, or a tool call with its result.

    `index` is the 1-based position in the transcript's turn list and is what reports cite.
    `meta` is None for real content; otherwise it names the kind of injected or harness-made
    text (e.g. "system-reminder", "command", "compaction", "interrupt") so it is kept but
    never mistaken for what the user asked.
    """

    index: int
    role: Role
    content: str = ""
    tool_name: str | None = None
    tool_input: Mapping[str, Any] | None = None
    tool_output: str | None = None
    is_error: bool = False
    exit_code: int | None = None
    timestamp: str | None = None
    line: int = 0
    column: int = 1
    meta: str | None = None
    kind: ToolKind | None = None
    paths: tuple[str, ...] = ()
    edits: tuple[FileEdit, ...] = ()
    output_length: int = 0  # full length of the tool output, even when only head and tail are kept
    via_shell: bool = False  # the call ran a shell command (whatever kind of work it did)
    # The command line a shell call ran (argv lists joined, `bash -lc` unwrapped), taken from
    # the full input before it was bounded; None for other calls.
    command: str | None = None


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
    usage: tuple[Usage, ...] = ()  # tokens per model call, where the harness logs them
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
