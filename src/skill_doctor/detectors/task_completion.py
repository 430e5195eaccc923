"""Task completion (0-3): did the agent accomplish what the user asked?"""

from __future__ import annotations

import bisect
import re
from functools import cached_property
from typing import Any, Mapping

from ..patterns import compile_later
from ..facts import Check, Facts
from ..facts.changes import is_doc_file, relative_path
from ..facts.requests import CHANGE, OPERATION, OPERATION_WORDS, QUESTION, Request, offers_more_work
from ..shell import changes_system, changing_segments, classify_check, command_segments, detaches, \
    inline_program, launches_in_background, probes_running, program_name, shows_pane
from ..model import Role, ToolKind
from ..text import CaselessPattern, harness_cut, quote, sentences, word_count
from ..tools import _SHELL_LISTERS, _SHELL_READERS, _SHELL_SEARCHERS, looked_at
from ._base import Evidence, Measurement, detector
from .common import _SCRATCH, PROJECT_CHECKS, SUBMITS, runs_one_of


_CLAIMS_SUCCESS = compile_later(
    r"\b(all (\d+ )?(tests|checks) (now )?pass(ed|ing)?|tests? (now )?pass(es|ed|ing)?|(is|are) (now )?"
    r"(fixed|working|passing|green)|successfully|works now|now works|build (now )?succeeds"
    r"|fixed (it|the|both|all)|everything (works|passes)|done[.!])", re.I)
_ADMITS_FAILURE = compile_later(r"\b(still (fail|broken|not)|fails?\b|failing|not (yet )?(pass|work)"
                             r"|couldn'?t|could not|unable|error remains|remaining (failure|error))",
                             re.I)
# The harness cut a tool output the agent then relied on.
# An answer that hands the question back ("would you like me to ...?", "do you have X?").
_ENDS_ASKING = compile_later(r"\?\s*(?:\W{0,4})\s*$")
# Besides more work offered (facts.requests.offers_more_work), the floor handed back hands nothing
# back: "What do you need?", "What would you like me to do?", "Let me know ...".
_FLOOR_HANDED_BACK = compile_later(r"^\W*(what (?:else )?(?:do you need|would you like|can i (?:help|do)"
                                r"|should i do)|let me know|if you(?:'d| would)? like|happy to"
                                r"|i can also)\b", re.I)
# A line of a closing list ("- Add icons?", "2. Rename it?") or a closing alternative ("Or
# keep both?"): what it asks is said by the line that leads into it.
_LIST_ITEM = compile_later(r"^\s*(?:[-*\u2022]|\d+[.)]|or\b)\s*", re.I)
# A report that says, in the agent's own words, that what was asked was not (all) done: it
# could not do it, it is impossible, the results are stand-ins, part remains unfinished.
# "Couldn't find any other uses" reports a search's empty result, not a concession.
_CONCEDES = CaselessPattern(
    r"\b(?:i|we)(?: was| were| am| are)? (?:unable to|not able to|wasn'?t able to|weren'?t able to"
    r"|could ?n[o']t|can(?:no|')t|can not) (?!find (?:any )?(?:other|more|further|additional)\b)"
    # "... but was unable to find any"
    r"|\b(?:but|and|which) (?:was|were) (?:unable to|not able to)\b"
    r"|\bfalls? short of\b|\b(?:is|are) (?:still )?not enforced\b"
    r"|\b(?:below|short of|under) (?:the |your )?(?:[\d.,]+ ?%? )?(?:target|goal)\b"
    r"|\b(?:since|as|because) no \w+(?: \w+)? (?:were|was|could be) found\b"
    r"|\b(?:issue|problem|bug|error) (?:is|are) still present\b"
    # A result off what was expected, explained away: "may differ slightly", "shifted from
    # the expected position ... could be due to strain".
    r"|\b(?:may|might|could) differ\b|\bdiffers? slightly\b|\bslightly (?:shifted|off)\b"
    r"|\bshifted from (?:the )?expected\b|\bdoes(?:n't| not) affect (?:the )?functionality\b"
    # An offer to go on trying what was asked: the work stopped before it was done.
    r"|\b(?:would you like|do you want|shall i|should i)\b(?: me)?(?: to)?"
    r" (?:try|proceed|attempt)\b"
    # What was needed was not there, so something else was done: "Since the API wasn't
    # accessible, I created a CSV file instead"; a fallback, a simplified version.
    r"|\b(?:is|was|are|were)(?: not|n't) (?:available|accessible|reachable)"
    r"(?: (?:in|from|here|at|on)\b|,)"
    r"|\b(?:is|was|are|were) (?:also |still )?(?:inaccessible|unreachable)\b"
    r"|\b(?:simplified|minimal) (?:implementation|approach|version|parser)\b"
    r"|\bfor production use,? you'?d need\b"
    r"|\binferred (?:using|from|by) heuristics\b|\bbest attempt\b"
    r"|\b(?:it'?s|it is|is|was|make it|makes it|be) (?:practically |technically |fundamentally "
    r"|simply )?(?:impossible|not possible|not feasible) to\b"
    r"|\b(?:rather than|instead of) (?:the )?(?:actual|real) (?:\w+ )?(?:results|values|data"
    r"|metrics|numbers|output|model)\b"
    r"|\bi may not have\b"
    r"|\b(?:is|are|was|were) (?:still )?not (?:yet )?(?:implemented|completed|finished|done"
    r"|resolved)\b"
    r"|\bremains? (?:unresolved|unfinished|incomplete|unsolved)\b"
    r"|\bpartially (?:implemented|complete|completed|working|solved|done)\b"
    # A stand-in delivered for the thing asked for: "created a sample video for demonstration
    # purposes", "created mock models to demonstrate the correct approach".
    r"|\b(?:sample|dummy|placeholder|mock|synthetic|fake|simulated|stand-in)\b[^.]{0,60}"
    r"\b(?:for demonstration|to demonstrate|instead\b|in place of)")
# A fallback concedes only where the sentence says what was missing ("falling back to direct
# nginx start where systemctl is unavailable"); "loads .env and falls back to the environment
# variable" tells how the code behaves.
_FALLS_BACK = CaselessPattern(r"\bfall(?:s|ing)? ?back to\b|\bfell back to\b|\bfallback to\b",
                              required=("fall",))
_MISSING = CaselessPattern(
    r"\b(?:unavailable|inaccessible|unreachable|missing|not (?:available|accessible|installed"
    r"|found|reachable|supported)|(?:is|was|are|were)n't (?:available|accessible|installed"
    r"|reachable)|failed|could ?n[o']t|can(?:no|')t|unable|blocked|restricted)\b")
# ... unless the sentence tells of a problem met on the way and then overcome.
_OVERCOME = compile_later(r"\b(?:initially|at first|originally|previously|earlier|until"
                       r"|before (?:the|my|this) (?:fix|change)|but (?:then|after|now)"
                       r"|now (?:works|passes))\b", re.I)
