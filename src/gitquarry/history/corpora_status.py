"""The status of the corpora built beside the commit history in one workspace index:
embedding coverage per namespace and the architecture graph (``gitquarry status``, the web
page's status tab). Read-only; lives below ``indexing`` so that ``history.status`` needs no
upward import."""

from __future__ import annotations

from typing import Any

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
