"""Full-text (BM25) ranking over the exact blobs of one revision: in-memory FTS5 tables.

The tables are filled from Git (one ``cat-file --batch`` stream) and live only in memory:
they are never written to disk. ``docs`` has one row per chunk, ``sections`` one row per
heading section (the text of its chunks together); both have the columns ``path``,
``title`` (the document's first heading), ``heading`` (the chunk's heading path without the
title) and ``body`` (the text, headings included), all through the project's one
tokenisation step (``retrieval.tokenize.index_text``: camelCase parts, CJK one token per
character, ``v``-versions), ranked with ``bm25`` column weights ``WEIGHTS``. A query ranks
chunks and sections, and the two rankings are fused (a section stands for its best chunk,
which is what is cited): a long page's intro chunk no longer outranks the subsection whose
heading and text answer, and a short section is scored as the section it is. The tables are
built the same way from stored locators or from chunks computed on the spot, so the ranking
does not depend on whether a revision set exists. A long-lived process (the MCP server) keeps
built tables in a :class:`LexicalCache`, keyed by revision (git store, commit, policy hash,
chunk policy, overlay digest) and bounded by the bytes of text they hold (least recently used
first out). Query text reaches ``MATCH`` only through ``gitquarry.retrieval.fts`` (the
project's one escaping function): every word, OR-ed (measured on the click and flask docs
sets, an AND pass first ranked worse: benchmarks/results/docs-quality-*.json).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from gitquarry.retrieval.fts import fts5_match_expression
from gitquarry.retrieval.tokenize import FTS5_TOKENIZE, index_text

#: BM25 column weights of both tables: path, document title, heading path, body. Title 4
#: (was 2): measured on the click and flask dev sets, full-text and hybrid, it gained on both
#: and lost no question (docs/performance.md, "Docs relevance levers (2026-12-02,
#: s3-docs-quality)")
WEIGHTS = (1.0, 4.0, 3.0, 1.0)
#: RRF constant fusing the chunk ranking with the section ranking
SECTION_RRF_K = 10
#: chunks read from the chunk ranking before fusion (at least the caller's limit)
CHUNK_CANDIDATES = 400
_COLUMNS = "path, title, heading, body"


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


def section_key(row: Row) -> tuple[str, str, tuple[str, ...]]:
    """The section a chunk belongs to: (authority, path, heading path). The chunks of one
    section are consecutive in their document (a section over the size bound is cut into
    several chunks; a tiny section merged into the next is cited, and keyed, as its own)."""
    return (row.authority, row.path, row.heading_path)


class LexicalIndex:
    """Two in-memory FTS5 tables over one revision's chunks: ``docs`` (one row per chunk) and
    ``sections`` (one row per heading section: its chunks' text together). Thread-safe (one
    query at a time).

    ``nbytes`` is the UTF-8 size of the text it holds (what the cache bound counts): each
    chunk's text is held twice, once in each table.
    """

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        for table in ("docs", "sections"):
            self.conn.execute(
                f"CREATE VIRTUAL TABLE {table} USING fts5({_COLUMNS}, "
                f"tokenize='{FTS5_TOKENIZE}')"
            )
        self.rows: list[Row] = []
        #: per section (``sections`` rowid - 1): the indexes into ``rows`` of its chunks
        self.sections: list[list[int]] = []
        #: per chunk id: the ``sections`` rowids of the sections holding it
        self.chunk_sections: dict[str, list[int]] = {}
        self.nbytes = 0
        self._lock = threading.Lock()
        self._by_chunk: tuple[int, dict[str, Row]] = (0, {})

    @property
    def rows_by_chunk(self) -> dict[str, Row]:
        """Each chunk id's first row (``rows`` order). Built once per index state (rows are
        only ever appended: rebuilt when their count changed); shared, never mutate it."""
        built, by_chunk = self._by_chunk
        if built != len(self.rows):
            by_chunk = {}
            for row in self.rows:
                by_chunk.setdefault(row.chunk_id, row)
            built = len(self.rows)
            self._by_chunk = (built, by_chunk)
        return by_chunk

    def add(self, items: Iterable[tuple[Row, str]]) -> None:
        """Add ``(row, chunk text)`` pairs: each document's chunks together and in document
        order, ``row.heading_path`` filled (the title and heading fields come from it)."""
        pending: list[tuple[Row, str]] = []
        for row, text in items:
            if pending and (pending[-1][0].authority, pending[-1][0].path) != (
                    row.authority, row.path):
                self._add_document(pending)
                pending = []
            pending.append((row, text))
        if pending:
            self._add_document(pending)

    def _add_document(self, items: list[tuple[Row, str]]) -> None:
        """One document's chunks: the title is its first heading (empty when it has none);
        a chunk's heading field is its heading path without that title."""
        title = next((r.heading_path[0] for r, _t in items if r.heading_path), "")
        indexed_title = index_text(title)
        indexed_path = index_text(items[0][0].path)

        headings: dict[tuple[str, ...], str] = {}  # a section's chunks share their path

        def heading(path: tuple[str, ...]) -> str:
            indexed = headings.get(path)
            if indexed is None:
                indexed = headings[path] = index_text(
                    " ".join(path[1:] if path[:1] == (title,) else path))
            return indexed

        chunks: list[tuple[int, str, str, str, str]] = []
        groups: list[tuple[Row, list[int], list[str]]] = []
        for row, text in items:
            self.rows.append(row)
            n = len(self.rows) - 1
            indexed = index_text(text)
            self.nbytes += 2 * len(indexed.encode("utf-8", "replace")) + len(row.path)
            chunks.append((n + 1, indexed_path, indexed_title, heading(row.heading_path),
                           indexed))
            if groups and section_key(groups[-1][0]) == section_key(row):
                groups[-1][1].append(n)
                groups[-1][2].append(indexed)
            else:
                groups.append((row, [n], [indexed]))
        sections: list[tuple[int, str, str, str, str]] = []
        for first, members, texts in groups:
            self.sections.append(members)
            for i in members:
                self.chunk_sections.setdefault(self.rows[i].chunk_id, []).append(
                    len(self.sections))
            sections.append((len(self.sections), indexed_path, indexed_title,
                             heading(first.heading_path), "\n".join(texts)))
        with self._lock:
            self.conn.executemany(
                f"INSERT INTO docs (rowid, {_COLUMNS}) VALUES (?, ?, ?, ?, ?)", chunks)
            self.conn.executemany(
                f"INSERT INTO sections (rowid, {_COLUMNS}) VALUES (?, ?, ?, ?, ?)", sections)

    def _ranked(self, table: str, expression: str, limit: int,
                rowids: list[int] | None = None) -> list[tuple[int, float]]:
        """(0-based row index, -bm25) of the best ``limit`` rows of ``table`` matching
        ``expression`` (only ``rowids`` when given), best first, ties in document order."""
        weights = ", ".join(str(w) for w in WEIGHTS)
        where = f" AND rowid IN ({', '.join('?' * len(rowids))})" if rowids else ""
        with self._lock:
            rows = self.conn.execute(
                f"SELECT rowid, bm25({table}, {weights}) AS s FROM {table} "
                f"WHERE {table} MATCH ?{where} ORDER BY s, rowid LIMIT ?",
                (expression, *(rowids or ()), limit),
            ).fetchall()
        return [(rowid - 1, -float(score)) for rowid, score in rows]

    def search(self, query: str, limit: int) -> list[tuple[Row, float]]:
        """Best ``limit`` chunks for ``query``: (row, the chunk's ``-bm25()``: higher is
        better), best first. [] when the query has no searchable word.

        Two BM25 rankings of the query's words (OR-ed: BM25 favours rows holding more of
        them), each over the fields path, title, heading path and body (``WEIGHTS``): one of
        chunks, one of whole sections, where a section stands for its best-scoring chunk.
        The two are fused with reciprocal rank fusion (``SECTION_RRF_K``); ties go to the
        earlier chunk. A section is one candidate at a time: its best chunk, cited."""
        expression = fts5_match_expression(query, "OR")
        if not expression:
            return []
        chunk_list = self._ranked("docs", expression, max(limit, CHUNK_CANDIDATES))
        chunk_score = dict(chunk_list)
        section_list = self._ranked("sections", expression, limit)
        unscored = [i + 1 for sid, _s in section_list for i in self.sections[sid]
                    if i not in chunk_score]
        for start in range(0, len(unscored), 500):
            batch = unscored[start : start + 500]
            chunk_score.update(self._ranked("docs", expression, len(batch), batch))
        fused: dict[int, float] = {}
        for r, (i, _s) in enumerate(chunk_list[:limit]):
            fused[i] = fused.get(i, 0.0) + 1.0 / (SECTION_RRF_K + r + 1)
        for r, (sid, _s) in enumerate(section_list):
            members = self.sections[sid]
            i = max(members, key=lambda m: (chunk_score.get(m, float("-inf")), -m))
            fused[i] = fused.get(i, 0.0) + 1.0 / (SECTION_RRF_K + r + 1)
        ordered = sorted(fused.items(), key=lambda t: (-t[1], t[0]))[:limit]
        return [(self.rows[i], chunk_score.get(i, 0.0)) for i, _f in ordered]

    def holding_every_word(self, query: str, chunk_ids: Iterable[str]) -> set[str]:
        """The ids among ``chunk_ids`` whose heading section holds every word of ``query``
        (the AND of ``fts5_match_expression``'s words over the section's path, title,
        heading path and text: the ``sections`` table). Empty when the query has no
        searchable word; ids not in this index are ignored."""
        expression = fts5_match_expression(query, "AND")
        wanted = set(chunk_ids)
        if not expression or not wanted:
            return set()
        section_of: dict[int, list[str]] = {}
        for chunk in wanted:
            for sid in self.chunk_sections.get(chunk, ()):
                section_of.setdefault(sid, []).append(chunk)
        if not section_of:
            return set()
        out: set[str] = set()
        rowids = list(section_of)
        for start in range(0, len(rowids), 500):
            batch = rowids[start : start + 500]
            for sid, _s in self._ranked("sections", expression, len(batch), batch):
                out.update(section_of[sid + 1])
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