# A concession that the result measured misses a target the task set ("59.7%, slightly below
# the 62% target", "falls short of the goal"): the main request is contradicted by the
# agent's own measure, not done with a gap.
_MISSES_TARGET = CaselessPattern(
    r"\bfalls? short of\b|\bfell short of\b"
    r"|\b(?:below|short of|under) (?:the |your |a )?(?:required |requested )?(?:[\d.,]+ ?%? )?"
    r"(?:target|goal|threshold|requirement)\b"
    r"|\b(?:does|did|do)(?:n't| not) (?:meet|reach|achieve|hit) (?:the |your )?(?:required "
    r")?(?:[\d.,]+ ?%? )?(?:target|goal|threshold|requirement)\b")
_REFUSED = compile_later(r"denied|rejected|not allowed|doesn'?t want to proceed|permission|blocked", re.I)

# Operations a command can be matched to; "run it", "start it" are judged by any tool call.
_NAMED_OPERATIONS = ("commit", "push", "pull", "merge", "rebase", "clone", "tag", "checkout",
                     "deploy", "publish", "install", "login")
_CAUSES = ("unfinished", "false_claim", "check_failed", "does_not_compile", "no_check", "corrected",
           "interrupted", "last_call_failed", "unanswered", "partial_answer", "not_run", "conceded",
           "plan_open", "tied_to_session")
_LABELS = {3: "done and shown", 2: "done with gaps", 1: "partial", 0: "no progress"}


@detector("goal_outcome", causes=_CAUSES, min_answer_words=(int, 8))
def goal_outcome(facts: Facts, params: Mapping[str, Any]) -> Measurement:
    """How completely the session did what the user asked, 0-3, judged request by request.

    What it measures: every real user message is classified (see the request ledger: change,
    question, operation such as commit or push, or a follow-up of the request before it), and
    each main request gets a level from the turns that served it; the worst request bounds the
    score. A change is done (3) when files changed and the last check that ran after its last
    edit and before the next change (tests, build, type checker, linter, or a run of the
    program; a later check when none ran in between) passed, prose written after the code (a
    summary, a README section) needing no check of its own; 2 when no check shows it works
    (documentation and configuration need none, nor does a request that says "don't test"), and
    2 too when the request quotes how the file it names is to be built or run
    (`gcc main.c.rs -o cmain`) and that never ran on the file's final text (what passed ran a
    copy under another name); 1 when that check still fails (the final message claiming success
    anyway is called out), when a file the request names failed its last use after its last
    edit (`conda env create -f environment.yml` failing, the environment then built from
    another file), or when nothing was changed (0 when it was the session's only request and
    the session changed nothing at all: nothing useful was delivered; done when the agent
    looked and its answer finds the change already in place, "the settings file already has
    Write and Edit in the deny list"). A file that is no code (an answer file, a word list)
    needs no check of its own once a look at it or a command that used it came after it was
    written, nor does one an inline test program (`python - <<'PY'` importing the edited code)
    wrote for itself and passed with. A scratch file the agent wrote for itself (in /tmp) is no
    part of the work, and a passing run of it does not overturn the project's own test, build
    or type check failing after the last edit. A change made by commands instead of edits
    (packages installed, permissions set, files archived or removed, keys typed into tmux, or
    the output file the request names written by a program the agent ran: `python stats.py
    --out results/summary.json`) is judged the same way by the checks after the last of them,
    or by a look at what they made. A
    log whose harness keeps every call (Claude Code, Codex ...) and holds none shows no work,
    whatever its answer says. A question is done (3) when an answer of `min_answer_words` words
    or more follows it (CJK text counted by characters); 2 when the answer rests on a tool
    output the harness cut, on calls that were refused, or ends by handing the question back; 1
    when it got no answer (0 when it was the session's only request and nothing was changed
    either: nothing useful was delivered). An operation (commit, push, deploy, install ...) is
    done when a command that does it ran and succeeded (asked to run the tests, when they ran
    and gave a verdict, pass or fail); 1 when it failed or never ran. A request is capped at 2
    when its closing report says in the agent's own words that part of it was not done ("I was
    unable to ...", "it is impossible to ...", "falls short of the target", a fallback, "would
    you like me to try ...", "example values rather than actual results"), when the user had to
    restate it or said the work was wrong, and at 1 when that came after the last thing the
    agent did for it (a complaint is settled when a check passed after it, or for an operation
    when its command then succeeded; a routine operation such as "commit and push" asked for
    again after more work is a new request, not a complaint). A request not done (no change,
    the operation never run) that the agent asked the user about, the user then going on to
    another request instead of answering, is 2: the user chose to leave it. A session the user
    interrupted at the end, one whose agent left items of its own plan never started, and a
    headless run that left the server it was asked for in the harness's own background shell (it
    ends with the run) are capped at 2, and one that broke off mid-work (on a tool call with no
    answer after it, on a call written out as text, or on a message announcing a next step that
    never ran) at 1. 0 only when a request got no response at all. A request that asks for a
    file to be made ("write the number to /app/solution.txt") is 1 when nothing after it wrote,
    ran, listed or showed that file, and so is one whose closing report says the measured
    result misses the task's own target ("59.7%, slightly below the 62% target"). An operation
    the agent says it cannot do from the session (a program to install on the user's machine),
    handed back with the commands to run, is 2.

    Why it matters: a session that ends without what was asked, or without evidence that it
    works, leaves the user to finish or verify the work by hand.

    Example: "Fix the failing date parser test" -> two edits, no test run afterwards: 2,
    citing the last edit ("no check ran after the last edit"). Then "commit and push" ->
    `git commit` ran, `git push` never did: 1 for that request, so 1 overall.

    Instead: run the project's test command after the last edit and report its result
    truthfully; put that command in CLAUDE.md / AGENTS.md so the agent knows it.
    """
    requests = facts.main_requests
    if not requests:
        return Measurement(0, (), "no user request found", ("unfinished",))
    session = _Session(facts)
    results = [_judge(facts, r, params, session) for r in requests]
    level = min(level for level, _, _ in results)
    evidence: list[Evidence] = []
    causes: list[str] = []
    for (req_level, req_evidence, req_causes) in results:
        if req_level < 3:
            evidence.extend(req_evidence)
            causes.extend(req_causes)
    answer = facts.final_answer
    # How the session ended (cut off, a server tied to the run, the plan left open, an
    # interruption) bounds the last request too, so it is not counted as done.
    before_ending = level
    cut_off = _ended_mid_work(facts)
    if cut_off is not None and level >= 2 and not facts.interruptions:
        level = 1
        evidence.append(Evidence(*cut_off))
        causes.append("unfinished")
    tied = _service_tied_to_session(facts)
    if tied is not None and level == 3:
        level = 2
        evidence.append(Evidence(tied, "the program the request needs running was started in "
                                       "the harness's own background shell, which ends with "
                                       "the session"))
        causes.append("tied_to_session")
    open_items = _plan_left_open(facts)
    if open_items is not None and level == 3:
        turn, items = open_items
        level = 2
        evidence.append(Evidence(turn, f"the agent's own plan still had {len(items)} open "
                                       f"{'item' if len(items) == 1 else 'items'} when it "
                                       f"stopped: \u201c{quote(items[0], 100)}\u201d"))
        causes.append("plan_open")
    late_interrupts = [t for t in facts.interruptions if answer is None or t > answer.index]
    if late_interrupts and level >= 2:
        level = 2
        evidence.append(Evidence(late_interrupts[-1], "the user interrupted the agent at the end"))
        causes.append("interrupted")
    evidence = sorted(dict.fromkeys(evidence), key=lambda e: e.turn)
    done = sum(1 for lvl, _, _ in results if lvl == 3)
    if level < before_ending and results[-1][0] == 3:
        done -= 1
    summary = (f"{_LABELS[level]}: {done} of {len(results)} "
               f"{'request' if len(results) == 1 else 'requests'} done and shown")
    return Measurement(level, tuple(evidence), summary, tuple(dict.fromkeys(causes)))


