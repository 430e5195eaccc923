"""How long the facts and the eight detectors take on a long synthetic session.

Builds a 10,000-turn session in memory (reads, edits, checks, failures, retries, loops,
repeated reads, user messages), then times facts + scoring over it several times and prints
the best and median figures. Detectors must stay near-linear in the number of turns; run this
after changing one:

    PYTHONPATH=src python3 benchmarks/bench_detectors.py [TURNS]
"""

from __future__ import annotations

import statistics
import sys
import time

from skill_doctor import facts, rubric, scoring
from skill_doctor.text import make_diff
from skill_doctor.model import FileEdit, Role, ToolKind, Transcript, Turn


def synthetic(n_turns: int) -> Transcript:
    turns: list[Turn] = []

    def add(**kw) -> None:
        turns.append(Turn(index=len(turns) + 1, **kw))

    add(role=Role.USER, content="Fix the page count in src/pager.py and keep the tests green.")
    i = 0
    while len(turns) < n_turns:
        i += 1
        path = f"/home/dev/proj/src/mod{i % 400}.py"
        step = i % 10
        if step in (0, 1):
            add(role=Role.TOOL, tool_name="Read", kind=ToolKind.READ, paths=(path,),
                tool_input={"file_path": path}, tool_output=f"import mod{(i + 1) % 400}\n" * 5)
        elif step == 2:
            old, new = f"x = {i}\n", f"x = {i + 1}\n"
            edit = FileEdit(path=path, patch=make_diff(path, old, new), old=old, new=new)
            add(role=Role.TOOL, tool_name="Edit", kind=ToolKind.EDIT, paths=(path,), edits=(edit,),
                tool_input={"file_path": path, "old_string": f"x = {i}", "new_string": f"x = {i + 1}"},
                tool_output="The file has been updated.")
        elif step == 3:
            failed = i % 20 == 3
            add(role=Role.TOOL, tool_name="Bash", kind=ToolKind.SHELL, via_shell=True,
                tool_input={"command": "pytest -q"}, is_error=failed, exit_code=1 if failed else 0,
                tool_output="1 failed" if failed else "12 passed")
        elif step == 4:
            add(role=Role.TOOL, tool_name="Bash", kind=ToolKind.SHELL, via_shell=True,
                tool_input={"command": "pytest -q"}, exit_code=0, tool_output="12 passed")
        elif step == 5:
            add(role=Role.TOOL, tool_name="Grep", kind=ToolKind.SEARCH,
                tool_input={"pattern": f"name{i % 50}"}, tool_output="src/a.py\nsrc/b.py")
        elif step == 6:
            add(role=Role.TOOL, tool_name="Bash", kind=ToolKind.SHELL, via_shell=True,
                tool_input={"command": "git status"}, exit_code=0, tool_output="clean")
        elif step == 7:
            add(role=Role.ASSISTANT, content=f"Edited mod{i % 400}.py; next I check mod{i % 7}.py.")
        elif step == 8:
            add(role=Role.TOOL, tool_name="Edit", kind=ToolKind.EDIT, paths=(path,), is_error=True,
                tool_input={"file_path": path, "old_string": "nope", "new_string": "x"},
                tool_output="String to replace not found in file.")
        else:
            if i % 100 == 9:
                add(role=Role.USER, content="Also keep going with the next module please.")
            else:
                add(role=Role.ASSISTANT, content="Continuing.")
    add(role=Role.ASSISTANT, content="Done; all tests pass.")
    return Transcript(source="synthetic", harness="synthetic", turns=tuple(turns), cwd="/home/dev/proj")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    transcript = synthetic(n)
    rules = rubric.load()
    times = []
    result = None
    for _ in range(5):
        start = time.perf_counter()
        result = scoring.score(facts.compute(transcript), rules)
        times.append(time.perf_counter() - start)
    assert result is not None
    print(f"turns: {len(transcript.turns)}")
    print(f"facts + 8 detectors: best {min(times) * 1000:.0f} ms, "
          f"median {statistics.median(times) * 1000:.0f} ms over {len(times)} runs")
    print(f"scores: efficiency {result.efficiency.score}, code quality {result.code_quality.score}")


if __name__ == "__main__":
    main()
