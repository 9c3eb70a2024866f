"""Issue 19 §5 for ``.mailmap``: only a regular file is opened (a FIFO or socket placed at the
top of the working tree never blocks the index), at most ``MAILMAP_MAX_BYTES + 1`` bytes are
read, and a skipped file is a note naming it."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

from gitquarry.gitio.mailmap import MAILMAP_MAX_BYTES

from .conftest import GitRepo, Indexer

KIM_OLD = ("Kim Alder", "kim@old.example")
MAILMAP = "Kim Birch <kim@new.example> <kim@old.example>\n"



def test_a_fifo_mailmap_never_blocks_the_index(make_repo: Callable[..., GitRepo],
                                               indexer: Indexer, deadline: None) -> None:
    repo = make_repo()
    commit = repo.commit({"a.txt": "a\n"}, "Tune the parser", author=KIM_OLD)
    os.mkfifo(repo.path / ".mailmap")
    report = indexer.run()
    assert indexer.row(commit)["author"] == "Kim Alder <kim@old.example>"
    notes = report.repositories[0].notes
    assert any(".mailmap is a FIFO, not a regular file" in n for n in notes), notes


def test_a_socket_mailmap_is_a_note(make_repo: Callable[..., GitRepo], indexer: Indexer,
                                    deadline: None) -> None:
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "Tune the parser", author=KIM_OLD)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(repo.path / ".mailmap"))
        report = indexer.run()
    finally:
        sock.close()
    notes = report.repositories[0].notes
    assert any(".mailmap is a socket, not a regular file" in n for n in notes), notes


def test_an_oversized_mailmap_is_not_applied(make_repo: Callable[..., GitRepo],
                                             indexer: Indexer) -> None:
    repo = make_repo()
    commit = repo.commit({"a.txt": "a\n"}, "Tune the parser", author=KIM_OLD)
    (repo.path / ".mailmap").write_text(MAILMAP + "# pad\n" * (MAILMAP_MAX_BYTES // 6 + 10))
    report = indexer.run()
    assert indexer.row(commit)["author"] == "Kim Alder <kim@old.example>"
    notes = report.repositories[0].notes
    assert any(f"over {MAILMAP_MAX_BYTES:,}" in n for n in notes), notes
    # at the cap it applies
    (repo.path / ".mailmap").write_text(MAILMAP)
    indexer.run()
    assert indexer.row(commit)["author"] == "Kim Birch <kim@new.example>"
