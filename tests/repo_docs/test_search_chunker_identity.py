"""Full-text search answers are the same with this chunker as with main's (frozen in
``_chunk_reference.py``): every hit, its path, byte and line ranges, heading path, snippet,
score and order, for many queries over a real repository made here (this checkout's docs and
generated documents with ATX titles, attribute lists, closing ``#`` runs, setext headings,
non-ASCII text and sections over the size bound), with an indexed revision set and without.
The chunker is swapped where the service calls it (``repo_docs.api``, ``repo_docs.indexer``),
each side in a fresh service (no shared tables)."""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.repo_docs import _chunk_reference as reference

from gitquarry.config import Config
from gitquarry.repo_docs import api, indexer
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Registry, Selector

from .conftest import Repo

ROOT = Path(__file__).resolve().parents[2]
WORDS = ["widget", "deploy", "proxy", "cache", "token", "snippet", "étude", "naïve", "配置",
         "сервер", "option", "flag", "index", "search", "commit", "history", "vector"]


def generated_docs(count: int, seed: int) -> dict[str, str]:
    """Markdown pages whose headings take every title path of ``parsing.markdown``."""
    rng = random.Random(seed)
    docs = {}
    for n in range(count):
        parts = [f"# Page {n} {rng.choice(WORDS)}\n"]
        for k in range(rng.randint(1, 9)):
            level = "#" * rng.randint(2, 4)
            title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
            shape = rng.randrange(6)
            if shape == 0:
                parts.append(f"{level} {title} {{ #anchor-{k} }}\n")
            elif shape == 1:
                parts.append(f"{level} {title} {'#' * rng.randint(1, 3)}\n")
            elif shape == 2:
                parts.append(f"{title}\n{rng.choice(['===', '---'])}\n")
            elif shape == 3:
                parts.append(f"   {level}\t{title}   {{.cls}}\n")
            elif shape == 4:
                parts.append(f"{level} {title} {{ not-attrs }} x\n")
            else:
                parts.append(f"> {level} quoted {title}\n")
            words = rng.randint(3, 400)  # some sections over the 1,500-character bound
            body = " ".join(rng.choice(WORDS) for _ in range(words))
            parts.append("\n" + "\n\n".join(body[i:i + 300] for i in range(0, len(body), 300))
                         + "\n\n")
            if rng.random() < 0.2:
                parts.append("```\n# not a heading\n```\n\n")
        docs[f"docs/gen/page{n}.md"] = "".join(parts)
    return docs


def checkout_docs() -> dict[str, str]:
    listed = subprocess.run(["git", "ls-files", "-z", "--", "docs", "README.md"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    out = {}
    for name in listed:
        path = ROOT / name
        if path.suffix in (".md", ".rst", ".txt") and path.is_file():
            out[name] = path.read_text(encoding="utf-8")
    return out


def answers(config: Config, repo: Repo, state: Path, queries: list[str],
            index_first: bool) -> list[dict[str, Any]]:
    with RepoDocsService(config, Registry(state / "registry.json")) as service:
        service.register("o/r", repo.path)
        if index_first:
            service.index(Selector("o/r"))
        return [service.search(Selector("o/r"), q, mode="fulltext", limit=50)
                for q in queries]


@pytest.mark.parametrize("index_first", [False, True])
def test_search_answers_equal_main_chunkers(
        make_repo: Callable[..., Repo], tmp_path: Path, fake_config: Config,
        monkeypatch: pytest.MonkeyPatch, index_first: bool) -> None:
    files: dict[str, str | bytes | None] = {**checkout_docs(), **generated_docs(40, 11)}
    repo = make_repo(files)
    rng = random.Random(3)
    queries = [*WORDS, *(" ".join(rng.sample(WORDS, 3)) for _ in range(12)),
               "deployment nginx", "hybrid search fusion", "chunk policy"]
    config = fake_config.replaced(indexing={"index_dir": str(tmp_path / "cache-new")})
    new = answers(config, repo, tmp_path / "new", queries, index_first)

    calls = {"n": 0}

    def main_chunker(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        return reference.chunk_document(*args, **kwargs)

    monkeypatch.setattr(api, "chunk_document", main_chunker)
    monkeypatch.setattr(indexer, "chunk_document", main_chunker)
    config = fake_config.replaced(indexing={"index_dir": str(tmp_path / "cache-main")})
    old = answers(config, repo, tmp_path / "old", queries, index_first)

    assert calls["n"] >= len(files)  # main's chunker did cut every document on that side
    hits = [h for response in new for h in response["hits"]]
    assert len(hits) > 300 and len({h["path"] for h in hits}) > 30
    assert any(" > " in h["heading_path"] for h in hits)
    for query, got, want in zip(queries, new, old, strict=True):
        assert got == want, query
