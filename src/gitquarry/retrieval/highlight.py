"""Which parts of a text a query matches, the way the lexical indexes match them.

FTS5 marks matches itself (``snippet``/``highlight``) where it holds the text; a corpus that
re-reads its text elsewhere (repository docs re-read each hit from its blob) marks it here.
The rules are the index's (``gitquarry.retrieval.tokenize``, ``gitquarry.retrieval.fts``):

- the text is split into tokens as ``unicode61`` splits it (runs of letters and digits), and a
  query word is the phrase of its own tokens, or its expansion (``query_units``);
- a phrase matches consecutive text tokens, or consecutive parts of text tokens
  (``expand_token``: camelCase parts, CJK characters; a ``v`` version without its ``v``);
- two words match when SQLite's ``porter unicode61`` tokenizer gives them the same term
  (case, diacritics and English suffixes folded), so a match is exactly what the index would
  count, never a letter inside another word.

A match is marked on whole tokens (``parseConfigFile`` for ``config``), except inside a CJK
run, where only the matched characters are marked. Shapes: ``match_spans`` gives sorted,
non-overlapping ``(start, end)`` character offsets into the text.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading
from typing import NamedTuple

from gitquarry.retrieval.fts import query_words
from gitquarry.retrieval.tokenize import FTS5_TOKENIZE, expand_token, holds_cjk, query_units

#: a token as ``unicode61`` sees it (``_`` separates)
_TOKEN = re.compile(r"[^\W_]+")
_V_VERSION = re.compile(r"[vV]\d+")


class _Part(NamedTuple):
    """One unit of the part stream: its text and the span a match of it marks."""

    text: str
    start: int
    end: int


@functools.lru_cache(maxsize=65536)
def _split(token: str) -> tuple[tuple[str, int, int], ...] | None:
    """``token``'s ``expand_token`` words as ``(word, start, end)`` offsets inside the token
    (CJK: each character's own offsets; otherwise the whole token's), or None when the token
    does not expand. Cached per distinct token."""
    words = expand_token(token).split()
    if len(words) == 1:
        return None
    cjk = holds_cjk(token)
    out: list[tuple[str, int, int]] = []
    at = 0
    for word in words:
        offset = token.index(word, at)
        at = offset + len(word)
        out.append((word, offset, at) if cjk else (word, 0, len(token)))
    return tuple(out)


def _parts(text: str, match: re.Match[str]) -> list[_Part]:
    """The parts of one token: ``expand_token``'s words (each a substring, in order); a whole
    token's span for each part unless the token holds a CJK character (then its own span)."""
    token, start, end = match.group(), match.start(), match.end()
    if token[0] in "vV" and _V_VERSION.fullmatch(token) and text[end : end + 1] == "." \
            and text[end + 1 : end + 2].isdigit():
        return [_Part(token[1:], start, end)]  # v2.0.1 is also indexed as 2.0.1
    split = _split(token)
    if split is None:
        return [_Part(token, start, end)]
    return [_Part(word, start + lo, start + hi) for word, lo, hi in split]


#: index terms already looked up (a string's term never changes: the tokenizer is fixed);
#: cleared when it holds this many, so memory stays bounded whatever the texts
_TERM_CACHE_MAX = 100_000
_term_cache: dict[str, str | None] = {}
_UNKNOWN = object()
_local = threading.local()


def _vocab_connection() -> sqlite3.Connection:
    """This thread's in-memory FTS5 table used to ask SQLite for terms (created once)."""
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS5_TOKENIZE}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        _local.conn = conn
    return conn


def _terms(strings: set[str]) -> dict[str, str]:
    """Each string's index term (its first ``porter unicode61`` token), from SQLite itself;
    strings with no token are left out. Looked up once per distinct string (cached)."""
    known: dict[str, str | None] = {}
    for s in strings:
        term = _term_cache.get(s, _UNKNOWN)
        if term is not _UNKNOWN:
            known[s] = term  # type: ignore[assignment]
    missing = sorted(strings - known.keys())
    if missing:
        conn = _vocab_connection()
        found: dict[str, str] = {}
        try:
            conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(missing))
            for doc, term in conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
                found.setdefault(missing[doc], term)
        finally:
            conn.execute("DELETE FROM t")
        if len(_term_cache) + len(missing) > _TERM_CACHE_MAX:
            _term_cache.clear()
        for s in missing:
            known[s] = _term_cache[s] = found.get(s)
    return {s: term for s, term in known.items() if term is not None}


