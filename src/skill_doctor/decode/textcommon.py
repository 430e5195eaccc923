"""Helpers shared by the plain-text dialects: parsing with a partial fallback, fences, diffs."""

from __future__ import annotations

import re

from .builder import TranscriptBuilder
from .fields import exit_code
from .textparse import Block, error_offset, parse, problem_from

FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_EXIT_CODE = re.compile(r"^(?:Error: )?Exit code (\d+)")


def parse_or_partial(b: TranscriptBuilder, grammar: str, text: str, *, start: str = "start",
                     message: str = "parsing stopped here") -> list[Block]:
    """Blocks of `text`; on a syntax error, a positioned problem and the blocks before it."""
    from lark.exceptions import UnexpectedInput

    try:
        return parse(grammar, text, start)
    except UnexpectedInput as exc:
        b.problem = problem_from(exc, text, message)
        offset = error_offset(exc, text)
        if offset <= 0:
            return []
        try:
            return parse(grammar, text[:offset], start)
        except UnexpectedInput:
            return []


def dedent(text: str, width: int) -> str:
    """Remove up to `width` leading spaces from every line."""
    pad = " " * width
    out = []
    for line in text.split("\n"):
        if line.startswith(pad):
            out.append(line[width:])
        else:
            out.append(line.lstrip(" "))
    return "\n".join(out)


def diff_snippets(diff: str) -> list[tuple[str | None, str, str]]:
    """(path, old text, new text) per file of a unified diff; path None when it names none."""
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    if "\n+++ " in diff or diff.startswith("--- "):
        try:
            patch = PatchSet(diff)
        except (UnidiffParseError, ValueError, IndexError):
            patch = None
        if patch:
            out = []
            for pfile in patch:
                path = pfile.path
                old, new = [], []
                for hunk in pfile:
                    for line in hunk:
                        if line.line_type in (" ", "-"):
                            old.append(line.value)
                        if line.line_type in (" ", "+"):
                            new.append(line.value)
                out.append((path, "".join(old), "".join(new)))
            return out
    old, new = [], []
    for line in diff.split("\n"):
        if line.startswith(("@@", "--- ", "+++ ", "\\")):
            continue
        marker, rest = (line[:1], line[1:]) if line else (" ", "")
        if marker not in " +-":
            marker, rest = " ", line
        if marker in " -":
            old.append(rest)
        if marker in " +":
            new.append(rest)
    return [(None, "\n".join(old), "\n".join(new))] if (old or new) else []


def output_status(name: str, output: str) -> tuple[bool, int | None]:
    """(is_error, exit_code) read from a tool's output the way Claude Code prints it."""
    head = output.lstrip()
    match = _EXIT_CODE.match(head)
    if name == "Bash":
        if match:
            code = exit_code(match.group(1))
            return code != 0, code
        if head.startswith(("Error", "<tool_use_error>")):
            return True, None
        return False, 0
    return head.startswith(("Error", "<tool_use_error>")) or bool(match and match.group(1) != "0"), None


