"""overview: the session at a glance, as data for the report page and report.json.

Pure functions over a graded session (Transcript + Facts + Findings): the session strip
(harness, model, project, duration, turn and call counts, files, checks), the setup in play
(skills, subagents, MCP servers, hooks, instruction files, slash commands), a timeline of turns
by kind with each finding's turns marked, a table of files read and edited, each edited file's
net diff, and an appendix of the turns the findings cite.

Everything here is bounded so a 10,000-turn session still gives a small page: the timeline
folds into at most `MAX_CELLS` cells, the files table and diffs are capped, and only cited
turns get an appendix entry, each with bounded excerpts. Text shown to people is redacted
unless redaction was switched off; render.py only lays this data out.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Iterable

from .patterns import compile_later
from .diffs import count_changes
from .facts import Facts
from .facts.changes import relative_path
from .findings import Finding
from .model import Role, ToolKind, Transcript, Turn
from .redact import redact
from .text import cut, excerpt, make_diff

# Timeline kinds, in legend order. Colour is never the only carrier: the legend counts them.
KINDS = ("user", "assistant", "read", "edit", "shell", "other", "failed", "injected")
KIND_LABELS = {
    "user": "user message", "assistant": "assistant message", "read": "read / search",
    "edit": "edit / write", "shell": "shell command", "other": "other tool call",
    "failed": "failed call", "injected": "injected by the harness",
}
MAX_CELLS = 500          # one cell per turn up to this many turns, else turns are bucketed
MAX_FILE_ROWS = 200      # files table rows (flagged and edited files first)
MAX_DIFF_FILES = 30      # edited files whose net diff is shown
MAX_DIFF_LINES = 400     # lines of one file's diff shown
MAX_DIFF_TOTAL = 3000    # diff lines shown over the whole page
MAX_LINE_CHARS = 400     # characters of one diff line shown
MAX_DIFF_SOURCE = 400_000  # larger before/after texts are not re-diffed (difflib cost)
INPUT_CHARS, OUTPUT_CHARS, EXCERPT_LINES = 1200, 1600, 24

INSTRUCTION_FILES = {"claude.md", "claude.local.md", "agents.md", "agent.md", "gemini.md",
                     "conventions.md", "copilot-instructions.md", ".cursorrules",
                     ".windsurfrules", ".clinerules", ".goosehints", "qwen.md", "crush.md"}
_HOOK = compile_later(r"\b(PreToolUse|PostToolUse|UserPromptSubmit|SessionStart|SessionEnd|Stop"
                   r"|SubagentStop|Notification|PreCompact)(?::([\w.*|-]+))?\s+hook\b")
_CONTENTS_OF = compile_later(r"Contents of (\S+?)(?: \(|:|\s*$)", re.MULTILINE)
_COMMAND_NAME = compile_later(r"<command-name>\s*(/?[^<\s]+)\s*</command-name>")


@dataclass(frozen=True, slots=True)
class Strip:
    """The session strip: what ran, where, for how long, and what it did."""

    harness: str
    model: str | None
    project: str | None
    branch: str | None
    version: str | None
    started_at: str | None
    ended_at: str | None
    duration_seconds: int | None
    turns: int
    user_turns: int
    assistant_turns: int
    tool_calls: int
    failed_calls: int
    files_read: int
    files_edited: int
    checks: int
    last_check_turn: int | None
    last_check_command: str | None
    last_check_passed: bool | None


@dataclass(frozen=True, slots=True)
class SetupItem:
    """One thing of the setup that was seen: its name, how often, and where first."""

    name: str
    count: int
    first_turn: int
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Setup:
    skills: tuple[SetupItem, ...]
    subagents: tuple[SetupItem, ...]
    mcp_servers: tuple[SetupItem, ...]
    hooks: tuple[SetupItem, ...]
    instruction_files: tuple[SetupItem, ...]
    slash_commands: tuple[SetupItem, ...]

    def rows(self) -> tuple[tuple[str, str, tuple[SetupItem, ...]], ...]:
        """(key, label, items) in display order."""
        return (("skills", "Skills invoked", self.skills),
                ("subagents", "Subagents spawned", self.subagents),
                ("mcp_servers", "MCP servers", self.mcp_servers),
                ("hooks", "Hooks seen", self.hooks),
                ("instruction_files", "Instruction files", self.instruction_files),
                ("slash_commands", "Slash commands", self.slash_commands))


@dataclass(frozen=True, slots=True)
class Cell:
    """One timeline cell: a single turn, or a bucket of consecutive turns when there are many."""

    start: int
    end: int
    kind: str  # the turn's kind; for a bucket, "failed" if any failed, else its commonest kind
    counts: tuple[tuple[str, int], ...]
    cited: tuple[str, ...]  # rule ids of the findings citing a turn in the cell
    link: int | None  # the cited turn the cell links to (first one in a bucket)


@dataclass(frozen=True, slots=True)
class Timeline:
    cells: tuple[Cell, ...]
    bucket: int  # turns per cell (1 when every turn has its own cell)
    counts: tuple[tuple[str, int], ...]  # turns by kind over the whole session


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    reads: int
    edits: int
    added: int
    removed: int
    shell_written: bool
    failed_edits: int
    first_turn: int
    flagged_by: tuple[tuple[str, str, str], ...]  # (rule id, criterion, category)


@dataclass(frozen=True, slots=True)
class DiffLine:
    tag: str  # "add", "del", "hunk", "ctx", "note"
    text: str


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    net: bool  # True: first state to last state; False: the edits' diffs one after another
    turns: tuple[int, ...]
    added: int
    removed: int
    lines: tuple[DiffLine, ...]
    hidden_lines: int  # diff lines not shown (bounds)


@dataclass(frozen=True, slots=True)
class CitedTurn:
    index: int
    role: str
    tool: str | None
    kind: str
    meta: str | None
    timestamp: str | None
    line: int
    input_text: str
    output_text: str
    output_length: int
    is_error: bool
    exit_code: int | None
    cited_by: tuple[tuple[str, str, str], ...]  # (rule id, criterion, category)


@dataclass(frozen=True, slots=True)
class RequestRow:
    """One main request of the ledger, as the page shows it."""

    turn: int
    kind: str  # change | question | operation
    text: str  # the request's own words, bounded
    end: int  # the last turn that served it
    tool_calls: int
    files: tuple[str, ...]  # files changed for it
    check: str | None  # the last check after its last edit, and how it ended
    check_turn: int | None
    asked_again: tuple[int, ...]  # turns where the user restated it or rejected the work


@dataclass(frozen=True, slots=True)
class Overview:
    strip: Strip
    setup: Setup
    timeline: Timeline
    files: tuple[FileRow, ...]
    more_files: int
    diffs: tuple[FileDiff, ...]
    more_diffs: int
    appendix: tuple[CitedTurn, ...]
    gaps: tuple["Gap", ...] = ()  # what the grade could not see, in page order
    requests: tuple[RequestRow, ...] = ()  # the request ledger


def turn_kind(turn: Turn) -> str:
    """The timeline kind of a turn."""
    if turn.meta is not None:
        return "injected"
    if turn.role is Role.USER:
        return "user"
    if turn.role is Role.ASSISTANT:
        return "assistant"
    if turn.is_error:
        return "failed"
    kind = turn.kind
    if kind in (ToolKind.READ, ToolKind.SEARCH, ToolKind.LIST):
        return "read"
    if kind in (ToolKind.EDIT, ToolKind.WRITE):
        return "edit"
    if kind is ToolKind.SHELL:
        return "shell"
    return "other"


def _redactor(redact_secrets: bool) -> Callable[[str], str]:
    """`redact`, worked out once per distinct text (requests and paths repeat), or the text
    as it is when secrets are not redacted."""
    if not redact_secrets:
        return lambda text: text
    shown: dict[str, str] = {}

    def show(text: str) -> str:
        if text not in shown:
            shown[text] = redact(text)
        return shown[text]
    return show


def build(transcript: Transcript, facts: Facts, findings: Iterable[Finding], *,
          redact_secrets: bool = True) -> Overview:
    """The whole overview of one graded session (deterministic for the same input)."""
    findings = tuple(findings)
    show = _redactor(redact_secrets)
    cited = _citations(findings)
    files, more_files = _files(facts, findings, show)
    diffs, more_diffs = _diffs(facts, show)
    appendix = tuple(_cited_turn(transcript.turns[i - 1], cited[i], show)
                     for i in sorted(cited) if 1 <= i <= len(transcript.turns))
    return Overview(
        strip=_strip(transcript, facts, show),
        setup=_setup(transcript, facts, show),
        timeline=_timeline(transcript, cited),
        files=files, more_files=more_files, diffs=diffs, more_diffs=more_diffs,
        appendix=appendix,
        gaps=gaps(transcript, findings, appendix, redact_secrets=redact_secrets),
        requests=_requests(facts, show),
    )


def _requests(facts: Facts, show: Callable[[str], str]) -> tuple[RequestRow, ...]:
    """Each main request: what it asked, the work done for it, and the check that followed."""
    rows = []
    for request in facts.main_requests:
        served = facts.served_turns(request)
        changes = facts.changes_in(request)
        files = tuple(dict.fromkeys(path for _, path in changes if path is not None))
        last_edit = changes[-1][0] if changes else None
        after = facts.checks_between(last_edit, request.end) if last_edit is not None else ()
        check = after[-1] if after else None
        outcome = {True: "passed", False: "failed", None: "no verdict"}[check.passed] if check else ""
        text = request.text or "(the request is not in this log)"
        rows.append(RequestRow(
            turn=request.turn, kind=request.kind, text=excerpt(show(" ".join(text.split())), 200),
            end=request.end, tool_calls=sum(1 for t in served if t.role is Role.TOOL),
            files=tuple(show(f) for f in files[:6]),
            check=f"{excerpt(show(check.command), 80)}: {outcome}" if check else None,
            check_turn=check.turn if check else None,
            asked_again=tuple(sorted(request.restated_at + request.rejected_at))))
    return tuple(rows)


def _citations(findings: tuple[Finding, ...]) -> dict[int, tuple[tuple[str, str, str], ...]]:
    """Turn -> the findings citing it, in the page's finding order."""
    out: dict[int, list[tuple[str, str, str]]] = {}
    for f in findings:
        for e in f.evidence:
            tags = out.setdefault(e.turn, [])
            tag = (f.rule_id, f.criterion, f.category)
            if tag not in tags:
                tags.append(tag)
    return {turn: tuple(tags) for turn, tags in out.items()}


