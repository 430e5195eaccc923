"""Agent trajectories: SWE-agent `.traj` (0.x and 1.x), mini-swe-agent, OpenHands events.

SWE-agent: with function calling (1.x) the `history` holds assistant
messages with `tool_calls` (JSON arguments) followed by `tool` observations -- those are
read when the file has no `trajectory`; otherwise the clean `trajectory` list of {thought,
action, observation} is read (it also keeps the final `submit`) and each action's command text
is parsed (`open f`, `edit 3:5 ... end_of_edit`,
`edit 'old' 'new'`, `create f`, `find_file`, anything else is bash). Windowed edits name no
file: the path is the one the previous observation reports as `(Open file: ...)`. The
`tool_call_ids` of replayed demonstrations repeat, so results pair by position, not id.
Demonstration messages (`is_demo`) are kept out.

mini-swe-agent (section 15): messages where each assistant reply holds one fenced bash
command and the next user message is its observation `<returncode>N</returncode><output>`.

OpenHands (section 16): an event array; actions pair with observations through `cause`; the
exit code is `extras.metadata.exit_code`.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, BinaryIO

from ..patterns import compile_later
from .builder import TranscriptBuilder
from .fields import exit_code, items, json_text, tool_arguments
from .jsonl import UNREADABLE, read_document

HARNESS = "trajectory"

_SWE = compile_later(r'"(?:trajectory|history)"\s*:\s*\[')
_SWE_INNER = compile_later(r'"message_type"\s*:|"observation"\s*:|"action"\s*:')
_MINI = compile_later(r'"trajectory_format"\s*:\s*"mini-swe-agent')
_MINI_BARE = compile_later(r'^\[\s*\{\s*"role"\s*:\s*"system"')
_OPENHANDS = compile_later(r'^\[\s*\{')
_OPENHANDS_ID = compile_later(r'"id"\s*:\s*\d+\s*[,}]')
_OPENHANDS_KIND = compile_later(r'"(?:action|observation)"\s*:\s*"[a-z_]+"')
_OPENHANDS_INNER = compile_later(r'"source"\s*:\s*"(?:user|agent|environment)"')
_OPEN_FILE = compile_later(r"\(Open file: ([^)\n]*)\)")
_FENCE = compile_later(r"```(?:bash|sh|mswea_bash_command)?[ \t]*\n(.*?)```", re.DOTALL)
_RETURNCODE = compile_later(r"<returncode>(-?\d+)</returncode>")
_LINE_EDIT = compile_later(r"^edit\s+(\d+):(\d+)\s*\n(.*?)(?:\nend_of_edit\s*)?$", re.DOTALL)


def sniff(head: str) -> bool:
    start = head.lstrip()
    if start.startswith("{"):
        return bool(_MINI.search(head) or (_SWE.search(head) and _SWE_INNER.search(head)))
    if start.startswith("["):
        if (_OPENHANDS.match(start) and _OPENHANDS_INNER.search(head)
                and _OPENHANDS_ID.search(head) and _OPENHANDS_KIND.search(head)):
            return True
        return bool(_MINI_BARE.match(start) and ("<returncode>" in head or "mswea_bash_command" in head))
    return False


def decode(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    unread = TranscriptBuilder(str(path), HARNESS)
    data = read_document(stream, unread)
    if data is UNREADABLE:
        return unread
    if isinstance(data, dict) and (data.get("trajectory_format", "").startswith("mini-swe-agent")
                                   if isinstance(data.get("trajectory_format"), str) else False):
        b = TranscriptBuilder(str(path), "mini-swe-agent")
        _info(b, data.get("info"))
        _mini(b, items(data.get("messages")))
    elif isinstance(data, dict):
        b = TranscriptBuilder(str(path), "swe-agent")
        _info(b, data.get("info"))
        _swe_agent(b, data)
    elif isinstance(data, list) and data and isinstance(data[0], dict) and "role" in data[0]:
        b = TranscriptBuilder(str(path), "mini-swe-agent")
        _mini(b, data)
    elif isinstance(data, list):
        b = TranscriptBuilder(str(path), "openhands")
        _openhands(b, data)
    else:
        b = TranscriptBuilder(str(path), HARNESS)
        b.not_a_transcript = True
    return b


def _info(b: TranscriptBuilder, info: Any) -> None:
    if not isinstance(info, dict):
        return
    if info.get("exit_status") is not None:
        b.extra["exit_status"] = str(info["exit_status"])
    if isinstance(info.get("submission"), str) and info["submission"].strip():
        b.extra["submitted"] = "yes"
    stats = info.get("model_stats")
    if isinstance(stats, dict):  # the run's totals only: pinned to no turn (turn 0)
        b.usage("model_stats", turn=0, input=stats.get("tokens_sent"),
                output=stats.get("tokens_received"))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in items(content):
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, str):
            parts.append(block)
    return "\n".join(parts)


# -- SWE-agent ----------------------------------------------------------------------------------

def _swe_agent(b: TranscriptBuilder, data: dict) -> None:
    history = [m for m in items(data.get("history")) if isinstance(m, dict)]
    real = [m for m in history if not m.get("is_demo")]
    demos = len(history) - len(real)
    if demos:
        b.skip("demonstration", demos)
    uses_tools = any(m.get("tool_calls") for m in real if m.get("role") == "assistant")
    trajectory = [s for s in items(data.get("trajectory")) if isinstance(s, dict)]
    # The task and system prompt come from history in every version.
    for position, message in enumerate(real, start=1):
        role = message.get("role")
        if role == "system":
            b.user(_text(message.get("content")), line=position, meta="system")
        elif role == "user":
            b.user(_text(message.get("content")), line=position)
            break
        else:
            break
    if trajectory:
        _swe_trajectory(b, trajectory)
    elif uses_tools:
        _swe_history_tools(b, real)
    else:
        _swe_history_text(b, real)


def _after_task(messages: list[dict]):
    """(position, message) of the history past the system prompt and the task statement,
    which the caller has already recorded."""
    seen_task = False
    for position, message in enumerate(messages, start=1):
        role = message.get("role")
        if role == "system" or (role == "user" and not seen_task):
            seen_task = seen_task or role == "user"
            continue
        yield position, message


def _swe_history_tools(b: TranscriptBuilder, messages: list[dict]) -> None:
    open_calls: list[str] = []
    open_file = None
    counter = 0
    for position, message in _after_task(messages):
        role = message.get("role")
        if role == "assistant":
            open_calls = []
            thought = _text(message.get("thought") or message.get("content"))
            if thought.strip():
                b.assistant(thought, line=position)
            for call in items(message.get("tool_calls")):
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict):
                    continue
                counter += 1
                name = str(function.get("name") or "unknown")
                args = tool_arguments(function.get("arguments"))
                _with_open_file(name, args, open_file)
                call_id = f"c{counter}"
                b.tool_call(call_id, name, args, line=position)
                open_calls.append(call_id)
        elif role in ("tool", "user"):
            output = _text(message.get("content"))
            open_file = _open_file(output) or open_file
            if open_calls:
                b.tool_result(open_calls.pop(0), output, line=position)
            elif role == "user":
                b.user(output, line=position, meta="observation")


def _swe_trajectory(b: TranscriptBuilder, steps: list[dict]) -> None:
    open_file = None
    for position, step in enumerate(steps, start=1):
        thought = str(step.get("thought") or step.get("response") or "")
        if thought.strip():
            b.assistant(thought, line=position)
        action = str(step.get("action") or "").strip()
        if not action:
            continue
        name, args = parse_action(action)
        _with_open_file(name, args, open_file)
        output = str(step.get("observation") or "")
        b.tool(name, args, output, line=position)
        state = step.get("state")
        if isinstance(state, str):
            try:
                state = json_text(state)
            except ValueError:
                state = None
        if isinstance(state, dict) and isinstance(state.get("open_file"), str):
            open_file = None if state["open_file"] in ("n/a", "") else state["open_file"]
        else:
            open_file = _open_file(output) or open_file
        open_file = _opened(name, args) or open_file


def _swe_history_text(b: TranscriptBuilder, messages: list[dict]) -> None:
    pending: tuple[str, dict, int] | None = None
    open_file = None
    for position, message in _after_task(messages):
        role = message.get("role")
        if role == "assistant":
            thought = _text(message.get("thought") or message.get("content"))
            if thought.strip():
                b.assistant(thought, line=position)
            action = str(message.get("action") or "").strip()
            if action:
                name, args = parse_action(action)
                _with_open_file(name, args, open_file)
                pending = (name, args, position)
        elif pending is not None:
            output = _text(message.get("content"))
            b.tool(pending[0], pending[1], output, line=pending[2])
            open_file = _opened(pending[0], pending[1]) or _open_file(output) or open_file
            pending = None
    if pending is not None:
        b.tool(pending[0], pending[1], None, line=pending[2])


def _open_file(observation: str) -> str | None:
    matches = _OPEN_FILE.findall(observation[-400:])
    if not matches:
        return None
    value = matches[-1].strip()
    return None if value in ("n/a", "") else value


_NEEDS_OPEN_FILE = {"edit", "insert", "goto", "scroll_up", "scroll_down", "search_file"}


def _opened(name: str, args: dict) -> str | None:
    """The file an `open` or `create` action makes the open file. The action decides: a
    step's recorded state can lag one step behind it."""
    if name in ("open", "create"):
        path = args.get("path") or args.get("filename")
        return str(path) if path else None
    return None


