"""facts.requests: every real user message of a session, classified, with the turns that served it.

Part of the facts stage. A session is rarely one request: people ask a question, then ask for a
change, then say "commit and push". Each user message is classified after its pasted material
(fenced code, quoted lines, logs) and negated orders ("do not modify any files") are taken out:

- `change`: asks for files to be changed ("fix the pager", "add a --verbose flag");
- `question`: asks for an answer, a review or an investigation ("why does X freeze?");
- `operation`: asks for something to be run rather than written (commit, push, deploy, install);
- `follow_up`: continues the request before it: an acknowledgement or go-ahead ("ok", "yes, do
  it"), a clarification ("I'm using Ghostty"), the answer to the agent's question about how to
  do the work ("Should stderr be its own port, or merged into stdout?" - "use its own port"),
  a restatement of the same request, or a report that the work is not right ("still doesn't
  work"). A go-ahead that accepts the agent's offer to change something makes that offer the
  request; an answer to an offer of more work ("Want me to add tests?") is a request of its own.

The main requests (change, question, operation) each own the turns up to the next main
request; follow-ups add their turns to the request they continue, and say whether the user had
to restate or reject the work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..patterns import compile_later
from ..model import Role, Turn
from ..text import CaselessPattern, sentences

CHANGE, QUESTION, OPERATION, FOLLOW_UP = "change", "question", "operation", "follow_up"


@dataclass(frozen=True, slots=True)
class Request:
    """One user message and what it asked for."""

    turn: int
    kind: str  # change | question | operation | follow_up
    text: str  # the message without pasted material, for display and matching
    # The turns that served the request: from the message up to the next main request.
    end: int = 0
    # Follow-ups that continue this request: the user restated it or said the work is wrong.
    restated_at: tuple[int, ...] = ()
    rejected_at: tuple[int, ...] = ()
    operations: tuple[str, ...] = ()  # what an operation request asks to run: push, commit ...
    forbids_checks: bool = False  # "don't test", "no need to run it"

    def serves(self, index: int) -> bool:
        return self.turn < index <= self.end


_FENCE = compile_later(r"```.*?(?:```|\Z)", re.S)
_TAGGED = compile_later(r"<([a-zA-Z][\w-]*)(?:\s[^>]*)?>.*?</\1>", re.S)
_QUOTED = compile_later(r"^[^\S\n]*>.*$", re.M)
# Lines pasted from a terminal or a log: tracebacks, prompts, stack frames, indented code.
_PASTED_LINE = compile_later(r"^(?:\s{4,}\S|\t|\s*(?:Traceback|File \"|at \S+\(|\$ |[A-Z]\w+Error:|"
                          r"\d{4}-\d\d-\d\d[ T]\d\d:|E\s{2,}|error\[|warning:)).*$", re.M)
# Case-insensitive patterns run on every user message are CaselessPatterns (text.py): the same
# matches at case-sensitive speed.
_NEGATED = CaselessPattern(
    r"\b(?:do not|don'?t|dont|never|without|no need to|not to|avoid|nor|stop)\s+"
    r"(?:\w+\s+){0,2}?"
    r"(?:modify|modifying|change|changing|edit|editing|touch|touching|write|writing|add|adding"
    r"|create|creating|delete|deleting|remove|removing|replace|replacing|update|updating|commit"
    r"|push|fix|fixing|implement|make|making|test|testing|run|running|search|searching|block)\b"
    r"[^.,;:!?\n]*")
# "let's think first, before we change anything", "don't write any code yet": the user wants to
# discuss before any change, so the message asks for an answer, whatever verbs it holds.
_HOLDS_CHANGES = compile_later(
    r"\b(?:before|until)\s+(?:we|you|i|u)?\s*(?:change|changing|modify|modifying|edit|editing"
    r"|touch|touching|make|making|write|writing|implement|implementing)\s+(?:any|anything)\b"
    r"|\b(?:do not|don'?t|dont)\s+(?:change|modify|edit|touch|write|implement|make)\s+"
    r"(?:any(?:thing)?\s+)?(?:\w+\s+)?yet\b", re.I)
_FORBIDS_CHECKS = CaselessPattern(r"\b(?:do not|don'?t|dont|no need to|not to|never|without)\s+"
                                  r"(?:\w+\s+)?(?:test|testing|run (?:the )?tests?|build|check)\b")

_ACK = compile_later(
    r"^\W*(ok(ay)?|k|yes|yep|yeah|yup|sure|thanks?|thank you|ty|great|perfect|cool|nice|good"
    r"|awesome|lgtm|looks good|sounds good|go( ahead)?|go for it|do it|continue|proceed|carry on"
    r"|keep going|next|approved?|confirm(ed)?|right|correct|exactly|agreed|fine|done|y|👍|✅)"
    r"(\W+(ok(ay)?|yes|thanks?|please|pls|go ahead|do it|continue|proceed|that|it|now|then"
    r"|lgtm|great|perfect|sure))*\W*$", re.I)
# A first message that only opens the conversation (or a harness's warm-up of a subagent).
_GREETING = compile_later(r"^\W*(?:hi|hello|hey|hiya|yo|howdy|good (?:morning|afternoon|evening)"
                       r"|warm ?up|ping|test(?:ing)?|/?clear)\b(?:\W+(?:there|claude|codex|gemini"
                       r"|again|everyone|all|team|1|2|3))*\W*$", re.I)
_GO_AHEAD = compile_later(r"^\W*(ok(ay)?|yes|yep|yeah|sure|go( ahead)?|do it|proceed|please do"
                       r"|let'?s do it|sounds good|approved?|continue)\b", re.I)
_OFFER = compile_later(r"\b(would you like me to|do you want me to|want me to|shall i|should i"
                    r"|i can (also )?|let me know if you(?:'d| would)? like me to)\b", re.I)
_REJECTS = CaselessPattern(
    r"\b(still (doesn'?t|does not|didn'?t|not|fails?|failing|broken|wrong|the same|shows?|has)"
    r"|(doesn'?t|does not|didn'?t|did not|isn'?t|is not|not) (work|working|fixed|right|correct)"
    r"|that'?s not (what|right|it)|not what i (asked|wanted|meant)|you (broke|forgot|missed|didn'?t)"
    r"|wrong|no[, ]+(that|this|it)|undo|revert|why did you|it'?s broken|still (an )?error"
    r"|same (error|problem|issue)|^\W*too (long|short|big|small|verbose|much)\b"
    r"|not (showing|shown|visible|display\w{2,}|render\w{2,}|appear\w{2,}|load\w{2,}|updat\w{2,})"
    # The change had no effect, or running it now fails ("nothing changed !", "an error pops up
    # when I run the app", "now I'm getting the following error").
    r"|nothing (has |have )?(changed|happened)|no (visible )?changes?\b|(can'?t|cannot|don'?t|do not)"
    r" see (any|the) (change|difference)|error (pops?|popped|shows|appears|comes)\b"
    r"|(getting|got|get|seeing) (the following|an|this|the same|a new|another|new|these) (\w+ )?errors?\b)")
# A message that opens with an error the user met ("Error: Unexpected "Catch"", a pasted
# traceback, "TypeError: ..."): after the agent's work, it says the work does not run.
_ERROR_REPORT = compile_later(r"^\W*(?:(?i:error|warning|exception|traceback|fatal|panic|uncaught"
                           r"|unhandled)\b|[A-Z]\w*(?:Error|Exception)\b)")
_QUESTION_OPENING = compile_later(
    r"^\s*(how|what|why|where|which|who|whom|is|are|am|was|were|does|do|did|has|have|can|could|should"
    r"|shall|may"
    r"|would|will|explain|tell me|describe|show me|investigate|look into|find out|figure out"
    r"|research|review|analy[sz]e|audit|explore|understand|diagnose|summari[sz]e|check|compare"
    r"|list|trace|troubleshoot|evaluate|assess|recommend|suggest|any)\b", re.I)
# "Do not write code, just the doc" opens with "do" but forbids: no question.
_PROHIBITION = compile_later(r"^\s*(?:do|does|did)(?:\s+not|n'?t)\b", re.I)
# What is left of a message once its prohibition is taken out: "..., just explain".
_FILLER = compile_later(r"^[\W_]*(?:(?:just|only|please|simply|but|instead|rather)\W+)*", re.I)
_BARE_ANY = compile_later(r"^\s*any\b(?!.*\?)", re.I | re.S)  # "any ..." asks only with a "?"
# A link the message opens with (the issue it is about) is not how the message asks.
_LEADING_LINKS = compile_later(r"^(?:\s*<?\S+://\S+>?\s*\n)+")
# Openings that ask for an answer even without a question mark ("explain the parser").
_INVESTIGATION = compile_later(r"^\s*(explain|tell me|describe|show me|investigate|look into|find out"
                            r"|figure out|research|review|analy[sz]e|audit|explore|understand|diagnose"
                            r"|summari[sz]e|check|compare|list|trace|troubleshoot|evaluate|assess"
                            r"|recommend|suggest|how|what|why|where|which|who)\b", re.I)
# Verbs that order a change to files.
_CHANGE_VERBS = (
    r"fix|add|implement|create|write|update|change|modify|refactor|remove|delete|rename|make"
    r"|build|convert|migrate|replace|edit|improve|optimi[sz]e|support|bump|upgrade|set ?up|setup"
    r"|generate|redact|move|rewrite|port|extend|enable|disable|handle|introduce|clean ?up"
    r"|patch|correct|adjust|tweak|translate|document|speed ?up|save|put|wire|hook ?up"
    r"|resolve|repair|restore|split|inline|extract|simplify|format|apply|configure"
    r"|scaffold|draft|append|insert|increase|decrease|reduce|center|centre|align|style|use"
    r"|switch|keep|include|show|display|integrate|debug"
    # Work on files and data rather than on code ("Sort the documents into ...", "Encrypt
    # every file in data/", "Trim the video to ..."); each changes what is on disk.
    r"|sort|organi[sz]e|encrypt|decrypt|download|upload|trim|crop|resize|compress|decompress"
    r"|archive|compile|train|copy|transform|saniti[sz]e|encode|decode|recover|populate|solve"
    r"|crack|fine-tune|uninstall"
    # Hardening a setup changes its files ("Harden gitleaks for this repo").
    r"|harden|tighten|lock ?down|purge|scrub|wipe")
_CHANGE_WORDS = CaselessPattern(rf"\b({_CHANGE_VERBS})\b")
_IMPERATIVE_BEFORE = compile_later(
    r"(^|[.!?;:\n(,]|^\s*[-*\d.)]+|\b(please|you|and|then|also|to|lets|let's|pls|now|just|should"
    r"|must|can|could|would|we|i'?d like you to|go ahead|and then|first|finally|instead|but|need|help me"
    r"|needs|want|start)\s*,?)\s*$", re.I)
_ENDS_CLAUSE = compile_later(r"\s*(?:[?.!]|$)")
# A change weighed in a question ("ok, do we need to update the Hooks section in README.md?",
# "should we add a test?"): the user asks whether, and a reasoned "no" answers it.
_WEIGHS_CHANGE = compile_later(r"\b(?:(?:do|does|would|will)\s+(?:we|i|you|it|this|that)\s+(?:really\s+)?"
                            r"(?:need|have)\s+to|should\s+(?:we|i)|is\s+it\s+(?:necessary|worth|needed)"
                            r"\s+to)\s*$", re.I)
_CLAUSE_ASKS = compile_later(r"(?:[^.!?\n]|\.(?=\S))*\?")  # "README.md?" ends at its "?"
# A change judged rather than ordered: "it's fine to apply them to a different snapshot",
# "it's likely safe to apply events from an old snapshot".
_JUDGES_CHANGE = compile_later(r"\b(?:fine|safe|ok|okay|alright|possible|reasonable|acceptable)\s+to\s*$",
                            re.I)
# The end of a clause that asks for confirmation: "we can just drop updates to a deleted node
# right?" (not "move it to the right?").
_TAG_QUESTION = compile_later(r"(?<!\bthe )\b(?:right|correct|yes|no|ok|okay)\s*\?$", re.I)
# Prose the answer itself delivers ("write a little poem", "draft me a tweet about it"): no
# file changes unless one is named.
_CHAT_PIECE = compile_later(r"\s+(?:me\s+|us\s+)?(?:(?:a|an|another|one|some|two|three|\d+)\s+)?"
                         r"(?:\w+\s+){0,2}?(?:poem|haiku|limerick|sonnet|song|lyrics|story|joke|riddle"
                         r"|tweet|toot|email|e-mail|letter|slogan|tagline|pun)s?\b"
                         r"(?=\s*(?:$|[.,!?;:]|(?:about|on|for|to|that|which|in|instead|please|and|like"
                         r"|with|of)\b))", re.I)
_CHAT_WRITING_VERBS = frozenset({"write", "draft", "make", "create", "generate"})
_NAMES_FILE = compile_later(r"[\w-]\.(?:md|txt|rst|html?|tex|docx?|py|js|ts|json|ya?ml)\b"
                         r"|\b(?:file|folder|directory)\b", re.I)
_FIX_ORDER = compile_later(r"\b(and|then|also|please|,)\s+(fix|change|update|implement|add|apply"
                        r"|patch|correct|resolve|repair|make)\b", re.I)
# What an operation request asks to run, and the command words that do it.
OPERATION_WORDS: dict[str, re.Pattern[str]] = {
    name: compile_later(pattern, re.I) for name, pattern in (
        ("commit", r"\bgit\b.*\bcommit\b"), ("push", r"\bgit\b.*\bpush\b|\bgh\b.*\bpr\b"),
        ("pull", r"\bgit\b.*\b(pull|fetch|merge|rebase)\b"), ("merge", r"\bgit\b.*\b(merge|rebase|pull)\b"),
        ("rebase", r"\bgit\b.*\brebase\b"), ("clone", r"\bgit\b.*\bclone\b|\bgh\b.*\bclone\b"),
        ("tag", r"\bgit\b.*\btag\b"), ("checkout", r"\bgit\b.*\b(checkout|switch|branch)\b"),
        ("deploy", r"deploy|publish|release|upload|kubectl|terraform|fly |vercel|netlify"),
        ("publish", r"publish|release|upload|twine|npm\s+publish"),
        ("install", r"install|brew|apt|pip|npm\s+i\b|cargo\s+add|uv\s+add"),
        ("login", r"\blog ?in\b|\bauth\b"),
        ("run", r"."), ("start", r"."), ("restart", r"."), ("stop", r"."), ("execute", r"."),
        ("launch", r"."), ("open", r"."),
    )
}
_OPERATION_REQUEST = CaselessPattern(
    r"(?:^|[.!?;:\n,]|\b(?:please|and|then|also|now|just|can you|could you|pls|go ahead and)\s+)"
    r"\s*(commit|push|pull|merge|rebase|clone|tag|checkout|deploy|publish|install|log ?in|run"
    r"|start|restart|stop|execute|launch|open)\b")


# Chinese, Japanese and Korean requests have no spaces between words: their own vocabulary.
_CJK = compile_later(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_CJK_ACK = compile_later(r"^\W*(可以|好的?|行|嗯|是的?|对|继续|谢谢|没问题|ok|はい|お願いします|네|좋아요?|계속)\W*$", re.I)
_CJK_CHANGE = compile_later(r"修改|改成|改为|改一下|添加|增加|加上|实现|实施|创建|新建|编写|写一|写个|更新|删除|删掉|移除"
                         r"|重构|修复|修正|修一下|配置|设置|补充|替换|优化|调整|完成|生成|支持|迁移|整理"
                         r"|追加|作成|実装|変更|削除|修正して|してください|수정|추가|만들|구현|변경|삭제|고쳐|해줘|해 ?주세요")
_CJK_QUESTION = compile_later(r"[吗呢？?]|什么|为什么|怎么|如何|哪些|哪个|是否|有没有|多少|检查|分析|解释|看看|查看"
                           r"|なぜ|どう|ですか|뭐|왜|어떻게|인가요|나요|까요")
# Asks for an answer when nothing is to be changed: recommend, suggest, tell me, introduce,
# list, sum up ("推荐的题目" only describes the problems a change order names).
_CJK_ASKS_ANSWER = compile_later(r"推荐|建议|告诉我|介绍|讲解|讲一下|列出|总结|おすすめ|教えて|추천|알려")
_CJK_OPERATION = compile_later(r"提交|推送|部署|运行|执行|登录|コミット|プッシュ|커밋|푸시|배포")


def _classify_cjk(text: str) -> str:
    if _CJK_ACK.match(text):
        return FOLLOW_UP
    change = _CJK_CHANGE.search(text) or asks_for_change(_CJK.sub(" ", text))
    question = _CJK_QUESTION.search(text)
    if change and not (question and question.start() < change.start() and "帮" not in text[:change.start()]):
        return CHANGE
    if question or (not change and _CJK_ASKS_ANSWER.search(text)):
        return QUESTION
    if _CJK_OPERATION.search(text) or _OPERATION_REQUEST.search(text):
        return OPERATION
    return FOLLOW_UP if len(_CJK.findall(text)) <= 24 else CHANGE


# "Can you add ...", "could we store ...": a question in form, an order in fact.
_POLITE_ORDER = compile_later(r"^\s*(?:can|could|would|will)\s+(?:you|we|u)\s+(?:please\s+|maybe\s+|also\s+)?"
                           rf"(?:\w+\s+)?(?:{_CHANGE_VERBS}|store|persist)\b", re.I)
# "Can you use bash?", "can you edit files?": asks what the agent is able to do, the object a
# kind of thing rather than one to work on ("can you edit the config?" orders).
_CAPABILITY_QUESTION = compile_later(
    r"^\s*(?:can|could|are)\s+(?:you|u)\s+(?:able\s+to\s+|also\s+)?\w+\s+(?:the\s+)?"
    r"(?:bash|shell|terminal|sudo|powershell|files|folders|directories|code|python|git|internet"
    r"|web|tools|commands|scripts|images|programs|mcp(?:\s+servers)?|the\s+file\s*system)\s*\?\s*$",
    re.I)
# A message that is only shell commands asks for them to be run.
_COMMAND_LINE = compile_later(r"^\s*(?:\$\s*)?(?:git|gh|npm|npx|pnpm|yarn|pip|pip3|uv|docker|kubectl|make"
                           r"|cargo|go|python\d?|node|cd|ls|brew|apt(?:-get)?|sudo|curl|ssh|scp)\b"
                           # "make an ER diagram", "go ahead and ...", "cd into the repo": prose
                           r"(?!\s+(?:a|an|the|it|its|this|that|these|those|sure|me|us|them|some|all"
                           r"|ahead|back|on|over|through|to|into|and|for|with|so|more|less|both"
                           r"|each|every|my|our|your|their|one|two|new)\b)")


def strip_pasted(text: str) -> str:
    """The user's own words: fenced blocks, tagged blocks, quoted and pasted lines removed."""
    text = _FENCE.sub(" ", text)
    text = _TAGGED.sub(" ", text)
    text = _QUOTED.sub("", text)
    text = _PASTED_LINE.sub("", text)
    return text.strip()


