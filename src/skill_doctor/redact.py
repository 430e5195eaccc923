"""What may leave skill-doctor: secret redaction and visible characters, at every output boundary.

Sessions hold secrets (keys pasted into prompts, tokens echoed by commands, credentials in
URLs) and text meant to fool whoever reads them (terminal escape sequences, bidi overrides,
zero-width characters, forged CI workflow commands). Nothing taken from a transcript reaches
an output except through one of the boundary functions here, each applied once to the whole
output of its kind:

- `scrub_page(doc)` for report.html and the batch index: every text node and attribute of the
  finished page; the page's text is joined in document order before it is redacted, so a secret
  laid out over several nodes (a private key in a diff, one line per row) is replaced whole;
- `scrub_data(value)` for report.json, summary.jsonl, aggregate.json and `check --format json`:
  every string (keys included) of the data before it is serialised;
- `terminal(line)` for every line printed to a terminal or a CI log (stdout and stderr).

Each of them redacts secrets (unless `--no-redact`) and makes control and invisible characters
visible as `[U+XXXX]` (always). Text cut for display is cut at a token boundary
(text.py), and cutters redact before they cut, so no part of a secret survives a cut.

Redaction replaces each secret by a typed marker such as `[redacted: github-token]` and shows
the home directory as `~`. The patterns match the shapes providers give their credentials
(prefixes, lengths) and the places secrets are assigned (`password=`, `*_SECRET_KEY=`,
`Authorization:`, `curl -u`, `.netrc`). A provider prefix is recognised after any
non-alphanumeric character, an `_`, a JSON escape (`\\n`, `\\u0022`) or a URL escape (`%0A`),
which is how nested tool inputs and MCP arguments are shown. False positives are kept low on
purpose: git SHAs, UUIDs, base64 of ordinary text, "token count 5", "password policy" and code
such as `password = getpass()` are left alone (tests/test_redact.py holds the positive and
negative samples). Redaction is idempotent: markers never match a pattern.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator

from .patterns import compile_later

_END = r"(?![A-Za-z0-9])"

# A secret value in an assignment: no quotes, spaces, backslashes or separators; not a `$VAR`
# / `${{ }}` reference; not all digits ("max_tokens=4096"); not a call or an identifier
# followed by one.
_LITERAL = r"(?:[0-9]+|None|null|nil|true|false|undefined|NULL|True|False|\*+)"
_VALUE = (rf"(?P<s>(?!{_LITERAL}(?![^\s'\"&;,\\]))(?!\$)(?!\[redacted)"
          r"[^\s'\"&;,()\[\]{}<>`\\]{4,})(?![(\w])")
# A quoted value may hold spaces ("correct horse battery"); the quote may itself be escaped
# (`\"`, as in JSON shown inside JSON).
_QUOTED = (r"(?:[bBrRuU]{1,2}(?=[\"']))?(?P<q>\\?[\"'])(?P<s>(?!\$)(?!\[redacted)[^\"'\n\\]{1,256}?)"
           r"(?P=q)")

# Key names: ends in one of these words, so `GITHUB_TOKEN`, `client_secret`, `db_password`,
# `DJANGO_SECRET_KEY` match while `tokens`, `tokenizer`, `password_policy` and `sort_key` do not.
_KEY_PREFIXES = ("api", "access", "auth", "private", "secret", "encryption", "decryption", "master",
                 "signing", "session", "client", "app", "account", "storage", "service", "hmac",
                 "jwt", "aes", "crypto", "license", "webhook", "enc", "consumer", "bot")
_KEY = ("(?:password|passwd|pwd|passphrase|secret|token|credentials?|(?<=_)auth|(?:"
        # `.` too: Java properties and YAML paths (`secret.key=`, `api.key:`).
        + "|".join(f"(?<={w}{sep})" for w in _KEY_PREFIXES for sep in ("", "_", "-", "."))
        + ")key)")
# The words a key name ends in, for the fast scan that finds assignment candidates.
_KEY_WORDS = r"password|passwd|pwd|passphrase|secret|token|credential|key|auth"
# The key, its optional (possibly escaped) closing quote, and `=` or `:`.
_ASSIGN = rf"(?i)(?:{_KEY})(?:\\?[\"'])?(?:\s*(?::=|=>|[:=])\s*|%3[AD])"

# A command-line value: quoted (spaces allowed) or a bare word.
_ARG = r"""(?P<s>"[^"\n]{1,256}"|'[^'\n]{1,256}'|(?!\$)(?!\[redacted)[^\s"';|&`\\]{3,})"""
# The rest of a command line, up to a command separator.
_SAME_COMMAND = r"[^\n;|&]{0,200}?"  # bounded: a long line must not make a scan quadratic
# Whitespace, or a JSON-escaped line break (a .netrc shown inside a JSON string).
_WS = r"(?:[ \t\r\n]|\\[nrt]){1,16}"

