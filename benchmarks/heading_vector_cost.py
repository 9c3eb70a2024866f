"""The embedding cost of heading-path vectors (``repo_docs.heading_vectors``) on a docs fixture.

Usage::

    python benchmarks/heading_vector_cost.py --repo /tmp/click_docs [--rounds 3] [--out F]

Builds the texts the docs indexer embeds for the fixture's HEAD (every eligible document
chunked by the product's chunker; per chunk ``chunker.embedding_input`` and
``heading_vectors.heading_text``, the latter deduplicated as the indexer stores them), then
embeds the chunk texts and the distinct heading texts with the default model, alternately,
``--rounds`` times, and prints one JSON object: counts, CPU seconds (``time.process_time``:
every thread of this process) and wall seconds per round, and the heading/chunk CPU ratio.
The model is loaded (and warmed on one text) before the first round.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gitquarry.config import Config  # noqa: E402
from gitquarry.embedding import create_embedder  # noqa: E402
from gitquarry.repo_docs.chunker import ChunkPolicy, chunk_document, embedding_input  # noqa: E402
from gitquarry.repo_docs.heading_vectors import document_title, heading_text  # noqa: E402
from gitquarry.repo_docs.plan import content_class  # noqa: E402


def texts(repo: Path) -> tuple[list[str], list[str]]:
    """(chunk embedding inputs, distinct heading texts) of the fixture's HEAD."""
    names = subprocess.run(["git", "-C", str(repo), "ls-files"], check=True,
                           capture_output=True, text=True).stdout.split()
    chunks: list[str] = []
    headings: dict[str, None] = {}
    policy = ChunkPolicy()
    for name in names:
        kind = content_class(name)
        if kind is None:
            continue
        data = (repo / name).read_bytes()
        spans = chunk_document(data, kind, policy)
        title = document_title(spans)
        for span in spans:
            chunks.append(embedding_input(name, span, data))
            headings.setdefault(heading_text(name, span.heading_path, title))
    return chunks, list(headings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("GITQUARRY_LOG", "error")
    chunks, headings = texts(args.repo.resolve())
    embedder = create_embedder(Config().embedding, purpose="index")
    assert embedder is not None
    embedder.embed(["warm up"])
    rounds: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        row: dict[str, Any] = {}
        for name, batch in (("chunks", chunks), ("headings", headings)):
            cpu, wall = time.process_time(), time.perf_counter()
            embedder.embed(batch)
            row[name] = {"cpu_s": round(time.process_time() - cpu, 2),
                         "wall_s": round(time.perf_counter() - wall, 2)}
        rounds.append(row)
    cpu_chunks = sum(r["chunks"]["cpu_s"] for r in rounds)
    cpu_heads = sum(r["headings"]["cpu_s"] for r in rounds)
    out = {
        "repo": args.repo.name, "chunks": len(chunks), "distinct_headings": len(headings),
        "mean_heading_chars": round(sum(map(len, headings)) / max(1, len(headings)), 1),
        "rounds": rounds,
        "heading_over_chunk_cpu": round(cpu_heads / cpu_chunks, 3) if cpu_chunks else None,
        "load": os.getloadavg()[0],
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
