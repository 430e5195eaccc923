"""Plain-text transcripts through the Lark grammar (`grammar/transcript.lark`).

Generic role-marker logs: a turn starts at a line `User:`, `Assistant:`, `Tool:` or `System:`
(also `Human:`, `AI:` and `## User`-style headings). Text that fits no dialect becomes a
parse-error transcript that says where parsing stopped, with whatever turns came before.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

from .. import resources
from ..model import ParseProblem
from .builder import TranscriptBuilder

HARNESS = "plain-text"

_ROLE_LINE = re.compile(
    r"^(?:#{1,4}\s*)?(?:\*\*)?(User|Human|You|Assistant|AI|Claude|Agent|Model|Tool|System)"
    r"(?:\*\*)?\s*:", re.MULTILINE)


def sniff(head: str) -> bool:
    return bool(_ROLE_LINE.search(head))


@lru_cache(maxsize=1)
def parser():
    """The LALR parser, built once per process (and cached on disk by Lark across runs)."""
    from lark import Lark

    grammar = resources.grammar_path("transcript.lark")
    return Lark(grammar.read_text(encoding="utf-8"), parser="lalr", propagate_positions=True,
                maybe_placeholders=False)


_ROLES = {"user": "user", "human": "user", "you": "user", "assistant": "assistant",
          "ai": "assistant", "claude": "assistant", "agent": "assistant", "model": "assistant",
          "tool": "tool", "system": "system"}


def decode(path: Path, stream: BinaryIO) -> TranscriptBuilder:
    from lark.exceptions import UnexpectedInput

    b = TranscriptBuilder(str(path), HARNESS)
    text = stream.read().decode("utf-8", errors="replace").replace("\r\n", "\n")
    if not text.endswith("\n"):
        text += "\n"
    try:
        tree = parser().parse(text)
    except UnexpectedInput as exc:
        b.problem = ParseProblem(
            message="no turn boundaries found: the text fits no known transcript format",
            line=getattr(exc, "line", 0) or 0, column=getattr(exc, "column", 0) or 0,
            context=exc.get_context(text, span=60) if hasattr(exc, "get_context") else "")
        b.not_a_transcript = True
        return b
    for turn in tree.children:
        header, *body = turn.children
        label, _, first_line = str(header).partition(":")
        role = _ROLES.get(label.strip("#* \t").lower(), "user")
        content = (first_line.strip() + "\n" + "".join(str(tok) for tok in body)).strip("\n")
        line = header.line
        if role == "user":
            b.user(content, line=line)
        elif role == "assistant":
            b.assistant(content, line=line)
        elif role == "system":
            b.user(content, line=line, meta="system")
        else:
            first, _, rest = content.partition("\n")
            name, _, args = first.strip().partition(" ")
            b.tool(name or "unknown", {"command": args} if args else {}, rest, line=line)
    return b
