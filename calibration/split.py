"""Write calibration/split.tsv: every session of the shared corpus and labelled runs, with its
source and the half it belongs to. Run from the project root: python calibration/split.py

A source is where sessions came from together: a corpus session's repository (MANIFEST.tsv
`repo`), a labelled run's suite folder (both files of one Harbor run stay together). Sources,
not sessions, are split, so no half holds sessions of a source the other half tuned on. The
order is a hash of the source's name, not anything about its sessions: every second source in
that order goes to the check half, except that the sources of the shared readings
(../shared/readings) are tune: earlier rules were written from those readings. The split was
committed before any rule was changed."""

import csv
import hashlib
import json
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


def sessions():
    with open(SHARED / "corpus" / "MANIFEST.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            yield "corpus/" + row["file"], row["repo"]
    with open(SHARED / "labelled" / "labels.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            yield "labelled/" + row["file"], "labelled/" + row["file"].split("/")[0]


def main():
    rows = sorted(sessions())
    source_of = dict(rows)
    tuned = {source_of[json.loads(p.read_text(encoding="utf-8"))["session"]]
             for p in (SHARED / "readings").glob("*.json")}
    order = sorted({source for _, source in rows} - tuned,
                   key=lambda s: hashlib.sha256(s.encode()).hexdigest())
    half = {source: ("tune", "check")[i % 2] for i, source in enumerate(order)}
    half.update(dict.fromkeys(tuned, "tune"))
    out = Path(__file__).resolve().parent / "split.tsv"
    with open(out, "w", encoding="utf-8", newline="") as f:
        f.write("session\tsource\thalf\n")
        for session, source in rows:
            f.write(f"{session}\t{source}\t{half[source]}\n")


if __name__ == "__main__":
    main()
