"""What the index holds, for ``gitquarry status`` and the MCP server."""

from __future__ import annotations

from typing import Any

from gitquarry.gitio.runner import display_bytes
from gitquarry.history.index.locations import exists, row_path
from gitquarry.store import Store
from gitquarry.store.capabilities import has_table


def _problems(store: Store) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    if not has_table(store.conn, "repo_problems"):
        return out
    for row in store.conn.execute(
        "SELECT repo_id, code, ref, object, message FROM repo_problems ORDER BY repo_id, ref"
    ):
        ref = row["ref"]
        out.setdefault(int(row["repo_id"]), []).append({
            "ref": display_bytes(bytes(ref)) if isinstance(ref, bytes) else ref,
            "code": row["code"],
            "object": row["object"],
            "message": row["message"],
        })
    return out


def skipped_repositories(store: Store) -> list[dict[str, Any]]:
    """Repositories git refused or failed to open in the last run of each workspace:
    ``path``, ``code`` (stable), ``message`` (why, and what to do), ``seen_at`` (Unix s)."""
    if not has_table(store.conn, "skipped_repositories"):
        return []
    return [
        {"path": r["path"], "code": r["code"], "message": r["message"], "seen_at": r["seen_at"]}
        for r in store.conn.execute(
            "SELECT path, code, message, seen_at FROM skipped_repositories ORDER BY path"
        )
    ]


def history_status(store: Store) -> dict[str, Any]:
    """Repositories and commit totals.

    Per repository: ``path``, ``common_dir``, ``is_bare``, ``object_format``,
    ``last_indexed_at`` (Unix s UTC), ``run_in_progress`` (an unfinished run: the next
    ``gitquarry index`` resumes it), ``commits``, ``refs``, ``exists`` (False: its git
    directory is gone; the next ``gitquarry index`` forgets it), ``error``/``error_code``
    (the last run failed), ``problems`` (broken refs: ``ref``, ``code``, ``object``,
    ``message``). Top level: ``skipped`` (see ``skipped_repositories``), ``total_commits``,
    ``last_indexed_at``.
    """
    conn = store.conn
    problems = _problems(store)
    repos = []
    for row in conn.execute(
        "SELECT r.*, "
        "(SELECT count(*) FROM repo_commits rc WHERE rc.repo_id = r.id) AS commits, "
        "(SELECT count(*) FROM repo_refs f WHERE f.repo_id = r.id) AS refs "
        "FROM repositories r ORDER BY r.path"
    ):
        keys = row.keys()
        raw = row["common_dir_raw"] if "common_dir_raw" in keys else None
        repos.append({
            "path": row["path"],
            "common_dir": row["common_dir"],
            "is_bare": bool(row["is_bare"]),
            "object_format": row["object_format"],
            "last_indexed_at": row["last_indexed_at"],
            "run_in_progress": bool(row["run_in_progress"]),
            "commits": int(row["commits"]),
            "refs": int(row["refs"]),
            "exists": exists(row_path(row["common_dir"], raw)),
            "error": row["last_error"],
            "error_code": row["last_error_code"] if "last_error_code" in keys else None,
            "problems": problems.get(int(row["id"]), []),
        })
    total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
    last = conn.execute("SELECT max(last_indexed_at) FROM repositories").fetchone()[0]
    return {
        "repositories": repos,
        "skipped": skipped_repositories(store),
        "total_commits": total,
        "last_indexed_at": last,
    }


def index_health(conn: Any) -> list[tuple[str, str]]:
    """(code, message) for each fact about the indexing runs that makes answers incomplete:
    ``indexing_incomplete`` (a run is going on or was interrupted: `gitquarry index` finishes
    it), ``repository_failed`` (the last run of a repository failed: re-running would fail
    again, so the message points to `gitquarry status`), ``refs_incomplete`` (refs whose
    history could not be read in full)."""
    out: list[tuple[str, str]] = []
    has_error_code = "last_error_code" in {
        r[1] for r in conn.execute("PRAGMA table_info(repositories)")
    }
    failed_sql = "last_error IS NOT NULL" if has_error_code else "0"
    unfinished = int(conn.execute(
        f"SELECT count(*) FROM repositories WHERE run_in_progress = 1 AND NOT ({failed_sql})"
    ).fetchone()[0])
    if unfinished:
        out.append((
            "indexing_incomplete",
            f"{unfinished} {'repository is' if unfinished == 1 else 'repositories are'} "
            "being indexed, or a run was interrupted: results may be incomplete "
            "(`gitquarry index` finishes the work)",
        ))
    failed = int(conn.execute(
        f"SELECT count(*) FROM repositories WHERE {failed_sql}"
    ).fetchone()[0])
    if failed:
        out.append((
            "repository_failed",
            f"{failed} {'repository' if failed == 1 else 'repositories'} failed to index in "
            "the last run, so their newest commits may be missing; `gitquarry status` says why",
        ))
    if has_table(conn, "repo_problems"):
        broken = int(conn.execute("SELECT count(*) FROM repo_problems").fetchone()[0])
        if broken:
            out.append((
                "refs_incomplete",
                f"{broken} {'ref' if broken == 1 else 'refs'} could not be read in full "
                "(objects missing from a repository); `gitquarry status` lists them",
            ))
    return out

