"""One table from every harness's tool names to one set of kinds, and the edits a call made.

Detectors never test harness-specific names: they read `Turn.kind`, `Turn.paths` and
`Turn.edits`, which `describe()` derives here from the tool name, its input and (where the
harness logs one) its structured result. Shell commands that read or edit files (`cat f`,
`sed -i`, heredocs) are recognised from the command text.
"""

from __future__ import annotations

import re
import functools
import shlex
from typing import Any, Mapping

from .patterns import compile_later
from . import diffs
from .model import FileEdit, ToolKind
from .text import make_diff

# Lower-cased tool names of every harness we read, by kind.
TOOL_KINDS: dict[str, ToolKind] = {}
for _kind, _names in {
    ToolKind.READ: "read read_file read_many_files readfile view notebookread open open_file "
                   "view_file cat_file get_file_contents goto scroll_up scroll_down",
    ToolKind.EDIT: "edit multiedit replace apply_patch replace_in_file search_replace edit_file "
                   "notebookedit patch str_replace str_replace_editor str_replace_based_edit_tool "
                   "editedexistingfile insert_content apply_diff insert file_change "
                   "search_and_replace",
    ToolKind.WRITE: "write write_file write_to_file create create_file newfilecreated",
    ToolKind.SHELL: "bash shell shell_command exec_command local_shell_call run_shell_command "
                    "execute_command run_terminal_cmd write_stdin bashoutput killshell taskoutput "
                    "killbash command_execution run run_ipython execute_bash terminal",
    ToolKind.SEARCH: "grep glob search_file_content search_files find_file search_dir "
                     "codebase_search grep_search glob_file_search find search file_search "
                     "searchfiles list_code_definition_names search_file",
    ToolKind.LIST: "ls list_directory list_files list_dir listfilestoplevel listfilesrecursive",
    ToolKind.WEB: "webfetch websearch web_fetch google_web_search web_search browse fetch "
                  "browser_action",
    ToolKind.SUBAGENT: "task agent delegate spawn_agent new_task",
    ToolKind.PLAN: "todowrite todo_write update_plan exitplanmode enterplanmode write_todos "
                   "todoread plan_mode_respond update_todo_list",
}.items():
    for _name in _names.split():
        TOOL_KINDS[_name] = _kind

_PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "filename", "file", "target_file",
              "absolute_path", "absolutePath", "dir_path", "directory")

# Shell programs whose file arguments are reads, searches or listings.
_SHELL_READERS = {"cat", "head", "tail", "less", "more", "nl", "bat", "wc", "sed", "awk", "xxd",
                  "od", "jq", "strings", "hexdump", "file", "stat"}
_SCRIPTED_READERS = {"sed", "awk", "jq"}  # the first operand is a script, not a file
_SHELL_SEARCHERS = {"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "locate"}
_SHELL_LISTERS = {"ls", "tree", "exa", "eza", "dir", "du"}
# Commands that say nothing about the work (they neither count as reads nor make it "shell").
_SHELL_NEUTRAL = {"cd", "pushd", "popd", "echo", "printf", "true", "false", "set", "export",
                  "source", ".", "pwd", "sleep", ":", "clear", "unset", "mkdir", "then", "fi",
                  "do", "done", "else", "if", "test", "["}
_INTERPRETERS = {"python", "python3", "node", "perl", "ruby", "bun", "deno", "php"}
_SCRIPT_WRITES = compile_later(
    r"\.write_text\(|\.write_bytes\(|writeFileSync\(|writeFile\(|\bopen\([^)]*['\"][wa]\+?b?['\"]"
    r"|\.write\(|File\.write|file_put_contents\(|os\.replace\(|shutil\.(?:copy|move)"
    # data written by libraries: pandas frames, arrays, pickles, models, figures
    r"|\.to_(?:csv|parquet|json|excel|pickle|feather|hdf|html|markdown|xml)\("
    r"|\.save(?:fig|txt|z)?\("
    r"|\b(?:json|pickle|yaml|joblib|torch)\.dump\(|\btorch\.save\(")
_SCRIPT_PATHS = compile_later(
    r"(?:Path|open|writeFileSync|writeFile|readFileSync|\.to_[a-z]+|\.save(?:fig|txt|z)?)"
    r"\(\s*['\"]([^'\"\n]+)['\"]")
_HEREDOC = compile_later(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_.-]*)\2")
_SPLITTERS = {";", "&&", "||", "|", "&", "(", ")", ";;", "|&"}
_WRITE_REDIRECTS = {">", ">>", ">|", "&>", "&>>"}


