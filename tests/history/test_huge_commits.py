"""A commit that touches very many files, and very many refs (issue 19 §6).

A commit's changed-path list is cut at ``gitio.log.FILES_MAX`` paths (git's order) and the
rest are counted (``files_total``, a note closing the stored diff, an index warning): before
this cap the parser deduplicated each path against a list, quadratic in the paths, and a
200,000-file commit did not finish indexing in 10 minutes. The slow test builds 200,000 files
(``GQ_HUGE_FILES``; the full million is ``benchmarks/bench_huge_commit.py``) and 100,000 refs
(``GQ_HUGE_REFS``, one ``packed-refs`` file) with ``git fast-import`` and runs
``gitquarry index --no-embed`` and a ``history`` search end to end, bounding CPU and peak
RSS generously.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitquarry.gitio import log as gitlog
from gitquarry.gitio.log import stream_commits

from .conftest import FastCommit, GitRepo, gitquarry_executable


def _git_paths(repo: GitRepo, commit: str) -> list[str]:
    """The changed paths git lists for ``commit`` (its raw order, a rename's old then new),
    from ``git diff-tree`` (the reference the parser must match)."""
    out = subprocess.run(["git", "diff-tree", "-r", "-M", "--root", "--no-commit-id", "-z",
                          "--name-status", commit], cwd=repo.path, check=True,
                         capture_output=True).stdout.decode()
    fields = out.split("\0")
    paths: list[str] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        n = 2 if status[:1] in ("R", "C") else 1
        for p in fields[i + 1 : i + 1 + n]:
            if p not in paths:
                paths.append(p)
        i += 1 + n
    return paths


def _wide_repo(make_repo) -> tuple[GitRepo, str, list[str]]:
    repo: GitRepo = make_repo()
    repo.fast_import([
        FastCommit({"README.md": "# Wide\n\nsome text that is long enough to be renamed\n"},
                   "base"),
        FastCommit({"README.md": None,
                    "docs/README.md": "# Wide\n\nsome text that is long enough to be renamed\n",
                    **{f"pkg/m{i:02d}/zebra{i:02d}.txt": f"file {i}\n" for i in range(24)}},
                   "touch many files"),
    ])
    head = repo.head()
    paths = _git_paths(repo, head)
    assert len(paths) == 26 and "README.md" in paths and "docs/README.md" in paths
    return repo, head, paths


@pytest.mark.parametrize("cap", [10, 26, 1000])
def test_file_list_keeps_the_first_paths_in_git_order_and_counts_all(
    make_repo, monkeypatch: pytest.MonkeyPatch, cap: int
) -> None:
    repo, head, paths = _wide_repo(make_repo)
    monkeypatch.setattr(gitlog, "FILES_MAX", cap)
    (commit,) = stream_commits(repo.path / ".git", [head])
    assert commit.files == paths[:cap]
    assert commit.files_total == len(paths) == 26
    assert commit.files_cut is (cap < 26)
    note = f"... ({26 - cap} more changed files not listed: {cap} of 26 kept)"
    assert commit.delta.endswith(note) is (cap < 26)
    assert ("more changed files not listed" in commit.delta) is (cap < 26)


def test_index_warns_stores_the_first_paths_and_search_finds_them(
    make_repo, workspace: Path, indexer, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _repo, head, paths = _wide_repo(make_repo)
    monkeypatch.setattr(gitlog, "FILES_MAX", 10)
    code, _out, err = cli("index", str(workspace), "--no-embed")
    assert code == 0, err
    assert "1 commit changes more than 10 files; the first 10 paths of each are indexed" in err
    assert f"{head[:12]} (10 of 26)" in err
    row = indexer.row(head)
    assert json.loads(str(row["files_changed"])) == paths[:10]
    assert str(row["delta_truncated"]).endswith(
        "... (16 more changed files not listed: 10 of 26 kept)")
    code, out, err = cli("index", str(workspace), "--no-embed", "--json")
    assert code == 0 and json.loads(out)["repositories"][0]["files_cut_commits"] == 0
    kept, cut = paths[9], paths[10]
    code, out, err = cli("history", kept.rsplit("/", 1)[-1].split(".")[0], "--mode", "lexical",
                         "--json", "--project", str(workspace))
    assert code == 0, err
    assert [r["hash"] for r in json.loads(out)["results"]] == [head]
    # a path past the cap is not indexed (documented): it matches no commit
    code, out, err = cli("history", cut.rsplit("/", 1)[-1].split(".")[0], "--mode", "lexical",
                         "--json", "--project", str(workspace))
    assert code == 0, err
    assert json.loads(out)["results"] == []


def huge_stream(files: int) -> bytes:
    """A first commit, then one commit adding ``files`` files (1,000 per directory, one
    shared blob) on ``main``."""
    out = [b"blob\nmark :1\ndata 6\nhello\n\n",
           b"commit refs/heads/main\nmark :2\ncommitter Ada <ada@example.com> 1700000000 +0000\n"
           b"data 13\nfirst commit\n\nM 100644 :1 README\n\n"]
    msg = b"a commit that touches very many files at once\n"
    out.append(b"commit refs/heads/main\nmark :3\ncommitter Ada <ada@example.com> 1700000060 "
               b"+0000\ndata %d\n%s\nfrom :2\n" % (len(msg), msg))
    out.extend(b"M 100644 :1 d%04d/file%07d.txt\n" % (i // 1000, i) for i in range(files))
    out.append(b"\n")
    return b"".join(out)


def write_packed_refs(git_dir: Path, tips: list[str], refs: int) -> None:
    """``refs`` branches ``refs/heads/r/bNNNNNN`` pointing at ``tips`` in turn, written as
    one ``packed-refs`` file (what ``git pack-refs`` leaves; git reads it as is)."""
    lines = [b"# pack-refs with: peeled fully-peeled sorted \n"]
    lines.extend(b"%s refs/heads/r/b%06d\n" % (tips[i % len(tips)].encode(), i)
                 for i in range(refs))
    (git_dir / "packed-refs").write_bytes(b"".join(lines))


def _measured(cmd: list[str], timeout: float) -> tuple[subprocess.CompletedProcess[str],
                                                        dict[str, float]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=os.environ.copy())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, {
        "wall_s": round(time.monotonic() - started, 2),
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
        # the largest child so far in this test process (a maximum, never a sum)
        "peak_rss_mib": round(after.ru_maxrss / 1024, 1),
    }


@pytest.mark.slow
@pytest.mark.timeout(1800)  # wall time on a loaded 2-core machine; CPU is what is bounded
def test_huge_commit_and_many_refs_index_and_search_in_bounded_time_and_memory(
    make_repo, workspace: Path
) -> None:
    files = int(os.environ.get("GQ_HUGE_FILES", "200000"))
    refs = int(os.environ.get("GQ_HUGE_REFS", "100000"))
    repo: GitRepo = make_repo()
    repo.git("fast-import", "--quiet", input_bytes=huge_stream(files))
    head = repo.git("rev-parse", "main").strip()
    write_packed_refs(repo.path / ".git", [repo.git("rev-parse", "main~1").strip(), head],
                      refs)
    assert int(repo.git("for-each-ref", "--count", str(refs + 5), "--format=x").count("x")) \
        == refs + 1
    gq = gitquarry_executable()

    index, cost = _measured([gq, "index", str(workspace), "--no-embed", "--json"], 900)
    print(json.dumps({"files": files, "refs": refs, "index": cost}), file=sys.stderr)
    assert index.returncode == 0, index.stderr[-2000:]
    report = json.loads(index.stdout)["repositories"][0]
    assert report["new_commits"] == 2 and report["files_cut_commits"] == 1
    assert report["files_cut_examples"] == [f"{head[:12]} ({gitlog.FILES_MAX} of {files})"]
    # generous bounds (measured at 200,000 files / 100,000 refs: ~12 CPU s, ~110 MiB)
    assert cost["cpu_s"] < 240 and cost["peak_rss_mib"] < 1024, cost

    search, cost = _measured([gq, "history", "touches very many files", "--mode", "lexical",
                              "--json", "--project", str(workspace)], 600)
    print(json.dumps({"search": cost}), file=sys.stderr)
    assert search.returncode == 0, search.stderr[-2000:]
    (hit,) = [r for r in json.loads(search.stdout)["results"] if r["hash"] == head]
    kept = min(files, gitlog.FILES_MAX)
    expected = [f"d{i // 1000:04d}/file{i:07d}.txt" for i in range(kept)]
    # the JSON answer is bounded on its own (1,000 paths a result, marked cut)
    assert hit["files_changed"] == expected[: len(hit["files_changed"])]
    assert 0 < len(hit["files_changed"]) <= 1000
    assert cost["cpu_s"] < 120 and cost["peak_rss_mib"] < 1024, cost
    import sqlite3

    conn = sqlite3.connect(f"file:{workspace / '.gitquarry' / 'index.db'}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT count(*) FROM repo_refs").fetchone()[0] == refs + 1
        stored = conn.execute("SELECT files_changed FROM git_commits WHERE hash = ?",
                              (head,)).fetchone()[0]
        assert json.loads(stored) == expected
    finally:
        conn.close()
