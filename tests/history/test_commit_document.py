"""The commit document the embedding model reads: layouts, budget, format names."""

from __future__ import annotations

import json

import pytest

from gitquarry.history.index.document import (
    DocumentFormat,
    clean_message,
    default_format,
    diff_digest,
    merge_branch_words,
    name_words,
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


def test_v2_document_is_unchanged() -> None:
    assert DocumentFormat("v2", 256).build(ROW, 256) == "\n".join([
        "Expire sessions after a week",
        "Old cookies stayed valid forever.",
        "src/session.py tests/test_session.py",
        "class SessionStore:; def session_cookie_header(store, session_id):",
        "self.signer.unsign cookie value max_age MAX_AGE header SameSite Lax",
        "return self.signer.unsign(cookie)",
        "value = self.signer.unsign(cookie, max_age=MAX_AGE)",
        "return value",
        'header += "; SameSite=Lax"',
    ])


def test_v3_writes_paths_hunk_contexts_and_identifiers_as_new_words() -> None:
    assert DocumentFormat("v3", 256).build(ROW, 256) == "\n".join([
        "Expire sessions after a week",
        "Old cookies stayed valid forever.",
        "session tests test",  # src/ and .py say nothing; each word once
        "store cookie header id",  # the hunk contexts' words not said above (class/def: noise)
        "signer unsign value max age same site lax",
        "return self.signer.unsign(cookie)",  # changed lines as written
        "value = self.signer.unsign(cookie, max_age=MAX_AGE)",
        "return value",
        'header += "; SameSite=Lax"',
    ])


PR_DELTA = """diff --git a/src/click/termui.py b/src/click/termui.py
--- a/src/click/termui.py
+++ b/src/click/termui.py
@@ -1,3 +1,3 @@ def getTerminalSize():
-    return os.get_terminal_size()
+    return shutil.get_terminal_size(HTTPFallback)
"""

PR_ROW = {
    "title": "Merge pull request #2330 from alice/fix-getTerminalSize",
    "message": "Use shutil.get_terminal_size (#2329)\n\n"
               "Reported in https://github.com/pallets/click/issues/2329, fixes #2329.\n"
               "See the [docs](https://docs.python.org/3/library/shutil.html) and GH-7.\n\n"
               "Signed-off-by: Alice <a@example.org>\n"
               "Co-authored-by: Bob <b@example.org>\n"
               "Reviewed-by: Carol <c@example.org>",
    "author": "Alice <a@example.org>",
    "committer": "Alice <a@example.org>",
    "files_changed": json.dumps(["src/click/termui.py", "src/click/_compat.py"]),
    "delta_truncated": PR_DELTA,
}


def test_v3_pull_request_merge_loses_its_noise_and_gains_its_branch_words() -> None:
    assert DocumentFormat("v3", 256).build(PR_ROW, 256) == "\n".join([
        "Merge pull request from alice/fix-getTerminalSize",
        "Use shutil.get_terminal_size",
        "Reported in.",  # the URL, with its comma, and "fixes #2329" are gone
        "See the docs and.",
        "fix get terminal size",  # the branch, the owner left out
        "click termui compat",
        # the hunk context (getTerminalSize) holds no new word: its line is left out
        "os http fallback",  # shutil, get, terminal, size: already said above
        "return os.get_terminal_size()",
        "return shutil.get_terminal_size(HTTPFallback)",
    ])


def test_v3_branch_merge_and_a_title_left_empty() -> None:
    row = dict(PR_ROW, title="Merge branch 'fix-foo-bar' into 8.1.x", message="",
               files_changed="[]", delta_truncated="")
    assert DocumentFormat("v3", 256).build(row, 256) == (
        "Merge branch 'fix-foo-bar' into 8.1.x\nfix foo bar")
    only_ref = dict(row, title="#123")
    assert DocumentFormat("v3", 256).build(only_ref, 256) == "#123"  # never an empty title


def test_words_of_names_branches_and_messages() -> None:
    assert name_words("get_terminal_size") == ["get", "terminal", "size"]
    assert name_words("getTerminalSize") == ["get", "terminal", "size"]
    assert name_words("HTTPServer.serve_forever") == ["http", "server", "serve", "forever"]
    assert name_words("src/click/termui.py") == ["src", "click", "termui", "py"]
    assert merge_branch_words("Merge branch 'origin/fix-x2'") == ["fix", "x", "2"]
    assert merge_branch_words("Merge remote-tracking branch 'origin/main'") == ["main"]
    assert merge_branch_words("Merge pull request #1 from user/docs/new-page") == [
        "docs", "new", "page"]
    assert merge_branch_words("Fix merge of branch 'x'") == []
    assert clean_message("Closes #4\nReal text\n(cherry picked from commit abc123)") == (
        "Real text")
    assert clean_message("see pallets/click#9 and Refs: #5 then http://x.y/z") == "and then"


def test_v1_is_the_seed_layout() -> None:
    text = DocumentFormat("v1", 256).build(ROW, 256)
    assert text.splitlines()[2] == "Author: Alice Moreau <alice@example.com>"
    assert "diff --git" in text


@pytest.mark.parametrize("layout", ["v1", "v2", "v3"])
def test_budget_bounds_the_characters_on_a_huge_commit(layout: str) -> None:
    huge = dict(ROW, title="Merge branch '" + "fix-" * 10_000 + "'",
                message="https://x.org/a #1 Signed-off-by: A\n" * 20_000,
                delta_truncated=DELTA + "+someName_other.thing = 1\n" * 100_000,
                files_changed=json.dumps([f"pkg{i}/modName{i}.py" for i in range(50_000)]))
    fmt = DocumentFormat(layout, 128)
    text = fmt.build(huge, 256)
    assert 0 < len(text) <= fmt.max_chars(256) == 128 * 6


def test_v3_is_the_default_and_names_the_format() -> None:
    fmt = DocumentFormat("v3", 128)
    assert default_format() == fmt
    assert fmt.name == "commit-v3-t128" == text_format()
    assert DocumentFormat("v2", 128).name == "commit-v2-t128"
    assert DocumentFormat("v1", 256).max_chars(128) == 128 * 6  # the model's limit wins
    assert text_format() == default_format().name
    with pytest.raises(ValueError):
        DocumentFormat("v9", 128)