# A request for a program that keeps running: a server, a service, a port to listen on.
_WANTS_RUNNING = compile_later(r"\b(?:server|service|daemon|listen(?:s|ing)? on|on port|port \d+"
                            r"|keep (?:it |them )?running|leave (?:it |them )?running"
                            r"|in the background)\b", re.I)
# Starts that outlive the shell that made them besides detaching (facts.detaches): a service
# manager, a process manager, a detached terminal session.
_MANAGED_START = compile_later(r"\b(?:systemctl\s+(?:re)?start|service\s+\S+\s+(?:re)?start"
                            r"|supervisorctl|pm2|forever|disown|screen\s+-d|tmux\s+new)\b")
_STOPS = compile_later(r"\b(?:kill|pkill|killall)\b")


def _outlives_shell(command: str) -> bool:
    return detaches(command) or _MANAGED_START.search(command) is not None


def _service_tied_to_session(facts: Facts) -> int | None:
    """In a headless run, the launch in the harness's own background shell (Claude Code's
    run_in_background) of the program the last request needs left running, when nothing
    else started it to outlive the session and it was not stopped on purpose; None
    otherwise. That shell is the session's child: the server is gone once the run ends.
    (Someone at the keyboard keeps the session, and the server, as long as they need it.)"""
    if not facts.transcript.headless:
        return None
    last_request = facts.main_requests[-1] if facts.main_requests else None
    if last_request is None or not _WANTS_RUNNING.search(facts.turn(last_request.turn).content):
        return None
    launch = None
    for turn in facts.tool_turns:
        if turn.index in facts.failed:
            continue
        if (turn.tool_input or {}).get("run_in_background") is True:
            launch = turn
        elif launch is not None and (turn.tool_name in ("KillShell", "KillBash")
                                     or turn.command and _STOPS.search(turn.command)):
            launch = None  # stopped on purpose (a test run), or replaced by another start
        elif launch is not None and turn.command and _outlives_shell(turn.command):
            launch = None  # started again so that it outlives the session
    if launch is None or _outlives_shell(launch.command or ""):
        return None
    return launch.index


# Plan items that the final report itself completes.
_REPORT_ITEM = compile_later(r"\b(?:report|summar|final answer|respond|reply)", re.I)


def _plan_left_open(facts: Facts) -> tuple[int, list[str]] | None:
    """The agent's last plan update (TodoWrite, update_plan) of the last request, and the
    items it still held as pending when the session ended; None when every item was done (a
    last item about reporting is done by the final message itself)."""
    last_request = facts.main_requests[-1] if facts.main_requests else None
    plan = next((t for t in reversed(facts.tool_turns) if t.kind is ToolKind.PLAN
                 and t.meta is None and t.index not in facts.failed), None)
    if plan is None or last_request is None or plan.index < last_request.turn:
        return None
    inputs = plan.tool_input or {}
    items = inputs.get("todos", inputs.get("plan"))
    if not isinstance(items, list):
        return None
    open_items = [str(item.get("content") or item.get("step") or "") for item in items
                  if isinstance(item, dict) and item.get("status") == "pending"]
    open_items = [text for text in open_items if text and not _REPORT_ITEM.search(text)]
    return (plan.index, open_items) if open_items else None


# A closing sentence that announces the next step ("Let me fix that and rerun the tests.").
_ANNOUNCES = compile_later(r"^\W*(?:(?:now|next|first|then|ok(?:ay)?|great|perfect|good)\W+)?"
                        r"(?:let me|let's|i'll|i will|i'm going to|i am going to|i need to)\s+"
                        r"(?!know\b|leave\b|stop\b|wait\b|be\b|end\b)\w+[^?]*$", re.I)


# A tool call the model wrote into its message instead of making it (`<invoke name="Write">`,
# a model's raw call tokens): nothing ran it.
_CALL_AS_TEXT = compile_later(r"<function_calls>|<invoke name=|<tool_call>|\u2581call\u2581|"
                           r"<\|tool_call|\btool\u2581(?:sep|call)")


def _ended_mid_work(facts: Facts) -> tuple[int, str] | None:
    """Where the session broke off with the work unfinished, and how: on a tool call with no
    answer after it (a turn limit, a crash or a timeout), or on a message announcing a next
    step that never came; None when it ended on an answer or a submission."""
    last = next((t for t in reversed(facts.transcript.turns) if t.meta is None), None)
    if last is None or not facts.assistant_turns:
        return None
    # A call written as text ends the work the same way in a log whose harness keeps every
    # call, even one where no call was ever made (the model wrote them all as text).
    keeps_calls = bool(facts.tool_turns) or facts.transcript.harness in _KEEPS_CALLS
    if last.role is Role.ASSISTANT and keeps_calls and _CALL_AS_TEXT.search(last.content):
        return last.index, "the session ended on a tool call written out as text, which never ran"
    if last.role is Role.ASSISTANT and facts.tool_turns:
        closing = _last_sentence(last.content)
        if _ANNOUNCES.match(closing):
            return last.index, ("the session ended on an announced next step that never ran: "
                                f"\u201c{quote(_plain(closing), 120)}\u201d")
    if last.role is not Role.TOOL:
        return None
    if last.tool_name in ("submit",) or SUBMITS.match(last.command or ""):
        return None
    return last.index, ("the session ended mid-work: no answer followed the last tool call, so "
                        "the work was never finished or reported")


class _Session:
    """What every request's judgement reads of the whole session, worked out once (so a
    session of thousands of requests stays linear)."""

    def __init__(self, facts: Facts) -> None:
        self.hides_work = _hides_work(facts)
        # The last check with a verdict, and the last check of all: the checks after a
        # request's last edit end with these when they ran after it.
        self.last_decided = next((c for c in reversed(facts.checks) if c.passed is not None), None)
        self.last_check = facts.checks[-1] if facts.checks else None
        self.check_turns = frozenset(facts.check_turns)
        self.final_python = facts.final_python
        # The session's one request, and nothing changed in it: nothing useful was delivered.
        self.delivered_nothing = len(facts.main_requests) <= 1 and not facts.changes
        self._facts = facts

    @cached_property
    def by_products(self) -> frozenset[int]:
        """The passing inline test programs (`python - <<'PY'` importing the edited code): what
        they wrote for themselves (a pickle they read back) was used by them."""
        return frozenset(c.turn for c in self._facts.checks
                         if c.passed and inline_program(c.command))

    @cached_property
    def unwritten_outputs(self) -> dict[int, str]:
        """{request turn: the first file it asks to be written that nothing after it wrote,
        ran, listed or showed}. The tool turns are read from the end back, once, and only
        until every file asked for has been seen (or the first request asking for one is
        reached); most requests ask for none, and then nothing is read."""
        asked = {r.turn: _asked_outputs(r.text) for r in self._facts.main_requests
                 if r.kind != QUESTION}
        asked = {turn: paths for turn, paths in asked.items() if paths}
        if not asked:
            return {}
        first = min(asked)
        left = {name for paths in asked.values() for _, name in paths}
        last_seen: dict[str, int] = {}
        for turn in reversed(self._facts.tool_turns):
            if turn.index <= first or not left:
                break
            # The call's own fields first; its output (which may be long, or read back from
            # the spill file) only for the names still unseen, by a plain substring test.
            fields = "\n".join([turn.command or "", " ".join(turn.paths),
                                *(e.path or "" for e in turn.edits)])
            for text in (fields, turn.tool_output or ""):
                for name in [n for n in left if n in text]:
                    if _mentions(text, name):
                        last_seen[name] = turn.index
                        left.discard(name)
                if not left:
                    break
        unwritten = {}
        for turn, paths in asked.items():
            missing = next((path for path, name in paths if last_seen.get(name, 0) <= turn), None)
            if missing is not None:
                unwritten[turn] = missing
        return unwritten

    @cached_property
    def file_runs(self) -> _FileRuns:
        """Built when a request first names a file it changed (most never do)."""
        return _FileRuns(self._facts)


