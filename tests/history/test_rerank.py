"""Cross-encoder rerank (issue 14) through its real code path: ONNX Runtime and a
``tokenizer.json``, loaded from a local path, a package directory or a model directory.

No cross-encoder can be obtained offline here (none ships on PyPI with its weights), so the
test builds a small one: a real ONNX graph over the (query, passage) pair as a BERT-style
cross-encoder receives it (``[CLS] query [SEP] passage [SEP]``, token types 0/1), whose
logit counts the passage tokens that also occur in the query. It checks the loading, the
tokenisation of pairs, batching and the reordering, not the relevance of a trained model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gitquarry.history.search.engine import search_git_history
from gitquarry.retrieval import rerank
from gitquarry.retrieval.pipeline import PipelineSettings

from .conftest import GitRepo, Indexer

onnx = pytest.importorskip("onnx")

WORDS = ["fix", "the", "parser", "cache", "config", "socket", "timeout", "retry", "merge",
         "release", "notes", "docs", "typo", "in", "readme", "add", "tests", "for", "loader"]


def build_cross_encoder(directory: Path) -> Path:
    """Write ``model.onnx`` and ``tokenizer.json`` into ``directory``; return the model."""
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    size = len(vocab)
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(directory / "tokenizer.json"))

    weights = np.ones(size, dtype=np.float32)
    weights[:4] = 0  # special and unknown tokens never count
    inits = [
        numpy_helper.from_array(np.eye(size, dtype=np.float32), "eye"),
        numpy_helper.from_array(weights, "w"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "ax2"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "ax1"),
    ]
    nodes = [
        helper.make_node("Gather", ["eye", "input_ids"], ["onehot"]),
        helper.make_node("Cast", ["token_type_ids"], ["tt"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["attention_mask"], ["am"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["one", "tt"], ["not_tt"]),
        helper.make_node("Mul", ["am", "not_tt"], ["qmask"]),
        helper.make_node("Mul", ["am", "tt"], ["dmask"]),
        helper.make_node("Unsqueeze", ["qmask", "ax2"], ["qmask3"]),
        helper.make_node("Unsqueeze", ["dmask", "ax2"], ["dmask3"]),
        helper.make_node("Mul", ["onehot", "qmask3"], ["qtok"]),
        helper.make_node("Mul", ["onehot", "dmask3"], ["dtok"]),
        helper.make_node("ReduceMax", ["qtok"], ["qbag"], axes=[1], keepdims=0),
        helper.make_node("ReduceSum", ["dtok", "ax1"], ["dbag"], keepdims=0),
        helper.make_node("Mul", ["qbag", "dbag"], ["both"]),
        helper.make_node("Mul", ["both", "w"], ["weighted"]),
        helper.make_node("ReduceSum", ["weighted", "ax1"], ["logits"], keepdims=1),
    ]
    ids = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
           for name in ("input_ids", "attention_mask", "token_type_ids")]
    graph = helper.make_graph(
        nodes, "overlap_cross_encoder", ids,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])], inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = directory / "model.onnx"
    onnx.save(model, str(path))
    return path


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "xenc"
    build_cross_encoder(directory)
    rerank._loaded.clear()
    return directory


def test_onnx_cross_encoder_scores_pairs(model_dir: Path) -> None:
    model = rerank.load_reranker(str(model_dir / "model.onnx"))
    passages = ["add tests for the loader", "fix parser cache", "typo in readme",
                "fix the parser cache config parser"] * 5  # more than one batch
    scores = model.score("parser cache", passages)
    assert scores[:4] == [0.0, 2.0, 0.0, 3.0]
    assert len(scores) == 20 and scores[16:] == scores[:4]
    # the same model from its directory, and from an installed package's directory
    assert rerank.load_reranker(str(model_dir)).score("typo", ["typo in readme"]) == [1.0]


def test_package_and_missing_models(model_dir: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    package = site / "gq_test_xenc"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    for name in ("model.onnx", "tokenizer.json"):
        (package / name).write_bytes((model_dir / name).read_bytes())
    monkeypatch.syspath_prepend(str(site))
    model = rerank.load_reranker("package:gq_test_xenc")
    assert model.score("readme", ["typo in readme"]) == [1.0]
    for spec, why in (("", "no cross-encoder is configured"),
                      (str(tmp_path / "nope.onnx"), "does not exist"),
                      ("package:gq_no_such_package", "not installed"),
                      (str(tmp_path), "neither model.onnx")):
        with pytest.raises(rerank.RerankUnavailable, match=why):
            rerank.load_reranker(spec)


def _commits(repo: GitRepo) -> dict[str, str]:
    out = {}
    out["docs"] = repo.commit({"README": "readme\n"}, "Fix typo in readme notes docs")
    out["parser"] = repo.commit({"p.py": "x = 1\n"}, "Fix the parser cache")
    out["loader"] = repo.commit({"l.py": "y = 2\n"}, "Add tests for the loader config")
    return out


def test_history_search_reranks_with_the_configured_model(
    make_repo, indexer: Indexer, model_dir: Path, cli, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    repo = make_repo()
    commits = _commits(repo)
    indexer.run()
    with indexer.open() as store:
        settings = PipelineSettings(rerank_enabled=True, rerank_top_n=10)
        model = rerank.load_reranker(str(model_dir))
        # "fix" ranks both fixes by BM25; the model prefers the one holding "parser cache"
        plain = search_git_history(store, "fix parser cache", top_n=3)
        reranked = search_git_history(store, "fix parser cache", top_n=3, pipeline=settings,
                                      reranker=model)
    assert reranked.results[0].hash == commits["parser"]
    assert {r.hash for r in plain.results} == {r.hash for r in reranked.results}
    moves = reranked.results[0].pipeline["moved"]
    assert moves[-1]["step"] == "rerank" and moves[-1]["score"] == 3.0

    # wired from the user's own configuration, through the CLI
    config = tmp_path / "user.toml"
    config.write_text(
        f'[search]\nrerank_enabled = true\nrerank_model = "{model_dir / "model.onnx"}"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("GITQUARRY_CONFIG", str(config))
    code, out, err = cli("history", "parser cache", "--mode", "lexical", "--json",
                         "--explain", "--project", str(indexer.root))
    assert code == 0, err
    data = json.loads(out)
    assert data["results"][0]["hash"] == commits["parser"]
    assert "rerank" in data["pipeline"]["steps"]
    # a model that is not there: a typed warning, the answer still comes
    config.write_text('[search]\nrerank_enabled = true\nrerank_model = "/nowhere/x.onnx"\n',
                      encoding="utf-8")
    code, out, err = cli("history", "parser cache", "--mode", "lexical", "--json",
                         "--project", str(indexer.root))
    assert code == 0, err
    data = json.loads(out)
    assert data["results"] and "rerank_unavailable" in [
        w["code"] for w in data["warning_details"]]


def test_repository_owned_config_cannot_choose_the_rerank_model(
    make_repo, indexer: Indexer, model_dir: Path, cli,
) -> None:
    make_repo().commit({"a": "a\n"}, "Fix the parser cache")
    indexer.run()
    (indexer.root / ".gitquarry.toml").write_text(
        f'[search]\nrerank_enabled = true\nrerank_model = "{model_dir}"\nmmr_enabled = true\n',
        encoding="utf-8",
    )
    code, out, err = cli("history", "parser", "--mode", "lexical", "--json",
                         "--project", str(indexer.root))
    assert code == 0, err
    assert json.loads(out)["results"]
    # the CLI names refused repository-owned settings on stderr
    assert "[search] rerank_model" in err and "[search] rerank_enabled" in err
    assert "mmr_enabled" not in err  # a ranking switch it may set
