"""Property tests: whatever bytes a session file holds, the pipeline returns a report.

Every decoder registered in `decode.DECODERS` and the plain-text front end are fuzzed, both
sniffed and forced with `--harness`, over arbitrary bytes, JSON-ish lines and mutated real
sessions (the examples and the smallest file of each corpus folder). A new decoder is covered
as soon as it is registered. The profile is derandomized with a bounded number of examples, so
CI runs the same inputs every time in a few seconds; `fuzz/run.py` is the long run.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fuzzkit

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=25,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.function_scoped_fixture])
settings.load_profile("ci")

HARNESSES = [None, *(fuzzkit.harness_of(name) for name in fuzzkit.decoder_names())]
SEEDS = fuzzkit.seed_files()


def check(data: bytes, harness: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "session.jsonl"
        path.write_bytes(data)
        problem = fuzzkit.run_pipeline(path, harness)
        assert problem is None, (problem, fuzzkit.traceback_of(path, harness), data[:300])


def test_every_registered_decoder_is_fuzzed():
    from skill_doctor import decode

    assert set(fuzzkit.decoder_names()) == {*decode.DECODERS, decode.TEXT_DECODER}
    assert len(HARNESSES) == len(decode.DECODERS) + 2


@pytest.mark.parametrize("harness", HARNESSES, ids=lambda h: h or "sniffed")
@given(data=st.binary(max_size=2000))
def test_arbitrary_bytes(harness, data):
    check(data, harness)


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text(max_size=40))
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(
        ["type", "message", "content", "role", "uuid", "parentUuid", "isSidechain", "sessionId",
         "tool_use_id", "id", "name", "input", "text", "toolUseResult", "timestamp", "payload",
         "is_error", "model", "cwd", "messages", "history"]), inner, max_size=6)), max_leaves=20)


@pytest.mark.parametrize("harness", HARNESSES, ids=lambda h: h or "sniffed")
@given(records=st.lists(_JSON, max_size=8))
def test_json_lines_of_any_shape(harness, records):
    import json

    head = '{"parentUuid":null,"isSidechain":false,"type":"user","uuid":"u0"}\n'
    body = "".join(json.dumps(r) + "\n" for r in records)
    check((head + body).encode("utf-8", "surrogatepass"), harness)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: f"{p.parent.name}/{p.name}")
@given(rng_seed=st.integers(0, 2 ** 32 - 1), rounds=st.integers(1, 3))
@settings(max_examples=5)
def test_mutated_real_sessions(seed, rng_seed, rounds):
    data, _ = fuzzkit.mutate(fuzzkit.read_seed(seed), random.Random(rng_seed), rounds)
    for harness in HARNESSES:
        check(data, harness)


@pytest.mark.parametrize("name", sorted(fuzzkit.MUTATIONS))
def test_each_mutation_changes_its_input(name):
    """The mutators do real work (a fuzz run of no-ops would prove nothing)."""
    data = fuzzkit.read_seed(fuzzkit.EXAMPLES / "retry-fix.jsonl")
    changed = {fuzzkit.MUTATIONS[name](data, random.Random(n)) != data for n in range(20)}
    assert True in changed


@pytest.mark.parametrize("cut", [1, 7, 100, 1000, -1, -2, -50])
def test_truncated_anywhere(cut):
    data = (fuzzkit.EXAMPLES / "retry-fix.jsonl").read_bytes()
    for harness in HARNESSES:
        check(data[:cut], harness)
