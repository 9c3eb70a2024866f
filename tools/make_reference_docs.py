"""Write ``tests/data/commit_documents.jsonl``: real commit documents for the model quality gate.

Usage::

    python tools/make_reference_docs.py /work/.mirror/pallets+click/repo

Takes 96 non-merge commits of pallets/click's ``main`` at the pinned commit, evenly spaced
over its history, and writes each as ``{"hash", "text"}``: title, body, changed paths and the
start of the diff, cut at 400 characters for a third of them (short documents), 1,000 for a
third and 2,000 for the rest (longer than the model's 256 tokens), so the gate covers short
and truncated inputs. Click is BSD-3-Clause; the excerpts are small.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PINNED = "2c8cd3ac958a7eb316d67f2d316c27086c4c0369"
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "commit_documents.jsonl"
COUNT = 96
CUTS = (400, 1000, 2000)


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def main() -> int:
    repo = sys.argv[1]
    hashes = git(repo, "rev-list", "--no-merges", "--reverse", PINNED).split()
    step = len(hashes) / COUNT
    rows = []
    for n in range(COUNT):
        commit = hashes[int(n * step)]
        text = git(repo, "show", "--no-color", "--format=%s%n%n%b", "--stat=200",
                   "--patch", commit)
        rows.append({"hash": commit, "text": text[: CUTS[n % len(CUTS)]]})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    print(f"wrote {len(rows)} documents to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
