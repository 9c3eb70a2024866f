"""Merges whose diff repeats another result (pure functions, real diff text)."""

from __future__ import annotations

from gitquarry.history.merges import changed_lines, repeating_merges, repeats


def patch(path: str, *lines: str) -> str:
    body = "\n".join(f"+{line}" for line in lines)
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,3 @@\n{body}\n"


FIX = patch("src/pool.py", "conn.release()", "pool.size = 10")
OTHER = patch("src/auth.py", "check_password(plain)", "return False")
MERGE_FIX = FIX + patch("docs/pool.md", "Connections are released on error.")
MERGE_OTHER = patch("src/cache.py", "CACHE = {}", "ttl = 60")

ITEMS = {
    "fix": (False, FIX), "other": (False, OTHER), "merge-fix": (True, MERGE_FIX),
    "merge-fix-into-maint": (True, MERGE_FIX), "merge-other": (True, MERGE_OTHER),
}


def folds(order: list[str]) -> dict[str, str]:
    return repeating_merges(order, lambda k: ITEMS[k][0], lambda k: changed_lines(ITEMS[k][1]))


def test_changed_lines_ignore_headers_and_context() -> None:
    assert changed_lines(FIX) == {"conn.release()", "pool.size = 10"}
    assert changed_lines(" context\n-old line\n+++ b/x\n") == {"old line"}
    assert changed_lines("") == frozenset()


def test_repeats_needs_half_of_the_results_lines() -> None:
    assert repeats(changed_lines(MERGE_FIX), changed_lines(FIX))
    assert not repeats(changed_lines(MERGE_OTHER), changed_lines(FIX))
    assert not repeats(changed_lines(MERGE_FIX), frozenset())
    assert not repeats(frozenset(), changed_lines(FIX))


def test_a_merge_folds_under_the_commit_it_repeats_above_or_below_it() -> None:
    assert folds(["fix", "merge-fix", "other", "merge-other"]) == {"merge-fix": "fix"}
    assert folds(["merge-fix", "other", "fix"]) == {"merge-fix": "fix"}


def test_a_second_merge_of_a_branch_folds_under_the_first_never_the_reverse() -> None:
    assert folds(["merge-fix", "merge-fix-into-maint", "other"]) == {
        "merge-fix-into-maint": "merge-fix"
    }
    # with the branch's commit shown, both merges fold under it
    assert folds(["merge-fix", "merge-fix-into-maint", "fix"]) == {
        "merge-fix": "fix", "merge-fix-into-maint": "fix"
    }


def test_nothing_repeated_folds_nothing() -> None:
    assert folds(["other", "merge-other", "fix"]) == {}
    assert folds(["fix", "other"]) == {}
