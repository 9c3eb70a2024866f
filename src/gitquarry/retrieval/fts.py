"""FTS5 query escaping: the one place user text becomes a MATCH expression.

No user string ever reaches ``MATCH`` raw. Each whitespace-separated word becomes an FTS5
string (``"word"``, with any ``"`` inside doubled), so operators (``AND``, ``OR``, ``NOT``,
``NEAR``), column filters (``parser:``), prefixes (``*``), parentheses and ``-`` are all
literal text. Words that hold no letter or digit (``*``, ``--``, ``"``) produce no token under
the ``unicode61`` tokenizer and are dropped, so they never turn a query into an empty phrase.
"""

from __future__ import annotations

from typing import Literal


def _has_token_chars(word: str) -> bool:
    # unicode61 keeps letters, numbers and private-use characters as token characters.
    return any(ch.isalnum() for ch in word)


def quote_fts5_terms(query: str) -> list[str]:
    """Split ``query`` on whitespace and quote each word as an FTS5 string.

    Returns a list like ``['"mcp-server"', '"status"']``; empty when the query holds no
    searchable word. Never raises.
    """
    terms: list[str] = []
    for word in query.split():
        if not _has_token_chars(word):
            continue
        terms.append('"' + word.replace('"', '""') + '"')
    return terms


def fts5_match_expression(query: str, operator: Literal["AND", "OR"] = "AND") -> str:
    """Return a safe FTS5 MATCH expression for ``query``, or ``""`` when nothing is searchable.

    ``operator="AND"`` (FTS5's implicit AND, written as a space) requires every word;
    ``operator="OR"`` matches any word and leaves ranking to BM25, which favours rows that hold
    more of the words. An empty result means the caller must not run the query and should
    return no rows.
    """
    terms = quote_fts5_terms(query)
    if not terms:
        return ""
    joiner = " " if operator == "AND" else " OR "
    return joiner.join(terms)