def _seconds(start: str | None, end: str | None) -> int | None:
    # One timestamp for the whole log (Aider records only when a chat started) is no duration.
    if not start or not end or start == end:
        return None
    try:
        a = datetime.fromisoformat(start.replace("Z", "+00:00"))
        b = datetime.fromisoformat(end.replace("Z", "+00:00"))
        seconds = (b - a).total_seconds()
    except (ValueError, TypeError):  # naive vs aware, or not ISO at all
        return None
    return int(seconds) if seconds >= 0 else None


def _strip(transcript: Transcript, facts: Facts, show) -> Strip:
    extra = dict(transcript.extra)
    last = facts.checks[-1] if facts.checks else None
    return Strip(
        harness=transcript.harness, model=transcript.model,
        project=show(transcript.cwd) if transcript.cwd else None,
        branch=extra.get("branch"), version=extra.get("version"),
        started_at=transcript.started_at, ended_at=transcript.ended_at,
        duration_seconds=_seconds(transcript.started_at, transcript.ended_at),
        turns=len(transcript.turns), user_turns=len(facts.user_turns),
        assistant_turns=len(facts.assistant_turns), tool_calls=len(facts.tool_turns),
        failed_calls=len(facts.failures),
        files_read=len({p for _, p in facts.reads}), files_edited=len(facts.edited_paths),
        checks=len(facts.checks),
        last_check_turn=last.turn if last else None,
        last_check_command=_one_line(show(last.command), 200) if last else None,
        last_check_passed=last.passed if last else None,
    )


