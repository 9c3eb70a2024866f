"""Issue 21 §1: the per-query freshness view lists the refs with one ``git for-each-ref`` and
peels only refs whose object moved since indexing (``repo_refs.raw``); its view of the
current refs equals ``read_refs`` (indexing's full read: every ref peeled) after branch
moves, new and deleted refs, annotated and nested tags, retagging, and a ref whose object is
missing (the listing fails: ``read_refs`` answers and leaves the broken ref out)."""

from __future__ import annotations

from pathlib import Path

from gitquarry.config import DEFAULT_REF_GLOBS
from gitquarry.gitio.refs import listed_refs, read_refs, ref_from_bytes
from gitquarry.history.index.freshness import FreshnessChecker

from .conftest import BASE_TIME, GitRepo, Indexer


def _indexed(indexer: Indexer) -> tuple[dict[str, str], dict[str, str]]:
    with indexer.open() as store:
        rows = store.conn.execute("SELECT ref, tip, raw FROM repo_refs").fetchall()
    names = [ref_from_bytes(bytes(r[0])) for r in rows]
    return ({n: r[1] for n, r in zip(names, rows, strict=True)},
            {n: r[2] for n, r in zip(names, rows, strict=True) if r[2] is not None})


def _check(repo: GitRepo, indexer: Indexer) -> None:
    indexed, raw = _indexed(indexer)
    checker = FreshnessChecker(list(DEFAULT_REF_GLOBS))
    want = {t.ref: t.commit for t in read_refs(repo.path / ".git", list(DEFAULT_REF_GLOBS)).tips}
    assert checker._current(repo.path / ".git", indexed, raw) == want


def test_listing_view_equals_read_refs(make_repo, indexer: Indexer) -> None:
    repo: GitRepo = make_repo()
    repo.commit({"a": "1\n"}, "one", BASE_TIME)
    repo.git("tag", "-a", "-m", "release", "v1")
    repo.git("tag", "light")
    repo.branch("side")
    repo.commit({"b": "1\n"}, "two", BASE_TIME + 60)
    repo.git("tag", "-a", "-m", "nested", "v1-nested", "v1")
    repo.checkout("main")
    indexer.run()
    indexed, raw = _indexed(indexer)
    assert raw and set(raw) == set(indexed)  # every indexed ref has its unpeeled object
    tag_object = repo.git("rev-parse", "refs/tags/v1")
    assert raw["refs/tags/v1"] == tag_object != indexed["refs/tags/v1"]
    listing = listed_refs(repo.path / ".git", list(DEFAULT_REF_GLOBS))
    assert listing is not None and dict(listing) == raw
    _check(repo, indexer)  # nothing moved
    repo.commit({"c": "1\n"}, "three", BASE_TIME + 120)  # a branch moves
    repo.git("tag", "-a", "-f", "-m", "retagged", "v1", "HEAD")  # a tag object replaced
    repo.git("tag", "-a", "-m", "new", "v2")  # a new ref
    repo.git("branch", "-D", "side")  # a deleted ref
    repo.git("update-ref", "refs/tags/atree", repo.tree())  # a ref at a tree: left out
    _check(repo, indexer)


def test_a_missing_object_falls_back_to_read_refs(make_repo, indexer: Indexer) -> None:
    repo: GitRepo = make_repo()
    repo.commit({"a": "1\n"}, "one", BASE_TIME)
    repo.branch("gone")
    gone = repo.commit({"b": "1\n"}, "two", BASE_TIME + 60)
    repo.checkout("main")
    indexer.run()
    # the object behind an unchanged ref disappears (a damaged object store)
    git_dir = repo.path / ".git"
    Path(git_dir / "objects" / gone[:2] / gone[2:]).unlink()
    assert listed_refs(git_dir, list(DEFAULT_REF_GLOBS)) is None
    _check(repo, indexer)
    indexed, raw = _indexed(indexer)
    view = FreshnessChecker(list(DEFAULT_REF_GLOBS))._current(git_dir, indexed, raw)
    assert "refs/heads/gone" not in view  # reads as changed, as read_refs says