_B64_LINE = r"[A-Za-z0-9+/=]{16,}"

# (marker name, pattern, trigger). Each pattern's `s` group is the secret (the whole match when
# absent). Order matters: specific provider shapes first, then the generic assignment rules.
# A trigger (lower-case literals) makes a case-insensitive pattern cheap: the literals are
# found in the ASCII-lowered text with a fast case-sensitive scan, and the pattern is tried
# only where one of them starts (so the pattern must begin with one of them).
_PATTERN_SOURCES: tuple[tuple[str, str, str | None], ...] = (
    ("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
                    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", None),
    # The end of a key whose beginning was cut off (or lies outside a diff hunk): the base64
    # lines before it are found backwards (_key_tail).
    ("private-key", r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----", None),
    ("private-key", r"PuTTY-User-Key-File-\d+:[\s\S]*?(?:Private-MAC:\s*[0-9a-fA-F]+|\Z)", None),
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{20,}", None),
    ("openai-key", r"(?#start)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", None),
    ("github-token", r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})", None),
    ("gitlab-token", r"gl(?:pat|dt|ptt|rt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_\-]{20,}",
     None),
    ("slack-token", r"xox[abposre]-[A-Za-z0-9\-]{10,}", None),
    ("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{20,}",
     None),
    ("discord-webhook", r"(?i)https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v\d+/)?"
                        r"webhooks/\d+/[A-Za-z0-9_\-]{20,}", "http"),
    ("discord-token", r"(?#start)[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}",
     None),
    ("aws-access-key", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Za-z0-9])", None),
    ("google-api-key", r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])", None),
    ("google-oauth-token", r"ya29\.[0-9A-Za-z_\-]{20,}", None),
    ("stripe-key", r"(?:[rs]k|pk)_(?:live|test)_[0-9A-Za-z]{20,}", None),
    ("stripe-webhook-secret", r"whsec_[0-9A-Za-z+/=]{20,}", None),
    ("huggingface-token", r"hf_[A-Za-z0-9]{30,}", None),
    ("npm-token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", None),
    ("pypi-token", r"pypi-AgE[A-Za-z0-9_\-]{40,}", None),
    ("sendgrid-key", r"(?#start)SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", None),
    ("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])", None),
    ("api-token", r"(?#start)(?:gsk_[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{40,}"
                  r"|xai-[A-Za-z0-9]{40,}|tvly-[A-Za-z0-9\-]{20,}|lin_api_[A-Za-z0-9]{30,}"
                  r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|dapi[a-f0-9]{32}"
                  r"|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|sq0(?:atp|csp)-[0-9A-Za-z\-_]{22,}"
                  r"|gl(?:sa|c)_[A-Za-z0-9_+/=]{32,}|sntr[ysu]s?_[A-Za-z0-9_+/=]{40,}"
                  r"|ntn_[A-Za-z0-9]{40,}|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{30,}"
                  r"|dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}|ATATT3[A-Za-z0-9_\-=]{50,}"
                  r"|hvs\.[A-Za-z0-9_\-]{24,}|dckr_pat_[A-Za-z0-9_\-]{20,}"
                  r"|glrt-[A-Za-z0-9_\-]{20,}|AGE-SECRET-KEY-1[0-9A-Z]{50,}"
                  r"|SK[0-9a-f]{32}|key-[0-9a-z]{32})(?![A-Za-z0-9])", None),
    ("telegram-bot-token", r"(?#start)\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9])", None),
    # The start is checked in the pattern (after its literal, so the fast scan stays): a run of
    # "eyJ" must not be retried at every repeat when no dot follows.
    ("jwt", r"eyJ(?:(?<![A-Za-z0-9_\-]eyJ)|(?<=\\[nrtbf]eyJ))[A-Za-z0-9_\-]{8,}\.eyJ"
            r"[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", None),
    # What is left of a token some producer cut short (a note cut at 120 characters, a log that
    # truncated it): a distinctive prefix and the start of a token, then the end of the text,
    # a line, or an ellipsis.
    ("cut-token", r"(?<![A-Za-z0-9_\-])(?:gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt)-|xox[abposre]-|sk-ant-"
                  r"|sk-proj-|[rs]k_(?:live|test)_|whsec_|AKIA|ASIA|AIza|ya29\.|pypi-AgE"
                  r"|do[opr]_v1_|hvs\.|dckr_pat_)[A-Za-z0-9_\-]{4,}(?=…|\.\.\.|[ \t]*(?:\n|\Z))",
     None),
    # Azure: storage / service bus connection strings and shared access signatures.
    ("azure-key", r"(?i)(?<![A-Za-z0-9])(?:accountkey|sharedaccesskey|sharedsecret)\s*=\s*"
                  r"(?P<s>[A-Za-z0-9+/=%]{16,})", "accountkey|sharedaccesskey|sharedsecret"),
    ("azure-sas-signature", r"(?i)(?<![A-Za-z0-9])sig=(?P<s>[A-Za-z0-9%+/=_\-]{16,})", "sig="),
    # With a scheme anything goes; without one the value must hold a digit, so prose such as
    # "Authorization: required" stays.
    ("authorization-header",
     r"(?i)(?#start)(?:proxy-)?authorization(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?"
     r"(?:(?:bearer|basic|token|digest|negotiate|ntlm|apikey|sso-key)\s+"
     r"(?P<s>(?!\[redacted)[^\s\"'`\\]{8,})"
     # Lookaheads bounded: unbounded, a run of "authorization:" with no digit made every
     # trigger scan to the end of the run (quadratic).
     r"|(?P<t>(?!\[redacted)(?![a-z]{1,64}\s)(?=[^\s\"'`\\]{0,256}\d)[^\s\"'`\\]{8,}))",
     "proxy-authorization|authorization"),
    ("authorization-header", r"(?i)(?#start)bearer\s+(?P<s>(?!\[redacted)[A-Za-z0-9\-._~+/]{20,}=*)",
     "bearer"),
    ("api-key-header",
     r"(?i)(?#start)(?:x-api-key|x-auth-token|api-key|x-access-token|private-token"
     r"|x-goog-api-key|anthropic-api-key|openai-api-key)(?:\\?[\"'])?\s*:\s*(?:\\?[\"'])?"
     r"(?P<s>(?!\[redacted)(?!\$)[^\s\"'`\\]{8,})",
     "x-api-key|x-auth-token|api-key|x-access-token|private-token|x-goog-api-key"
     "|anthropic-api-key|openai-api-key"),
    ("cookie", r"(?i)(?#start)(?:set-)?cookie(?:\\?[\"'])?\s*:\s*(?:\\?[\"'])?"
               # The cookie's name is bounded: unbounded, a run of "cookie:" without "=" made
               # every trigger scan to the line's end (quadratic).
               r"(?P<s>(?!\[redacted)[^\s\"'`\\;=]{1,256}=[^\n\"'`\\]+)", "set-cookie|cookie"),
    # Credentials in a URL: `user:pw@`, `:pw@` (redis), passwords holding `/`. A port
    # (`host:8080/path@v1`) is not a password.
    ("url-credentials",
     r"(?<=[A-Za-z0-9])://(?P<s>[^/\s:@\"'<>\\]{0,128}:(?!\d{1,5}(?:[/?#\s\"'<>]|$))"
     r"(?!\[redacted)[^\s@\"'<>\\?#]{1,256})@(?=[A-Za-z0-9\[._\-])", None),
    ("docker-auth", r"(?i)(?:auth|identitytoken|registrytoken)\\?\"\s*:\s*\\?\""
                    r"(?P<s>[A-Za-z0-9+/=_\-.]{8,})\\?\"", "auth\"|auth\\\"|identitytoken|registrytoken"),
    # .netrc: `machine host login me password PW` (on one line or several).
    ("netrc-password", rf"(?i)(?<![A-Za-z0-9])(?:machine{_WS}[^\s\\]{{1,256}}|default)"
                       rf"(?:{_WS}(?:login|account|port){_WS}[^\s\\]{{1,256}}){{1,3}}{_WS}password{_WS}"
                       r"(?P<s>(?!\[redacted)[^\s\\]+)", "machine|default"),
    ("netrc-password", r"(?i)\n[ \t]*password[ \t]+(?P<s>(?!\[redacted)(?!\$)[^\s\\]{4,})"
                       r"[ \t]*(?=\n|$)", "\npassword|\n password|\n\tpassword|\n  password"),
    # Passwords on command lines: curl -u user:pw, mysql -pPW, sshpass -p PW and friends.
    ("cli-password", rf"(?i)(?<![A-Za-z0-9_])(?:curl|wget|http|https|xh)\b{_SAME_COMMAND}\s"
                     r"(?:-u\s*|--user[ =]|-a\s*|--auth[ =]|--http-password[ =]|--proxy-user[ =])"
                     r"""(?P<s>"[^"\n]*:[^"\n]*"|'[^'\n]*:[^'\n]*'|[^\s"':|;&]*:[^\s"'|;&]+)""",
     "curl|wget|http|xh"),
    ("cli-password", rf"(?i)(?<![A-Za-z0-9_])(?:mysql|mariadb){_SAME_COMMAND}\s-p(?!\s)" + _ARG,
     "mysql|mariadb"),
    ("cli-password", rf"(?i)(?<![A-Za-z0-9_])sshpass\b{_SAME_COMMAND}\s-p\s*" + _ARG, "sshpass"),
    ("cli-password", rf"(?i)(?<![A-Za-z0-9_])(?:mongo|mongosh|mongodump|mongorestore|redis-cli"
                     rf"|smbclient|psql|ldapsearch|ldapmodify){_SAME_COMMAND}\s"
                     r"(?:-p|-a|--password|--pass|-w|--pass=)\s*" + _ARG,
     "mongo|redis-cli|smbclient|psql|ldap"),
    ("cli-password", rf"(?i)(?<![A-Za-z0-9_])(?:docker|podman|buildah|skopeo|helm|oras)"
                     rf"\s+(?:registry\s+)?login\b{_SAME_COMMAND}\s(?:-p|--password)[ =]?\s*"
                     + _ARG, "docker|podman|buildah|skopeo|helm|oras"),
    ("cli-password", r"(?i)(?#start)-pass(?:in|out)?\s+pass:" + _ARG, "-pass"),
    # A connection string's password runs to its `;` (it may hold spaces).
    ("secret-assignment", r"(?i)(?#start)(?:password|pwd)\s*=\s*(?P<s>(?!\[redacted)"
                          r"[^;\n\"'\\]{1,256})(?=;)", "password|pwd"),
    ("secret-assignment", _ASSIGN + _QUOTED, _KEY_WORDS),
    ("secret-assignment", _ASSIGN + r"(?:\\?[\"'])?" + _VALUE, _KEY_WORDS),
    # `<password>PW</password>` and the like in XML configuration (Maven settings, Tomcat).
    ("secret-element", r"(?i)<(?P<tag>[\w.:-]{0,40}?(?:password|passwd|secret|token|apikey|api-key"
                       r"|api_key|credentials?)[\w.:-]{0,40})>(?P<s>(?!\[redacted)(?![$%{])[^<\s]{4,256})"
                       r"</(?P=tag)>", None),
    # The default given for a secret's variable: os.environ.get("DB_PASSWORD", "PW").
    # Each way in begins with "env" (`getenv` checked behind it), so "env" is its trigger.
    ("secret-default", rf"(?i)(?:environ\.get|(?<=get)env|env\.get|env\.fetch)\(\s*"
                       rf"(?:\\?[\"'])[\w.-]{{0,80}}?{_KEY}(?:\\?[\"'])\s*,\s*" + _QUOTED, "env"),
    # A .pgpass line: host:port:database:user:password (a database named by digits alone is
    # more likely a column of `file:line:col:` output).
    ("pgpass-password", r"(?m)^[^\s:#]{1,253}:(?:\d{1,5}|\*):(?!\d+:)[^\s:]{1,256}:[^\s:]{1,256}:"
                        r"(?P<s>(?!\[redacted)[^\s]{1,256})$", None),
    ("secret-flag", r"(?i)--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret"
                    r"|access-token|auth-token)[ =]" + _ARG, "--"),
    # Last: the rest of a token a terminal wrapped onto the next line, alone on that line
    # (letters and digits, both), after a token just redacted.
    ("wrapped-token", r"\[redacted: [a-z-]+\]\r?\n(?P<s>(?=[A-Za-z0-9_\-]*\d)"
                      r"(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{6,})(?=[ \t]*(?:\r?\n|\Z))",
     r"\[redacted: "),
)

