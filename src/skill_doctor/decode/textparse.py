"""The grammar side of the plain-text front end: a linear lexer, cached LALR parsers and the
tree-to-blocks step.

Every dialect grammar in `grammar/*.lark` has the same shape: header tokens open sections and
runs of ordinary lines are single tokens. `parse()` returns the sections as `Block`s (rule name,
header token, body tokens, source position); the dialect modules turn blocks into turns.

Lexing: every terminal of these grammars is a whole number of lines, so the text is cut into
tokens by the terminals' own regular expressions (read from the grammar file, tried in Lark's
order: priority, then pattern length, then name), one C-level match per token. Multi-line
terminals that need a closing line (code fences, `<details>`, `<tool-use>`) are where a regex
lexer goes quadratic: an opener that never closes is scanned to the end of the text, again at
every later opener. `_GUARDS` gives each such terminal the line that ends its body; that line
is searched for once per stretch of text (an opener that fails tells every later opener up to
the same stopping line that it fails too), so lexing is linear in the text.

The generic dialect (a turn per role line, any token sequence with one is valid) is cut into
turns straight from the tokens, without the parser. The other dialects, and the generic one
when that fails (no role line at all, a character no terminal accepts), are parsed by Lark
with this lexer, so Lark keeps the job of positioned parse errors. The Claude Code TUI grammar
keeps Lark's contextual lexer: which terminals it accepts depends on the parser state.

Parsers are built once per process (`lru_cache`), in memory only: building one takes 4-16 ms
once lark is imported, and skill-doctor writes nothing outside its report directory, so there
is no on-disk parser cache.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterator

from ..patterns import compile_later
from .. import resources
from ..model import ParseProblem
from ..text import cut

# Start symbols each grammar may be asked for (Lark builds all tables at once).
_STARTS = {"generic": ["start", "strict"]}
# Grammars lexed by `_Lexer` (state-free: every terminal is acceptable wherever a token may
# start, or a token it lexes that the parser does not accept is an error either way).
_OWN_LEXER = frozenset({"generic", "aider", "specstory", "mini_swe"})
_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f]"
# (grammar, terminal) -> (opening line, first line that ends the body, closing line). The
# stopping line is what the terminal's `(?:(?!STOP)...\n)*` body refuses; the terminal
# matches exactly when the stopping line is its closing line. Keep in step with the grammar
# (tests/test_plaintext_linear.py compares this lexer with Lark's on every dialect).
_GUARDS: dict[tuple[str, str], tuple[str, str, str]] = {
    ("generic", "FENCE"): (
        r"```(?!`)[^\n]*\n",
        r"^(?:```[ \t]*\n|#{1,4}[ \t]*(?:[^\w\s]{1,4}[ \t]*)?(?:User|USER|Human|Assistant|"
        r"ASSISTANT|AI|Claude|Model|MODEL|PROMPT|RESPONSE)\b)|" + _CONTROL,
        r"```[ \t]*\n"),
    ("generic", "FENCE4"): (r"````[^\n]*\n", r"^````[ \t]*\n|" + _CONTROL, r"````[ \t]*\n"),
    ("aider", "FENCE4"): (r"````[^\n]*\n", r"^````[ \t]*\n", r"````[ \t]*\n"),
    ("specstory", "TOOLUSE"): (r"<tool-use[^\n]*\n", r"^</tool-use>", r"</tool-use>"),
    ("specstory", "DETAILS"): (r"[ \t]*<details[^\n]*\n", r"^[ \t]*</details>",
                               r"[ \t]*</details>"),
}
_TERMINAL = compile_later(r"^([A-Z][A-Z0-9_]*)(?:\.(-?\d+))?[ \t]*:[ \t]*/(.*)/[ \t]*$", re.MULTILINE)


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
    """The LALR parser for `grammar/<name>.lark` with Lark's contextual lexer, built once per
    process: what parses the Claude Code TUI dialect and the generic `strict` start, and the
    reference the linear lexer is tested against.

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
    if name == "generic" and start == "start":
        blocks = generic_blocks(text)
        if blocks is not None:
            return list(blocks)
    if name in _OWN_LEXER and start == "start":
        return _lexed_parser(name).parse(text, start=start)
    return parser(name).parse(text, start=start)


