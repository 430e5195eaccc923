"""facts.record: the facts of one session, as the detectors read them.

`Facts` holds everything a criterion needs, computed once (facts.compute): the requests and
the turns that served them, the changes and their final states, the checks and how they
ended, the reads and what each showed, the retry episodes. Its methods answer the questions
several criteria ask by bisection, so a session of thousands of requests stays linear.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..model import FileEdit, Transcript, Turn
from .requests import Request


@dataclass(frozen=True, slots=True)
class Check:
    """A command that checks the work, and how it ended (None when the log cannot tell)."""

    turn: int
    command: str
    kind: str  # test | typecheck | lint | build | run
    passed: bool | None


@dataclass(frozen=True, slots=True)
class EditRecord:
    turn: int
    edit: FileEdit
    path: str  # project-relative, POSIX
    added: int
    removed: int


@dataclass(slots=True)
class Episode:
    """Attempts at one thing that failed or did nothing, and the attempts again (turns)."""

    first: int
    last: int
    turns: list[int]
    what: str
    cause: str
    kind: str  # retry | loop | hunt | user | redo | streak
    # The first attempts of the operations it holds: one, unless overlapping episodes were
    # merged (four reads failed on one path form and were each redone on another).
    firsts: tuple[int, ...] = ()

    @property
    def attempts(self) -> tuple[int, ...]:
        """The first attempt of each operation: one of each was needed, the rest were not."""
        return self.firsts or self.turns[:1]


@dataclass(frozen=True, slots=True)
class Facts:
    transcript: Transcript
    goal: Turn | None
    asks_for_change: bool
    user_turns: tuple[Turn, ...]
    assistant_turns: tuple[Turn, ...]
    tool_turns: tuple[Turn, ...]
    reads: tuple[tuple[int, str], ...]  # (turn, path) for every file read
    explorations: tuple[int, ...]  # search and listing turns
    edits: tuple[EditRecord, ...]  # successful edits with a known diff
    shell_writes: tuple[tuple[int, str], ...]  # files changed with no diff known (shell, rendered edits)
    failed_edits: tuple[int, ...]
    checks: tuple[Check, ...]
    failures: tuple[int, ...]  # tool turns that failed
    interruptions: tuple[int, ...]
    final_answer: Turn | None  # the last real assistant message
    # Which part of the file each read showed, by (turn, path): (first, last, numbered) or
    # ("filter", text); missing when the log cannot tell (no range asked, no output kept).
    read_windows: Mapping[tuple[int, str], tuple] = field(default_factory=dict)
    # Edit turns whose file the log does not name (old SpecStory exports): a change was made,
    # but no file can be graded.
    unlocated_edits: tuple[int, ...] = ()
    # `failures` as a set, for detectors that ask about each turn (a search that found
    # nothing is no failure; an edit whose output says it did not apply is one).
    failed: frozenset[int] = frozenset()
    # `edits` grouped by file, each file's edits in session order.
    edits_by_path: Mapping[str, tuple[EditRecord, ...]] = field(default_factory=dict)
    # Every user message classified, with the turns that served it (see facts.requests), and the
    # requests that ask for something (follow-ups excluded), in session order.
    requests: tuple[Request, ...] = ()
    main_requests: tuple[Request, ...] = ()
    request_turns: tuple[int, ...] = ()  # the main requests' turns, for bisection
    # Every change (path, or None where the log names no file) by turn, and the turns of the
    # changes and the checks: each request finds its own by bisection, so a session of
    # thousands of requests stays linear.
    changes: tuple[tuple[int, str | None], ...] = ()
    change_turns: tuple[int, ...] = ()
    check_turns: tuple[int, ...] = ()
    # (turn, path, earlier turn) of each read that showed nothing new (see repeated_reads):
    # exploration and turn economy both count them.
    repeated_reads: tuple[tuple[int, str, int], ...] = ()
    # Failed or ineffective attempts tried again (facts.retries), found once for the criteria
    # that read them.
    retries: tuple[Episode, ...] = ()
    # The files the session made: created, or written whole with no earlier text known and
    # not read before (a rewrite of a file that was there is no new file).
    new_files: frozenset[str] = frozenset()
    # Each edited Python file's final whole text where the log shows it: (turn, text, its
    # syntax tree or the SyntaxError that stops it compiling), by path.
    final_python: Mapping[str, tuple[int, str, Any]] = field(default_factory=dict)

    def changes_in(self, request: Request) -> tuple[tuple[int, str | None], ...]:
        """The changes made for a request: (turn, path), in session order."""
        return self.changes[bisect.bisect_right(self.change_turns, request.turn):
                            bisect.bisect_right(self.change_turns, request.end)]

    def checks_after(self, turn: int) -> tuple[Check, ...]:
        """The checks that ran after a turn, in session order."""
        return self.checks[bisect.bisect_right(self.check_turns, turn):]

    def checks_between(self, after: int, until: int) -> tuple[Check, ...]:
        """The checks of turns after `after` up to `until`, in session order."""
        return self.checks[bisect.bisect_right(self.check_turns, after):
                           bisect.bisect_right(self.check_turns, until)]

    def request_at(self, index: int) -> Request | None:
        """The main request a turn served (None before the first); one bisection."""
        position = bisect.bisect_left(self.request_turns, index) - 1
        return self.main_requests[position] if position >= 0 else None

    def served_turns(self, request: Request) -> tuple[Turn, ...]:
        """The turns after a request up to the next main request (turn i sits at i - 1)."""
        return self.transcript.turns[request.turn:request.end]

    @property
    def made_changes(self) -> bool:
        """Whether the session changed anything, even where the log does not say which file."""
        return self.changed_code or bool(self.unlocated_edits)

    @property
    def edited_paths(self) -> tuple[str, ...]:
        return tuple(sorted({e.path for e in self.edits} | {p for _, p in self.shell_writes}))

    @property
    def changed_code(self) -> bool:
        return bool(self.edits or self.shell_writes)

    @property
    def last_edit_turn(self) -> int | None:
        return self.change_turns[-1] if self.change_turns else None  # every change, sorted

    @property
    def changed_lines(self) -> int:
        return sum(e.added + e.removed for e in self.edits)

    def turn(self, index: int) -> Turn:
        return self.transcript.turns[index - 1]
