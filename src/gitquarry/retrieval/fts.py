"""FTS5 query escaping: the one place user text becomes a MATCH expression.

No user string ever reaches ``MATCH`` raw. Each whitespace-separated word becomes an FTS5
string (``"word"``, with any ``"`` inside doubled), so operators (``AND``, ``OR``, ``NOT``,
``NEAR``), column filters (``parser:``), prefixes (``*``), parentheses and ``-`` are all
literal text. Words that hold no letter or digit (``*``, ``--``, ``"``) produce no token under
the ``unicode61`` tokenizer and are dropped, so they never turn a query into an empty phrase.

A word that ``gitquarry.retrieval.tokenize`` expands (an identifier, CJK text, a ``v``
version) matches its own text *or* its expansion: ``parseConfigFile`` becomes
``("parseConfigFile" OR "parse Config File")``, ``HttpAdapter.py`` becomes
``("HttpAdapter.py" OR ("Http Adapter" AND "py"))``, ``数据库`` becomes
``("数据库" OR "数 据 库")`` (a phrase of single characters). The indexed side must hold
``tokenize.index_text`` of its text for the expansions to match.
"""

from __future__ import annotations

from typing import Literal

from gitquarry.retrieval.tokenize import query_units


def _has_token_chars(word: str) -> bool:
    # unicode61 keeps letters, numbers and private-use characters as token characters.
    return any(ch.isalnum() for ch in word)


#: Distinct words kept from one query; the rest are ignored (``dropped_words_warning`` says
#: so).
MAX_QUERY_WORDS = 64


def query_words(query: str) -> list[str]:
    """The searchable words of ``query``: split on whitespace (NUL counts as whitespace),
    without words holding no letter or digit, without repeats (case-insensitive), at most
    ``MAX_QUERY_WORDS``. Repeats add nothing to a BM25 match but multiply FTS5's work, so a
    query of one word repeated 300 times costs what the word alone costs.
    """
    words: list[str] = []
    seen: set[str] = set()
    for word in query.replace("\x00", " ").split():
        key = word.casefold()
        if key in seen or not _has_token_chars(word):
            continue
        seen.add(key)
        words.append(word)
        if len(words) == MAX_QUERY_WORDS:
            break
    return words


def dropped_query_words(query: str) -> list[str]:
    """The distinct searchable words of ``query`` past the ``MAX_QUERY_WORDS``-th, which
    ``query_words`` leaves out (surfaces warn ``query_words_dropped`` with them)."""
    kept = {w.casefold() for w in query_words(query)}
    dropped: list[str] = []
    for word in query.replace("\x00", " ").split():
        key = word.casefold()
        if key not in kept and _has_token_chars(word):
            kept.add(key)
            dropped.append(word)
    return dropped


def dropped_words_warning(query: str) -> tuple[str, str] | None:
    """``("query_words_dropped", message)`` when ``query`` holds more distinct words than
    are searched, else None."""
    dropped = dropped_query_words(query)
    if not dropped:
        return None
    shown = ", ".join(repr(w[:40]) for w in dropped[:5]) + (", …" if len(dropped) > 5 else "")
    return ("query_words_dropped",
            f"only the first {MAX_QUERY_WORDS} distinct words of the query are searched; "
            f"{len(dropped)} more were left out ({shown})")


def fts5_string(text: str) -> str:
    """``text`` as an FTS5 string: in double quotes, each ``"`` doubled. FTS5 reads it as a
    phrase of the tokens the table's tokenizer makes of ``text``."""
    return '"' + text.replace('"', '""') + '"'


def word_expression(word: str) -> str:
    """The FTS5 expression one query ``word`` (from ``query_words``) matches: its own text,
    or also its expansion when ``tokenize.query_units`` gives one (see the module doc)."""
    own = fts5_string(word)
    units = query_units(word)
    if units is None:
        return own
    expanded = " AND ".join(fts5_string(unit) for unit in units)
    if len(units) > 1:
        expanded = f"({expanded})"
    return f"({own} OR {expanded})"


def expression_phrases(query: str) -> list[str]:
    """The phrases (unquoted text) of ``fts5_match_expression(query)`` in expression order:
    per word its own text, then its expansion units. FTS5's ``bm25()`` sums one term per
    phrase in this order (a phrase listed twice counts twice)."""
    out: list[str] = []
    for word in query_words(query):
        out.append(word)
        out.extend(query_units(word) or ())
    return out


def quote_fts5_terms(query: str) -> list[str]:
    """``word_expression`` of each of ``query_words(query)``.

    Returns a list like ``['"mcp-server"', '("parseConfig" OR "parse Config")']``; empty when
    the query holds no searchable word. Never raises.
    """
    return [word_expression(word) for word in query_words(query)]


def fts5_match_expression(query: str, operator: Literal["AND", "OR"] = "AND") -> str:
    """Return a safe FTS5 MATCH expression for ``query``, or ``""`` when nothing is searchable.

    ``operator="AND"`` requires every word (written as an explicit ``AND``);
    ``operator="OR"`` matches any word and leaves ranking to BM25, which favours rows that hold
    more of the words. An empty result means the caller must not run the query and should
    return no rows.
    """
    terms = quote_fts5_terms(query)
    if not terms:
        return ""
    # explicit AND: FTS5 refuses an implicit AND next to a parenthesised group
    # ('"raise" ("BadParameter" OR "Bad Parameter")' is a syntax error)
    joiner = " AND " if operator == "AND" else " OR "
    return joiner.join(terms)
