"""What ``gitquarry status`` shows of one workspace index: the commit history
(``history.index.status``), embedding coverage per namespace and the architecture graph (the
web page's status tab too). Read-only; above the corpora it reports on, below ``indexing``."""

from __future__ import annotations

from typing import Any

from gitquarry.history.index.status import history_status
from gitquarry.store import Store
from gitquarry.workspace import Workspace


def extras_status(workspace: Workspace, store: Store) -> dict[str, Any]:
    """``{"embedding_namespaces": [{"namespace", "embedded", "fraction"}, ...],
    "embeddings": <the newest namespace> (only when there is one), "graph": {...}}``;
    ``fraction`` is of all indexed commits, rounded to 4 places (0.0 with no commit)."""
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


def workspace_status(workspace: Workspace, store: Store) -> dict[str, Any]:
    """Everything ``gitquarry status`` shows, as JSON-ready data."""
    data: dict[str, Any] = {
        "workspace": str(workspace.root),
        "index": str(workspace.db_path),
        "index_bytes": store.size_bytes(),
        **history_status(store),
    }
    data.update(extras_status(workspace, store))
    return data