def _judge(facts: Facts, request: Request, params: Mapping[str, Any], session: _Session
           ) -> tuple[int, list[Evidence], list[str]]:
    """One main request's level, the turns behind it and why it lost points."""
    served = [t for t in facts.served_turns(request) if t.meta is None and t.role is not Role.USER]
    if not served:
        # The log ends at this request (a file saved mid-session): nothing to judge it by.
        if request.end >= facts.transcript.turns[-1].index and request is not facts.main_requests[0]:
            return 3, [], []
        if not facts.assistant_turns and not facts.tool_turns:
            # A prompt log: the agent's side was never saved, so nothing shows it was served.
            note = "the log keeps none of the agent's turns, so nothing shows the request was " \
                   "served"
            return 0, [Evidence(request.turn, note)], ["unfinished"]
        return 0, [Evidence(request.turn, "the request got no response")], ["unfinished"]
    if request.kind == CHANGE:
        level, evidence, causes = _judge_change(facts, request, served, session)
    elif request.kind == OPERATION:
        level, evidence, causes = _judge_operation(facts, request, served, session)
    else:
        level, evidence, causes = _judge_question(facts, request, served, params, session)
    if level == 3 and (request.kind != QUESTION or facts.changes_in(request)):
        # A question's answer may rightly be "I couldn't find one"; work reported as not
        # (all) done is not done, whatever the checks show. A "question" the agent answered
        # by changing files ("Evaluate the model ... the result file should ...") was work.
        conceded = _concession(served)
        if conceded is not None:
            turn, sentence = conceded
            if _MISSES_TARGET.search(sentence):
                level = 1
                evidence.append(Evidence(turn, f"the final answer says the result misses the "
                                               f"target: \u201c{quote(sentence, 160)}\u201d"))
            else:
                level = 2
                evidence.append(Evidence(turn, f"the final answer says part of it was not done: "
                                               f"\u201c{quote(sentence, 160)}\u201d"))
            causes.append("conceded")
    if level == 1 and set(causes) <= {"unfinished", "not_run"} \
            and request is not facts.main_requests[-1]:
        # Not done, but the agent put a question about it to the user (a confirmation, a
        # choice), and the user went on to another request instead of answering: the user
        # chose to leave it, a gap rather than a part missing.
        asked = _asked_before_moving_on(served)
        if asked is not None:
            level = 2
            evidence.append(Evidence(asked, "not done: the agent asked the user about it, and "
                                            "the user went on to another request"))
    unwritten = session.unwritten_outputs.get(request.turn)
    if unwritten is not None and level > 1 and not session.hides_work:
        # The file the request asks for was never written, run, listed or shown after it: the
        # deliverable itself is missing, whatever else was done.
        level = 1
        evidence.append(Evidence(request.turn, f"the file the request asks for, {unwritten}, "
                                               f"was never written"))
        causes.append("unfinished")
    last_work = max((t.index for t in served), default=request.turn)
    complaints = request.restated_at + request.rejected_at
    if complaints:
        unanswered = [t for t in complaints if t >= last_work]
        cap = 1 if unanswered else 2
        # A complaint the agent acted on and then showed fixed (a check passed) is settled,
        # as is one about an operation whose command then succeeded ("login to git" again
        # after an interrupted login, which then logged in).
        checked = facts.checks_between(max(complaints), request.end)
        if not unanswered and (checked and checked[-1].passed
                               or request.kind == OPERATION and level == 3):
            cap = 3
        if level > cap:
            level = cap
            evidence.extend(Evidence(t, "the user had to ask again or said the work was wrong")
                            for t in (unanswered or complaints)[:3])
            causes.append("corrected")
    return level, evidence, causes


# A file a request asks to be made: named after a verb of making it ("write the answer to
# /app/solution.txt", "save the results as results.json"), with an extension of the files
# people ask for (so "e.g." or "Language.get" are no files), the verb not that of a relative
# clause about code ("a script that writes out.txt").
_OUTPUT_EXTENSIONS = ("txt|json|jsonl|csv|tsv|md|log|out|html|xml|yaml|yml|toml|ini|cfg|conf"
                      "|py|sh|js|ts|c|h|cpp|rs|go|java|rb|sql|db|sqlite|bin|pkl|npy|npz|pt|pth"
                      "|onnx|parquet|png|jpg|jpeg|gif|svg|pdf|ppm|mp4|mp3|wav|zip|tar|gz|tgz"
                      "|whl|so|exe|patch|diff")
_ASKED_OUTPUT = compile_later(
    # "a script that writes out.txt" describes the code asked for, not a file to make now.
    r"(?<!that )(?<!which )\b(?:write|writes|written|save|saves|saved|store|stored|output|outputs|export|exports"
    r"|exported|create|creates|generate|generates|produce|produces|dump|put)\b[^.\n]{0,80}?"
    r"(?<![\w/.-])((?:\.{0,2}/)?(?:[\w.-]+/)*[\w-][\w-]*(?:\.[\w-]+)*\.(?:"
    + _OUTPUT_EXTENSIONS + r"))(?![\w/-])", re.I)


def _mentions(text: str, name: str) -> bool:
    """Whether `text` names the file `name` as a whole name (not inside a longer one)."""
    return re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", text) is not None


def _asked_outputs(text: str) -> list[tuple[str, str]]:
    """The files a request asks to be written, as (path as written, file name), in order."""
    found = dict.fromkeys(m.group(1) for m in _ASKED_OUTPUT.finditer(text or ""))
    return [(path, path.rsplit("/", 1)[-1]) for path in found]


def _asked_before_moving_on(served: list) -> int | None:
    """The agent's last message for a request, when it ends by asking the user something."""
    last = next((t for t in reversed(served) if t.role is Role.ASSISTANT
                 and (t.content or "").strip()), None)
    if last is None or not _ENDS_ASKING.search(last.content):
        return None
    return last.index


