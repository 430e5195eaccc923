"""One table from every harness's tool names to one set of kinds, and the edits a call made.

Detectors never test harness-specific names: they read `Turn.kind`, `Turn.paths` and
`Turn.edits`, which `describe()` derives here from the tool name, its input and (where the
harness logs one) its structured result. Shell commands that read or edit files (`cat f`,
`sed -i`, heredocs) are recognised from the command text.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, Mapping

from . import diffs
from .model import FileEdit, ToolKind

# Lower-cased tool names of every harness we read, by kind.
TOOL_KINDS: dict[str, ToolKind] = {}
for _kind, _names in {
    ToolKind.READ: "read read_file read_many_files readfile view notebookread open open_file "
                   "view_file cat_file get_file_contents",
    ToolKind.EDIT: "edit multiedit replace apply_patch replace_in_file search_replace edit_file "
                   "notebookedit patch str_replace str_replace_editor str_replace_based_edit_tool "
                   "editedexistingfile insert_content apply_diff",
    ToolKind.WRITE: "write write_file write_to_file create create_file newfilecreated",
    ToolKind.SHELL: "bash shell shell_command exec_command local_shell_call run_shell_command "
                    "execute_command run_terminal_cmd write_stdin bashoutput killshell taskoutput "
                    "killbash command_execution run run_ipython execute_bash terminal",
    ToolKind.SEARCH: "grep glob search_file_content search_files find_file search_dir "
                     "codebase_search grep_search glob_file_search find search file_search "
                     "searchfiles list_code_definition_names",
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
              "absolute_path", "dir_path", "directory")

# Shell programs whose file arguments are reads, searches or listings.
_SHELL_READERS = {"cat", "head", "tail", "less", "more", "nl", "bat", "wc", "sed", "awk"}
_SHELL_SEARCHERS = {"grep", "rg", "ag", "ack", "find", "fd", "git grep"}
_SHELL_LISTERS = {"ls", "tree", "exa", "eza", "dir"}
_REDIRECT_WRITE = re.compile(r"(?:^|[^<>&0-9])>{1,2}\s*([^\s|;&<>]+)")
_SED_INPLACE = re.compile(r"\bsed\s+(?:-[a-zA-Z]*i|--in-place)")


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
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def shell_words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=False, posix=True)
    except ValueError:
        return command.split()


def unwrap_shell(command: str) -> str:
    """`bash -lc '...'` and friends: the script that actually ran."""
    words = shell_words(command)
    if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and words[1] in (
            "-c", "-lc", "-ic"):
        return words[2]
    return command


def shell_file_effects(command: str) -> tuple[list[str], list[str], ToolKind]:
    """(paths read, paths written, kind) of a shell command, judged from its text.

    Only the plain cases are recognised (`cat f`, `sed -n 1,9p f`, `head f`, `sed -i`, `> f`,
    `tee f`); anything else stays a shell command with no file effect.
    """
    script = unwrap_shell(command)
    reads: list[str] = []
    writes: list[str] = []
    kind = ToolKind.SHELL
    for segment in re.split(r"&&|\|\||;|\n", script):
        segment = segment.strip()
        if not segment:
            continue
        pipeline = segment.split("|")
        first = pipeline[0]
        words = shell_words(first)
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        for match in _REDIRECT_WRITE.finditer(first):
            target = match.group(1).strip("'\"")
            if target not in ("/dev/null", "&1", "&2") and not target.startswith("&"):
                writes.append(target)
        if program == "tee" or any(p.strip().startswith("tee ") for p in pipeline[1:]):
            for part in pipeline:
                tee_words = shell_words(part)
                if tee_words and tee_words[0] == "tee":
                    writes.extend(w for w in tee_words[1:] if not w.startswith("-"))
        if program == "sed" and _SED_INPLACE.search(first):
            writes.extend(_sed_files(words))
            continue
        args = [w for w in words[1:] if not w.startswith("-")]
        if program in _SHELL_READERS and not writes:
            if program in ("sed", "awk") and args:
                args = args[1:]  # the script comes first
            reads.extend(a for a in args if _looks_like_path(a))
            kind = ToolKind.READ if reads else kind
        elif program in _SHELL_SEARCHERS or (program == "git" and words[1:2] == ["grep"]):
            kind = ToolKind.SEARCH
        elif program in _SHELL_LISTERS:
            kind = ToolKind.LIST
    if writes:
        kind = ToolKind.EDIT
    return reads, writes, kind


def _sed_files(words: list[str]) -> list[str]:
    """The file operands of a sed command: what follows the script (or all operands with -e)."""
    operands: list[str] = []
    has_script_option = False
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
            continue
        if word in ("-e", "--expression", "-f", "--file"):
            has_script_option = skip = True
            continue
        if word.startswith("-"):
            continue
        operands.append(word)
    return operands if has_script_option else operands[1:]


def _looks_like_path(word: str) -> bool:
    return bool(word) and not word.isdigit() and not any(c in word for c in "<>|&$`*?") and not re.fullmatch(r"[0-9,]+p?", word) and (
        "/" in word or "." in word)


def _as_dict(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, Mapping) else {}
    return {}


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
    edits: list[FileEdit] = []

    if key in ("apply_patch", "patch") or "*** Begin Patch" in str(tool_input.get("input", "")):
        text = tool_input.get("input") or tool_input.get("patch") or tool_input.get("raw") or ""
        return diffs.parse_apply_patch(str(text))

    content = tool_input.get("content", tool_input.get("file_text"))
    new_source = tool_input.get("new_source")
    if kind_of(name, tool_input) is ToolKind.WRITE and isinstance(content, str) and path:
        created = result.get("type") == "create" or (before is None and result.get("type") != "update")
        diff = diffs.diff_from_hunks(path, hunks) if hunks else ""
        if not diff:
            diff = diffs.make_diff(path, before or "", content, created=created)
        return [FileEdit(path=path, diff=diff, new=content, before=before, after=content,
                         created=created and before is None, whole_file=True)]
    if isinstance(new_source, str) and path:  # notebook cell edit
        return [FileEdit(path=path, diff=diffs.make_diff(path, "", new_source), new=new_source)]

    pairs: list[tuple[str, str, bool]] = []
    old = _first_str(tool_input, "old_string", "oldText", "old_str", "oldString", "search")
    new = _first_str(tool_input, "new_string", "newText", "new_str", "newString", "replace")
    if old is not None or (new is not None and key in ("str_replace_editor", "insert")):
        pairs.append((old or "", new or "", bool(tool_input.get("replace_all"))))
    for item in tool_input.get("edits") or ():
        if isinstance(item, Mapping):
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
        diff = diffs.make_diff(path, before, after)
    else:
        diff = "".join(diffs.make_diff(path, o, n) for o, n, _ in pairs)
    return [FileEdit(path=path, diff=diff, old="\n".join(o for o, _, _ in pairs),
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
                reads, writes, _ = shell_file_effects(command)
                paths = reads + writes
    return kind, tuple(dict.fromkeys(paths)), tuple(edits)


def command_text(tool_input: Mapping[str, Any] | None) -> str | None:
    """The command line of a shell-like call (`command` string or argv list, or `cmd`)."""
    if not tool_input:
        return None
    value = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(value, list):
        return " ".join(str(part) for part in value)
    return value if isinstance(value, str) and value else None


def shell_kind(command: str) -> ToolKind:
    """What a shell command does to files: read, search, list, edit, or plain shell."""
    if "*** Begin Patch" in command:
        return ToolKind.EDIT
    return shell_file_effects(command)[2]
