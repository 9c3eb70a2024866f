"""Index every commit of every repository in a workspace into the store.

New work is found by reachability, never by date: each repository's ref tips are stored after
a successful run, and the next run indexes ``git rev-list <new tips> --not <old tips>`` and
prunes ``git rev-list <old tips> --not <new tips>``. When an old tip is gone from the object
store, or a previous run was interrupted, the repository is fully reconciled instead (every
reachable commit listed; anything else pruned). Commits are written in batches, each batch in
one transaction, and the ref tips only at the end, so a killed run resumes without loss or
duplicates: commits already stored are recognised by hash and only get their membership.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from sqlite3 import Connection

from gitquarry.config import Config
from gitquarry.errors import GitquarryError
from gitquarry.gitio.discovery import Repository, discover_repositories
from gitquarry.gitio.log import LogCommit, stream_commits
from gitquarry.gitio.refs import existing_objects, rev_list, shallow_commits, snapshot_refs
from gitquarry.history.prefetch import prefetch
from gitquarry.history.progress import NullProgress, Progress
from gitquarry.store import Store
from gitquarry.store.capabilities import require_commit_fts
from gitquarry.store.schema.history import COMMIT_FTS_INSERT_SQL

log = logging.getLogger(__name__)

_SQL_CHUNK = 500


@dataclass
class RepoReport:
    """What one repository's run did. ``seconds`` is wall time."""

    path: str
    new_commits: int = 0
    reused_commits: int = 0
    pruned_commits: int = 0
    up_to_date: bool = False
    full_reconcile: bool = False
    missing_object_commits: int = 0
    #: shallow-clone boundary commits stored without parents, files or diff
    shallow_commits: int = 0
    #: incomplete copies stored earlier (another repository) replaced by this one's full copy
    completed_commits: int = 0
    decode_warnings: int = 0
    error: str | None = None
    #: something the user should know that is not an error (e.g. no ref matched)
    warning: str | None = None
    seconds: float = 0.0


@dataclass
class IndexReport:
    """What an indexing run did across the workspace."""

    repositories: list[RepoReport] = field(default_factory=list)
    removed_repositories: list[str] = field(default_factory=list)
    total_commits: int = 0
    seconds: float = 0.0

    @property
    def new_commits(self) -> int:
        return sum(r.new_commits for r in self.repositories)

    @property
    def pruned_commits(self) -> int:
        return sum(r.pruned_commits for r in self.repositories)

    @property
    def failed(self) -> list[RepoReport]:
        return [r for r in self.repositories if r.error]

    @property
    def up_to_date(self) -> bool:
        return (
            all(r.up_to_date for r in self.repositories) and not self.removed_repositories
        )


def _chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def index_workspace(
    root: Path,
    store: Store,
    config: Config,
    *,
    progress: Progress | None = None,
    repositories: list[Repository] | None = None,
) -> IndexReport:
    """Discover the repositories under ``root`` and bring the index up to date with them.

    A repository that fails (git error) is reported in its ``RepoReport.error`` and the run
    goes on with the others. Repositories indexed before but no longer found under ``root``
    are removed with their commits (unless another repository also holds them).
    """
    progress = progress or NullProgress()
    started = time.monotonic()
    require_commit_fts(store)
    if repositories is None:
        repositories = discover_repositories(
            root,
            exclude=config.indexing.exclude,
            exclude_hidden_dirs=config.indexing.exclude_hidden_dirs,
        )
    report = IndexReport()
    noun = "repository" if len(repositories) == 1 else "repositories"
    progress.note(f"{len(repositories)} {noun} under {root}")
    for repo in repositories:
        rstart = time.monotonic()
        try:
            rep = index_repository(store, repo, config, progress=progress)
        except GitquarryError as exc:
            log.info("indexing %s failed: %s", repo.path, exc)
            rep = RepoReport(path=str(repo.path), error=str(exc))
        rep.seconds = time.monotonic() - rstart
        report.repositories.append(rep)
    report.removed_repositories = _remove_vanished(store, root, repositories)
    report.total_commits = count_commits(store.conn)
    report.seconds = time.monotonic() - started
    return report


def count_commits(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])