def _judge_change(facts: Facts, request: Request, served: list, session: _Session
                  ) -> tuple[int, list[Evidence], list[str]]:
    changes = facts.changes_in(request)
    if not changes:
        tools = [t for t in served if t.role is Role.TOOL]
        if tools and any(op in _NAMED_OPERATIONS for op in request.operations):
            # "write a commit message, commit and push": what it asks is to run something.
            return _judge_operation(facts, request, served, session)
        if not tools and session.hides_work:
            return _judge_by_answer(request, served)
        # A program run is a check too (it shows the program works); one that wrote the
        # output the request asks for also made the change.
        commands = [t for t in tools if t.kind is ToolKind.SHELL and t.command
                    and t.index not in facts.failed
                    and (t.index not in session.check_turns
                         and (changes_system(t.command) or launches_in_background(t))
                         or _writes_requested_output(t, request))]
        if commands:
            # Done through commands (packages installed, permissions set, files archived or
            # removed, a service started): judged by the checks after the last of them, like
            # an edit.
            last = commands[-1].index
            judged = _judged_by_checks(facts, last, request.end)
            if judged is not None:
                return judged
            if launches_in_background(commands[-1]):
                return _judge_started(commands[-1], tools)
            later = [t for t in tools if t.index > last and t.index not in facts.failed]
            if _shown_after(commands, later, facts.transcript.cwd) or \
                    _requested_output_shown(request, later):
                # What commands made is there to be seen: a look at it after them (`rm -f x`
                # then `ls` without x, the encrypted files shown) shows the change took, as a
                # test shows an edit works.
                return 3, [], []
            return 2, [Evidence(last, "the change was made by commands, and no check after "
                                      "them shows it works")], ["no_check"]
        if tools and _found_in_place(served):
            # It looked and found the change already made ("the settings file already has
            # Write and Edit in the deny list"): nothing was left to change.
            return 3, [], []
        # Beside other requests or changes, a change not made is a part left undone.
        return 0 if session.delivered_nothing else 1, [Evidence(
            request.turn, "a change was asked for, but no file was changed for it")], ["unfinished"]
    # A Python file this request changed that the session leaves unable to compile (its whole
    # final text is in the log) is broken, whatever else ran or was claimed.
    final = session.final_python
    for turn, path in changes:
        if path in final and turn <= final[path][0]:
            tree = final[path][2]
            if isinstance(tree, SyntaxError):
                where = f" (line {tree.lineno})" if tree.lineno else ""
                return 1, [Evidence(final[path][0], f"{path} does not compile at the end{where}")], \
                    ["does_not_compile"]
    # Prose written after the code (a summary of the work, a README section) needs no check
    # of its own, nor does a file that is no code and was shown or used after it was last
    # written (an answer file read back, a hash file fed to a cracker): the last edit of
    # anything else is the one its checks must follow. A data file written after the checks
    # and never looked at is the unchecked answer.
    shown = _shown_files(facts, changes, served, session.by_products)
    # A scratch file the agent wrote for itself (/tmp/verify.py) is no part of the work: the
    # checks that follow the work's own last edit decide.
    scratch = {p for _, p in changes if _is_scratch(p)}
    rest = [t for t, p in changes
            if p is None or not (_is_prose(p) or (t, p) in shown or p in scratch)]
    if not rest and shown:
        return 3, [], []
    last_edit = rest[-1] if rest else changes[-1][0]
    # The checks that ran after this request's last edit and before the next change of the
    # session show whether this change worked; later ones also test the changes made since,
    # and count only when none ran in between.
    following = bisect.bisect_right(facts.change_turns, last_edit)
    while following < len(facts.changes) and _is_scratch(facts.changes[following][1]):
        following += 1  # a scratch file written since is no change of the work
    until = facts.change_turns[following] if following < len(facts.change_turns) else None
    own = [c for c in (facts.checks_between(last_edit, until - 1) if until is not None
                       else facts.checks_after(last_edit))
           if c.passed is not None]
    decided = own[-1] if own else session.last_decided
    if decided is not None and decided.passed and scratch and runs_one_of(decided.command, scratch):
        # The project's own test failing after the last edit is not overturned by a script
        # of the agent's that passes: the work still fails the project's check.
        failing = [c for c in own if c.kind in PROJECT_CHECKS and c.turn < decided.turn]
        if failing and failing[-1].passed is False:
            decided = failing[-1]
    left_failing = _named_file_left_failing(facts, request, changes, session)
    if left_failing is not None:
        return 1, [left_failing], ["check_failed"]
    if decided is not None and decided.turn > last_edit:
        if not decided.passed:
            return _failed_check(facts, decided)
        unrun = _requested_check_not_run(facts, request, changes, session)
        if unrun is not None:
            return 2, [unrun], ["no_check"]
        return 3, [], []
    if all(p is not None and is_doc_file(p) for _, p in changes) or request.forbids_checks:
        return 3, [], []
    last = session.last_check
    if last is not None and last.turn > last_edit:
        return 2, [Evidence(last.turn, "the check after the last edit shows no pass or "
                                       f"failure: {quote(last.command, 120)}")], ["no_check"]
    return 2, [Evidence(last_edit, "no check ran after the last edit, so the transcript cannot "
                                   "show the change works")], ["no_check"]


# Programs that run a script or a project's own entry point: how a deliverable is made by a
# program rather than written by hand (`python analyze.py --out report.json`, `npm run build`).
_RUNS_PROGRAM = compile_later(
    r"^(?:(?:uv|poetry|pipenv|pdm|hatch)\s+run\s+)?(?:python[\d.]*|node|ruby|perl|php|Rscript"
    r"|julia|bash|sh|zsh|deno|bun|java\s+-jar|go\s+run|cargo\s+run|dotnet\s+run)\s+(?:-\S+\s+)*"
    r"[\w./-]+\.\w+\b|^\./[\w./-]+|^(?:npm|pnpm|yarn)\s+(?:run\s+)?\w")


_RUNNER = compile_later(r"^(?:uv|poetry|pipenv|pdm|hatch)\s+run\s+")


def _requested_files(request: Request) -> set[str]:
    """The names of the files a request asks to be made (`results/report.json` gives
    report.json)."""
    return {name for _, name in _asked_outputs(request.text)}


def _requested_output_shown(request: Request, later: list) -> bool:
    """Whether a look after the work (a read, a listing, `cat`) showed a file the request
    names: the deliverable is there to be seen."""
    names = _requested_files(request)
    for turn in later:
        if not names or not (turn.tool_output or "").strip():
            continue
        looked = set(looked_at(turn.command)) if turn.command else set()
        if turn.kind in (ToolKind.LIST, ToolKind.READ):
            looked |= set(turn.paths)
        if any(p.rsplit("/", 1)[-1] in names for p in looked):
            return True
    return False


def _writes_requested_output(turn, request: Request) -> bool:
    """Whether a successful shell call ran a program that wrote a file the request asks for:
    the request asks for the file (`_asked_outputs`), and the call names it as an argument of
    the program (not as the program itself) or its output names it (`python analyze.py` printing "Wrote
    results/report.json"). Such a deliverable is a change made by a command, not a change
    left undone because no file was edited."""
    segments = [s for s in command_segments(turn.command) if _RUNS_PROGRAM.match(s)]
    if not segments or inline_program(turn.command):
        return False
    names = _requested_files(request)
    if not names:
        return False
    output = turn.tool_output or ""
    for segment in segments:
        words = _RUNNER.sub("", segment).split()
        # What runs is the script an interpreter is given (its first operand), or the program
        # itself (`./gen.sh`, `npm run build`): naming it is no sign of what it wrote.
        operands = [w for w in words[1:] if not w.startswith("-") and w != "run"]
        runs = operands[0] if words[0] not in ("npm", "pnpm", "yarn") and not \
            words[0].startswith("./") and operands else words[0]
        for name in names - {runs.rsplit("/", 1)[-1]}:
            if re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])",
                         segment + "\n" + output):
                return True
    return False


