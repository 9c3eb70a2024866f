"""``cursors.db`` prunes pins by age and count on its ``created_at`` index (a pin scanned
and sorted every kept pin before: 8.4 ms CPU per MCP call with 1,249 pins): the same pins are
kept (the newest ``MAX_PINS``, none older than ``CURSOR_TTL_S``), a file made before the
index gets it, and a read-only file still answers cursors."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from gitquarry.errors import CursorExpiredError
from gitquarry.history.answers import cursor
from gitquarry.history.answers.cursor import CursorStore, PinnedHit, make_cursor


def _hits(n: int = 3) -> list[PinnedHit]:
    return [PinnedHit(hash=f"{i:040x}", score=1.0 - i / 10) for i in range(n)]


def _kept(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT id FROM pins")}


def test_the_newest_max_pins_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cursor, "MAX_PINS", 5)
    store = CursorStore(tmp_path)
    ids = [store.pin(_hits(), "p", {}) for _ in range(9)]
    assert _kept(store.path) == set(ids[-5:])  # what the NOT IN (… LIMIT 5) form kept
    for pin_id in ids[:4]:
        with pytest.raises(CursorExpiredError):
            store.get(make_cursor(pin_id, 0), "p")
    for pin_id in ids[4:]:
        pin, offset = store.get(make_cursor(pin_id, 1), "p")
        assert offset == 1 and [h.hash for h in pin.hits] == [h.hash for h in _hits()]
    store.close()


def test_pins_older_than_the_ttl_are_pruned(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    store = CursorStore(tmp_path)
    old = store.pin(_hits(), "p", {})
    later = time.time() + cursor.CURSOR_TTL_S + 5
    monkeypatch.setattr(cursor.time, "time", lambda: later)
    new = store.pin(_hits(), "p", {})
    assert _kept(store.path) == {new} and old != new
    store.close()


def test_pruning_uses_the_index_and_an_old_file_gets_it(tmp_path: Path) -> None:
    path = tmp_path / cursor.FILE_NAME
    with sqlite3.connect(path) as conn:  # a file from before the index
        conn.execute("CREATE TABLE pins (id TEXT PRIMARY KEY, created_at REAL NOT NULL, "
                     "params TEXT NOT NULL, meta TEXT NOT NULL, hits TEXT NOT NULL)")
        conn.execute("INSERT INTO pins VALUES ('aaaaaaaaaaaaaaaa', ?, 'p', '{}', '[]')",
                     (time.time(),))
    store = CursorStore(tmp_path)
    assert store.persistent
    assert store._conn is not None
    plan = [str(r[-1]) for r in store._conn.execute(
        "EXPLAIN QUERY PLAN DELETE FROM pins WHERE created_at < (SELECT created_at FROM pins "
        "ORDER BY created_at DESC LIMIT 1 OFFSET 1999)")]
    reads = [step for step in plan if step.startswith(("SCAN", "SEARCH"))]
    assert reads and all("INDEX pins_created_at" in step for step in reads), plan
    assert "aaaaaaaaaaaaaaaa" in _kept(path)
    store.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_a_read_only_file_without_the_index_still_answers(tmp_path: Path) -> None:
    writer = CursorStore(tmp_path)
    pin_id = writer.pin(_hits(), "p", {})
    writer._conn.execute("DROP INDEX pins_created_at")  # type: ignore[union-attr]
    writer._conn.commit()  # type: ignore[union-attr]
    writer.close()
    os.chmod(tmp_path / cursor.FILE_NAME, 0o444)
    os.chmod(tmp_path, 0o555)
    try:
        reader = CursorStore(tmp_path)
        pin, _ = reader.get(make_cursor(pin_id, 0), "p")
        assert len(pin.hits) == 3
        reader.close()
    finally:
        os.chmod(tmp_path, 0o755)
