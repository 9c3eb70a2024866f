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

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from gitquarry.retrieval.tokenize import query_units


def _has_token_chars(word: str) -> bool:
    # unicode61 keeps letters, numbers and private-use characters as token characters.
    return any(ch.isalnum() for ch in word)


#: Distinct words kept from one query; the rest are ignored (``dropped_words_warning`` says
#: so).
MAX_QUERY_WORDS = 64


@dataclass(frozen=True)
class QueryWord:
    """One searchable word of a query and its expansion (``tokenize.query_units``)."""

    text: str
    #: the phrases that must all match for the expanded form; None: no expansion
    units: tuple[str, ...] | None

    @property
    def expression(self) -> str:
        """The FTS5 expression this word matches (see the module doc)."""
        own = fts5_string(self.text)
        if self.units is None:
            return own
        expanded = " AND ".join(fts5_string(unit) for unit in self.units)
        if len(self.units) > 1:
            expanded = f"({expanded})"
        return f"({own} OR {expanded})"


@dataclass(frozen=True)
class QueryTerms:
    """A query's terms, parsed once (``parse_query``) and carried to every step that needs
    them: the searchable words (``query_words``), the words past the limit
    (``dropped_query_words``), each word's expansion, the FTS5 expressions and the phrases
    ``bm25()`` sums over."""

    query: str
    words: tuple[QueryWord, ...]
    dropped: tuple[str, ...]

    @property
    def texts(self) -> list[str]:
        """The searchable words' texts (``query_words``)."""
        return [w.text for w in self.words]

    @property
    def phrases(self) -> list[str]:
        """``expression_phrases``: per word its own text, then its expansion units."""
        out: list[str] = []
        for word in self.words:
            out.append(word.text)
            out.extend(word.units or ())
        return out

    def expression(self, operator: Literal["AND", "OR"] = "AND") -> str:
        """``fts5_match_expression`` of the query ("" when nothing is searchable)."""
        if not self.words:
            return ""
        # explicit AND: FTS5 refuses an implicit AND next to a parenthesised group
        # ('"raise" ("BadParameter" OR "Bad Parameter")' is a syntax error)
        joiner = " AND " if operator == "AND" else " OR "
        return joiner.join(word.expression for word in self.words)


@lru_cache(maxsize=256)
def parse_query(query: str) -> QueryTerms:
    """Split ``query`` into its terms once: whitespace-separated words (NUL counts as
    whitespace), without words holding no letter or digit, without repeats
    (case-insensitive), at most ``MAX_QUERY_WORDS`` (the rest in ``dropped``), each with its
    ``tokenize.query_units`` expansion. Repeats add nothing to a BM25 match but multiply
    FTS5's work, so a query of one word repeated 300 times costs what the word alone costs.
    Pure and cached (a search asks for the same query's terms at several steps). Never
    raises."""
    words: list[QueryWord] = []
    dropped: list[str] = []
    seen: set[str] = set()
    for word in query.replace("\x00", " ").split():
        key = word.casefold()
        if key in seen or not _has_token_chars(word):
            continue
        seen.add(key)
        if len(words) < MAX_QUERY_WORDS:
            units = query_units(word)
            words.append(QueryWord(word, None if units is None else tuple(units)))
        else:
            dropped.append(word)
    return QueryTerms(query, tuple(words), tuple(dropped))


def query_words(query: str) -> list[str]:
    """The searchable words of ``query`` (``parse_query``): split on whitespace, without
    words holding no letter or digit, without repeats (case-insensitive), at most
    ``MAX_QUERY_WORDS``."""
    return parse_query(query).texts


def dropped_query_words(query: str) -> list[str]:
    """The distinct searchable words of ``query`` past the ``MAX_QUERY_WORDS``-th, which
    ``query_words`` leaves out (surfaces warn ``query_words_dropped`` with them)."""
    return list(parse_query(query).dropped)


def dropped_words_warning(query: str) -> tuple[str, str] | None:
    """``("query_words_dropped", message)`` when ``query`` holds more distinct words than
    are searched, else None."""
    dropped = parse_query(query).dropped
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
    units = query_units(word)
    return QueryWord(word, None if units is None else tuple(units)).expression


def expression_phrases(query: str) -> list[str]:
    """The phrases (unquoted text) of ``fts5_match_expression(query)`` in expression order:
    per word its own text, then its expansion units. FTS5's ``bm25()`` sums one term per
    phrase in this order (a phrase listed twice counts twice)."""
    return parse_query(query).phrases


def quote_fts5_terms(query: str) -> list[str]:
    """``word_expression`` of each of ``query_words(query)``.

    Returns a list like ``['"mcp-server"', '("parseConfig" OR "parse Config")']``; empty when
    the query holds no searchable word. Never raises.
    """
    return [word.expression for word in parse_query(query).words]


def fts5_match_expression(query: str, operator: Literal["AND", "OR"] = "AND") -> str:
    """Return a safe FTS5 MATCH expression for ``query``, or ``""`` when nothing is searchable.

    ``operator="AND"`` requires every word (written as an explicit ``AND``);
    ``operator="OR"`` matches any word and leaves ranking to BM25, which favours rows that hold
    more of the words. An empty result means the caller must not run the query and should
    return no rows.
    """
    return parse_query(query).expression(operator)
