"""Merges whose diff repeats another result (pure functions, real diff text)."""

from __future__ import annotations

from gitquarry.history.search.merges import changed_lines, repeats


def patch(path: str, *lines: str) -> str:
    body = "\n".join(f"+{line}" for line in lines)
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,3 @@\n{body}\n"


FIX = patch("src/pool.py", "conn.release()", "pool.size = 10")
OTHER = patch("src/auth.py", "check_password(plain)", "return False")
MERGE_FIX = FIX + patch("docs/pool.md", "Connections are released on error.")
MERGE_OTHER = patch("src/cache.py", "CACHE = {}", "ttl = 60")

def test_changed_lines_ignore_headers_and_context() -> None:
    assert changed_lines(FIX) == {"conn.release()", "pool.size = 10"}
    assert changed_lines(" context\n-old line\n+++ b/x\n") == {"old line"}
    assert changed_lines("") == frozenset()


def test_repeats_needs_half_of_the_results_lines() -> None:
    assert repeats(changed_lines(MERGE_FIX), changed_lines(FIX))
    assert not repeats(changed_lines(MERGE_OTHER), changed_lines(FIX))
    assert not repeats(changed_lines(MERGE_FIX), frozenset())
    assert not repeats(frozenset(), changed_lines(FIX))
