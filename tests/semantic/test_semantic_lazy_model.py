"""A lexical query never loads the embedding model, even when the index holds vectors of
the default namespace. Checked in a fresh ``python -X importtime -m gitquarry`` process:
``onnxruntime`` and ``tokenizers`` must not be imported at all."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from gitquarry.embedding.fake import HashingEmbedder
from gitquarry.embedding.minilm import DIMENSIONS, MODEL_ID, PROVIDER
from gitquarry.history.index.document import text_format
from gitquarry.history.index.embed import embed_pending
from gitquarry.store import open_store

from .conftest import GitRepo, Harness, run_gitquarry, write_workspace_config

HEAVY = ("onnxruntime", "tokenizers")


class PosingAsMiniLM(HashingEmbedder):
    """Writes vectors into the default (MiniLM) namespace without loading the model."""

    provider = PROVIDER

    def __init__(self) -> None:
        super().__init__(DIMENSIONS)
        self.model = MODEL_ID


def imported_modules(stderr: str) -> set[str]:
    names = set()
    for line in stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+\d+ \|\s+(\S+)", line)
        if match:
            names.add(match.group(1))
    return names


def loads_heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in HEAVY}


@pytest.fixture
def indexed_with_default_vectors(workspace_dir: Path, make_repo: Callable[[str], GitRepo]) -> Path:
    repo = make_repo("app")
    repo.commit("Fix cookie SameSite default", {"web/cookies.py": 'SAMESITE = "Lax"\n'})
    repo.commit("Add login rate limit", {"web/login.py": "LIMIT = 5\n"})
    harness = Harness(workspace_dir, provider="none")
    harness.index(embed=False)
    with open_store(harness.db_path) as store:
        report = embed_pending(store, PosingAsMiniLM())
    assert report.namespace == f"{PROVIDER}|{MODEL_ID}|{DIMENSIONS}|{text_format()}"
    assert report.with_vectors == 2
    return workspace_dir


def history(workspace: Path, *args: str) -> tuple[dict[str, object], set[str]]:
    proc = run_gitquarry(
        "history", "cookie samesite", "--project", str(workspace), "--json", *args,
        python_args=("-X", "importtime"),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout), imported_modules(proc.stderr)


def test_lexical_query_never_imports_the_model_runtime(indexed_with_default_vectors: Path) -> None:
    data, modules = history(indexed_with_default_vectors, "--mode", "lexical")
    assert modules, "no -X importtime output: the check would prove nothing"
    assert "gitquarry.history.search.engine" in modules
    assert data["effective_mode"] == "lexical"
    assert data["results"]
    assert loads_heavy(modules) == set()
    assert "gitquarry.embedding.minilm" not in modules
    # index_state still finds the configured namespace (from the index, no embedder built)
    assert data["index_state"]["repositories"][0]["embedded_fraction"] == 1.0


def test_configured_lexical_default_never_imports_the_model_runtime(
    indexed_with_default_vectors: Path,
) -> None:
    write_workspace_config(indexed_with_default_vectors, '[search]\nmode = "lexical"\n')
    data, modules = history(indexed_with_default_vectors)
    assert data["requested_mode"] == "lexical"
    assert loads_heavy(modules) == set()


def test_hybrid_query_does_load_the_model(indexed_with_default_vectors: Path) -> None:
    """The positive control: the same probe sees the runtime when the model is used."""
    data, modules = history(indexed_with_default_vectors, "--mode", "hybrid")
    assert data["effective_mode"] == "hybrid"
    assert "onnxruntime" in modules