def asks_for_change(text: str) -> bool:
    """Whether a message orders a change (vs. asks a question or describes something).

    Negated orders ("do not modify any files") are dropped first. A message that opens like a
    question or an investigation asks for an answer unless it also orders a fix ("... and fix
    it"); otherwise a change verb counts only where it gives an order: at the start of a
    clause or after "please", "can you", "and", "then" ...; "when I add a tab" describes.
    """
    text = _without_negated(_LEADING_LINKS.sub("", text))
    if _CAPABILITY_QUESTION.match(text):
        return False
    if _POLITE_ORDER.match(text):
        return True
    if _QUESTION_OPENING.match(text) and "?" in text:
        return bool(_FIX_ORDER.search(text))
    if _QUESTION_OPENING.match(text) and _INVESTIGATION.match(text):
        return bool(_FIX_ORDER.search(text))
    for match in _CHANGE_WORDS.finditer(text):
        before = text[max(0, match.start() - 40):match.start()]
        if before.rstrip().endswith(",") and _ENDS_CLAUSE.match(text, match.end()):
            continue  # ", correct?" asks; ", update the README" orders
        if _JUDGES_CHANGE.search(before):
            continue
        if "?" in text:
            asking = _CLAUSE_ASKS.match(text, match.end())
            if asking and (_WEIGHS_CHANGE.search(before) or _TAG_QUESTION.search(asking.group())):
                continue
        if _orders_chat_piece(text, match):
            continue
        if _IMPERATIVE_BEFORE.search(before):
            return True
    return False


