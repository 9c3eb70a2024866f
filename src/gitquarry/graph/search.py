"""Search over graph nodes: FTS5 ranked search, the LIKE fallback, and index population.

User text reaches ``MATCH`` only through ``gitquarry.retrieval.fts.fts5_match_expression``
(each word quoted, ``"`` doubled, words without letters or digits dropped; words are ANDed).
The SQL is built by pure functions (``fts5_sql``, ``like_sql``) so it can be tested verbatim.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from gitquarry.errors import InvalidArgumentError
from gitquarry.graph.models import MAX_LIMIT, MIN_LIMIT, SearchEngine, SearchResult
from gitquarry.retrieval.fts import fts5_match_expression

#: snippet/highlight markers used inside SQL; replaced by <b>/</b> afterwards, so a literal
#: "<b>" in a doc is never mistaken for a match.
_OPEN, _CLOSE = "\x02", "\x03"
SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS, SNIPPET_TOKENS = "<b>", "</b>", "...", 32
LIKE_ESCAPE = "\\"


def check_limit(limit: int) -> int:
    """Return ``limit`` when it is an int in 1..100.

    :raises InvalidArgumentError: otherwise (argument ``limit``).
    """
    if (
        isinstance(limit, bool)
        or not isinstance(limit, int)
        or not (MIN_LIMIT <= limit <= MAX_LIMIT)
    ):
        raise InvalidArgumentError(
            "limit", f"must be an integer from {MIN_LIMIT} to {MAX_LIMIT}, got {limit!r}"
        )
    return limit


def has_fts5(conn: sqlite3.Connection) -> bool:
    """True when the ``search_index`` FTS5 table exists, is readable and holds a row.

    False when it is missing (SQLite without FTS5), unreadable, or empty. Never raises.
    """
    try:
        row = conn.execute("SELECT 1 FROM search_index LIMIT 1").fetchone()
    except sqlite3.OperationalError:
        return False
    return row is not None


def populate_search_index(conn: sqlite3.Connection) -> int:
    """Rebuild ``search_index`` from scratch: one row per node, ``content`` the node's doc
    chunks (docs in the node's ``docs:`` order, chunks in document order) joined by "\\n",
    "" for a node without docs. Returns the number of rows inserted (= number of nodes).

    Runs in the caller's transaction if one is open, else in its own.
    :raises sqlite3.OperationalError: ``search_index`` does not exist (SQLite without FTS5).
    """
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("DELETE FROM search_index")
        content: dict[str, list[str]] = defaultdict(list)
        for ref_id, text in conn.execute(
            "SELECT l.ref_id, c.content FROM doc_links l JOIN chunks c ON c.doc_id = l.doc_id "
            "ORDER BY l.ref_id, l.position, c.ordinal"
        ):
            content[ref_id].append(text)
        rows = [
            (ref_id, kind, _clean(summary), _clean("\n".join(content.get(ref_id, ()))))
            for ref_id, kind, summary in conn.execute(
                "SELECT ref_id, kind, summary FROM nodes ORDER BY ref_id"
            )
        ]
        conn.executemany(
            "INSERT INTO search_index (ref_id, kind, summary, content) VALUES (?, ?, ?, ?)", rows
        )
    except BaseException:
        if own:
            conn.execute("ROLLBACK")
        raise
    if own:
        conn.execute("COMMIT")
    return len(rows)


def _clean(text: str) -> str:
    return text.replace(_OPEN, "").replace(_CLOSE, "")


def fts5_sql(*, with_kind: bool) -> str:
    """The FTS5 search statement. Parameters: match expression, [kind], limit.

    Columns: ref_id, kind, summary, snippet (content, internal markers), summary_hl (summary
    with internal markers), rank. Ordered by BM25 rank, ties by ref_id.
    """
    kind_clause = " AND kind = ?" if with_kind else ""
    return (
        "SELECT ref_id, kind, summary,"
        f" snippet(search_index, 3, char(2), char(3), '{SNIPPET_ELLIPSIS}', {SNIPPET_TOKENS})"
        " AS snippet,"
        " highlight(search_index, 2, char(2), char(3)) AS summary_hl,"
        " rank"
        " FROM search_index"
        f" WHERE search_index MATCH ?{kind_clause}"
        " ORDER BY rank, ref_id"
        " LIMIT ?"
    )


def _markup(text: str) -> str:
    return text.replace(_OPEN, SNIPPET_OPEN).replace(_CLOSE, SNIPPET_CLOSE)


def search_fts5(
    conn: sqlite3.Connection, query: str, *, kind: str | None = None, limit: int = 10
) -> list[SearchResult]:
    """FTS5 search of ``search_index``: at most ``limit`` nodes, best (lowest BM25) first.

    Every word of ``query`` must match (in ref_id, summary or content; ``kind`` is not
    searched). ``kind`` filters by exact kind; an unknown kind gives []. An empty query, or one
    with no letters or digits, gives [] without running SQL. The snippet comes from the doc
    content; when the match is only in the summary or ref_id it is the summary with matches
    highlighted (see ``SearchResult``). Whitespace runs in snippets (newlines included)
    become single spaces, so a snippet is one line.

    :raises InvalidArgumentError: ``limit`` outside 1..100.
    :raises sqlite3.OperationalError: ``search_index`` is missing (check ``has_fts5`` first).
    """
    check_limit(limit)
    expression = fts5_match_expression(query)
    if not expression:
        return []
    params: list[object] = [expression]
    if kind is not None:
        params.append(kind)
    params.append(limit)
    results: list[SearchResult] = []
    for ref_id, node_kind, summary, snippet, summary_hl, rank in conn.execute(
        fts5_sql(with_kind=kind is not None), params
    ):
        if _OPEN in (snippet or ""):
            text = _markup(snippet)
        elif _OPEN in (summary_hl or ""):
            text = _markup(summary_hl)
        else:
            text = summary
        results.append(
            SearchResult(
                ref_id=ref_id,
                kind=node_kind,
                summary=summary,
                snippet=" ".join(text.split()),
                rank=float(rank),
            )
        )
    return results


def escape_like(word: str) -> str:
    """``word`` with ``\\``, ``%`` and ``_`` escaped for ``LIKE … ESCAPE '\\'``."""
    return (
        word.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2)
        .replace("%", LIKE_ESCAPE + "%")
        .replace("_", LIKE_ESCAPE + "_")
    )


def like_sql(*, words: int, with_kind: bool) -> str:
    """The LIKE fallback statement for ``words`` query words (each ANDed).

    Parameters: [kind], then per word its pattern three times (ref_id, summary, chunk
    content), then limit. A word matches a node when it occurs, case-insensitively for
    ASCII, in the ref_id, the summary, or any chunk of a doc the node links. Ordered by
    ref_id.
    """
    esc = f"ESCAPE '{LIKE_ESCAPE}'"
    word_clause = (
        f"(n.ref_id LIKE ? {esc} OR n.summary LIKE ? {esc} OR EXISTS ("
        "SELECT 1 FROM doc_links l JOIN chunks c ON c.doc_id = l.doc_id"
        f" WHERE l.ref_id = n.ref_id AND c.content LIKE ? {esc}))"
    )
    clauses = (["n.kind = ?"] if with_kind else []) + [word_clause] * words
    return (
        "SELECT n.ref_id, n.kind, n.summary FROM nodes n"
        f" WHERE {' AND '.join(clauses)}"
        " ORDER BY n.ref_id"
        " LIMIT ?"
    )


def search_like(
    conn: sqlite3.Connection, query: str, *, kind: str | None = None, limit: int = 10
) -> list[SearchResult]:
    """The fallback when FTS5 is missing or its index is empty: SQL LIKE over nodes' ref_id,
    summary and linked chunk content (see ``like_sql``). ``%``, ``_`` and ``\\`` in the query
    are literal. Results have no snippet or rank. Empty query gives [] without running SQL.

    :raises InvalidArgumentError: ``limit`` outside 1..100.
    """
    check_limit(limit)
    words = query.split()
    if not words:
        return []
    params: list[object] = [kind] if kind is not None else []
    for word in words:
        pattern = f"%{escape_like(word)}%"
        params.extend((pattern, pattern, pattern))
    params.append(limit)
    sql = like_sql(words=len(words), with_kind=kind is not None)
    return [
        SearchResult(ref_id=ref_id, kind=node_kind, summary=summary)
        for ref_id, node_kind, summary in conn.execute(sql, params)
    ]


def search_nodes(
    conn: sqlite3.Connection, query: str, *, kind: str | None = None, limit: int = 10
) -> tuple[list[SearchResult], SearchEngine]:
    """FTS5 search when ``has_fts5`` says the index is usable, else the LIKE fallback.

    Returns ``(results, engine)``. :raises InvalidArgumentError: ``limit`` outside 1..100.
    """
    check_limit(limit)
    if has_fts5(conn):
        return search_fts5(conn, query, kind=kind, limit=limit), "fts5"
    return search_like(conn, query, kind=kind, limit=limit), "like"
