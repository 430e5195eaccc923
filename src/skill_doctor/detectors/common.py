"""Helpers several criteria share: file-name and import tokens, the files that orient a
reader, what a run or a hand-in looks like. Command lines are parsed in shell.py, and what a
session did is in the facts."""

from __future__ import annotations

import posixpath
import re

from ..patterns import compile_later
from ..facts import EditRecord


# Checks that are the project's own verdict on the work, unlike a run of some program.
PROJECT_CHECKS = frozenset({"test", "typecheck", "lint", "build"})


def runs_one_of(command: str, paths) -> bool:
    """Whether a command line runs or names one of `paths` (`python3 tests/missing_colon.py`,
    `python /tmp/verify.py`), by its path, or by the end of it the command gives."""
    words = [w for w in re.split(r"[\s;&|()'\"]+", command) if "." in w]
    return any(w == path or w.endswith("/" + path.lstrip("/")) or path.endswith("/" + w)
               for path in paths for w in words)


# A call that hands the work in (mini-swe-agent's final echo, SWE-agent's `submit`).
SUBMITS = compile_later(r"^\s*(submit|echo\s+\S*(FINAL_OUTPUT|COMPLETE_TASK)\S*)\b", re.I)


_ORIENTATION_FILES = {"claude.md", "agents.md", "gemini.md", "readme.md", "readme", "readme.rst",
                      "package.json", "pyproject.toml", "setup.py", "setup.cfg", "cargo.toml",
                      "go.mod", "makefile", "contributing.md", "tsconfig.json", "skill.md",
                      "conftest.py", "tox.ini", "pytest.ini", ".cursorrules"}


# Files a session writes for itself (background command output, scratch files): reading them
# back is following the work, not exploring the project.
_SCRATCH = compile_later(r"^(/private)?/tmp/|^/var/folders/|(^|/)AppData/Local/Temp/|(^|/)tasks/[^/]+"
                      r"\.output$|^/dev/", re.I)


_NAME_TOKEN = compile_later(r"[\w.\-]+")


# Line starts take spaces and tabs only: `^\s*` would run across a run of blank lines from
# every line start in it (quadratic in the run's length).
_IMPORT_SPEC = compile_later(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([\w\s,*]+)"
    r"|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))"
    r"|(?:\bfrom\s+|\bimport\s*\(?\s*|\brequire\s*\(\s*)['\"]([^'\"\n]+)['\"]"
    r"|#\s*include\s*[<\"]([^>\"\n]+)[>\"]|\bmod\s+(\w+)\s*;|\buse\s+((?:crate|super|self)(?:::\w+)+)",
    re.MULTILINE)


def _name_tokens(text: str) -> set[str]:
    """File-name-like words of a text ("src/pager.py." gives src, pager.py)."""
    return {tok.strip(".-") for tok in _NAME_TOKEN.findall(text)}


def _import_tokens(text: str) -> set[str]:
    """Module names a source text imports, split into parts (`from .util import x` -> util, x)."""
    tokens: set[str] = set()
    for match in _IMPORT_SPEC.finditer(text):
        for group in match.groups():
            if group:
                tokens.update(part for part in re.split(r"[./:\s,()*]+", group) if len(part) > 1)
    return tokens


def _stem(path: str) -> str:
    name = posixpath.basename(path)
    return name.split(".", 1)[0] if not name.startswith(".") else name


def _module_names(path: str) -> set[str]:
    """The names other code imports this file by: its stem, or its folder for package files."""
    stem = _stem(path)
    if stem in ("__init__", "index", "mod", "lib", "main") and posixpath.dirname(path):
        return {posixpath.basename(posixpath.dirname(path))}
    return {stem}


def _edited_imports(records: list[EditRecord]) -> set[str]:
    tokens: set[str] = set()
    for r in records:
        for text in (r.edit.after, r.edit.before, r.edit.new):
            if text:
                tokens |= _import_tokens(text)
    return tokens


_CODE_SUFFIX = compile_later(r"\.(py|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|cc|cpp|h|hpp|cs|swift"
                          r"|scala|sh|lua|m|mm|ex|exs|dart|vue|svelte)$")