def _remove_vanished(store: Store, root: Path, found: list[Repository]) -> list[str]:
    keep = {str(r.common_dir) for r in found}
    rows = store.conn.execute("SELECT id, common_dir, path FROM repositories").fetchall()
    removed: list[str] = []
    for row in rows:
        if row["common_dir"] in keep:
            continue
        common = Path(row["common_dir"])
        path = Path(row["path"])
        # Only forget repositories that belong under this workspace root and are gone or
        # now excluded; a repository indexed from elsewhere stays.
        if not (path == root or root in path.parents or root in common.parents):
            continue
        with store.atomic() as conn:
            conn.execute("DELETE FROM repositories WHERE id = ?", (row["id"],))
            conn.execute(
                "DELETE FROM git_commits WHERE NOT EXISTS "
                "(SELECT 1 FROM repo_commits rc WHERE rc.commit_id = git_commits.id)"
            )
        removed.append(row["path"])
    return removed


def _upsert_repo(store: Store, repo: Repository) -> int:
    with store.atomic() as conn:
        conn.execute(
            "INSERT INTO repositories (common_dir, path, is_bare, object_format) "
            "VALUES (?, ?, ?, ?) ON CONFLICT(common_dir) DO UPDATE SET "
            "path = excluded.path, is_bare = excluded.is_bare, "
            "object_format = excluded.object_format",
            (str(repo.common_dir), str(repo.path), int(repo.is_bare), repo.object_format),
        )
        row = conn.execute(
            "SELECT id FROM repositories WHERE common_dir = ?", (str(repo.common_dir),)
        ).fetchone()
    return int(row[0])


def index_repository(
    store: Store, repo: Repository, config: Config, *, progress: Progress | None = None
) -> RepoReport:
    """Bring one repository's commits in the index up to date with its refs.

    :raises GitError: git failed in a way that is not confined to one commit.
    """
    progress = progress or NullProgress()
    report = RepoReport(path=str(repo.path))
    conn = store.conn
    repo_id = _upsert_repo(store, repo)
    tips = snapshot_refs(repo.git_dir, config.git_indexing.refs)
    if not tips:
        report.warning = (
            "no ref matches [git_indexing] refs (" + ", ".join(config.git_indexing.refs) + "); "
            "commits reachable only from a detached HEAD or other refs are not indexed"
        )
    new_map = {t.ref: t.commit for t in tips}
    old_map = {
        row["ref"]: row["tip"]
        for row in conn.execute("SELECT ref, tip FROM repo_refs WHERE repo_id = ?", (repo_id,))
    }
    in_progress = bool(
        conn.execute(
            "SELECT run_in_progress FROM repositories WHERE id = ?", (repo_id,)
        ).fetchone()[0]
    )
    if new_map == old_map and not in_progress:
        report.up_to_date = True
        return report

    with store.atomic() as c:
        c.execute(
            "UPDATE repositories SET run_in_progress = 1, last_error = NULL WHERE id = ?",
            (repo_id,),
        )

    new_tips = sorted(set(new_map.values()))
    old_tips = sorted(set(old_map.values()))
    present_old = sorted(existing_objects(repo.git_dir, old_tips)) if old_tips else []
    has_members = conn.execute(
        "SELECT 1 FROM repo_commits WHERE repo_id = ? LIMIT 1", (repo_id,)
    ).fetchone() is not None
    full = has_members and (in_progress or len(present_old) != len(old_tips) or not old_tips)

    if full:
        report.full_reconcile = True
        progress.note(f"{repo.path}: full reconciliation")
        to_add = rev_list(repo.git_dir, new_tips, [])
        report.pruned_commits = _prune_unreachable(store, repo_id, to_add)
    else:
        to_add = rev_list(repo.git_dir, new_tips, present_old)
        if present_old:
            gone = rev_list(repo.git_dir, present_old, new_tips) if new_tips else _all_members(
                conn, repo_id
            )
            report.pruned_commits = _prune_hashes(store, repo_id, gone)

    progress.phase(f"commits {repo.path.name}", len(to_add))
    path_ids: dict[str, int] = {}
    batch_size = config.git_indexing.batch_size
    max_lines = config.git_indexing.delta_max_lines

    shallow = shallow_commits(repo.git_dir)

    def read_batches() -> Iterator[tuple[dict[str, int], list[LogCommit]]]:
        # Runs on the prefetch thread: git only, no SQLite (the known ids come with the plan).
        for batch_known, to_read in plan:
            commits = list(stream_commits(repo.git_dir, to_read, delta_max_lines=max_lines))
            for commit in commits:
                if commit.hash in shallow:
                    commit.mark_shallow()
            yield batch_known, commits

    # Per batch: the ids already stored, and the hashes to read from this repository (new
    # ones, plus stored copies that are incomplete and may be complete here).
    plan: list[tuple[dict[str, int], list[str]]] = []
    for batch in _chunks(to_add, batch_size):
        known, incomplete = _known_ids(conn, batch)
        plan.append((known, [h for h in batch if h not in known or h in incomplete]))

    for known, read in prefetch(read_batches()):
        upgrades = [c for c in read if c.hash in known]
        commits = [c for c in read if c.hash not in known]
        with store.atomic() as c:
            ids = list(known.values()) + _insert_commits(c, commits, int(time.time()), path_ids)
            for commit in upgrades:
                if commit.complete:
                    _replace_commit(c, known[commit.hash], commit, path_ids)
                    report.completed_commits += 1
            for commit in commits:
                if commit.delta_missing:
                    report.missing_object_commits += 1
                if commit.shallow:
                    report.shallow_commits += 1
                if commit.decode_errors:
                    report.decode_warnings += 1
                    log.warning(
                        "commit %s in %s: invalid UTF-8 in %s, decoded with U+FFFD",
                        commit.hash, repo.path, ", ".join(commit.decode_errors),
                    )
            c.executemany(
                "INSERT OR IGNORE INTO repo_commits (repo_id, commit_id) VALUES (?, ?)",
                [(repo_id, i) for i in ids],
            )
        report.new_commits += len(commits)
        report.reused_commits += len(known)
        progress.advance(len(known) + len(commits))

    with store.atomic() as c:
        c.execute("DELETE FROM repo_refs WHERE repo_id = ?", (repo_id,))
        c.executemany(
            "INSERT INTO repo_refs (repo_id, ref, tip) VALUES (?, ?, ?)",
            [(repo_id, ref, tip) for ref, tip in sorted(new_map.items())],
        )
        c.execute(
            "UPDATE repositories SET run_in_progress = 0, last_indexed_at = ? WHERE id = ?",
            (int(time.time()), repo_id),
        )
    return report


