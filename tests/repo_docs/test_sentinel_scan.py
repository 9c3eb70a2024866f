"""The cache holds no document text and no plaintext terms (the seed's test): docs with unique
sentinel words, a full index (fake embedder, then the real model), queries in every mode with
and without the overlay, then a raw byte scan of every file under the index directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gitquarry.config import Config
from gitquarry.embedding.fake import fake_provider_registered
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Registry, Selector

from .conftest import Repo

SENTINELS = ["Quorblaxith", "Zentrofumble", "Vextraglimmer", "Krondivaluxe", "Sprelloquant"]


def _forms(word: str) -> list[bytes]:
    out = []
    for variant in {word, word.lower(), word.upper()}:
        for encoding in ("utf-8", "utf-16-le", "utf-16-be"):
            out.append(variant.encode(encoding))
    # porter stems and FTS5 prefixes would start with the first letters
    out.append(word.lower()[:8].encode())
    return out


def scan(index_dir: Path) -> list[tuple[str, str]]:
    found = []
    files = [p for p in index_dir.rglob("*") if p.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        lowered = data.lower()
        for word in SENTINELS:
            if any(form in data or form.lower() in lowered for form in _forms(word)):
                found.append((path.name, word))
    return found


def _exercise(config: Config, repo: Repo) -> None:
    with RepoDocsService(config, Registry()) as service:
        service.register("o/sentinel", repo.path)
        sel = Selector("o/sentinel")
        assert service.index(sel).state == "ready"
        assert service.index(sel, include_worktree=True).state == "ready"
        for mode in ("hybrid", "fulltext"):
            for overlay, present in ((False, SENTINELS[:4]),
                                     (True, [SENTINELS[i] for i in (0, 3, 4)])):
                for word in present:
                    r = service.search(sel, f"{word} procedure", mode=mode,
                                       include_worktree=overlay)
                    assert r["hits"] and word in r["hits"][0]["snippet"], (mode, overlay, word)
        service.plan(sel)
        service.status(sel)


def _repo(make_repo: Callable[..., Repo]) -> Repo:
    files = {
        "README.md": f"# Project\n\nThe {SENTINELS[0]} procedure starts every deploy.\n",
        "docs/a.md": f"# Alpha\n\n## Steps\n\nRun the {SENTINELS[1]} procedure, then the "
                     f"{SENTINELS[2]} check.\n",
        "docs/b.rst": f"Beta\n====\n\nThe {SENTINELS[3]} procedure is manual.\n",
    }
    repo = make_repo(files)
    (repo.path / "docs/a.md").write_text(
        f"# Alpha\n\nEdited: the {SENTINELS[4]} procedure replaced "
        f"{SENTINELS[1]} and {SENTINELS[2]}.\n")
    return repo


def test_sentinel_scan_fake_embedder(make_repo: Callable[..., Repo]) -> None:
    repo = _repo(make_repo)
    config = Config().replaced(embedding={"provider": "fake"})
    with fake_provider_registered():
        _exercise(config, repo)
    assert scan(repo.path / ".gitquarry") == []


@pytest.mark.slow
def test_sentinel_scan_real_model(make_repo: Callable[..., Repo]) -> None:
    repo = _repo(make_repo)
    _exercise(Config(), repo)  # default provider: bundled all-MiniLM-L6-v2 (ONNX, offline)
    assert scan(repo.path / ".gitquarry") == []
