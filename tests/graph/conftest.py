"""Fixtures for the architecture-graph tests: real graph/doc files, real SQLite files."""

from __future__ import annotations

import sqlite3
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gitquarry.config import GraphConfig
from gitquarry.graph import reindex_graph
from gitquarry.store import Store, open_store
from gitquarry.store.migrations import MIGRATIONS

GRAPH_YAML = """\
nodes:
  - ref_id: context-oracle
    kind: domain
    summary: Context oracle resolving architecture questions
    docs: [docs/domains/context-oracle.md]
  - ref_id: search
    kind: feature
    summary: Full text search over graph nodes
    source: src/beadloom/context_oracle/search.py
    docs:
      - docs/features/search.md
    owner: core-team
    tags: [fts, bm25]
  - ref_id: mcp-server
    kind: service
    summary: MCP server exposing tools to agents
    docs: [docs/services/mcp.md]
  - ref_id: cli
    kind: service
    summary: Command line interface to search
  - ref_id: node-record
    kind: entity
    summary: A node of the architecture graph
  - ref_id: adr-001-sqlite
    kind: adr
    summary: Use SQLite with FTS5 for local storage
    docs: [docs/adr/001-sqlite.md]
edges:
  - {src: search, dst: context-oracle, kind: part_of}
  - {src: mcp-server, dst: search, kind: uses}
  - {src: cli, dst: search, kind: uses}
"""

DOCS = {
    "docs/domains/context-oracle.md": """\
        # Context oracle

        The oracle answers questions about the architecture.

        ## Graph traversal
        Breadth first walk over edges with depth limits.
        """,
    "docs/features/search.md": """\
        # Search

        ## Ranking
        Results are ordered by BM25 relevance; snippets highlight matching words.

        ## Query escaping
        Special characters such as asterisk and colon are neutralised.
        """,
    "docs/services/mcp.md": """\
        # MCP server

        ## Transport
        The server speaks JSON-RPC over stdio.

        ## Tools
        The search tool wraps the search feature.

        ## Zeppelin integration
        Handles zeppelin requests from agents.
        """,
    "docs/adr/001-sqlite.md": """\
        # ADR 001

        ## Decision
        We store everything in a single SQLite file.
        """,
    "docs/guides/onboarding.md": """\
        # Onboarding

        ## First steps
        Install the tool and read about quasar deployment.
        """,
}


def write_project(root: Path, graph: str = GRAPH_YAML, docs: dict[str, str] | None = None) -> Path:
    """Write a beadloom-style project under ``root`` and return it."""
    graph_dir = root / ".beadloom" / "_graph"
    graph_dir.mkdir(parents=True, exist_ok=True)
    (graph_dir / "graph.yml").write_text(graph, encoding="utf-8")
    for rel, text in (DOCS if docs is None else docs).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "proj").resolve()


@pytest.fixture
def config() -> GraphConfig:
    return GraphConfig()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(tmp_path / "index" / "index.db") as s:
        yield s


@pytest.fixture
def indexed(store: Store, project: Path, config: GraphConfig) -> Store:
    reindex_graph(store, project, config)
    return store




def deny_fts5(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
    """SQLite authorizer refusing every FTS5 table (the graph's, history's ``commit_fts`` and
    the probes), as a SQLite built without FTS5 would."""
    if action == sqlite3.SQLITE_CREATE_VTABLE and arg2 == "fts5":
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def open_store_without_fts5(path: Path) -> Store:
    """Open (and migrate) ``path`` on a connection that cannot create FTS5 tables."""
    store = open_store(path, migrate=False)
    store.conn.set_authorizer(deny_fts5)
    MIGRATIONS.apply(store.conn)
    return store


@pytest.fixture
def no_fts5_store(tmp_path: Path) -> Iterator[Store]:
    with open_store_without_fts5(tmp_path / "nofts" / "index.db") as s:
        yield s


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(1000))

    def make(graph: str = GRAPH_YAML, docs: dict[str, str] | None = None) -> Path:
        return write_project(tmp_path / f"p{next(counter)}", graph, docs).resolve()

    return make
