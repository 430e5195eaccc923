"""Secrets never reach a report or the terminal unless --no-redact says so.

Positive samples must become the typed marker; negative samples (text that looks a little like a
secret) must come through unchanged. Then the whole pipeline: a session full of secrets gives a
report.html, report.json and stdout without any of them, and the home folder shown as `~`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli as _run
from sessionkit import claude_jsonl
from skill_doctor.redact import fold_home, kinds, redact

GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
POSITIVE = [
    ("anthropic-key", "key sk-ant-api03-" + "Ab3_" * 10),
    ("openai-key", "OPENAI sk-proj-" + "x9Y8z7W6v5U4t3S2r1Q0" * 2),
    ("github-token", f"token {GH}"),
    ("github-token", "github_pat_11ABCDEFG0" + "abcdefghij" * 5),
    ("gitlab-token", "glpat-" + "abcdefghij0123456789"),
    ("slack-token", "xoxb-1234567890-0987654321-AbCdEfGhIjKl"),
    ("slack-webhook", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("aws-access-key", "AKIAIOSFODNN7EXAMPLE"),
    ("google-api-key", "AIzaSyA-1234567890abcdefghijklmnopqrstu"),
    ("stripe-key", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("huggingface-token", "hf_" + "abcdefghijklmnopqrstuvwxyzABCDEFGH"),
    ("npm-token", "npm_" + "abcdefghijklmnopqrstuvwxyz0123456789"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----"),
    ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA (cut off"),
    ("authorization-header", 'curl -H "Authorization: Bearer abcdef0123456789" https://api'),
    ("authorization-header", '{"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}'),
    ("url-credentials", "git clone https://alice:s3cretpw@example.com/repo.git"),
    ("url-credentials", "postgres://app:hunter2hunter@db:5432/main"),
    ("secret-assignment", "password=hunter22"),
    ("secret-assignment", 'DB_PASSWORD="correct-horse"'),
    ("secret-assignment", "export MY_API_TOKEN=abc123def456"),
    ("secret-assignment", "CLIENT_SECRET=zyxwvut987"),
    ("secret-assignment", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("secret-assignment", '{"api_key": "live-0123456789"}'),
    ("secret-assignment", "mysql --password=topsecret1 -u root"),
    ("secret-assignment", "SECRET_KEY=django-insecure-hunter99"),
    ("secret-assignment", "ENCRYPTION_KEY=zyxwvut-0123"),
    ("secret-assignment", "export DJANGO_SECRET_KEY=zyxwvut-4567"),
    ("secret-assignment", "MASTER_KEY: zyxwvut89ab"),
    ("secret-assignment", 'db_password = "correct horse battery"'),
    ("secret-assignment", "x\\npassword=hunter22"),  # after a JSON escape
    ("secret-assignment", '{\\"api_key\\": \\"live-0123456789\\"}'),  # JSON inside JSON
    ("github-token", f"echo done\\n{GH}"),  # after a JSON \n escape
    ("github-token", f"MY_{GH}"),  # after an underscore
    ("azure-key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
                  "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9v==;EndpointSuffix=x"),
    ("azure-sas-signature", "https://a.blob.core.windows.net/c/b?sv=2022-11-02&sp=r"
                            "&sig=abcDEF123%2Bxyz%3Dtopsecret456"),
    ("discord-webhook", "https://discord.com/api/webhooks/123456789012345678/"
                        "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdefghijkl"),
    ("discord-token", "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GaBcDe.abcdefghijklmnopqrstuvwxyz0123"),
    ("stripe-webhook-secret", "whsec_" + "a1B2c3D4e5F6g7H8i9J0k1L2"),
    ("url-credentials", "https://user:pa/ss0rd-hunter@example.com/x"),
    ("url-credentials", "redis://:hunter2pw@cache:6379/0"),
    ("cli-password", "curl -u alice:s3cretpw https://api.example.com"),
    ("cli-password", "curl -s --user 'bob:correct-horse x' https://x"),
    ("cli-password", "mysql -u root -ptopsecret1 db"),
    ("cli-password", "sshpass -p 'correct-horse x' ssh host"),
    ("docker-auth", '{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcjpwYXNzd29yZA=="}}}'),
    ("netrc-password", "machine api.example.com login me password hunter22"),
    ("netrc-password", "machine api.example.com\n  login me\n  password hunter22"),
    ("cookie", "Cookie: session=abc123def456; csrftoken=topsecret9"),
    ("cookie", '{"Cookie": "sid=topsecret9abc"}'),
    ("api-key-header", "curl -H 'x-api-key: live-0123456789abc' https://x"),
    ("telegram-bot-token", "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1 ok"),
    ("api-token", "GROQ gsk_" + "a1B2c3D4e5F6g7H8i9J0" * 3),
    ("google-oauth-token", "ya29.a0AfH6SMBx" + "abcdefghij" * 3),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmc" + "abcdefghij" * 5),
    ("sendgrid-key", "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABC"),
    ("digitalocean-token", "dop_v1_" + "0123456789abcdef" * 4),
    ("secret-flag", "tool --token abc123def456"),
    ("cut-token", "the last check still fails: curl -H x ghp_a1B2c3D4e5"),  # cut by a producer
    ("cut-token", "key AKIAIOSFOD…"),
    ("secret-assignment", "Server=db;User ID=sa;Password=correct horse 42;Encrypt=true"),
    ("secret-assignment", "https://x/login?user=me&password%3Dhunter22"),
    ("cli-password", "docker login -u me -p hunter22pw registry.example.com"),
    ("cli-password", "openssl enc -aes-256-cbc -pass pass:hunter22pw -in a"),
    ("authorization-header", "-H 'X-Token: Bearer abcdef0123456789abcdef0123'"),
    ("private-key", "+MIIEowIBAAKCAQEA1234567890abcdef\n+MIIEowIBAAKCAQEA1234567890abcdee\n"
                    "+-----END RSA PRIVATE KEY-----"),  # the end of a key whose start was cut
    ("secret-assignment", 'password := "hunter22pw"'),  # Go
    ("secret-assignment", "'db_password' => 'hunter22pw'"),  # PHP, Ruby
    ("secret-assignment", "SECRET_KEY = b'hunter22pw'"),  # a Python bytes literal
    ("secret-element", "<server><password>hunter22pw</password></server>"),
    ("secret-default", 'os.environ.get("DB_PASSWORD", "hunter22pw")'),
    ("secret-default", "ENV.fetch('API_TOKEN', 'hunter22pw')"),
    ("pgpass-password", "db.internal:5432:reporting:admin:hunter22pw"),
    ("wrapped-token", "GITHUB_TOKEN=ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8ab\nijklmnop1234\n"),
]

NEGATIVE = [
    "src/x.c:10:5:warning:unused",  # file:line:col: output, no .pgpass line
    "<token>$TOKEN</token>",  # a reference, not a value
    "max_tokens => 4096",
    "token count 5",
    "the password policy requires twelve characters",
    "max_tokens=4096",
    "MAX_TOKEN=4096",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "session 123e4567-e89b-12d3-a456-426614174000",
    "SGVsbG8sIHdvcmxkISBUaGlzIGlzIGp1c3QgYSBzZW50ZW5jZS4=",  # base64 of plain text
    "password = getpass()",
    "tokens = tokenize(text)",
    "tokenizer: bert-base-uncased",
    "SECRET_KEY=$SECRET_KEY",
    "password: ${{ secrets.DB_PASSWORD }}",
    "the token is valid for an hour",
    "ssh git@github.com:org/repo.git",
    "https://example.com/path?q=1",
    "Authorization: required",
    "task-queue sk-learn skeleton",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "docker run -u 1000:1000 img",
    "git push -u origin main",
    "http://localhost:8080/path@v1",
    "key-value store",
    "sort_key=lambda x: x",
    "primary_key=True",
    "session_key = None",
    "the cookie jar is empty",
    "disk-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "mysql -p db",
    "machine learning with a default password policy",
]


@pytest.mark.parametrize("kind,text", POSITIVE, ids=[f"{k}-{i}" for i, (k, _) in enumerate(POSITIVE)])
def test_secret_is_replaced_by_its_typed_marker(kind, text):
    out = redact(text, home="")
    assert f"[redacted: {kind}]" in out, out
    for token in ("Ab3_Ab3_", "x9Y8z7", GH[4:], "abcdefghij0123456789", "AKIAIOSFODNN7",
                  "hunter", "s3cretpw", "MIIEow", "b3BlbnNz", "abcdef0123456789",
                  "correct-horse", "abc123def456", "zyxwvut", "wJalrXUt", "dozjgNry",
                  "dXNlcjpw", "topsecret", "live-0123", "zyxwvut", "correct", "pa/ss0rd",
                  "hunter2pw", "Zm9vYmFy", "abcDEF123", "AbCdEfGh", "a1B2c3D4", "abc123def",
                  "AAHdqTcv", "0123456789abcdef", "MIIEowIBAAKCAQEA", "GaBcDe", "a1B2c3D4e5",
                  "IOSFOD"):
        assert token not in out


@pytest.mark.parametrize("text", NEGATIVE)
def test_ordinary_text_is_left_alone(text):
    assert redact(text, home="") == text


def test_every_marker_kind_has_a_positive_sample():
    sampled = {kind for kind, _ in POSITIVE}
    assert set(kinds()) - sampled <= {"google-oauth-token", "pypi-token", "sendgrid-key",
                                      "digitalocean-token", "secret-flag"}


def test_redaction_is_idempotent():
    for _, text in POSITIVE:
        once = redact(text, home="")
        assert redact(once, home="") == once


def test_home_folder_is_shown_as_tilde():
    assert fold_home("/home/al/proj/a.py and /home/al", "/home/al") == "~/proj/a.py and ~"
    assert fold_home("/home/alice/x", "/home/al") == "/home/alice/x"
    assert redact("open /home/al/.ssh/id_rsa", home="/home/al") == "open ~/.ssh/id_rsa"


SECRETS = {
    "user": f"deploy with {GH} please",
    "path": "/home/dev/proj/password=hunter22/a.py",
    "command": "curl -H 'Authorization: Bearer sekrit0123456789' https://x",
    "output": "AWS key AKIAIOSFODNN7EXAMPLE printed",
    "assistant": "I used postgres://app:pw12345678@db/main",
}
LEAKS = [GH, "hunter22", "sekrit0123456789", "AKIAIOSFODNN7EXAMPLE", "pw12345678"]


def _secret_session(home: Path) -> str:
    return claude_jsonl([
        {"user": SECRETS["user"]},
        {"tool": "Read", "input": {"file_path": SECRETS["path"]}, "output": "x = 1"},
        {"tool": "Bash", "input": {"command": SECRETS["command"]},
         "output": SECRETS["output"] + "\nError: exit 1", "error": True},
        {"tool": "Bash", "input": {"command": SECRETS["command"]},
         "output": SECRETS["output"] + "\nError: exit 1", "error": True},
        {"tool": "Edit", "input": {"file_path": f"{home}/proj/{GH}.py", "old_string": "a",
                                   "new_string": "b"}, "output": "String to replace not found",
         "error": True},
        {"assistant": SECRETS["assistant"]},
    ], cwd=f"{home}/proj/{GH}", session_id=f"sess-{GH}")




def test_reports_and_stdout_hold_no_secret_by_default(tmp_path, capsys, isolated_home):
    session = isolated_home / "sessions" / f"s-{GH}.jsonl"
    session.parent.mkdir()
    session.write_text(_secret_session(isolated_home))
    code, out, err = _run(["report", str(session), "-o", "r"], tmp_path, capsys)
    assert code == 0, err
    html = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    raw_json = (tmp_path / "r" / "report.json").read_text(encoding="utf-8")
    for leak in LEAKS:
        assert leak not in html and leak not in raw_json and leak not in out, leak
    assert str(isolated_home) not in html and str(isolated_home) not in raw_json
    data = json.loads(raw_json)
    assert data["session"]["source"] == "~/sessions/s-[redacted: github-token].jsonl"
    assert data["session"]["id"] == "sess-[redacted: github-token]"
    assert "[redacted: authorization-header]" in raw_json
    assert data["findings"], "the session should have findings with excerpts to redact"


def test_no_redact_shows_the_text_as_it_was(tmp_path, capsys, isolated_home):
    session = tmp_path / "s.jsonl"
    session.write_text(_secret_session(isolated_home))
    code, _, err = _run(["report", "s.jsonl", "-o", "r", "--no-redact"], tmp_path, capsys)
    assert code == 0, err
    raw_json = (tmp_path / "r" / "report.json").read_text(encoding="utf-8")
    assert GH in raw_json and "[redacted:" not in raw_json


def test_parse_error_context_and_message_are_redacted(tmp_path, capsys):
    session = tmp_path / "notes.txt"
    session.write_text(f"some notes\npassword=hunter22 and {GH}\nno turns here\n")
    code, out, _ = _run(["report", "notes.txt", "-o", "r"], tmp_path, capsys)
    assert code == 0
    data = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    assert data["status"] == "parse_error"
    html = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    for text in (html, json.dumps(data), out):
        assert "hunter22" not in text and GH not in text


def test_no_history_message_folds_the_home_folder(tmp_path, capsys, isolated_home):
    code, out, _ = _run(["report", str(isolated_home / "missing.jsonl"), "-o", "r"], tmp_path,
                        capsys)
    assert code == 0
    data = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    assert data["message"] == "No conversation history found: ~/missing.jsonl does not exist"
    assert str(isolated_home) not in out


def test_no_part_of_a_secret_survives_a_cut(tmp_path, capsys, monkeypatch):
    """Notes and excerpts cut at 80-200 characters are redacted whole first: a password cut
    off before its end, or a URL's password before its @host, is a string no pattern knows."""
    import json

    from conftest import run_cli
    from sessionkit import claude_jsonl

    monkeypatch.setenv("HOME", str(tmp_path))
    password = "Zq8vLm2Xr4Tp9Wn3Ks7Hd5Fb6Gc1Jy0"
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    # Each secret starts before a cut (120 characters for a failing check in a note, 160 for
    # compare's turn) and ends after it.
    check = ("cd /srv/app/reporting-service/backend/src && export LOG_LEVEL=debug && "
             f"DATABASE_URL=postgres://admin:{password}@db.internal:5432/reporting "
             "python -m pytest -q tests/test_models.py")
    clone = ("cd /srv/work/checkouts/reporting-service && GIT_TERMINAL_PROMPT=0 GIT_TRACE=1 "
             f"git clone --depth 1 --branch main https://dev:{token}@github.com/acme/reporting.git")
    steps = [{"user": "Fix the failing migration in app/models.py"},
             {"tool": "Edit", "input": {"file_path": "/home/dev/proj/app/models.py",
                                        "old_string": "a = 1", "new_string": "a = 2"},
              "output": "The file has been updated."},
             {"tool": "Bash", "input": {"command": clone}, "output": "Cloning into 'reporting'..."},
             {"tool": "Bash", "input": {"command": check},
              "output": "Exit code 1\nFAILED tests/test_models.py::test_migrate\n1 failed, 4 passed",
              "error": True},
             {"assistant": "All done: the migration is fixed and the tests pass."}]
    assert check.index(password) < 120 < check.index(password) + len(password)
    assert len("Bash ") + clone.index(token) < 160 < len("Bash ") + clone.index(token) + len(token)
    (tmp_path / "a.jsonl").write_text(claude_jsonl(steps), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(claude_jsonl(steps[:2] + steps[3:]), encoding="utf-8")
    outputs = []
    code, out, err = run_cli(["report", "a.jsonl", "-o", "r"], tmp_path, capsys)
    outputs += [out, err, (tmp_path / "r" / "report.json").read_text(encoding="utf-8"),
                (tmp_path / "r" / "report.html").read_text(encoding="utf-8")]
    for fmt in ("text", "github", "json"):
        outputs += list(run_cli(["check", "a.jsonl", "--format", fmt, "--exit-zero"],
                                tmp_path, capsys)[1:])
    code, out, err = run_cli(["compare", "b.jsonl", "a.jsonl", "-o", "c"], tmp_path, capsys)
    outputs += [out, err, (tmp_path / "c" / "compare.json").read_text(encoding="utf-8"),
                (tmp_path / "c" / "compare.html").read_text(encoding="utf-8")]
    text = "\n".join(outputs)
    assert "Zq8vLm" not in text and password[8:20] not in text
    assert "A1b2C3d4" not in text and token[10:24] not in text
    assert json.loads(outputs[2])["status"] == "ok"


@pytest.mark.parametrize("text, leaked", [
    ("DB_PASSWORD=\x1b[32mhunter2SuperSecret99\x1b[0m", "hunter2"),  # colour codes between
    ("\x1b[1mpassword\x1b[0m: hunter2SuperSecret99", "hunter2"),
    ("token ghp_A1b2C3d4E5\u200bf6G7h8I9j0K1l2M3n4O5p6Q7r8", "f6G7h8"),  # zero-width inside
    ("ghp_A1b2C3d4E5\u00adf6G7h8I9j0K1l2M3n4O5p6Q7r8", "f6G7h8"),  # a soft hyphen inside
    ("export GITHUB_TOKEN=ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8ab\nijklmnop1234\necho ok",
     "ijklmnop1234"),  # the rest of a token a terminal wrapped onto the next line
    ("api%5Fkey=hunter2SuperSecret99", "hunter2"),  # separators percent-encoded in the key
    ("aws%5Fsecret%5Faccess%5Fkey=hunter2SuperSecret99", "hunter2"),
    ("secret%2Ekey=hunter2SuperSecret99", "hunter2"),
])
def test_hidden_or_wrapped_secrets_are_redacted_everywhere(text, leaked):
    from skill_doctor.redact import redact_pieces

    assert leaked not in redact(text, home="")
    assert not any(leaked in piece for piece in redact_pieces(text.split("\n"), home=""))
    assert "echo ok" in redact(text, home="") or "echo ok" not in text


def test_the_lowered_copy_finds_the_triggers_where_ascii_lowering_does():
    """Triggers are searched in a lowered copy of the text: str.lower() where it keeps every
    position and lowers no letter onto ASCII, else ASCII letters alone; the hits are the same."""
    import random

    from skill_doctor import redact as redact_mod

    rng = random.Random(3)
    pieces = ["Password", "TOKEN", "Api-Key", "Bearer ", "=", " ", "\n", "é", "É", "Σ", "ß", "ſ",
              "ı", "\u0130", "\u212a", "\u212aey", "\u0130d", "日本", "curl", "HTTP", "--", "x"]
    triggers = [t for _, _, t in redact_mod._PATTERNS if t is not None]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        lowered, reference = redact_mod._lowered(text), text.translate(redact_mod._LOWER)
        assert len(lowered) == len(text), repr(text)
        for trigger in triggers:
            assert [m.span() for m in trigger.finditer(lowered)] == \
                [m.span() for m in trigger.finditer(reference)], (repr(text), trigger.pattern)
    assert redact_mod._lowered("\u212aEY=1") == "\u212aey=1"  # the Kelvin sign is no "k"


def test_secret_defaults_found_from_their_trigger_as_by_a_whole_scan():
    """The default given for a secret's variable is looked for where "env" starts (`getenv`
    checked behind it): the secrets found are those a scan of the whole text finds with the
    pattern that begins at `getenv`."""
    import random
    import re

    from skill_doctor import redact as redact_mod

    (pattern, trigger), = [(p, t) for name, p, t in redact_mod._PATTERNS if name == "secret-default"]
    whole = re.compile(pattern.pattern.replace("(?<=get)env", "getenv"))
    rng = random.Random(9)
    pieces = ["os.environ.get(", "os.getenv(", "GETENV(", "ENV.fetch(", "env.get(", "getenv.get(",
              "Env.Fetch(", "get", "env", "(", '"DB_PASSWORD"', "'API_KEY'", '"name"', ", ",
              '"hunter2x"', "'s3cr3t-value'", " ", "\n", "\u212a", "é"]
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 9)))
        found = [m.span("s") for m in redact_mod._matches(pattern, trigger, text,
                                                           redact_mod._lowered(text))]
        assert found == [m.span("s") for m in whole.finditer(text)], repr(text)
    assert redact('x = os.getenv("DB_PASSWORD", "hunter22")') == \
        'x = os.getenv("DB_PASSWORD", "[redacted: secret-default]")'
