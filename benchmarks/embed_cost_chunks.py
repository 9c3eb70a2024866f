"""CPU cost of one diff-chunk vector against one commit-document vector (issue 22 lever 3).

Cuts every commit's changed lines (``document.diff_digest``) into chunks of the document
format's character budget, each embedded as ``title + newline + chunk`` (what
``eval_message_vector.py --chunks`` embeds), and times the index embedder on a fixed random
sample of 200 chunks and 200 commit documents (documents before and after the chunks, so a
load change shows). Prints one JSON object: the chunk count and CPU / wall ms per text.

Usage::

    python benchmarks/embed_cost_chunks.py --repo PATH --index-dir DIR [--sample 200]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import make_workspace
from gitquarry import embedding as embedding_pkg
from gitquarry.history.index.document import default_format, diff_digest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--sample", type=int, default=200)
    args = parser.parse_args(argv)
    ws = make_workspace(args.repo, args.index_dir)
    embedder = embedding_pkg.create_embedder(ws.config.embedding, purpose="index")
    assert embedder is not None
    fmt = default_format()
    per = fmt.max_chars(embedder.max_tokens)
    store = ws.open_store()
    rows = store.conn.execute(
        "SELECT id, title, message, author, committer, files_changed, "
        "gq_inflate(delta_truncated) AS delta_truncated FROM git_commits ORDER BY id").fetchall()
    store.close()
    chunks = []
    for r in rows:
        _, _, changed = diff_digest(r["delta_truncated"] or "")
        body = "\n".join(changed)
        for start in range(0, len(body), per):
            chunks.append(f"{r['title'] or ''}\n{body[start:start + per]}")
    rng = random.Random(7)
    chunk_sample = rng.sample(chunks, min(args.sample, len(chunks)))
    doc_sample = [fmt.build(r, embedder.max_tokens)
                  for r in rng.sample(list(rows), min(args.sample, len(rows)))]
    embedder.embed(["warm up"], max_tokens=fmt.max_tokens)
    out: dict[str, object] = {"chunks_total": len(chunks), "commits": len(rows)}
    for name, texts in (("document", doc_sample), ("chunk", chunk_sample),
                        ("document_again", doc_sample)):
        c0, t0 = time.process_time(), time.monotonic()
        embedder.embed(texts, max_tokens=fmt.max_tokens)
        out[name] = {"n": len(texts),
                     "cpu_ms_each": round(1000 * (time.process_time() - c0) / len(texts), 1),
                     "wall_ms_each": round(1000 * (time.monotonic() - t0) / len(texts), 1)}
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
