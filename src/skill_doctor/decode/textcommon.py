"""Helpers shared by the plain-text dialects: parsing with a partial fallback, fences, diffs,
and `Blocks`, the linear search for lazily closed blocks."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator

from ..patterns import compile_later
from .builder import TranscriptBuilder
from .fields import exit_code
from .textparse import Block, error_offset, parse, problem_from


class Blocks:
    """`re.finditer` over an alternation whose alternatives are blocks, an opening pattern
    with a lazy body (`OPEN .*?`) then a closing pattern, or plain patterns (close None);
    same matches, linear time.

    A regex scans an unclosed lazy block to the end of the text, and again at every later
    opener: quadratic. Here each block may also end at the end of the text, marked; such a
    match means that alternative fails there and at every later place (a closing line after a
    later opener would have closed this one), so the search goes on from the same place
    without it.
    """

    def __init__(self, alternatives: list[tuple[str, str | None]], flags: int = 0) -> None:
        self.alternatives = tuple(alternatives)
        self.flags = flags

    @lru_cache(maxsize=None)
    def _pattern(self, active: frozenset[int]) -> re.Pattern[str]:
        parts = []
        for index, (opening, close) in enumerate(self.alternatives):
            if index not in active:  # kept, never matching, so its groups still exist
                parts.append(f"(?!)(?:{opening})")
            else:
                parts.append(opening if close is None
                             else f"(?:{opening})(?:{close}|(?P<_unclosed{index}>\\Z))")
        return re.compile("|".join(parts), self.flags)

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None) -> Iterator[re.Match[str]]:
        end = len(text) if endpos is None else endpos
        active = frozenset(range(len(self.alternatives)))
        blocks = [i for i, (_, close) in enumerate(self.alternatives) if close is not None]
        while active:
            for match in self._pattern(active).finditer(text, pos, end):
                unclosed = [i for i in blocks if i in active
                            and match.group(f"_unclosed{i}") is not None]
                if unclosed:
                    active = active - {unclosed[0]}
                    pos = match.start()
                    break
                yield match
            else:
                return

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> re.Match[str] | None:
        return next(self.finditer(text, pos, endpos), None)

    def sub(self, replacement: str, text: str) -> str:
        pieces, cursor = [], 0
        for match in self.finditer(text):
            pieces.append(text[cursor:match.start()])
            pieces.append(replacement)
            cursor = match.end()
        pieces.append(text[cursor:])
        return "".join(pieces)


# The lazy body of a block whose closing pattern begins with `^` (MULTILINE), a line at a time:
# the same match as `.*?` (DOTALL), which tries the closing pattern again at every character,
# though it can only match at a line start (a last line without a line end is taken whole only
# when nothing closes before the end). Several times faster on long bodies.
LINE_BODY = r"(?:[^\n]*\n)*?(?:[^\n]+\Z)??"
# A fenced block: group 1 the info string, group 2 the body.
FENCE = Blocks([(rf"^```([^\n]*)\n({LINE_BODY})", r"^```[ \t]*$")], re.DOTALL | re.MULTILINE)
_EXIT_CODE = compile_later(r"^(?:Error: )?Exit code (\d+)")


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


