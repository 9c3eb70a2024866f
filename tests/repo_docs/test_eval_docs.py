"""``benchmarks/eval_docs.py`` on a small repository: the metrics it reports are right."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

from .conftest import DOCS, Repo

ROOT = Path(__file__).resolve().parents[2]


def test_eval_docs_metrics(make_repo: Callable[..., Repo]) -> None:
    spec = importlib.util.spec_from_file_location("eval_docs", ROOT / "benchmarks/eval_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_docs"] = module
    spec.loader.exec_module(module)
    repo = make_repo(dict(DOCS))
    queries = [
        {"query": "worker_connections", "path": "docs/deploy.md", "line_start": 9,
         "line_end": 11},
        {"query": "pipx", "path": "docs/guide.rst", "line_start": 7, "line_end": 15},
        {"query": "pipx", "path": "README.md", "line_start": 1, "line_end": 3},  # wrong
    ]
    out = module.evaluate(repo.path, queries, provider="fake", modes=["fulltext", "hybrid"])
    assert out["index"]["files"] == 3
    full = out["modes"]["fulltext"]
    assert full["recall@10"] == full["mrr@10"] == round(2 / 3, 3)  # README never matches pipx
    # hybrid: the semantic list holds every chunk of this 3-chunk repository, so the README
    # span is found too, below the two exact matches
    assert out["modes"]["hybrid"]["recall@10"] == 1.0
    assert out["modes"]["hybrid"]["mrr@10"] < 1.0
    assert out["effective_modes"] == ["hybrid"]
    assert not (repo.path / ".gitquarry").exists()  # the cache went to a temporary directory


def test_bm25_sections_baseline_scores_with_the_same_scorer(
        make_repo: Callable[..., Repo], tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bm25_sections",
                                                  ROOT / "benchmarks/bm25_sections.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    repo = make_repo(dict(DOCS))
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"query": "worker_connections", "path": "docs/deploy.md", "line_start": 9, '
        '"line_end": 11}\n'
        '{"query": "pipx", "path": "README.md", "line_start": 1, "line_end": 3}\n'
        '{"query": "pipx", "path": "README.md", "line_start": 1, "line_end": 3, '
        '"also": [{"path": "docs/guide.rst", "line_start": 7, "line_end": 15}]}\n')
    out = module.evaluate(repo.path, [queries])
    got = out["sets"]["q.jsonl"]
    # one section per heading; the README never holds "pipx", the guide section does
    assert got["ranks"] == [1, None, 1]
    assert got["recall@10"] == round(2 / 3, 3) and out["files"] == 3
