"""The command line: the only place that touches argv, the environment, the clock, stdout,
stderr, files and exit codes. Everything else is pure and callable on its own.

Exit codes: 0 report written (including the contract's minimal reports); 2 usage or rubric
error; 3 the report could not be written (nothing is left behind); 4 an internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Sequence

from . import __version__
from .errors import SkillDoctorError, UsageError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_WRITE, EXIT_INTERNAL = 0, 1, 2, 3, 4


def say(text: str, *, err: bool = False, redact_secrets: bool = False) -> None:
    """Print one line without ever failing on it: text from a hostile transcript may hold lone
    surrogates or characters the terminal's encoding lacks (replaced), escape sequences (shown,
    not obeyed), and a hook may have closed the stream (ignored: the report is on disk)."""
    from .redact import redact, visible_controls

    stream = sys.stderr if err else sys.stdout
    if redact_secrets:
        text = redact(text)
    text = visible_controls(text)  # no terminal escape sequence or bidi override gets through
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        stream.write(text.encode(encoding, errors="replace").decode(encoding) + "\n")
        stream.flush()
    except (OSError, ValueError):  # BrokenPipeError, or a closed stream
        pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skill-doctor",
        description="Grade a saved coding-agent session: efficiency and code-quality scores "
                    "(0-10), findings that cite turns, and ranked suggestions.",
        epilog="Exit codes: 0 report written, 2 usage or rubric error, 3 write failure.")
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
        "sessions", help="list the sessions found in every harness store, newest first",
        description="List the sessions found in the Claude Code, Codex, Gemini, Pi, OpenCode "
                    "and Cline stores (CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME, "
                    "PI_CODING_AGENT_DIR and XDG_DATA_HOME are honoured), newest first, with "
                    "harness, start time, turns and path. Subagent transcripts are counted "
                    "with their parent session.")
    sessions.add_argument("-n", "--limit", type=int, default=20, metavar="N",
                          help="show at most N sessions (default 20; 0 for all)")
    sessions.add_argument("--project", action="store_true",
                          help="only sessions recorded in the current working directory")

    rubric = sub.add_parser("rubric", help="explain or validate the rubric")
    rubric_sub = rubric.add_subparsers(dest="rubric_command", metavar="ACTION")
    explain = rubric_sub.add_parser("explain", help="what each criterion measures, with its bands")
    explain.add_argument("criterion", nargs="?", help="one criterion id (default: all)")
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
    from .locate import locate
    from .render import render
    from .report import grade, no_history, to_json
    from .write import dump_json, resolve_output, write_report

    rubric = rubric_mod.load(args.rubric)
    generated_at, moment = generation_time()
    cwd = Path.cwd()
    out = args.output or f"skill-doctor-report-{time.strftime('%Y%m%d-%H%M%S', moment)}"
    target = resolve_output(out, cwd)
    if args.harness:
        from .decode import harness_names
        if args.harness not in harness_names():
            raise UsageError(f"unknown harness {args.harness!r}; known: {', '.join(harness_names())}")

    located = locate(args.path, cwd, os.environ, Path.home())
    redact_secrets = not args.no_redact
    if located.path is None:
        report = no_history(rubric, generated_at, located.reason,
                            redact_secrets=redact_secrets)
    else:
        transcript = decode_file(located.path, harness=args.harness)
        report = grade(transcript, rubric, generated_at, redact_secrets=redact_secrets)
    files = {"report.html": render(report), "report.json": dump_json(to_json(report))}
    write_report(target, files, force=args.force)

    shown = os.path.relpath(target / "report.html", cwd)
    say(f"Report written to {shown if shown.startswith('.') else './' + shown}")
    if report.status != "ok" and report.message:
        say(report.message, redact_secrets=redact_secrets)
    for scale in report.scores.scales():
        label = "Efficiency" if scale.name == "efficiency" else "Code quality"
        if scale.score is None:
            say(f"{label}: N/A" + (f" ({scale.reason.removeprefix('N/A: ')})" if scale.reason else ""))
        else:
            say(f"{label}: {scale.score}/10")
    for f in report.findings:
        turns = ", ".join(str(e.turn) for e in f.evidence)
        say(f"  {f.rule_id} {f.rule_name} {f.score}/{f.max}: {f.message}"
            + (f" (turns {turns})" if turns else ""))
    if report.findings:
        say(f"{len(report.findings)} finding(s); top suggestion: {report.suggestions[0].text}")
    return EXIT_OK


def cmd_sessions(args: argparse.Namespace) -> int:
    from . import stores

    if args.limit < 0:
        raise UsageError(f"--limit must be 0 or more, got {args.limit}")
    found = stores.discover(os.environ, Path.home())
    if args.project:
        cwd = Path.cwd()
        found = [s for s in found if stores.belongs_to(s, cwd)]
    if not found:
        print("No sessions found in the harness stores.")
        return EXIT_OK
    shown = found if args.limit == 0 else found[: args.limit]
    rows = [("HARNESS", "STARTED", "TURNS", "PATH")]
    for session in shown:
        detailed = stores.with_details(session)
        path = str(detailed.path)
        if detailed.subagents:
            path += f"  (+{len(detailed.subagents)} subagent file(s))"
        rows.append((detailed.harness, detailed.started_at or "-",
                     "-" if detailed.turns is None else str(detailed.turns), path))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])
    if len(found) > len(shown):
        print(f"... {len(found) - len(shown)} more (use --limit 0 to list all)")
    return EXIT_OK


def cmd_rubric(args: argparse.Namespace) -> int:
    from . import rubric as rubric_mod
    from .detectors import DETECTORS

    if args.rubric_command == "validate":
        rubric_mod.load(args.file)
        print(f"{args.file}: valid")
        return EXIT_OK
    if args.rubric_command != "explain":
        raise UsageError("usage: skill-doctor rubric {explain,validate} ...")
    rubric = rubric_mod.load(args.rubric)
    keys = [c.key for c in rubric.criteria]
    if args.criterion and args.criterion not in keys:
        raise UsageError(f"unknown criterion {args.criterion!r}; known: {', '.join(keys)}")
    for c in rubric.criteria:
        if args.criterion and c.key != args.criterion:
            continue
        detector = DETECTORS[c.detector]
        print(f"{c.rule_id} {c.key} ({c.name}) — {c.category}, {c.scale}, max {c.max}"
              + ("" if c.enabled else " [disabled]"))
        print(f"  detector: {c.detector}"
              + (f"  params: {', '.join(f'{k}={v}' for k, v in sorted({**{k: d for k, (_, d) in detector.params.items()}, **c.params}.items()))}"
                 if detector.params else ""))
        print("  bands:")
        for band in c.bands:
            print(f"    {band.describe():<16} -> {band.points} point(s)"
                  + (f"  ({band.label})" if band.label else ""))
        print("  suggestion: " + c.suggestion)
        if detector.causes:
            print("  causes: " + ", ".join(detector.causes))
        for cause, text in c.suggestions.items():
            print(f"  suggestion when {cause}: {text}")
        print()
        for line in detector.doc.splitlines():
            print("  " + line.strip() if line.strip() else "")
        print()
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
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
