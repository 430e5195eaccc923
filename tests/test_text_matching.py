"""The fast case-insensitive matching of text.py (CaselessPattern, ascii_folded) and the check
outcome's split pattern: the same matches as the patterns they stand for, on any text."""

from __future__ import annotations

import random
import re

import pytest

from skill_doctor import shell
from skill_doctor.detectors import regression_avoidance, turn_economy
from skill_doctor.facts import requests as ledger
from skill_doctor.facts import retries
from skill_doctor.text import CaselessPattern, ascii_folded, sentences

# Words the converted patterns look for, in several cases, with the four non-ASCII letters
# re.IGNORECASE folds onto ASCII ones, other non-ASCII letters and CJK text.
_WORDS = ("do not", "Don't", "NEVER", "modify", "Fix", "fix", "ADD", "run", "again", "Retry",
          "one more time", "still running", "Process Running With Session ID", "in the background",
          "tests", "build", "check", "Still doesn't work", "wrong", "undo", "commit", "push",
          "please", "and then", ",", ".", "!", "?", "\n", "  ", "Too long", "é", "É", "ß",
          "\u0130", "\u0131", "\u017f", "\u212a", "k", "s", "i", "set up", "Setup", "clean up",
          "can you add", "修改", "日本語", "4 passed", "OK", "ok  pkg", "PASS", "0 failed",
          "BUILD SUCCESS", "Finished dev target", "test result: ok", "All checks passed",
          "Found 0 errors", "✓", "compiled successfully", "built in", "No errors", "0 errors",
          "Traceback (most recent", "Error:", "Exception", "SyntaxError", "x",
          "aborted by user", "[Request interrupted by user", "Rate limit exceeded", "rate-limited",
          "Too Many Requests", "Service Unavailable", "HTTP 429", "status: 503", "error 429",
          "bash: foo: command not found", "sh: 1: make: not found", "Exit code 127",
          "is not recognized as an internal or external command", "@pytest.mark.skip",
          "it.skip(", "pytest.skip(", "xit(", "t.Skip(", "#[ignore]", "skip", "Skip", "(")


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 12))) for _ in range(count)]


_CONVERTED = [getattr(ledger, name) for name in (
    "_NEGATED", "_FORBIDS_CHECKS", "_REJECTS", "_CHANGE_WORDS", "_OPERATION_REQUEST")] + [
    retries._STILL_RUNNING, retries._ASKS_TO_RETRY, shell._ABORTED, turn_economy._SERVICE_BUSY]


@pytest.mark.parametrize("pattern", _CONVERTED, ids=lambda p: p.pattern[:30])
def test_caseless_pattern_matches_as_ignorecase_does(pattern: CaselessPattern) -> None:
    reference = re.compile(pattern.pattern, pattern.flags | re.IGNORECASE)
    for text in _texts(4000, seed=len(pattern.pattern)):
        assert [m.span() for m in pattern.finditer(text)] == \
            [m.span() for m in reference.finditer(text)], text
        assert (pattern.search(text) is None) == (reference.search(text) is None), text
        assert (pattern.match(text) is None) == (reference.match(text) is None), text
        assert pattern.sub(" ", text) == reference.sub(" ", text), text


def test_caseless_pattern_keeps_the_text_around_replacements() -> None:
    negated = CaselessPattern(r"\bdo not \w+")
    assert negated.sub("_", "Please DO NOT Touch the README, Fix it") == "Please _ the README, Fix it"


def test_letters_that_fold_onto_ascii_use_the_flag() -> None:
    # U+212A KELVIN SIGN matches "k" under re.IGNORECASE: the folded copy would miss it.
    keep = CaselessPattern(r"\bkeep\b")
    assert ascii_folded("\u212aeep") is None
    assert keep.search("\u212aeep going") is not None
    assert keep.search("KEEP going, café") is not None
    assert ascii_folded("Café OK") == "café ok"


@pytest.mark.parametrize("source", [r"Fix", r"(a)\1", r"(?P<x>a)(?P=x)", r"(?i)fix", "Äb"])
def test_patterns_it_cannot_run_folded_are_refused(source: str) -> None:
    with pytest.raises(ValueError):
        CaselessPattern(source)


def test_required_text_rules_out_texts_without_it() -> None:
    running = retries._STILL_RUNNING
    assert running.search("Still RUNNING in the background") is not None
    assert running.search("nothing runs here") is None


def test_check_passed_and_failure_sign_as_the_whole_patterns_say() -> None:
    for text in _texts(20000, seed=3):
        assert shell.says_passed(text) == bool(shell._PASSED_OUTPUT.search(text)), text
        assert shell.failure_sign(text) == bool(shell._FAILURE_SIGN.search(text)), text


def test_folded_copy_keeps_offsets_of_non_ascii_text() -> None:
    text = "Ünïcode — «Fix» the ÉTAT module"
    assert ascii_folded(text) == text.lower() and len(ascii_folded(text)) == len(text)
    words = CaselessPattern(r"\bfix\b|\bmodule\b")
    assert [text[m.start():m.end()] for m in words.finditer(text)] == ["Fix", "module"]


@pytest.mark.parametrize("source", [r"[\u00c0-\u00de]", r"\x41", r"\N{LATIN CAPITAL LETTER A}"])
def test_characters_given_by_code_are_refused(source: str) -> None:
    with pytest.raises(ValueError):
        CaselessPattern(source)


