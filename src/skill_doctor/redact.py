"""Secret redaction for every piece of transcript text shown in a report or printed.

Sessions hold secrets (keys pasted into prompts, tokens echoed by commands). Excerpts are
redacted by default: each match is replaced by a typed marker such as
`[redacted: github-token]`, and the home directory is shown as `~`.
"""

from __future__ import annotations

import os
import re

# Each pattern's `s` group is the secret (the whole match when there is no such group).
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(rx)) for name, rx in (
    ("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)"),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai-key", r"\bsk-(proj-|svcacct-)?[A-Za-z0-9_\-]{20,}"),
    ("github-token", r"\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("aws-access-key", r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    ("stripe-key", r"\b[rs]k_(live|test)_[0-9A-Za-z]{20,}"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("authorization-header", r"(?i)\bauthorization:\s*(?:(?:bearer|basic|token)\s+)?(?P<s>[^\s\"'`]{8,})"),
    ("url-credentials", r"://(?P<s>[^/\s:@\"']+:[^/\s@\"']+)@"),
    ("secret-assignment", r"(?i)\b(?:password|passwd|pwd|secret|token|api_key|apikey)\s*[=:]\s*"
                          r"['\"]?(?!\[redacted)(?P<s>[^\s'\"&;,]{4,})"),
    ("secret-assignment", r"\b[A-Z][A-Z0-9_]*_(?:TOKEN|SECRET|KEY|PASSWORD)=['\"]?(?!\[redacted)(?P<s>[^\s'\"&;]{4,})"),
))


def _replace(name: str):
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


def redact(text: str, home: str | None = None) -> str:
    """The text with every secret replaced by a typed marker and the home folder by `~`."""
    for pattern, sub in _SUBS:
        text = pattern.sub(sub, text)
    home = home if home is not None else os.path.expanduser("~")
    if home and home not in ("/", "~") and len(home) > 1:
        text = text.replace(home.rstrip("/") + "/", "~/")
    return text
