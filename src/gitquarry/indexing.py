"""Work that ``gitquarry index`` does after the commit history: graph, embeddings and the
docs revision sets of registered repositories under the workspace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gitquarry.history.progress import Progress
from gitquarry.store import Store
from gitquarry.workspace import Workspace


@dataclass
class ExtrasReport:
    """``graph``: the graph reindex report (None: no graph); ``embeddings``: the embedding
    run (None: skipped); ``notes``: one-line summaries for the CLI."""

    graph: dict[str, Any] | None = None
    embeddings: dict[str, Any] | None = None
    #: one entry per registered repository under the workspace whose HEAD docs set was
    #: refreshed (``IndexResult.to_dict()``)
    repo_docs: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: failures of one part (graph, embeddings) that did not stop the others
    errors: list[str] = field(default_factory=list)

    @property
    def did_work(self) -> bool:
        emb = self.embeddings or {}
        docs = any(not d.get("up_to_date") for d in self.repo_docs)
        return self.graph is not None or bool(emb.get("embedded") or emb.get("reused")) or docs

    def to_dict(self) -> dict[str, Any]:
        return {"graph": self.graph, "embeddings": self.embeddings, "repo_docs": self.repo_docs}

    def summary_lines(self) -> list[str]:
        return list(self.notes)


def _n(n: int, word: str) -> str:
    """``1 node``, ``2 nodes``."""
    return f"{n:,} {word if n == 1 else word + 's'}"


def embed_commits(
    workspace: Workspace, store: Store, *, progress: Progress
) -> dict[str, Any] | None:
    """Embed commits lacking vectors with the configured provider; None when provider=none.

    :raises DataBoundaryError: the provider's data boundary forbids repository content.
    :raises EmbeddingError: the provider failed (finished batches are kept).
    """
    from gitquarry.embedding import create_embedder
    from gitquarry.history.embed import embed_pending

    config = workspace.config.embedding
    embedder = create_embedder(config, purpose="index")
    if embedder is None:
        return None
    try:
        report = embed_pending(store, embedder, batch_size=config.batch_size, progress=progress)
    finally:
        embedder.close()
    return report.to_dict()


def index_extras(
    workspace: Workspace, store: Store, *, progress: Progress, embed: bool
) -> ExtrasReport:
    """Reindex the architecture graph when its files changed (if the project has one) and
    embed commits that lack vectors. Both are no-ops when nothing changed."""
    from gitquarry.errors import EmbeddingError, GitquarryError
    from gitquarry.graph import refresh_if_stale

    report = ExtrasReport()
    try:
        graph = refresh_if_stale(store, workspace.root, workspace.config.graph)
    except GitquarryError as exc:  # a broken graph file must not stop history or vectors
        graph = None
        report.errors.append(f"architecture graph not indexed: {exc}")
    if graph is not None:
        report.graph = graph.to_dict()
        report.warnings.extend(graph.warnings)
        report.notes.append(
            f"Graph: {_n(graph.nodes, 'node')}, {_n(graph.edges, 'edge')}, "
            f"{_n(graph.docs, 'doc')} ({graph.unlinked_docs} unlinked), "
            f"{_n(graph.chunks, 'chunk')}"
            + ("" if graph.fts5 else " (no FTS5: searches use LIKE)")
            + "."
        )
    if embed:
        try:
            emb = embed_commits(workspace, store, progress=progress)
        except EmbeddingError as exc:  # keyword search works; say why vectors are missing
            emb = None
            report.errors.append(f"embeddings not computed: {exc}")
        report.embeddings = emb
        if emb is not None and emb.get("replaces") and (emb["embedded"] or emb["reused"]):
            report.notes.append(
                "Embeddings: the embedding model or commit document format changed "
                f"({', '.join(emb['replaces'])} -> {emb['namespace']}); re-embedding, newest "
                "commits first (commits without a new vector are found by keywords meanwhile)."
            )
        if emb is not None and (emb["embedded"] or emb["reused"]):
            vectors = "commit has" if emb["total_commits"] == 1 else "commits have"
            report.notes.append(
                f"Embeddings: {emb['embedded']:,} computed, {emb['reused']:,} reused in "
                f"{emb['seconds']:.1f} s; {emb['with_vectors']:,} of {emb['total_commits']:,} "
                f"{vectors} vectors ({emb['namespace']})."
            )
        if emb is not None and emb.get("removed"):
            report.notes.append(
                f"Embeddings: removed the replaced vectors of {', '.join(emb['removed'])}."
            )
    if workspace.config.docs.refresh_on_index:
        refresh_repo_docs(workspace, report, embed=embed)
    return report


def refresh_repo_docs(workspace: Workspace, report: ExtrasReport, *, embed: bool) -> None:
    """Build the HEAD docs revision set of every registered repository whose path lies under
    the workspace (with ``embed`` False: locators only, no provider). One repository's
    failure is reported and does not stop the others."""
    from gitquarry.errors import GitquarryError
    from gitquarry.repo_docs.indexer import index_revision_set
    from gitquarry.repo_docs.registry import Registry

    root = workspace.root.resolve()
    try:
        bindings = [b for b in Registry().bindings()
                    if b.path == root or root in b.path.parents]
    except GitquarryError as exc:
        report.errors.append(f"repository docs not refreshed: {exc}")
        return
    config = workspace.config
    if not embed:
        config = config.replaced(embedding={"provider": "none"})
    for binding in bindings:
        try:
            result = index_revision_set(binding, config)
        except GitquarryError as exc:
            report.errors.append(f"repository docs of {binding.repo_id} not refreshed: {exc}")
            continue
        report.repo_docs.append(result.to_dict())
        if not result.up_to_date:
            report.notes.append(
                f"Docs: {binding.repo_id} at {result.effective_revision[:12]}: "
                f"{result.eligible_files:,} files, {result.eligible_chunks:,} chunks "
                f"({result.embedded:,} embedded, {result.reused:,} reused), {result.state}."
            )


def extras_status(workspace: Workspace, store: Store) -> dict[str, Any]:
    """Embedding coverage per namespace, and the graph corpus."""
    from gitquarry.graph import graph_status

    conn = store.conn
    total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
    namespaces = [
        {"namespace": r[0], "embedded": int(r[1]),
         "fraction": round(int(r[1]) / total, 4) if total else 0.0}
        for r in conn.execute(
            "SELECT n.key, (SELECT count(*) FROM commit_vectors v WHERE v.namespace_id = n.id) "
            "FROM embedding_namespaces n ORDER BY n.id"
        )
    ]
    data: dict[str, Any] = {"embedding_namespaces": namespaces}
    if namespaces:
        data["embeddings"] = namespaces[-1]
    data["graph"] = graph_status(store).to_dict()
    return data