# A pattern written with `(?#start)` must begin where a token may start (`_starts_token`). The
# check is made in code rather than as a lookbehind, so the pattern begins with its literal
# prefix, which the regex engine finds with a fast scan. Prefixes distinctive enough to mean a
# token wherever they are (`ghp_`, `sk-ant-`, `AKIA` + 16) need no such start: a token glued
# to a word or a number ("id=12ghp_...") is still one.
_ANCHORED = "(?#start)"
_PATTERNS: tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None], ...] = tuple(
    (name, compile_later(rx), compile_later(trigger) if trigger else None)
    for name, rx, trigger in _PATTERN_SOURCES)
_LOWER = {c: c + 32 for c in range(65, 91)}  # ASCII only: positions stay where they were


def kinds() -> tuple[str, ...]:
    """The marker names, for documentation and tests."""
    return tuple(dict.fromkeys(name for name, _, _ in _PATTERNS))


# The home folder folded as `~` when a session is graded on another machine (a batch's Dask
# worker): the submitting user's, so the pages read as they would from a local run. Per
# thread of execution, since one worker process grades several sessions at once.
_FOLDED_HOME: ContextVar[str | None] = ContextVar("folded_home", default=None)


@contextmanager
def folding_home(home: str | None) -> Iterator[None]:
    """Within the block, home_dir() is `home` ("": no home folder is folded; None: this
    machine's, as outside the block)."""
    if home is None:
        yield
        return
    token = _FOLDED_HOME.set(home)
    try:
        yield
    finally:
        _FOLDED_HOME.reset(token)


