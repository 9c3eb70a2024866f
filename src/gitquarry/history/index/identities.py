"""Canonical identities: apply a repository's ``.mailmap`` to the commits already stored.

``git_commits.author``/``committer`` hold the canonical identity (``%aN <%aE>`` after the
``.mailmap`` that ``gitio.mailmap`` selects) and are what FTS5 indexes and results show;
``author_raw``/``committer_raw`` hold the identity as committed when it differs (NULL when
equal). A ``.mailmap`` change moves no ref, so the indexer compares the mailmap's digest with
the one stored for the repository and, when it changed, re-reads the identities of every
commit the repository holds (headers only) and rewrites those that changed. Their vectors
are dropped (the embedded text names the author) and recomputed by the next embedding run.

A commit held by several repositories is one row: its identity follows the ``.mailmap`` of
the repository that stored it, or of the last one whose ``.mailmap`` changed.
"""

from __future__ import annotations

from pathlib import Path

from gitquarry.gitio.log import read_identities
from gitquarry.store import Store

_CHUNK = 500


def raw_or_none(canonical: str, raw: str) -> str | None:
    """The value stored in ``*_raw``: the identity as committed, or None when the mailmap
    left it unchanged."""
    return None if raw == canonical else raw


def remap_identities(store: Store, repo_id: int, git_dir: Path, mailmap: Path | None) -> int:
    """Re-apply ``mailmap`` to every commit of repository ``repo_id``; returns how many
    commits' author or committer changed.

    :raises GitError: a stored commit can no longer be read (nothing is changed then).
    """
    conn = store.conn
    rows = {
        r["hash"]: r
        for r in conn.execute(
            "SELECT c.id, c.hash, c.author, c.committer, c.author_raw, c.committer_raw "
            "FROM repo_commits rc JOIN git_commits c ON c.id = rc.commit_id "
            "WHERE rc.repo_id = ?",
            (repo_id,),
        )
    }
    if not rows:
        return 0
    updates: list[tuple[str, str | None, str, str | None, int]] = []
    for commit_hash, author, committer in read_identities(git_dir, list(rows), mailmap=mailmap):
        row = rows.get(commit_hash)
        if row is None or (author == row["author"] and committer == row["committer"]):
            continue
        raw_author = row["author_raw"] or row["author"]
        raw_committer = row["committer_raw"] or row["committer"]
        updates.append((
            author, raw_or_none(author, raw_author),
            committer, raw_or_none(committer, raw_committer),
            int(row["id"]),
        ))
    if updates:
        with store.atomic() as c:
            c.executemany(
                "UPDATE git_commits SET author = ?, author_raw = ?, committer = ?, "
                "committer_raw = ? WHERE id = ?",
                updates,
            )
            ids = [u[4] for u in updates]
            for start in range(0, len(ids), _CHUNK):
                part = ids[start : start + _CHUNK]
                c.execute(
                    f"DELETE FROM commit_vectors WHERE commit_id IN ({','.join('?' * len(part))})",
                    part,
                )
    return len(updates)