def _orders_chat_piece(text: str, verb: re.Match[str]) -> bool:
    """Whether a change verb of the message orders a piece of prose for the answer itself
    ("write a little poem", an email), no file being named."""
    return verb.group(1).lower() in _CHAT_WRITING_VERBS and \
        _CHAT_PIECE.match(text, verb.end()) is not None and not _NAMES_FILE.search(text)


def _writes_for_chat(text: str) -> bool:
    """Whether the message orders a piece of prose for the answer itself (a poem, an email)."""
    return any(_orders_chat_piece(text, match) for match in _CHANGE_WORDS.finditer(text))


def classify(text: str, previous_answer: str = "") -> str:
    """The kind of one user message (its pasted material already stripped)."""
    words = text.split()
    if not words:
        return FOLLOW_UP
    if _CJK.search(text):
        return _classify_cjk(text)
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and all(_COMMAND_LINE.match(line) for line in lines):
        return OPERATION
    if _ACK.match(text) or len(words) <= 6 and _GO_AHEAD.match(text):
        # A go-ahead accepting an offer to change something asks for that change.
        if _GO_AHEAD.match(text) and _OFFER.search(previous_answer[-600:]) and \
                asks_for_change(_OFFER.split(previous_answer[-600:], 1)[-1]):
            return CHANGE
        if not _ACK.match(text) and asks_for_change(text):
            return CHANGE  # the go-ahead gives its own order: "OK, great. Now implement the plan."
        return FOLLOW_UP
    if _HOLDS_CHANGES.search(text):
        return QUESTION
    if asks_for_change(text):
        return CHANGE
    if _writes_for_chat(text):
        return QUESTION  # the poem or the email is the answer
    if _OPERATION_REQUEST.search(_without_negated(text)):
        # "Review the changes against main. Run git diff ...": the run is how to answer.
        if _INVESTIGATION.match(_LEADING_LINKS.sub("", text)) and _operations(text) == ("run",):
            return QUESTION
        return OPERATION
    opening = _LEADING_LINKS.sub("", text)
    if _QUESTION_OPENING.match(opening) and not _BARE_ANY.match(text) \
            and not _PROHIBITION.match(opening) or "?" in re.sub(r"\S+://\S+", "", text):
        return QUESTION
    allowed = _without_negated(opening)
    if allowed != opening and _INVESTIGATION.match(_FILLER.sub("", allowed)):
        return QUESTION  # "Don't change anything, just explain the parser"
    # Words that neither ask nor order ("M-Claude", "I'm using Ghostty", "I set that on
    # purpose") inform the request before them; `build` takes a first message that only
    # describes a problem as the request to solve it.
    return FOLLOW_UP