def _phrases(query: str) -> list[list[str]]:
    """Each query word's phrases: its own tokens, then each expansion unit's words."""
    out: list[list[str]] = []
    for word in query_words(query):
        own = _TOKEN.findall(word)
        if own:
            out.append(own)
        out.extend(unit.split() for unit in query_units(word) or ())
    return [phrase for phrase in out if phrase]


def _find(stream: list[_Part], keys: list[str | None], at: dict[str, list[int]],
          phrase: list[str], term: dict[str, str], spans: list[tuple[int, int]]) -> None:
    """Append the span of each run of ``stream`` whose terms (``keys``) equal the phrase's;
    ``at`` lists the positions of each term in ``keys``."""
    wanted = [term.get(word) for word in phrase]
    first = wanted[0]
    if first is None or any(w is None for w in wanted):
        return
    size = len(wanted)
    for i in at.get(first, ()):
        if keys[i : i + size] == wanted:
            spans.append((stream[i].start, stream[i + size - 1].end))


def _positions(keys: list[str | None]) -> dict[str, list[int]]:
    at: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        if key is not None:
            at.setdefault(key, []).append(i)
    return at


#: one text's part streams, each with its terms and their positions (see :func:`_streams`)
_Streams = tuple[tuple[list[_Part], list[str | None], dict[str, list[int]]], ...]
#: texts whose streams are kept (most recently used; a chunk's text is ~1,500 characters)
STREAMS_CACHE_SIZE = 256


@functools.lru_cache(maxsize=STREAMS_CACHE_SIZE)
def _streams(text: str) -> _Streams:
    """``text``'s two part streams (whole tokens; ``expand_token`` parts), each with the
    index term of every part and the positions of each term: everything
    :func:`match_spans` needs that does not depend on the query. Each string's term is its
    own (``_terms`` looks every string up alone), so computing them apart from the query's
    words changes nothing. Cached per text (bounded: :data:`STREAMS_CACHE_SIZE`): a
    long-lived process marks the same chunks for many queries. Shared, never mutated."""
    tokens = list(_TOKEN.finditer(text))
    whole = [_Part(m.group(), m.start(), m.end()) for m in tokens]
    parts = [part for m in tokens for part in _parts(text, m)]
    term = _terms({p.text for p in whole} | {p.text for p in parts})
    out = []
    for stream in (whole, parts):
        keys = [term.get(part.text) for part in stream]
        out.append((stream, keys, _positions(keys)))
    return tuple(out)


def match_spans(text: str, query: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` character spans of ``text`` that ``query`` matches (see the module
    doc), sorted and merged where they overlap; ``[]`` when the query has no searchable word.

    Cost: one pass over ``text`` (its streams are cached per text, :func:`_streams`); words
    not seen before are looked up once in an in-memory SQLite table (per thread) and cached.
    """
    phrases = _phrases(query)
    if not phrases:
        return []
    streams = _streams(text)
    term = _terms({word for phrase in phrases for word in phrase})
    found: list[tuple[int, int]] = []
    for stream, keys, at in streams:
        for phrase in phrases:
            _find(stream, keys, at, phrase, term, found)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def mark(text: str, spans: list[tuple[int, int]], open_tag: str, close_tag: str) -> str:
    """``text`` with each span (sorted, non-overlapping, from ``match_spans``) wrapped in
    ``open_tag``/``close_tag``."""
    out: list[str] = []
    at = 0
    for start, end in spans:
        out.append(text[at:start])
        out.append(open_tag + text[start:end] + close_tag)
        at = end
    out.append(text[at:])
    return "".join(out)
