"""The package's import graph has no circles, and the pipeline reads from it floor by floor.

Every import of one skill_doctor module by another counts, wherever it is written (inside a
function, or only for the type checker): a circle is a circle to a reader whichever way it is
hidden. Run as a script, this prints the modules floor by floor, each floor importing only
from the floors below it (the drawing README.md's "Package layout" shows):

    python tests/test_import_graph.py
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "skill_doctor"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (by name, `skill_doctor.facts.changes`)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                # `from . import facts` imports a module; `from .facts import Facts` a name.
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin
                           for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]  # `skill_doctor.x.y` names a module's item
                if target and target != name and target.startswith("skill_doctor"):
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def floors(graph: dict[str, set[str]]) -> list[list[str]]:
    """Modules by floor: floor 0 imports no other module, floor n only from floors below n."""
    floor: dict[str, int] = {}

    def height(name: str) -> int:
        if name not in floor:
            floor[name] = 1 + max((height(t) for t in graph[name]), default=-1)
        return floor[name]

    for name in graph:
        height(name)
    return [sorted(n for n in graph if floor[n] == f) for f in range(max(floor.values()) + 1)]


def test_the_package_has_no_import_circles():
    assert circles(import_graph()) == []


def test_a_circle_is_found_wherever_it_is():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_decoders_grading_and_pages_sit_on_floors_in_pipeline_order():
    """What a newcomer reads from the floors: the session model and the shell parser sit below
    the facts, the facts below the detectors, the detectors below scoring, and the page and
    the commands above all of them; decoding never reaches up into grading."""
    graph = import_graph()
    where = {name: f for f, names in enumerate(floors(graph)) for name in names}
    order = ["skill_doctor.model", "skill_doctor.shell", "skill_doctor.facts",
             "skill_doctor.detectors", "skill_doctor.scoring", "skill_doctor.report",
             "skill_doctor.render", "skill_doctor.cli"]
    assert [where[n] for n in order] == sorted(where[n] for n in order)
    assert len({where[n] for n in order}) == len(order)
    grading = {n for n in graph if n.startswith(("skill_doctor.facts", "skill_doctor.detectors",
                                                 "skill_doctor.scoring", "skill_doctor.report"))}
    for name, targets in graph.items():
        if name.startswith("skill_doctor.decode"):
            assert not targets & grading, name


if __name__ == "__main__":
    graph = import_graph()
    for number, names in enumerate(floors(graph)):
        print(f"{number:2}  " + "  ".join(n.removeprefix("skill_doctor.") for n in names))
    sys.exit(1 if circles(graph) else 0)
