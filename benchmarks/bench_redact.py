"""Redaction cost per MB: real session text, and text built to make the patterns backtrack.

Every pattern must stay linear: a hostile transcript repeating a pattern's prefix (`eyJ`,
`AKIA`, `curl `, `password=` ...) without the rest must not make redaction quadratic. Prints
seconds per MB at 0.1 MB and 1 MB for each case; the two columns should match.

    PYTHONPATH=src python3 benchmarks/bench_redact.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from skill_doctor.redact import redact  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
PREFIXES = ["sk-ant-", "sk-", "ghp_", "glpat-", "xoxb-", "AKIA", "AIza", "ya29.", "sk_live_",
            "whsec_", "hf_", "eyJ", "eyJabcdefghij.", "-----BEGIN RSA PRIVATE KEY-----",
            "-----END RSA PRIVATE KEY-----", "Authorization: Basic ", "x-api-key: ", "http://a",
            "https://u:", "password=", "password=\"", "secret_key: '", "--token ", "machine a\\n",
            "curl ", "mysql -p", "sshpass ", "Cookie: a=", "AccountKey=", "sig=", '"auth": "',
            "cookie:", "set-cookie:", "authorization:", "<password>", 'os.environ.get("',
            "a:1:b:c:", "password := "]


def per_mb(text: str) -> float:
    start = time.perf_counter()
    redact(text, home="/home/someone")
    return (time.perf_counter() - start) / (len(text) / 1e6)


def main() -> None:
    print(f"{'case':34} {'s/MB at 0.1 MB':>15} {'s/MB at 1 MB':>13}")
    if CORPUS.is_dir():
        real = "".join(p.read_text(encoding="utf-8", errors="replace")
                       for p in sorted(CORPUS.rglob("*.jsonl"))[:20])
        print(f"{'real sessions (corpus JSONL)':34} {per_mb(real[:100_000]):15.2f} "
              f"{per_mb(real[:1_000_000]):13.2f}")
    worst = 0.0
    for prefix in PREFIXES:
        for sep in ("", " ", "\n"):
            unit = prefix + sep
            small = per_mb(unit * (100_000 // len(unit)))
            large = per_mb(unit * (1_000_000 // len(unit)))
            worst = max(worst, large)
            if sep == "":
                print(f"{prefix!r:34} {small:15.2f} {large:13.2f}")
    print(f"worst adversarial case: {worst:.2f} s/MB")


if __name__ == "__main__":
    main()
