"""Which commands are checks of the work, and how each ended (facts.checks)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sessionkit import claude_jsonl

from skill_doctor import facts, shell
from skill_doctor.decode import decode_file
from skill_doctor.model import Role, ToolKind, Transcript, Turn

SCRIPT = ("python3 - <<'PY'\nfrom pathlib import Path\npath = Path('tasks.md')\n"
          "path.write_text(path.read_text().replace('- [ ] T1', '- [X] T1'))\nPY")


def _checks(tmp_path, steps):
    path = tmp_path / "s.jsonl"
    path.write_text(claude_jsonl(steps), encoding="utf-8")
    return [(c.turn, c.kind, c.passed) for c in facts.compute(decode_file(path)).checks]


def test_an_inline_script_that_writes_a_file_is_an_edit_not_a_check(tmp_path):
    assert _checks(tmp_path, [
        {"user": "Mark task T1 done in tasks.md."},
        {"tool": "Bash", "input": {"command": SCRIPT}, "output": ""},
        {"tool": "Bash", "input": {"command": "python3 app.py --total 1 2"}, "output": "3"},
        {"assistant": "Marked T1 done."},
    ]) == [(3, "run", True)]


def test_a_silent_type_check_or_lint_that_exits_0_passed(tmp_path):
    assert _checks(tmp_path, [
        {"user": "Rename the option in src/session.ts."},
        {"tool": "Bash", "input": {"command": "npx tsc --noEmit"}, "output": ""},
        {"tool": "Bash", "input": {"command": "npx eslint src"}, "output": ""},
        # Masked by a pipe, silence says nothing; a silent test run says nothing either.
        {"tool": "Bash", "input": {"command": "npx tsc --noEmit | head"}, "output": ""},
        {"tool": "Bash", "input": {"command": "pytest -q > /dev/null"}, "output": ""},
        {"assistant": "Done."},
    ]) == [(2, "typecheck", True), (3, "lint", True), (4, "typecheck", None), (5, "test", None)]


def test_a_request_to_the_local_service_runs_it_but_a_status_probe_does_not(tmp_path):
    assert _checks(tmp_path, [
        {"user": "Serve hello.html from the web server on port 8080."},
        {"tool": "Bash", "input": {"command": "curl http://localhost:8080/hello.html"},
         "output": "<h1>hello</h1>"},
        # Whether the server answers is no sign the page is right.
        {"tool": "Bash", "input": {"command": "curl -I http://127.0.0.1:8080/hello.html"},
         "output": "HTTP/1.1 200 OK"},
        {"tool": "Bash", "input": {"command": "curl -s -o /dev/null -w '%{http_code}' localhost:8080/"},
         "output": "200"},
        {"tool": "Bash", "input": {"command": "curl https://example.com/"}, "output": "<html>"},
        {"assistant": "The page is served."},
    ]) == [(2, "run", True)]


def test_a_compiler_that_exits_0_saying_nothing_passed(tmp_path):
    assert _checks(tmp_path, [
        {"user": "Finish the proof in plus_comm.v."},
        {"tool": "Bash", "input": {"command": "coqc /workspace/plus_comm.v"}, "output": ""},
        {"tool": "Bash", "input": {"command": "gcc -o app app.c"},
         "output": "Exit code 1\napp.c:3:1: error: expected ';'", "error": True},
        {"assistant": "The proof compiles."},
    ]) == [(2, "build", True), (3, "build", False)]


def test_an_inline_program_that_imports_the_edited_code_runs_it(tmp_path):
    edit = {"tool": "Edit", "input": {"file_path": "/home/dev/pkg/fasttext/FastText.py",
                                      "old_string": "np.array(x, copy=False)",
                                      "new_string": "np.asarray(x)"},
            "output": "The file has been updated."}
    assert _checks(tmp_path, [
        {"user": "Make fasttext work with numpy 2."},
        # Before any edit, and importing something never edited: looking, not checking.
        {"tool": "Bash", "input": {"command": "python -c \"import fasttext; print(fasttext.__file__)\""},
         "output": "/home/dev/pkg/fasttext/__init__.py"},
        edit,
        {"tool": "Bash", "input": {"command": "python -c 'import numpy; print(numpy.__version__)'"},
         "output": "2.1.0"},
        {"tool": "Bash", "input": {"command": "python -c \"import fasttext; m = fasttext.load_model('m.bin'); print(m.predict('hi'))\""},
         "output": "(('__label__en',), array([0.98]))"},
        {"assistant": "Predictions work with numpy 2."},
    ]) == [(5, "run", True)]


def test_an_output_compared_with_the_expected_one_is_a_test_but_a_bare_diff_only_looks(tmp_path):
    assert _checks(tmp_path, [
        {"user": "Make the query faster without changing its results."},
        {"tool": "Bash", "input": {"command": "diff query.sql query_fast.sql"},
         "output": "3c3\n< GROUP BY w\n---\n> WINDOW w", "error": True},
        {"tool": "Bash", "input": {"command": "git diff && echo reviewed"}, "output": "reviewed"},
        {"tool": "Bash", "input": {"command": "diff /tmp/before.txt /tmp/after.txt && echo \"Outputs are identical\""},
         "output": "Outputs are identical"},
        {"tool": "Bash", "input": {"command": "cmp -s out.bin expected.bin"},
         "output": "Exit code 1", "error": True},
        {"assistant": "The query is faster; its output differs in one binary export."},
    ]) == [(4, "test", True), (5, "test", False)]


def test_a_program_the_session_compiled_run_by_its_name_is_a_run(tmp_path):
    assert _checks(tmp_path, [
        {"user": "Build sqlite with gcov instrumentation and put it on the PATH."},
        {"tool": "Bash", "input": {"command": "gcc -fprofile-arcs -ftest-coverage -o sqlite3 sqlite3.c shell.c"},
         "output": ""},
        {"tool": "Bash", "input": {"command": "cp sqlite3 /usr/local/bin/"}, "output": ""},
        # Its version only names it; a query runs it.
        {"tool": "Bash", "input": {"command": "sqlite3 --version"}, "output": "3.42.0 2023-05-16"},
        {"tool": "Bash", "input": {"command": "sqlite3 :memory: \"SELECT 'gcov';\""}, "output": "gcov"},
        # A program of the same kind the session did not build is no run of its work.
        {"tool": "Bash", "input": {"command": "psql -c 'SELECT 1'"}, "output": "1"},
        {"assistant": "sqlite3 is built with gcov and on the PATH."},
    ]) == [(2, "build", True), (5, "run", True)]


def test_the_output_of_a_program_started_in_the_background_is_a_run_of_it(tmp_path):
    assert _checks(tmp_path, [
        {"user": "Start the notebook server on port 8888 and keep it running."},
        {"tool": "Bash", "input": {"command": "jupyter notebook --port 8888", "run_in_background": True},
         "output": "Command running in background with ID: ab12cd"},
        {"tool": "Bash", "input": {"command": "python -m http.server 9000 &"},
         "output": "Command running in background with ID: ef34gh"},
        {"tool": "BashOutput", "input": {"bash_id": "ab12cd"},
         "output": "<status>running</status>\n\n<stderr>\n[I ServerApp] Jupyter Server is running at "
                   "http://localhost:8888/\n</stderr>"},
        {"tool": "BashOutput", "input": {"bash_id": "ef34gh"},
         "output": "<status>failed</status>\n\n<exit_code>1</exit_code>\n\n<stderr>\nOSError: "
                   "[Errno 98] Address already in use\n</stderr>"},
        # A kernel that panics while it boots failed, whatever the harness's status says.
        {"tool": "Bash", "input": {"command": "qemu-system-x86_64 -kernel bzImage -nographic &"},
         "output": "Command running in background with ID: ij56kl"},
        {"tool": "BashOutput", "input": {"bash_id": "ij56kl"},
         "output": "<status>running</status>\n\n<stdout>\n[ 3.1] Kernel panic - not syncing: No "
                   "working init found.\n</stdout>"},
        {"assistant": "The server is running."},
    ]) == [(4, "run", True), (5, "run", False), (7, "run", False)]


def test_an_exception_line_without_its_traceback_and_a_failed_cd_fail(tmp_path):
    # A cut output keeps only the exception's last line; a `cd` that failed ran nothing.
    # Both are read past a pipe or an `; echo`, whose exit status is not the check's.
    assert _checks(tmp_path, [
        {"user": "Make the pandera example in examples/demo.py pass its schema."},
        {"tool": "Bash", "input": {"command": "python examples/demo.py | cat"},
         "output": "pandera.errors.SchemaError: expected series 'active' to have type bool"},
        {"tool": "Bash", "input": {"command": "cd politipo && pytest -q; echo done"},
         "output": "bash: cd: politipo: No such file or directory\ndone"},
        {"tool": "Bash", "input": {"command": "python examples/demo.py"},
         "output": "validated 3 rows"},
        {"assistant": "The example validates."},
    ]) == [(2, "run", False), (3, "test", False), (4, "run", True)]


def test_a_command_line_shows_the_files_its_reads_and_listings_name():
    from skill_doctor.tools import looked_at

    assert looked_at("printf 'honeybear\\n' > /app/solution.txt && sed -n '1p' /app/solution.txt") \
        == ("/app/solution.txt",)
    assert looked_at("ls -la /app/encrypted_data && echo done") == ("/app/encrypted_data",)
    assert looked_at("bash -lc 'head -n 5 out/result.csv'") == ("out/result.csv",)
    # Writing, running or echoing a file shows nothing of it.
    assert looked_at("python3 train.py > log.txt") == ()
    assert looked_at("echo /app/solution.txt") == ()


def test_inline_programs_that_write_data_through_libraries_change_the_files_they_name():
    from skill_doctor.model import ToolKind
    from skill_doctor.tools import shell_file_effects

    _, writes, kind = shell_file_effects(
        "python -c \"import pandas as pd; pd.read_csv('/app/data.csv').to_parquet('/app/data.parquet')\"")
    assert kind is ToolKind.EDIT and writes == ["/app/data.parquet"]
    _, writes, kind = shell_file_effects("python -c \"import pandas as pd; print(pd.read_csv('a.csv').shape)\"")
    assert kind is not ToolKind.EDIT and writes == []


# Shell outputs of harnesses that log no exit code (Cline, exports, SpecStory): what the
# shell or the program printed says whether the command failed.
PRINTED_FAILURES = [
    # (the first two print nothing but the missing program)
    "/bin/bash: line 1: jq: command not found",
    "/bin/sh: 1: systemctl: not found",  # dash
    "所在位置 行:1 字符: 41\n+ cd x && npx y\n标记“&&”不是此版本中的有效语句分隔符。\n"
    "    + CategoryInfo          : ParserError: (:) [], ParentContainsErrorRecordException\n"
    "    + FullyQualifiedErrorId : InvalidEndOfLine",
    "'tsc' is not recognized as an internal or external command,\noperable program or batch file.",
    "fatal: not a git repository (or any of the parent directories): .git",
    "npm ERR! code ELIFECYCLE\nnpm ERR! errno 2",
    "node:internal/modules/cjs/loader:1078\n  throw err;\n  ^\n\nError: Cannot find module 'ws'\n"
    "Require stack:\n- /app/test.js\n    at Module._resolveFilename (node:internal)\n{\n"
    "  code: 'MODULE_NOT_FOUND'\n}\n\nNode.js v18.15.0",
    "Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    import pandas\n"
    "ModuleNotFoundError: No module named 'pandas'\n",
    "bash: cd: politipo: No such file or directory",
]
PRINTED_SUCCESSES = [
    "",
    "3 passed in 0.12s",
    # PowerShell wraps what a native program writes to stderr; cargo still finished.
    "cargo :     Checking app v0.1.0\nAt line:1 char:1\n    + CategoryInfo          : NotSpecified: "
    "(...) [], RemoteException\n    + FullyQualifiedErrorId : NativeCommandError\n\n"
    "warning: unused import\n    Finished `dev` profile [unoptimized] target(s) in 5.12s",
    # A traceback the program caught and logged, then went on.
    "Traceback (most recent call last):\n  File \"w.py\", line 9\nValueError: bad row 12\n"
    "skipped 1 row\nwrote 99 rows to out.csv\n",
    "grep: warning: stray \\ before -\nsrc/app.py:3: import os",
    "Error handling is covered by tests/test_errors.py\n12 files checked",
]


@pytest.mark.parametrize("output", PRINTED_FAILURES)
def test_a_printed_failure_fails_a_shell_call_whose_exit_code_is_not_logged(output):
    assert shell.printed_failure(output)
    call = Turn(2, Role.TOOL, tool_name="execute_command", tool_input={"command": "x"},
                tool_output=output, kind=ToolKind.SHELL, via_shell=True, command="x")
    assert shell.tool_failed(call)
    # Where the harness logged the exit code, the exit code decides, unless all the call
    # printed is a missing program: a pipe's last program gave its 0 (`strings f | head`).
    only_missing = output in PRINTED_FAILURES[:2]
    assert shell.tool_failed(call.replace(exit_code=0)) is only_missing


@pytest.mark.parametrize("output", PRINTED_SUCCESSES)
def test_output_that_reports_no_failure_leaves_the_call_passed(output):
    assert not shell.printed_failure(output)
    call = Turn(2, Role.TOOL, tool_name="execute_command", tool_input={"command": "x"},
                tool_output=output, kind=ToolKind.SHELL, via_shell=True, command="x")
    assert not shell.tool_failed(call)


def test_a_command_that_printed_its_failure_and_ran_again_is_a_retry():
    # Cline logs no exit codes: the same failing test script run again, unchanged, is an
    # episode of retry waste, as it would be with a logged exit code.
    from skill_doctor import rubric, scoring
    missing = ("node:internal/modules/cjs/loader:1078\n  throw err;\n  ^\n\nError: Cannot find "
               "module 'ws'\nRequire stack:\n- /w/t.js\n\nNode.js v18.15.0")

    def run(i, output):
        return Turn(i, Role.TOOL, tool_name="execute_command", tool_input={"command": "node t.js"},
                    tool_output=output, kind=ToolKind.SHELL, via_shell=True, command="node t.js")
    turns = (Turn(1, Role.USER, "Test the server with t.js"), run(2, missing), run(3, missing),
             Turn(4, Role.ASSISTANT, "The ws module is missing; install it with npm install ws."))
    f = facts.compute(Transcript(source="x", harness="cline", turns=turns))
    assert set(f.failed) == {2, 3}
    scores = scoring.score(f, rubric.load())
    retry = next(r for s in scores.scales() for r in s.criteria if r.criterion.key == "retry_waste")
    assert retry.points == 1 and [e.turn for e in retry.measurement.evidence] == [2]
