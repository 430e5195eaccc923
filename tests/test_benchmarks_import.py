"""The benchmark scripts stay runnable: each imports cleanly against the current package.

They are run by hand, not by the suite (their figures go in the README), so a renamed or
removed helper would otherwise break one unnoticed. Importing runs no benchmark: every
script starts its work under `if __name__ == "__main__"`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parent.parent / "benchmarks").glob("*.py"))


def test_there_are_benchmarks():
    assert len(BENCHMARKS) >= 5


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_imports(script):
    assert 'if __name__ == "__main__"' in script.read_text(encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(getattr(module, "main", None))
