"""The commit corpus's side of the shared result pipeline (``retrieval.pipeline``).

- ``candidates``: the fused ranking as pipeline candidates, read from SQLite in small chunks
  only as far as the pipeline asks (text: title and message; group: the patch-id; vector:
  the commit's vector in the ranker's namespace, only when dedup or MMR needs it).
- ``merge_folder``: the fold hook: a merge shown beside commits it brought in is folded under
  them when everything it brought in (``git rev-list P2 ^P1``, asked of git only for a merge
  one of whose other parents is already shown) is shown, directly or as a copy, or when its
  diff repeats another result (``history.merges``).
- ``copies``: for each shown commit, the other commits with its patch-id (cherry-picks,
  rebased copies, backports, single-commit merges) and the merges folded under it, each with
  the indexed refs that contain it (``history.refs_contain``: from the index, the same
  names, order and cut as a result's own ``refs``).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitquarry.gitio.ancestry import merged_commits
from gitquarry.history.merges import changed_lines, repeating_merges
from gitquarry.history.refs_contain import RefContainment
from gitquarry.retrieval.pipeline import Candidate, PipelineOutcome

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

#: rows read per SQLite query while the pipeline pulls candidates
CHUNK = 32
#: copies listed per result (the rest are counted in ``copies_omitted``)
MAX_COPIES = 20
#: refs listed per copy (the rest are counted in ``refs_omitted``)
MAX_REFS = 20
#: a merge that brought in more commits than this is never folded
MAX_MERGED = 100


@dataclass(frozen=True)
class CommitRow:
    """What the pipeline and the fold hook need of a candidate commit."""

    id: int
    hash: str
    parents: tuple[str, ...]
    is_merge: bool
    patch_id: str | None
    timestamp: int


_ROW_SQL = ("SELECT id, hash, title, message, parents, is_merge, patch_id, timestamp "
            "FROM git_commits WHERE ")


def _changes_for_merges(
    conn: sqlite3.Connection, merges: dict[str, int], position: dict[int, int],
    taken: set[int],
) -> tuple[dict[int, int], dict[int, Any]]:
    """For merges (``{patch-id: merge id}``) of one chunk: ``{merge id: the best-ranked
    non-merge commit with its patch-id}`` among the ranked candidates (``position``) ranked
    below the merge and not yet read, and those commits' rows."""
    marks = ",".join("?" * len(merges))
    stand_in: dict[int, int] = {}
    rows: dict[int, Any] = {}
    for row in conn.execute(
        _ROW_SQL + f"is_merge = 0 AND patch_id IN ({marks})", sorted(merges),
    ):
        cid = int(row[0])
        merge = merges[row[6]]
        if cid in taken or position.get(cid, -1) < position[merge]:
            continue  # read already, ranked above the merge (it hosts it), or not ranked
        best = stand_in.get(merge)
        if best is None or position[cid] < position[best]:
            stand_in[merge] = cid
        rows[cid] = row
    return stand_in, rows


def candidates(
    conn: sqlite3.Connection,
    scored: Sequence[tuple[int, float]],
    *,
    namespace_id: int | None = None,
    prefer_change: bool = False,
) -> Iterator[Candidate[int]]:
    """``scored`` ((commit id, score in [0, 1]), best first) as pipeline candidates, read in
    chunks of ``CHUNK`` rows. ``namespace_id``: attach each commit's vector from that
    embedding namespace (None: no vectors).

    ``prefer_change`` (with copy collapsing): a merge whose patch-id a non-merge commit of
    ``scored`` shares (a single-commit merge of it) is replaced, at its rank and score, by
    that commit (the best-ranked one not yet read), so the change itself represents its copies
    and the merge is listed under it (``copies``: ``via: "merge"``); the commit is not read
    again at its own rank.
    """
    position: dict[int, int] | None = None
    taken: set[int] = set()
    for start in range(0, len(scored), CHUNK):
        part = [(cid, score) for cid, score in scored[start : start + CHUNK]
                if cid not in taken]
        ids = [cid for cid, _ in part]
        if not ids:
            continue
        marks = ",".join("?" * len(ids))
        rows = {int(r[0]): r for r in conn.execute(_ROW_SQL + f"id IN ({marks})", ids)}
        stand_in: dict[int, int] = {}
        if prefer_change:
            merges: dict[str, int] = {}
            for cid in ids:
                row = rows.get(cid)
                if row is not None and row[5] and row[6]:
                    merges.setdefault(row[6], cid)
            if merges:
                if position is None:
                    position = {cid: n for n, (cid, _) in enumerate(scored)}
                stand_in, more = _changes_for_merges(conn, merges, position, taken)
                rows.update(more)
        vectors: dict[int, np.ndarray] = {}
        if namespace_id is not None:
            import numpy as np  # only when vectors exist (lexical search starts without it)

            wanted = [*ids, *stand_in.values()]
            marks = ",".join("?" * len(wanted))
            for cid, blob in conn.execute(
                f"SELECT commit_id, vector FROM commit_vectors WHERE namespace_id = ? "
                f"AND commit_id IN ({marks})",
                [namespace_id, *wanted],
            ):
                vectors[int(cid)] = np.frombuffer(blob, dtype="<f4")
        for own, score in part:
            cid = stand_in.get(own, own)
            row = rows.get(cid)
            if row is None or cid in taken:  # pruned between ranking and now; read already
                continue
            taken.add(cid)
            data = CommitRow(
                id=cid, hash=row[1], parents=tuple(row[4].split()), is_merge=bool(row[5]),
                patch_id=row[6] or None, timestamp=int(row[7]),
            )
            yield Candidate(
                key=cid, score=score, text=f"{row[2]}\n\n{row[3]}", vector=vectors.get(cid),
                group=data.patch_id, data=data,
            )