class _Tally:
    """Names seen, with how often and the first turn, in first-seen order then sorted."""

    def __init__(self) -> None:
        self.items: dict[str, list] = {}

    def add(self, name: str, turn: int, detail: str = "") -> None:
        name = name.strip()
        if not name:
            return
        item = self.items.setdefault(name, [0, turn, detail])
        item[0] += 1

    def result(self, show) -> tuple[SetupItem, ...]:
        return tuple(SetupItem(show(name), count, first, show(detail))
                     for name, (count, first, detail) in sorted(self.items.items(),
                                                                key=lambda kv: (kv[1][1], kv[0])))


def _setup(transcript: Transcript, facts: Facts, show) -> Setup:
    skills, subagents, mcp, hooks, files, commands = (_Tally() for _ in range(6))
    for turn in transcript.turns:
        name = turn.tool_name or ""
        low = name.lower()
        if turn.role is Role.TOOL:
            # The input is read only where it is used: in a long session it waits in the
            # spill file, and reading it back is most of what this pass costs a call.
            if low in ("skill", "activate_skill", "load_skill"):
                args = turn.tool_input or {}
                skills.add(str(args.get("skill") or args.get("command") or args.get("name") or "?"),
                           turn.index)
            elif turn.kind is ToolKind.SUBAGENT:
                args = turn.tool_input or {}
                agent = args.get("subagent_type") or args.get("agent_type") or args.get("agent")
                detail = args.get("description") or ""
                subagents.add(str(agent or name), turn.index, _one_line(str(detail), 80))
            if low.startswith("mcp__"):
                server = name.split("__")[1] if name.count("__") >= 2 else name[5:]
                mcp.add(server or "?", turn.index)
            # Hook messages show up at the head of a blocked call's output.
            _hooks((turn.tool_output or "")[:600], turn.index, hooks)
            if turn.kind is ToolKind.READ and not turn.is_error:
                for path in turn.paths:
                    if posixpath.basename(path.replace("\\", "/")).lower() in INSTRUCTION_FILES:
                        files.add(relative_path(path, transcript.cwd), turn.index, "read by the agent")
        elif turn.meta is not None:
            text = turn.content[:8000]
            if turn.meta == "hook":
                hooks.add("UserPromptSubmit", turn.index)
            _hooks(text, turn.index, hooks)
            if turn.meta == "command":
                for match in _COMMAND_NAME.finditer(text):
                    command = match.group(1)
                    commands.add(command if command.startswith("/") else "/" + command, turn.index)
            for match in _CONTENTS_OF.finditer(text):
                path = match.group(1)
                if posixpath.basename(path.replace("\\", "/")).lower() in INSTRUCTION_FILES:
                    files.add(relative_path(path, transcript.cwd), turn.index,
                              "loaded by the harness")
    return Setup(skills.result(show), subagents.result(show), mcp.result(show),
                 hooks.result(show), files.result(show), commands.result(show))


