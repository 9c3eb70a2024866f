"""The order of the fused candidates before the result pipeline: relevance or committer time.

``search_git_history`` fuses each ranker's top ``limit`` (``max(4 × top_n, 50)``, more on a
widened pass) into one candidate list, best first, and calls :func:`order_candidates`; the
result pipeline (``retrieval.pipeline``: copies collapsed, merges repeating results folded,
dedup) then reads the candidates in that order.

* ``sort="newest"`` / ``"oldest"``: the candidates by committer time (descending /
  ascending; ties by commit id): the most relevant matching commits in time order.
* ``sort="relevance"`` (default): the fused order, except for **introduction questions**
  ("when was X introduced", "which commit added X", see
  :func:`~gitquarry.retrieval.fusion.introduction_subject`; the rankers ran on X alone): the
  union of the keyword ranking's first :data:`INTRODUCED_HEAD` and the fused ranking's first
  :data:`INTRODUCED_HEAD` candidates goes first, oldest first (a feature is usually
  introduced by the oldest of the commits that match it best, and later fixes match it as
  well); the rest follows in relevance order.

Reordering only moves candidates; nothing is dropped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Final

#: candidates of each ranking that an introduction question reorders by age.
INTRODUCED_HEAD: Final = 5


def _timestamps(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for start in range(0, len(ids), 500):
        part = list(ids[start : start + 500])
        marks = ",".join("?" * len(part))
        for cid, stamp in conn.execute(
            f"SELECT id, timestamp FROM git_commits WHERE id IN ({marks})", part
        ):
            out[int(cid)] = int(stamp)
    return out


def order_candidates(
    conn: sqlite3.Connection,
    fused: Sequence[int],
    lexical: Sequence[int],
    *,
    sort: str = "relevance",
    introduction: bool = False,
) -> list[int]:
    """The candidate ids in result order (see the module docstring).

    ``fused``: the fused ranking (commit ids, best first); ``lexical``: the keyword ranking's
    ids (read for introduction questions). A candidate pruned from the index meanwhile sorts
    as time 0.
    """
    if sort in ("newest", "oldest"):
        stamps = _timestamps(conn, fused)
        sign = -1 if sort == "newest" else 1
        return sorted(fused, key=lambda i: (sign * stamps.get(i, 0), sign * i))
    order = list(fused)
    if introduction and order:
        present = set(order)
        head = [i for i in dict.fromkeys([*lexical[:INTRODUCED_HEAD], *order[:INTRODUCED_HEAD]])
                if i in present]
        stamps = _timestamps(conn, head)
        head.sort(key=lambda i: (stamps.get(i, 0), i))
        chosen = set(head)
        order = head + [i for i in order if i not in chosen]
    return order
