"""Every secret family in every field reaches no output.

For each family a session is generated with one of its secrets in every field a transcript can
carry: the file name, session id, working folder, git branch, model, version, timestamps, a
user and an assistant message, a shell command and its output, a file path, a written file's
content (shown as a diff), a nested MCP tool input (shown as JSON, so the secret follows a
`\\n` escape) and a line that breaks parsing. Then every output is grepped for the secret:
report.html, report.json and stdout of `report`; stdout of `check` in each format; every file
and folder name `batch` writes. The home folder must be shown as `~` everywhere too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_cli
from sessionkit import claude_jsonl

# (family, a secret of that family, fragments of it that must not be shown). Fragments are
# letters and digits only, so HTML or JSON escaping cannot hide a leak from the grep.
GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
FAMILIES = [
    ("github-token", GH, ["a1B2c3D4e5F6g7H8"]),
    ("anthropic-key", "sk-ant-api03-" + "Qx7Vb2Lm9Zt4" * 4, ["Qx7Vb2Lm9Zt4"]),
    ("aws-access-key", "AKIAQX7VB2LM9ZT4WK3J", ["QX7VB2LM9ZT4WK3J"]),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpQIBAAKCAQEAqX7Vb2Lm9Zt4Wk3Jx8\n"
                    "Qx7Vb2Lm9Zt4Wk3JMIIEpQIBAAKCAQEAs\n-----END RSA PRIVATE KEY-----",
     ["MIIEpQIBAAKCAQEA", "Qx7Vb2Lm9Zt4Wk3J"]),
    ("azure-key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
                  "Qx7Vb2Lm9Zt4Wk3JQx7Vb2Lm9Zt4Wk3J==;EndpointSuffix=core.windows.net",
     ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("azure-sas-signature", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r"
                            "&sig=Qx7Vb2Lm9Zt4Wk3J%2BQx7Vb2Lm%3D", ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("discord-webhook", "https://discord.com/api/webhooks/123456789012345678/"
                        "Qx7Vb2Lm9Zt4Wk3JQx7Vb2Lm9Zt4Wk3J_-abc", ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("stripe-webhook-secret", "whsec_Qx7Vb2Lm9Zt4Wk3JQx7Vb2Lm", ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("url-credentials", "https://deploy:Qx7Vb2Lm/9Zt4Wk3J@git.example.com/r.git",
     ["Qx7Vb2Lm", "9Zt4Wk3J"]),
    ("url-credentials", "redis://:Qx7Vb2Lm9Zt4Wk3J@cache.internal:6379/0", ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("secret-assignment", "SECRET_KEY=Qx7Vb2Lm9Zt4Wk3J", ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("secret-assignment", "ENCRYPTION_KEY=Qx7Vb2Lm9Zt4Wk3J", ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("secret-assignment", "DJANGO_SECRET_KEY=Qx7Vb2Lm9Zt4Wk3J", ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("secret-assignment", "MASTER_KEY=Qx7Vb2Lm9Zt4Wk3J", ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("secret-assignment", 'password = "Qx7Vb2Lm 9Zt4Wk3J horse"', ["Qx7Vb2Lm", "9Zt4Wk3J"]),
    ("cli-password", "curl -u deploy:Qx7Vb2Lm9Zt4Wk3J https://api.example.com",
     ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("cli-password", "mysql -u root -pQx7Vb2Lm9Zt4Wk3J appdb", ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("cli-password", "sshpass -p Qx7Vb2Lm9Zt4Wk3J ssh deploy@host", ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("docker-auth", '{"auths": {"registry.example.com": {"auth": "Qx7Vb2Lm9Zt4Wk3JQx7V="}}}',
     ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("netrc-password", "machine api.example.com login deploy password Qx7Vb2Lm9Zt4Wk3J",
     ["Qx7Vb2Lm9Zt4Wk3J"]),
    ("cookie", "Cookie: sessionid=Qx7Vb2Lm9Zt4Wk3J; csrftoken=Wk3JQx7Vb2Lm9Zt4",
     ["Qx7Vb2Lm9Zt4Wk3J", "Wk3JQx7Vb2Lm9Zt4"]),
    ("authorization-header", "Authorization: Bearer Qx7Vb2Lm9Zt4Wk3J", ["Qx7Vb2Lm9Zt4Wk3J"]),
]


def _session(secret: str, home: Path) -> str:
    """A Claude Code session with `secret` in every field."""
    flat = " ".join(secret.split())  # for one-line fields
    text = claude_jsonl([
        {"user": f"fix the deploy; the credential is {secret}"},
        {"tool": "Read", "input": {"file_path": f"{home}/proj/{flat}/config.py"},
         "output": "x = 1"},
        {"tool": "Bash", "input": {"command": f"deploy --env prod # {flat}"},
         "output": f"using {secret}\nError: exit 1", "error": True},
        {"tool": "Bash", "input": {"command": f"deploy --env prod # {flat}"},
         "output": f"using {secret}\nError: exit 1", "error": True},
        {"tool": "mcp__vault__store", "input": {"payload": {"note": f"line one\n{secret}"}},
         "output": "stored"},
        {"tool": "Write", "input": {"file_path": f"{home}/proj/settings.env",
                                    "content": f"# settings\n{secret}\nDEBUG=0\n"},
         "output": "File created"},
        {"tool": "Edit", "input": {"file_path": f"{home}/proj/app.py", "old_string": "a",
                                   "new_string": "b"},
         "output": "String to replace not found", "error": True},
        {"assistant": f"Deployed with {secret}."},
    ], cwd=f"{home}/proj/{flat}", session_id=f"sess-{flat}")
    records = [json.loads(line) for line in text.splitlines()]
    for record in records:
        record["gitBranch"] = f"feature/{flat}"
        record["version"] = f"2.1.1 {flat}"
        record["timestamp"] = record["timestamp"] + f" {flat}"
        message = record.get("message")
        if isinstance(message, dict) and message.get("role") == "assistant":
            message["model"] = f"claude-{flat}"
    lines = [json.dumps(r) for r in records]
    lines.insert(3, "{not json " + flat)  # a parse problem whose context holds the secret
    return "\n".join(lines) + "\n"


def _file_name(secret: str) -> str:
    """The secret as a file name when it can be one (one line, no `/`, not too long)."""
    if any(c.isspace() or c in "/\"'" for c in secret) or len(secret) > 150:
        return "session"
    return "s-" + secret


def _everything_under(folder: Path) -> str:
    parts = []
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            parts.append(name)
            path = Path(root) / name
            if path.is_file():
                parts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


def _assert_clean(output: str, fragments: list[str], home: Path, where: str) -> None:
    for fragment in fragments:
        assert fragment not in output, f"{fragment} leaks in {where}"
    assert str(home) not in output, f"the home folder is shown in {where}"


@pytest.mark.parametrize("family,secret,fragments", FAMILIES,
                         ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(FAMILIES)])
def test_no_family_leaks_from_any_field_into_any_output(tmp_path, capsys, isolated_home,
                                                         family, secret, fragments):
    sessions = isolated_home / "sessions"
    sessions.mkdir()
    session = sessions / f"{_file_name(secret)}.jsonl"
    session.write_text(_session(secret, isolated_home), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()

    code, out, err = run_cli(["report", str(session), "-o", "r"], work, capsys)
    assert code == 0, err
    report = _everything_under(work / "r")
    _assert_clean(report + out + err, fragments, isolated_home, "report")
    assert f"[redacted: {family}]" in report, "the typed marker names the family"
    data = json.loads((work / "r" / "report.json").read_text(encoding="utf-8"))
    assert data["findings"], "the session must cite turns, so excerpts are shown"

    for fmt in ("text", "json", "github"):
        code, out, err = run_cli(["check", str(session), "--format", fmt, "--exit-zero"], work,
                                 capsys)
        assert code == 0, err
        _assert_clean(out + err, fragments, isolated_home, f"check --format {fmt}")

    code, out, err = run_cli(["batch", str(sessions), "-o", "b"], work, capsys)
    assert code == 0, err
    _assert_clean(_everything_under(work / "b") + out + err, fragments, isolated_home, "batch")


def test_no_redact_keeps_the_secret_in_every_field(tmp_path, capsys, isolated_home):
    """The matrix above cannot pass by dropping the fields: with --no-redact they are shown."""
    _, secret, fragments = FAMILIES[0]
    session = tmp_path / "s.jsonl"
    session.write_text(_session(secret, isolated_home), encoding="utf-8")
    code, _, err = run_cli(["report", "s.jsonl", "-o", "r", "--no-redact"], tmp_path, capsys)
    assert code == 0, err
    data = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    strip = data["overview"]["session"]
    for value in (data["session"]["id"], data["session"]["started_at"], strip["branch"],
                  strip["model"], strip["version"], strip["project"]):
        assert fragments[0] in value
    html = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert html.count(fragments[0]) >= 8


# -- every string field of real sessions, whatever the harness -------------------------------

from conftest import CORPUS, needs_corpus  # noqa: E402

ROTATION = [(secret, fragments[0]) for _, secret, fragments in FAMILIES
            if "\n" not in secret]
FORMATS = ["claude-code", "codex", "cline", "aider", "gemini", "gemini-stream", "pi", "specstory",
           "claude-export", "cursor-export", "mini-swe-agent", "swe-agent-traj", "plain-log",
           "terminal-log"]


def _smallest(folder: str):
    base = CORPUS / folder
    files = sorted((p for p in base.rglob("*") if p.is_file()), key=lambda p: (p.stat().st_size, p))
    return files[0] if files else None


def _seeded(value, counter=[0]):
    """`value` with a secret (in rotation) appended to every string in it."""
    if isinstance(value, str):
        counter[0] += 1
        return f"{value} {ROTATION[counter[0] % len(ROTATION)][0]}"
    if isinstance(value, dict):
        return {k: _seeded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_seeded(v) for v in value]
    return value


@needs_corpus
@pytest.mark.parametrize("folder", FORMATS)
def test_a_secret_in_every_string_of_a_real_session_reaches_no_output(tmp_path, capsys,
                                                                      isolated_home, folder):
    source = _smallest(folder) if (CORPUS / folder).is_dir() else None
    if source is None:
        pytest.skip(f"no {folder} session in the corpus")
    text = source.read_text(encoding="utf-8", errors="replace")
    session = tmp_path / f"seeded{source.suffix}"
    if source.suffix == ".jsonl":
        records = []
        for line in text.splitlines():
            try:
                records.append(json.dumps(_seeded(json.loads(line))))
            except ValueError:
                records.append(line)
        session.write_text("\n".join(records) + "\n", encoding="utf-8")
    elif source.suffix == ".json":
        session.write_text(json.dumps(_seeded(json.loads(text))), encoding="utf-8")
    else:  # text logs: a secret at the end of every line
        session.write_text("".join(f"{line} {ROTATION[i % len(ROTATION)][0]}\n"
                                   for i, line in enumerate(text.splitlines())), encoding="utf-8")
    fragments = [fragment for _, fragment in ROTATION]
    code, out, err = run_cli(["report", str(session), "-o", "r"], tmp_path, capsys)
    assert code == 0, err
    _assert_clean(_everything_under(tmp_path / "r") + out + err, fragments, isolated_home,
                  f"report of {source.name}")
    for fmt in ("text", "json", "github"):
        code, out, err = run_cli(["check", str(session), "--format", fmt, "--exit-zero"],
                                 tmp_path, capsys)
        _assert_clean(out + err, fragments, isolated_home, f"check --format {fmt}")