def home_dir() -> str | None:
    """The current user's home folder, or None when it is unknown or too short to fold."""
    folded = _FOLDED_HOME.get()
    if folded is not None:
        return folded or None
    return _home_for(os.environ.get("HOME"))


@lru_cache(maxsize=4)
def _home_for(env_home: str | None) -> str | None:
    # Keyed by $HOME, which is what expanduser reads first: asked once per string shown, the
    # lookup is otherwise a measurable share of writing a large report.
    home = os.path.expanduser("~").rstrip("/\\")
    if not home or home == "~" or len(home) < 2:
        return None
    return home


@lru_cache(maxsize=8)
def _home_pattern(home: str) -> re.Pattern[str]:
    # `/home/al` never matches `/home/alice`.
    return re.compile(re.escape(home) + r"(?=[/\\]|$|[^\w.\-])")


def fold_home(text: str, home: str | None) -> str:
    """`home` (and anything under it) shown as `~`."""
    if not home:
        return text
    return _home_pattern(home).sub("~", text)


# -- the redaction engine ----------------------------------------------------------------------
#
# One pass over a text per pattern. `spans` (optional) are the (start, end) offsets of pieces
# the text was joined from; they are moved with every replacement, so the pieces can be cut
# apart again afterwards: a secret that runs over several pieces is replaced by its marker in
# the first and removed from the others.


