"""Merge commits in results: which ones only repeat what the results already show.

A merge's stored diff is its first-parent diff: the whole change its branch brought in. When
the branch's own commits (or another merge of the same branch, e.g. "Merge branch 'x'" and
"Merge branch 'x' into maint") already rank above it, the merge repeats them: it is demoted
below every result that does not repeat anything, keeping its relative order. Nothing is
removed, so a query still returns as many results as before.

"Repeats" is measured on the diffs themselves, which needs no ancestry walk: a merge repeats a
commit ranked above it when at least :data:`REPEAT_SHARE` of that commit's changed lines
(``+``/``-`` lines, stripped, as :func:`~gitquarry.history.document.diff_digest` reads them)
are changed lines of the merge too. Commits without changed lines (empty or binary diffs)
never count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, TypeVar

from gitquarry.history.document import diff_digest

K = TypeVar("K")

#: share of an earlier result's changed lines that must appear in the merge's diff.
REPEAT_SHARE: Final = 0.5
#: changed lines read per diff (the stored diffs are already cut to 200 lines per patch).
MAX_LINES: Final = 2000


def changed_lines(delta: str) -> frozenset[str]:
    """The distinct changed lines of a stored diff (without the ``+``/``-``)."""
    return frozenset(diff_digest(delta, max_lines=MAX_LINES)[2])


def repeats(merge_lines: frozenset[str], earlier_lines: frozenset[str]) -> bool:
    """Whether a merge with ``merge_lines`` repeats a commit with ``earlier_lines``."""
    if not earlier_lines or not merge_lines:
        return False
    shared = len(earlier_lines & merge_lines)
    return shared >= REPEAT_SHARE * len(earlier_lines)


def demote_repeating_merges(
    ranked: Sequence[K],
    is_merge: Callable[[K], bool],
    delta: Callable[[K], str],
) -> tuple[list[K], set[K]]:
    """``ranked`` (best first) with every merge that repeats a result above it moved below
    the results that repeat nothing, both groups in their original order; also the set of
    demoted items. ``delta(item)`` is the stored diff; it is read for merges and for the
    items ranked above a merge only."""
    lines: dict[int, frozenset[str]] = {}

    def lines_of(i: int) -> frozenset[str]:
        if i not in lines:
            lines[i] = changed_lines(delta(ranked[i]) or "")
        return lines[i]

    demoted: set[int] = set()
    for i, item in enumerate(ranked):
        if not is_merge(item):
            continue
        mine = lines_of(i)
        if any(j not in demoted and repeats(mine, lines_of(j)) for j in range(i)):
            demoted.add(i)
    kept = [item for i, item in enumerate(ranked) if i not in demoted]
    moved = [item for i, item in enumerate(ranked) if i in demoted]
    return kept + moved, set(moved)