def _with_open_file(name: str, args: dict, open_file: str | None) -> None:
    """Windowed commands act on the open file; name it so the edit has a path."""
    if name in _NEEDS_OPEN_FILE and open_file and not any(
            k in args for k in ("path", "file_path", "filename")):
        args["path"] = open_file


def parse_action(action: str) -> tuple[str, dict]:
    """A SWE-agent 0.x command line as (tool name, input)."""
    first, _, rest = action.partition("\n")
    match = _LINE_EDIT.match(action)
    if match:
        body = match.group(3)
        if body.endswith("\nend_of_edit"):
            body = body[: -len("\nend_of_edit")]
        return "edit", {"lines": f"{match.group(1)}:{match.group(2)}", "replacement": body + "\n"}
    try:
        words = shlex.split(action if first.split()[:1] in (["edit"], ["insert"]) else first)
    except ValueError:
        words = first.split()
    if not words:
        return "bash", {"command": action}
    name = words[0]
    args = words[1:]
    if name == "open" and args:
        out: dict[str, Any] = {"path": args[0]}
        if len(args) > 1:
            out["line_number"] = args[1]
        return "open", out
    if name in ("goto", "scroll_up", "scroll_down"):
        return name, ({"line_number": args[0]} if args else {})
    if name == "create" and args:
        return "create", {"filename": args[0]}
    if name == "edit" and len(args) >= 2:
        out = {"search": args[0], "replace": args[1]}
        if len(args) > 2:
            out["replace-all"] = args[2].lower() == "true"
        return "edit", out
    if name == "insert" and args:
        out = {"text": args[0]}
        if len(args) > 1:
            out["line"] = args[1]
        return "insert", out
    if name == "find_file" and args:
        return name, {"file_name": args[0], **({"dir": args[1]} if len(args) > 1 else {})}
    if name in ("search_dir", "search_file") and args:
        return name, {"search_term": args[0], **({"dir": args[1]} if len(args) > 1 else {})}
    if name == "submit":
        return "submit", {}
    if name == "str_replace_editor" and len(args) >= 2:
        return name, {"command": args[0], "path": args[1]}
    return "bash", {"command": action}