_HEX = frozenset("0123456789abcdefABCDEF")


def _starts_token(text: str, pos: int) -> bool:
    """Whether a provider token may start at `pos`: not inside a longer word, except after `_`,
    a JSON string escape (`\\n`, `\\t`, `\\u0022`) or a URL escape (`%0A`), which glue
    tokens to letters in the text people are shown."""
    if pos == 0 or not text[pos - 1].isascii() or not text[pos - 1].isalnum():
        return True
    if pos >= 2 and text[pos - 2] == "\\" and text[pos - 1] in "nrtbf":
        return True
    if pos >= 6 and text[pos - 6:pos - 4] == "\\u" and all(c in _HEX for c in text[pos - 4:pos]):
        return True
    return pos >= 3 and text[pos - 3] == "%" and text[pos - 2] in _HEX and text[pos - 1] in _HEX


def _matches(pattern: re.Pattern[str], trigger: re.Pattern[str] | None, text: str,
             lowered: str | None) -> Iterable[re.Match[str]]:
    if trigger is None or lowered is None:
        yield from pattern.finditer(text)
        return
    end = 0
    for hit in trigger.finditer(lowered):
        if hit.start() < end:
            continue
        match = pattern.match(text, hit.start())
        if match is not None:
            end = match.end()
            yield match