# A closing question that asks the user to choose how the work is done: a wh-question or
# alternatives ("Where should AGENTS.md live (repo root or elsewhere)?"). Not an offer of
# more work (`offers_more_work`), nor a yes/no check ("Does this make sense?").
_CHOICE = compile_later(r"\b(?:what|which|where|how|who|when|or|vs\.?|versus|any|prefer(?:ence)?s?"
                     r"|do you (?:have|need|expect|use|plan))\b", re.I)
# More work offered or the next step put to the user ("Want me to ...?", "Should we commit or
# continue?", "- Add icons to the table?", "Anything else?", "Ready for rpc.md?"), or a plan
# put up for approval ("Does this framing make sense before I update the docs?").
_OFFERS_WORK = compile_later(
    rf"^\W*(?:want|would you|do you want|shall|should (?:i|we)|can i|may i|ready|ok(?:ay)? to"
    rf"|proceed|go ahead|(?:is there )?anything|any other|something|else|next|{_CHANGE_VERBS}"
    rf"|start|begin|continue|try|run|commit|push"
    rf"|does (?:this|that)(?: \w+)? (?:make sense|look (?:right|good)|sound (?:right|good)))\b",
    re.I)
# A reply that accepts and orders the work rather than choosing ("Yes, implement.").
_ACCEPTS = compile_later(r"^\W*(?:yes|yep|yeah|sure|ok(?:ay)?|go ahead|do it|proceed|please do"
                      r"|sounds good|lgtm|implement|approved?)\b", re.I)