def _known_ids(conn: Connection, hashes: Sequence[str]) -> tuple[dict[str, int], set[str]]:
    """Stored ids of ``hashes``, and which of them are incomplete copies (``complete = 0``)."""
    known: dict[str, int] = {}
    incomplete: set[str] = set()
    for part in _chunks(hashes, _SQL_CHUNK):
        marks = ",".join("?" * len(part))
        for row in conn.execute(
            f"SELECT hash, id, complete FROM git_commits WHERE hash IN ({marks})", list(part)
        ):
            known[row[0]] = int(row[1])
            if not row[2]:
                incomplete.add(row[0])
    return known, incomplete


def _insert_commits(
    conn: Connection, commits: list[LogCommit], now: int, path_ids: dict[str, int]
) -> list[int]:
    """Insert ``commits`` (in the caller's transaction), their paths and their FTS5 rows.

    Returns their new row ids, in order. ``INTEGER PRIMARY KEY`` assigns ``max(id) + 1`` to
    each insert, so one batch gets consecutive ids starting at ``first``; the FTS5 rows are
    then added with one ``INSERT … SELECT`` over that range.
    """
    if not commits:
        return []
    first = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM git_commits").fetchone()[0])
    conn.executemany(
        "INSERT INTO git_commits (id, hash, timestamp, author, committer, title, message, "
        "files_changed, delta_truncated, indexed_at, author_time, parents, is_merge, complete) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                first + n,
                commit.hash,
                commit.committer_time,
                commit.author,
                commit.committer,
                commit.title,
                commit.message,
                json.dumps(commit.files, ensure_ascii=False),
                commit.delta,
                now,
                commit.author_time,
                " ".join(commit.parents),
                int(len(commit.parents) > 1),
                int(commit.complete),
            )
            for n, commit in enumerate(commits)
        ],
    )
    conn.execute(COMMIT_FTS_INSERT_SQL, (first,))
    rows = [
        (_path_id(conn, path, path_ids), first + n)
        for n, commit in enumerate(commits)
        for path in commit.files
    ]
    if rows:
        conn.executemany(
            "INSERT OR IGNORE INTO commit_paths (path_id, commit_id) VALUES (?, ?)", rows
        )
    return [first + n for n in range(len(commits))]


