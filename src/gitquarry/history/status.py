"""What the index holds, for ``gitquarry status`` and the MCP server."""

from __future__ import annotations

from typing import Any

from gitquarry.store import Store
from gitquarry.workspace import Workspace


def history_status(store: Store) -> dict[str, Any]:
    """Repositories (path, commits, refs, last_indexed_at Unix s UTC) and commit totals."""
    conn = store.conn
    repos = [
        {
            "path": row["path"],
            "common_dir": row["common_dir"],
            "is_bare": bool(row["is_bare"]),
            "object_format": row["object_format"],
            "last_indexed_at": row["last_indexed_at"],
            "run_in_progress": bool(row["run_in_progress"]),
            "commits": int(row["commits"]),
            "refs": int(row["refs"]),
        }
        for row in conn.execute(
            "SELECT r.*, "
            "(SELECT count(*) FROM repo_commits rc WHERE rc.repo_id = r.id) AS commits, "
            "(SELECT count(*) FROM repo_refs f WHERE f.repo_id = r.id) AS refs "
            "FROM repositories r ORDER BY r.path"
        )
    ]
    total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
    last = conn.execute("SELECT max(last_indexed_at) FROM repositories").fetchone()[0]
    return {"repositories": repos, "total_commits": total, "last_indexed_at": last}


def workspace_status(workspace: Workspace, store: Store) -> dict[str, Any]:
    """Everything ``gitquarry status`` shows, as JSON-ready data."""
    from gitquarry.indexing import extras_status

    data: dict[str, Any] = {
        "workspace": str(workspace.root),
        "index": str(workspace.db_path),
        "index_bytes": store.size_bytes(),
        **history_status(store),
    }
    data.update(extras_status(workspace, store))
    return data
