"""How retry_waste merges overlapping episodes into the one the finding describes."""

from skill_doctor.facts.record import Episode
from skill_doctor.facts.retries import _merge_episodes


def loop(first: int, last: int, what: str) -> Episode:
    return Episode(first, last, list(range(first, last + 1, 2)), what, "loop", "loop")


def test_overlapping_loops_name_each_call_once():
    # A Glob loop, a Bash loop beside it, and a later Bash loop overlapping both: one episode,
    # each call named once ("Glob and Bash alternating and Bash alternating" was shown).
    merged = _merge_episodes([loop(3, 9, "Glob"), loop(4, 10, "Bash"), loop(10, 14, "Bash")])
    assert len(merged) == 1
    assert merged[0].what == "Glob and Bash alternating"
    assert (merged[0].first, merged[0].last) == (3, 14)


def test_loops_apart_stay_apart():
    merged = _merge_episodes([loop(3, 5, "Glob"), loop(8, 10, "Bash")])
    assert [ep.what for ep in merged] == ["Glob", "Bash"]
