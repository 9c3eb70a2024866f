"""End-to-end relevance check on the shopfront fixture (benchmarks/relevance).

Builds the fixture repository in ``tmp_path``, indexes it with the bundled MiniLM model and
runs the checked-in query set in lexical, semantic and hybrid mode via
``benchmarks/eval_history.py``. Measured on the fixture (k=10, rrf_k=60, weights 1/1):
paraphrase MRR@10 lexical 0.165, semantic 0.869, hybrid 0.406; overall Recall@10 lexical
0.659, semantic 0.977, hybrid 0.841.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def modules():
    fixture = _load("gq_relevance_build_fixture", BENCH / "relevance" / "build_fixture.py")
    evaluator = _load("gq_eval_history", BENCH / "eval_history.py")
    return fixture, evaluator


@pytest.fixture()
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("GITQUARRY_CONFIG", os.devnull)


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_checked_in_queries_match_the_builder(modules, tmp_path: Path, isolated_env) -> None:
    """The fixture is deterministic and queries.jsonl holds its real hashes."""
    fixture, _ = modules
    hashes = fixture.build(tmp_path / "shopfront")
    assert len(hashes) >= 60
    checked_in = [
        json.loads(line)
        for line in (BENCH / "relevance" / "queries.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    ]
    assert checked_in == fixture.query_records(hashes)
    kinds = [q["kind"] for q in checked_in]
    assert kinds.count("paraphrase") >= 20 and kinds.count("keyword") >= 10
    assert fixture.lint_queries() == []


@pytest.mark.slow
def test_hybrid_beats_lexical_on_paraphrases(modules, tmp_path: Path, isolated_env) -> None:
    fixture, evaluator = modules
    repo = tmp_path / "shopfront"
    hashes = fixture.build(repo)
    queries_file = tmp_path / "queries.jsonl"
    fixture.write_queries(hashes, queries_file)
    report = evaluator.evaluate(repo, queries_file, k=10, index_dir=str(tmp_path / "index"))
    assert report["index"]["embeddings"]["with_vectors"] == report["index"]["total_commits"]
    assert report["degraded_to_lexical"] == {"lexical": 0, "semantic": 0, "hybrid": 0}
    m = report["metrics"]
    lex_p, hyb_p = m["lexical"]["paraphrase"], m["hybrid"]["paraphrase"]
    assert hyb_p["mrr@10"] > lex_p["mrr@10"]
    assert hyb_p["recall@10"] > lex_p["recall@10"]
    assert m["hybrid"]["all"]["recall@10"] >= m["lexical"]["all"]["recall@10"]
    # exact identifiers stay exact in hybrid mode
    assert m["hybrid"]["keyword"]["recall@10"] == 1.0


def test_fusion_overrides_reach_the_frozen_config(modules, tmp_path: Path, isolated_env) -> None:
    """``--rrf-k``/weights/``--no-shape-weights`` replace the frozen ``[search]`` section
    (they raised FrozenInstanceError once the loaded config was frozen)."""
    fixture, evaluator = modules
    repo = tmp_path / "shopfront"
    hashes = fixture.build(repo)
    queries_file = tmp_path / "queries.jsonl"
    fixture.write_queries(hashes, queries_file)
    report = evaluator.evaluate(
        repo, queries_file, k=10, index_dir=str(tmp_path / "index"), embed=False,
        modes=("lexical",), rrf_k=7, lexical_weight=0.5, semantic_weight=2.0,
        weight_by_shape=False)
    assert report["search"]["rrf_k"] == 7
    assert report["search"]["lexical_weight"] == 0.5
    assert report["search"]["semantic_weight"] == 2.0
    assert report["search"]["weight_by_shape"] is False
