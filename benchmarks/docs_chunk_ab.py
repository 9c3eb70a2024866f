"""Chunks of two gitquarry source trees compared byte for byte, and their chunking speed.

    python benchmarks/docs_chunk_ab.py --old OLD_SRC --new NEW_SRC --repo GIT_DIR ... \
        [--fuzz 3000] [--rounds 3] [--passes 3] [--out benchmarks/results/NAME.json]

``OLD_SRC`` / ``NEW_SRC`` are folders holding a ``gitquarry`` package (``git archive main src``
unpacked, and this checkout's ``src``). Every ``*.md``/``*.markdown``/``*.rst``/``*.txt`` blob at
each ``--repo``'s HEAD (bare mirrors work), plus ``--fuzz`` generated hostile documents (lone
and paired CRs, NULs, tabs, Unicode spaces, front matter, fences, containers, setext
underlines, over-long lines), is chunked by each tree in its own interpreter under several
policies; the outcome per document (every span: bytes, lines, heading path, heading lines, the
chunk id; or the exception's type) is serialised and the two dumps compared. Then chunking CPU
is timed, the two trees alternating per round (the order flipping each round), over the
markdown/rst blobs: ``*_mib_per_cpu_s`` from each child's first pass (median of rounds), and
with ``--passes N`` also ``*_best_pass_mib_per_cpu_s`` (each child's best of N). Prints JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".rst": "restructuredtext",
            ".txt": "text"}
POLICIES = [(1500, 200), (700, 100), (300, 0), (40, 10), (4000, 1000)]


def repo_blobs(git_dir: str) -> list[tuple[str, str, bytes]]:
    """(label, content class, bytes) of every doc-like blob at HEAD."""
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "HEAD"],
                             capture_output=True, check=True, text=True).stdout
    wanted = []
    for row in listing.splitlines():
        meta, path = row.split("\t", 1)
        _mode, kind, sha = meta.split()
        cls = SUFFIXES.get(os.path.splitext(path)[1].lower())
        if kind == "blob" and cls:
            wanted.append((path, cls, sha))
    shas = "".join(f"{sha}\n" for _p, _c, sha in wanted).encode()
    out = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch"], input=shas,
                         capture_output=True, check=True).stdout
    blobs, at = [], 0
    for path, cls, _sha in wanted:
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].split()[2])
        blobs.append((f"{git_dir}:{path}", cls, out[header_end + 1 : header_end + 1 + size]))
        at = header_end + 1 + size + 1
    return blobs


FRAGMENTS = [
    "# Title", "## Sub ##", "### x #", "#nospace", "####### seven", "   ### three", "    # code",
    "Setext", "======", "------", "---", "+++", "...", "===", "   ===", "- item", "  # in item",
    "> # quoted", "> text", "1. ## numbered", "```", "~~~", "```md", "<div>", "</div>",
    "<!-- c -->", "* * *", "Title { #anchor }", "[ref]: /url", "\t# tab", " \t# sp tab",
    "body text here", "a" * 1700, "\u00e9t\u00e9 \u4e2d\u6587 " * 60, "\u3000", "\u2028",
    "\x00", "\x0c", "\x0b", "\x1c", "\x85", "\ufeff# bom", "", "", "", "x   ", "\t",
    "Title\n===", ".. note::", "Section\n-------", "=======\nOver\n=======", "~~~~~", "****",
]
JOINERS = ["\n", "\n", "\n", "\n\n", "\r\n", "\r", "\r\r\n", "\n\r"]


def fuzz_docs(count: int, seed: int = 21) -> list[tuple[str, str, bytes]]:
    rng = random.Random(seed)
    docs = []
    for i in range(count):
        parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 60))]
        if rng.random() < 0.15:
            parts = [rng.choice(["---", "+++"]), "title: x", rng.choice(["---", "...", "+++"]),
                     *parts]
        text = ""
        for part in parts:
            text += part + rng.choice(JOINERS)
        if rng.random() < 0.5:
            text = text.rstrip("\n")
        cls = rng.choice(["markdown", "markdown", "markdown", "restructuredtext", "text"])
        docs.append((f"fuzz:{i}", cls, text.encode("utf-8")))
    docs.append(("fuzz:invalid-utf8", "markdown", b"# a\n\xff\xfe\n"))
    return docs


CHILD = r"""
import pickle, sys, time, hashlib
sys.path.insert(0, sys.argv[1])
from gitquarry.repo_docs.chunker import ChunkPolicy, blob_digest, chunk_document, chunk_id
mode, docs_path, out_path = sys.argv[2], sys.argv[3], sys.argv[4]
docs = pickle.loads(open(docs_path, "rb").read())
if mode == "dump":
    policies = [ChunkPolicy(a, b) for a, b in pickle.loads(bytes.fromhex(sys.argv[5]))]
    out = []
    for label, cls, data in docs:
        per = []
        for policy in policies:
            try:
                spans = chunk_document(data, cls, policy)
                digest = blob_digest(data)
                per.append([(s.byte_start, s.byte_end, s.line_start, s.line_end,
                             s.heading_path, s.heading_lines, chunk_id(digest, s, policy))
                            for s in spans])
            except Exception as exc:
                per.append(("error", type(exc).__name__))
        out.append(per)
    open(out_path, "wb").write(pickle.dumps(out))