def _path_id(conn: Connection, path: str, cache: dict[str, int]) -> int:
    pid = cache.get(path)
    if pid is None:
        row = conn.execute("SELECT id FROM paths WHERE path = ?", (path,)).fetchone()
        if row is None:
            pid = int(conn.execute("INSERT INTO paths (path) VALUES (?)", (path,)).lastrowid or 0)
        else:
            pid = int(row[0])
        cache[path] = pid
    return pid


def _replace_commit(
    conn: Connection, commit_id: int, commit: LogCommit, path_ids: dict[str, int]
) -> None:
    """Overwrite an incomplete stored copy with ``commit`` (the update trigger keeps FTS5
    current); its vectors are dropped so the next embedding run sees the real text."""
    conn.execute(
        "UPDATE git_commits SET files_changed = ?, delta_truncated = ?, parents = ?, "
        "is_merge = ?, complete = 1 WHERE id = ?",
        (
            json.dumps(commit.files, ensure_ascii=False),
            commit.delta,
            " ".join(commit.parents),
            int(len(commit.parents) > 1),
            commit_id,
        ),
    )
    conn.execute("DELETE FROM commit_paths WHERE commit_id = ?", (commit_id,))
    conn.executemany(
        "INSERT OR IGNORE INTO commit_paths (path_id, commit_id) VALUES (?, ?)",
        [(_path_id(conn, path, path_ids), commit_id) for path in commit.files],
    )
    conn.execute("DELETE FROM commit_vectors WHERE commit_id = ?", (commit_id,))


def _all_members(conn: Connection, repo_id: int) -> list[str]:
    return [
        row[0]
        for row in conn.execute(
            "SELECT c.hash FROM repo_commits rc JOIN git_commits c ON c.id = rc.commit_id "
            "WHERE rc.repo_id = ?",
            (repo_id,),
        )
    ]


def _prune_hashes(store: Store, repo_id: int, hashes: Sequence[str]) -> int:
    """Drop ``hashes`` from the repository; delete commits no repository holds any more."""
    if not hashes:
        return 0
    pruned = 0
    with store.atomic() as conn:
        for part in _chunks(hashes, _SQL_CHUNK):
            marks = ",".join("?" * len(part))
            ids = [
                int(r[0])
                for r in conn.execute(
                    f"SELECT id FROM git_commits WHERE hash IN ({marks})", list(part)
                )
            ]
            pruned += _drop_members(conn, repo_id, ids)
    return pruned


def _drop_members(conn: Connection, repo_id: int, ids: list[int]) -> int:
    if not ids:
        return 0
    dropped = 0
    for start in range(0, len(ids), _SQL_CHUNK):
        part = ids[start : start + _SQL_CHUNK]
        marks = ",".join("?" * len(part))
        dropped += conn.execute(
            f"DELETE FROM repo_commits WHERE repo_id = ? AND commit_id IN ({marks})",
            [repo_id, *part],
        ).rowcount
        conn.execute(
            f"DELETE FROM git_commits WHERE id IN ({marks}) AND NOT EXISTS "
            "(SELECT 1 FROM repo_commits rc WHERE rc.commit_id = git_commits.id)",
            part,
        )
    return dropped


def _prune_unreachable(store: Store, repo_id: int, reachable: Sequence[str]) -> int:
    """Full reconciliation: drop every member of the repository not in ``reachable``."""
    with store.atomic() as conn:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS gq_reachable (hash TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM gq_reachable")
        conn.executemany(
            "INSERT OR IGNORE INTO gq_reachable (hash) VALUES (?)", ((h,) for h in reachable)
        )
        ids = [
            int(r[0])
            for r in conn.execute(
                "SELECT rc.commit_id FROM repo_commits rc JOIN git_commits c "
                "ON c.id = rc.commit_id WHERE rc.repo_id = ? "
                "AND c.hash NOT IN (SELECT hash FROM gq_reachable)",
                (repo_id,),
            )
        ]
        pruned = _drop_members(conn, repo_id, ids)
        conn.execute("DELETE FROM gq_reachable")
    return pruned
