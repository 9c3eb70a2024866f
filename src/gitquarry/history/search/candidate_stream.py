"""The commit corpus's side of the shared result pipeline (``retrieval.pipeline``).

- ``candidates``: the fused ranking as pipeline candidates, read from SQLite in small chunks
  only as far as the pipeline asks (text: title and message; group: the patch-id; vector:
  the commit's vector in the ranker's namespace, only when dedup or MMR needs it).
- ``MergeFolder``: which ranked commit a merge is folded under, decided in the candidate
  stream from the whole ranked list (never from the window the pipeline shows, so the first k
  results never depend on ``top_n``; issue 20 §3). A merge is folded only under a non-merge
  commit it brought in (``git rev-list P1..M`` less the merge: reachable from another parent,
  not from its first parent) when every commit it brought in is ranked (directly or as a
  copy) or its diff repeats that commit's (``history.merges``); or, with ``prefer_change``,
  under a non-merge commit whose patch-id it shares. A host ranked below the merge takes the
  merge's rank and score (the change itself represents the merge, listed under it as a copy
  ``via: merge``); a merge ranked below its host is listed under the host's result.
- ``copies``: for each shown commit, the other commits with its patch-id (cherry-picks,
  rebased copies, backports, single-commit merges) and the merges folded under it, each with
  the indexed refs that contain it (``history.refs_contain``: from the index, the same
  names, order and cut as a result's own ``refs``).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitquarry.gitio.ancestry import MANY, merged_or_many
from gitquarry.history.index.refs_contain import RefContainment
from gitquarry.history.search.merges import changed_lines, repeats
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
    folder: MergeFolder | None = None,
) -> Iterator[Candidate[int]]:
    """``scored`` ((commit id, score in [0, 1]), best first) as pipeline candidates, read in
    chunks of ``CHUNK`` rows. ``namespace_id``: attach each commit's vector from that
    embedding namespace (None: no vectors).

    ``prefer_change`` (with copy collapsing): a merge whose patch-id a non-merge commit of
    ``scored`` shares (a single-commit merge of it) is replaced, at its rank and score, by
    that commit (the best-ranked one not yet read), so the change itself represents its copies
    and the merge is listed under it (``copies``: ``via: "merge"``); the commit is not read
    again at its own rank.

    ``folder``: fold merges under commits they brought in (``MergeFolder``): a merge whose host
    ranks below it and is not read yet is replaced by the host the same way; a merge whose
    host ranks above it carries ``fold_under`` (the pipeline lists it under that result);
    without ``MergeFolder.replace`` a merge whose host ranks below it leaves its place and is
    listed under the host (``Candidate.folded``) at the host's own place.
    """
    position: dict[int, int] | None = None
    taken: set[int] = set()
    later: dict[int, list[int]] = {}  # host below → merges folded under it (no ``replace``)
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
        if folder is not None and position is None:
            position = {cid: n for n, (cid, _) in enumerate(scored)}
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
            if own in taken:
                continue
            cid = stand_in.get(own, own)
            if cid in taken:  # its stand-in was read already: the merge collapses under it
                cid = own
            fold_under: int | None = None
            own_row = rows.get(own)
            if folder is not None and cid == own and own_row is not None and own_row[5]:
                # decided only when the pipeline reads this merge (git is asked per merge)
                assert position is not None
                host = folder.host(own, own_row[4].split(), position)
                if host is not None:
                    if host in taken or position[host] < position[own]:
                        fold_under = host
                    elif not folder.replace:
                        later.setdefault(host, []).append(own)
                        taken.add(own)
                        continue
                    else:
                        cid = host
                        if cid not in rows:
                            rows.update({int(r[0]): r for r in conn.execute(
                                _ROW_SQL + "id = ?", (cid,))})
                        if namespace_id is not None and cid not in vectors:
                            import numpy as np

                            for vid, blob in conn.execute(
                                "SELECT commit_id, vector FROM commit_vectors "
                                "WHERE namespace_id = ? AND commit_id = ?", (namespace_id, cid),
                            ):
                                vectors[int(vid)] = np.frombuffer(blob, dtype="<f4")
            row = rows.get(cid)
            if row is None:  # pruned between ranking and now
                continue
            taken.add(cid)
            taken.add(own)
            data = CommitRow(
                id=cid, hash=row[1], parents=tuple(row[4].split()), is_merge=bool(row[5]),
                patch_id=row[6] or None, timestamp=int(row[7]),
            )
            merge_row = rows.get(own)
            folded = ([own] if cid != own and merge_row is not None
                      and merge_row[6] != data.patch_id else []) + later.pop(cid, [])
            yield Candidate(
                key=cid, score=score, text=f"{row[2]}\n\n{row[3]}", vector=vectors.get(cid),
                group=data.patch_id, data=data, folded=folded, fold_under=fold_under,
            )


def _git_dir(conn: sqlite3.Connection, commit_id: int,
             memo: _StateMemo | None = None) -> tuple[int, Path] | None:
    """(repository id, git dir) of the first repository (by path) holding the commit, when
    it is still on disk (asked of the disk every time; ``memo``: the index state's
    repositories per commit, read once)."""
    repos = memo.repos.get(commit_id) if memo is not None else None
    if repos is None:
        repos = [(int(r), str(d)) for r, d in conn.execute(
            "SELECT r.id, r.common_dir FROM repo_commits rc JOIN repositories r "
            "ON r.id = rc.repo_id WHERE rc.commit_id = ? ORDER BY r.path",
            (commit_id,),
        )]
        if memo is not None:
            _keep(memo.repos, commit_id, repos, _BROUGHT_STATE_MAX)
    for repo_id, common_dir in repos:
        path = Path(common_dir)
        if path.is_dir():
            return repo_id, path
    return None


def _keep(cache: OrderedDict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """``cache[key] = value``, the least recently used entries dropped past ``limit``."""
    cache[key] = value
    while len(cache) > limit:
        cache.popitem(last=False)


#: (git dir, merge parents) → the commits it brought in, for every query of the process: what
#: ``P2 … ^P1`` reaches is fixed by the hashes (history is content-addressed). Lists and
#: ``MANY`` (more than ``MAX_MERGED``: asked of git on every warm query before, 2.8 git
#: processes per MCP hybrid call on click) are kept; None (git could not answer) is asked
#: again.
_BROUGHT: OrderedDict[tuple[str, tuple[str, ...]], list[str] | str] = OrderedDict()
_BROUGHT_MAX = 4096
_brought_lock = threading.Lock()


def _merged(git_dir: Path, parents: tuple[str, ...]) -> list[str] | None:
    """``merged_commits(git_dir, parents, limit=MAX_MERGED)``, kept per process."""
    key = (str(git_dir), parents)
    with _brought_lock:
        found = _BROUGHT.get(key)
        if found is not None:
            _BROUGHT.move_to_end(key)
            return None if found == MANY else list(found)
    brought = merged_or_many(git_dir, parents, limit=MAX_MERGED)
    if brought is not None:
        with _brought_lock:
            _BROUGHT[key] = brought if brought == MANY else list(brought)
            while len(_BROUGHT) > _BROUGHT_MAX:
                _BROUGHT.popitem(last=False)
    return None if brought is None or brought == MANY else list(brought)


#: keep the merge fold's per-index-state answers (``_StateMemo``) across queries; False
#: recomputes them per query (tests compare the answers both ways)
STATE_MEMO = True
#: changed-line sets kept per index state (commits; least recently used dropped first)
_LINES_MAX = 2048
#: brought-in answers kept per index state (merges)
_BROUGHT_STATE_MAX = 8192


class _StateMemo:
    """What the merge fold derives from one index state alone, shared by every query of that
    state on one connection (issue 21: nothing derived from the whole index per query):
    whether the persisted generations are current (the refs fingerprint and its digest,
    ~2–4 ms a query on git.git), the index's brought-in answer per merge, and the changed
    lines per commit. Every value is a function of the database content, so it is exact for
    as long as the state is the same.

    The state is ``(PRAGMA data_version, total_changes)`` of the connection, read inside the
    search's read transaction: ``data_version`` changes when another connection's commit
    becomes visible to this one (SQLite re-reads it as a read transaction starts) and
    ``total_changes`` when this connection writes; the same pair is what
    ``RefContainment.refresh`` trusts. A ref moved by git outside gitquarry is not in the
    index until an index run records it, and that run's commit moves ``data_version``. The
    connection is held, so its identity cannot be reused by another."""

    def __init__(self, conn: sqlite3.Connection, seen: tuple[int, int]) -> None:
        self.conn, self.seen = conn, seen
        self.generations: bool | None = None
        #: per merge (its parents): the index's answer, or ``generations.ASK_GIT`` where
        #: the index cannot tell (git is asked, ``_merged`` keeps git's answer per process)
        self.brought: OrderedDict[tuple[str, ...], list[str] | str | None] = OrderedDict()
        self.lines: OrderedDict[int, frozenset[str]] = OrderedDict()
        #: per commit id: its repositories ``(id, common_dir)``, by path
        self.repos: OrderedDict[int, list[tuple[int, str]]] = OrderedDict()
        #: per brought-in list (hashes): its rows ``(id, is_merge, patch_id or None)``
        self.rows: OrderedDict[tuple[str, ...], list[tuple[int, bool, str | None]]] = (
            OrderedDict())
        #: per patch-id: the ids of the commits holding it
        self.patch_ids: OrderedDict[str, list[int]] = OrderedDict()


_memo: _StateMemo | None = None
_memo_lock = threading.Lock()


def _state_memo(conn: sqlite3.Connection) -> _StateMemo | None:
    """The memo of ``conn``'s current index state (a new one when the state moved), or None
    with ``STATE_MEMO`` off or outside a transaction (each statement its own snapshot)."""
    global _memo
    if not STATE_MEMO or not conn.in_transaction:
        return None
    seen = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
    with _memo_lock:
        if _memo is None or _memo.conn is not conn or _memo.seen != seen:
            _memo = _StateMemo(conn, seen)
        return _memo


class MergeFolder:
    """Which ranked commit a merge is folded under (see the module docstring), asked once per
    merge per query: the commits it brought in (``P2 … ^P1``, at most ``MAX_MERGED``), from
    the index's commit graph and persisted generations (``history.index.generations``; no
    process) or, when the index cannot tell, ``git rev-list --max-count=MAX_MERGED+1 P2 …
    ^P1`` (``gitio.ancestry.merged_commits``), and, with ``repeats`` (the default), the
    changed lines of the merge and of its ranked brought-in commits, read from the index.

    The answer depends only on the merge and on the set of ranked commits (``position``:
    commit id → rank in the whole fused list), never on how many results are shown.
    """

    def __init__(self, conn: sqlite3.Connection, *, repeats: bool = True,
                 replace: bool = True) -> None:
        """``replace``: a host ranked below the merge takes its place (False for an order by
        commit time, which a host moved up would break: the merge then leaves its place and
        is listed under the host at the host's own place)."""
        self.conn = conn
        self.repeats = repeats
        self.replace = replace
        self._hosts: dict[int, int | None] = {}
        self._lines: dict[int, frozenset[str]] = {}
        self._brought: dict[int, list[str] | None] = {}
        self._position: dict[int, int] | None = None
        self._generations: bool | None = None  # persisted generations current (None: unread)
        self._rows: dict[str, tuple[list[str], int, int]] = {}  # commits the walks read
        self.index_answers = 0  # merges answered from the index's commit graph (tests)
        self.git_answers = 0  # merges asked of git (tests, benchmark)
        self._memo_read = False
        self._memo: _StateMemo | None = None

    def _state(self) -> _StateMemo | None:
        """This query's ``_StateMemo`` (read once per folder: one search, one snapshot)."""
        if not self._memo_read:
            self._memo_read = True
            self._memo = _state_memo(self.conn)
        return self._memo

    def host(self, merge_id: int, parents: Sequence[str], position: dict[int, int]) -> int | None:
        """The id of the ranked non-merge commit to fold merge ``merge_id`` under, or None.

        A brought-in commit qualifies when every commit the merge brought in (at most
        ``MAX_MERGED``) is ranked, itself or a copy with its patch-id, or when the merge's diff
        repeats the commit's (``history.merges.repeats``); the best-ranked one that qualifies
        is the host."""
        if position is not self._position:  # another ranked list (a later pass)
            self._position = position
            self._hosts = {}
        if merge_id not in self._hosts:
            self._hosts[merge_id] = self._find(merge_id, parents, position)
        return self._hosts[merge_id]

    def _find(self, merge_id: int, parents: Sequence[str],
              position: dict[int, int]) -> int | None:
        if len(parents) < 2:
            return None
        memo = self._state()
        if merge_id not in self._brought:
            where = _git_dir(self.conn, merge_id, memo)
            self._brought[merge_id] = (
                self._brought_in(where[1], tuple(parents)) if where is not None else None)
        brought = self._brought[merge_id]
        if not brought:
            return None
        key = tuple(brought)
        kept = memo.rows.get(key) if memo is not None else None
        if kept is not None:
            rows = kept
        else:
            marks = ",".join("?" * len(brought))
            rows = [
                (int(i), bool(m), p or None) for i, m, p in self.conn.execute(
                    f"SELECT id, is_merge, patch_id FROM git_commits WHERE hash IN ({marks})",
                    brought,
                )
            ]
            if memo is not None:
                _keep(memo.rows, key, rows, _BROUGHT_STATE_MAX)
        hosts = sorted((i for i, merge, _ in rows if not merge and i in position),
                       key=lambda i: position[i])
        if not hosts:
            return None
        if len(rows) == len(brought) and self._all_ranked(rows, position):
            return hosts[0]
        if not self.repeats:
            return None
        lines = self._changed_lines([merge_id, *hosts])
        return next((h for h in hosts if repeats(lines[merge_id], lines[h])), None)

    def _brought_in(self, git_dir: Path, parents: tuple[str, ...]) -> list[str] | None:
        """The commits the merge brought in: from the index's commit graph when its
        persisted generations describe this index state (``history.index.generations``),
        else, or where the index cannot tell, from git (``_merged``)."""
        memo = self._state()
        if self._generations is None:
            if memo is not None and memo.generations is not None:
                self._generations = memo.generations
            else:
                from gitquarry.history.index.generations import current_generations

                self._generations = current_generations(
                    self.conn, RefContainment.digest(RefContainment._fingerprint(self.conn)))
                if memo is not None:
                    memo.generations = self._generations
        if self._generations:
            from gitquarry.embedding.process_kind import is_long_lived
            from gitquarry.history.index.generations import (
                ASK_GIT,
                LONG_LIVED_WALK_BUDGET,
                WALK_BUDGET,
                brought_in,
            )

            key = parents  # the index's answer depends on the parents alone
            # with a memo in a long-lived process a walk is paid once per index state
            budget = (LONG_LIVED_WALK_BUDGET if memo is not None and is_long_lived()
                      else WALK_BUDGET)
            if memo is not None and key in memo.brought:
                memo.brought.move_to_end(key)
                kept = memo.brought[key]
                if not isinstance(kept, str):  # a list or None, not ASK_GIT
                    self.index_answers += 1
                    return None if kept is None else list(kept)
                found: list[str] | str | None = ASK_GIT  # the walk gave up in this state
            else:
                found = brought_in(self.conn, parents, limit=MAX_MERGED, rows=self._rows,
                                   budget=budget)
                if found == ASK_GIT and memo is not None:
                    # the walk's verdict is a function of the index state too: not walked
                    # again on every query (~4 walks a warm MCP call on click), git asked
                    memo.brought[key] = ASK_GIT
                    while len(memo.brought) > _BROUGHT_STATE_MAX:
                        memo.brought.popitem(last=False)
            if not isinstance(found, str):  # the index answered (not ASK_GIT)
                self.index_answers += 1
                answer = None if found is None else list(found)
                if memo is not None:
                    memo.brought[key] = answer
                    while len(memo.brought) > _BROUGHT_STATE_MAX:
                        memo.brought.popitem(last=False)
                return None if answer is None else list(answer)
        self.git_answers += 1
        return _merged(git_dir, parents)

    def _all_ranked(self, rows: list[tuple[int, bool, str | None]],
                    position: dict[int, int]) -> bool:
        """Whether every brought-in commit is ranked, itself or a copy (same patch-id)."""
        missing = {p for i, _, p in rows if i not in position}
        if None in missing:
            return False
        if not missing:
            return True
        memo = self._state()
        if memo is None:
            marks = ",".join("?" * len(missing))
            found = {
                p for i, p in self.conn.execute(
                    f"SELECT id, patch_id FROM git_commits WHERE patch_id IN ({marks})",
                    sorted(m for m in missing if m is not None),
                ) if int(i) in position
            }
            return found >= missing
        todo = sorted(m for m in missing if m is not None and m not in memo.patch_ids)
        if todo:
            holders: dict[str, list[int]] = {p: [] for p in todo}
            for i, p in self.conn.execute(
                    f"SELECT id, patch_id FROM git_commits WHERE patch_id IN "
                    f"({','.join('?' * len(todo))})", todo):
                holders[p].append(int(i))
            for p, ids in holders.items():
                _keep(memo.patch_ids, p, ids, _BROUGHT_STATE_MAX)
        return all(any(i in position for i in memo.patch_ids.get(p) or ())
                   for p in missing if p is not None)

    def _changed_lines(self, ids: list[int]) -> dict[int, frozenset[str]]:
        memo = self._state()
        if memo is not None:
            for i in ids:
                kept = memo.lines.get(i)
                if kept is not None and i not in self._lines:
                    memo.lines.move_to_end(i)
                    self._lines[i] = kept
        todo = [i for i in ids if i not in self._lines]
        if todo:
            marks = ",".join("?" * len(todo))
            for cid, delta in self.conn.execute(
                f"SELECT id, gq_inflate(delta_truncated) FROM git_commits WHERE id IN ({marks})",
                todo,
            ):
                self._lines[int(cid)] = changed_lines(delta or "")
                if memo is not None:
                    memo.lines[int(cid)] = self._lines[int(cid)]
                    while len(memo.lines) > _LINES_MAX:
                        memo.lines.popitem(last=False)
        return {i: self._lines.get(i, frozenset()) for i in ids}


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
