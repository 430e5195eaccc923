"""The Lark side of the plain-text front end: cached LALR parsers and the tree-to-blocks step.

Every dialect grammar in `grammar/*.lark` has the same shape: header tokens open sections and
runs of ordinary lines are single tokens. `parse()` returns the sections as `Block`s (rule name,
header token, body tokens, source position); the dialect modules turn blocks into turns.

Parsers are built once per process (`lru_cache`), in memory only: building one takes 4-16 ms
once lark is imported, and skill-doctor writes nothing outside its report directory, so there
is no on-disk parser cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .. import resources
from ..model import ParseProblem
from ..text import cut

# Start symbols each grammar may be asked for (Lark builds all tables at once).
_STARTS = {"generic": ["start", "strict"]}


@dataclass(frozen=True, slots=True)
class Block:
    """One section of a parsed text: `kind` is the grammar rule, `head` the header token."""

    kind: str
    head: Any  # lark Token, or None for text before the first header
    parts: tuple[Any, ...]  # body tokens in order
    line: int
    column: int

    @property
    def header(self) -> str:
        return str(self.head) if self.head is not None else ""

    @property
    def body(self) -> str:
        return "".join(str(tok) for tok in self.parts)


@lru_cache(maxsize=None)
def parser(name: str):
    """The LALR parser for `grammar/<name>.lark`, built once per process.

    Blocks are built while parsing (an inline transformer), with no parse tree and no rule
    positions: every token carries its own line and column, which is all a Block needs. Both
    choices roughly double the speed on large logs.
    """
    from lark import Lark

    grammar = resources.grammar_path(f"{name}.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", propagate_positions=False,
                maybe_placeholders=False, start=_STARTS.get(name, ["start"]),
                transformer=_ToBlocks())


def parse(name: str, text: str, start: str = "start") -> list[Block]:
    """Blocks of `text` (which must end with a newline). Raises lark's UnexpectedInput."""
    return parser(name).parse(text, start=start)


def _make_transformer():
    from lark import Token, Transformer, Tree

    class ToBlocks(Transformer):
        """Each rule with a header token becomes a Block, followed by the Blocks nested in it;
        tokens outside any rule (text before the first header) become "text" Blocks."""

        def __default__(self, data, children, meta):
            if str(data).startswith("_"):
                return Tree(data, children, meta)  # inlined into its parent by Lark
            tokens = [c for c in children if isinstance(c, Token)]
            head = tokens[0] if tokens else None
            own = Block(str(data), head, tuple(tokens[1:]), getattr(head, "line", 0) or 0,
                        getattr(head, "column", 1) or 1)
            nested = [b for c in children if isinstance(c, list) for b in c]
            return [own, *nested]

        def preamble(self, children):
            return children  # plain tokens, grouped by the start rule

        def _top(self, children):
            blocks: list[Block] = []
            loose: list[Token] = []
            for child in children:
                if isinstance(child, Token):
                    loose.append(child)
                    continue
                if child and isinstance(child[0], Token):  # a preamble
                    loose.extend(child)
                    continue
                if loose:
                    blocks.append(Block("text", None, tuple(loose), loose[0].line, loose[0].column))
                    loose = []
                blocks.extend(child)
            if loose:
                blocks.append(Block("text", None, tuple(loose), loose[0].line, loose[0].column))
            return blocks

        start = _top
        strict = _top

    return ToBlocks


def _ToBlocks():
    global _TRANSFORMER
    if _TRANSFORMER is None:
        _TRANSFORMER = _make_transformer()
    return _TRANSFORMER()


_TRANSFORMER = None


def problem_from(exc: Exception, text: str, message: str) -> ParseProblem:
    """A positioned ParseProblem from a Lark error, with the surrounding source text."""
    line = getattr(exc, "line", 0) or 0
    column = getattr(exc, "column", 0) or 0
    context = ""
    pos = getattr(exc, "pos_in_stream", None)
    if isinstance(pos, int) and pos >= 0:
        start = text.rfind("\n", 0, max(pos - 1, 0)) + 1
        start = text.rfind("\n", 0, max(start - 1, 0)) + 1  # one line before
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        nxt = text.find("\n", end + 1)
        end = end if nxt < 0 else nxt
        context = text[start:end]
    elif line:
        lines = text.splitlines()
        context = "\n".join(lines[max(line - 2, 0):line + 1])
    return ParseProblem(message=message, line=line, column=column, context=cut(context, 600))


def error_offset(exc: Exception, text: str) -> int:
    """Offset of the start of the line where parsing stopped (for re-parsing the prefix)."""
    pos = getattr(exc, "pos_in_stream", None)
    if not isinstance(pos, int) or pos < 0:
        line = getattr(exc, "line", 0) or 0
        if not line:
            return 0
        pos = 0
        for _ in range(line - 1):
            pos = text.find("\n", pos) + 1
    return text.rfind("\n", 0, pos) + 1
