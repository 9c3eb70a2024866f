"""Issue 15 §4 (first bullet): commit times git stores but no 64-bit integer or date library
holds never break indexing, filtering or display: clamped to [1970-01-01, 9999-12-31],
reported, and the run completes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gitquarry.gitio.log import MAX_TIME, MIN_TIME, parse_time

from .conftest import BASE_TIME, GitRepo, Indexer

CLI = Callable[..., tuple[int, str, str]]


def _raw_commit(repo: GitRepo, author_time: str, committer_time: str, title: str) -> str:
    tree = repo.git("write-tree")
    parent = repo.head()
    body = (
        f"tree {tree}\nparent {parent}\n"
        f"author Ada Author <ada@example.com> {author_time} +0000\n"
        f"committer Cy Committer <cy@example.com> {committer_time} +0000\n\n{title}\n"
    ).encode()
    commit = repo.hash_commit(body)
    repo.git("update-ref", "refs/heads/main", commit)
    return commit


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"18446744073709551615", (MAX_TIME, False)),
        (b"99999999999999999999999", (MAX_TIME, False)),
        (b"253402300800", (MAX_TIME, False)),
        (b"253402300799", (MAX_TIME, True)),
        (b"0", (0, True)),
        (b"1704067200", (1704067200, True)),
        (b"", (MIN_TIME, False)),
        (b"-5", (MIN_TIME, False)),
    ],
)
def test_parse_time(raw: bytes, expected: tuple[int, bool]) -> None:
    assert parse_time(raw) == expected


def test_commit_time_beyond_64_bits_is_clamped_and_the_run_completes(
    make_repo: Callable[..., GitRepo], workspace: Path, indexer: Indexer, cli: CLI
) -> None:
    repo = make_repo("a_odd")
    repo.commit({"a.txt": "a\n"}, "ordinary start", BASE_TIME)
    huge = _raw_commit(repo, str(BASE_TIME), "18446744073709551615", "Overflowing committer")
    neg = _raw_commit(repo, "-5", str(BASE_TIME), "Negative author time")
    big = _raw_commit(repo, "99999999999999999999999", "99999999999999999999999",
                      "Beyond any integer")
    other = make_repo("b_other")
    other.commit({"b.txt": "b\n"}, "ordinary other", BASE_TIME)
    code, out, err = cli("index", str(workspace), "--no-embed")
    assert code == 0, err
    assert "internal error" not in err
    assert "3 commits have an author or committer time Git cannot represent" in err
    assert huge[:12] in err and "committer_time 18446744073709551615" in err
    assert "Total: 5 commits" in out
    assert indexer.row(huge)["timestamp"] == MAX_TIME
    assert indexer.row(huge)["author_time"] == BASE_TIME
    assert indexer.row(neg)["author_time"] == MIN_TIME
    assert indexer.row(big)["timestamp"] == MAX_TIME
    # filtering and display
    def hits(*args: str) -> list[str]:
        code, out, err = cli("history", "Overflowing", "--project", str(workspace),
                             "--mode", "lexical", "--json", *args)
        assert code == 0, err
        return [r["hash"] for r in json.loads(out)["results"]]

    assert hits() == [huge]
    assert hits("--after", "2030-01-01") == [huge]
    assert hits("--before", "2030-01-01") == []
    code, out, err = cli("history", "Overflowing", "--project", str(workspace),
                         "--mode", "lexical")
    assert code == 0, err
    assert "9999-12-31" in out
    assert indexer.run().up_to_date
