"""Which commits a merge brought in, answered from the index's commit graph (issue 21 §1).

The result pipeline folds a merge under a commit it brought in (``history.search.
candidate_stream.MergeFolder``): the commits reachable from the merge's other parents and not
from its first parent, ``git rev-list P2 … ^P1``. Asked of git, that is one process per
ranked merge (19 on a flask query: the largest cold cost after the imports). The index holds
the same commit graph (``git_commits.parents``), so the set can be computed from it, exactly,
when each commit's *generation* is known: 1 for a commit without indexed parents, else one
more than its highest parent's. A commit's ancestors all have lower generations, so a walk
that pops commits highest generation first has seen every child of a commit inside the walk
before the commit itself: its marks (reached from P1, from the other parents, or both) are
final when it is popped, whatever the commit dates say (no clock-skew heuristic: git's own
walk orders by date with a slop of five commits; with dates that never run backwards along a
parent edge the two agree, ``tests/history/test_merge_generations.py`` compares them on
every merge of real repositories).

The generations are built in one pass over the commit graph and persisted by ``gitquarry
index`` beside the refs-containing sets, under the same index-state digest
(``refs_contain.RefContainment.digest``): a reader whose digest differs (commits or refs
written since, an index from before the table) gets None from :func:`current_generations`
and asks git, as before. The walk also gives up (:data:`ASK_GIT`) when it reaches a commit
whose parents are not all in the index (a shallow boundary, an interrupted first run), so
git answers exactly what it answered before in every case the index cannot.

Tables (migration ``history_0009_s3_cold_generations``): ``commit_generations
(commit_id, generation)``, ``commit_generations_meta (id = 1, digest)``.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Sequence

#: :func:`brought_in`'s answer when the index cannot tell (the caller asks git)
ASK_GIT = "ask-git"

#: commits one walk may pop before it leaves the merge to git: a merge of a long-lived
#: branch (git.git's ``Merge branch 'maint'``) walks its first parent's side down to the
#: oldest brought-in commit, thousands of look-ups in Python where git's own walk (with its
#: commit-graph) costs ~5 ms; below this budget the walk costs less than a process
#: (measured: 96 made a git.git cold query walk ~65 ms CPU for merges it then left to git;
#: 24 wastes at most ~1 ms per merge)
WALK_BUDGET = 24
#: the budget in a long-lived process (MCP server, daemon), where the search's per-state memo
#: keeps each walk's answer or verdict, so a walk is paid once per index state, as git's
#: answer is once per process: on click, 157 of 1,183 merges give up at 24 pops, 4 at 400,
#: at 0.13 ms CPU per merge on average instead of 0.06 (a git process costs the server
#: ~1–2 ms and itself a few ms more); measured 2026-12-02, s8-mcp, docs/performance.md
LONG_LIVED_WALK_BUDGET = 400

_FROM_FIRST = 1  # reached from the first parent (uninteresting, ``^P1``)
_FROM_OTHER = 2  # reached from another parent


def build_generations(conn: sqlite3.Connection) -> dict[int, int]:
    """``{commit id: generation}`` for every indexed commit (module docstring), from
    ``git_commits.parents``; parents that are not indexed are ignored (the walk never
    crosses them: :func:`brought_in` gives up there). One pass, children before parents
    are not needed: an explicit stack, no recursion."""
    ids: dict[str, int] = {}
    parent_text: dict[int, str] = {}
    for cid, commit_hash, parents in conn.execute("SELECT id, hash, parents FROM git_commits"):
        ids[commit_hash] = int(cid)
        if parents:
            parent_text[int(cid)] = parents
    parents_of: dict[int, list[int]] = {}
    for cid, text in parent_text.items():
        plist = [p for p in (ids.get(h) for h in text.split()) if p is not None]
        if plist:
            parents_of[cid] = plist
    gen: dict[int, int] = {}
    for start in ids.values():
        if start in gen:
            continue
        stack = [start]
        while stack:
            cid = stack[-1]
            if cid in gen:
                stack.pop()
                continue
            todo = [p for p in parents_of.get(cid, ()) if p not in gen]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            gen[cid] = 1 + max((gen[p] for p in parents_of.get(cid, ())), default=0)
    return gen


def persisted_generations_digest(conn: sqlite3.Connection) -> str | None:
    """The index-state digest the persisted generations were built from, or None."""
    try:
        row = conn.execute("SELECT digest FROM commit_generations_meta").fetchone()
    except sqlite3.OperationalError:  # an index without the tables
        return None
    return str(row[0]) if row is not None else None


def write_generations(conn: sqlite3.Connection, digest: str) -> None:
    """Build the generations now and store them under ``digest`` (the caller's write
    transaction, in which ``digest`` was read: both describe the same index state)."""
    gen = build_generations(conn)
    conn.execute("DELETE FROM commit_generations")
    conn.execute("DELETE FROM commit_generations_meta")
    conn.executemany("INSERT INTO commit_generations (commit_id, generation) VALUES (?, ?)",
                     sorted(gen.items()))
    conn.execute("INSERT INTO commit_generations_meta (id, digest) VALUES (1, ?)", (digest,))


def current_generations(conn: sqlite3.Connection, digest: str) -> bool:
    """Whether the persisted generations describe the index state ``digest``."""
    return persisted_generations_digest(conn) == digest


_ROWS_SQL = ("SELECT c.hash, c.parents, g.generation, c.timestamp FROM git_commits c "
             "JOIN commit_generations g ON g.commit_id = c.id WHERE c.hash IN ({})")

#: a commit as the walk reads it: (parent hashes, generation, committer time)
Row = tuple[list[str], int, int]


def _rows(conn: sqlite3.Connection, hashes: Sequence[str]) -> dict[str, Row]:
    marks = ",".join("?" * len(hashes))
    return {str(h): ((p or "").split(), int(g), int(t))
            for h, p, g, t in conn.execute(_ROWS_SQL.format(marks), list(hashes))}


def brought_in(conn: sqlite3.Connection, merge_parents: Sequence[str], *, limit: int,
               rows: dict[str, Row] | None = None,
               budget: int | None = None) -> list[str] | str | None:
    """The commits reachable from ``merge_parents[1:]`` and not from ``merge_parents[0]``
    (what ``gitio.ancestry.merged_commits`` asks git), from the index: a list (highest
    generation first), None when there are more than ``limit``, or :data:`ASK_GIT` when the
    walk reaches a commit that is not indexed, has no persisted generation, or has parents
    that are not all indexed, crosses a parent committed *after* its child (clock skew), or
    pops more than ``budget`` commits (None: :data:`WALK_BUDGET`). The budget changes only
    whether the index answers, never the answer.
    Only valid while :func:`current_generations` holds.

    Why skew is left to git: git's walk (``limit_list``) pops commits newest first and stops
    once only commits reached from P1 are queued (and five more); a commit reachable from P1
    only through a parent dated after its child can be popped, and listed, before that mark
    reaches it, so git lists it and the exact set does not. Such a commit is marked from P1
    in this walk along a path that holds that backwards edge, so a walk that meets no
    backwards edge answers what git answers (``tests/history/test_merge_generations.py``
    compares them on random histories with backwards dates; every flask merge agrees).
    ``rows``: commits read so far (hash → :data:`Row`), shared by the calls of
    one query (the merges of one answer walk overlapping regions); filled here.

    Cost: one indexed look-up per commit whose generation is above the lowest brought-in
    commit's, on either side (the walk stops when no commit reached only from the other
    parents is left to pop)."""
    if len(merge_parents) < 2:
        return []
    cache = {} if rows is None else rows

    def read(hashes: Sequence[str]) -> bool:
        """Have ``hashes`` in ``cache``; False when one is not indexed (or has no generation)."""
        todo = sorted({h for h in hashes if h not in cache})
        if todo:
            found = _rows(conn, todo)
            cache.update(found)
            return len(found) == len(todo)
        return True

    if not read(merge_parents):
        return ASK_GIT
    flags: dict[str, int] = {}
    heap: list[tuple[int, str]] = []
    pending = 0  # commits in the heap marked only _FROM_OTHER
    for n, h in enumerate(merge_parents):
        flags[h] = flags.get(h, 0) | (_FROM_FIRST if n == 0 else _FROM_OTHER)
    for h in set(merge_parents):
        heapq.heappush(heap, (-cache[h][1], h))
        pending += flags[h] == _FROM_OTHER
    out: list[str] = []
    popped = 0
    most = WALK_BUDGET if budget is None else budget
    while pending:
        popped += 1
        if popped > most:
            return ASK_GIT  # a long walk: git's own is cheaper
        _, h = heapq.heappop(heap)
        mark = flags[h]
        if mark == _FROM_OTHER:
            pending -= 1
            out.append(h)
            if len(out) > limit:
                return None
        parents = cache[h][0]
        if not parents:
            continue
        if not read(parents):
            return ASK_GIT  # not indexed, or no generation: the index cannot tell
        when = cache[h][2]
        for p in parents:
            if cache[p][2] > when:
                return ASK_GIT  # a parent dated after its child: git's date walk decides
            old = flags.get(p, 0)
            new = old | mark
            if new == old:
                continue
            flags[p] = new
            if old == 0:
                heapq.heappush(heap, (-cache[p][1], p))
                pending += new == _FROM_OTHER
            elif old == _FROM_OTHER:
                pending -= 1  # now reached from the first parent too
    return out