def _apply(pattern: re.Pattern[str], trigger: re.Pattern[str] | None,
           marker_for: Callable[[re.Match[str]], tuple[int, int, str]], text: str,
           lowered: str | None, spans: list[list[int]] | None, anchored: bool = False) -> str:
    pieces: list[str] = []
    last = 0
    edits: list[tuple[int, int, int]] = []  # (start, end, length of the replacement)
    for match in _matches(pattern, trigger, text, lowered):
        if anchored and not _starts_token(text, match.start()):
            continue
        start, end, marker = marker_for(match)
        if start < last:
            continue
        pieces.append(text[last:start])
        pieces.append(marker)
        edits.append((start, end, len(marker)))
        last = end
    if not edits:
        return text
    pieces.append(text[last:])
    if spans is not None:
        for span in spans:
            span[0], span[1] = _moved(span[0], edits), _moved(span[1], edits)
    return "".join(pieces)


def _moved(pos: int, edits: list[tuple[int, int, int]]) -> int:
    """`pos` after every edit (sorted, non-overlapping) was applied."""
    delta = 0
    for start, end, length in edits:
        if end <= pos:
            delta += length - (end - start)
        elif start < pos:  # inside a replaced secret: just after its marker
            return start + delta + length
        else:
            break
    return pos + delta


def _secret_marker(name: str) -> Callable[[re.Match[str]], tuple[int, int, str]]:
    marker = f"[redacted: {name}]"

    def where(match: re.Match[str]) -> tuple[int, int, str]:
        for group in ("s", "t"):
            if group in match.re.groupindex and match.group(group) is not None:
                return match.start(group), match.end(group), marker
        return match.start(), match.end(), marker
    return where


# The base64 lines before an `-----END ... PRIVATE KEY-----`, read backwards: each line (real
# or JSON-escaped line end, optional diff prefix) reversed.
_KEY_TAIL = compile_later(r"(?:[+\- ]?(?:\n\r?|n\\(?:r\\)?)[A-Za-z0-9+/=]{16,})+")


def _key_tail(match: re.Match[str]) -> tuple[int, int, str]:
    start = match.start()
    window = match.string[max(0, start - 8192):start][::-1]
    back = _KEY_TAIL.match(window)
    return start - (back.end() if back else 0), match.end(), "[redacted: private-key]"


def _home_marker(match: re.Match[str]) -> tuple[int, int, str]:
    return match.start(), match.end(), "~"


_MARKERS = tuple((pattern, trigger, _key_tail if pattern.pattern.startswith("-----END")
                  else _secret_marker(name), _ANCHORED in pattern.pattern)
                 for name, pattern, trigger in _PATTERNS)


# The only characters whose lower case is ASCII or longer than one character: where neither
# is in a text, str.lower() leaves every position where it was and lowers the ASCII letters as
# `_LOWER` does (other letters it changes stay non-ASCII, and the triggers are ASCII literals),
# at many times the speed of translate().
_LOWER_MOVES = ("\u0130", "\u212a")


def _lowered(text: str) -> str:
    return text.translate(_LOWER) if any(c in text for c in _LOWER_MOVES) else text.lower()


def _redact(text: str, home: str | None, spans: list[list[int]] | None = None) -> str:
    lowered = _lowered(text)
    for pattern, trigger, marker_for, anchored in _MARKERS:
        redacted = _apply(pattern, trigger, marker_for, text, lowered, spans, anchored)
        if redacted is not text:  # positions moved: the lowered copy must follow
            text, lowered = redacted, _lowered(redacted)
    if home:
        text = _apply(_home_pattern(home), None, _home_marker, text, None, spans)
    return text


# What can stand between a key and its value, or inside a token, without being seen: colour
# codes and other terminal escape sequences, zero-width characters, the soft hyphen.
_HIDERS = compile_later(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,256}(?:\x07|\x1b\\)|\x1b[@-_]"
                     r"|[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]")
# Separators percent-encoded inside a key's name (`api%5Fkey`, `secret%2Ekey`).
_PCT_SEPARATOR = compile_later(r"%(?:5[Ff]|2[Ee]|2[Dd])")
_PCT_DECODED = {"5f": "_", "2e": ".", "2d": "-"}


def _unhidden(text: str) -> str:
    """The text without what can hide a secret from the patterns: terminal escapes, invisible
    characters, and separators percent-encoded in key names."""
    text = _HIDERS.sub("", text)
    return _PCT_SEPARATOR.sub(lambda m: _PCT_DECODED[m.group()[1:].lower()], text) \
        if "%" in text else text


def _may_hide(text: str) -> bool:
    return _HIDERS.search(text) is not None or ("%" in text
                                                 and _PCT_SEPARATOR.search(text) is not None)