def offers_more_work(question: str) -> bool:
    """Whether a closing question (an answer's last sentence) offers more work, puts the next
    step to the user or a plan up for approval, rather than asking what the work needs."""
    return bool(_OFFERS_WORK.match(question))


def _asks_to_choose(answer: str) -> bool:
    """Whether an answer ends by asking the user to decide a detail of the work."""
    tail = answer.strip()[-400:]
    if not re.search(r"\?[\s*_`)\]]*$", tail):
        return False
    question = sentences(tail)[-1]
    # An offer inside the question counts too: "Which file, or would you like me to pick?"
    return bool(_CHOICE.search(question)) and not offers_more_work(question) and \
        not _OFFER.search(question)


def _operations(text: str) -> tuple[str, ...]:
    found = [m.group(1).lower().replace(" ", "")
             for m in _OPERATION_REQUEST.finditer(_without_negated(text))]
    found += [m.group(1).lower() for m in re.finditer(
        r"^[^\S\n]*(?:\$[^\S\n]*)?git\s+(?:-\S+\s+)*(commit|push|pull|merge|rebase|clone|tag|checkout)\b",
        text, re.M)]
    return tuple(dict.fromkeys(found))


@lru_cache(maxsize=64)
def _without_negated(text: str) -> str:
    """The message with its negated orders taken out (asked for up to three times a message)."""
    return _NEGATED.sub(" ", text)