def _hooks(text: str, turn: int, tally: _Tally) -> None:
    if "hook" not in text:
        return
    for match in _HOOK.finditer(text):
        tally.add(match.group(1) + (f":{match.group(2)}" if match.group(2) else ""), turn)


def _timeline(transcript: Transcript, cited: dict[int, tuple[tuple[str, str, str], ...]]
              ) -> Timeline:
    kinds = [turn_kind(t) for t in transcript.turns]
    totals = Counter(kinds)
    n = len(kinds)
    bucket = 1 if n <= MAX_CELLS else -(-n // MAX_CELLS)
    cells = []
    for start in range(1, n + 1, bucket):
        end = min(n, start + bucket - 1)
        part = Counter(kinds[start - 1:end])
        if part.get("failed"):
            kind = "failed"
        else:  # the commonest kind; ties go to the legend's order
            kind = min(part, key=lambda k: (-part[k], KINDS.index(k)))
        rules: list[str] = []
        link = None
        for i in range(start, end + 1):
            for rule_id, _, _ in cited.get(i, ()):
                if link is None:
                    link = i
                if rule_id not in rules:
                    rules.append(rule_id)
        cells.append(Cell(start, end, kind, tuple((k, part[k]) for k in KINDS if part.get(k)),
                          tuple(rules), link))
    return Timeline(tuple(cells), bucket, tuple((k, totals[k]) for k in KINDS if totals.get(k)))


def _files(facts: Facts, findings: tuple[Finding, ...], show
           ) -> tuple[tuple[FileRow, ...], int]:
    cwd = facts.transcript.cwd
    rows: dict[str, dict] = {}

    def row(path: str, turn: int) -> dict:
        r = rows.setdefault(path, {"reads": 0, "edits": 0, "added": 0, "removed": 0,
                                   "shell": False, "failed": 0, "first": turn, "turns": set()})
        r["first"] = min(r["first"], turn)
        r["turns"].add(turn)
        return r

    for turn, path in facts.reads:
        row(path, turn)["reads"] += 1
    for record in facts.edits:
        r = row(record.path, record.turn)
        r["edits"] += 1
        r["added"] += record.added
        r["removed"] += record.removed
    for turn, path in facts.shell_writes:
        row(path, turn)["shell"] = True
    for turn in facts.failed_edits:
        for path in facts.turn(turn).paths:
            row(relative_path(path, cwd), turn)["failed"] += 1
    # A file is flagged by a finding that cites a turn which read or edited it.
    by_turn: dict[int, list[str]] = {}
    for path, r in rows.items():
        for turn in r["turns"]:
            by_turn.setdefault(turn, []).append(path)
    flags: dict[str, list[tuple[str, str, str]]] = {}
    for f in findings:
        for e in f.evidence:
            for path in by_turn.get(e.turn, ()):
                tags = flags.setdefault(path, [])
                tag = (f.rule_id, f.criterion, f.category)
                if tag not in tags:
                    tags.append(tag)
    ordered = sorted(rows, key=lambda p: (not flags.get(p), not (rows[p]["edits"] or rows[p]["shell"]),
                                          p))
    shown = [FileRow(show(p), r["reads"], r["edits"], r["added"], r["removed"], r["shell"],
                     r["failed"], r["first"], tuple(flags.get(p, ())))
             for p in ordered[:MAX_FILE_ROWS] for r in (rows[p],)]
    return tuple(shown), max(0, len(ordered) - MAX_FILE_ROWS)


def _diffs(facts: Facts, show) -> tuple[tuple[FileDiff, ...], int]:
    by_path = facts.edits_by_path
    out: list[FileDiff] = []
    budget = MAX_DIFF_TOTAL
    for path in sorted(by_path)[:MAX_DIFF_FILES]:
        records = by_path[path]
        first, last = records[0].edit, records[-1].edit
        before = "" if first.created else first.before
        after = last.after
        text, net = None, False
        if (before is not None and after is not None and not last.deleted
                and len(before) + len(after) <= MAX_DIFF_SOURCE):
            text, net = make_diff(path, before, after, created=first.created), True
        if text is None:
            text = "".join(r.edit.diff for r in records)
        added, removed = count_changes(text)
        # Redacted whole before it is split into lines, so a key over several lines goes
        # whole; only the part shown (and a margin for a key that runs past it) is redacted.
        every = text.splitlines()
        limit = max(0, min(MAX_DIFF_LINES, budget))
        raw = show("\n".join(every[:limit + _REDACT_MARGIN])).splitlines()[:limit]
        lines = tuple(_diff_line(x) for x in raw if not x.startswith(("--- ", "+++ ")))
        budget -= min(len(every), limit)
        out.append(FileDiff(show(path), net, tuple(r.turn for r in records), added, removed,
                            lines, max(0, len(every) - limit)))
    return tuple(out), max(0, len(by_path) - MAX_DIFF_FILES)


_REDACT_MARGIN = 60  # lines past the shown part redacted with it (a long key's lines)


def _diff_line(line: str) -> DiffLine:
    """One diff line, already redacted with its whole diff (so cut only between words)."""
    tag = {"+": "add", "-": "del", "@": "hunk", "\\": "note"}.get(line[:1], "ctx")
    if len(line) > MAX_LINE_CHARS:
        line = cut(line, MAX_LINE_CHARS) + f" … [{len(line) - MAX_LINE_CHARS} more characters]"
    return DiffLine(tag, line)


def _cited_turn(turn: Turn, cited_by: tuple[tuple[str, str, str], ...], show) -> CitedTurn:
    if turn.role is Role.TOOL:
        command = turn.command
        if command:
            source = command
        elif turn.tool_input:
            source = _input_text(turn.tool_input)
        else:
            source = ""
        output = turn.tool_output or ""
    else:
        source, output = turn.content, ""
    return CitedTurn(
        index=turn.index, role=turn.role.value, tool=turn.tool_name, kind=turn_kind(turn),
        meta=turn.meta, timestamp=turn.timestamp, line=turn.line,
        input_text=bounded(source, INPUT_CHARS, show),
        output_text=bounded(output, OUTPUT_CHARS, show, full_length=turn.output_length),
        output_length=max(turn.output_length, len(output)), is_error=turn.is_error,
        exit_code=turn.exit_code, cited_by=cited_by)


def _input_text(tool_input) -> str:
    """A tool's input as `key: value` lines (strings as they are, other values as JSON).

    Short values come first so the path or pattern shows even when a long `content` is cut.
    """
    items = []
    for key in sorted(tool_input, key=str):
        value = tool_input[key]
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                               sort_keys=True, default=str)
        items.append((len(text) > 120 or "\n" in text, str(key), text))
    return "\n".join(f"{key}: {text}" for _, key, text in sorted(items, key=lambda i: (i[0], i[1])))


