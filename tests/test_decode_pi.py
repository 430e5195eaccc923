"""Pi session JSONL: v1 linear files and the v3 tree (active branch only)."""

from __future__ import annotations

import pytest

from conftest import CORPUS, corpus_files, needs_corpus
from decode_counts import assert_diffs_parse, counts
from skill_doctor.decode import decode_file
from skill_doctor.model import Role

# (turns, real user turns, tool calls, edits): tool calls = toolCall blocks (+ the user's
# own `!` bashExecution entries), edits = edit/write calls that did not fail.
EXPECTED = {
    "pi-mono_before-compaction.jsonl": (768, 55, 457, 137),
    "pi-mono_compact.jsonl": (713, 77, 433, 93),
    "pi-mono_session.jsonl": (309, 43, 190, 44),
    "arcreflex_branching.jsonl": (4, 2, 0, 0),
    "arcreflex_with-compaction.jsonl": (5, 2, 0, 0),
    "arcreflex_with-thinking.jsonl": (2, 1, 0, 0),
    "arcreflex_with-tools.jsonl": (4, 1, 1, 0),
}


@needs_corpus
@pytest.mark.parametrize("path", corpus_files("pi") + corpus_files("fixtures-from-other-projects/pi"),
                         ids=lambda p: p.name)
def test_every_pi_file_decodes(path):
    t = decode_file(path)
    assert t.harness == "pi" and t.problem is None
    assert counts(t) == EXPECTED[path.name]
    assert_diffs_parse(t)


@needs_corpus
def test_tree_follows_the_active_branch():
    t = decode_file(CORPUS / "fixtures-from-other-projects" / "pi" / "arcreflex_branching.jsonl")
    users = [x.content for x in t.turns if x.role is Role.USER]
    assert users == ["Help me pick a web framework", "I want something minimal and fast"]


@needs_corpus
def test_bash_exit_codes_and_user_shell():
    t = decode_file(CORPUS / "pi" / "pi-mono_session.jsonl")
    failed = [x for x in t.turns if x.tool_name == "bash" and x.exit_code not in (None, 0)]
    assert failed and all(x.is_error for x in failed)
    assert any(x.meta == "bash-mode" for x in t.turns)  # the user's own `!` command
    assert sum(1 for x in t.turns if x.meta == "compaction") == 1


@needs_corpus
def test_the_placeholder_for_no_output_is_no_output():
    t = decode_file(CORPUS / "pi" / "pi-mono_session.jsonl")
    bash = [x for x in t.turns if x.tool_name == "bash"]
    assert not any((x.tool_output or "").startswith("(no output)") for x in bash)
    assert any(x.tool_output == "" and x.exit_code == 0 for x in bash)
    assert any(x.tool_output == "Command exited with code 1" and x.exit_code == 1 for x in bash)
