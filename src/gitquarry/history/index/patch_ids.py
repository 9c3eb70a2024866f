"""Backfill of ``git_commits.patch_id`` for commits stored before patch-ids were computed.

New commits get their patch-id while they are read (``stream_commits(patch_ids=True)``:
one ``git patch-id --stable`` process beside each ``git log`` process). Rows written by an
older gitquarry hold NULL (migration ``history_0006_patch_ids``); the next ``gitquarry
index`` run reads them again through the same path, so both kinds of row get identical ids,
and stores only the patch-id. The cost is one ``git log -p`` over those commits (about what
indexing them cost), paid once; until then search collapses only the copies that have one and
says so (warning ``patch_ids_incomplete``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from gitquarry.gitio.discovery import Repository
from gitquarry.gitio.log import stream_commits
from gitquarry.history.index.progress import Progress
from gitquarry.store import Store

#: commits per ``git log`` process and per transaction
BATCH = 2000


def missing_patch_ids(store: Store, repo_id: int) -> list[str]:
    """Hashes of the repository's stored commits whose patch-id was never computed."""
    return [
        row[0]
        for row in store.conn.execute(
            "SELECT c.hash FROM repo_commits rc JOIN git_commits c ON c.id = rc.commit_id "
            "WHERE rc.repo_id = ? AND c.patch_id IS NULL ORDER BY c.id",
            (repo_id,),
        )
    ]


def backfill_patch_ids(
    store: Store,
    repo: Repository,
    repo_id: int,
    hashes: Sequence[str],
    *,
    mailmap: Path | None,
    progress: Progress,
) -> int:
    """Compute and store the patch-id of ``hashes`` (from ``missing_patch_ids``), in
    batches, each in one transaction. Returns how many rows were updated. A commit that is
    shallow or whose objects are missing gets "" (no patch-id), as at index time.

    :raises GitError: a commit's header cannot be read.
    """
    if not hashes:
        return 0
    progress.phase(f"patch-ids {repo.path.name}", len(hashes))
    shallow_rows = {
        row[0]
        for row in store.conn.execute(
            "SELECT hash FROM git_commits WHERE complete = 0 AND hash IN "
            "(SELECT value FROM json_each(?))",
            (json.dumps(list(hashes)),),
        )
    }
    done = 0
    for start in range(0, len(hashes), BATCH):
        part = hashes[start : start + BATCH]
        rows = [
            ("" if commit.hash in shallow_rows else (commit.patch_id or ""), commit.hash)
            for commit in stream_commits(
                repo.git_dir, part, delta_max_lines=1, mailmap=mailmap, patch_ids=True
            )
            if commit.patch_id is not None
        ]
        with store.atomic() as conn:
            conn.executemany(
                "UPDATE git_commits SET patch_id = ? WHERE hash = ? AND patch_id IS NULL", rows
            )
        done += len(rows)
        progress.advance(len(part))
    return done