def bounded(text: str, limit: int, show=lambda s: s, max_lines: int = EXCERPT_LINES,
            full_length: int | None = None) -> str:
    """At most `limit` characters and `max_lines` lines of `text`, redacted, marked when cut.

    Redaction runs on a window a little longer than what is kept, so a secret that straddles
    the cut is still recognised (and replaced whole) rather than shown in part.
    """
    head = text[: limit + 512]
    window = show(head).rstrip()
    kept = "\n".join(window.splitlines()[:max_lines])[:limit].rstrip()
    if len(kept) < len(window) or len(head) < len(text):
        total = max(full_length or 0, len(text))
        kept += f"\n[… cut; {total} characters in all]"
    return kept


def _one_line(text: str, limit: int) -> str:
    folded = " ".join(text.split())
    return folded if len(folded) <= limit else folded[: limit - 1].rstrip() + "…"


def to_json(overview: Overview) -> dict:
    """The overview's data for report.json (the page's timeline cells and diffs are left out)."""
    s = overview.strip
    return {
        "session": {
            "harness": s.harness, "model": s.model, "project": s.project, "branch": s.branch,
            "version": s.version, "duration_seconds": s.duration_seconds, "turns": s.turns,
            "user_turns": s.user_turns, "assistant_turns": s.assistant_turns,
            "tool_calls": s.tool_calls, "failed_calls": s.failed_calls,
            "files_read": s.files_read, "files_edited": s.files_edited, "checks": s.checks,
            "last_check": None if s.last_check_turn is None else {
                "turn": s.last_check_turn, "command": s.last_check_command,
                "passed": s.last_check_passed},
        },
        "setup": {key: [{"name": i.name, "count": i.count, "first_turn": i.first_turn,
                         **({"detail": i.detail} if i.detail else {})} for i in items]
                  for key, _, items in overview.setup.rows()},
        "turn_kinds": dict(overview.timeline.counts),
        "files": [{"path": f.path, "reads": f.reads, "edits": f.edits, "added": f.added,
                   "removed": f.removed, "shell_written": f.shell_written,
                   "failed_edits": f.failed_edits,
                   "flagged_by": [rule for rule, _, _ in f.flagged_by]} for f in overview.files],
        "more_files": overview.more_files,
        "cited_turns": [t.index for t in overview.appendix],
        "gaps": [{"kind": g.kind, "title": g.title, "detail": g.detail, "turns": list(g.turns),
                  "more_turns": g.more_turns, "criteria": list(g.criteria), "note": g.note}
                 for g in overview.gaps],
    }