def test_fence_bodies_taken_a_line_at_a_time_match_as_lazy_bodies_do() -> None:
    """textcommon.LINE_BODY stands for `.*?` before a closing line: same matches, groups,
    unclosed blocks and ends (also against an end position, as the cctrace results use)."""
    from skill_doctor.decode import text_generic, textcommon
    from skill_doctor.decode.textcommon import Blocks

    flags = re.DOTALL | re.MULTILINE
    lazy_fence = Blocks([(r"^```([^\n]*)\n(.*?)", r"^```[ \t]*$")], flags)
    lazy_blocks = Blocks([
        (r"^```(?P<info>[^`\n]*)\n(?P<body>.*?)", r"^```[ \t]*$"),
        (r"^🔧 \*\*Tool Use: (?P<use>[^*]+)\*\*(?: \(ID: (?P<id>[^)]+)\))?[ \t]*$", None),
        text_generic._FENCE_OR_USE.alternatives[2],  # a rendered edit: no body to take
        (r"^<details>\s*<summary>💭(?P<details>.*?)", r"^</details>[ \t]*$")], flags)
    lazy_after = re.compile(r"\s*^```([^\n]*)\n(.*?)^```[ \t]*$", flags)
    pieces = ["```", "```py", "``` ", "````", "x", "\n", "\n", "  ", "</details>",
              "<details><summary>💭 think", "🔧 **Tool Use: Bash** (ID: t1)", "```\n", "a```",
              "Edited\nmain.go\n+8\n-0"]
    rng = random.Random(3)

    def shape(match):
        return (match.span(), match.groups()) if match else None

    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert [shape(m) for m in textcommon.FENCE.finditer(text)] == \
            [shape(m) for m in lazy_fence.finditer(text)], text
        assert [shape(m) for m in text_generic._FENCE_OR_USE.finditer(text)] == \
            [shape(m) for m in lazy_blocks.finditer(text)], text
        for pos in range(0, len(text) + 1, 3):
            end = max(pos, len(text) - 2)
            assert shape(text_generic.FENCE_AFTER.match(text, pos, end)) == \
                shape(lazy_after.match(text, pos, end)), text


def test_a_clipped_tool_output_keeps_the_harness_cut_marker_it_dropped() -> None:
    from skill_doctor.text import HARNESS_CUT, OUTPUT_CHARS, clip_output

    body = "diff line\n" * 2000
    cut = body + "…11637 tokens truncated…\n" + body
    kept = clip_output(cut)
    assert len(kept) < OUTPUT_CHARS + 200 and HARNESS_CUT.search(kept)
    assert "characters not kept, among them: …11637 tokens truncated…" in kept
    # An output the harness did not cut says nothing of the kind once clipped.
    assert not HARNESS_CUT.search(clip_output(body + body))
    assert clip_output("short") == "short"


def test_sentences_split_after_ends_and_colons_and_at_line_breaks():
    assert sentences("Fixed it. Before I start: which port?\n\n- Add icons?  ") == [
        "Fixed it.", "Before I start:", "which port?", "- Add icons?"]
    assert sentences("  \n ") == []


# Pieces of command lines: the words a detaching command needs, wrappers, separators, quotes.
_COMMAND_PARTS = ("nohup", "setsid", "docker", "podman", "run", "up", "compose", "-d", "-daemonize",
                  "--daemon", "--daemonize", "--detach", "qemu", "server", "sudo", "bash -c",
                  "'", '"', "&&", "&", ";", "|", "||", "\n", " ", "  ", "npm start", "x=1",
                  "cat <<EOF\nnohup\nEOF\n", "echo", "--detached", "daemon", "-dx")


def test_detaches_answers_as_the_segment_by_segment_search_on_any_command() -> None:
    """`detaches` skips cutting a command into segments when none of the words a match needs
    is in it; the answer is the same as searching every segment."""
    rng = random.Random(7)

    def reference(command: str) -> bool:
        command = command.rstrip()
        if command.endswith("&") and not command.endswith("&&"):
            return True
        return bool(command) and any(shell._DETACHES.search(segment)
                                     for segment in shell.command_segments(command))

    commands = ["".join(rng.choice(_COMMAND_PARTS) + rng.choice(("", " "))
                        for _ in range(rng.randint(1, 9))) for _ in range(3000)]
    commands += ["nohup python server.py", "setsid ./run", "docker run -d nginx",
                 "podman compose up -d", "qemu-system-x86_64 -daemonize", "dockerd --detach",
                 "cd app && nohup ./srv", "python -m pytest -q", "npm test"]
    assert any(reference(c) for c in commands) and not all(reference(c) for c in commands)
    for command in commands:
        assert shell.detaches(command) is reference(command), command


def test_literal_checks_before_a_pattern_answer_as_the_pattern_alone() -> None:
    """A missing program, and a skipped test in added lines, are searched only in texts holding
    a word every match holds: the answer is the pattern's own on any text."""
    skip = regression_avoidance._SKIP
    for text in _texts(20000, seed=11) + [line for text in _texts(3000, seed=12)
                                           for line in text.split("\n")]:
        assert shell.says_program_missing(text) == bool(shell.MISSING_PROGRAM.search(text)), text
        assert regression_avoidance._line_matching(skip, text, regression_avoidance._NEEDS["skip"]) \
            == regression_avoidance._line_matching(skip, text), text
    assert shell.says_program_missing("bash: foo: command not found")
    assert regression_avoidance._line_matching(skip, "x = 1\n@pytest.mark.skip\n",
                                               regression_avoidance._NEEDS["skip"]) == "@pytest.mark.skip"
