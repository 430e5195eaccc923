"""The command line: the only place that touches argv, the environment, the clock, stdout,
stderr, files and exit codes. Everything else is pure and callable on its own.

Exit codes: 0 report written (including the contract's minimal reports); 1 `check` found a
session below the thresholds or a file it cannot parse; 2 usage or rubric error; 3 the report
could not be written (nothing is left behind); 4 an internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Sequence

from . import __version__
from .errors import SkillDoctorError, UsageError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_WRITE, EXIT_INTERNAL = 0, 1, 2, 3, 4


# Whether lines printed are redacted: on unless a command was given --no-redact.
_REDACT = [True]


def say(text: str, *, err: bool = False, redact_secrets: bool | None = None,
        command: bool = False, prepared: bool = False) -> None:
    """Print one line without ever failing on it. Every line skill-doctor prints goes through
    here and redact.terminal: secrets redacted (unless --no-redact), control characters shown
    and never obeyed, no second line and no CI workflow command forged from transcript text
    (`command` only for the annotations of `check --format github`). Lone surrogates or
    characters the terminal's encoding lacks are replaced, and a closed stream (a hook that
    stopped reading) is ignored: the report is on disk."""
    from .redact import terminal

    stream = sys.stderr if err else sys.stdout
    if not prepared:  # `prepared`: made safe by terminal() already, then coloured (check)
        text = terminal(text, _REDACT[0] if redact_secrets is None else redact_secrets,
                        command=command)
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        stream.write(text.encode(encoding, errors="replace").decode(encoding) + "\n")
        stream.flush()
    except (OSError, ValueError):  # BrokenPipeError, or a closed stream
        pass


class _Parser(argparse.ArgumentParser):
    """argparse, with its one-line errors printed like every other line (an argument may be a
    hostile file name)."""

    def error(self, message: str):  # type: ignore[override]
        say(f"{self.prog}: error: {message}", err=True)
        raise SystemExit(EXIT_USAGE)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="skill-doctor",
        description="Grade a saved coding-agent session: efficiency and code-quality scores "
                    "(0-10), findings that cite turns, and ranked suggestions.",
        epilog="Exit codes: 0 report written (check: every session passes), 1 check: a session "
               "fails or cannot be parsed, 2 usage or rubric error, 3 write failure.")
    parser.add_argument("--version", action="version", version=f"skill-doctor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    report = sub.add_parser(
        "report", help="grade one session and write report.html and report.json",
        description="Grade one session and write report.html and report.json into a new "
                    "directory under the current working directory.")
    report.add_argument("path", nargs="?", metavar="PATH",
                        help="a transcript file, or a folder (its newest transcript is graded); "
                             "default: the newest session of this project in the harness stores")
    report.add_argument("-o", "--output", metavar="DIR",
                        help="report directory, inside the working directory "
                             "(default: ./skill-doctor-report-<YYYYmmdd-HHMMSS>)")
    report.add_argument("--rubric", metavar="FILE",
                        help="a rubric file laid over the default (it overrides only the keys it names)")
    report.add_argument("--harness", metavar="NAME",
                        help="force a decoder instead of sniffing the format")
    report.add_argument("--force", action="store_true",
                        help="replace DIR if it is an earlier skill-doctor report")
    report.add_argument("--no-redact", action="store_true",
                        help="show transcript text without redacting secrets")

    sessions = sub.add_parser(
        "sessions", help="list the sessions found in every harness store, newest start first",
        description="List the sessions found in the Claude Code, Codex, Gemini, Pi, OpenCode "
                    "and Cline stores (CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME, "
                    "PI_CODING_AGENT_DIR and XDG_DATA_HOME are honoured), newest start first "
                    "(file time when the start is not recorded), with harness, start time, "
                    "turns and path. Subagent transcripts are counted "
                    "with their parent session.")
    sessions.add_argument("-n", "--limit", type=int, default=20, metavar="N",
                          help="show at most N sessions (default 20; 0 for all)")
    sessions.add_argument("--project", action="store_true",
                          help="only sessions recorded in the current working directory")
    check = sub.add_parser(
        "check", help="grade sessions against the thresholds; lines for editors and CI",
        description="Grade each session and print one line per finding "
                    "(path:line:col: CODE [severity] turn N: message (rule)) and a summary per "
                    "session. Nothing is written unless --html is given.",
        epilog="Exit codes: 0 every session meets the thresholds, 1 one does not or a file "
               "cannot be parsed, 2 usage or rubric error.")
    check.add_argument("paths", nargs="+", metavar="PATH",
                       help="transcript files, folders (every transcript below) or globs")
    check.add_argument("--format", choices=("text", "json", "github"), default="text",
                       help="text (default), json, or github (workflow annotations)")
    check.add_argument("--min-efficiency", type=float, metavar="N",
                       help="minimum efficiency score (default: the rubric's thresholds)")
    check.add_argument("--min-code-quality", type=float, metavar="N",
                       help="minimum code-quality score; N/A always passes "
                            "(default: the rubric's thresholds)")
    check.add_argument("--rubric", metavar="FILE",
                       help="a rubric file laid over the default")
    check.add_argument("--baseline", metavar="SUMMARY",
                       help="a summary.jsonl written by `skill-doctor batch`: fail a session "
                            "that scores more than --tolerance below the baseline's session of "
                            "the same task (same file name), or, with no task in common, when "
                            "the mean score falls that far below the baseline's mean")
    check.add_argument("--tolerance", type=float, metavar="N",
                       help="points a score may fall below the baseline "
                            "(default 1)")
    check.add_argument("--exit-zero", action="store_true",
                       help="exit 0 even when a session fails (errors of usage still exit 2)")
    check.add_argument("-q", "--quiet", action="store_true",
                       help="print only the sessions that fail")
    check.add_argument("--html", metavar="DIR",
                       help="also write every session's report and an index into DIR "
                            "(as `batch` does)")
    check.add_argument("--no-redact", action="store_true",
                       help="show transcript text without redacting secrets")

    batch = sub.add_parser(
        "batch", help="grade many sessions into one index page and summary.jsonl",
        description="Grade every session found and write DIR/index.html, "
                    "DIR/sessions/<id>/ reports, DIR/summary.jsonl and DIR/aggregate.json.")
    batch.add_argument("paths", nargs="*", metavar="PATH",
                       help="transcript files, folders (every transcript below) or globs "
                            "(default: every session in the harness stores)")
    batch.add_argument("-o", "--output", metavar="DIR",
                       help="output directory, inside the working directory "
                            "(default: ./skill-doctor-batch-<YYYYmmdd-HHMMSS>)")
    where = batch.add_mutually_exclusive_group()
    where.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                       help="grade over N processes (0: one per CPU; default 1)")
    where.add_argument("--dask", metavar="ADDRESS",
                       help="grade on the Dask cluster whose scheduler is at ADDRESS "
                            "(e.g. tcp://10.0.0.5:8786; needs the dask extra); the sessions "
                            "and DIR must be on a path the workers share")
    batch.add_argument("--since", metavar="DATE",
                       help="only sessions started on or after DATE (YYYY-MM-DD or ISO time; "
                            "the file's modification time when the start is not recorded)")
    batch.add_argument("--rubric", metavar="FILE",
                       help="a rubric file laid over the default")
    batch.add_argument("--force", action="store_true",
                       help="replace DIR if it is an earlier skill-doctor batch")
    batch.add_argument("--no-redact", action="store_true",
                       help="show transcript text without redacting secrets")

    compare = sub.add_parser(
        "compare", help="two sessions side by side: scores, findings, size, divergence",
        description="Grade two sessions (two runs of one task, before and after a setup "
                    "change) with the same rubric and show what changed from A to B: both "
                    "scores and every criterion with its delta, findings that appear, "
                    "disappear or change, turns, tool calls, tokens, cost and duration, and "
                    "the first turn where the runs diverge. Writes compare.html and "
                    "compare.json into DIR and prints the comparison.")
    compare.add_argument("a", metavar="A", help="the first session (a file, or a folder: its newest)")
    compare.add_argument("b", metavar="B", help="the second session")
    compare.add_argument("-o", "--output", metavar="DIR",
                         help="output directory, inside the working directory "
                              "(default: ./skill-doctor-compare-<YYYYmmdd-HHMMSS>)")
    compare.add_argument("--rubric", metavar="FILE", help="a rubric file laid over the default")
    compare.add_argument("--force", action="store_true",
                         help="replace DIR if it is an earlier skill-doctor comparison")
    compare.add_argument("--no-redact", action="store_true",
                         help="show transcript text without redacting secrets")

    skill = sub.add_parser("skill", help="install the agent skill that runs skill-doctor")
    skill_sub = skill.add_subparsers(dest="skill_command", metavar="ACTION")
    install = skill_sub.add_parser(
        "install", help="copy the bundled skill where the agent looks for skills",
        description="Copy the skill-doctor agent skill (SKILL.md) where the agent reads "
                    "skills: Claude Code ./.claude/skills or ~/.claude/skills "
                    "($CLAUDE_CONFIG_DIR/skills), Codex ./.agents/skills or ~/.agents/skills. "
                    "A different file already there is not replaced without --force.")
    scope = install.add_mutually_exclusive_group()
    scope.add_argument("--project", dest="user", action="store_false",
                       help="for this project, under the working directory (the default)")
    scope.add_argument("--user", dest="user", action="store_true",
                       help="for every project of this user, under the home folder")
    install.set_defaults(user=False)
    install.add_argument("--agent", choices=("claude", "codex"), default="claude",
                         help="the agent to install for (default claude)")
    install.add_argument("--force", action="store_true",
                         help="replace a SKILL.md that differs from the bundled one")

    calibrate = sub.add_parser(
        "calibrate", help="how far the grade is from careful readers or a benchmark's verifier",
        description="Grade every session that READINGS (a folder of hand readings: *.json, or "
                    "one folder of them per reader) or LABELS.tsv (benchmark runs with their "
                    "verifier's pass/fail) names, and print how far the grade is from them: per "
                    "criterion, exact and within-one agreement and bias against each reader, the "
                    "readers' agreement with each other, agreement where the readers agree, "
                    "a confusion table, and the AUC of task completion against the verifier per "
                    "source. Measure a rubric edit with --rubric.",
        epilog="Exit codes: 0 figures printed, 2 a readings, labels, split or rubric file is "
               "invalid (the message names the file, line and key), or a session is missing.")
    calibrate.add_argument("path", metavar="READINGS|LABELS.tsv",
                           help="a folder of readings, or a labels file (.tsv)")
    calibrate.add_argument("--sessions", metavar="ROOT",
                           help="the folder the readings' and labels' session paths are "
                                "relative to (default: the readings folder's parent, or the "
                                "labels file's folder)")
    calibrate.add_argument("--rubric", metavar="FILE", help="a rubric file laid over the default")
    calibrate.add_argument("--split", metavar="FILE",
                           help="a TSV of session and half (tune or check): figures per half")
    calibrate.add_argument("--half", choices=("tune", "check"),
                           help="with --split: only this half's sessions")
    calibrate.add_argument("--labels", metavar="FILE",
                           help="with readings: a labels file whose runs' verdicts give the "
                                "AUC of ours, the readers' task completion and their p_pass")
    calibrate.add_argument("--format", choices=("text", "json"), default="text",
                           help="text (default) or json")
    calibrate.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                           help="grade over N processes (0: one per CPU; default 1)")
    calibrate.add_argument("-v", "--verbose", action="store_true",
                           help="also list, session by session, where the grade differs from "
                                "each reader")

    rubric = sub.add_parser("rubric", help="explain or validate the rubric")
    rubric_sub = rubric.add_subparsers(dest="rubric_command", metavar="ACTION")
    explain = rubric_sub.add_parser("explain", help="what each criterion measures, with its bands")
    explain.add_argument("criterion", nargs="?",
                         help="one criterion: its id (retry_waste), rule id (SD103) or rule "
                              "name (repeated-failing-call); default: all")
    explain.add_argument("--rubric", metavar="FILE")
    validate = rubric_sub.add_parser("validate", help="check a rubric file and exit 0 if valid")
    validate.add_argument("file", metavar="FILE")
    return parser


def generation_time() -> tuple[str, time.struct_time]:
    """Now, or SOURCE_DATE_EPOCH when set (reproducible builds convention)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    seconds = time.time()
    if epoch:
        try:
            seconds = int(epoch)
        except ValueError:
            raise UsageError(f"SOURCE_DATE_EPOCH must be a whole number of seconds, got {epoch!r}")
    moment = time.gmtime(seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", moment), moment


def cmd_report(args: argparse.Namespace) -> int:
    from . import rubric as rubric_mod
    from .decode import decode_file
    from .decode.sessions import last as last_session
    from .locate import locate
    from .render import render_pieces
    from .report import grade, no_history, report_json
    from .write import check_target, write_report

    rubric = rubric_mod.load(args.rubric)
    generated_at, moment = generation_time()
    cwd = Path.cwd()
    target = _output_dir(args.output, "skill-doctor-report", moment, cwd)
    check_target(target, force=args.force)
    if args.harness:
        from .decode import harness_names
        if args.harness not in harness_names():
            raise UsageError(f"unknown harness {args.harness!r}; known: {', '.join(harness_names())}")

    located = locate(args.path, cwd, os.environ, Path.home())
    redact_secrets = not args.no_redact
    if args.path is not None and located.path is None:
        # The contract's minimal report is still written, but a typo must not pass unseen.
        from .report import NO_HISTORY
        say(f"skill-doctor: warning: {located.reason or args.path + ' has no transcript'}; "
            f"writing the \"{NO_HISTORY}\" report", err=True, redact_secrets=redact_secrets)
    elif args.path is None and located.path is not None:
        say(f"Grading {_shown_place(located.path, cwd)} (the newest "
            f"{located.harness or 'harness'} session "
            f"{'of this project' if located.own_project else 'in the stores; none is of this project'})",
            err=True, redact_secrets=redact_secrets)
    if located.path is None:
        report = no_history(rubric, generated_at, located.reason,
                            redact_secrets=redact_secrets)
    else:
        # A file holding several sessions (an Aider history) is graded by its last one; the
        # report says how many it holds.
        transcript = last_session(decode_file(located.path, harness=args.harness))
        report = grade(transcript, rubric, generated_at, redact_secrets=redact_secrets)
    files = {"report.html": render_pieces(report), "report.json": report_json(report)}
    write_report(target, files, force=args.force)

    say(f"Report written to {_shown(target / 'report.html', cwd)}")
    if report.status != "ok" and report.message:
        say(report.message, redact_secrets=redact_secrets)
    for scale in report.scores.scales():
        label = "Efficiency" if scale.name == "efficiency" else "Code quality"
        if scale.score is None:
            say(f"{label}: N/A" + (f" ({scale.reason.removeprefix('N/A: ')})" if scale.reason else ""))
        else:
            say(f"{label}: {scale.score}/10")
    if report.usage is not None:
        from .tokens import cost_line, describe
        say(f"Tokens: {describe(report.usage)}; {cost_line(report.usage)}",
            redact_secrets=redact_secrets)
    for f in report.findings:
        turns = ", ".join(str(e.turn) for e in f.evidence)
        say(f"  {f.rule_id} {f.rule_name} {f.score}/{f.max}: {f.message}"
            + (f" (turns {turns})" if turns else ""))
    if report.findings:
        say(f"{len(report.findings)} finding(s); top suggestion: {report.suggestions[0].text}")
    return EXIT_OK


def cmd_sessions(args: argparse.Namespace) -> int:
    from . import stores
    from .redact import terminal

    if args.limit < 0:
        raise UsageError(f"--limit must be 0 or more, got {args.limit}")
    found = stores.discover(os.environ, Path.home())
    if args.project:
        cwd = Path.cwd()
        found = [s for s in found if stores.belongs_to(s, cwd)]
    if not found:
        say("No sessions found in the harness stores.")
        return EXIT_OK
    # Newest start first (the first timestamp in the file's head), then again among the rows
    # shown once decoding has given each its exact start.
    found = stores.by_start(found)
    shown = found if args.limit == 0 else found[: args.limit]
    rows = [("HARNESS", "STARTED", "TURNS", "PATH")]
    for detailed in stores.by_start(stores.with_details(s) for s in shown):
        path = str(detailed.path)
        if detailed.subagents:
            path += f"  (+{len(detailed.subagents)} subagent file(s))"
        rows.append(tuple(terminal(cell) for cell in (
            detailed.harness, detailed.started_at or "-",
            "-" if detailed.turns is None else str(detailed.turns), path)))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        say("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])
    if len(found) > len(shown):
        say(f"... {len(found) - len(shown)} more (use --limit 0 to list all)")
    return EXIT_OK


def _colour(stream) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    return not os.environ.get("NO_COLOR") and hasattr(stream, "isatty") and stream.isatty()


def cmd_check(args: argparse.Namespace) -> int:
    from . import check as check_mod, rubric as rubric_mod
    from .decode import decode_file
    from .decode.sessions import split as split_sessions
    from .report import grade

    rubric = rubric_mod.load(args.rubric)
    thresholds = check_mod.thresholds_for(rubric, {"efficiency": args.min_efficiency,
                                                   "code_quality": args.min_code_quality})
    generated_at, moment = generation_time()
    cwd = Path.cwd()
    notes: list[str] = []
    paths = check_mod.expand(args.paths, cwd, notes)
    for note in notes:
        say(f"skill-doctor: {note}", err=True)
    if not paths:
        raise UsageError("no transcript files found under " + ", ".join(args.paths))
    if args.html:
        target = _output_dir(args.html, "", moment, cwd)
    tolerance = check_mod.DEFAULT_TOLERANCE if args.tolerance is None else args.tolerance
    if not 0 <= tolerance <= 10:
        raise UsageError(f"--tolerance must be from 0 to 10, got {tolerance:g}")
    if args.tolerance is not None and not args.baseline:
        raise UsageError("--tolerance needs --baseline")
    baseline = None
    if args.baseline:
        from .safe_io import read_named_text

        try:
            # A summary.jsonl of a large batch: bounded all the same (a FIFO or /dev/zero
            # given as the baseline must not hang or fill memory).
            text = read_named_text(cwd / args.baseline, 1024 * 1024 * 1024)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--baseline {args.baseline}: cannot read: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None
        baseline = check_mod.parse_baseline(text, args.baseline)
    checks = []
    redact_secrets = not args.no_redact
    for path in paths:
        for transcript in split_sessions(decode_file(path)):  # each session of the file
            report = grade(transcript, rubric, generated_at,
                           redact_secrets=redact_secrets, overview=False)
            checks.append(check_mod.judge(check_mod.display(path, redact_secrets), report,
                                          thresholds))
    verdict = None
    if baseline is not None:
        checks, verdict = check_mod.against_baseline(checks, baseline, tolerance)
    # The lines are built from redacted fields (a whole-line pass could run a secret's pattern
    # over the `path:line:col:` prefix); say() then makes each line safe to print.
    if args.format == "json":
        for line in check_mod.format_json(checks, thresholds, verdict, redact_secrets).splitlines():
            say(line, redact_secrets=False)
    elif args.format == "github":
        for line in check_mod.format_github(checks, quiet=args.quiet, baseline=verdict):
            say(line, redact_secrets=False, command=True)
    else:
        for line in check_mod.format_text(checks, quiet=args.quiet,
                                          color=_colour(sys.stdout), baseline=verdict):
            say(line, prepared=True)
    if args.html:
        from . import batch as batch_mod
        result = batch_mod.run([str(p) for p in paths], target, rubric, generated_at,
                               redact_secrets=not args.no_redact, thresholds=thresholds)
        say(f"Reports written to {_shown(result.target / 'index.html', cwd)}", err=True)
    failed = any(not c.passed for c in checks) or (verdict is not None and not verdict.passed)
    return EXIT_FINDINGS if failed and not args.exit_zero else EXIT_OK


def _output_dir(given: str | None, prefix: str, moment: time.struct_time, cwd: Path) -> Path:
    from .write import resolve_output

    out = given or f"{prefix}-{time.strftime('%Y%m%d-%H%M%S', moment)}"
    return resolve_output(out, cwd)


def _shown_place(path: Path, cwd: Path) -> str:
    """A path for a message: relative inside the working directory, ~ for the home folder."""
    from .report import display_path

    try:
        return _shown(path, cwd) if path.resolve().is_relative_to(cwd.resolve()) else \
            display_path(str(path))
    except OSError:
        return display_path(str(path))


def _shown(path: Path, cwd: Path) -> str:
    shown = os.path.relpath(path, cwd)
    return shown if shown.startswith(".") else "./" + shown


def _progress_bar(stream):
    """A one-line progress bar redrawn in place; None when `stream` is not a terminal."""
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None

    def draw(done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} sessions")
        if done == total:
            stream.write("\n")
        stream.flush()
    return draw


def _cluster(address: str | None):
    """The Dask cluster at `address`, connected for the `with` block; nothing without one."""
    if address is None:
        return contextlib.nullcontext()
    from . import cluster

    return cluster.connect(address)


def cmd_batch(args: argparse.Namespace) -> int:
    from . import batch as batch_mod, check as check_mod, rubric as rubric_mod

    rubric = rubric_mod.load(args.rubric)
    generated_at, moment = generation_time()
    cwd = Path.cwd()
    target = _output_dir(args.output, "skill-doctor-batch", moment, cwd)
    since = batch_mod.parse_since(args.since) if args.since else None
    if args.jobs < 0:
        raise UsageError(f"-j must be 0 (one per CPU) or more, got {args.jobs}")
    jobs = args.jobs or os.cpu_count() or 1
    if args.paths:
        notes: list[str] = []
        paths = [str(p) for p in check_mod.expand(args.paths, cwd, notes)]
        for note in notes:
            say(f"skill-doctor: {note}", err=True)
    else:
        paths = [str(p) for p in batch_mod.default_sessions(os.environ, Path.home())]
    with _cluster(args.dask) as remote:
        result = batch_mod.run(paths, target, rubric, generated_at, since=since,
                               redact_secrets=not args.no_redact, jobs=jobs, force=args.force,
                               progress=_progress_bar(sys.stderr), remote=remote)
    statuses = result.aggregate["statuses"]
    say(f"Batch report written to {_shown(result.target / 'index.html', cwd)}")
    n = len(result.rows)
    detail = ", ".join(f"{count} {status.replace('_', ' ')}" for status, count in statuses.items())
    say(f"{n} session{'s' if n != 1 else ''}" + (f" ({detail})" if detail else "")
        + (f"; {result.skipped} older than {args.since} left out" if result.skipped else ""))
    for name in ("efficiency", "code_quality"):
        s = result.aggregate["scales"][name]
        label = "Efficiency" if name == "efficiency" else "Code quality"
        if s["n"]:
            say(f"{label}: mean {s['mean']}, median {s['median']} (n = {s['n']})")
        else:
            say(f"{label}: no session scored")
    say(batch_mod.usage_line(result.aggregate["usage"]))
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from . import compare as compare_mod, rubric as rubric_mod
    from .decode import decode_file
    from .locate import locate
    from .report import NO_HISTORY, display_path, grade, no_history, to_json
    from .write import check_target, dump_json, staged, write_file

    rubric = rubric_mod.load(args.rubric)
    generated_at, moment = generation_time()
    cwd = Path.cwd()
    target = _output_dir(args.output, "skill-doctor-compare", moment, cwd)
    check_target(target, force=args.force, marker="compare.json")
    redact_secrets = not args.no_redact
    sides = []
    for label, path in (("A", args.a), ("B", args.b)):
        located = locate(path, cwd, os.environ, Path.home())
        if located.path is None:
            say(f"skill-doctor: warning: {label}: {located.reason}; compared as "
                f"\"{NO_HISTORY}\"", err=True, redact_secrets=redact_secrets)
            report = no_history(rubric, generated_at, located.reason,
                                redact_secrets=redact_secrets)
            transcript = None
        else:
            transcript = decode_file(located.path)
            report = grade(transcript, rubric, generated_at, redact_secrets=redact_secrets)
        sides.append(compare_mod.Side(label, display_path(path, redact_secrets),
                                      to_json(report), transcript))
    doc = compare_mod.compare(*sides, generated_at, redact_secrets=redact_secrets,
                              names={c.key: c.category for c in rubric.criteria})
    with staged(target, force=args.force, marker="compare.json") as tmp:
        write_file(tmp / "compare.json", dump_json(doc))
        write_file(tmp / "compare.html", compare_mod.render(doc))
    for line in compare_mod.text_lines(doc):
        say(line)
    say(f"Comparison written to {_shown(target / 'compare.html', cwd)}")
    return EXIT_OK


def cmd_skill(args: argparse.Namespace) -> int:
    from . import resources, skill_install

    if args.skill_command != "install":
        raise UsageError("usage: skill-doctor skill install [--user|--project] "
                         "[--agent claude|codex] [--force]")
    cwd = Path.cwd()
    dest = skill_install.skills_dir(args.agent, args.user, cwd, os.environ, Path.home())
    done = skill_install.install(resources.skill_path(), dest, force=args.force,
                                 base=None if args.user else cwd)
    shown = _shown_place(done.target, cwd)
    if done.written:
        say(f"Installed the skill-doctor skill for {args.agent} in {shown}"
            f" ({', '.join(done.written)})")
    else:
        say(f"The skill-doctor skill is already installed in {shown} (unchanged)")
    return EXIT_OK


def _say_json(data: object) -> None:
    import json

    for line in json.dumps(data, indent=2, sort_keys=True).splitlines():
        say(line, redact_secrets=False)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from . import calibrate as cal, rubric as rubric_mod

    rubric = rubric_mod.load(args.rubric)
    generated_at, _ = generation_time()
    cwd = Path.cwd()
    given = Path(args.path)  # relative to the working folder, and shown as the user gave it
    if args.half and not args.split:
        raise UsageError("--half needs --split")
    labelled = given.suffix.lower() == ".tsv" or given.is_file()
    if labelled and (args.split or args.labels):
        raise UsageError("--split and --labels go with a readings folder, not a labels file")
    root = cwd / args.sessions if args.sessions else (given.parent if labelled
                                                      else given.resolve().parent)

    def read(name: str) -> str:
        return cal.read_text(Path(name), name)

    def located(sessions: list[str]) -> list[str]:
        paths = []
        for session in sessions:
            path = root / session
            if not path.is_file():
                raise UsageError(f"{session}: no such session under {root} (give --sessions ROOT)")
            paths.append(str(path))
        return paths

    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    if labelled:
        labels = cal.parse_labels(read(args.path), args.path)
        files = sorted({label.file for label in labels})
        grades = dict(zip(files, cal.grade_sessions(located(files), rubric, generated_at, jobs)))
        figures = cal.compare_labels(labels, grades)
        if args.format == "json":
            _say_json({"version": 1, "labels": figures})
        else:
            for line in cal.format_labels(figures):
                say(line)
        return EXIT_OK

    readers = cal.load_readings(given)
    halves = cal.parse_split(read(args.split), args.split) if args.split else None
    by_name = {name: reading for r in readers.values() for name, reading in r.items()}
    if halves is not None:
        unsplit = sorted(r.session for r in by_name.values() if r.session not in halves)
        if unsplit:
            raise UsageError(f"{args.split}: does not place {unsplit[0]}"
                             + (f" (and {len(unsplit) - 1} more)" if len(unsplit) > 1 else "")
                             + " in a half")
    verdicts = sources = None
    if args.labels:
        labels = cal.parse_labels(read(args.labels), args.labels)
        verdicts = {label.file: label.resolved for label in labels}
        sources = {label.file: label.source for label in labels}
    groups = {"all": sorted(by_name)}
    if halves is not None:
        groups = {half: sorted(n for n, r in by_name.items() if halves[r.session] == half)
                  for half in cal.HALVES if args.half in (None, half)}
    wanted = sorted({by_name[n].session for names in groups.values() for n in names})
    grades = dict(zip(wanted, cal.grade_sessions(located(wanted), rubric, generated_at, jobs)))
    results = {half: cal.compare_readings(readers, grades, names, verdicts, sources)
               for half, names in groups.items()}
    if args.format == "json":
        _say_json({"version": 1, "rubric": args.rubric or "default",
                   **({"halves": results} if halves is not None else {"readings": results["all"]})})
        return EXIT_OK
    for n, (half, figures) in enumerate(results.items()):
        if n:
            say("")
        title = "readings" if halves is None else f"{half} half"
        for line in cal.format_readings(figures, title, args.verbose):
            say(line)
    return EXIT_OK


def cmd_rubric(args: argparse.Namespace) -> int:
    from . import rubric as rubric_mod
    from .detectors import DETECTORS

    if args.rubric_command == "validate":
        rubric_mod.load(args.file)
        say(f"{args.file}: valid")
        return EXIT_OK
    if args.rubric_command != "explain":
        raise UsageError("usage: skill-doctor rubric {explain,validate} ...")
    rubric = rubric_mod.load(args.rubric)
    wanted = None
    if args.criterion:
        # Findings print the rule id (SD103) and name (repeated-failing-call): both name the
        # criterion as well as its key does.
        asked = args.criterion.strip()
        wanted = next((c.key for c in rubric.criteria
                       if asked in (c.key, c.name) or asked.upper() == c.rule_id.upper()), None)
        if wanted is None:
            known = ", ".join(f"{c.rule_id} {c.key} ({c.name})" for c in rubric.criteria)
            raise UsageError(f"unknown criterion {args.criterion!r}; known: {known}")
    for c in rubric.criteria:
        if wanted and c.key != wanted:
            continue
        detector = DETECTORS[c.detector]
        say(f"{c.rule_id} {c.key} ({c.name}) — {c.category}, {c.scale}, max {c.max}"
              + ("" if c.enabled else " [disabled]"))
        say(f"  detector: {c.detector}"
              + (f"  params: {', '.join(f'{k}={v}' for k, v in sorted({**{k: d for k, (_, d) in detector.params.items()}, **c.params}.items()))}"
                 if detector.params else ""))
        say("  bands:")
        for band in c.bands:
            say(f"    {band.describe():<16} -> {band.points} point(s)"
                  + (f"  ({band.label})" if band.label else ""))
        say("  suggestion: " + c.suggestion)
        if detector.causes:
            say("  causes: " + ", ".join(detector.causes))
        for cause, text in c.suggestions.items():
            say(f"  suggestion when {cause}: {text}")
        say("")
        for line in detector.doc.splitlines():
            say("  " + line.strip() if line.strip() else "")
        say("")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _REDACT[0] = not getattr(args, "no_redact", False)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.command == "report":
            return cmd_report(args)
        if args.command == "rubric":
            return cmd_rubric(args)
        if args.command == "sessions":
            return cmd_sessions(args)
        if args.command == "check":
            return cmd_check(args)
        if args.command == "batch":
            return cmd_batch(args)
        if args.command == "compare":
            return cmd_compare(args)
        if args.command == "skill":
            return cmd_skill(args)
        if args.command == "calibrate":
            return cmd_calibrate(args)
        raise UsageError(f"unknown command {args.command}")
    except SkillDoctorError as exc:
        say(f"skill-doctor: error: {_one_line(exc)}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        say("skill-doctor: interrupted", err=True)
        return 130
    except Exception as exc:  # never a traceback for the user; one line and a distinct code
        if os.environ.get("SKILL_DOCTOR_DEBUG"):
            raise
        # The message may quote transcript text: redacted, whatever --no-redact says.
        say(f"skill-doctor: internal error: {type(exc).__name__}: {_one_line(exc)[:300]} "
            f"(set SKILL_DOCTOR_DEBUG=1 for details)", err=True, redact_secrets=True)
        return EXIT_INTERNAL


def _one_line(exc: BaseException) -> str:
    """An error message on one line, however many lines a path or OS message holds."""
    return " ".join(str(exc).split())
