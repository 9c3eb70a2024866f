"""The one indexing workflow of a workspace, used by ``gitquarry index`` (``cli.index_run``)
and by the daemon's jobs (``service.job_types``) alike.

Its steps, each one function here:

- ``writing(workspace, lease)``: hold the writer lease (``Workspace.write_lock``: the same
  ``flock``, bounded wait and holder identity for a CLI run and a daemon job; the caller
  passes the lease it configured), open the index (created if asked), hand each trust notice
  (an index set aside or adopted) to ``on_notice``, and close it at the end;
- ``index_history``: the incremental commit-history indexer (by reachability; a killed run
  resumes without loss or duplicates);
- ``refresh_graph``: reindex the architecture graph when its files changed; a broken graph
  file is returned as an error, never raised, so it cannot stop history or vectors;
- ``embed_commits``: embed the commits that lack vectors, with the configured provider or
  the embedder the caller built (the daemon's checkpointing one);
- ``refresh_repo_docs``: the HEAD docs revision sets of registered repositories under the
  workspace (``gitquarry index`` only).

Progress goes through the indexer's ``Progress`` protocol in every step, and cancellation
through it too: the daemon's progress raises ``JobStop`` at the next progress point, the
CLI's run stops on Ctrl-C. ``gitquarry index`` runs them all in one lease; the daemon runs
history and graph in one ``history_index`` job and the embedding in a chained
``history_embed`` job that yields to more urgent work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitquarry.history.index.progress import Progress
from gitquarry.store import Store
from gitquarry.workspace import Workspace

if TYPE_CHECKING:
    from gitquarry.embedding import Embedder
    from gitquarry.errors import GitquarryError
    from gitquarry.gitio.discovery import Discovery
    from gitquarry.graph.indexer import GraphIndexReport
    from gitquarry.history.index.report import IndexReport


@contextmanager
def writing(
    workspace: Workspace, lease: AbstractContextManager[Any], *, create: bool = True,
    on_notice: Callable[[str], None] | None = None,
) -> Iterator[Store]:
    """Hold ``lease`` (the workspace's writer lease, as the caller configured it: wait,
    holder, on-wait callback), open the index (``create``: make one if there is none) and
    yield it; closed and the lease let go at the end, also on an error or a stop.

    :raises WriterBusyError: as ``Workspace.write_lock``.
    :raises NoIndexError: ``create`` is False and there is no index.
    """
    with lease:
        store = workspace.open_store(create=create, upgrade=True)  # under the lease
        try:
            if on_notice is not None:
                for notice in store.notices:  # an index set aside or adopted (store.trust)
                    on_notice(notice)
            yield store
        finally:
            store.close()


def index_history(workspace: Workspace, store: Store, *, progress: Progress,
                  found: Discovery | None = None) -> IndexReport:
    """Index the commit history of every repository under the workspace (incremental);
    ``found``: the workspace's discovery when the caller already made it.

    :raises Fts5UnavailableError: SQLite lacks FTS5. :raises IndexingInterrupted: Ctrl-C."""
    from gitquarry.history.index.indexer import index_workspace

    return index_workspace(workspace.root, store, workspace.config, progress=progress,
                           found=found)


def refresh_graph(
    workspace: Workspace, store: Store
) -> tuple[GraphIndexReport | None, GitquarryError | None]:
    """Reindex the architecture graph when its files changed: (report or None when fresh or
    absent, None) or (None, the error) when a graph file is broken."""
    from gitquarry.errors import GitquarryError
    from gitquarry.graph import refresh_if_stale

    try:
        return refresh_if_stale(store, workspace.root, workspace.config.graph), None
    except GitquarryError as exc:  # a broken graph file must not stop history or vectors
        return None, exc


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
        """The ``--json`` fields: ``graph``, ``embeddings``, ``repo_docs``, and the one-line
        ``warnings`` and ``errors`` the terminal shows (an error makes the exit status 1)."""
        return {"graph": self.graph, "embeddings": self.embeddings, "repo_docs": self.repo_docs,
                "warnings": list(self.warnings), "errors": list(self.errors)}

    def summary_lines(self) -> list[str]:
        return list(self.notes)


def _n(n: int, word: str) -> str:
    """``1 node``, ``2 nodes``."""
    return f"{n:,} {word if n == 1 else word + 's'}"


def embed_commits(
    workspace: Workspace, store: Store, *, progress: Progress, embedder: Embedder | None = None
) -> dict[str, Any] | None:
    """Embed commits lacking vectors (``EmbedReport.to_dict()``), in batches of
    ``[embedding] batch_size``. ``embedder``: the caller's (kept open; the daemon's
    checkpointing one); None: the configured provider's, closed after (None is returned
    when the provider is ``none``).

    :raises DataBoundaryError: the provider's data boundary forbids repository content.
    :raises EmbeddingError: the provider failed (finished batches are kept).
    """
    from gitquarry.embedding import create_embedder
    from gitquarry.history.index.embed import embed_pending

    config = workspace.config.embedding
    if embedder is not None:
        return embed_pending(store, embedder, batch_size=config.batch_size,
                             progress=progress).to_dict()
    own = create_embedder(config, purpose="index")
    if own is None:
        return None
    try:
        report = embed_pending(store, own, batch_size=config.batch_size, progress=progress)
    finally:
        own.close()
    return report.to_dict()


def index_extras(
    workspace: Workspace, store: Store, *, progress: Progress, embed: bool
) -> ExtrasReport:
    """Reindex the architecture graph when its files changed (if the project has one) and
    embed commits that lack vectors. Both are no-ops when nothing changed."""
    from gitquarry.errors import EmbeddingError

    report = ExtrasReport()
    graph, graph_error = refresh_graph(workspace, store)
    if graph_error is not None:
        report.errors.append(f"architecture graph not indexed: {graph_error}")
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
    failure is reported and does not stop the others; a repository whose docs the daemon
    is indexing at that moment (its writer lease held by a daemon job) is a warning, not a
    failure."""
    from gitquarry.errors import GitquarryError, WriterBusyError
    from gitquarry.repo_docs.registry import Registry

    root = workspace.root.resolve()
    try:
        bindings = [b for b in Registry().bindings()
                    if b.path == root or root in b.path.parents]
    except GitquarryError as exc:
        report.errors.append(f"repository docs not refreshed: {exc}")
        return
    if not bindings:
        return  # the docs indexer (and numpy, which it imports) is not loaded for nothing
    from gitquarry.repo_docs.indexer import index_revision_set

    config = workspace.config
    if not embed:
        config = config.replaced(embedding={"provider": "none"})
    for binding in bindings:
        try:
            result = index_revision_set(binding, config)
        except WriterBusyError as exc:
            if not exc.holder.startswith("daemon "):
                report.errors.append(f"repository docs of {binding.repo_id} not refreshed: "
                                     f"{exc}")
                continue
            # the daemon is building these very docs right now: not this run's failure
            report.warnings.append(
                f"repository docs of {binding.repo_id} not refreshed by this run: the daemon "
                f"is indexing them now ({exc.holder}; `gitquarry jobs list` shows it)")
            continue
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
