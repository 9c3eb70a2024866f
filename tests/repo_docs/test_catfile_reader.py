"""Issue 19 §3: the shared ``git cat-file --batch`` reader only ever receives full object ids,
and a reader whose process died for any reason answers the next request with a new one."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from gitquarry.errors import GitError, RevisionNotFoundError
from gitquarry.gitio.catfile import BlobReader
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Selector

from .conftest import Repo

BAD = ["HEAD@{upstream}", "HEAD@{100000}", ":../x", "HEAD:../../", "HEAD:docs", "HEAD^{tree}",
       "nosuch", "-n", "HEAD@{-1}", "main@{push}", "HEAD~99"]


def test_revision_expressions_never_reach_cat_file(docs_repo: Repo) -> None:
    git_dir = docs_repo.path / ".git"
    head = docs_repo.git("rev-parse", "HEAD")
    blob = docs_repo.git("rev-parse", "HEAD:README.md")
    with BlobReader(git_dir) as reader:
        pid = reader._proc.pid if reader._proc else None
        for rev in BAD:
            assert reader.commit_of(rev) is None, rev
            with pytest.raises(GitError, match="only full object ids"):
                reader.read(rev)
        assert reader.commit_of("HEAD") == head
        assert reader.commit_of(head) == head
        docs_repo.git("tag", "-a", "-m", "v1", "v1")
        tag = docs_repo.git("rev-parse", "v1")
        assert reader.commit_of(tag) == head and reader.commit_of("v1") == head
        assert reader.commit_of(blob) is None
        assert reader.commit_of("0" * 40) is None
        assert reader.read(blob).data == (docs_repo.path / "README.md").read_bytes()
        # the same process answered throughout: nothing killed it
        assert reader._proc is not None and reader._proc.pid == pid


def test_a_killed_reader_is_restarted_on_the_next_request(docs_repo: Repo) -> None:
    blob = docs_repo.git("rev-parse", "HEAD:README.md")
    with BlobReader(docs_repo.path / ".git") as reader:
        assert reader.read(blob).status == "ok"
        assert reader._proc is not None
        os.kill(reader._proc.pid, signal.SIGKILL)
        reader._proc.wait()
        assert reader.read(blob).status == "ok"
        # a process that dies between the write and the answer: the request fails once...
        assert reader._proc is not None
        reader._proc.stdout.close()  # type: ignore[union-attr]
        with pytest.raises(GitError, match="cat-file died"):
            reader.read(blob)
        # ...and the next one starts a fresh process
        assert reader.read(blob).status == "ok"
    with pytest.raises(GitError, match="closed"):
        reader.read(blob)


def test_bad_revision_then_good_search_in_one_service(service: RepoDocsService,
                                                      registered: Selector) -> None:
    expected = service.search(registered, "gunicorn", mode="fulltext")["hits"]
    assert expected
    for rev in BAD:
        with pytest.raises(RevisionNotFoundError) as info:
            service.search(registered, "gunicorn", revision=rev, mode="fulltext")
        assert info.value.code == "revision_not_found"
        assert service.search(registered, "gunicorn", mode="fulltext")["hits"] == expected


def test_the_name_fast_path_answers_exactly_what_rev_parse_does(docs_repo: Repo) -> None:
    """Every name, good or bad, resolves to what ``git rev-parse --verify --end-of-options
    <name>^{commit}`` says (the brute-force reference), whether the disposable ``--batch-check``
    process answered it or died on it."""
    first = docs_repo.git("rev-parse", "HEAD")
    docs_repo.commit({"docs/x.md": "# x\n"})
    docs_repo.git("tag", "-a", "-m", "v1", "v1")
    docs_repo.git("tag", "light", first)
    docs_repo.git("branch", "side", first)
    names = ["HEAD", "@", "main", "side", "v1", "light", "refs/tags/v1", "HEAD~1", "HEAD^",
             "main^{commit}", "v1^{}", first[:10], first, "HEAD@{0}", "HEAD@{1}",
             "HEAD:README.md", "HEAD^{tree}", ":/docs", *BAD]
    with BlobReader(docs_repo.path / ".git") as reader:
        for name in names * 2:  # twice: after the resolver died on bad names
            proc = subprocess.run(
                ["git", "rev-parse", "--verify", "--quiet", "--end-of-options",
                 f"{name}^{{commit}}"], cwd=docs_repo.path, capture_output=True, text=True,
                check=False)
            expected = proc.stdout.strip() if proc.returncode == 0 else None
            if name.startswith("-"):
                expected = None
            assert reader.commit_of(name) == expected, name


#: revisions git accepts but that name no single commit the way a docs search needs:
#: ``rev-parse --verify ^HEAD`` prints ``^<id>`` (rc 0), which used to reach ``git ls-tree``
#: (``git_failed``); a name over the kernel's 128 KiB argument cap made ``run_git`` raise
#: ``OSError: Argument list too long`` (``internal_error``).
ODD = ["^HEAD", "^HEAD~1", "H" * 200_000]


def test_odd_revisions_are_revision_not_found(docs_repo: Repo, service: RepoDocsService,
                                              registered: Selector) -> None:
    from gitquarry.gitio.tree import resolve_commit

    git_dir = docs_repo.path / ".git"
    with BlobReader(git_dir) as reader:
        for rev in ODD:
            assert reader.commit_of(rev) is None, rev[:20]
            with pytest.raises(RevisionNotFoundError):
                resolve_commit(git_dir, rev)
    expected = service.search(registered, "gunicorn", mode="fulltext")["hits"]
    assert expected
    for rev in ODD:
        with pytest.raises(RevisionNotFoundError) as info:
            service.search(registered, "gunicorn", revision=rev, mode="fulltext")
        assert info.value.code == "revision_not_found"
        assert service.search(registered, "gunicorn", mode="fulltext")["hits"] == expected
