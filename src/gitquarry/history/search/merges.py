"""Merge commits that only repeat what the results already show (issue 8 §4, issue 20 §3).

A merge's stored diff is its first-parent diff: the whole change its branch brought in. When a
commit the merge brought in is among the ranked commits, the merge may repeat it.
``history.pipeline.MergeFolder`` folds such a merge under that commit (listed in ``copies``
with ``via: merge``), besides folding merges whose brought-in commits are all ranked. Both
need git's ancestry answer: a merge is folded only under a commit it brought in (reachable from
another parent, not from its first parent), never under an older commit of its first parent
whose lines it happens to share, nor under another merge (issue 20 §3). This module is the
diff test.

A merge repeats a result when at least :data:`REPEAT_SHARE` of that result's changed lines
(``+``/``-`` lines, stripped, :func:`changed_lines`) are changed lines of the merge too.
Results without changed lines (empty or binary diffs) are never repeated.
"""

from __future__ import annotations

from typing import Final

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
