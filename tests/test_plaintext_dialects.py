"""Each plain-text dialect on small hand-written logs: what must match and what must not."""

from __future__ import annotations

import pytest
from conftest import CORPUS, FIXTURES, needs_corpus

from skill_doctor import facts
from skill_doctor.decode import decode_file
from skill_doctor.decode.plaintext import dialect
from skill_doctor.model import Role, ToolKind

PT = FIXTURES / "plaintext"


def shape(transcript):
    return [(t.role.value, t.tool_name, t.meta) for t in transcript.turns]


@pytest.mark.parametrize("name, module", [
    ("generic-roles.txt", "text_generic"),
    ("generic-markdown-headings.md", "text_generic"),
    ("not-a-transcript.txt", "text_generic"),
    ("claude-tui-v1.txt", "text_claude_tui"),
    ("claude-tui-v2.txt", "text_claude_tui"),
    ("aider.chat.history.md", "text_aider"),
    ("specstory-v2.md", "text_specstory"),
    ("specstory-old.md", "text_specstory"),
    ("mini-swe-terminal.log", "text_terminal"),
])
def test_dialect_is_sniffed_from_content(name, module):
    text = (PT / name).read_text(encoding="utf-8", errors="replace")
    assert dialect(text) == module


@pytest.mark.parametrize("text", [
    "Usually the user reads this.\n",            # role word without a colon
    "## User Guide\n\nSome docs.\n",             # a heading that merely starts with a role
    "> quoted text\n⎿ not a result\n",           # TUI glyphs without bullets
    "# aider chat is great\n#### heading\n",     # no session line
])
def test_text_without_markers_fits_no_dialect(tmp_path, text):
    path = tmp_path / "x.txt"
    path.write_text(text, encoding="utf-8")
    t = decode_file(path)
    assert t.turns == ()
    assert t.not_a_transcript and t.problem is not None


def test_generic_roles_fences_and_timestamps():
    t = decode_file(PT / "generic-roles.txt")
    assert t.harness == "plain-text" and t.problem is None
    assert shape(t) == [("user", None, None), ("assistant", None, None), ("tool", "Edit", None),
                        ("assistant", None, None), ("tool", "Bash", None), ("user", None, None),
                        ("assistant", None, None), ("user", None, "system")]
    user, _, edit, _, bash, second, *_ = t.turns
    assert user.timestamp == "2025-03-01 10:00:00" and user.line == 3
    assert edit.kind is ToolKind.EDIT and edit.edits[0].path == "cli.py"
    assert edit.tool_input["new_string"].endswith('action="store_true")\n')
    assert bash.tool_input == {"command": "pytest -q"} and bash.tool_output == "3 passed"
    assert "User: not a header" in second.content  # a role line inside a fence is content


def test_edits_an_ide_chat_shows_only_by_file_and_size_are_changes(tmp_path):
    log = tmp_path / "prompt-log.md"
    log.write_text(
        "# PROMPT - 2026-06-26 09:20:00 +02:00 - session 1\n\nAdd a naive baseline.\n\n"
        "# RESPONSE - 2026-06-26 09:31:00 +02:00 - session 1\n\n"
        "1. Hotel to JSON helper:\n\nEdited\ndata.go\n+8\n-0\n2. The metric:\n\n"
        "Created\nconsistency.go\n+95\n-0\nUpdated\nmain.go\n+86\n"
        "Done. Created [NOTES.md](NOTES.md) with the findings.\nEdited\nby hand, see above\n+1\n",
        encoding="utf-8")
    t = decode_file(log)
    edits = [x for x in t.turns if x.role is Role.TOOL]
    assert [(x.tool_name, x.paths, x.tool_output) for x in edits] == [
        ("Edit", ("data.go",), "Edited data.go: +8 -0"),
        ("Edit", ("consistency.go",), "Created consistency.go: +95 -0"),
        ("Edit", ("main.go",), "Updated main.go: +86 -0")]
    assert all(x.kind is ToolKind.EDIT and not x.edits for x in edits)
    # Prose about a file and a verb line not followed by a file and a size stay text.
    assert "Created [NOTES.md](NOTES.md)" in t.turns[-1].content
    f = facts.compute(t)
    assert f.changed_code and [p for _, p in f.shell_writes] == ["data.go", "consistency.go", "main.go"]


def test_generic_markdown_headings():
    t = decode_file(PT / "generic-markdown-headings.md")
    assert [x.role for x in t.turns] == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    assert t.turns[0].timestamp == "2026-01-02 09:00:00"
    assert "## Diagnosis" in t.turns[1].content


def test_partial_parse_keeps_turns_before_the_stop():
    t = decode_file(PT / "generic-truncated.txt")
    assert [x.content for x in t.turns] == ["first request", "working on it", "second"]
    assert t.problem is not None and (t.problem.line, t.problem.column) == (6, 1)
    assert "garbage after a crash" in t.problem.context
    assert not t.not_a_transcript


def test_not_a_transcript_says_where_parsing_stopped():
    t = decode_file(PT / "not-a-transcript.txt")
    assert t.not_a_transcript and t.turns == ()
    assert (t.problem.line, t.problem.column) == (1, 1)
    assert t.problem.context.startswith("Directory structure:")