# -- mini-swe-agent -----------------------------------------------------------------------------

def _mini(b: TranscriptBuilder, messages: list) -> None:
    pending: str | None = None
    counter = 0
    seen_task = False
    for position, message in enumerate(messages, start=1):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        text = _text(message.get("content"))
        if role == "system":
            b.user(text, line=position, meta="system")
        elif role == "assistant":
            commands = _FENCE.findall(text)
            prose = _FENCE.sub("", text).strip()
            if prose.startswith("THOUGHT:"):
                prose = prose[len("THOUGHT:"):].strip()
            if prose:
                b.assistant(prose, line=position)
            for command in commands[:1]:  # one action per reply; extra blocks are a format error
                counter += 1
                pending = f"m{counter}"
                b.tool_call(pending, "bash", {"command": command.strip()}, line=position)
        elif role in ("user", "tool"):
            if not text.strip():
                b.skip("empty")
                continue
            code = _RETURNCODE.search(text[:200])
            timed_out = "timed out" in text[:300] and "<command>" in text[:300]
            if pending is not None and (code or timed_out):
                output = re.sub(r"^\s*<returncode>-?\d+</returncode>\s*", "", text)
                output = re.sub(r"^<output>\n?|\n?</output>\s*$", "", output)
                b.tool_result(pending, output, exit_code=exit_code(code.group(1)) if code else None,
                              is_error=timed_out, line=position)
                pending = None
            elif not seen_task:
                seen_task = True
                b.user(text, line=position)
            else:
                b.user(text, line=position, meta="harness")
        else:
            b.skip(str(role or "unknown"))


