"""Transcript text cannot forge output: no terminal escape is obeyed, no second line appears,
no CI workflow command is started, and no invisible character passes unseen.

Hostile file names, session ids, timestamps and messages are fed to every command that prints
(`report`, `check` in every format, `sessions`, `batch`) and every file written (report.html,
report.json, the batch index and summary). What is printed must keep one line per line meant,
start no `::` command but the annotations `check --format github` means to write (whose values
are escaped), carry no raw control character, and show each invisible character as `[U+XXXX]`.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import run_cli
from sessionkit import claude_jsonl
from skill_doctor.redact import terminal, visible

# Characters that hide text or change how it is shown, and how they must appear.
INVISIBLE = ["\u200b", "\u200d", "\ufeff", "\U000e0041", "\u00ad", "\u2028", "\u2029", "\u202e",
             "\u2066", "\u061c", "\u180e", "\u3164", "\ufe00"]
CONTROLS = ["\x1b]0;pwned\x07", "\x1b]52;c;cHduZWQ=\x07", "\x1b[2J", "\x9b31m", "\x07", "\r"]
FORGED = ("\n::error file=x.py,line=1::forged\n::add-mask::secret\n##[error]legacy\n"
          "##teamcity[buildStatus status='SUCCESS' text='forged']\n##vso[task.complete result=Succeeded]\n"
          "section_start:1700000000:forged\r\x1b[0Kfolded\nsection_end:1700000000:forged\n")


def _shown_raw(text: str) -> list[str]:
    """The hostile characters present raw in `text`."""
    bad = [c for c in INVISIBLE if c in text]
    bad += [c for c in ("\x1b", "\x07", "\x9b", "\r") if c in text]
    return bad


def _check_printed(out: str, github: bool = False) -> None:
    assert not _shown_raw(out), _shown_raw(out)
    for line in out.splitlines():
        stripped = line.lstrip()
        assert "##[" not in line and "##vso[" not in line.lower(), line
        assert "##teamcity[" not in line.lower(), line
        assert not re.search(r"section_(start|end):", line, re.I), line
        if stripped.startswith("::"):
            assert github, f"a workflow command in plain output: {line}"
            # one of ours: its values escaped, so nothing of the transcript ends or starts one
            assert re.fullmatch(r"::(warning|error) file=[^:,]*(,line=\d+,col=\d+)?,title="
                                r"[^:]*::.*", line), line
            assert "::" not in line.split("::", 2)[2], line


def test_terminal_makes_every_line_safe():
    line = terminal("::error::x" + FORGED + "".join(CONTROLS) + "".join(INVISIBLE), False)
    assert "\n" not in line and not _shown_raw(line)
    assert not line.startswith("::") and "##[" not in line
    assert "##teamcity[" not in line and "##vso[" not in line
    assert "section_start:" not in line and "section_end:" not in line
    assert "[U+001B]" in line and "[U+200B]" in line and "[U+E0041]" in line
    assert terminal("  ::warning::x", False).startswith("  [U+003A]:")
    assert terminal("::warning file=a::b", False, command=True).startswith("::warning")


def test_every_invisible_character_is_shown_by_its_code_point():
    for char in INVISIBLE:
        assert visible(f"a{char}b") == f"a[U+{ord(char):04X}]b"
    assert visible("\u2764\ufe0f ok") == "\u2764\ufe0f ok"  # an emoji's presentation selector stays
    assert visible("\u2764\ufe0f\ufe0f") == "\u2764\ufe0f[U+FE0F]"  # a run of them does not


def test_visible_answers_as_its_patterns_on_any_text():
    """`visible` returns a text holding no character it shows at once; every other text is
    what its pattern makes of it, with or without line ends shown."""
    import random

    from skill_doctor import redact

    rng = random.Random(5)
    pieces = ["a", " ", "\n", "\r", "\u2764", "\ufe0e", "\ufe0f", "\ufe01", "e\u0301", "x\ty"] \
        + list(INVISIBLE[:40])
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(5000)]
    texts += ["plain text", "two\nlines", "\ufe0fstart"]
    for text in texts:
        assert visible(text) == redact._CONTROLS.sub(redact._code_point, text), repr(text)
        assert visible(text, line=True) == redact._LINE_CONTROLS.sub(redact._code_point, text), \
            repr(text)


@pytest.fixture
def hostile(tmp_path, isolated_home):
    """A Claude Code store session whose file name, id, timestamps and text are hostile."""
    store = isolated_home / ".claude" / "projects" / "-work-proj"
    store.mkdir(parents=True)
    evil = "".join(INVISIBLE) + "".join(CONTROLS)
    name = "s" + FORGED.replace("\n", "\n") + "\x1b]0;t\x07\u202e.jsonl"
    steps = [{"user": f"fix it {evil}{FORGED}"},
             {"tool": "Bash", "input": {"command": f"make {evil}"}, "output": f"{FORGED}{evil}",
              "error": True},
             {"tool": "Bash", "input": {"command": f"make {evil}"}, "output": f"{FORGED}{evil}",
              "error": True},
             {"tool": "Edit", "input": {"file_path": f"/w/{evil}.py", "old_string": "a",
                                        "new_string": "b"}, "output": "not found", "error": True},
             {"assistant": f"done {evil}{FORGED}"}]
    records = [json.loads(line) for line in claude_jsonl(
        steps, cwd="/work/proj", session_id=f"id{FORGED}{evil}").splitlines()]
    for record in records:
        record["timestamp"] = record["timestamp"] + evil
        record["gitBranch"] = f"main{evil}"
    session = store / name
    session.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    return work, session


def test_check_in_every_format_forges_nothing(hostile, capsys):
    work, session = hostile
    for fmt in ("text", "json", "github"):
        code, out, err = run_cli(["check", str(session), "--format", fmt, "--exit-zero"], work,
                                 capsys)
        assert code == 0, err
        _check_printed(out + err, github=fmt == "github")
        if fmt == "json":
            data = json.loads(out)
            assert "[U+202E]" in data["sessions"][0]["path"]
            assert "[U+200B]" in json.dumps(data, ensure_ascii=False)
        if fmt == "github":
            assert any(line.startswith("::") for line in out.splitlines())


def test_report_sessions_and_batch_forge_nothing(hostile, capsys):
    work, session = hostile
    code, out, err = run_cli(["report", str(session), "-o", "r"], work, capsys)
    assert code == 0, err
    _check_printed(out + err)
    html = (work / "r" / "report.html").read_text(encoding="utf-8")
    raw_json = (work / "r" / "report.json").read_text(encoding="utf-8")
    for text in (html, raw_json):
        assert not _shown_raw(text), _shown_raw(text)
        for char in INVISIBLE:
            assert f"[U+{ord(char):04X}]" in text, hex(ord(char))

    code, out, err = run_cli(["sessions"], work, capsys)
    assert code == 0, err
    _check_printed(out + err)
    assert "[U+001B]" in out and "[U+202E]" in out

    code, out, err = run_cli(["batch", str(session), "-o", "b"], work, capsys)
    assert code == 0, err
    _check_printed(out + err)
    for path in (work / "b").rglob("*"):
        assert not _shown_raw(path.name)
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert not _shown_raw(text), (path.name, _shown_raw(text))
    index = (work / "b" / "index.html").read_text(encoding="utf-8")
    assert "[U+202E]" in index and "[U+001B]" in index and "[U+0007]" in index


def test_every_printed_line_goes_through_the_one_printer():
    """Nothing in the package writes to stdout or stderr but cli.say (through redact.terminal)
    and the progress bar (its own counters only): a new command that printed directly would
    bypass redaction and the workflow-command guard."""
    import ast
    from pathlib import Path

    import skill_doctor

    # the printer, and the progress bar (draw, inside _progress_bar)
    allowed = {("cli.py", "say"), ("cli.py", "draw"), ("cli.py", "_progress_bar")}
    offenders = []
    for source in sorted(Path(skill_doctor.__file__).parent.rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if not isinstance(node, ast.Call):
                    continue
                target = node.func
                printing = isinstance(target, ast.Name) and target.id == "print"
                writing = (isinstance(target, ast.Attribute) and target.attr == "write"
                           and ast.unparse(target.value) in ("stream", "sys.stdout", "sys.stderr"))
                if (printing or writing) and (source.name, func.name) not in allowed:
                    offenders.append(f"{source.name}:{node.lineno} in {func.name}")
    assert not offenders, offenders