@lru_cache(maxsize=128)
def _tokens(text: str) -> frozenset[str]:
    # The main request's words are compared with every message after it: read once.
    return frozenset(re.findall(r"[a-z0-9_]{3,}", text.lower()))


_RESTATE_LOOKBACK = 40  # earlier messages a repeated order is compared with (keeps long logs linear)


def _restates(text: str, earlier: str) -> bool:
    """Whether a message says the same as an earlier one (the user had to ask again)."""
    a, b = _tokens(text), _tokens(earlier)
    if not a or not b:
        return text.strip().lower() == earlier.strip().lower() and bool(text.strip())
    shared = len(a & b)
    # The same words again, or the earlier request repeated inside a longer one.
    short, long = sorted((len(a), len(b)))
    return shared / len(a | b) >= 0.6 or (short >= 6 and long <= 4 * short and shared / short >= 0.7)


def build(turns: tuple[Turn, ...]) -> tuple[Request, ...]:
    """The ledger of one session's turns (injected text excluded)."""
    drafts: list[dict] = []
    last_main: dict | None = None  # the latest main request's draft
    last_answer = ""
    worked = False
    used_tools = any(t.role is Role.TOOL for t in turns)
    # A prompt log keeps only the user's messages: each is its own request, not one long one.
    answered = used_tools or any(t.role is Role.ASSISTANT for t in turns)
    for turn in turns:
        if turn.meta == "request-unknown":
            # A headless run keeps no request. One that set to work was given a task to carry
            # out, judged like a change (nothing changed: not shown done); one that only
            # answered was asked a question.
            drafts.append({"turn": turn.index, "kind": CHANGE if used_tools else QUESTION,
                           "text": "", "restated": [], "rejected": [], "ops": (),
                           "forbids": False})
            last_main = drafts[-1]
            continue
        if turn.meta is not None:
            continue
        if turn.role is Role.ASSISTANT:
            last_answer = turn.content or last_answer
            continue
        if turn.role is Role.TOOL:
            worked = True
            continue
        text = strip_pasted(turn.content)
        if drafts and not worked and not last_answer and answered and \
                len(drafts[-1]["text"]) < 4000:
            # Two messages in a row before the agent answered are one request (up to a
            # bound, so a log of thousands of unanswered messages stays linear).
            previous = drafts[-1]
            previous["text"] = (previous["text"] + "\n" + text).strip()
            kind = classify(previous["text"], "")
            if previous.get("reply"):
                kind = FOLLOW_UP  # the answer to the agent's question, sent in two messages
            if previous["kind"] != FOLLOW_UP or kind != FOLLOW_UP:
                previous["kind"] = kind if kind != FOLLOW_UP else previous["kind"]
            previous["ops"] = tuple(dict.fromkeys(previous["ops"] + _operations(text)))
            previous["forbids"] = previous["forbids"] or bool(_FORBIDS_CHECKS.search(text))
            if previous["kind"] != FOLLOW_UP:
                last_main = previous
            continue
        kind = classify(text, last_answer)
        reply = last_main is not None and _asks_to_choose(last_answer) and not _ACCEPTS.match(text)
        if reply and kind == CHANGE:
            # The agent asked how the request should be done ("Should stderr be a separate
            # port, or merged into stdout?"): the answer settles its details, no new request.
            kind = FOLLOW_UP
        if kind == FOLLOW_UP and not drafts and len(text.split()) > 12:
            kind = CHANGE  # a first message that describes a problem asks to solve it
        elif kind == FOLLOW_UP and not drafts and len(text.split()) >= 3 and \
                not _GREETING.match(text) and not _ACK.match(text):
            # A short first message that neither greets nor orders a change in words the
            # ledger knows ("Help me pick a web framework", "Read the package.json file")
            # still asks for something: judged by the answer, like a question.
            kind = QUESTION
        main = last_main
        if main is not None and kind != FOLLOW_UP and _restates(text, main["text"]):
            main["restated"].append(turn.index)
            kind = FOLLOW_UP
        elif main is not None and (worked or last_answer) and kind != QUESTION and (
                _REJECTS.search(text) or _ERROR_REPORT.match(turn.content)):
            main["rejected"].append(turn.index)
            kind = FOLLOW_UP
        elif kind == CHANGE:
            # The same order as an earlier request, not the latest: that request was left
            # undone and is asked for again (its work abandoned, the session reset). This one
            # is judged on its own; the earlier one was restated. A routine operation asked
            # for again after more work ("commit and push" once per piece of work) is a new
            # request: whether the first one was done, its own commands show.
            earlier = next((d for d in reversed(drafts[-_RESTATE_LOOKBACK:])
                            if d is not main and d["kind"] == kind and d["text"]
                            and _restates(text, d["text"])), None) \
                if len(_tokens(text)) >= 6 else None  # "yes please" again accepts another offer
            if earlier is not None:
                earlier["restated"].append(turn.index)
        ops = _operations(text)
        drafts.append({"turn": turn.index, "kind": kind, "text": text, "restated": [],
                       "rejected": [], "ops": ops, "forbids": bool(_FORBIDS_CHECKS.search(text)),
                       "reply": reply})
        if kind != FOLLOW_UP:
            last_main = drafts[-1]
        last_answer = ""
        worked = False
    last_index = turns[-1].index if turns else 0
    requests: list[Request] = []
    mains = [i for i, d in enumerate(drafts) if d["kind"] != FOLLOW_UP]
    for position, i in enumerate(mains):
        d = drafts[i]
        following = mains[position + 1] if position + 1 < len(mains) else None
        end = drafts[following]["turn"] - 1 if following is not None else last_index
        forbids = d["forbids"] or any(f["forbids"] for f in drafts[i + 1:following])
        requests.append(Request(d["turn"], d["kind"], d["text"], end, tuple(d["restated"]),
                                tuple(d["rejected"]), d["ops"], forbids))
    # Follow-ups before any main request (a greeting, "clear") are kept as such.
    for d in drafts:
        if d["kind"] == FOLLOW_UP:
            requests.append(Request(d["turn"], FOLLOW_UP, d["text"], d["turn"]))
    return tuple(sorted(requests, key=lambda r: r.turn))
