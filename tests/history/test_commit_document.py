"""The commit document the embedding model reads: layouts, budget, format names."""

from __future__ import annotations

import json

import pytest

from gitquarry.history.index.document import (
    DocumentFormat,
    default_format,
    diff_digest,
    text_format,
)

DELTA = """diff --git a/src/session.py b/src/session.py
index 1111111..2222222 100644
--- a/src/session.py
+++ b/src/session.py
@@ -10,7 +10,8 @@ class SessionStore:
     def load(self, cookie):
-        return self.signer.unsign(cookie)
+        value = self.signer.unsign(cookie, max_age=MAX_AGE)
+        return value
@@ -40,3 +41,4 @@ def session_cookie_header(store, session_id):
+    header += "; SameSite=Lax"
"""

ROW = {
    "title": "Expire sessions after a week",
    "message": "Old cookies stayed valid forever.",
    "author": "Alice Moreau <alice@example.com>",
    "committer": "Alice Moreau <alice@example.com>",
    "files_changed": json.dumps(["src/session.py", "tests/test_session.py"]),
    "delta_truncated": DELTA,
}


def test_digest_has_hunk_context_identifiers_and_changed_lines_only() -> None:
    hunks, names, changed = diff_digest(DELTA)
    assert hunks == ["class SessionStore:", "def session_cookie_header(store, session_id):"]
    assert "self.signer.unsign" in names and "MAX_AGE" in names
    assert "return" not in names and "cookie" in names
    assert changed[0] == "return self.signer.unsign(cookie)"
    assert not any(line.startswith(("diff", "index", "---", "+++", "@@")) for line in changed)
    assert "def load(self, cookie):" not in changed  # context lines are left out


def test_v2_puts_meaning_first_and_leaves_people_to_keywords() -> None:
    text = DocumentFormat("v2", 256).build(ROW, 256)
    lines = text.splitlines()
    assert lines[:3] == [ROW["title"], ROW["message"], "src/session.py tests/test_session.py"]
    assert lines[3].startswith("class SessionStore:; def session_cookie_header")
    assert "Alice" not in text and "Author" not in text
    assert "diff --git" not in text


def test_v1_is_the_seed_layout() -> None:
    text = DocumentFormat("v1", 256).build(ROW, 256)
    assert text.splitlines()[2] == "Author: Alice Moreau <alice@example.com>"
    assert "diff --git" in text


def test_budget_bounds_the_characters_and_names_the_format() -> None:
    huge = dict(ROW, delta_truncated=DELTA + "+x = 1\n" * 100_000,
                files_changed=json.dumps([f"f{i}.py" for i in range(50_000)]))
    fmt = DocumentFormat("v2", 128)
    assert len(fmt.build(huge, 256)) <= fmt.max_chars(256) == 128 * 6
    assert fmt.name == "commit-v2-t128"
    assert DocumentFormat("v1", 256).max_chars(128) == 128 * 6  # the model's limit wins
    assert text_format() == default_format().name
    with pytest.raises(ValueError):
        DocumentFormat("v9", 128)
