"""The bundled all-MiniLM-L6-v2 (ONNX) end to end: index with the default provider, then a
hybrid query phrased with none of the commit's own words finds it. Slow, still run in CI."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import GitRepo
from .realistic_repo import COMMITS, SAMESITE_TITLE, build_shop_repo

pytestmark = pytest.mark.slow

QUERY = "cookies were rejected by browsers after an update"


@pytest.fixture
def shop(workspace_dir: Path, make_repo: Callable[[str], GitRepo],
         cli: Callable[..., tuple[int, str, str]]) -> tuple[Path, dict[str, str]]:
    hashes = build_shop_repo(make_repo("shopfront"))
    code, out, err = cli("index", str(workspace_dir), "--json")
    assert code == 0, err
    data = json.loads(out)
    emb = data["embeddings"]
    assert emb["namespace"] == "minilm-onnx|all-MiniLM-L6-v2-int8-ln|384|commit-v3-t128"
    assert emb["embedded"] == emb["with_vectors"] == emb["total_commits"] == len(COMMITS)
    return workspace_dir, hashes


def test_hybrid_query_finds_samesite_fix_first(
    shop: tuple[Path, dict[str, str]], cli: Callable[..., tuple[int, str, str]]
) -> None:
    workspace, hashes = shop
    code, out, err = cli("history", QUERY, "--project", str(workspace), "--json", "--explain")
    assert code == 0, err
    data = json.loads(out)
    assert data["requested_mode"] == data["effective_mode"] == "hybrid"
    assert data["warnings"] == [] and data["embedded_fraction"] == 1.0
    top = data["results"][0]
    assert top["title"] == SAMESITE_TITLE
    assert top["hash"] == hashes[SAMESITE_TITLE]
    assert top["message"].startswith("Chrome and Safari now reject cookies")
    assert top["files_changed"] == ["app/settings/cookies.py"]
    assert '"samesite": "Lax"' in top["delta_truncated"]
    assert top["semantic_rank"] is not None and top["lexical_rank"] is not None
    assert all(0.0 <= r["score"] <= 1.0 for r in data["results"])

    # semantic alone also puts it first: the model, not keyword luck, carries the query
    code, out, err = cli("history", QUERY, "--project", str(workspace), "--json",
                         "--mode", "semantic", "--explain")
    assert code == 0, err
    semantic = json.loads(out)
    assert semantic["effective_mode"] == "semantic"
    assert semantic["results"][0]["title"] == SAMESITE_TITLE
    assert semantic["results"][0]["semantic_rank"] == 1


def test_explain_output_shows_bm25_and_vector_ranks(
    shop: tuple[Path, dict[str, str]], cli: Callable[..., tuple[int, str, str]]
) -> None:
    workspace, hashes = shop
    code, out, err = cli("history", QUERY, "--project", str(workspace), "--explain")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(" 1. " + hashes[SAMESITE_TITLE][:10])
    assert lines[0].endswith(SAMESITE_TITLE)
    assert re.fullmatch(
        r"\s+bm25 rank (\d+|-) \(bm25 (-?[0-9.e+-]+(, lexical score \d\.\d{3})?|-)\), "
        r"vector rank \d+ \(cosine -?\d\.\d{3}\)",
        lines[2],
    ), lines[2]
    assert "mode hybrid" in err
    code, out, err = cli("history", QUERY, "--project", str(workspace))
    assert code == 0, err
    assert "bm25 rank" not in out and "vector rank" not in out
