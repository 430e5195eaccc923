"""patterns: regular expressions compiled the first time they are used, not at import.

The package holds a few hundred patterns (harness formats, shell commands, secrets, request
wording), and compiling them all took about half of every report's start-up, while a given
session uses a fraction of them. `compile_later(source, flags)` stands for
`re.compile(source, flags)`: the first call of any of its methods compiles it, and from then
on its methods are the compiled pattern's own (no indirection left on the hot path).
"""

from __future__ import annotations

import re
from typing import Any

_ATTRIBUTES = ("search", "match", "fullmatch", "sub", "subn", "finditer", "findall", "split",
               "scanner", "groups", "groupindex")


class LazyPattern:
    """A pattern compiled on first use; `pattern` and `flags` are there before it is."""

    __slots__ = ("pattern", "flags") + _ATTRIBUTES

    def __init__(self, source: str | bytes, flags: int = 0) -> None:
        self.pattern = source
        self.flags = flags

    def __getattr__(self, name: str) -> Any:
        # Called only for a slot not set yet: compile, then set every slot at once.
        if name not in _ATTRIBUTES:
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self.flags)
        for attribute in _ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def compiled(self) -> re.Pattern:
        """The compiled pattern (compiling it now if it was not yet)."""
        return re.compile(self.pattern, self.flags)

    def __repr__(self) -> str:
        return f"compile_later({self.pattern!r}, {self.flags})"


def compile_later(source: str | bytes, flags: int = 0) -> Any:
    """`re.compile(source, flags)`, compiled when first used (typed Any: it is used as one)."""
    return LazyPattern(source, flags)
