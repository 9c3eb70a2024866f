"""Issue 8 §4: diffs are stored compressed and indexed without their file headers, and
results, keyword search, triggers and migrations work as before."""

from __future__ import annotations

import sqlite3

from gitquarry.history.search.engine import search_git_history
from gitquarry.retrieval.tokenize import strip_diff_headers
from gitquarry.store.compression import compress_text, inflate_text


def found(indexer, query, **kwargs):
    with indexer.open() as store:
        response = search_git_history(store, query, mode="lexical", top_n=20, **kwargs)
    return [r.hash for r in response.results]


def test_diffs_are_stored_compressed_and_shown_in_full(make_repo, indexer):
    repo = make_repo()
    body = "".join(f"def handler_{n}(request):\n    return render(request)\n" for n in range(40))
    head = repo.commit({"app/views.py": body}, "Add the views")
    indexer.run()
    with indexer.open() as store:
        kind, size = store.conn.execute(
            "SELECT typeof(delta_truncated), length(delta_truncated) FROM git_commits"
        ).fetchone()
        response = search_git_history(store, "handler_7", mode="lexical", top_n=1)
    assert kind == "blob" and size < len(repo.show(head)) / 2
    assert response.results[0].delta_truncated == repo.show(head)


def test_diff_headers_are_not_indexed_but_paths_and_content_are(make_repo, indexer):
    repo = make_repo()
    first = repo.commit({"kept/alpha.sql": "-- a comment\nselect 1;\n"}, "First")
    second = repo.commit({"kept/alpha.sql": "select 2;\n"}, "Second")
    indexer.run()
    blob = repo.git("rev-parse", f"{first}:kept/alpha.sql")[:7]
    assert blob in repo.show(second)  # the "index <blob>..<blob>" header line
    assert found(indexer, blob) == []  # header blob ids are not indexed
    assert set(found(indexer, "alpha")) == {first, second}  # the path, via files_changed
    # "-- a comment" added, then removed: the "--- a comment" line after the hunk header stays
    assert set(found(indexer, "comment")) == {first, second}


def test_strip_diff_headers_keeps_hunks_and_lines_that_look_like_headers():
    diff = (
        "diff --git a/x.sql b/x.sql\nindex 1234567..89abcde 100644\n--- a/x.sql\n+++ b/x.sql\n"
        "@@ -1,2 +1,2 @@ create table\n--- old comment\n+++ new comment\n"
        "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\n"
        "Binary files /dev/null and b/logo.png differ\n"
        "diff --git a/old b/new\nsimilarity index 100%\nrename from old\nrename to new\n"
    )
    kept = "@@ -1,2 +1,2 @@ create table\n--- old comment\n+++ new comment\n"
    assert strip_diff_headers(diff) == kept
    assert strip_diff_headers("no diff here") == "no diff here"


def test_compress_round_trip():
    for text in ("", "plain", "修复数据库 " * 100, "\ud800 lone surrogate"):
        assert inflate_text(compress_text(text)) == text
    assert inflate_text("stored as text") == "stored as text" and inflate_text(None) == ""


def test_update_and_delete_triggers_handle_compressed_diffs(make_repo, indexer):
    repo = make_repo()
    keep = repo.commit({"a.py": "zebra_function()\n"}, "Add a")
    gone = repo.commit({"b.py": "giraffe_function()\n"}, "Add b")
    indexer.run()
    with indexer.open() as store, store.atomic() as conn:
        conn.execute("UPDATE git_commits SET delta_truncated = ? WHERE hash = ?",
                     (compress_text("+okapi_function()\n"), keep))
        conn.execute("DELETE FROM git_commits WHERE hash = ?", (gone,))
        conn.execute("INSERT INTO commit_fts (commit_fts) VALUES ('integrity-check')")
    assert found(indexer, "zebra_function") == []
    assert found(indexer, "giraffe_function") == []
    assert found(indexer, "okapi_function") == [keep]
    raw = sqlite3.connect(indexer.db_path)
    assert raw.execute("SELECT count(*) FROM commit_fts").fetchone()[0] == 1
    raw.close()
