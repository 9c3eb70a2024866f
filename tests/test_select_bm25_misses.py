"""``tools/commit_encoder/select_bm25_misses.py``: keep the pairs BM25 does not answer.

Real SQLite FTS5 (in memory, as the tool runs), pairs written as pairs_v2 writes them. A pair
whose positive BM25 ranks in the top ``depth`` is dropped unless drawn into the kept share; a
pair BM25 misses is always kept; the same input gives the same bytes; an evaluation
repository is refused.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "select_bm25_misses", ROOT / "tools" / "commit_encoder" / "select_bm25_misses.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _pair(repo: str, commit: str, title: str, body: str) -> dict[str, str]:
    return {"repo": repo, "commit": commit, "mode": "title", "query": title,
            "document": body, "doc_full": f"{title}\n{body}", "doc_title": title,
            "doc_body": body}


def _pairs() -> list[dict[str, str]]:
    out = [_pair("o/r", f"c{i:02d}", f"Change module{i} setting",
                 f"src/module{i}.py\nvalue = {i}") for i in range(12)]
    # the title's words are nowhere in the diff side: a miss against the pair's own shape
    out.append(_pair("o/r", "zz", "Speed up cold start", "src/loader.py\nlazy import"))
    return out


def test_misses_are_kept_and_hits_only_by_the_share(tmp_path: Path) -> None:
    tool = _tool()
    pairs = _pairs()
    full = tool.bm25_ranks(pairs, 10)
    assert all(r is not None and r <= 10 for r in full)  # the title is in doc_full
    own = tool.bm25_ranks(pairs, 10, field="document")
    assert own[-1] is None  # "speed up cold start" is not in the diff side
    assert all(r == 1 for r in own[:-1])  # module<i> is only in commit i's diff side
    none_kept = tool.select(pairs, own, 10, 0.0, 13)
    assert [p["commit"] for p in none_kept] == ["zz"]
    all_kept = tool.select(pairs, own, 10, 1.0, 13)
    assert [p["commit"] for p in all_kept] == [p["commit"] for p in pairs]
    assert all_kept[-1]["bm25_rank"] is None and all_kept[0]["bm25_rank"] == 1


def test_same_input_same_bytes(tmp_path: Path) -> None:
    tool = _tool()
    src = tmp_path / "pairs.jsonl"
    src.write_text("".join(json.dumps(p) + "\n" for p in _pairs()), "utf-8")
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        assert tool.main(["--pairs", str(src), "--out", str(out), "--against", "document",
                          "--keep-share", "0.5"]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert b'"zz"' in outs[0]


def test_an_evaluation_repository_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "pairs.jsonl"
    src.write_text(json.dumps(_pair("pallets/click", "c1", "Fix x", "a.py")) + "\n", "utf-8")
    with pytest.raises(SystemExit, match="evaluation"):
        _tool().main(["--pairs", str(src), "--out", str(tmp_path / "o.jsonl")])