def _git_dir(conn: sqlite3.Connection, commit_id: int) -> tuple[int, Path] | None:
    """(repository id, git dir) of the first repository (by path) holding the commit, when
    it is still on disk."""
    for repo_id, common_dir in conn.execute(
        "SELECT r.id, r.common_dir FROM repo_commits rc JOIN repositories r "
        "ON r.id = rc.repo_id WHERE rc.commit_id = ? ORDER BY r.path",
        (commit_id,),
    ):
        path = Path(common_dir)
        if path.is_dir():
            return int(repo_id), path
    return None


def _copy_hashes(conn: sqlite3.Connection, patch_ids: set[str]) -> set[str]:
    if not patch_ids:
        return set()
    marks = ",".join("?" * len(patch_ids))
    return {
        r[0] for r in conn.execute(
            f"SELECT hash FROM git_commits WHERE patch_id IN ({marks})", sorted(patch_ids)
        )
    }


def merge_folder(conn: sqlite3.Connection, *, repeats: bool = True) -> Any:
    """The fold hook for ``run_pipeline``: ``fold(window) -> {merge id: host commit id}``.

    A merge in the window is folded when every commit it brought in is in the window or is
    a copy (same patch-id) of one; the host is the best-ranked non-merge among them. Git is
    asked (``gitio.ancestry.merged_commits``) only for merges one of whose other parents is
    already shown, at most once per merge per query. With ``repeats`` (the default), a merge
    whose stored diff repeats another result of the window (``history.merges``: half of that
    result's changed lines) is folded under it as well; changed lines are read from the
    index once per commit per query, and only for windows holding a merge.
    """
    cache: dict[int, list[str] | None] = {}

    def fold(window: list[Candidate[int]]) -> dict[int, int]:
        rows: list[CommitRow] = [c.data for c in window]
        shown = {r.hash for r in rows} | _copy_hashes(
            conn, {r.patch_id for r in rows if r.patch_id}
        )
        position = {r.hash: n for n, r in enumerate(rows)}
        by_hash = {r.hash: r for r in rows}
        out: dict[int, int] = {}
        for row in rows:
            if not row.is_merge or not any(p in shown for p in row.parents[1:]):
                continue
            if row.id not in cache:
                where = _git_dir(conn, row.id)
                cache[row.id] = (
                    merged_commits(where[1], row.parents, limit=MAX_MERGED)
                    if where is not None else None
                )
            brought = cache[row.id]
            if not brought or not all(h in shown for h in brought):
                continue
            hosts = [h for h in brought if h in by_hash and not by_hash[h].is_merge]
            if hosts:
                out[row.id] = by_hash[min(hosts, key=lambda h: position[h])].id
        rest = [r for r in rows if r.id not in out]
        if repeats and any(r.is_merge for r in rest):
            lines = _changed_lines([r.id for r in rest])
            found = repeating_merges(rest, lambda r: r.is_merge, lambda r: lines[r.id])
            out.update({merge.id: host.id for merge, host in found.items()})
        return out

    diffs: dict[int, frozenset[str]] = {}

    def _changed_lines(ids: list[int]) -> dict[int, frozenset[str]]:
        todo = [i for i in ids if i not in diffs]
        if todo:
            marks = ",".join("?" * len(todo))
            for cid, delta in conn.execute(
                f"SELECT id, gq_inflate(delta_truncated) FROM git_commits WHERE id IN ({marks})",
                todo,
            ):
                diffs[int(cid)] = changed_lines(delta or "")
        return {i: diffs.get(i, frozenset()) for i in ids}

    return fold


