"""Vector-only checkpoints: replayed without a provider call; corrupt ones are a cache miss."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gitquarry.repo_docs.indexer import read_checkpoint, write_checkpoint


def rows(n: int) -> list[tuple[str, str, np.ndarray]]:
    rng = np.random.default_rng(1)
    return [(f"{i:064x}", f"{i + 100:064x}", rng.standard_normal(8).astype(np.float32))
            for i in range(n)]


def test_round_trip_and_no_text(tmp_path: Path) -> None:
    data = rows(3)
    write_checkpoint(tmp_path, "set1", "ns|m|8|repo-docs-v1", data[:2])
    write_checkpoint(tmp_path, "set1", "ns|m|8|repo-docs-v1", data[2:])
    back = read_checkpoint(tmp_path, "set1", "ns|m|8|repo-docs-v1")
    assert [(c, s) for c, s, _v in back] == [(c, s) for c, s, _v in data]
    assert all(np.array_equal(a[2], b[2]) for a, b in zip(back, data, strict=True))
    assert read_checkpoint(tmp_path, "set1", "other-namespace") == []
    assert read_checkpoint(tmp_path, "missing", "ns|m|8|repo-docs-v1") == []


def test_torn_or_corrupt_tail_is_dropped(tmp_path: Path) -> None:
    write_checkpoint(tmp_path, "s", "ns", rows(3))
    path = tmp_path / "checkpoints" / "s.vec"
    raw = bytearray(path.read_bytes())
    raw[-5] ^= 0xFF  # corrupt the last record
    path.write_bytes(bytes(raw))
    assert len(read_checkpoint(tmp_path, "s", "ns")) == 2
    path.write_bytes(b"garbage")
    assert read_checkpoint(tmp_path, "s", "ns") == []
