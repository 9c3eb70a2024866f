"""Compressed text columns: ``git_commits.delta_truncated`` holds zlib-compressed UTF-8.

Stored diffs were 73 % of an index (issue 8 §4); zlib brings a diff to ~37 % of its size
(measured on git.git and flask) for ~60 µs of CPU per commit when indexing and ~15 µs to read
one back. A column holds either text (rows written before compression, and the empty diff)
or a BLOB (compressed); readers go through ``inflate_text`` — in SQL ``gq_inflate(column)``,
which ``open_store`` registers on every connection — and never see the difference.
"""

from __future__ import annotations

import sqlite3
import threading
import zlib
from pathlib import Path

from gitquarry.errors import IndexCorruptError

#: zlib level: 6 is within 1 % of 9 on diffs and as fast as 1 here.
COMPRESS_LEVEL = 6


def compress_text(text: str | None) -> bytes | str:
    """``text`` as zlib-compressed UTF-8; ``""`` stays ``""`` (nothing to gain)."""
    if not text:
        return ""
    return zlib.compress(text.encode("utf-8", "surrogatepass"), COMPRESS_LEVEL)


def inflate_text(value: str | bytes | None) -> str:
    """The text of a column written by ``compress_text`` (or plain text, returned as is;
    None gives ``""``).

    :raises IndexCorruptError: the BLOB is not a zlib stream of UTF-8 (the file was
        damaged); it names the index most recently opened in this context.
    """
    if value is None:
        return ""
    if isinstance(value, bytes):
        try:
            return zlib.decompress(value).decode("utf-8", "surrogatepass")
        except (zlib.error, UnicodeDecodeError) as exc:
            raise _damaged(exc) from exc
    return value


def _damaged(exc: Exception) -> IndexCorruptError:
    from gitquarry.store.current import current_index_path

    return IndexCorruptError(current_index_path() or Path("index.db"),
                             f"a stored diff cannot be decompressed: {exc}")


#: The damage ``gq_inflate`` met last in this thread: SQLite reports an exception raised in a
#: SQL function only as "user-defined function raised exception", so the storage-error
#: translation takes the typed error from here (``take_sql_damage``).
_sql_damage = threading.local()


def _sql_inflate(value: str | bytes | None) -> str:
    try:
        return inflate_text(value)
    except IndexCorruptError as exc:
        _sql_damage.error = exc
        raise


def take_sql_damage() -> IndexCorruptError | None:
    """The ``IndexCorruptError`` the last failed ``gq_inflate`` call in this thread raised
    (cleared), or None."""
    error: IndexCorruptError | None = getattr(_sql_damage, "error", None)
    _sql_damage.error = None
    return error


def register_functions(conn: sqlite3.Connection) -> None:
    """Add ``gq_inflate(value) -> text`` and ``gq_deflate(text) -> blob`` to ``conn``.
    A damaged BLOB makes the statement fail; ``take_sql_damage`` then holds the typed error."""
    conn.create_function("gq_inflate", 1, _sql_inflate, deterministic=True)
    conn.create_function("gq_deflate", 1, compress_text, deterministic=True)