def kind_of(name: str | None, tool_input: Mapping[str, Any] | None = None) -> ToolKind:
    """The kind of a tool call from its name (and, for multi-command tools, its input)."""
    if not name:
        return ToolKind.OTHER
    key = name.lower()
    if key.startswith("mcp__") or key.startswith("mcp_"):
        return ToolKind.OTHER
    if key in ("str_replace_editor", "str_replace_based_edit_tool") and tool_input:
        command = str(tool_input.get("command", ""))
        if command == "view":
            return ToolKind.READ
        if command == "create":
            return ToolKind.WRITE
    return TOOL_KINDS.get(key, ToolKind.OTHER)


def input_path(tool_input: Mapping[str, Any] | None) -> str | None:
    """The file or folder a tool call names, under whichever key the harness uses."""
    if not tool_input:
        return None
    for key in _PATH_KEYS:
        if key in tool_input:  # most inputs have none of them: test membership first
            value = tool_input[key]
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


# One shell token: an operator, or a word made of unquoted runs, quoted strings and escapes.
_SHELL_TOKEN = compile_later(r"""
    (?P<space>\s+)
  | (?P<op>\|\||&&|;;|\|&|&>>|&>|>\||>>|>&|<<<|<<-|<<|<&|[|;&<>()])
  | (?P<word>(?:[^\s|;&<>()'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+)
""", re.VERBOSE | re.DOTALL)
_QUOTED = compile_later(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""", re.DOTALL)


def _unquote(word: str) -> str:
    def sub(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return match.group(1)
        if match.group(2) is not None:
            return re.sub(r'\\([$`"\\\n])', r"\1", match.group(2))
        return match.group(3)
    return _QUOTED.sub(sub, word) if ("'" in word or '"' in word or "\\" in word) else word


def _scan(text: str) -> list[str] | None:
    """Shell tokens of `text` (POSIX quoting), or None when a quote is left open.

    A small regex scanner: shlex does the same job several times slower, and every shell
    call of every session goes through here.
    """
    tokens: list[str] = []
    pos = 0
    end = len(text)
    match_at = _SHELL_TOKEN.match
    while pos < end:
        match = match_at(text, pos)
        if match is None:
            return None  # an unbalanced quote or a trailing backslash
        kind = match.lastgroup
        if kind == "word":
            tokens.append(_unquote(match.group()))
        elif kind == "op":
            tokens.append(match.group())
        pos = match.end()
    return tokens


def shell_words(command: str) -> list[str]:
    """The command's words with quotes removed (plain `split()` when quotes are unbalanced)."""
    tokens = _scan(command)
    return tokens if tokens is not None else command.split()


def unwrap_shell(command: str) -> str:
    """`bash -lc '...'` and friends: the script that actually ran."""
    words = shell_words(command)
    if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and words[1] in (
            "-c", "-lc", "-ic"):
        return words[2]
    return command


def split_heredocs(script: str) -> list[tuple[str, list[str]]]:
    """The script's command lines, each with the bodies of the heredocs it opens.

    Heredoc bodies are data, not commands: a `>` inside a here-document must not read as a
    redirection, so bodies are taken out before the command text is analysed.
    """
    lines = script.split("\n")
    out: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(lines):
        parts = [lines[i]]
        i += 1
        # A quoted argument may span lines (sed scripts, commit messages), and a line may end
        # in a backslash: keep the command whole. The quoting state is carried from part to
        # part, so each line is scanned once however many are joined.
        heredoc = _HEREDOC.search(parts[0]) is not None
        state = _quote_state(parts[0])
        while i < len(lines) and not heredoc and state != _UNQUOTED:
            part = lines[i]
            state = _quote_state("\n" + part, state)
            heredoc = _HEREDOC.search(part) is not None
            parts.append(part)
            i += 1
        line = "\n".join(parts)
        bodies: list[str] = []
        for match in _HEREDOC.finditer(line):
            delimiter, strip_tabs = match.group(3), match.group(1) == "-"
            body: list[str] = []
            while i < len(lines):
                text = lines[i]
                i += 1
                if (text.lstrip("\t") if strip_tabs else text).rstrip() == delimiter:
                    break
                body.append(text)
            bodies.append("\n".join(body) + ("\n" if body else ""))
        out.append((line, bodies))
    return out


def _balanced(text: str) -> bool:
    return _quote_state(text) == _UNQUOTED


# Where a shell text's quoting stands after a piece of it: outside any quote, inside single or
# double quotes, or just after a backslash (outside quotes, or inside double quotes).
_UNQUOTED, _SINGLE, _DOUBLE, _ESCAPED, _ESCAPED_IN_DOUBLE = range(5)
_NEXT_OUTSIDE = compile_later(r"['\"\\]")
_NEXT_IN_DOUBLE = compile_later(r'["\\]')


def _quote_state(text: str, state: int = _UNQUOTED) -> int:
    """The quoting state after `text`, starting from `state` (POSIX quoting, as `_scan`
    reads it: a single-quoted string has no escapes, a backslash escapes any character). A
    text is balanced when it ends _UNQUOTED. Linear: each step jumps to the next character
    that can change the state."""
    pos, end = 0, len(text)
    while pos < end:
        if state == _ESCAPED:
            state, pos = _UNQUOTED, pos + 1
        elif state == _ESCAPED_IN_DOUBLE:
            state, pos = _DOUBLE, pos + 1
        elif state == _SINGLE:
            close = text.find("'", pos)
            if close == -1:
                return _SINGLE
            state, pos = _UNQUOTED, close + 1
        elif state == _DOUBLE:
            hit = _NEXT_IN_DOUBLE.search(text, pos)
            if hit is None:
                return _DOUBLE
            state = _UNQUOTED if hit.group() == '"' else _ESCAPED_IN_DOUBLE
            pos = hit.end()
        else:
            hit = _NEXT_OUTSIDE.search(text, pos)
            if hit is None:
                return _UNQUOTED
            state = {"'": _SINGLE, '"': _DOUBLE}.get(hit.group(), _ESCAPED)
            pos = hit.end()
    return state


def _tokens(line: str) -> list[str]:
    tokens = _scan(line)
    return tokens if tokens is not None else line.split()  # unbalanced quotes: plain words


def _commands(line: str) -> list[tuple[list[str], list[str], bool]]:
    """(words, files written by redirection, reads stdin from a pipe) per simple command."""
    commands: list[tuple[list[str], list[str], bool]] = []
    words: list[str] = []
    writes: list[str] = []
    piped = False
    tokens = _tokens(line)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in _SPLITTERS:
            if words or writes:
                commands.append((words, writes, piped))
            words, writes, piped = [], [], token in ("|", "|&")
        elif token in _WRITE_REDIRECTS:
            if i + 1 < len(tokens):
                target = tokens[i + 1]
                if target != "/dev/null" and not target.startswith("&") and not target.startswith("/dev/std"):
                    writes.append(target)
                i += 1
        elif token in ("<", "<<", "<<<", ">&", "<&", "<<-"):
            i += 1  # the operand is an input, a here-doc delimiter or a file descriptor
        elif token.isdigit() and i + 1 < len(tokens) and tokens[i + 1][:1] in "<>":
            pass  # a file descriptor number before a redirection
        else:
            words.append(token)
        i += 1
    if words or writes:
        commands.append((words, writes, piped))
    return commands


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The program name and its arguments, past `VAR=x`, `sudo`, `env`, `time`, `command`."""
    i = 0
    while i < len(words) and (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[i])
                              or words[i] in ("sudo", "env", "time", "command", "exec", "nohup")):
        i += 1
    if i >= len(words):
        return "", []
    return words[i].rsplit("/", 1)[-1], words[i + 1:]


@functools.lru_cache(maxsize=4096)
def _analyse(command: str) -> tuple[list[str], list[str], ToolKind, list[FileEdit]]:
    script = unwrap_shell(command)
    reads: list[str] = []
    writes: list[str] = []
    edits: list[FileEdit] = []
    kinds: set[ToolKind] = set()
    scripted_edit = False
    for line, bodies in split_heredocs(script):
        for words, redirects, piped in _commands(line):
            program, args = _program(words)
            writes.extend(redirects)
            if bodies and redirects and program in ("cat", "tee", ""):
                # cat > f <<'EOF' ... EOF: the whole file, written from the here-document
                for target in redirects:
                    edits.append(FileEdit(path=target, patch=None,
                                          new=bodies[0], after=bodies[0], whole_file=True))
            if program == "tee":
                targets = [a for a in args if not a.startswith("-")]
                writes.extend(targets)
                if bodies and targets:
                    edits.extend(FileEdit(path=t, patch=None,
                                          new=bodies[0], after=bodies[0], whole_file=True)
                                 for t in targets)
                continue
            if program == "sed" and any(a == "--in-place" or re.fullmatch(r"-[a-zA-Z]*i.*", a)
                                        for a in args if a.startswith("-")):
                writes.extend(_sed_files(args))
                continue
            if program == "perl" and any(re.fullmatch(r"-[a-zA-Z]*i.*", a) for a in args):
                writes.extend(a for a in args[1:] if not a.startswith("-") and _looks_like_path(a))
                continue
            if program in _INTERPRETERS:
                if any(_SCRIPT_WRITES.search(body) for body in bodies) or (
                        "-c" in args and _SCRIPT_WRITES.search(" ".join(args))):
                    scripted_edit = True
                    # the files the script names are the best guess at what it changed
                    code = [*bodies, " ".join(args)] if "-c" in args else bodies
                    writes.extend(p for body in code for p in _SCRIPT_PATHS.findall(body)
                                  if _looks_like_path(p))
                kinds.add(ToolKind.SHELL)
                continue
            if program == "git" and args[:1] == ["grep"]:
                kinds.add(ToolKind.SEARCH)
            elif program == "git" and args[:1] == ["ls-files"]:
                kinds.add(ToolKind.LIST)
            elif program in _SHELL_READERS:
                files = _given_files(program, args)
                reads.extend(files)
                if files or not piped:
                    kinds.add(ToolKind.READ)
            elif program in _SHELL_SEARCHERS:
                kinds.add(ToolKind.SEARCH)
            elif program in _SHELL_LISTERS:
                kinds.add(ToolKind.LIST)
            elif program and program not in _SHELL_NEUTRAL:
                kinds.add(ToolKind.SHELL)
    if writes or scripted_edit:
        kind = ToolKind.EDIT
    elif not kinds or ToolKind.SHELL in kinds:
        kind = ToolKind.SHELL
    elif ToolKind.READ in kinds:
        kind = ToolKind.READ
    elif ToolKind.SEARCH in kinds:
        kind = ToolKind.SEARCH
    else:
        kind = ToolKind.LIST
    return (list(dict.fromkeys(reads)), list(dict.fromkeys(writes)), kind, edits)


# Any reading or listing program as a word of its own: a command line without one shows no
# file, and most command lines are answered by this one search.
_LOOKS = compile_later(r"(?:^|[\s/;&|(`'\"])(?:%s)(?=[\s'\"]|$)" % "|".join(
    sorted(_SHELL_READERS | _SHELL_LISTERS, key=len, reverse=True)))


@functools.lru_cache(maxsize=4096)
def looked_at(command: str) -> tuple[str, ...]:
    """The files and folders a command line shows by reading or listing them (`cat f`,
    `ls -la d`, `sed -n 1p f`, `head f`), in any of its simple commands: `printf x > f && cat f`
    shows f after writing it."""
    if not _LOOKS.search(command):
        return ()
    looked: list[str] = []
    for line, _bodies in split_heredocs(unwrap_shell(command)):
        for words, _redirects, _piped in _commands(line):
            program, args = _program(words)
            if program in _SHELL_READERS or program in _SHELL_LISTERS:
                looked.extend(_given_files(program, args))
    return tuple(looked)


def _given_files(program: str, args: list[str]) -> list[str]:
    """The files a reading or listing program is given (a script's first operand aside)."""
    operands = [a for a in args if not a.startswith("-")]
    if program in _SCRIPTED_READERS and operands and not any(
            a in ("-e", "-f", "--expression") for a in args):
        operands = operands[1:]
    return [a for a in operands if _looks_like_path(a)]


def shell_file_effects(command: str) -> tuple[list[str], list[str], ToolKind]:
    """(paths read, paths written, kind) of a shell command, judged from its text.

    Recognised: reads (`cat f`, `sed -n 1,9p f`, `head f`, `nl -ba f`), searches and listings
    (`rg`, `grep`, `find`, `ls`), edits (`sed -i`, `perl -pi`, `> f`, `tee f`, heredocs,
    interpreter scripts that write files). Anything else is plain shell. A command mixing
    reads with other programs (`cat f | python x.py`) is shell.
    """
    reads, writes, kind, _ = _analyse(command)
    return reads, writes, kind


_METADATA_READERS = {"wc", "stat", "file"}
# Programs that pass lines through unchanged (a read piped through them shows the same lines).
_LINE_KEEPERS = {"cat", "nl", "less", "more", "bat", "expand"}
_SED_RANGE = compile_later(r"(\d+)(?:,(\d+|\$))?p")


def _line_count(args: list[str]) -> int | str | None:
    """The N of `head -n N` / `tail -n N` / `head -N` (str `+N` kept for `tail -n +N`)."""
    for i, word in enumerate(args):
        value = None
        if word in ("-n", "--lines") and i + 1 < len(args):
            value = args[i + 1]
        elif word.startswith("--lines="):
            value = word.split("=", 1)[1]
        elif re.fullmatch(r"-n\+?\d+", word):
            value = word[2:]
        elif re.fullmatch(r"-\d+", word):
            value = word[1:]
        if value is not None:
            if value.startswith("+") and value[1:].isdigit():
                return value
            return int(value) if value.isdigit() else None
    return 10 if not any(a.startswith("-") for a in args) else None


def _read_window(program: str, args: list[str], files: list[str]) -> tuple | None:
    """The lines a reader shows: (first, last or None, numbered), or ("filter", text) when
    it shows something other than a line range (a pattern, a byte count, a summary)."""
    rest = [a for a in args if a not in files]
    if program in _METADATA_READERS:
        return None  # a line count or file type shows no content: never a repeated read
    numbered = program == "nl" or (program in ("cat", "bat") and any(
        a.startswith("-") and "n" in a.lstrip("-") for a in rest))
    if program in _LINE_KEEPERS and all(a.startswith("-") for a in rest):
        return (1, None, numbered)
    if program == "sed" and rest[:1] == ["-n"] and len(rest) == 2:
        match = _SED_RANGE.fullmatch(rest[1].strip())
        if match:
            first = int(match.group(1))
            last = match.group(2)
            end = None if last == "$" else int(last) if last else first
            return (first, end, False)
    if program in ("head", "tail") and not any(a.startswith(("-c", "--bytes", "-f", "-F")) for a in rest):
        count = _line_count(rest)
        if isinstance(count, str):  # tail -n +N: from line N to the end
            return (int(count[1:]), None, False)
        if isinstance(count, int):
            return (1, count, False) if program == "head" else ("tail", count)
    return ("filter", " ".join([program, *rest]))


def _narrow(window: tuple, program: str, args: list[str]) -> tuple:
    """A read's window after piping it through `program args` (`nl f | sed -n 5,9p`)."""
    step = _read_window(program, args, []) or ("filter", program)
    if window[0] == "filter" or step[0] in ("filter", "tail"):
        return ("filter", f"{window} | {step}")
    first, last, numbered = window
    sub_first, sub_last, sub_numbered = step
    new_first = first + sub_first - 1
    new_last = first + sub_last - 1 if sub_last is not None else None
    if last is not None:
        new_last = last if new_last is None else min(last, new_last)
    return (new_first, new_last, numbered or sub_numbered)


@functools.lru_cache(maxsize=4096)
def shell_read_windows(command: str) -> dict[str, tuple]:
    """Which part of each file a shell command shows: path -> window.

    A window is (first line, last line or None for the end, line-numbered), following pipes
    (`nl -ba f | sed -n '300,350p'` shows lines 300-350, numbered), or ("filter", text) for a
    read that is not a line range (`grep`, `awk`, `tail -f` ...). Codex-style agents read
    files a range at a time, and two reads of different ranges are not a repeat.
    """
    windows: dict[str, tuple] = {}
    for line, _ in split_heredocs(unwrap_shell(command)):
        current: tuple[list[str], tuple] | None = None
        for words, _redirects, piped in _commands(line):
            program, args = _program(words)
            if piped and current is not None:
                current = (current[0], _narrow(current[1], program, args)
                           if current[1] is not None else None)
            elif not piped and program in _SHELL_READERS:
                operands = [a for a in args if not a.startswith("-")]
                if program in _SCRIPTED_READERS and operands and not any(
                        a in ("-e", "-f", "--expression") for a in args):
                    operands = operands[1:]
                files = [a for a in operands if _looks_like_path(a)]
                current = (files, _read_window(program, args, files)) if files else None
            else:
                current = None
            if current is not None and current[1] is not None:
                for path in current[0]:
                    windows[path] = current[1]
    return windows


def _sed_files(args: list[str]) -> list[str]:
    """The file operands of a sed command: what follows the script (or all operands with -e)."""
    operands: list[str] = []
    has_script_option = False
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word in ("-e", "--expression", "-f", "--file"):
            has_script_option = skip = True
            continue
        if word.startswith("-") or not word:  # `sed -i '' ...` (BSD) has an empty suffix
            continue
        operands.append(word)
    return operands if has_script_option else operands[1:]


def _looks_like_path(word: str) -> bool:
    return bool(word) and not word.isdigit() and not any(c in word for c in "<>|&$`*?") and (
        not re.fullmatch(r"[0-9,$]+[pd]?", word)) and (
        "/" in word or "." in word) and "\n" not in word and not word.startswith(("{", "("))


def edits_of(name: str, tool_input: Mapping[str, Any], result: Mapping[str, Any] | None = None
             ) -> list[FileEdit]:
    """The file edits a call made, from its input and, when logged, its structured result."""
    result = result or {}
    key = name.lower()
    path = input_path(tool_input) or str(result.get("filePath") or "")
    before = result.get("originalFile") if isinstance(result.get("originalFile"), str) else None
    if before is None and isinstance(result.get("originalFileContents"), str):
        before = result["originalFileContents"]
    hunks = result.get("structuredPatch")
    if not isinstance(hunks, list):  # a retyped field in a damaged file: no hunks logged
        hunks = None
    edits: list[FileEdit] = []

    changes = tool_input.get("changes")
    if isinstance(changes, list) and changes and all(isinstance(c, dict) for c in changes):
        # files named as changed with no content logged (`codex exec --json` file_change)
        return [FileEdit(path=str(c["path"]), patch="", created=c.get("kind") == "add",
                         deleted=c.get("kind") == "delete") for c in changes if c.get("path")]

    if key in ("apply_patch", "patch") or "*** Begin Patch" in str(tool_input.get("input", "")):
        text = tool_input.get("input") or tool_input.get("patch") or tool_input.get("raw") or ""
        return diffs.parse_apply_patch(str(text))

    content = tool_input.get("content", tool_input.get("file_text"))
    new_source = tool_input.get("new_source")
    if kind_of(name, tool_input) is ToolKind.WRITE and isinstance(content, str) and path:
        created = result.get("type") == "create" or (before is None and result.get("type") != "update")
        diff = diffs.diff_from_hunks(path, hunks) if hunks else ""
        if not diff and before is not None:
            diff = make_diff(path, before, content, created=created)
        elif not diff:  # written into nothing known: the diff follows from the content
            diff = None
        return [FileEdit(path=path, patch=diff, new=content, before=before, after=content,
                         created=created and before is None, whole_file=True)]
    if isinstance(new_source, str) and path:  # notebook cell edit
        return [FileEdit(path=path, patch=None, new=new_source)]

    pairs: list[tuple[str, str, bool]] = []
    old = _first_str(tool_input, "old_string", "oldText", "old_str", "oldString", "search")
    new = _first_str(tool_input, "new_string", "newText", "new_str", "newString", "replace")
    if new is None and key == "insert":
        new = _first_str(tool_input, "text", "content")
    if new is None and isinstance(tool_input.get("lines"), str):
        # a line-range edit (`edit 3:5` ... `end_of_edit`): the replaced lines are not logged
        new = _first_str(tool_input, "replacement")
        if new is not None and path:
            return [FileEdit(path=path, patch=None, new=new)]
    if old is not None or (new is not None and key in ("str_replace_editor", "insert")):
        pairs.append((old or "", new or "", bool(tool_input.get("replace_all"))))
    edit_list = tool_input.get("edits")
    for item in edit_list if isinstance(edit_list, list) else ():
        if isinstance(item, dict):
            o = _first_str(item, "old_string", "oldText", "old_str", "oldString")
            n = _first_str(item, "new_string", "newText", "new_str", "newString")
            if o is not None or n is not None:
                pairs.append((o or "", n or "", bool(item.get("replace_all"))))
    for field_name in ("diff", "content"):
        text = tool_input.get(field_name)
        if isinstance(text, str) and ("SEARCH" in text and "REPLACE" in text):
            pairs.extend((o, n, False) for o, n in diffs.parse_search_replace(text))
            break
    if not path or not pairs:
        return edits

    after = before
    for o, n, replace_all in pairs:
        after = diffs.apply_snippet(after, o, n, replace_all) if after is not None else None
    if hunks:
        diff = diffs.diff_from_hunks(path, hunks)
    elif before is not None and after is not None:
        diff = make_diff(path, before, after)
    else:
        diff = "".join(make_diff(path, o, n) for o, n, _ in pairs)
    return [FileEdit(path=path, patch=diff, old="\n".join(o for o, _, _ in pairs),
                     new="\n".join(n for _, n, _ in pairs), before=before, after=after)]


def _first_str(mapping: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str):
            return value
    return None


def describe(name: str | None, tool_input: Mapping[str, Any] | None,
             result: Mapping[str, Any] | None = None) -> tuple[ToolKind, tuple[str, ...], tuple[FileEdit, ...]]:
    """(kind, paths named, edits made) for one tool call."""
    tool_input = tool_input or {}
    kind = kind_of(name, tool_input)
    path = input_path(tool_input)
    paths: list[str] = [path] if path else []
    edits: list[FileEdit] = []
    if kind in (ToolKind.EDIT, ToolKind.WRITE) or (name or "").lower() in ("apply_patch",):
        edits = edits_of(name or "", tool_input, result)
        paths = sorted({*paths, *(e.path for e in edits)})
    elif kind is ToolKind.SHELL:
        command = command_text(tool_input)
        if command:
            if "*** Begin Patch" in command:
                edits = diffs.parse_apply_patch(command)
                paths = [e.path for e in edits]
            else:
                reads, writes, _, shell_made = _analyse(command)
                paths = reads + writes
                edits = shell_made
    return kind, tuple(dict.fromkeys(paths)), tuple(edits)


def command_text(tool_input: Mapping[str, Any] | None) -> str | None:
    """The command line of a shell-like call (`command` string or argv list, or `cmd`)."""
    if not tool_input:
        return None
    value = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(value, list):
        return argv_text([str(part) for part in value])
    return value if isinstance(value, str) and value else None


_SHELLS = ("bash", "sh", "zsh", "dash", "fish", "pwsh", "powershell")


def argv_text(argv: list[str]) -> str:
    """An argv list as one command line: the script of `bash -lc SCRIPT`, else quoted words.

    Joining with spaces would lose the quoting (`sed -n '1,20p' f` would split), so the
    script of a shell wrapper is returned as it ran and other argv lists are shell-quoted.
    """
    if (len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in _SHELLS
            and argv[1] in ("-c", "-lc", "-ic", "-Command")):
        return argv[2]
    if len(argv) == 2 and argv[0] == "apply_patch":
        return f"apply_patch {argv[1]}"  # the patch text, kept readable
    return " ".join(shlex.quote(part) for part in argv)


def shell_kind(command: str) -> ToolKind:
    """What a shell command does to files: read, search, list, edit, or plain shell."""
    if "*** Begin Patch" in command:
        return ToolKind.EDIT
    return shell_file_effects(command)[2]
