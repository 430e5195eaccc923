"""The request ledger: how each user message is classified and which turns serve it."""

from __future__ import annotations

import pytest

from skill_doctor import facts
from skill_doctor.facts import requests as ledger
from skill_doctor.model import Role, ToolKind, Transcript, Turn


@pytest.mark.parametrize("text, kind", [
    ("Fix the page count in src/pager.py, it drops the last partial page.", ledger.CHANGE),
    ("Can you add a --verbose flag to the CLI?", ledger.CHANGE),
    ("Why does the terminal freeze when I add a tab?", ledger.QUESTION),
    ("Investigate why the tab freezes when I add a tab", ledger.QUESTION),
    ("Review the changes against main and report problems. Do not modify any files.", ledger.QUESTION),
    ("commit and push", ledger.OPERATION),
    ("pull and merge M-Claude", ledger.OPERATION),
    ("git remote add origin git@example.com:me/x.git\ngit push -u origin main", ledger.OPERATION),
    ("ok thanks", ledger.FOLLOW_UP),
    ("I'm using Ghostty", ledger.FOLLOW_UP),
    ("when running the scan on staged files dont block the commit, instead redact each secret", ledger.CHANGE),
    ("帮我配置下Maple Mono NF CN这个", ledger.CHANGE),
    ("比较适合macos系统terminal的中文字体有哪些推荐？", ledger.QUESTION),
    ("可以", ledger.FOLLOW_UP),
    # A recommendation asked for is a question; one to build is an order.
    ("我想在 leetcode 里面训练 ac 自动机/word 匹配领域的题目，请你给我推荐10个，从易到难的 leetcode 题目",
     ledger.QUESTION),
    ("请根据推荐的题目创建一个练习目录，并添加每道题的解答文件", ledger.CHANGE),
    # An order after a comma is an order; a verb that ends the clause after one asks.
    ("call the file custom-compaction.ts, update README.md for the hooks examples dir", ledger.CHANGE),
    ("great. To be clear, what runs is the saved copy of the workspace, correct?", ledger.QUESTION),
    ("When I add a tab, the layout breaks", ledger.FOLLOW_UP),
    ("Am I supposed to add OPK_DEBUG=1 to the code, or use it on the command line?", ledger.QUESTION),
    ("we need to define when to create a skill. let's think first, before we change anything",
     ledger.QUESTION),
    ("Don't write any code yet: should the cache live in the client?", ledger.QUESTION),
    ("Fix the parser before you commit", ledger.CHANGE),
    # A review whose instructions say what to run asks for the review.
    ("Review the code changes against main. Run git diff 5c2031e and report findings.",
     ledger.QUESTION),
    ("Review the changes, then commit and push", ledger.OPERATION),
    # A command word that starts an English sentence is no command line.
    ("make an ER diagram of the tables", ledger.CHANGE),
    ("cd into the repo and fix the failing import", ledger.CHANGE),
    ("make test", ledger.OPERATION),
    ("go test ./...", ledger.OPERATION),
    # Work on files and data is a change as much as work on code.
    ("Sort the documents in /app/documents into /app/invoices and /app/other.", ledger.CHANGE),
    ("Encrypt all the files in data/ into encrypted_data/", ledger.CHANGE),
    ("Can you train a fasttext model on the yelp data in data/?", ledger.CHANGE),
    ("please copy the xml file from the exports folder to the local directory", ledger.CHANGE),
    ("Is the archive sorted by date?", ledger.QUESTION),
    # Hardening a setup changes its files.
    ("harden gitleaks for this repo", ledger.CHANGE),
    ("scrub, purge, sanitize repo of all secrets", ledger.CHANGE),
    ("Is gitleaks hardened enough?", ledger.QUESTION),
    # "do not ..." forbids; it asks nothing. What is left after the prohibition decides.
    ("do not write code. just the doc", ledger.FOLLOW_UP),
    ("Don't change anything, just explain the parser", ledger.QUESTION),
    ("please understand where you were and continue", ledger.FOLLOW_UP),
    ("do you think the parser handles tabs", ledger.QUESTION),
    # The issue link a message opens with is not how it asks.
    ("https://github.com/o/r/issues/295\n\nany clean suggestion for this? we can make sdk.ts "
     "read the key", ledger.QUESTION),
    # A change weighed in a question asks whether; an order after it still orders.
    ("ok, hooks.md looks good, do we need to update the Hooks section in README.md? maybe the "
     "intro should list example hooks?", ledger.QUESTION),
    ("should we add a test?", ledger.QUESTION),
    ("do we need to update the README? if so, update it.", ledger.CHANGE),
    ("Add a test. Should we also update the docs?", ledger.CHANGE),
    # Prose the answer delivers is no change to files, unless a file is named.
    ("write a little poem instead,", ledger.QUESTION),
    ("draft me a tweet about the release", ledger.QUESTION),
    ("write a poem to poem.txt", ledger.CHANGE),
    ("Make the joke endpoint return JSON", ledger.CHANGE),
    ("write an email to the team about the outage, and fix the typo in app.py", ledger.CHANGE),
    # What the agent can do, asked of a kind of thing, is a question; of a thing, an order.
    ("Can you use bash?", ledger.QUESTION),
    ("can you edit files?", ledger.QUESTION),
    ("Are you able to run commands?", ledger.QUESTION),
    ("Can you edit the config?", ledger.CHANGE),
    ("Can you create files for the parser tests?", ledger.CHANGE),
    # A change judged, or put for confirmation, is no order; a go-ahead that orders is one.
    ("I think it's actually fine to apply events to a changed graph. Do all nodes have IDs?",
     ledger.QUESTION),
    ("So I think it's fine to apply them to a different snapshot", ledger.FOLLOW_UP),
    ("We can just drop updates to a deleted node right?", ledger.QUESTION),
    ("Move the button to the right?", ledger.CHANGE),
    ("OK, great. Now implement the plan.", ledger.CHANGE),
    ("ok, add more printers", ledger.CHANGE),
    ("ok, go ahead", ledger.FOLLOW_UP),
])
def test_classify(text, kind):
    assert ledger.classify(ledger.strip_pasted(text)) == kind


