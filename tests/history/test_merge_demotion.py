"""Merges that repeat results above them are demoted (pure function, real diff text)."""

from __future__ import annotations

from gitquarry.history.merges import changed_lines, demote_repeating_merges, repeats


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


def demote(order: list[str]) -> tuple[list[str], set[str]]:
    return demote_repeating_merges(order, lambda k: ITEMS[k][0], lambda k: ITEMS[k][1])


def test_changed_lines_ignore_headers_and_context() -> None:
    assert changed_lines(FIX) == {"conn.release()", "pool.size = 10"}
    assert changed_lines("") == frozenset()


def test_repeats_needs_half_of_the_earlier_commits_lines() -> None:
    assert repeats(changed_lines(MERGE_FIX), changed_lines(FIX))
    assert not repeats(changed_lines(MERGE_OTHER), changed_lines(FIX))
    assert not repeats(changed_lines(MERGE_FIX), frozenset())


def test_merge_below_its_branch_commit_is_demoted_and_nothing_is_lost() -> None:
    order, moved = demote(["fix", "merge-fix", "other", "merge-other"])
    assert order == ["fix", "other", "merge-other", "merge-fix"]
    assert moved == {"merge-fix"}


def test_merge_above_its_branch_commit_stays_and_a_second_merge_of_it_goes() -> None:
    order, moved = demote(["merge-fix", "merge-fix-into-maint", "fix", "other"])
    assert moved == {"merge-fix-into-maint"}
    assert order == ["merge-fix", "fix", "other", "merge-fix-into-maint"]


def test_nothing_to_demote_keeps_the_order() -> None:
    order = ["other", "merge-fix", "fix"]
    assert demote(order) == (order, set())
