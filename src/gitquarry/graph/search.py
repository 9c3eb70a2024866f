"""Search over graph nodes: FTS5 ranked search, the LIKE fallback, and index population.

User text reaches ``MATCH`` only through ``gitquarry.retrieval.fts.fts5_match_expression``
(each word quoted, ``"`` doubled, words without letters or digits dropped; words are ANDed;
identifiers, CJK and versions also match their expansions, which the index holds through
``gitquarry.retrieval.tokenize.index_text``).
The SQL is built by pure functions (``fts5_sql``, ``like_sql``) so it can be tested verbatim.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from gitquarry.errors import InvalidArgumentError
from gitquarry.graph.models import MAX_LIMIT, MIN_LIMIT, SearchEngine, SearchResult
from gitquarry.retrieval.fts import MAX_QUERY_WORDS, fts5_match_expression
from gitquarry.retrieval.tokenize import index_text

#: snippet/highlight markers used inside SQL; replaced by <b>/</b> afterwards, so a literal
#: "<b>" in a doc is never mistaken for a match.
_OPEN, _CLOSE = "\x02", "\x03"
SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS, SNIPPET_TOKENS = "<b>", "</b>", "...", 32
#: most characters of text in a snippet (tags and ``...`` not counted): one FTS5 "token" can
#: be a 2,000-character run of letters, so 32 tokens alone do not bound its size.
SNIPPET_MAX_CHARS = 300
#: characters of context kept before the first match when a snippet is clipped.
_SNIPPET_LEAD = 60
LIKE_ESCAPE = "\\"
#: ``bm25`` column weights: ref_id, kind (not indexed), summary, content (linked docs)
BM25_WEIGHTS = (1.0, 0.0, 1.0, 1.0)


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
    ``search_docs`` holds the text; ``search_index`` indexes ``index_text`` of it.

    Runs in the caller's transaction if one is open, else in its own.
    :raises sqlite3.OperationalError: ``search_index`` does not exist (SQLite without FTS5).
    """
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN IMMEDIATE")
    try:
        clear_search_index(conn)
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
            "INSERT INTO search_docs (id, ref_id, kind, summary, content) VALUES (?, ?, ?, ?, ?)",
            [(n, *row) for n, row in enumerate(rows, start=1)],
        )
        conn.executemany(
            "INSERT INTO search_index (rowid, ref_id, kind, summary, content) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (n, index_text(ref_id), kind, index_text(summary), index_text(text))
                for n, (ref_id, kind, summary, text) in enumerate(rows, start=1)
            ],
        )
    except BaseException:
        if own:
            conn.execute("ROLLBACK")
        raise
    if own:
        conn.execute("COMMIT")
    return len(rows)


def clear_search_index(conn: sqlite3.Connection) -> None:
    """Empty ``search_index`` and its content table ``search_docs`` (FTS5 ``delete-all``: the
    indexed text differs from the stored text, so rows cannot be deleted one by one)."""
    conn.execute("INSERT INTO search_index (search_index) VALUES ('delete-all')")
    conn.execute("DELETE FROM search_docs")


def _clean(text: str) -> str:
    return text.replace(_OPEN, "").replace(_CLOSE, "")


def fts5_sql(*, with_kind: bool) -> str:
    """The FTS5 search statement. Parameters: the match expression restricted to ``ref_id``,
    the one restricted to ``ref_id`` and ``summary``, the match expression, [kind], limit.

    Columns: ref_id, kind, summary, snippet (content, internal markers), summary_hl (summary
    with internal markers), score (``bm25`` with ``BM25_WEIGHTS``), tier (0: every query word
    is in the node's id; 1: every word is in its id or summary; 2: the words need the node's
    docs). Ordered by tier, then BM25, ties by ref_id: a node whose id or summary names the
    query ranks above nodes whose linked documents only mention it.
    """
    kind_clause = " AND kind = ?" if with_kind else ""
    weights = ", ".join(f"{w:g}" for w in BM25_WEIGHTS)
    return (
        "SELECT ref_id, kind, summary,"
        f" snippet(search_index, 3, char(2), char(3), '{SNIPPET_ELLIPSIS}', {SNIPPET_TOKENS})"
        " AS snippet,"
        " highlight(search_index, 2, char(2), char(3)) AS summary_hl,"
        f" bm25(search_index, {weights}) AS score,"
        " CASE WHEN rowid IN (SELECT rowid FROM search_index WHERE search_index MATCH ?)"
        " THEN 0 WHEN rowid IN (SELECT rowid FROM search_index WHERE search_index MATCH ?)"
        " THEN 1 ELSE 2 END AS tier"
        " FROM search_index"
        f" WHERE search_index MATCH ?{kind_clause}"
        " ORDER BY tier, score, ref_id"
        " LIMIT ?"
    )


def _markup(text: str) -> str:
    return text.replace(_OPEN, SNIPPET_OPEN).replace(_CLOSE, SNIPPET_CLOSE)