# A command the request quotes for building or running a file (`gcc main.c.rs -o cmain`).
_QUOTED = compile_later(r"`([^`\n]{3,200})`")
_FILE_OPERAND = compile_later(r"^[\w./-]*\.[A-Za-z]\w{0,5}$")


# Programs that look at, move or version a file without using what it says.
_HANDLERS = _SHELL_READERS | _SHELL_SEARCHERS | _SHELL_LISTERS | {
    "cp", "mv", "rm", "ln", "chmod", "chown", "touch", "git", "tar", "zip", "unzip", "diff", "cmp",
    "md5sum", "sha1sum", "sha256sum", "echo", "printf", "sort", "tee", "scp", "rsync"}
_PROGRAM = compile_later(r"^[\w./+-]+$")


class _FileRuns:
    """The shell commands that ran a program on a file, by the file's name, in session order:
    (turn, program) for every command segment that gives the file to a program that uses it
    (`conda env create -f environment.yml`, `gcc main.c.rs -o cmain`), not to one that only
    looks at, moves or versions it (`cat`, `cp`, `git add`). Built once per session."""

    def __init__(self, facts: Facts) -> None:
        self.by_name: dict[str, list[tuple[int, str]]] = {}
        # Only the files a request names can be asked about: one search per command finds
        # the commands worth splitting.
        asked = "\n".join(facts.turn(r.turn).content or "" for r in facts.main_requests)
        names = {p.rsplit("/", 1)[-1] for _, p in facts.changes if p}
        wanted = sorted(n for n in names if n in asked)
        if not wanted:
            return
        mentions = re.compile("|".join(map(re.escape, wanted)))
        for t in facts.tool_turns:
            if not t.command or t.kind is not ToolKind.SHELL or not mentions.search(t.command):
                continue
            for segment in command_segments(t.command):
                words = segment.split()
                if len(words) < 2 or not _PROGRAM.match(words[0]):
                    continue
                program = program_name(words[0])
                if program in _HANDLERS:
                    continue
                for name in {w.rsplit("/", 1)[-1] for w in words[1:] if _FILE_OPERAND.match(w)}:
                    runs = self.by_name.setdefault(name, [])
                    if not runs or runs[-1] != (t.index, program):
                        runs.append((t.index, program))

    def after(self, name: str, turn: int) -> list[tuple[int, str]]:
        """The runs that used `name` after `turn`."""
        runs = self.by_name.get(name, [])
        return runs[bisect.bisect_right(runs, (turn, "\uffff")):]


def _changed_names(changes: list) -> dict[str, int]:
    """The last edit turn of each file a request changed, by file name (scratch files left out)."""
    last_edit: dict[str, int] = {}
    for turn, path in changes:
        if path and not _is_scratch(path):
            last_edit[path.rsplit("/", 1)[-1]] = turn
    return last_edit


def _named_file_left_failing(facts: Facts, request: Request, changes: list, session: _Session
                             ) -> Evidence | None:
    """A file the request names, changed for it, whose last use after its last edit failed
    with none passing since (`conda env create -f environment.yml` failing, the environment
    then built from another file): what the user asked for is left broken, whatever else
    passed."""
    text = facts.turn(request.turn).content or ""
    for name, edited in _changed_names(changes).items():
        if "." not in name or name not in text or \
                not re.search(r"(?<![\w.-])%s(?![\w-])" % re.escape(name), text):
            continue
        used = session.file_runs.after(name, edited)
        if not used or used[-1][0] not in facts.failed:
            continue
        last_use = facts.turn(used[-1][0])
        return Evidence(last_use.index, f"the last run that used {name} after its last edit "
                                         f"failed: {quote(last_use.command or '', 100)}")
    return None


def _requested_check_not_run(facts: Facts, request: Request, changes: list, session: _Session
                             ) -> Evidence | None:
    """The request's own check, quoted in it (`gcc main.c.rs -o cmain && ./cmain N`), that
    never ran on the final text of the file it names: the checks that passed ran something
    else (a copy under another name, another file), so the transcript does not show what the
    user will run works."""
    last_edit = _changed_names(changes)
    for quoted in _QUOTED.findall(facts.turn(request.turn).content or ""):
        for segment in command_segments(quoted):
            words = segment.split()
            # A test runner checks the named test with the rest of the suite too (`pytest`
            # alone runs it); a compiler or an interpreter is run on the file itself.
            if not words or classify_check(segment) not in ("build", "run"):
                continue
            program = program_name(words[0])
            files = [n for n in (w.rsplit("/", 1)[-1] for w in words[1:] if _FILE_OPERAND.match(w))
                     if n in last_edit]
            if not files:
                continue
            name = files[0]
            runs = session.file_runs.after(name, last_edit[name])
            if not any(used == program for _, used in runs):
                return Evidence(last_edit[name], f"the request's own check, `{quote(segment, 80)}`, "
                                                 f"never ran on the final {name}")
    return None


# The answer finds what was asked for already there: "already has Write and Edit in the deny
# list", "is already configured", "no changes are needed".
_ALREADY = compile_later(
    r"(?<!\byou )(?<!\bwe )(?<!\bi )\balready (?:(?:exists?|has|have|had|contains?|includes?"
    r"|lists?|is|are|was|were|set|sets|configured|set up|in place|installed|present|there|done"
    r"|implemented|defined|enabled|disabled|up[ -]to[ -]date|the case|correct|handled|fixed)\b)"
    r"|\bno (?:changes?|edits?|updates?) (?:is |are )?(?:needed|necessary|required)\b"
    r"|\bnothing (?:needs|needed|left) to (?:be )?(?:changed?|fix(?:ed)?|update[d]?|do(?:ne)?)\b", re.I)


def _found_in_place(served: list) -> bool:
    """Whether the agent's answer says the change was already made (and concedes nothing)."""
    said = [t.content for t in served if t.role is Role.ASSISTANT and t.content]
    return bool(said) and any(_ALREADY.search(text) for text in said[-2:]) and \
        _concession(served) is None


def _is_scratch(path: str | None) -> bool:
    return path is not None and bool(_SCRATCH.search(path))


# Files that are programs or build them: a change to one is shown working only by running it.
_CODE_SUFFIXES = (".py", ".pyx", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".vue", ".svelte",
                  ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".rs", ".go", ".java", ".kt", ".scala",
                  ".rb", ".php", ".sh", ".bash", ".zsh", ".pl", ".lua", ".swift", ".cs", ".r",
                  ".jl", ".f", ".f90", ".for", ".sql", ".ex", ".exs", ".hs", ".ml", ".clj", ".dart",
                  ".zig", ".nim", ".s", ".asm", ".v", ".html", ".css", ".scss", ".mk", ".cmake",
                  ".gradle", ".ipynb", ".cob", ".cbl", ".m")
