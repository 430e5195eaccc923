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


def test_the_rubrics_retry_parameters_reach_every_criterion_that_counts_retries(tmp_path):
    """Retry episodes are found once, with the rubric's parameters: a rubric that makes two
    failing calls in a row an episode changes retry waste and turn economy alike."""
    from sessionkit import claude_jsonl

    from skill_doctor import rubric as rubric_mod
    from skill_doctor.decode import decode_file
    from skill_doctor.report import grade

    session = tmp_path / "s.jsonl"
    session.write_text(claude_jsonl([
        {"user": "Deploy the site and push the release branch"},
        {"tool": "Bash", "input": {"command": "./deploy.sh --prod"},
         "output": "Error: permission denied (publickey)", "error": True},
        {"tool": "Bash", "input": {"command": "git push origin release"},
         "output": "fatal: could not read from remote repository", "error": True},
        {"tool": "Bash", "input": {"command": "ls"}, "output": "deploy.sh\nsite"},
        {"assistant": "Both steps need credentials this machine does not have."}]))
    tuned = tmp_path / "rubric.yaml"
    tuned.write_text("criteria:\n  retry_waste:\n    params:\n      failing_streak: 2\n")

    def criteria(rubric_path):
        report = grade(decode_file(session), rubric_mod.load(rubric_path), "2026-01-01T00:00:00Z")
        return report.facts.retries, {c.criterion.key: c for s in report.scores.scales()
                                      for c in s.criteria}

    episodes, shipped = criteria(None)
    assert episodes == ()
    episodes, tuned_scores = criteria(str(tuned))
    assert [(ep.kind, ep.turns) for ep in episodes] == [("streak", [2, 3])]
    assert tuned_scores["retry_waste"].measurement.value == 1
    assert shipped["retry_waste"].measurement.value == 0
    # Turn economy counts the second failing call as spent on a retry only under the tuned rubric.
    assert "retry" in tuned_scores["turn_economy"].measurement.summary
    assert "retry" not in shipped["turn_economy"].measurement.summary
