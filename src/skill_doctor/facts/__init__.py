"""facts: what happened in a session, computed once from the Transcript.

One pass over the turns fills the facts every detector reads (record.Facts), never raw
harness JSON, so a rule works the same for every harness. Each kind of fact has its module:

- requests: every user message classified, with the turns that served it and whether the
  user had to ask again (the request ledger);
- reads: which part of a file each read showed, and the reads that showed nothing new;
- changes: the files changed, each edit's record, what the session has written so far;
- checks: the commands that checked the work (tests, builds, linters, runs) and how each ended;
- retries: failed or ineffective attempts tried again, with the rubric's parameters.

What a shell command line runs and what its output says is shell.py's, apart from sessions.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from .. import tools
from ..model import Role, ToolKind, Transcript, Turn
from ..shell import found_nothing, tool_failed
from ..tools import shell_read_windows
from . import checks as checks_mod, requests as ledger, retries
from .changes import WrittenNames, edit_record, edited_unnamed, final_python, has_new_text, \
    new_files, relative_path
from .reads import input_window, repeated_reads, whole_if_shorter
from .record import Check, EditRecord, Episode, Facts

__all__ = ["Check", "EditRecord", "Episode", "Facts", "compute"]


def compute(transcript: Transcript, retry_params: Mapping[str, Any] | None = None) -> Facts:
    """All facts of one transcript, in one pass over its turns (and one over the tool calls
    for the retry episodes, found with `retry_params`, the rubric's for its retry criterion)."""
    cwd = transcript.cwd
    user_turns: list[Turn] = []
    assistant_turns: list[Turn] = []
    tool_turns: list[Turn] = []
    reads: list[tuple[int, str]] = []
    explorations: list[int] = []
    edits: list[EditRecord] = []
    shell_writes: list[tuple[int, str]] = []
    failed_edits: list[int] = []
    checks: list[Check] = []
    failures: list[int] = []
    read_windows: dict[tuple[int, str], tuple] = {}
    unlocated: list[int] = []
    interruptions: list[int] = []
    written = WrittenNames()

    requests = ledger.build(transcript.turns)
    request_text = ""
    for turn in transcript.turns:
        if turn.role is Role.USER and turn.meta is None:
            request_text = turn.content
        if turn.meta == "interrupt":
            interruptions.append(turn.index)
        if turn.meta is not None:
            continue
        if turn.role is Role.USER:
            user_turns.append(turn)
        elif turn.role is Role.ASSISTANT:
            assistant_turns.append(turn)
        else:
            tool_turns.append(turn)
            _tool_facts(turn, cwd, reads, explorations, edits, shell_writes, failed_edits,
                        checks, failures, read_windows, unlocated, written, request_text)

    final_answer = assistant_turns[-1] if assistant_turns else None
    mains = [r for r in requests if r.kind != ledger.FOLLOW_UP]
    changes = tuple(sorted([(e.turn, e.path) for e in edits] + shell_writes
                           + [(turn, None) for turn in unlocated], key=lambda c: c[0]))
    # The goal is the first main request (a greeting or "clear" is none), else the first message.
    goal = transcript.turns[mains[0].turn - 1] if mains else (user_turns[0] if user_turns else None)
    by_path: dict[str, list[EditRecord]] = {}
    for record in edits:
        by_path.setdefault(record.path, []).append(record)
    facts = Facts(
        transcript=transcript, goal=goal,
        asks_for_change=any(r.kind == ledger.CHANGE for r in mains),
        user_turns=tuple(user_turns), assistant_turns=tuple(assistant_turns),
        tool_turns=tuple(tool_turns), reads=tuple(reads), explorations=tuple(explorations),
        edits=tuple(edits), shell_writes=tuple(shell_writes), failed_edits=tuple(failed_edits),
        checks=tuple(checks), failures=tuple(failures), interruptions=tuple(interruptions),
        final_answer=final_answer,
        read_windows=read_windows, unlocated_edits=tuple(unlocated), failed=frozenset(failures),
        edits_by_path={path: tuple(records) for path, records in by_path.items()},
        requests=requests, main_requests=tuple(mains),
        request_turns=tuple(r.turn for r in mains),
        changes=changes, change_turns=tuple(turn for turn, _ in changes),
        check_turns=tuple(c.turn for c in checks),
        repeated_reads=repeated_reads(transcript.turns, reads, read_windows,
                                      [(e.turn, e.path) for e in edits] + shell_writes),
        new_files=new_files(by_path, reads), final_python=final_python(edits),
    )
    # The episodes are found from the facts above; the record stays immutable once made.
    return replace(facts, retries=retries.find(facts, retry_params))


def _tool_facts(turn: Turn, cwd: str | None, reads: list, explorations: list, edits: list,
                shell_writes: list, failed_edits: list, checks: list, failures: list,
                read_windows: dict, unlocated: list, written: WrittenNames,
                request_text: str = "") -> None:
    failed = tool_failed(turn)
    if failed:
        failures.append(turn.index)
    kind = turn.kind
    if kind is ToolKind.READ:
        # A search that matched nothing stopped its `&& sed ...`: nothing was read.
        if not failed and not found_nothing(turn):
            windows = shell_read_windows(turn.command) if turn.command else None
            for raw in turn.paths:
                path = relative_path(raw, cwd)
                reads.append((turn.index, path))
                window = windows.get(raw) if windows is not None else input_window(turn)
                if window is not None and len(turn.paths) == 1:
                    window = whole_if_shorter(window, turn)
                if window is not None:
                    read_windows[(turn.index, path)] = window
                    # Only a file the session has not written: its text is the project's.
                    # (Parsed only if a write needs it: most reads are never written over.)
                    if len(turn.paths) == 1 and window in (("whole",), (1, None, True)) and \
                            path not in written.paths(edits, shell_writes):
                        written.read_texts[path] = turn
    elif kind in (ToolKind.SEARCH, ToolKind.LIST):
        explorations.append(turn.index)
    elif kind in (ToolKind.EDIT, ToolKind.WRITE):
        if failed:
            failed_edits.append(turn.index)
        elif turn.edits:
            for edit in turn.edits:
                edits.append(edit_record(turn.index, edit, cwd, written.read_paths(reads),
                                          written.read_texts))
        elif turn.via_shell or turn.paths:
            # A shell command that wrote files, or an edit the log shows only by its file (an
            # IDE chat pasted as text): a change whose diff is unknown.
            for p in turn.paths:
                path = relative_path(p, cwd)
                shell_writes.append((turn.index, path))
                written.read_texts.pop(path, None)  # no longer what was read
        elif not turn.paths and has_new_text(turn):
            # Old exports name no file for an edit; the agent edits what it just read.
            target = edited_unnamed(reads, request_text)
            inferred = tools.edits_of(turn.tool_name or "edit", {**(turn.tool_input or {}),
                                      "file_path": target}) if target else []
            if inferred:
                for edit in inferred:
                    edits.append(edit_record(turn.index, edit, cwd, written.read_paths(reads)))
            else:
                unlocated.append(turn.index)
    checks_mod.record(turn, kind, failed, cwd, edits, shell_writes, checks, written)