def test_pasted_code_and_negated_orders_do_not_make_a_change_request():
    text = "What does this print?\n```python\nfix_everything()\nwrite_file('x')\n```\nDon't change any files."
    assert ledger.classify(ledger.strip_pasted(text)) == ledger.QUESTION


def test_go_ahead_accepting_an_offer_to_change_is_a_change():
    offer = "The bug is in pager.py. Would you like me to fix the rounding there?"
    assert ledger.classify("yes please", offer) == ledger.CHANGE
    assert ledger.classify("yes please", "The tests pass.") == ledger.FOLLOW_UP


def _turns(*specs):
    turns = []
    for i, (role, text) in enumerate(specs, start=1):
        turns.append(Turn(i, role, text))
    return tuple(turns)


def test_restated_and_rejected_requests_stay_one_request():
    turns = _turns((Role.USER, "login to git"), (Role.ASSISTANT, "Running gh auth login."),
                   (Role.USER, "login to git"), (Role.ASSISTANT, "Logged in."),
                   (Role.USER, "Make the toggle switch the chart"), (Role.ASSISTANT, "Done."),
                   (Role.USER, "Still doesn't work."), (Role.ASSISTANT, "Fixed the handler."))
    requests = ledger.build(turns)
    mains = [r for r in requests if r.kind != ledger.FOLLOW_UP]
    assert [(r.turn, r.end) for r in mains] == [(1, 4), (5, 8)]
    assert mains[0].restated_at == (3,) and mains[1].rejected_at == (7,)


def test_an_error_pasted_after_the_work_rejects_it_but_opens_no_request_first():
    turns = _turns((Role.USER, "Error: Unexpected \"Catch\"\n\t17464: Catch as e"),
                   (Role.ASSISTANT, "The try block lacked its closing brace; fixed."),
                   (Role.USER, "Add a category filter to the clipboard panel"),
                   (Role.ASSISTANT, "Added the filter."),
                   (Role.USER, "Warning: This local variable appears to never be assigned a value."
                               "\n\nSpecifically: TitlePrefix"),
                   (Role.ASSISTANT, "Assigned TitlePrefix before use."),
                   (Role.USER, "TypeError: cannot read properties of undefined (reading 'id')"),
                   (Role.ASSISTANT, "Guarded the lookup."))
    requests = ledger.build(turns)
    mains = [r for r in requests if r.kind != ledger.FOLLOW_UP]
    # The first message is a request of its own; the later ones say the work does not run.
    assert [r.turn for r in mains] == [1, 3]
    assert mains[0].rejected_at == () and mains[1].rejected_at == (5, 7)


def test_an_order_given_again_after_other_requests_restates_the_earlier_one():
    bubble = "add a random hovering bubble with an emoji in it that bursts when pressed"
    turns = _turns((Role.USER, bubble), (Role.ASSISTANT, "Added EmojiBubble.jsx."),
                   (Role.USER, "make the bubble drift from left to right like a cloud"),
                   (Role.ASSISTANT, "It drifts now."),
                   (Role.USER, bubble), (Role.ASSISTANT, "Rewrote the bubble."),
                   (Role.USER, "yes please"), (Role.ASSISTANT, "Committed."),
                   (Role.USER, "yes please"), (Role.ASSISTANT, "Pushed."))
    mains = [r for r in ledger.build(turns) if r.kind != ledger.FOLLOW_UP]
    # Asked for again: the first request was left undone; the repeat is judged on its own.
    assert [(r.turn, r.restated_at) for r in mains][:3] == [(1, (5,)), (3, ()), (5, ())]
    assert all(r.restated_at == () for r in mains if r.turn >= 7)  # "yes please" accepts


