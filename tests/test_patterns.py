"""Patterns compiled on first use (patterns.compile_later) behave as compiled ones, and every
one the package declares is a valid expression (an error must not wait for the session that
first uses it)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import skill_doctor
from skill_doctor.patterns import LazyPattern, compile_later
from skill_doctor.text import CaselessPattern


def _declared():
    for info in pkgutil.walk_packages(skill_doctor.__path__, "skill_doctor."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            values = value if isinstance(value, (tuple, list)) else (value,)
            for item in values:
                parts = item if isinstance(item, tuple) else (item,)
                for part in parts:
                    if isinstance(part, LazyPattern):
                        yield f"{info.name}.{name}", part
                    elif isinstance(part, CaselessPattern):
                        yield f"{info.name}.{name}", part.caseless
                        yield f"{info.name}.{name}", part.folded


def test_every_declared_pattern_compiles():
    found = list(_declared())
    assert len(found) > 300  # the shell, secret, format and wording patterns are all seen
    for where, pattern in found:
        try:
            pattern.compiled()
        except re.error as exc:
            pytest.fail(f"{where}: {exc}")


def test_a_lazy_pattern_matches_as_the_compiled_one():
    source = r"(?P<word>\w+)-(\d+)"
    lazy, eager = compile_later(source, re.I), re.compile(source, re.I)
    text = "a-1 B-22 c-"
    assert lazy.pattern == source and lazy.flags == re.I  # known before compiling
    assert lazy.search(text).group("word") == eager.search(text).group("word")
    assert lazy.findall(text) == eager.findall(text)
    assert lazy.sub("x", text) == eager.sub("x", text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert lazy.match(text, 4).group() == eager.match(text, 4).group()
    assert lazy.fullmatch("q-7") is not None and lazy.split(text) == eager.split(text)
    assert lazy.groups == 2 and lazy.groupindex == {"word": 1}


def test_an_invalid_pattern_fails_when_used_not_when_declared():
    bad = compile_later("(unclosed")
    with pytest.raises(re.error):
        bad.search("x")
    with pytest.raises(AttributeError):
        bad.no_such_method
