"""The streaming ``git log`` reader against real repositories with awkward content."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from gitquarry.gitio.log import LogCommit, stream_commits

from .conftest import BASE_TIME, GitRepo


def read(repo: GitRepo, *hashes: str, max_lines: int = 200) -> list[LogCommit]:
    return list(stream_commits(repo.path / ".git", list(hashes), delta_max_lines=max_lines))


def read_one(repo: GitRepo, commit: str, max_lines: int = 200) -> LogCommit:
    (got,) = read(repo, commit, max_lines=max_lines)
    assert got.hash == commit
    return got


def _latin1_commit(repo: GitRepo, *, with_header: bool) -> str:
    parent = repo.commit({"base.txt": "base\n"}, "base")
    tree = repo.commit({"caf.txt": "coffee\n"}, "tree holder")
    raw = (
        f"tree {repo.tree(tree)}\nparent {parent}\n".encode()
        + b"author Jos\xe9 Mar\xeda <jose@example.com> 1704067200 +0000\n"
        + b"committer Jos\xe9 Mar\xeda <jose@example.com> 1704067200 +0000\n"
        + (b"encoding ISO-8859-1\n" if with_header else b"")
        + b"\nCaf\xe9 cr\xe8me fix\n\nD\xe9tails \xe0 suivre.\n"
    )
    return repo.hash_commit(raw)


def test_latin1_commit_with_encoding_header_is_reencoded(make_repo):
    repo = make_repo()
    commit = _latin1_commit(repo, with_header=True)
    got = read_one(repo, commit)
    assert got.title == "Café crème fix"
    assert got.message == "Détails à suivre."
    assert got.author == "José María <jose@example.com>"
    assert got.committer == "José María <jose@example.com>"
    assert got.decode_errors == []
    assert got.files == ["caf.txt"]


def test_latin1_commit_without_header_gets_replacement_char(make_repo):
    repo = make_repo()
    commit = _latin1_commit(repo, with_header=False)
    got = read_one(repo, commit)
    assert got.title == "Caf\ufffd cr\ufffdme fix"
    assert got.author_name == "Jos\ufffd Mar\ufffda"
    assert set(got.decode_errors) == {"author", "committer", "message"}


def test_latin1_without_header_is_a_logged_decode_warning(make_repo, indexer, caplog):
    repo = make_repo()
    commit = _latin1_commit(repo, with_header=False)
    repo.git("update-ref", "refs/heads/latin", commit)
    with caplog.at_level(logging.WARNING, logger="gitquarry"):
        report = indexer.run()
    (rep,) = report.repositories
    assert rep.decode_warnings == 1
    assert any(commit in r.getMessage() and "U+FFFD" in r.getMessage() for r in caplog.records)
    row = indexer.row(commit)
    assert row["title"] == "Caf\ufffd cr\ufffdme fix"
    assert row["author"] == "Jos\ufffd Mar\ufffda <jose@example.com>"


def test_latin1_with_header_indexes_correct_text(make_repo, indexer):
    repo = make_repo()
    commit = _latin1_commit(repo, with_header=True)
    repo.git("update-ref", "refs/heads/latin", commit)
    report = indexer.run()
    assert report.repositories[0].decode_warnings == 0
    row = indexer.row(commit)
    assert row["title"] == "Café crème fix"
    assert row["author"] == "José María <jose@example.com>"


def test_non_utf8_line_in_diff_becomes_replacement_char(make_repo):
    repo = make_repo()
    repo.commit({"menu.txt": "tea\n"}, "menu")
    commit = repo.commit({"menu.txt": b"tea\ncaf\xe9 au lait\n"}, "add coffee")
    got = read_one(repo, commit)
    assert "+caf\ufffd au lait" in got.delta
    assert got.decode_errors == ["diff"]
    assert got.title == "add coffee"


@pytest.mark.parametrize("name", ["a b.md", 'q"x.md', "é.md", "new\nline.md", "tab\there.md"])
def test_awkward_file_names_are_exact_never_c_quoted(make_repo, name):
    repo = make_repo()
    repo.commit({"README": "hi\n"}, "root")
    commit = repo.commit({name: "content\n"}, "add awkward file")
    got = read_one(repo, commit)
    assert got.files == [name]


def test_all_awkward_names_in_one_commit(make_repo, indexer):
    repo = make_repo()
    names = ["a b.md", 'q"x.md', "é.md", "new\nline.md"]
    commit = repo.commit({n: f"{n}\n" for n in names}, "awkward names")
    got = read_one(repo, commit)
    assert sorted(got.files) == sorted(names)
    indexer.run()
    import json

    assert sorted(json.loads(indexer.row(commit)["files_changed"])) == sorted(names)


def test_root_commit_lists_every_file_as_added(make_repo):
    repo = make_repo()
    root = repo.commit({"a.txt": "a\n", "dir/b.txt": "b\n"}, "initial import")
    got = read_one(repo, root)
    assert got.parents == []
    assert got.files == ["a.txt", "dir/b.txt"]
    assert got.delta.count("new file mode") == 2
    assert "+a" in got.delta and "+b" in got.delta


def test_merge_is_diffed_against_first_parent(make_repo):
    repo = make_repo()
    repo.commit({"base.txt": "base\n"}, "base")
    repo.branch("feature")
    repo.commit({"feature.txt": "feature work\n"}, "feature")
    repo.checkout("main")
    main_tip = repo.commit({"main.txt": "main work\n"}, "main side")
    merge = repo.merge("feature", message="Merge feature")
    got = read_one(repo, merge)
    assert got.parents[0] == main_tip and len(got.parents) == 2
    assert got.files == ["feature.txt"]
    assert "+feature work" in got.delta
    assert "main work" not in got.delta
    assert got.title == "Merge feature"


def test_octopus_merge(make_repo):
    repo = make_repo()
    repo.commit({"base.txt": "base\n"}, "base")
    for name in ("one", "two", "three"):
        repo.branch(name, "main")
        repo.commit({f"{name}.txt": f"{name}\n"}, f"add {name}")
    repo.checkout("main")
    merge = repo.merge("one", "two", "three", message="Octopus")
    got = read_one(repo, merge)
    assert len(got.parents) == 4
    assert sorted(got.files) == ["one.txt", "three.txt", "two.txt"]


def test_merge_flag_is_stored(make_repo, indexer):
    repo = make_repo()
    repo.commit({"base.txt": "base\n"}, "base")
    repo.branch("feature")
    repo.commit({"f.txt": "f\n"}, "feature")
    repo.checkout("main")
    repo.commit({"m.txt": "m\n"}, "main")
    merge = repo.merge("feature", message="Merge feature")
    indexer.run()
    row = indexer.row(merge)
    assert row["is_merge"] == 1
    assert row["parents"] == " ".join(repo.git("rev-parse", f"{merge}^1", f"{merge}^2").split())
    assert indexer.row(repo.head("feature"))["is_merge"] == 0


def test_empty_message_commit(make_repo):
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "first")
    commit = repo.commit({"a.txt": "b\n"}, "", extra=["--allow-empty-message"])
    nothing = repo.commit(None, "nothing changed")  # --allow-empty: no files, no diff
    after = repo.commit({"c.txt": "c\n"}, "after")
    got = read(repo, commit, nothing, after)
    assert [c.hash for c in got] == [commit, nothing, after]
    assert got[0].title == "" and got[0].message == ""
    assert got[0].files == ["a.txt"]
    assert got[1].files == [] and got[1].delta == ""
    assert got[2].files == ["c.txt"]


def test_rename_lists_old_and_new_path(make_repo):
    repo = make_repo()
    body = "".join(f"line {i}\n" for i in range(20))
    repo.commit({"old/name.md": body}, "add")
    (repo.path / "new").mkdir()
    repo.git("mv", "old/name.md", "new/name.md")
    commit = repo.commit(None, "move")
    got = read_one(repo, commit)
    assert set(got.files) == {"old/name.md", "new/name.md"}
    assert "rename from old/name.md" in got.delta


def test_delta_equals_git_show_for_normal_commit(make_repo):
    repo = make_repo()
    repo.commit({"a.py": "x = 1\n", "b.md": "# B\n"}, "first")
    commit = repo.commit({"a.py": "x = 2\ny = 3\n", "b.md": None, "c.txt": "new\n"}, "second")
    got = read_one(repo, commit)
    assert got.delta == repo.show(commit)
    assert got.delta_lines == len(repo.show(commit).splitlines())


def test_delta_truncated_at_max_lines_with_omitted_count(make_repo):
    repo = make_repo()
    repo.commit({"README": "r\n"}, "first")
    commit = repo.commit({"big.txt": "".join(f"row {i}\n" for i in range(300))}, "big")
    full = repo.show(commit).splitlines()
    got = read_one(repo, commit, max_lines=50)
    lines = got.delta.split("\n")
    assert lines[:50] == full[:50]
    assert lines[50] == ""
    assert lines[51] == f"... ({len(full) - 50} lines omitted)"
    assert len(lines) == 52
    # exactly at the limit: untouched
    exact = read_one(repo, commit, max_lines=len(full))
    assert exact.delta == repo.show(commit)


def test_delta_truncation_stored_by_indexer(make_repo, indexer):
    repo = make_repo()
    repo.commit({"README": "r\n"}, "first")
    commit = repo.commit({"big.txt": "".join(f"row {i}\n" for i in range(120))}, "big")
    indexer.run(delta_max_lines=20)
    total = len(repo.show(commit).splitlines())
    delta = indexer.row(commit)["delta_truncated"]
    assert delta.endswith(f"\n\n... ({total - 20} lines omitted)")
    assert delta.split("\n")[:20] == repo.show(commit).splitlines()[:20]


def test_many_commits_across_read_chunks_in_input_order(make_repo):
    """A batch far larger than one 1 MiB read: order and per-commit deltas survive."""
    from .conftest import FastCommit

    repo = make_repo()
    payload = "".join(f"{i:06d} lorem ipsum dolor sit amet\n" for i in range(400))
    repo.fast_import(
        [FastCommit({f"f{i}.txt": f"{i}\n{payload}"}, f"commit {i}") for i in range(200)]
    )
    hashes = repo.git("rev-list", "main").split()
    got = read(repo, *hashes, max_lines=10)
    assert [c.hash for c in got] == hashes
    assert all(c.delta.endswith("lines omitted)") for c in got)
    assert {c.title for c in got} == {f"commit {i}" for i in range(200)}
    for c in got[::37]:
        full = repo.show(c.hash).splitlines()
        assert c.delta.split("\n")[:10] == full[:10]
        assert c.delta.endswith(f"... ({len(full) - 10} lines omitted)")


def test_missing_blob_degrades_one_commit(make_repo, caplog):
    repo = make_repo()
    repo.git("config", "gc.auto", "0")
    first = repo.commit({"keep.txt": "keep\n"}, "first")
    lost = repo.commit({"lost.txt": "this blob will vanish\n"}, "add lost file")
    third = repo.commit({"keep.txt": "keep more\n"}, "third")
    blob = repo.git("rev-parse", f"{lost}:lost.txt")
    obj = repo.path / ".git" / "objects" / blob[:2] / blob[2:]
    assert obj.is_file()
    obj.unlink()
    with caplog.at_level(logging.WARNING, logger="gitquarry"):
        got = read(repo, third, lost, first)
    assert [c.hash for c in got] == [third, lost, first]
    assert got[1].delta_missing
    assert "missing" in got[1].delta
    assert got[1].files == ["lost.txt"]
    assert got[1].title == "add lost file"
    assert not got[0].delta_missing and got[0].delta == repo.show(third)
    assert not got[2].delta_missing and "+keep" in got[2].delta
    assert any(lost in r.getMessage() for r in caplog.records)


def test_sha256_hashes_are_64_chars(make_repo):
    repo = make_repo(object_format="sha256")
    a = repo.commit({"a.txt": "a\n"}, "first")
    b = repo.commit({"a.txt": "b\n"}, "second")
    got = read(repo, b, a)
    assert [len(c.hash) for c in got] == [64, 64]
    assert got[0].parents == [a]
    assert got[0].delta == repo.show(b)


def test_times_are_unix_seconds(make_repo):
    repo = make_repo()
    commit = repo.commit({"a": "a\n"}, "dated", BASE_TIME + 12345)
    got = read_one(repo, commit)
    assert got.author_time == got.committer_time == BASE_TIME + 12345


def test_path_helpers(tmp_path: Path):
    # a directory that is not a repository: stream_commits of nothing yields nothing
    assert list(stream_commits(tmp_path, [])) == []


def test_huge_single_line_is_cut_by_bytes(make_repo):
    from gitquarry.gitio.log import DELTA_MAX_BYTES

    repo = make_repo()
    repo.commit({"README": "r\n"}, "first")
    commit = repo.commit({"min.js": "é" * DELTA_MAX_BYTES + "\n"}, "minified bundle")
    got = read_one(repo, commit)
    assert got.delta.startswith(repo.show(commit)[:1000])
    assert got.delta.endswith(f"... (diff cut at {DELTA_MAX_BYTES} bytes; 0 lines omitted)")
    assert len(got.delta.encode()) < DELTA_MAX_BYTES + 200
    # cutting inside a multi-byte character is not an encoding problem of the commit
    assert got.decode_errors == []
    assert "\ufffd" not in got.delta
