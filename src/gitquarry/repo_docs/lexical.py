"""Full-text (BM25) ranking over the exact blobs of one revision: an in-memory FTS5 table.

The table is filled from Git (one ``cat-file --batch`` stream) and lives only in memory: it is
never written to disk. Rows are chunks: ``path`` and ``body`` (the chunk's text, headings
included), both through the project's one tokenisation step (``retrieval.tokenize.index_text``:
camelCase parts, CJK one token per character, ``v``-versions), ranked with ``bm25`` weights
2 / 1. The table is built the same way from stored locators or from chunks computed on the
spot, so the ranking does not depend on whether a revision set exists. A long-lived process (the MCP
server) keeps built tables in a :class:`LexicalCache`, keyed by revision (git store, commit,
policy hash, chunk policy, overlay digest) and bounded by the bytes of text they hold (least
recently used first out). Query text reaches ``MATCH`` only through
``gitquarry.retrieval.fts`` (the project's one escaping function): every word AND-ed first,
then OR-ed to fill the list.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from gitquarry.retrieval.fts import fts5_match_expression
from gitquarry.retrieval.tokenize import FTS5_TOKENIZE, index_text

#: BM25 column weights: path, body
WEIGHTS = (2.0, 1.0)


@dataclass(frozen=True)
class Row:
    """One indexed chunk: its locator fields (no text)."""

    chunk_id: str
    path: str
    ordinal: int
    blob_oid: str
    authority: str
    content_class: str
    byte_start: int
    byte_end: int
    line_start: int
    line_end: int
    raw_slice_sha256: str
    heading_path: tuple[str, ...]
    #: line numbers of the heading path's titles (re-read from the blob for display)
    heading_lines: tuple[int, ...] = ()


class LexicalIndex:
    """An in-memory FTS5 table over one revision's chunks. Thread-safe (one query at a time).

    ``nbytes`` is the UTF-8 size of the text it holds (what the cache bound counts).
    """

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        self.conn.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5(path, body, tokenize='{FTS5_TOKENIZE}')"
        )
        self.rows: list[Row] = []
        self.nbytes = 0
        self._lock = threading.Lock()

    def add(self, items: Iterable[tuple[Row, str]]) -> None:
        """Add ``(row, chunk text)`` pairs."""
        batch: list[tuple[int, str, str]] = []
        for row, text in items:
            self.rows.append(row)
            indexed = index_text(text)
            self.nbytes += len(indexed.encode("utf-8", "replace")) + len(row.path)
            batch.append((len(self.rows), index_text(row.path), indexed))
            if len(batch) >= 500:
                self._insert(batch)
        self._insert(batch)

    def _insert(self, batch: list[tuple[int, str, str]]) -> None:
        if batch:
            with self._lock:
                self.conn.executemany(
                    "INSERT INTO docs (rowid, path, body) VALUES (?, ?, ?)", batch
                )
            batch.clear()

    def search(self, query: str, limit: int) -> list[tuple[Row, float]]:
        """Best ``limit`` chunks for ``query``: (row, BM25 score), best first; the score is
        ``-bm25()`` (higher is better). Chunks holding every word come first, then chunks
        holding some. [] when the query has no searchable word."""
        out: list[tuple[Row, float]] = []
        seen: set[int] = set()
        for operator in ("AND", "OR"):
            expression = fts5_match_expression(query, operator)  # type: ignore[arg-type]
            if not expression or len(out) >= limit:
                break
            with self._lock:
                rows = self.conn.execute(
                    f"SELECT rowid, bm25(docs, {WEIGHTS[0]}, {WEIGHTS[1]}) AS s "
                    "FROM docs WHERE docs MATCH ? ORDER BY s, rowid LIMIT ?",
                    (expression, limit),
                ).fetchall()
            for rowid, score in rows:
                if rowid in seen:
                    continue
                seen.add(rowid)
                out.append((self.rows[rowid - 1], -float(score)))
                if len(out) >= limit:
                    break
        return out

    def close(self) -> None:
        self.conn.close()


class LexicalCache:
    """Built indexes by key, least recently used evicted first once their text exceeds
    ``max_bytes``. An index larger than the bound on its own is used once and dropped."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, LexicalIndex] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return sum(i.nbytes for i in self._items.values())

    def get(self, key: Hashable) -> LexicalIndex | None:
        with self._lock:
            index = self._items.get(key)
            if index is not None:
                self._items.move_to_end(key)
            return index

    def put(self, key: Hashable, index: LexicalIndex) -> None:
        with self._lock:
            if index.nbytes > self.max_bytes:
                return
            self._items[key] = index
            self._items.move_to_end(key)
            while self.nbytes > self.max_bytes and len(self._items) > 1:
                # not closed here: a query on another thread may still be using it; the
                # connection closes when the last reference goes
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
