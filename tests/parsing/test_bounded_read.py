"""``parsing.bounded_read``: what is refused (and that refusing never blocks), the N+1 cap,
and cutting at a character boundary checked against a brute-force decode."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from gitquarry.errors import FileRefusedError
from gitquarry.parsing.bounded_read import cut_at_char_boundary, open_regular, read_capped

#: every read here must return, never block (the shared deadline of tests/conftest.py)
pytestmark = pytest.mark.usefixtures("deadline")


def test_the_cap_reads_n_plus_one_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abcdef")
    assert read_capped(path, 6).data == b"abcdef" and not read_capped(path, 6).over
    got = read_capped(path, 5)
    assert (got.data, got.size, got.over) == (b"abcde", 6, True)
    assert read_capped(path, 0).over and read_capped(path, 0).data == b""
    (tmp_path / "empty").write_bytes(b"")
    assert read_capped(tmp_path / "empty", 0) == read_capped(tmp_path / "empty", 10)
    with pytest.raises(ValueError):
        read_capped(path, -1)


def test_links_are_refused_unless_followed(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"x")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(FileRefusedError, match="symbolic link"):
        read_capped(link, 10)
    assert read_capped(link, 10, follow_symlinks=True).data == b"x"
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(FileRefusedError, match="character device"):
        read_capped(tmp_path / "zero", 10, follow_symlinks=True)


def test_fifo_socket_directory_missing_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(FileRefusedError, match="is a FIFO, not a regular file"):
        read_capped(fifo, 10)
    with pytest.raises(FileRefusedError, match="is a FIFO"):
        read_capped(fifo, 10, follow_symlinks=True)
    # a FIFO with a writer that never writes: still refused at once
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        with pytest.raises(FileRefusedError, match="is a FIFO"):
            open_regular(fifo)
    finally:
        os.close(writer)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(tmp_path / "sock"))
        with pytest.raises(FileRefusedError, match="is a socket"):
            read_capped(tmp_path / "sock", 10)
    finally:
        sock.close()
    with pytest.raises(FileRefusedError, match="is a directory"):
        read_capped(tmp_path, 10)
    with pytest.raises(FileRefusedError, match="does not exist") as info:
        read_capped(tmp_path / "nothing", 10)
    assert info.value.path == tmp_path / "nothing" and info.value.code == "file_refused"


def test_open_regular_hands_back_a_regular_descriptor(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"hello")
    fd, info = open_regular(path)
    try:
        assert info.st_size == 5 and os.read(fd, 10) == b"hello"
    finally:
        os.close(fd)


def test_cut_at_char_boundary_matches_a_brute_force_decode() -> None:
    text = "aé€𝄞b" * 3
    data = text.encode("utf-8")
    for end in range(len(data) + 1):
        cut = cut_at_char_boundary(data[:end])
        # the longest prefix of data[:end] that decodes cleanly
        best = max(k for k in range(end + 1) if _decodes(data[:k]))
        assert cut == data[:best], end
    # invalid bytes are not a partial character: kept as they are
    assert cut_at_char_boundary(b"ab\xff") == b"ab\xff"


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