@pytest.mark.parametrize("complaint, rejects", [
    ("help me debug why the labels on the chart are not displayinh", True),  # typed as sent
    ("the legend is still not rendered", True),
    ("nothing changed ! cant see any floating bubbles anywhere", True),
    ("an error pop when I try to run the app, here is the terminal :", True),
    ("I provided a new key but now I'm getting the following error", True),
    ("Also show the error count in the footer", False),
    ("Also do not display the footer on mobile", False),  # a new order, not a complaint
])
def test_work_reported_as_not_showing_is_rejected_even_misspelt(complaint, rejects):
    turns = _turns((Role.USER, "Add axis labels to the chart in ui.ts"),
                   (Role.ASSISTANT, "Added the labels."), (Role.USER, complaint),
                   (Role.ASSISTANT, "Looking at it."))
    main = next(r for r in ledger.build(turns) if r.kind != ledger.FOLLOW_UP)
    assert main.rejected_at == ((3,) if rejects else ())


@pytest.mark.parametrize("question, reply, new_request", [
    # The agent asks how the work should be done: the answer settles a detail of it.
    ("Stderr: should it be a separate output port, or merged into stdout?",
     "use a separate output port, and light it up when data arrives", False),
    ("Where should AGENTS.md live (repo root or elsewhere)?", "make both live in the repo root", False),
    # Offers of more work, next steps and yes/no checks are answered with new requests.
    ("Want me to add tests for the parser?", "add them and fix the CSS too", True),
    ("Should we commit or continue with rpc.md?", "write a little poem instead", True),
    ("Next steps:\n- Add icons to the rules table?", "add icons, and also add the Prusa printers", True),
    ("Does this framing make sense before I update the docs?",
     "check out ../pi-skills/ and update the docs with it", True),
    ("Which layout do you prefer, grid or list?",
     "Yes, implement the grid, and add a toggle for the list view in settings", True),
    # Open questions for the requirements are answered as well as choices are.
    ("Any framework preferences?", "None really; use TypeScript and React since they are popular",
     False),
    ("Also any must-have interactions beyond resize and connect?",
     "I want pan and zoom, and add multiselect by dragging", False),
])
def test_an_answer_to_the_agents_choice_is_part_of_the_request(question, reply, new_request):
    turns = _turns((Role.USER, "Build the node editor described in PLAN.md"),
                   (Role.ASSISTANT, "Before I start: " + question), (Role.USER, reply),
                   (Role.ASSISTANT, "Done."))
    mains = [r.turn for r in ledger.build(turns) if r.kind != ledger.FOLLOW_UP]
    assert mains == ([1, 3] if new_request else [1])


def test_a_prompt_log_keeps_each_prompt_as_its_own_request():
    # Nothing of the agent was saved, so no answer ever separates the prompts.
    turns = _turns((Role.USER, "Add a dark mode toggle to the settings page"),
                   (Role.USER, "Why does the login page flash on load?"),
                   (Role.USER, "make an ER diagram of the tables"))
    mains = [r for r in ledger.build(turns) if r.kind != ledger.FOLLOW_UP]
    assert [(r.turn, r.kind) for r in mains] == [
        (1, ledger.CHANGE), (2, ledger.QUESTION), (3, ledger.CHANGE)]


@pytest.mark.parametrize("first, kind", [
    # A short first message that asks in words the ledger has no verb for still asks.
    ("Help me pick a web framework", ledger.QUESTION),
    ("Read the package.json file", ledger.QUESTION),
    # A greeting, a harness's warm-up or an acknowledgement asks for nothing.
    ("hi there", ledger.FOLLOW_UP),
    ("Warmup", ledger.FOLLOW_UP),
    ("ok thanks", ledger.FOLLOW_UP),
])
def test_a_short_first_message_that_is_no_greeting_is_a_request(first, kind):
    turns = _turns((Role.USER, first), (Role.ASSISTANT, "Hono or Elysia, both minimal and fast."))
    assert [(r.turn, r.kind) for r in ledger.build(turns)] == [(1, kind)]


def test_two_messages_before_the_answer_are_one_request():
    turns = _turns((Role.USER, "Figma URL: https://example.com/design/1"),
                   (Role.USER, "Write production grade React code for the given Figma design."),
                   (Role.ASSISTANT, "Scaffolding the project."))
    mains = [r for r in ledger.build(turns) if r.kind != ledger.FOLLOW_UP]
    assert [(r.turn, r.kind) for r in mains] == [(1, ledger.CHANGE)]


def test_an_edit_that_names_no_file_changes_the_file_the_request_names():
    def tool(i, name, kind, inp, paths=()):
        return Turn(i, Role.TOOL, tool_name=name, tool_input=inp, kind=kind, paths=paths)
    turns = (
        Turn(1, Role.USER, "Refine _create_model_instance in core/dict_to_model.py"),
        tool(2, "read_file", ToolKind.READ, {"target_file": "core/dict_to_model.py"},
             ("core/dict_to_model.py",)),
        tool(3, "read_file", ToolKind.READ, {"target_file": "core/utils.py"}, ("core/utils.py",)),
        tool(4, "edit_file", ToolKind.EDIT, {"target_file": "", "old_string": "a = 1\n",
                                             "new_string": "a = 2\n"}),
    )
    f = facts.compute(Transcript(source="x", harness="specstory", turns=turns))
    assert [(e.turn, e.path) for e in f.edits] == [(4, "core/dict_to_model.py")]
    assert f.unlocated_edits == ()