_CODE_NAMES = ("makefile", "dockerfile", "gnumakefile", "cmakelists.txt", "justfile")


def _is_code(path: str) -> bool:
    name = path.lower().rsplit("/", 1)[-1]
    return name.endswith(_CODE_SUFFIXES) or name in _CODE_NAMES


def _shown_files(facts: Facts, changes: tuple, served: list, by_products: frozenset[int]
                 ) -> set[tuple[int, str]]:
    """The changes of files that are not code (an answer file, a word list, a hash extracted
    for a cracker) which a later call showed or used after they were last written: a read or
    listing of the file (in the same command line or a later call), or a command that named
    it and succeeded (`john secrets.hash`). A data file has no test; a look at it shows what
    it holds, and a program that took it in shows it served."""
    cwd = facts.transcript.cwd
    last_write = {p: t for t, p in changes if p is not None}
    pending = {p: t for p, t in last_write.items() if not _is_code(p)}
    if not pending:
        return set()
    by_base: dict[str, list[str]] = {}
    for path in pending:
        by_base.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    # What a passing inline test program wrote for itself (a pickle it read back) was used
    # by it: a by-product of the check, not an output of the work waiting for one.
    shown: set[str] = {p for p, t in pending.items() if t in by_products}
    first = min(pending.values())
    for turn in served:
        if turn.role is not Role.TOOL or turn.index < first or turn.index in facts.failed:
            continue
        looked = {relative_path(p, cwd) for p in looked_at(turn.command)} if turn.command \
            else set()
        if turn.kind is ToolKind.READ:
            looked |= {relative_path(p, cwd) for p in turn.paths}
        if looked and (turn.tool_output or "").strip():
            shown.update(p for p in looked & pending.keys()
                         if turn.index > pending[p] or turn.index == pending[p] and turn.command)
        if turn.command and turn.kind is not ToolKind.EDIT:
            # A command that names the file (by its base name, as a word of its own) used it.
            for word in _WORD_SPLIT.split(turn.command):
                for path in by_base.get(word.rsplit("/", 1)[-1], ()):
                    if turn.index > pending[path]:
                        shown.add(path)
    return {(t, p) for t, p in changes if p in shown}


# What separates the words of a command line when looking for the files it names.
_WORD_SPLIT = compile_later(r"[\s='\";|&()<>]+")


def _named_paths(segments: tuple[str, ...]) -> set[str]:
    """What commands name (their arguments but options and redirections), each without
    quotes or a trailing slash."""
    return {word.strip("'\"").rstrip("/") for segment in segments
            for word in segment.split()[1:]
            if not word.startswith(("-", ">", "<", "2>", "&")) and word.strip("'\"").rstrip("/")}


def _shown_after(commands: list, later: list, cwd: str | None) -> bool:
    """Whether a look after the commands that made a change shows what they made.

    A listing or a read counts when it names one of their paths, a folder holding one, or a
    file inside one (a listing that names no path lists the working folder), whether it is the
    whole call or one command of a longer line (`ls -la out && cat out/a.txt`). Any other
    call that changes nothing counts when it names a file they made (`ffmpeg -i result.mp4`
    after writing result.mp4, `sqlite3 app.db "SELECT ..."` after changing app.db). Work
    done through a terminal multiplexer (`tmux send-keys`) is shown by a capture of its
    screen (`tmux capture-pane -p`)."""
    made = {relative_path(p, cwd) for t in commands
            for p in _named_paths(changing_segments(t.command))}
    in_tmux = any(_TMUX.search(t.command) for t in commands)
    if not made and not in_tmux:
        return False
    files = {m for m in made if "/" in m or "." in m.strip(".")}
    for turn in later:
        if not (turn.tool_output or "").strip():
            continue
        if in_tmux and turn.command and shows_pane(turn.command):
            return True
        looked = {relative_path(p, cwd) for p in looked_at(turn.command)} if turn.command \
            else set()
        if turn.kind in (ToolKind.LIST, ToolKind.READ):
            looked |= {relative_path(p, cwd) for p in turn.paths}
            if not looked and turn.kind is ToolKind.LIST:
                looked = {"."}
        for path in looked:
            if any(m == path or m.startswith(path + "/") or path.startswith(m + "/")
                   or path == "." and not m.startswith(("/", "~", "..")) for m in made):
                return True
        if turn.kind is ToolKind.SHELL and turn.command and not changes_system(turn.command):
            named = {relative_path(p, cwd) for p in _named_paths(command_segments(turn.command))}
            if named & files:
                return True
    return False


# A tmux command anywhere in a command line.
_TMUX = compile_later(r"(?:^|[;&|(]\s*)tmux\s")


def _concession(served: list) -> tuple[int, str] | None:
    """The report closing a request's work, and its sentence, when it says the work asked for
    was not (all) done; None otherwise."""
    report = next((t for t in reversed(served) if t.role is Role.ASSISTANT and t.content.strip()),
                  None)
    if report is None or served[-1].role is Role.TOOL:
        return None  # no report after the last call: judged as cut off, not as conceded
    text = report.content.replace("\u2019", "'")
    # A sentence that concedes is a part of the text that does: one search over the whole
    # report rules most reports out before they are split.
    if not _CONCEDES.search(text) and not _FALLS_BACK.search(text):
        return None
    for sentence in sentences(text):
        concedes = _CONCEDES.search(sentence) or (
            _FALLS_BACK.search(sentence) and _MISSING.search(sentence))
        if concedes and not _OVERCOME.search(sentence):
            return report.index, _plain(sentence)
    return None


def _is_prose(path: str) -> bool:
    name = path.lower()
    return name.endswith((".md", ".mdx", ".rst", ".adoc")) or \
        name.rsplit("/", 1)[-1] in ("readme", "changelog", "notice", "license")


def _failed_check(facts: Facts, last: Check) -> tuple[int, list[Evidence], list[str]]:
    evidence = [Evidence(last.turn, f"the last check still fails: {quote(last.command, 120)}")]
    causes = ["check_failed"]
    answer = facts.final_answer
    if answer is not None and answer.index > last.turn and _CLAIMS_SUCCESS.search(answer.content) \
            and not _ADMITS_FAILURE.search(answer.content):
        evidence.append(Evidence(answer.index, f"the final message claims success, but the "
                                               f"check at turn {last.turn} failed"))
        causes.insert(0, "false_claim")
    return 1, evidence, causes


# A command given to the user to run: an inline code span or a fenced block.
_GIVES_COMMAND = compile_later(r"`[^`\n]{2,200}`|^```", re.M)
# The agent saying it cannot do something itself (not an offer to try again).
_CANNOT = CaselessPattern(r"\b(?:i|we) (?:can(?:no|')t|can not|(?:am|'m|are|'re) (?:unable|not able)"
                          r" to|do(?:n't| not) have (?:access|permission))\b")


