"""Where the indexed repositories are: paths stored losslessly, moved workspaces followed,
vanished repositories forgotten.

A repository row is keyed by its git common dir. Paths are stored as text (``\\xNN`` escapes
for bytes that are not UTF-8) plus, only for such paths, their exact bytes
(``path_raw``/``common_dir_raw``), which are what the filesystem is asked about.

* Moved: ``mv old/ws new/ws`` takes the index along (``.gitquarry/`` lives inside). A
  repository found at ``new/ws/x/.git`` with no row, while a row's ``old/ws/x/.git`` no longer
  exists and lay at the same place under its workspace, is the same repository: the row is
  moved (refs, memberships and vectors kept) and the run continues incrementally from it.
* Vanished: after the run, a row whose git directory no longer exists is removed, wherever it
  was; a row under this workspace that was not found again (excluded) is removed too. A row
  for a repository git refused this time (``skipped``) is kept: the refusal is reported and
  the user may lift it. Commits no repository holds any more are deleted.
"""

from __future__ import annotations

import os
from pathlib import Path
from sqlite3 import Connection, Row
from typing import TYPE_CHECKING

from gitquarry.gitio.runner import display_path
from gitquarry.store import Store

if TYPE_CHECKING:  # imported where used: a query's index check needs neither (issue 21 §1)
    from gitquarry.gitio.discovery import Repository, SkippedRepository
    from gitquarry.history.index.report import MovedReport, RemovedReport


def path_columns(path: Path) -> tuple[str, bytes | None]:
    """(text, raw): the display text of ``path`` and, when it is not valid UTF-8, its bytes."""
    raw = os.fsencode(path)
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return display_path(path), raw


def row_path(text: str, raw: bytes | None) -> Path:
    """The filesystem path a row's (text, raw) columns name."""
    return Path(os.fsdecode(bytes(raw))) if raw is not None else Path(text)


def exists(path: Path) -> bool:
    """False only when the filesystem says the path is not there (a permission error or an
    unreachable mount is not proof that a repository is gone)."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


def _rows(conn: Connection) -> list[Row]:
    return conn.execute(
        "SELECT id, common_dir, common_dir_raw, path, path_raw, workspace_root "
        "FROM repositories"
    ).fetchall()


def relocate_moved(store: Store, root: Path, found: list[Repository]) -> list[MovedReport]:
    """Move the rows of repositories whose workspace moved to ``root`` (module docstring)."""
    from gitquarry.history.index.report import MovedReport

    rows = _rows(store.conn)
    by_dir = {os.fsencode(row_path(r["common_dir"], r["common_dir_raw"])) for r in rows}
    root_text, _ = path_columns(root)
    moved: list[MovedReport] = []
    for repo in found:
        if os.fsencode(repo.common_dir) in by_dir:
            continue
        try:
            rel = repo.common_dir.relative_to(root)
        except ValueError:
            continue
        candidates = [
            r for r in rows
            if r["workspace_root"] and r["workspace_root"] != root_text
            and Path(r["workspace_root"]) / rel == row_path(r["common_dir"], r["common_dir_raw"])
            and not exists(row_path(r["common_dir"], r["common_dir_raw"]))
        ]
        if len(candidates) != 1:
            continue
        row = candidates[0]
        common_text, common_raw = path_columns(repo.common_dir)
        path_text, path_raw = path_columns(repo.path)
        with store.atomic() as conn:
            conn.execute(
                "UPDATE repositories SET common_dir = ?, common_dir_raw = ?, path = ?, "
                "path_raw = ?, workspace_root = ? WHERE id = ?",
                (common_text, common_raw, path_text, path_raw, root_text, row["id"]),
            )
        rows = [r for r in rows if r["id"] != row["id"]]
        moved.append(MovedReport(old_path=row["path"], path=path_text))
    return moved


def remove_vanished(
    store: Store, root: Path, found: list[Repository], skipped: list[SkippedRepository]
) -> list[RemovedReport]:
    """Forget repositories that are gone or no longer found under ``root`` (module docstring)."""
    from gitquarry.history.index.report import RemovedReport

    keep = {os.fsencode(r.common_dir) for r in found}
    refused = {os.fsencode(s.path) for s in skipped}
    removed: list[RemovedReport] = []
    for row in _rows(store.conn):
        common = row_path(row["common_dir"], row["common_dir_raw"])
        if os.fsencode(common) in keep:
            continue
        path = row_path(row["path"], row["path_raw"])
        if os.fsencode(path) in refused:
            continue
        gone = not exists(common)
        under_root = path == root or root in path.parents or root in common.parents
        if not (gone or under_root):
            continue  # indexed from another workspace and still there
        with store.atomic() as conn:
            members, deleted = _forget(conn, int(row["id"]))
        removed.append(
            RemovedReport(
                path=row["path"], reason="gone" if gone else "not_found",
                commits=members, deleted_commits=deleted,
            )
        )
    return removed


def _forget(conn: Connection, repo_id: int) -> tuple[int, int]:
    """Delete one repository row and the commits only it held: (members, deleted)."""
    members = int(conn.execute(
        "SELECT count(*) FROM repo_commits WHERE repo_id = ?", (repo_id,)
    ).fetchone()[0])
    before = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
    conn.execute("DELETE FROM repositories WHERE id = ?", (repo_id,))
    conn.execute(
        "DELETE FROM git_commits WHERE NOT EXISTS "
        "(SELECT 1 FROM repo_commits rc WHERE rc.commit_id = git_commits.id)"
    )
    after = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
    return members, before - after


def record_skipped(store: Store, root: Path, skipped: list[SkippedRepository], now: int) -> None:
    """Replace the skipped repositories recorded for ``root`` with this run's."""
    root_text, _ = path_columns(root)
    with store.atomic() as conn:
        conn.execute("DELETE FROM skipped_repositories WHERE workspace_root = ?", (root_text,))
        conn.executemany(
            "INSERT OR REPLACE INTO skipped_repositories "
            "(path_raw, path, workspace_root, code, message, seen_at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (os.fsencode(s.path), display_path(s.path), root_text, s.code, s.message, now)
                for s in skipped
            ],
        )