def redact(text: str, home: str | None = None) -> str:
    """The text with every secret replaced by a typed marker and the home folder by `~`.

    `home` defaults to the current user's home folder ("" folds nothing). A secret whose key
    and value are parted by colour codes, with a zero-width character or a soft hyphen inside
    it, or whose key name has its separators percent-encoded (`api%5Fkey=`), is found too:
    when the text without those shows more secrets, that text, redacted, is the result (the
    hidden characters and encodings are lost with it, where a secret was at stake).
    """
    if not text:
        return text
    return redact_pieces([text], home)[0]


def redact_pieces(pieces: list[str], home: str | None = None) -> list[str]:
    """`pieces` redacted as the one text they make when joined by line ends, then cut apart
    again: a secret laid out over several pieces (a key in a diff) is replaced whole. As in
    `redact`, colour codes and invisible characters cannot hide a secret."""
    home = home if home is not None else home_dir()
    out = _redact_joined(pieces, home)
    if any(_may_hide(piece) for piece in pieces):
        plain = _redact_joined([_unhidden(piece) for piece in pieces], home)
        if sum(p.count("[redacted: ") for p in plain) > sum(p.count("[redacted: ") for p in out):
            out = plain
    return out


def _redact_joined(pieces: list[str], home: str | None) -> list[str]:
    spans: list[list[int]] = []
    pos = 0
    for piece in pieces:
        spans.append([pos, pos + len(piece)])
        pos += len(piece) + 1
    text = _redact("\n".join(pieces), home, spans)
    return [text[start:max(start, end)] for start, end in spans]


# -- visible characters ------------------------------------------------------------------------
#
# Characters that change how the text around them is shown, or hide text: bidirectional
# overrides, marks and isolates (a file name can read backwards), terminal escape sequences and
# other C0/C1 controls, zero-width and other invisible characters (a hidden channel to a model
# that reads the report), line and paragraph separators, tag characters, interlinear
# annotations and fillers that render as nothing. Each becomes a visible `[U+XXXX]` (no markup
# characters, so it is also safe on a rendered HTML page). Tab, line feed and carriage return
# are layout on a page; on a terminal line `terminal()` shows line feed and carriage return too.
_INVISIBLE = ("\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u034f\u061c"
              "\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f"
              "\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff9-\ufffb"
              "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f"
              "\U000e0100-\U000e01ef")
# U+FE0E/U+FE0F (text or emoji presentation) are ordinary after a character; a run of them or
# one at the start of a text hides data as well as any other selector does.
_SELECTORS = "\ufe0e\ufe0f"
_STRAY_SELECTOR = f"(?:^|(?<=[{_SELECTORS}\ufe00-\ufe0d]))[{_SELECTORS}]"
_CONTROLS = compile_later(f"[{_INVISIBLE}]|{_STRAY_SELECTOR}")
_LINE_CONTROLS = compile_later(f"[{_INVISIBLE}\n\r]|{_STRAY_SELECTOR}")
# Every character either pattern replaces, as one class: a text holding none (nearly every
# text) is left as it is after one fast scan, where the alternation is tried at each position.
_MAY_SHOW = compile_later(f"[{_INVISIBLE}{_SELECTORS}]")
_MAY_SHOW_LINE = compile_later(f"[{_INVISIBLE}\n\r{_SELECTORS}]")


def _code_point(match: re.Match[str]) -> str:
    return f"[U+{ord(match.group()):04X}]"


def visible(text: str, *, line: bool = False) -> str:
    """`text` with control, bidi and invisible characters shown as `[U+XXXX]`; with `line`,
    line feed and carriage return too (one line of a terminal or CI log)."""
    if (_MAY_SHOW_LINE if line else _MAY_SHOW).search(text) is None:
        return text
    return (_LINE_CONTROLS if line else _CONTROLS).sub(_code_point, text)


def visible_controls(text: str) -> str:
    """`visible(text)` (the name the page renderer calls it by)."""
    return visible(text)


@lru_cache(maxsize=4096)
def _shown_cached(text: str, redact_secrets: bool, home: str | None) -> str:
    return visible(_redact(text, home) if redact_secrets else text)


def shown(text: str, redact_secrets: bool = True, home: str | None = None) -> str:
    """One string as it may be shown anywhere: redacted (unless asked not to), characters that
    hide or reorder text visible."""
    if not text:
        return text
    home = home if home is not None else home_dir()
    if len(text) <= 512:
        return _shown_cached(text, redact_secrets, home)
    return visible(_redact(text, home) if redact_secrets else text)


