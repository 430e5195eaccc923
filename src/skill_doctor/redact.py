"""Secret redaction for every piece of transcript text shown in a report or printed.

Sessions hold secrets (keys pasted into prompts, tokens echoed by commands, credentials in
URLs). Everything taken from a transcript is redacted by default before it reaches a report or
the terminal: each secret is replaced by a typed marker such as `[redacted: github-token]`, and
the home directory is shown as `~`. `--no-redact` turns this off.

The patterns match the shapes providers give their credentials (prefixes, lengths) and the
places secrets are assigned (`password=`, `*_TOKEN=`, `Authorization:`). False positives are
kept low on purpose: git SHAs, UUIDs, base64 of ordinary text, "token count 5", "password
policy" and code such as `password = getpass()` are left alone (tests/test_redact.py holds the
positive and negative samples). Redaction is idempotent: markers never match a pattern.
"""

from __future__ import annotations

import os
import re
from typing import Callable

# A secret value in an assignment: no quotes, spaces or separators; not a `$VAR` / `${{ }}`
# reference; not all digits ("max_tokens=4096"); not a call or an identifier followed by one.
_VALUE = r"(?P<s>(?![0-9]+(?![^\s'\"&;,]))(?!\$)[^\s'\"&;,()\[\]{}<>`]{4,})(?![(\w])"

# Key names: ends in one of these words, so `GITHUB_TOKEN`, `client_secret`, `db_password`
# match while `tokens`, `tokenizer` and `password_policy` do not.
_KEY = (r"[A-Za-z0-9_.\-]*?(?:password|passwd|pwd|passphrase|secret|token|api[_\-]?key"
        r"|access[_\-]?key|auth[_\-]?key|private[_\-]?key|credentials?)")

# (marker name, pattern). Each pattern's `s` group is the secret (the whole match when absent).
# Order matters: specific provider shapes first, then the generic assignment rules.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(rx)) for name, rx in (
    ("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?"
                    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)"),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
    ("gitlab-token", r"\bgl(?:pat|dt|ptt|rt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_\-]{20,}"),
    ("slack-token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"),
    ("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}"),
    ("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
    ("google-oauth-token", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("stripe-key", r"\b(?:[rs]k|pk)_(?:live|test)_[0-9A-Za-z]{20,}"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi-token", r"\bpypi-AgE[A-Za-z0-9_\-]{40,}"),
    ("sendgrid-key", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    ("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    # With a scheme anything goes; without one the value must hold a digit, so prose such as
    # "Authorization: required" stays.
    ("authorization-header",
     r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+"
     r"(?P<s>(?!\[redacted)[^\s\"'`]{8,})"),
    ("authorization-header",
     r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
     r"(?P<s>(?!\[redacted)(?![a-z]+\s)(?=[^\s\"'`]*\d)[^\s\"'`]{8,})"),
    ("url-credentials", r"(?i)\b[a-z][a-z0-9+.\-]*://(?P<s>[^/\s:@\"'<>]+:[^/\s@\"'<>]+)@"),
    ("secret-assignment", rf"(?i)(?<![A-Za-z0-9])(?:{_KEY})[\"']?\s*[:=]\s*[\"']?{_VALUE}"),
    ("secret-flag", r"(?i)--(?:password|token|api-key|secret)[ =][\"']?" + _VALUE),
))


def _replace(name: str) -> Callable[[re.Match[str]], str]:
    marker = f"[redacted: {name}]"

    def sub(match: re.Match[str]) -> str:
        if "s" in match.re.groupindex and match.group("s") is not None:
            start, end = match.span("s")
            whole_start = match.start()
            text = match.group(0)
            return text[: start - whole_start] + marker + text[end - whole_start:]
        return marker
    return sub


_SUBS = tuple((pattern, _replace(name)) for name, pattern in _PATTERNS)


def home_dir() -> str | None:
    """The current user's home folder, or None when it is unknown or too short to fold."""
    home = os.path.expanduser("~").rstrip("/\\")
    if not home or home == "~" or len(home) < 2:
        return None
    return home


def fold_home(text: str, home: str | None) -> str:
    """`home` (and anything under it) shown as `~`; `/home/al` never matches `/home/alice`."""
    if not home:
        return text
    return re.sub(re.escape(home) + r"(?=[/\\]|$|[^\w.\-])", "~", text)


def redact(text: str, home: str | None = None) -> str:
    """The text with every secret replaced by a typed marker and the home folder by `~`.

    `home` defaults to the current user's home folder.
    """
    if not text:
        return text
    for pattern, sub in _SUBS:
        text = pattern.sub(sub, text)
    return fold_home(text, home if home is not None else home_dir())


def kinds() -> tuple[str, ...]:
    """The marker names, for documentation and tests."""
    return tuple(dict.fromkeys(name for name, _ in _PATTERNS))


# Characters that change how text around them is shown: bidirectional overrides and isolates
# (a file name can read backwards), terminal escape sequences, and C0/C1 controls that are not
# layout. Each becomes a visible `[U+XXXX]` (no markup characters, so it is also safe to apply
# to a rendered HTML page), so nothing is hidden or reordered.
_CONTROLS = re.compile("[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f"
                       "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible_controls(text: str) -> str:
    """`text` with bidi controls and non-layout control characters shown as `[U+XXXX]`."""
    return _CONTROLS.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)