else:
    docs = [(c, d) for _l, c, d in docs if c != "text"]
    chunk_document(docs[0][1], docs[0][0])  # imports and the parser loaded before timing
    passes = []
    for _ in range(int(sys.argv[5])):
        started = time.process_time()
        for cls, data in docs:
            chunk_document(data, cls)
        passes.append(time.process_time() - started)
    open(out_path, "w").write(" ".join(map(str, passes)))
"""


def run_child(src: str, mode: str, docs_path: str, out_path: str, passes: int = 1) -> None:
    env = dict(os.environ, PYTHONPATH=src)
    extra = str(passes) if mode == "time" else pickle.dumps(POLICIES).hex()
    subprocess.run([sys.executable, "-c", CHILD, src, mode, docs_path, out_path, extra],
                   check=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--fuzz", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--passes", type=int, default=1,
                        help="passes over the blobs per timing child (the first pass pays the "
                             "process's first allocations; later ones reuse its memory)")
    parser.add_argument("--out")
    args = parser.parse_args()
    real = [blob for repo in args.repo for blob in repo_blobs(repo)]
    docs = real + fuzz_docs(args.fuzz)
    with tempfile.TemporaryDirectory() as tmp:
        docs_path = os.path.join(tmp, "docs.pkl")
        Path(docs_path).write_bytes(pickle.dumps(docs))
        dumps = {}
        for side in ("old", "new"):
            out_path = os.path.join(tmp, f"{side}.pkl")
            run_child(getattr(args, side), "dump", docs_path, out_path)
            dumps[side] = pickle.loads(Path(out_path).read_bytes())
        differ = [docs[i][0] for i, (a, b) in enumerate(zip(dumps["old"], dumps["new"],
                                                             strict=True)) if a != b]
        outcomes = [o for per in dumps["new"] for o in per]
        errors = sum(1 for o in outcomes if isinstance(o, tuple))
        spans = sum(len(o) for o in outcomes if isinstance(o, list))
        timed = [d for d in real if d[1] != "text"]
        timed_path = os.path.join(tmp, "timed.pkl")
        Path(timed_path).write_bytes(pickle.dumps(timed))
        mib = sum(len(d) for _l, _c, d in timed) / 2**20
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        best: dict[str, list[float]] = {"old": [], "new": []}
        for r in range(args.rounds):
            for side in ("old", "new") if r % 2 == 0 else ("new", "old"):
                out_path = os.path.join(tmp, f"{side}.cpu")
                run_child(getattr(args, side), "time", timed_path, out_path, args.passes)
                passes = [float(x) for x in Path(out_path).read_text().split()]
                cpu[side].append(passes[0])
                best[side].append(min(passes))
    result = {
        "documents": len(docs), "real_documents": len(real),
        "fuzz_documents": len(docs) - len(real),
        "policies": POLICIES, "spans_compared": spans, "error_outcomes_compared": errors,
        "differing_documents": differ[:50], "differing_count": len(differ),
        "dump_sha256": {side: hashlib.sha256(pickle.dumps(d)).hexdigest()
                        for side, d in dumps.items()},
        "timed": {"files": len(timed), "mib": round(mib, 2),
                  **{f"{side}_cpu_s": [round(c, 3) for c in cpu[side]] for side in cpu},
                  **{f"{side}_mib_per_cpu_s": round(mib / statistics.median(cpu[side]), 2)
                     for side in cpu},
                  "passes_per_child": args.passes,
                  **{f"{side}_best_pass_cpu_s": [round(c, 3) for c in best[side]]
                     for side in best},
                  **{f"{side}_best_pass_mib_per_cpu_s":
                     round(mib / statistics.median(best[side]), 2) for side in best},
                  "load_1min_end": round(os.getloadavg()[0], 2)},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