def clip_snippet(text: str, max_chars: int = SNIPPET_MAX_CHARS) -> str:
    """``text`` (one line, matches marked with the internal markers) cut to at most
    ``max_chars`` characters of text around the first match, with ``<b>``/``</b>`` tags.

    A clipped snippet starts up to ``_SNIPPET_LEAD`` characters before the first match (at a
    word start when there is one), is marked ``...`` where text was cut off at either end, and
    keeps its tags balanced (a match cut off at the end is closed). Without a match it is the
    start of ``text``.
    """
    if len(text) - text.count(_OPEN) - text.count(_CLOSE) <= max_chars:
        return _markup(text)
    first = text.find(_OPEN)
    start = 0
    if first > _SNIPPET_LEAD:
        start = first - _SNIPPET_LEAD
        space = text.find(" ", start, first)
        if space != -1:
            start = space + 1
    out: list[str] = []
    count, inside, i = 0, False, start
    while i < len(text) and count < max_chars:
        ch = text[i]
        if ch == _OPEN:
            inside = True
        elif ch == _CLOSE:
            inside = False
        else:
            count += 1
        out.append(ch)
        i += 1
    if i < len(text) and text[i] == _CLOSE:
        out.append(_CLOSE)
        inside = False
        i += 1
    kept = "".join(out)
    if inside:
        kept += _CLOSE
    elif i < len(text) and text[i] != " ":
        # cut at the last word boundary when it is near the end and after every match
        space = kept.rfind(" ")
        if space > kept.rfind(_CLOSE) and space >= len(kept) - 40:
            kept = kept[:space]
    prefix = SNIPPET_ELLIPSIS if start > 0 and not kept.startswith(SNIPPET_ELLIPSIS) else ""
    suffix = SNIPPET_ELLIPSIS if i < len(text) else ""
    return _markup(prefix + kept.strip() + suffix)


def search_fts5(
    conn: sqlite3.Connection, query: str, *, kind: str | None = None, limit: int = 10
) -> list[SearchResult]:
    """FTS5 search of ``search_index``: at most ``limit`` nodes, best first: nodes whose id
    holds every query word, then nodes whose id or summary does, then the rest, each group by
    BM25 (``fts5_sql``). ``rank`` is the node's BM25 score (lower is better), raised to the
    rank above it where a name match was placed ahead of a node that scores better, so ranks
    never decrease down the list.

    Every word of ``query`` must match (in ref_id, summary or content; ``kind`` is not
    searched). ``kind`` filters by exact kind; an unknown kind gives []. An empty query, or one
    with no letters or digits, gives [] without running SQL. The snippet comes from the doc
    content; when the match is only in the summary or ref_id it is the summary with matches
    highlighted (see ``SearchResult``). Whitespace runs in snippets (newlines included)
    become single spaces, so a snippet is one line, and a snippet holds at most
    ``SNIPPET_MAX_CHARS`` characters of text (``clip_snippet``).

    :raises InvalidArgumentError: ``limit`` outside 1..100.
    :raises sqlite3.OperationalError: ``search_index`` is missing (check ``has_fts5`` first).
    """
    check_limit(limit)
    expression = fts5_match_expression(query)
    if not expression:
        return []
    params: list[object] = [f"{{ref_id}} : ({expression})",
                            f"{{ref_id summary}} : ({expression})", expression]
    if kind is not None:
        params.append(kind)
    params.append(limit)
    results: list[SearchResult] = []
    floor = float("-inf")
    for ref_id, node_kind, summary, snippet, summary_hl, score, _tier in conn.execute(
        fts5_sql(with_kind=kind is not None), params
    ):
        # a node placed below a name match keeps a rank no better than the one above it
        rank = floor = max(float(score), floor)
        if _OPEN in (snippet or ""):
            text = snippet
        elif _OPEN in (summary_hl or ""):
            text = summary_hl
        else:
            text = summary
        results.append(
            SearchResult(
                ref_id=ref_id,
                kind=node_kind,
                summary=summary,
                snippet=clip_snippet(" ".join(text.split())),
                rank=rank,
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


def like_words(query: str) -> list[str]:
    """The words of ``query`` the LIKE fallback searches for: split on whitespace, repeats
    dropped (ignoring ASCII case, as ``LIKE`` does), at most ``MAX_QUERY_WORDS`` (the same
    bound as the FTS5 path; later words are ignored). Unlike FTS5 words, words without
    letters or digits (``%``) are kept: ``LIKE`` matches them literally."""
    words: list[str] = []
    seen: set[str] = set()
    for word in query.split():
        key = word.lower() if word.isascii() else word
        if key in seen:
            continue
        seen.add(key)
        words.append(word)
        if len(words) == MAX_QUERY_WORDS:
            break
    return words


def search_like(
    conn: sqlite3.Connection, query: str, *, kind: str | None = None, limit: int = 10
) -> list[SearchResult]:
    """The fallback when FTS5 is missing or its index is empty: SQL LIKE over nodes' ref_id,
    summary and linked chunk content (see ``like_sql``). ``%``, ``_`` and ``\\`` in the query
    are literal. Results have no snippet or rank. Empty query gives [] without running SQL.
    Repeated words count once and words after the ``MAX_QUERY_WORDS``-th distinct one are
    ignored (``like_words``), so a huge query stays one bounded statement.

    :raises InvalidArgumentError: ``limit`` outside 1..100.
    """
    check_limit(limit)
    words = like_words(query)
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