# -- the output boundaries ---------------------------------------------------------------------

# CI systems obey commands printed in a job's log: GitHub Actions `::name ...::` at the start
# of a line, Azure Pipelines `##vso[` and legacy `##[name]`, TeamCity service messages
# `##teamcity[` anywhere in one, GitLab's collapsible sections `section_start:` and
# `section_end:`.
_WORKFLOW_START = compile_later(r"^(\s*):")
_WORKFLOW_ANYWHERE = compile_later(r"##(?=\[|vso\[|teamcity\[)", re.IGNORECASE)
_GITLAB_SECTION = compile_later(r"(section_(?:start|end)):", re.IGNORECASE)


def terminal(text: str, redact_secrets: bool = True, *, command: bool = False) -> str:
    """One line as it may be printed to a terminal or CI log: redacted (unless asked not to),
    every control character visible (no escape sequence, no second line), and unable to start
    a CI workflow command. `command=True` is for the annotations skill-doctor itself writes
    (`check --format github`): their leading `::` is kept, the rest is treated the same."""
    text = shown(text, redact_secrets) if text else ""
    text = visible(text, line=True)
    text = _WORKFLOW_ANYWHERE.sub("#[U+0023]", text)
    text = _GITLAB_SECTION.sub(r"\1[U+003A]", text)
    if not command and text.lstrip().startswith("::"):
        text = _WORKFLOW_START.sub(r"\1[U+003A]", text, count=1)
    return text


def scrub_data(value: Any, redact_secrets: bool = True) -> Any:
    """JSON-shaped data with every string (keys too) as `shown()` makes it; for every JSON file
    and document skill-doctor writes."""
    return _scrub(value, redact_secrets, home_dir())


def _scrub(value: Any, redact_secrets: bool, home: str | None) -> Any:
    if isinstance(value, str):
        return shown(value, redact_secrets, home) if value else value
    if isinstance(value, dict):
        return {(shown(k, redact_secrets, home) if isinstance(k, str) and k else k):
                _scrub(v, redact_secrets, home) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(v, redact_secrets, home) for v in value]
    return value


def _unescape(text: str) -> str:
    """The inverse of dominate's escaping of text nodes (exactly, no other entity)."""
    return (text.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
            .replace("&amp;", "&"))


_OWN_TEXT = frozenset({"style", "script"})  # elements whose text is the page's own code


def _elements(root: Any) -> Iterable[Any]:
    """Every element below `root`, in document order (iterative: pages can be long)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if type(node).__name__ in _OWN_TEXT:
            continue
        children = getattr(node, "children", None)
        if children:
            stack.extend(reversed([c for c in children if hasattr(c, "children")]))


def scrub_page(doc: Any, redact_secrets: bool = True) -> str:
    """A dominate document rendered, with its text redacted as one text in document order and
    every attribute value redacted; characters that hide or reorder text are visible. The
    page's own CSS (a `style` element) and unescaped text are the page's, and are kept."""
    from dominate import util

    # (children list, index, whether it is a `text` node): dominate keeps a text child as a
    # plain string or a `text` node, both escaped when they were added.
    texts: list[tuple[list, int, bool]] = []
    attributes_shown: list[tuple[dict, str]] = []
    for element in _elements(doc):
        attributes = getattr(element, "attributes", None)
        if attributes:
            for key, value in attributes.items():
                if isinstance(value, str) and value and key != "style":
                    attributes_shown.append((attributes, key))
        if type(element).__name__ in _OWN_TEXT:
            continue
        children = element.children
        for i, child in enumerate(children):
            if isinstance(child, str):
                texts.append((children, i, False))
            elif isinstance(child, util.text) and child.escape:
                texts.append((children, i, True))
    if attributes_shown:
        # Every attribute value redacted in one pass over them all (each still its own piece,
        # but one scan per pattern instead of one per value), separately from the text.
        values = [attributes[key] for attributes, key in attributes_shown]
        if redact_secrets:
            values = redact_pieces(values)
        for (attributes, key), value in zip(attributes_shown, values):
            attributes[key] = visible(value)
    if texts:
        pieces = [_unescape(children[i].text if node else children[i])
                  for children, i, node in texts]
        if redact_secrets:
            pieces = redact_pieces(pieces)
        for (children, i, node), piece in zip(texts, pieces):
            if node:
                children[i].text = util.escape(visible(piece))
            else:
                children[i] = util.escape(visible(piece))
    return visible(doc.render(pretty=True))