def _not_run(request: Request, served: list, note: str) -> tuple[int, list[Evidence], list[str]]:
    """An operation that no command did: partial (1), unless the agent said it cannot do it
    from the session and handed it back with the commands to do it (installing a program on
    the user's own machine, an interactive login): a gap (2), the user has what they need."""
    answer = next((t for t in reversed(served) if t.role is Role.ASSISTANT
                   and (t.content or "").strip()), None)
    if answer is not None:
        text = answer.content.replace("\u2019", "'")
        if _GIVES_COMMAND.search(text) and _CANNOT.search(text):
            return 2, [Evidence(request.turn, f"{note}: the agent cannot do it from the session "
                                              f"and handed it back with the commands to run")], \
                ["not_run"]
    return 1, [Evidence(request.turn, note)], ["not_run"]


def _judge_operation(facts: Facts, request: Request, served: list, session: _Session
                     ) -> tuple[int, list[Evidence], list[str]]:
    tools = [t for t in served if t.role is Role.TOOL]
    if not tools:
        if session.hides_work:
            return _judge_by_answer(request, served)
        return _not_run(request, served, "the operation asked for was never run")
    for op in request.operations or ("run",):
        pattern = OPERATION_WORDS.get(op, OPERATION_WORDS["run"])
        runs = [t for t in tools if t.command and pattern.search(t.command)] \
            if op in _NAMED_OPERATIONS else tools
        if not runs:
            return _not_run(request, served, f"asked to {op}, but no command did it")
        last = runs[-1]
        # "Run the tests" is done when they ran and gave their verdict, pass or fail: what
        # they found is the answer. Any other operation that failed was not done.
        check = next(iter(facts.checks_between(last.index - 1, last.index)), None)
        reported = op == "run" and check is not None and check.kind != "run" and \
            check.passed is not None
        if last.index in facts.failed and not reported:
            return 1, [Evidence(last.index, f"the {op} failed and was not redone")], ["last_call_failed"]
        launch = next((t for t in reversed(runs) if launches_in_background(t)
                       and t.index not in facts.failed), None)
        if launch is not None:
            # "Start the server": the last program it started in the background.
            judged = _judged_by_checks(facts, launch.index, request.end)
            return judged if judged is not None else _judge_started(launch, tools)
    return 3, [], []


def _judged_by_checks(facts: Facts, after: int, end: int
                      ) -> tuple[int, list[Evidence], list[str]] | None:
    """Done (3) when the last check that told pass or fail after turn `after` (up to `end`)
    passed, judged as failed when it failed; None when none told."""
    decided = [c for c in facts.checks_between(after, end) if c.passed is not None]
    if not decided:
        return None
    return (3, [], []) if decided[-1].passed else _failed_check(facts, decided[-1])


def _judge_started(launch, tools: list) -> tuple[int, list[Evidence], list[str]]:
    """A program started in the background returns at once, whether or not it works: it is
    shown running only by a look at it after (its process, its port, its log)."""
    if any(t.index > launch.index and probes_running(t) for t in tools):
        return 3, [], []
    return 2, [Evidence(launch.index, "started in the background, and nothing after it shows "
                                      "it running")], ["no_check"]


def _plain(sentence: str) -> str:
    """A sentence quoted as evidence, without its Markdown emphasis and list marker."""
    return re.sub(r"^\W*?(?:[-*+]|\d+[.)])\s+|\*\*|__|`", "", sentence.strip()).strip()


def _last_sentence(text: str) -> str:
    return (sentences(text) or [""])[-1]


def _offers_more(text: str) -> bool:
    """Whether a closing question offers further work or hands the floor back, rather than
    asking what the work itself needs. A closing list of questions ("Would you like me to:",
    then "- Add a CLI?", "- Add icons?") is judged by the line that leads into it."""
    def offers(sentence: str) -> bool:
        return offers_more_work(sentence) or bool(_FLOOR_HANDED_BACK.match(sentence))

    if offers(_last_sentence(text)):
        return True
    lines = [line for line in text.strip()[-4000:].splitlines()[-40:] if line.strip()]
    if not lines or not _LIST_ITEM.match(lines[-1]):
        return False
    while lines and _LIST_ITEM.match(lines[-1]):
        lines.pop()
    return bool(lines) and offers(_last_sentence(lines[-1]))


# Harnesses whose session files keep every tool call the agent made: a session of theirs with
# no call made none (an agent that wrote its calls as text, which nothing ran).
_KEEPS_CALLS = frozenset({"claude-code", "codex", "gemini", "pi", "cline", "opencode", "atif",
                          "mini-swe-agent", "swe-agent"})


def _hides_work(facts: Facts) -> bool:
    """Whether the log keeps the answers but not the tool calls (a prompt log, a hook that
    saves only the final text): fewer tool calls in all than requests for work, in a log
    whose harness may leave its calls out."""
    if facts.transcript.harness in _KEEPS_CALLS:
        return False
    asks = sum(1 for r in facts.main_requests if r.kind != QUESTION)
    return len(facts.tool_turns) < asks


_REPORTS_DONE = compile_later(r"\b(done|created|added|updated|implemented|pushed|committed|fixed|wrote"
                           r"|written|removed|renamed|changed|passes|passed|clean|works)\b", re.I)


def _judge_by_answer(request: Request, served: list) -> tuple[int, list[Evidence], list[str]]:
    """A request in a log that hides the work: judged by what the answer reports."""
    answers = [t for t in served if t.role is Role.ASSISTANT and t.content.strip()]
    if not answers:
        return 1, [Evidence(request.turn, "the request got no answer")], ["unfinished"]
    last = answers[-1].content
    if _REPORTS_DONE.search(last) or word_count(last) >= 40:
        return 3, [], []
    return 2, [Evidence(answers[-1].index, "the log hides the work, and the answer does not "
                                           "report it done")], ["no_check"]


def _judge_question(facts: Facts, request: Request, served: list, params: Mapping[str, Any],
                    session: _Session) -> tuple[int, list[Evidence], list[str]]:
    answers = [t for t in served if t.role is Role.ASSISTANT
               and word_count(t.content) >= params["min_answer_words"]]
    if not answers:
        last = served[-1]
        # Among other requests or changes, a question left unanswered is a part left undone.
        return 0 if session.delivered_nothing else 1, [Evidence(
            last.index, "the question got no real answer")], ["unanswered"]
    answer = answers[-1]
    tools = [t for t in served if t.role is Role.TOOL and t.index < answer.index]
    # What a check that passed later showed, the answer rests on: output cut or refused
    # before it is no gap (the work was redone and verified since).
    verified = max((c.turn for c in facts.checks_between(request.turn, answer.index)
                    if c.passed), default=0)
    tools = [t for t in tools if t.index > verified]
    gaps: list[Evidence] = []
    cut = [t for t in tools if harness_cut((t.tool_output or "")[-20000:])]
    if cut:
        gaps.append(Evidence(cut[-1].index, "the answer rests on a tool output the harness cut "
                                            "short, and it was not narrowed and read again"))
    refused = [t for t in tools if t.index in facts.failed and _REFUSED.search(t.tool_output or "")]
    if refused:
        gaps.append(Evidence(refused[0].index, f"{len(refused)} of the calls behind the answer "
                                               f"were refused, and what they would have shown "
                                               f"is missing"))
    if _ENDS_ASKING.search(answer.content.strip()[-300:]) and not _offers_more(answer.content):
        gaps.append(Evidence(answer.index, "the answer ends by handing a question back to the user"))
    if gaps:
        return 2, gaps, ["partial_answer"]
    return 3, [], []
