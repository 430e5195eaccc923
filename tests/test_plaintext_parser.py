"""The Lark parsers: built once, cached on disk when possible, working without a cache."""

from __future__ import annotations


import pytest

from skill_doctor.decode import textparse

GRAMMARS = ("generic", "claude_tui", "aider", "specstory", "mini_swe")


@pytest.fixture
def fresh_parsers():
    textparse.parser.cache_clear()
    yield
    textparse.parser.cache_clear()


@pytest.mark.parametrize("name", GRAMMARS)
def test_every_grammar_builds_as_lalr(fresh_parsers, name):
    parser = textparse.parser(name)
    assert parser.options.parser == "lalr"
    assert textparse.parser(name) is parser  # built once per process


def test_building_a_parser_writes_nothing_to_disk(fresh_parsers, tmp_path, monkeypatch,
                                                   isolated_home):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    before = sorted(p for p in isolated_home.rglob("*"))
    blocks = textparse.parse("generic", "User: hi\nAssistant: hello\n")
    assert [b.kind for b in blocks] == ["turn", "turn"]
    assert blocks[0].header == "User: hi\n" and blocks[0].line == 1
    assert not (tmp_path / "cache").exists()
    assert sorted(p for p in isolated_home.rglob("*")) == before
