"""SWE-agent .traj (0.x, 1.x), mini-swe-agent trajectories and OpenHands event lists."""

from __future__ import annotations

import pytest

from conftest import CORPUS, FIXTURES, corpus_files, needs_corpus
from decode_counts import assert_diffs_parse, assert_tool_results_not_user, counts
from skill_doctor.decode import decode_file
from skill_doctor.decode.trajectories import parse_action
from skill_doctor.model import Role, ToolKind

# (turns, real user turns, tool calls, edits): one tool call per trajectory step / fenced
# command; edits = windowed `edit`/`insert` commands (create makes an empty file).
EXPECTED = {
    "function_calling_simple.traj": (12, 1, 5, 1),
    "marshmallow-1867_default_window.traj": (30, 1, 14, 3),
    "marshmallow-1867_function_calling_replace.traj": (28, 1, 13, 2),
    "sweagenttestrepo-1c2844.traj": (12, 1, 5, 1),
    "example_instance.traj.json": (24, 1, 11, 0),
    "local.traj.json": (6, 1, 2, 0),
}


@needs_corpus
@pytest.mark.parametrize("path", corpus_files("swe-agent-traj") + corpus_files("mini-swe-agent"),
                         ids=lambda p: p.name)
def test_every_trajectory_decodes(path):
    t = decode_file(path)
    assert t.harness in ("swe-agent", "mini-swe-agent") and t.problem is None
    assert counts(t) == EXPECTED[path.name]
    assert_diffs_parse(t)
    assert_tool_results_not_user(t)


@needs_corpus
def test_windowed_edits_get_the_open_file():
    t = decode_file(CORPUS / "swe-agent-traj" / "marshmallow-1867_default_window.traj")
    edits = [x for x in t.turns if x.tool_name == "edit"]
    assert [x.paths for x in edits][-1] == ("/marshmallow-code__marshmallow/src/marshmallow/fields.py",)
    assert dict(t.extra)["exit_status"] == "submitted"


@needs_corpus
def test_mini_swe_agent_returncodes_and_shell_edits():
    t = decode_file(CORPUS / "mini-swe-agent" / "example_instance.traj.json")
    tools = [x for x in t.turns if x.role is Role.TOOL]
    assert sum(1 for x in tools if x.exit_code == 0) == 10
    assert [x.kind for x in tools].count(ToolKind.EDIT) == 4  # sed -i '' ... gitconfig.sh
    assert all(x.paths == ("gitconfig.sh",) for x in tools if x.kind is ToolKind.EDIT)


def test_parse_action():
    assert parse_action("open src/a.py 10") == ("open", {"path": "src/a.py", "line_number": "10"})
    assert parse_action("edit 3:4\n    x = 1\nend_of_edit") == (
        "edit", {"lines": "3:4", "replacement": "    x = 1\n"})
    assert parse_action("edit 'a b' 'c' True") == ("edit", {"search": "a b", "replace": "c",
                                                          "replace-all": True})
    assert parse_action("python -m pytest -q") == ("bash", {"command": "python -m pytest -q"})


def test_openhands_events_pair_by_cause():
    t = decode_file(FIXTURES / "trajectories" / "openhands-events.json")
    assert t.harness == "openhands"
    assert counts(t) == (6, 1, 3, 1)
    read, edit, run = [x for x in t.turns if x.role is Role.TOOL]
    assert read.kind is ToolKind.READ and read.exit_code == 0
    assert edit.kind is ToolKind.EDIT and "+return x + 1" in edit.edits[0].diff
    assert run.exit_code == 0 and run.command == "pytest -q"
