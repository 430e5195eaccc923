"""Helpers several criteria share: file-name and import tokens, command normalisation, edit turns."""

from __future__ import annotations

import ast
import functools
import posixpath
import re
import warnings

from ..facts import EditRecord, Facts, command_segments
from ..model import ToolKind, Turn
from ..text import quote


def _edit_turns(facts: Facts) -> list[int]:
    return [e.turn for e in facts.edits] + [t for t, _ in facts.shell_writes] + list(
        facts.unlocated_edits)


def _edits_with_paths(facts: Facts) -> list[tuple[int, str]]:
    return [(e.turn, e.path) for e in facts.edits] + list(facts.shell_writes)


# Checks that are the project's own verdict on the work, unlike a run of some program.
PROJECT_CHECKS = frozenset({"test", "typecheck", "lint", "build"})


def runs_one_of(command: str, paths) -> bool:
    """Whether a command line runs or names one of `paths` (`python3 tests/missing_colon.py`,
    `python /tmp/verify.py`), by its path, or by the end of it the command gives."""
    words = [w for w in re.split(r"[\s;&|()'\"]+", command) if "." in w]
    return any(w == path or w.endswith("/" + path.lstrip("/")) or path.endswith("/" + w)
               for path in paths for w in words)


# A call that hands the work in (mini-swe-agent's final echo, SWE-agent's `submit`).
SUBMITS = re.compile(r"^\s*(submit|echo\s+\S*(FINAL_OUTPUT|COMPLETE_TASK)\S*)\b", re.I)


_ORIENTATION_FILES = {"claude.md", "agents.md", "gemini.md", "readme.md", "readme", "readme.rst",
                      "package.json", "pyproject.toml", "setup.py", "setup.cfg", "cargo.toml",
                      "go.mod", "makefile", "contributing.md", "tsconfig.json", "skill.md",
                      "conftest.py", "tox.ini", "pytest.ini", ".cursorrules"}


# Files a session writes for itself (background command output, scratch files): reading them
# back is following the work, not exploring the project.
_SCRATCH = re.compile(r"^(/private)?/tmp/|^/var/folders/|(^|/)AppData/Local/Temp/|(^|/)tasks/[^/]+"
                      r"\.output$|^/dev/", re.I)


_NAME_TOKEN = re.compile(r"[\w.\-]+")