# -- OpenHands ---------------------------------------------------------------------------------

_OH_TOOLS = {"run": "run", "run_ipython": "run_ipython", "read": "read", "write": "write",
             "browse": "browse", "browse_interactive": "browse", "delegate": "delegate"}


def _openhands(b: TranscriptBuilder, events: list) -> None:
    for position, event in enumerate(events, start=1):
        if not isinstance(event, dict):
            continue
        ts = event.get("timestamp") if isinstance(event.get("timestamp"), str) else None
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        source = event.get("source")
        # A retyped kind (a list, a number) names no action or observation: the event is
        # unknown, and never used as a key.
        action = event.get("action") if isinstance(event.get("action"), str) else None
        observation = event.get("observation")
        observation = observation if isinstance(observation, str) else None
        if action:
            event_id = str(event.get("id"))
            if action == "message":
                text = str(args.get("content") or event.get("message") or "")
                if source == "user":
                    b.user(text, line=position, timestamp=ts)
                elif text.strip():
                    b.assistant(text, line=position, timestamp=ts)
            elif action == "system":
                b.user(str(args.get("content") or ""), line=position, timestamp=ts, meta="system")
            elif action == "finish":
                text = str(args.get("final_thought") or args.get("outputs", {}).get("content", "")
                           if isinstance(args.get("outputs"), dict) else args.get("final_thought") or "")
                if text.strip():
                    b.assistant(text, line=position, timestamp=ts)
            elif action == "think":
                b.skip("reasoning")
            elif action == "edit":
                name = "str_replace_editor" if args.get("command") else "edit"
                b.tool_call(event_id, name, _oh_input(args), line=position, timestamp=ts)
            elif action in _OH_TOOLS:
                b.tool_call(event_id, _OH_TOOLS[action], _oh_input(args), line=position,
                            timestamp=ts)
            elif action in ("recall", "condensation", "change_agent_state", "null"):
                b.skip(str(action))
            else:
                b.tool_call(event_id, str(action), _oh_input(args), line=position, timestamp=ts)
            thought = args.get("thought")
            if isinstance(thought, str) and thought.strip() and action not in ("message", "think"):
                b.skip("thought")
        elif observation:
            cause = event.get("cause")
            if observation in ("agent_state_changed", "null", "recall", "condensation"):
                b.skip(str(observation))
                continue
            extras = event.get("extras") if isinstance(event.get("extras"), dict) else {}
            metadata = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
            code = metadata.get("exit_code", extras.get("exit_code"))
            code = code if isinstance(code, int) and code != -1 else None
            content = str(event.get("content") or event.get("message") or "")
            call_id = str(cause) if cause is not None else None
            if call_id and b.has_open_call(call_id):
                b.tool_result(call_id, content, exit_code=code, is_error=observation == "error",
                              line=position, timestamp=ts)
            elif observation == "error":
                b.assistant(content, line=position, timestamp=ts, meta="error")
            else:
                b.skip(f"observation:{observation}")
        else:
            b.skip("unknown")


def _oh_input(args: dict) -> dict:
    keep = {k: v for k, v in args.items() if k not in ("thought", "security_risk",
                                                        "confirmation_state", "blocking",
                                                        "is_input", "hidden")}
    return keep
