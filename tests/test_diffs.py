"""Diff measurement: the fast hunk walk must agree with unidiff, and odd text must not break it."""

from __future__ import annotations

import difflib

from hypothesis import given, settings, strategies as st
from unidiff import PatchSet

from skill_doctor import diffs
from skill_doctor.text import make_diff
from skill_doctor.model import FileEdit


def unidiff_counts(text: str) -> tuple[int, int]:
    patch = PatchSet(text)
    return sum(f.added for f in patch), sum(f.removed for f in patch)


def test_counts_agree_with_unidiff_on_generated_diffs():
    before = "a\nb\nc\nd\ne\nf\ng\n"
    after = "a\nB\nc\nd\ne\nf\ng\nh\n"
    text = make_diff("x.py", before, after)
    assert diffs._scan_counts(text) == unidiff_counts(text) == (2, 1)


def test_no_newline_marker_and_created_file():
    text = make_diff("new.py", "", "print(1)", created=True)
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


# Text with every line break str.splitlines knows, diff markers and wide characters.
_TEXT = st.lists(st.sampled_from(
    ["a", "+", "-", "@@", "\\", " ", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85",
     "\u2028", "é", "🙂"]), max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(_TEXT, st.booleans())
def test_text_added_to_an_empty_one_is_diffed_as_difflib_does(text, created):
    old_name = "/dev/null" if created else "a/p.py"
    expected = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in difflib.unified_diff([], text.splitlines(keepends=True), old_name, "b/p.py"))
    assert make_diff("p.py", "", text, created=created) == expected


@settings(max_examples=400, deadline=None)
@given(_TEXT, st.booleans())
def test_an_edit_whose_diff_is_not_held_reads_as_if_it_were(text, created):
    held = FileEdit(path="p.py", patch=make_diff("p.py", "", text, created=created),
                    new=text, created=created)
    built = FileEdit(path="p.py", patch=None, new=text, created=created)
    assert built.diff == held.diff
    assert diffs.edit_lines(built) == diffs.edit_lines(held) == diffs.changed_lines(held.diff)
    assert diffs.edit_counts(built) == diffs.edit_counts(held) == diffs.count_changes(held.diff)