# Line starts take spaces and tabs only: `^\s*` would run across a run of blank lines from
# every line start in it (quadratic in the run's length).
_IMPORT_SPEC = re.compile(
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


_COSMETIC = (
    re.compile(r"^\s*cd\s+\S+\s*&&\s*"),            # cd somewhere && ...
    re.compile(r"^\s*(?:\w+=\S+\s+)+"),              # ENV=x ...
    re.compile(r"\s+\d?>>?\s*(?:&\d|/dev/null)"),   # 2>&1, 2>/dev/null
    re.compile(r"\s*\|\s*(?:head|tail|less|more|cat)(?:\s+-?[\w=]+)*\s*$"),  # | tail -20
    re.compile(r"^\s*timeout\s+\S+\s+"),
)


@functools.lru_cache(maxsize=8192)
def _normal_command(command: str) -> str:
    """A command without cosmetic wrappers: `cd x && npm test 2>&1 | tail` is `npm test`."""
    text = " ".join(command.split())
    for pattern in _COSMETIC:
        text = pattern.sub("", text)
    return " ".join(text.split())


def _target(turn: Turn) -> str:
    """What a tool call acts on: its file, else its command (normalized), else its input."""
    if turn.paths and turn.kind in (ToolKind.EDIT, ToolKind.WRITE):
        return "file:" + turn.paths[0]
    if turn.paths and turn.kind is ToolKind.READ:
        # Reading a file after a failed edit of it is the cure, not a retry of the edit.
        return "read:" + turn.paths[0]
    command = turn.command
    if command:
        return "cmd:" + _normal_command(command)
    if turn.paths:
        return "file:" + turn.paths[0]
    return "input:" + repr(sorted((turn.tool_input or {}).items()))[:500]


# Files of prose only (docs, text, licence): no code runs from them, no check is owed them.
PROSE_ONLY = re.compile(r"\.(md|mdx|markdown|txt|rst|adoc)$|(^|/)(LICENSE|README|CHANGELOG|NOTICE)$", re.I)
_TEST_FILE = re.compile(r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]+$|_test\.\w+$|\.(test|spec)\.\w+$")


def _edited_imports(records: list[EditRecord]) -> set[str]:
    tokens: set[str] = set()
    for r in records:
        for text in (r.edit.after, r.edit.before, r.edit.new):
            if text:
                tokens |= _import_tokens(text)
    return tokens


_CODE_SUFFIX = re.compile(r"\.(py|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|cc|cpp|h|hpp|cs|swift"
                          r"|scala|sh|lua|m|mm|ex|exs|dart|vue|svelte)$")


# Programs whose first word after the program names what they do (`git push`, `npm install`).
_SUBCOMMAND_PROGRAMS = {"git", "gh", "npm", "pnpm", "yarn", "bun", "docker", "kubectl", "brew",
                        "pip", "pip3", "uv", "poetry", "cargo", "go", "apt", "apt-get", "dnf",
                        "yum", "helm", "terraform", "gcloud", "aws", "az", "systemctl", "conda",
                        "dotnet", "mvn", "gradle", "./gradlew", "rustup", "nvm", "pyenv", "make"}
# Different programs that do the same thing.
_SYNONYMS = {"which": "locate", "whereis": "locate", "type": "locate", "command": "locate",
             "fd": "find", "rg": "grep", "ag": "grep", "ack": "grep", "egrep": "grep",
             "python3": "python", "pip3": "pip", "apt-get": "apt"}
_LOOKING = {"cd", "echo", "printf", "true", "sleep", "set", "export", "source", "."}


def program_name(word: str) -> str:
    """A command's program as one name, whatever its path, quotes or synonym
    (`/usr/bin/python3` and `python` are both `python`)."""
    program = posixpath.basename(word.strip("'\""))
    return _SYNONYMS.get(program, program)


@functools.lru_cache(maxsize=8192)
def operation_key(command: str) -> str:
    """What a command line does, as "program subcommand target": two attempts at the same
    operation share it whatever their flags, wrappers, paths or pipes (`git add -f x.py` and
    `cd repo && git add /abs/x.py 2>&1 | tail` are both `git add x.py`)."""
    for segment in command_segments(command):
        words = segment.split()
        if not words or words[0] in _LOOKING:
            continue
        if words[0] == "command" and len(words) > 1 and words[1] == "-v":
            words = ["which"] + words[2:]
        program = program_name(words[0])
        rest = [w.strip("'\"") for w in words[1:] if not w.startswith("-") and "=" not in w[:1]]
        parts = [program]
        if program in _SUBCOMMAND_PROGRAMS and rest:
            parts.append(rest.pop(0))
        if rest:
            target = rest[0].rstrip("/")
            parts.append(posixpath.basename(target) if "/" in target else target)
        return quote(" ".join(parts), 200)
    return quote(" ".join(command.split()), 200)


def final_python_texts(facts: Facts) -> dict[str, tuple[int, str]]:
    """The whole text each Python file the session edited ends with, and the turn of it, where
    the log shows it (a snippet edit after the last whole text leaves it unknown)."""
    latest: dict[str, tuple[int, str]] = {}
    for r in facts.edits:
        if r.path.endswith(".py"):
            if r.edit.after is not None:
                latest[r.path] = (r.turn, r.edit.after)
            else:
                latest.pop(r.path, None)
    return latest


@functools.lru_cache(maxsize=64)
def parse_python(text: str) -> ast.AST | SyntaxError:
    """The module's syntax tree, or the error that stops it compiling (shared by the criteria
    that ask, so each final text is parsed once)."""
    try:
        with warnings.catch_warnings():
            # The agent's code may hold invalid escapes: compiling it must not warn.
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        error = exc if isinstance(exc, SyntaxError) else SyntaxError(str(exc))
        return error