# -- what the grade could not see ----------------------------------------------------------------

MAX_GAP_TURNS = 12  # turns listed per gap; the rest are counted
_OUTCOME = ("task_completion", "regression_avoidance")
_CODE_QUALITY = ("correct_file_identification", "minimal_diff", "pattern_adherence",
                 "regression_avoidance")
_REDACTED = compile_later(r"\[redacted: [\w-]+\]")


@dataclass(frozen=True, slots=True)
class Gap:
    """One thing the grade could not see, in words: a decoder note, a skipped record kind, a
    log without tool results, or the redactions made for the page.

    `criteria` are the criterion keys whose score the gap may have changed; their rows on the
    page say so. `note` is the decoder's own words when the gap comes from one (report.json's
    `notes`), so every note is shown whether or not its wording is known here.
    """

    kind: str
    title: str
    detail: str
    turns: tuple[int, ...] = ()
    more_turns: int = 0
    criteria: tuple[str, ...] = ()
    note: str | None = None


def _bounded_turns(turns: Iterable[int]) -> tuple[tuple[int, ...], int]:
    ordered = sorted(set(turns))
    return tuple(ordered[:MAX_GAP_TURNS]), max(0, len(ordered) - MAX_GAP_TURNS)


def _note_gap(note: str, transcript: Transcript) -> Gap:
    """A decoder note in plain words, with the turns it concerns where they can be found.

    Decoders write notes as short sentences; the known ones get a title, an explanation of
    what they hide from the grade and the criteria they touch. Any other note is shown as the
    decoder wrote it, so a new note never goes missing from the page.
    """
    turns = transcript.turns
    last = (turns[-1].index,) if turns else ()
    lowered = note.lower()
    if "never got a result" in lowered or "had not finished" in lowered:
        open_calls = [t.index for t in turns if t.role is Role.TOOL and t.tool_output is None]
        shown, more = _bounded_turns(open_calls)
        count = re.match(r"(\d+) ", note)
        n = int(count.group(1)) if count else len(open_calls)
        what = (f"{n} tool call{'s' if n != 1 else ''} never got a result" if count or n
                else "some tool calls never got a result")
        return Gap("missing_results", "Tool calls without a result",
                   f"In the log, {what}: whether {'it' if n == 1 else 'they'} worked is not "
                   "known, so a failed call, a retry or a failing check among them cannot be "
                   "seen.", shown, more, ("task_completion", "retry_waste",
                                          "regression_avoidance"), note)
    if "without a matching call" in lowered:
        return Gap("orphan_results", "Tool results without their call",
                   f"The log holds {lowered}; those results are left out of the grade.",
                   note=note)
    if "were skipped" in lowered or "not utf-8" in lowered:
        # "(last at line 858)": the turn that follows that line is where the log has a hole.
        at = re.search(r"line (\d+)", note)
        after = [t.index for t in turns if at and t.line > int(at.group(1))][:1]
        where = (f" The last of them lies just before turn {after[0]}." if after else "")
        return Gap("unreadable_lines", "Lines of the log that could not be read",
                   f"{note[0].upper() + note[1:]}.{where} The turns on those lines are missing "
                   "from the grade; which criteria they would have changed is not known.",
                   tuple(after), 0, (), note)
    if lowered.startswith("only the first"):
        return Gap("truncated", "The log was cut",
                   f"{note[0].upper() + note[1:]}: the end of the session is not graded, so "
                   "whether the task was finished and checked is judged on what came before.",
                   last, 0, _OUTCOME, note)
    if "ended with" in lowered:
        return Gap("run_error", "The run ended abnormally",
                   f"The harness recorded that {lowered}: the agent may have been stopped "
                   "(an API error, a limit, a crash) rather than have finished.",
                   last, 0, ("task_completion",), note)
    if re.search(r"\b(\d+|several|multiple|many) (sessions|runs|chats)\b", lowered):
        return Gap("several_sessions", "Several sessions in one file",
                   f"{note[0].upper() + note[1:]}. The grade covers what the decoder took as the "
                   "session; its request and turn counts may mix or leave out runs.",
                   (), 0, ("task_completion", "turn_economy"), note)
    if "subagent" in lowered:
        return Gap("subagent", "A subagent's transcript",
                   f"{note[0].upper() + note[1:]}. The parent session that asked for this work "
                   "is not part of the grade.", note=note)
    if "rewound" in lowered or "abandoned branch" in lowered:
        return Gap("branches", "Abandoned branches left out",
                   f"{note[0].upper() + note[1:]}; work on the other branches is not graded.",
                   note=note)
    if "applied edit" in lowered or "confirmation" in lowered:
        return Gap("unconfirmed_edits", "Edits the log does not confirm",
                   f"The log has {note[0].lower() + note[1:]}: whether those edits reached the files is not "
                   "shown, so code quality rests partly on what the agent proposed.",
                   (), 0, _CODE_QUALITY, note)
    return Gap("note", "Decoder note", note[0].upper() + note[1:] + ".", note=note)


