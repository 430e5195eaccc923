"""Every real session beside the project decodes, and none that visibly calls tools loses them.

The sweep covers the corpus and the labelled benchmark runs (asciinema recordings, Harbor ATIF
trajectories and their stream-json copies). A file that decodes to a gradable session with no
tool turn must show no sign of a tool call in its bytes: that would mean its calls were lost.
"""

from __future__ import annotations

import re

import pytest

from conftest import CORPUS
from skill_doctor.decode import decode_file
from skill_doctor.model import Role
from skill_doctor.report import MIN_TURNS

SHARED = CORPUS.parent
FOLDERS = [CORPUS, SHARED / "labelled"]
NOT_SESSIONS = {"README.md", "MANIFEST.tsv", "labels.tsv"}
# What a tool call looks like in the formats we read (JSON keys, console lines, tool wrappers).
TOOL_SIGNS = re.compile(rb'"(?:tool_use|tool_calls|toolCall|functionCall|function_call|tool_call_id)"'
                        rb'|^> Applied edit to |<tool-use |^[\xe2\x8f\xba\xe2\x97\x8f] \w+\(|"action"\s*:\s*"run"',
                        re.MULTILINE)


def _files():
    return sorted(p for base in FOLDERS if base.is_dir() for p in base.rglob("*")
                  if p.is_file() and p.name not in NOT_SESSIONS)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not present")
def test_every_real_file_decodes_and_keeps_its_tool_calls():
    files = _files()
    assert any(p.suffix == ".cast" for p in files) and any(p.name.endswith(".atif.json")
                                                           for p in files)
    lost = []
    for path in files:
        t = decode_file(path)
        assert not (t.problem and t.problem.message.startswith("the decoder failed")), \
            (path, t.problem)
        real = [x for x in t.turns if x.meta is None or x.meta == "request-unknown"]
        if t.problem is None and len(real) >= MIN_TURNS and \
                not any(x.role is Role.TOOL for x in real) and TOOL_SIGNS.search(path.read_bytes()):
            lost.append(path.relative_to(SHARED))
    assert lost == []