class _LexError(Exception):
    """No terminal matches at `pos` (the start of a line)."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


class _Guard:
    """Whether a multi-line terminal closes at an opener, from the first line after the opener
    that its body refuses (the stopping line): it closes exactly when that is a closing line."""

    def __init__(self, opener: str, stop: str, close: str) -> None:
        self.opener = re.compile(opener)
        self.close = re.compile(close)
        # The stopping line is searched for as a line end followed by it, which the regex
        # engine finds with a fast scan for the line end (a pattern that begins with `^` is
        # tried at every character); a control character, where one also stops the body, is
        # searched for apart with a single character class.
        control = stop.endswith("|" + _CONTROL)
        line = stop[: -len(_CONTROL) - 1] if control else stop
        if not line.startswith("^") or "|" in re.sub(r"\(.*\)|\[.*?\]|\\.", "", line[1:]):
            raise ValueError(f"a stopping line must be `^LINE` or `^LINE|{_CONTROL}`: {stop!r}")
        self.stop_line = re.compile(rf"\n(?={line[1:]})")
        self.stop_control = re.compile(_CONTROL) if control else None

    def closes(self, text: str, pos: int, memo: list[int]) -> bool:
        """`memo` is [where the last search began, the stopping line it found or -1], kept by
        the caller for one text: no stopping line lies between those two, so an opener in
        that stretch stops at the same line and nothing is searched twice."""
        opened = self.opener.match(text, pos)
        if opened is None:
            return False
        body = opened.end()
        searched_from, found = memo
        if searched_from < 0 or body < searched_from or 0 <= found < body:
            found = self._stop(text, body)
            memo[0], memo[1] = body, found
        return found >= 0 and self.close.match(text, found) is not None


    def _stop(self, text: str, body: int) -> int:
        """Where the first stopping line (or control character) at or after `body` starts, a
        line start just after the opener; -1 when there is none."""
        line = self.stop_line.search(text, body - 1)  # the opener ends with a line end
        found = line.start() + 1 if line else -1
        if self.stop_control is not None:
            control = self.stop_control.search(text, body, found if found >= 0 else len(text))
            if control is not None:
                found = control.start()
        return found


class _Lexer:
    """The grammar's terminals as one alternation tried in Lark's order; guarded terminals
    match only when their guard says they close."""

    def __init__(self, name: str) -> None:
        grammar = resources.grammar_path(f"{name}.lark").read_text(encoding="utf-8")
        terminals = [(n, int(p or 0), rx) for n, p, rx in _TERMINAL.findall(grammar)
                     if n != "BLANK"]  # BLANK belongs to the `strict` start only
        terminals.sort(key=lambda t: (-t[1], -len(t[2]), t[0]))
        self.names = [t[0] for t in terminals]
        self.guards = {n: _Guard(*_GUARDS[(name, n)]) for n in self.names if (name, n) in _GUARDS}
        # A guarded terminal stands in the alternation as its opening line only; its whole
        # pattern is matched once the guard says it closes.
        self.whole = {n: re.compile(rx) for n, _, rx in terminals if n in self.guards}
        alternatives = [(n, _GUARDS[(name, n)][0] if n in self.guards else rx)
                        for n, _, rx in terminals]
        # After a guarded terminal fails, the terminals after it are tried from the same place.
        self.from_index = [re.compile("|".join(f"(?P<{n}>{rx})" for n, rx in alternatives[i:]))
                           for i in range(len(alternatives))]
        self.index = {n: i for i, n in enumerate(self.names)}

    def tokens(self, text: str) -> Iterator[tuple[str, int, int]]:
        """(terminal, start, end) of each token. Raises _LexError where nothing matches."""
        pos, size = 0, len(text)
        first = self.from_index[0]
        guards = self.guards
        memos = {name: [-1, -1] for name in guards}
        while pos < size:
            match = first.match(text, pos)
            kind = match.lastgroup if match is not None else None
            while kind in guards:
                if guards[kind].closes(text, pos, memos[kind]):
                    whole = self.whole[kind].match(text, pos)
                    if whole is not None:
                        match = whole
                        break
                following = self.index[kind] + 1  # the terminals after it, from here
                match = (self.from_index[following].match(text, pos)
                         if following < len(self.from_index) else None)
                kind = match.lastgroup if match is not None else None
            if match is None or kind is None or match.end() == pos:
                raise _LexError(pos)
            yield kind, pos, match.end()
            pos = match.end()


@lru_cache(maxsize=None)
def lexer(name: str) -> _Lexer:
    return _Lexer(name)


def generic_blocks(text: str) -> Iterator[Block] | None:
    """The generic dialect's blocks cut straight from the tokens, made one at a time (a turn's
    body is not held once it is used), or None when the parser is needed (no role line, or
    text no terminal accepts) to say what is wrong."""
    heads = array("q")  # start and end of each header line, flat: 16 bytes a turn
    try:
        for kind, start, end in lexer("generic").tokens(text):
            if kind == "HEADER":
                heads.append(start)
                heads.append(end)
    except _LexError:
        return None
    if not heads:
        return None
    return _cut(text, heads)


def _cut(text: str, heads: array) -> Iterator[Block]:
    if heads[0] > 0:
        yield Block("text", None, (text[:heads[0]],), 1, 1)
    line = 1 + text.count("\n", 0, heads[0])
    for index in range(0, len(heads), 2):
        start, end = heads[index], heads[index + 1]
        stop = heads[index + 2] if index + 2 < len(heads) else len(text)
        body = text[end:stop]
        yield Block("turn", text[start:end], (body,) if body else (), line, 1)
        line += 1 + body.count("\n")  # a header is one line


@lru_cache(maxsize=None)
def _lexed_parser(name: str):
    """The LALR parser for `grammar/<name>.lark` fed by `_Lexer` (start symbol `start`)."""
    from lark import Lark, Token
    from lark.exceptions import UnexpectedCharacters
    from lark.lexer import Lexer

    own = lexer(name)

    class GrammarLexer(Lexer):
        def __init__(self, lexer_conf) -> None:
            pass

        def lex(self, data: str):
            line = 1
            try:
                for kind, start, end in own.tokens(data):
                    value = data[start:end]
                    yield Token(kind, value, start, line, 1)  # every token starts a line
                    line += value.count("\n")
            except _LexError as exc:
                raise UnexpectedCharacters(data, exc.pos, line, 1) from None

    grammar = resources.grammar_path(f"{name}.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer=GrammarLexer, propagate_positions=False,
                maybe_placeholders=False, start=["start"], transformer=_ToBlocks())


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
