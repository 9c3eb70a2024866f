"""The cursor pin store (``history/answers/cursor.py``) under load: a pin another process is
writing beside never reads as an expired cursor.

Real SQLite files; the "other process" is a second connection holding SQLite's locks, as a
process pinning a ranking holds them while the machine is too busy to let it commit.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from gitquarry.errors import CursorExpiredError, IndexBusyError
from gitquarry.history.answers import cursor as cursor_module
from gitquarry.history.answers.cursor import CursorStore, PinnedHit, make_cursor


def _hits(n: int) -> list[PinnedHit]:
    return [PinnedHit(hash=f"{i:040x}", score=1.0 / (i + 1)) for i in range(n)]


def test_a_pin_is_read_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    """Before: ``cursors.db`` used SQLite's rollback journal, so a writer's exclusive lock (a
    pinning process descheduled mid-commit on a loaded machine) blocked every reader for the
    5 s timeout, and the read's ``database is locked`` was swallowed into "no such ranking is
    kept any more" (``CursorExpiredError``): a valid cursor expired under load. Now the file
    is in WAL mode: readers are not blocked by a writer."""
    store = CursorStore(tmp_path)
    try:
        assert store.persistent, store.problem
        pin_id = store.pin(_hits(6), "params", {"query": "q"})
        writer = sqlite3.connect(tmp_path / "cursors.db", isolation_level=None, timeout=1)
        try:
            writer.execute("BEGIN EXCLUSIVE")
            writer.execute("INSERT INTO pins VALUES ('x', 0, 'p', '{}', '[]')")
            started = time.monotonic()
            pin, offset = store.get(make_cursor(pin_id, 2), "params")
            waited = time.monotonic() - started
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        assert offset == 2 and [h.hash for h in pin.hits] == [h.hash for h in _hits(6)]
        assert waited < 2.0  # not blocked until a timeout
    finally:
        store.close()
    # another store (another process's) reads the same pin
    again = CursorStore(tmp_path)
    try:
        assert again.get(make_cursor(pin_id, 0), "params")[1] == 0
    finally:
        again.close()


def test_a_store_opened_while_the_file_is_locked_is_busy_not_expired(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that opens the store while another one holds ``cursors.db`` locked past the
    busy timeout (even WAL readers are locked out by ``locking_mode=EXCLUSIVE``). Before: the
    store fell back to memory for the rest of the process and the cursor read as expired
    ("no such ranking is kept any more") although the pin is in the file. Now the read is
    ``IndexBusyError`` ("try again shortly") and, once the lock is gone, the same store
    reads the pin and pins to the file again."""
    monkeypatch.setattr(cursor_module, "BUSY_TIMEOUT_MS", 200)
    first = CursorStore(tmp_path)
    pin_id = first.pin(_hits(3), "params", {})
    first.close()
    hog = sqlite3.connect(tmp_path / "cursors.db", isolation_level=None, timeout=1)
    store: CursorStore | None = None
    try:
        hog.execute("PRAGMA locking_mode = EXCLUSIVE")
        hog.execute("BEGIN EXCLUSIVE")
        hog.execute("INSERT INTO pins VALUES ('y', 0, 'p', '{}', '[]')")
        hog.execute("COMMIT")  # the exclusive lock stays (locking_mode)
        store = CursorStore(tmp_path)
        with pytest.raises(IndexBusyError) as raised:
            store.get(make_cursor(pin_id, 0), "params")
        assert not isinstance(raised.value, CursorExpiredError)
        assert "try again" in str(raised.value)
        hog.close()
        assert store.get(make_cursor(pin_id, 1), "params")[1] == 1  # lock gone: readable
        assert store.persistent
        later = store.pin(_hits(2), "params", {})
    finally:
        hog.close()
        if store is not None:
            store.close()
    other = CursorStore(tmp_path)  # the later pin went to the file, not to memory
    try:
        assert other.get(make_cursor(later, 0), "params")[0].hits[0].hash == _hits(1)[0].hash
    finally:
        other.close()


def test_an_unknown_cursor_still_expires(tmp_path: Path) -> None:
    store = CursorStore(tmp_path)
    try:
        store.pin(_hits(2), "params", {})
        with pytest.raises(CursorExpiredError):
            store.get("AAAAAAAAAAAAAAAA.1", "params")
    finally:
        store.close()
