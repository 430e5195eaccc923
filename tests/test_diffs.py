"""Diff measurement: the fast hunk walk must agree with unidiff, and odd text must not break it."""

from __future__ import annotations

from unidiff import PatchSet

from skill_doctor import diffs


def unidiff_counts(text: str) -> tuple[int, int]:
    patch = PatchSet(text)
    return sum(f.added for f in patch), sum(f.removed for f in patch)


def test_counts_agree_with_unidiff_on_generated_diffs():
    before = "a\nb\nc\nd\ne\nf\ng\n"
    after = "a\nB\nc\nd\ne\nf\ng\nh\n"
    text = diffs.make_diff("x.py", before, after)
    assert diffs._scan_counts(text) == unidiff_counts(text) == (2, 1)


def test_no_newline_marker_and_created_file():
    text = diffs.make_diff("new.py", "", "print(1)", created=True)
    assert "\\ No newline at end of file" in text
    assert diffs.count_changes(text) == unidiff_counts(text) == (1, 0)


def test_structured_patch_hunks():
    text = diffs.diff_from_hunks("a.py", [{"oldStart": 2, "oldLines": 2, "newStart": 2,
                                           "newLines": 3, "lines": [" x", "-y", "+y2", "+z"]}])
    assert diffs.count_changes(text) == (2, 1)


def test_hunk_that_disagrees_with_its_header_goes_to_unidiff_or_the_lenient_count():
    text = "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n-a\n+b\n"
    assert diffs._scan_counts(text) is None
    assert diffs.count_changes(text) == (1, 1)


def test_text_that_is_not_a_diff_counts_nothing_and_never_raises():
    assert diffs.count_changes("") == (0, 0)
    assert diffs.count_changes("hello\nworld\n") == (0, 0)