def test_claude_tui_v1():
    t = decode_file(PT / "claude-tui-v1.txt")
    assert t.harness == "claude-code-text" and t.cwd == "/home/dev/demo"
    assert shape(t) == [("user", None, None), ("assistant", None, None), ("tool", "Read", None),
                        ("tool", "Edit", None), ("tool", "Bash", None), ("assistant", None, None)]
    assert t.turns[0].content == "fix the typo in README.md and\ncommit it"
    edit = t.turns[3]
    assert edit.tool_input["old_string"] == "# Demo\nTeh demo project\n"
    assert edit.tool_input["new_string"] == "# Demo\nThe demo project\n"
    assert edit.edits and edit.edits[0].path == "README.md"
    assert t.turns[4].tool_input == {"command": 'git commit -am "Fix typo"'}


@needs_corpus
def test_claude_tui_shows_a_silent_call_as_no_content():
    t = decode_file(CORPUS / "claude-export" / "algo_claude-20250813-214119-configure-commit-command.txt")
    adds = [x for x in t.turns if x.command and x.command.startswith("git add")]
    assert adds and all(x.tool_output == "" for x in adds)


def test_claude_tui_v2_errors_and_collapsed_calls():
    t = decode_file(PT / "claude-tui-v2.txt")
    assert shape(t) == [("user", None, None), ("tool", "Bash", None), ("tool", "Read", None),
                        ("assistant", None, None)]
    assert t.turns[1].is_error and t.turns[1].tool_output == "Error: permission denied"
    assert t.turns[2].tool_input == {}


def test_aider_prompts_edits_console_and_commits():
    t = decode_file(PT / "aider.chat.history.md")
    assert t.harness == "aider" and t.model == "gpt-4o"
    assert shape(t) == [("user", None, None), ("assistant", None, None), ("tool", "Edit", None),
                        ("tool", "git commit", "auto-commit"), ("user", None, "command"),
                        ("user", None, None), ("tool", "Edit", None)]
    assert t.turns[0].content == 'Rename the greeting\nto "Hello"'
    applied, failed = t.turns[2], t.turns[6]
    assert applied.tool_input == {"file_path": "app.py", "old_string": 'GREETING = "Hi"\n',
                                  "new_string": 'GREETING = "Hello"\n'}
    assert applied.tool_output == "Applied edit to app.py" and applied.edits
    assert failed.is_error and not failed.edits


def test_specstory_v2_tool_use_blocks():
    t = decode_file(PT / "specstory-v2.md")
    assert t.session_id == "3069ab07-0672-4d4b-9fd9-177cac79a704"
    assert t.model == "claude-4.5-sonnet"
    assert shape(t) == [("user", None, None), ("assistant", None, None),
                        ("tool", "run_terminal_cmd", None), ("tool", "search_replace", None),
                        ("assistant", None, None)]
    run, edit = t.turns[2], t.turns[3]
    assert run.tool_input == {"command": "pytest -q"} and run.tool_output.strip() == "2 passed"
    assert edit.tool_input["file_path"] == "app.py" and edit.edits


def test_specstory_old_style_details_and_read_lines():
    t = decode_file(PT / "specstory-old.md")
    assert shape(t) == [("user", None, None), ("assistant", None, None),
                        ("tool", "codebase_search", None), ("tool", "read_file", None),
                        ("assistant", None, None)]
    assert t.turns[3].kind is ToolKind.READ and t.turns[3].paths == ("src/parser.py",)


def test_specstory_old_style_terminal_pieces():
    # A piece holding a shell fence (and the plain fence of its output) is a terminal command;
    # a fence of code is still the assistant's text.
    t = decode_file(PT / "specstory-old-terminal.md")
    assert shape(t) == [("user", None, None), ("assistant", None, None),
                        ("tool", "run_terminal_cmd", None), ("assistant", None, None),
                        ("tool", "run_terminal_cmd", None), ("assistant", None, None)]
    run, move = t.turns[2], t.turns[4]
    assert run.command == "python -m pytest politipo/test_pandera_integration.py -v"
    assert run.tool_output == "ERROR: file or directory not found: politipo/test_pandera_integration.py"
    assert (move.command, move.tool_output) == ("mv politipo/test_*.py tests/", "")
    assert "```python" in t.turns[5].content and "Done." in t.turns[5].content


def test_terminal_capture_of_mini_swe_agent():
    t = decode_file(PT / "mini-swe-terminal.log")
    assert t.harness == "mini-swe-agent-log"
    assert shape(t) == [("user", None, "system"), ("user", None, None), ("assistant", None, None),
                        ("tool", "Bash", None), ("assistant", None, None), ("tool", "Bash", None)]
    assert t.turns[2].content == "print it."  # spinner overwritten by carriage returns
    assert (t.turns[3].exit_code, t.turns[3].tool_output, t.turns[3].is_error) == (0, "hi", False)
    assert (t.turns[5].exit_code, t.turns[5].is_error) == (1, True)
    assert t.turns[3].line == 11  # line numbers of the raw capture survive the clean-up


def test_prompt_log_answer_quoting_call_markup_is_an_answer(tmp_path):
    # A plain-text log keeps no calls: markup quoted in the closing answer is part of the
    # answer, not a call that broke the session off (as it is in a log that keeps calls).
    from skill_doctor import rubric, scoring
    log = tmp_path / "chat.txt"
    log.write_text(
        "User: How does the model ask for a tool? Show me the shape of a call.\n\n"
        "Assistant: It writes a block like <invoke name=\"Read\"> with one parameter per "
        "argument; the harness runs it and returns the result in the next message, and the "
        "block closes with the matching end tag.\n", encoding="utf-8")
    t = decode_file(log)
    assert [x.role for x in t.turns] == [Role.USER, Role.ASSISTANT]
    scores = scoring.score(facts.compute(t), rubric.load())
    task = next(r for s in scores.scales() for r in s.criteria if r.criterion.key == "task_completion")
    assert task.points == 3, task.measurement
