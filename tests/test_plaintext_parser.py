"""The Lark parsers: built once, cached on disk when possible, working without a cache."""

from __future__ import annotations

import os

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


def test_disk_cache_is_written_and_reused(fresh_parsers, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    textparse.parser("generic")
    cached = list((tmp_path / "skill-doctor").glob("generic-*.lark-cache"))
    assert len(cached) == 1
    textparse.parser.cache_clear()
    blocks = textparse.parse("generic", "User: hi\nAssistant: hello\n")
    assert [b.kind for b in blocks] == ["turn", "turn"]


def test_read_only_install_builds_without_a_cache(fresh_parsers, monkeypatch):
    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)
    assert textparse.cache_dir() is None
    blocks = textparse.parse("generic", "User: hi\n")
    assert blocks[0].header == "User: hi\n" and blocks[0].line == 1
