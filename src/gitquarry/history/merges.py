"""Merge commits that only repeat what the results already show (issue 8 §4).

A merge's stored diff is its first-parent diff: the whole change its branch brought in. When a
branch's own commit (or another merge of the same branch, e.g. "Merge branch 'x'" and
"Merge branch 'x' into maint") is among the results, the merge repeats it. The result
pipeline's fold hook (``history.pipeline.merge_folder``) folds such a merge under the result
it repeats (listed in ``copies`` with ``via: merge``), besides folding merges whose brought-in
commits are all shown (an ancestry test that needs git). This module is the diff test, which
needs no ancestry walk: measured on the click relevance set it found most of the repeating
merges the ancestry test misses (docs/performance.md, "Merges").

A merge repeats a result when at least :data:`REPEAT_SHARE` of that result's changed lines
(``+``/``-`` lines, stripped, :func:`changed_lines`) are changed lines of the merge too.
Results without changed lines (empty or binary diffs) are never repeated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, TypeVar

K = TypeVar("K")

#: share of a result's changed lines that must appear in the merge's diff.
REPEAT_SHARE: Final = 0.5
#: diff lines read per commit (the stored diffs are already cut to 200 lines per patch).
MAX_LINES: Final = 2000


def changed_lines(delta: str) -> frozenset[str]:
    """The distinct changed lines of a stored diff: ``+``/``-`` lines without the sign,
    stripped, not the ``+++``/``---`` file headers; at most :data:`MAX_LINES` lines read."""
    out: set[str] = set()
    for n, line in enumerate(delta.splitlines()):
        if n >= MAX_LINES:
            break
        if line[:1] in ("+", "-") and not line.startswith(("+++", "---")):
            body = line[1:].strip()
            if body:
                out.add(body)
    return frozenset(out)


def repeats(merge_lines: frozenset[str], result_lines: frozenset[str]) -> bool:
    """Whether a merge with ``merge_lines`` repeats a result with ``result_lines``."""
    if not result_lines or not merge_lines:
        return False
    return len(result_lines & merge_lines) >= REPEAT_SHARE * len(result_lines)


def repeating_merges(
    ranked: Sequence[K],
    is_merge: Callable[[K], bool],
    lines: Callable[[K], frozenset[str]],
) -> dict[K, K]:
    """``{merge: host}`` for every merge of ``ranked`` (best first) that repeats another
    item. The host is the best-ranked non-merge it repeats (anywhere in the list), else the
    best-ranked merge above it that it repeats (so two merges never fold under each other).
    ``lines(item)`` is read only for lists holding a merge."""
    out: dict[K, K] = {}
    if not any(is_merge(item) for item in ranked):
        return out
    commits = [item for item in ranked if not is_merge(item)]
    for n, item in enumerate(ranked):
        if not is_merge(item):
            continue
        mine = lines(item)
        above = [other for other in ranked[:n] if is_merge(other)]
        host = next((other for other in [*commits, *above] if repeats(mine, lines(other))),
                    None)
        if host is not None:
            out[item] = host
    return out
