"""Terminal captures of agent runs (`terminal-log/`), `grammar/mini_swe.lark`.

A pre-pass makes the capture readable without changing its line numbers: ANSI escape
sequences are removed, carriage-return overwrites keep what was written last on each line,
and spinner text (`⠋ Waiting for the LM to respond...`) is dropped. mini-swe-agent runs then
parse as `System:` / `User:` blocks and `mini-swe-agent (step N, $cost):` steps: a step's
THOUGHT is an assistant turn and its ```bash block a Bash call whose result is the next
`User:` block (`<returncode>` is the exit code, `<output>` the output; a timeout message is an
error). A capture where the agent never started keeps the task as its only turn.
"""

from __future__ import annotations

import re

from ..patterns import compile_later
from ..model import ParseProblem
from .builder import TranscriptBuilder
from .fields import exit_code
from .started import start_failure
from .textcommon import FENCE, Blocks, parse_or_partial

_ANSI = compile_later(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]"
                   r"|\x1b[=>78cDEHM]")
_SPINNER = compile_later(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Waiting for the LM to respond\.\.\.")
_CONTROL = compile_later(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_RETURNCODE = compile_later(r"<returncode>(-?\d+)</returncode>")
_OUTPUT = Blocks([(r"<output(?:_head)?>\n?(.*?)", r"</output(?:_tail)?>")], re.DOTALL)
_TIMEOUT = compile_later(r"timed out and has been killed")
_PROMPT_LINE = compile_later(r"^\S+@\S+:[^\n]*[#$] |^Saved trajectory to ", re.MULTILINE)
_RULE = compile_later(r"^[─━-]{10,}.*$", re.MULTILINE)
_STEP_COST = compile_later(r"\(step (\d+), \$([\d.]+)\)")
_SERVER_LOG = compile_later(r"\b(?:INFO|DEBUG|WARNING|ERROR)\b.*\b(?:action_execution_server|runtime|"
                         r"uvicorn|ActionExecutor|CmdRunAction|FileEditAction|AgentController)\b"
                         r"|^\d\d:\d\d:\d\d - openhands:", re.IGNORECASE)
_LAUNCH = Blocks([(r"[#$] (?:mini|mini-swe-agent|openhands)\b[^\n]*?(?:-t|--task) '(.*?)",
                   r"'(?: |;|$)")], re.DOTALL | re.MULTILINE)


def normalise(text: str) -> str:
    """Strip ANSI, apply carriage returns and remove spinners; line numbers stay the same."""
    text = _ANSI.sub("", text)
    text = re.sub(r"\r+\n", "\n", text)
    lines = []
    for line in text.split("\n"):
        if "\r" in line:
            parts = [p for p in line.split("\r") if p.strip()]
            line = parts[-1] if parts else ""
        line = _SPINNER.sub("", line)
        lines.append(_CONTROL.sub("", line))
    return "\n".join(lines)


def decode_text(source: str, text: str) -> TranscriptBuilder:
    text = normalise(text)
    if not text.endswith("\n"):
        text += "\n"
    steps = re.search(r"^mini-swe-agent \(step \d+", text, re.MULTILINE)
    b = TranscriptBuilder(source, "mini-swe-agent-log" if steps or "mini-swe-agent" in text
                          else "terminal-log")
    blocks = parse_or_partial(b, "mini_swe", text)
    sections = [blk for blk in blocks if blk.kind == "section"]
    if not sections:
        _no_agent(b, text)
        return b
    command: str | None = None
    command_line = 0
    stepped = False  # whether a step came before (a User block after one is feedback)
    for block in sections:
        body = block.body
        head = block.header.strip()
        if head.startswith("System:"):
            b.user(_clean(body), line=block.line, meta="system")
        elif head.startswith("mini-swe-agent"):
            stepped = True
            if command is not None:  # the previous step got no observation
                b.tool("Bash", {"command": command}, "", line=command_line)
            cost = _STEP_COST.search(head)
            if cost:
                b.extra["cost"] = "$" + cost.group(2)
            fence = next((m for m in FENCE.finditer(body) if m.group(1).strip() in ("bash", "sh")),
                         None)
            thought = body[:fence.start()] if fence else body
            thought = re.sub(r"^\s*THOUGHT:\s*", "", _clean(thought))
            if thought:
                b.assistant(thought, line=block.line)
            command = fence.group(2).strip("\n") if fence else None
            command_line = block.line + body.count("\n", 0, fence.start()) + 1 if fence else 0
        else:  # User:
            content = _clean(_cut_shell(body))
            if command is None:
                if content:
                    b.user(content, line=block.line, meta="feedback" if stepped else None)
                continue
            code = _RETURNCODE.search(content)
            output_match = _OUTPUT.search(content)
            output = output_match.group(1) if output_match else content
            if code:
                b.tool("Bash", {"command": command}, output.rstrip("\n"),
                       exit_code=exit_code(code.group(1)), line=command_line)
            else:
                b.tool("Bash", {"command": command}, content,
                       is_error=bool(_TIMEOUT.search(content)), line=command_line)
            command = None
    if command is not None:
        b.tool("Bash", {"command": command}, "", line=command_line)
    return b


def _clean(text: str) -> str:
    return _RULE.sub("", text).strip("\n").strip()


def _cut_shell(text: str) -> str:
    """The observation only: stop where the shell prompt comes back after the run."""
    match = _PROMPT_LINE.search(text)
    return text[:match.start()] if match else text


def _no_agent(b: TranscriptBuilder, text: str) -> None:
    """A capture with no agent steps: keep the task it was given and say why nothing ran."""
    launch = None
    for launch in _LAUNCH.finditer(text):
        pass
    if launch is None:
        b.note("the capture shows no agent run")
        return
    task = re.sub(r"\n> ?", "\n", launch.group(1)).strip()
    task = re.sub(r"\n{2,}", "\n", task)
    line = text.count("\n", 0, launch.start()) + 1
    b.user(task, line=line)
    failure = start_failure(text[launch.end():])
    if failure:
        b.not_started = failure
        b.note(f"the agent never started: {b.not_started}")
        return
    # The agent was launched and did not fail to start, yet no step of it is here: the log
    # holds something else (an OpenHands run prints only its runtime server's log).
    rest = text[launch.end():]
    lines = [line for line in rest.split("\n") if line.strip()]
    server = sum(1 for line in lines if _SERVER_LOG.search(line))
    holds = (f"{server} lines of the runtime server's log" if server
             else f"{len(lines)} lines of other output")
    b.problem = ParseProblem(message=f"the agent ran, but its turns are not in this log: after "
                                     f"its launch it holds {holds}", line=line, column=1,
                             context=launch.group(0)[:200])