def copies(
    conn: sqlite3.Connection, outcome: PipelineOutcome[int], *, collapse: bool,
    refs: RefContainment | None = None, keys: set[int] | None = None,
) -> dict[int, tuple[list[dict[str, Any]], int]]:
    """Per shown commit id: its copies (``{hash, refs, committed, via}``; ``via`` is
    ``patch-id``, or ``merge`` for a merge (one with the same patch-id, or one folded under
    it); ``refs`` the indexed refs containing it, at most ``MAX_REFS``
    in ``history.refs_contain``'s order, with ``refs_omitted`` counting the rest) and how many
    more copies were left out. ``refs``: the process's ``RefContainment`` (its sets are built
    once per index state; None builds a new one for this call). ``keys``: only for these
    shown commits (None: all)."""
    if not collapse:
        return {}
    wanted: dict[int, list[tuple[int, str, int, str]]] = {}
    omitted: dict[int, int] = {}
    for result in outcome.results:
        if keys is not None and result.key not in keys:
            continue
        row: CommitRow = result.data
        listed: list[tuple[int, str, int, str]] = []
        total = 0
        if row.patch_id:
            listed += [
                (int(i), h, int(t), "merge" if merge else "patch-id")
                for i, h, t, merge in conn.execute(
                    "SELECT id, hash, timestamp, is_merge FROM git_commits "
                    "WHERE patch_id = ? AND id != ? ORDER BY timestamp, id LIMIT ?",
                    (row.patch_id, row.id, MAX_COPIES),
                )
            ]
            total = len(listed)
            if total == MAX_COPIES:
                total = int(conn.execute(
                    "SELECT count(*) FROM git_commits WHERE patch_id = ? AND id != ?",
                    (row.patch_id, row.id),
                ).fetchone()[0])
        folded = [a.key for a in result.absorbed if a.step == "fold"]
        if folded:
            marks = ",".join("?" * len(folded))
            merges = [
                (int(i), h, int(t), "merge")
                for i, h, t in conn.execute(
                    f"SELECT id, hash, timestamp FROM git_commits WHERE id IN ({marks})", folded
                )
            ]
            listed += merges
            total += len(merges)
        if not listed:
            continue
        listed.sort(key=lambda x: (x[2], x[0]))
        wanted[result.key] = listed[:MAX_COPIES]
        omitted[result.key] = total - len(wanted[result.key])
    if not wanted:
        return {}
    containment = refs if refs is not None else RefContainment()
    containment.refresh(conn)
    return {
        key: (
            [_copy_dict(h, t, via, *containment.names(cid, MAX_REFS))
             for cid, h, t, via in items],
            omitted[key],
        )
        for key, items in wanted.items()
    }


def _copy_dict(commit_hash: str, committed: int, via: str, refs: list[str],
               total: int) -> dict[str, Any]:
    out: dict[str, Any] = {"hash": commit_hash, "refs": refs, "committed": committed, "via": via}
    if total > len(refs):
        out["refs_omitted"] = total - len(refs)
    return out


def refresh_copy_refs(conn: sqlite3.Connection, refs: RefContainment,
                      items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``items`` (copies as ``copies`` returns them) with ``refs``/``refs_omitted`` read again
    from the index now (a cursor's later page: refs as of that page, like its results' own);
    a copy that left the index gets ``refs: []``."""
    if not items:
        return []
    refs.refresh(conn)
    hashes = [c["hash"] for c in items]
    ids = dict(conn.execute(
        f"SELECT hash, id FROM git_commits WHERE hash IN ({','.join('?' * len(hashes))})",
        hashes))
    out = []
    for c in items:
        cid = ids.get(c["hash"])
        names, total = refs.names(int(cid), MAX_REFS) if cid is not None else ([], 0)
        out.append(_copy_dict(c["hash"], int(c["committed"]), str(c["via"]), names, total))
    return out