def gaps(transcript: Transcript, findings: Iterable[Finding],
         appendix: Iterable[CitedTurn] = (), *, redact_secrets: bool = True) -> tuple[Gap, ...]:
    """Everything report.json says the grade could not see, as `Gap`s in page order: the
    decoder's notes (each one, in words), where parsing stopped, a log that records no tool
    results, records kept out of the turns, and the redactions made on this page."""
    show = _redactor(redact_secrets)
    out: list[Gap] = []
    problem = transcript.problem
    if problem is not None and transcript.turns:
        where = f"line {problem.line}, column {problem.column}: " if problem.line else ""
        out.append(Gap("parse_stopped", "Parsing stopped early",
                       f"Parsing stopped at {where}{show(problem.message)}. Only the "
                       f"{len(transcript.turns)} turns before it are graded.",
                       (transcript.turns[-1].index,), 0, _OUTCOME))
    for note in transcript.notes:
        gap = _note_gap(show(note), transcript)
        # Two notes of one kind ("holds several runs", "holds 2 sessions; this is session 2")
        # are one gap on the page: the fuller note says it.
        same = next((i for i, g in enumerate(out) if g.kind == gap.kind != "note"), None)
        if same is None:
            out.append(gap)
        elif len(gap.note or "") > len(out[same].note or ""):
            out[same] = gap
    # A file holding several sessions one after another, split by the decoder: which one this
    # report grades (`part` is (this session, of how many); absent on older transcripts).
    part = getattr(transcript, "part", None)
    if part is not None and not any(g.kind == "several_sessions" for g in out):
        index, total = part
        out.append(Gap("several_sessions", "Several sessions in one file",
                       f"This file holds {total} sessions one after another; this report grades "
                       f"session {index}{' (the last)' if index == total else ''}. The others "
                       "are not part of this grade (check and batch grade each)."))
    tool_turns = [t for t in transcript.turns if t.role is Role.TOOL and t.meta is None]
    if len(tool_turns) >= 2 and not any(t.tool_output or t.is_error for t in tool_turns):
        out.append(Gap("no_results", "No tool results in the log",
                       f"The log records {len(tool_turns)} tool calls but none of their "
                       "results: whether edits applied and checks passed rests on what the "
                       "agent said, not on what the tools returned.",
                       *_bounded_turns(t.index for t in tool_turns),
                       ("task_completion", *_CODE_QUALITY)))
    if transcript.skipped:
        ranked = sorted(transcript.skipped, key=lambda item: (-item[1], item[0]))
        kinds = ", ".join(f"{n} {kind}" for kind, n in ranked[:6])
        if len(ranked) > 6:
            rest = len(ranked) - 6
            kinds += f" and {rest} other kind{'s' if rest != 1 else ''}"
        out.append(Gap("kept_out", "Records kept out of the turns",
                       f"The decoder kept these records out of the turn list: {kinds}. They "
                       "are bookkeeping (reasoning, progress, snapshots, duplicates) or lines "
                       "it could not use, and do not count as turns."))
    if redact_secrets:
        redacted = [(e.turn, _REDACTED.findall(e.excerpt + " " + e.note))
                    for f in findings for e in f.evidence]
        redacted += [(t.index, _REDACTED.findall(t.input_text + " " + t.output_text))
                     for t in appendix]
        hits = [(turn, marks) for turn, marks in redacted if marks]
        if hits:
            kinds = sorted({m[len("[redacted: "):-1] for _, marks in hits for m in marks})
            out.append(Gap("redacted", "Secrets redacted on this page",
                           f"Secrets ({', '.join(kinds)}) are shown as [redacted: …] markers; "
                           "the grade read the original text, so no score is affected.",
                           *_bounded_turns(turn for turn, _ in hits)))
    else:
        out.append(Gap("not_redacted", "Redaction is off",
                       "This page was made with --no-redact: secrets in the session are shown "
                       "as they are. Do not forward it."))
    return tuple(out)
