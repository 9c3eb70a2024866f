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


class _Stream(NamedTuple):
    """A part stream as parallel lists: each part's text, the span a match of it marks, its
    index term (None: no token) — and nothing query-dependent."""

    words: list[str]
    starts: list[int]
    ends: list[int]
    keys: list[str | None]


def _part_stream(text: str, words: list[str], starts: list[int], ends: list[int],
                 splits: list[tuple[tuple[str, int, int], ...] | None]
                 ) -> tuple[list[str], list[int], list[int]]:
    """The parts of every token: ``expand_token``'s words (each a substring, in order; a
    whole token's span for each part unless the token holds a CJK character: then its own
    span); a ``v`` version followed by ``.digit`` also as its number (v2.0.1 is indexed as
    2.0.1 too). Tokens that are their own only part are copied by slices."""
    special = [i for i, split in enumerate(splits) if split is not None]
    if _V_DOTTED.search(text) is not None:
        special = sorted({*special, *(i for i, word in enumerate(words) if word[0] in "vV")})
    out_words: list[str] = []
    out_starts: list[int] = []
    out_ends: list[int] = []
    at = 0
    for i in special:
        out_words += words[at:i]
        out_starts += starts[at:i]
        out_ends += ends[at:i]
        at = i + 1
        word, start, end, split = words[i], starts[i], ends[i], splits[i]
        if word[0] in "vV" and _V_VERSION.fullmatch(word) and text[end : end + 1] == "." \
                and text[end + 1 : end + 2].isdigit():
            out_words.append(word[1:])
            out_starts.append(start)
            out_ends.append(end)
        elif split is None:
            out_words.append(word)
            out_starts.append(start)
            out_ends.append(end)
        else:
            for part, lo, hi in split:
                out_words.append(part)
                out_starts.append(start + lo)
                out_ends.append(start + hi)
    out_words += words[at:]
    out_starts += starts[at:]
    out_ends += ends[at:]
    return out_words, out_starts, out_ends


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
        # contentless (the index alone: what the vocabulary reads), transactions explicit
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS5_TOKENIZE}', "
                     "content='', columnsize=0)")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        _local.conn = conn
    return conn


def _terms(strings: set[str]) -> dict[str, str]:
    """Each string's index term (its first ``porter unicode61`` token), from SQLite itself;
    strings with no token are left out. Looked up once per distinct string (cached)."""
    get = _term_cache.get
    known: dict[str, str | None] = {
        s: term for s in strings if (term := get(s, _UNKNOWN)) is not _UNKNOWN  # type: ignore[misc]
    }
    missing = sorted(strings - known.keys())
    if missing:
        conn = _vocab_connection()
        found: dict[str, str] = {}
        conn.execute("BEGIN")
        try:
            conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(missing))
            for doc, term in conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
                found.setdefault(missing[doc], term)
        finally:
            conn.execute("INSERT INTO t (t) VALUES ('delete-all')")
            conn.execute("COMMIT")
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


def _find(stream: _Stream, phrase: list[str], term: dict[str, str],
          spans: list[tuple[int, int]]) -> None:
    """Append the span of each run of ``stream`` whose terms equal the phrase's, in stream
    order."""
    wanted = [term.get(word) for word in phrase]
    first = wanted[0]
    if first is None or any(w is None for w in wanted):
        return
    keys, size = stream.keys, len(wanted)
    i = -1
    while True:
        try:
            i = keys.index(first, i + 1)
        except ValueError:
            return
        if size == 1 or keys[i : i + size] == wanted:
            spans.append((stream.starts[i], stream.ends[i + size - 1]))


#: one text's part streams: whole tokens, then ``expand_token`` parts (None when they are
#: the whole tokens, one for one: no token expands, no ``v`` version)
_Streams = tuple[_Stream, _Stream | None]
#: texts whose streams are kept (most recently used; a chunk's text is ~1,500 characters)
STREAMS_CACHE_SIZE = 256
#: what a ``v`` version indexed twice needs (a necessary condition, searched once per text)
_V_DOTTED = re.compile(r"[vV]\d+\.\d")


@functools.lru_cache(maxsize=STREAMS_CACHE_SIZE)
def _streams(text: str) -> _Streams:
    """``text``'s two part streams (whole tokens; ``expand_token`` parts), each with the
    index term of every part: everything :func:`match_spans` needs that does not depend on
    the query. Each string's term is its own (``_terms`` looks every string up alone), so
    computing them apart from the query's words changes nothing. Cached per text (bounded:
    :data:`STREAMS_CACHE_SIZE`): a long-lived process marks the same chunks for many
    queries. Shared, never mutated."""
    tokens = list(_TOKEN.finditer(text))
    words = list(map(re.Match.group, tokens))
    starts = list(map(re.Match.start, tokens))
    ends = list(map(re.Match.end, tokens))
    splits = list(map(_split, words))
    if any(splits) or _V_DOTTED.search(text) is not None:
        part_words, part_starts, part_ends = _part_stream(text, words, starts, ends, splits)
        term = _terms(set(words) | set(part_words))
        parts: _Stream | None = _Stream(part_words, part_starts, part_ends,
                                        list(map(term.get, part_words)))
    else:
        term, parts = _terms(set(words)), None
    return _Stream(words, starts, ends, list(map(term.get, words))), parts


def match_spans(text: str, query: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` character spans of ``text`` that ``query`` matches (see the module
    doc), sorted and merged where they overlap; ``[]`` when the query has no searchable word.

    Cost: one pass over ``text`` (its streams are cached per text, :func:`_streams`); words
    not seen before are looked up once in an in-memory SQLite table (per thread) and cached.
    """
    phrases = _phrases(query)
    if not phrases:
        return []
    whole, parts = _streams(text)
    term = _terms({word for phrase in phrases for word in phrase})
    found: list[tuple[int, int]] = []
    # the part stream, when it is the whole one over again, adds the same spans: skipped
    for stream in (whole, parts) if parts is not None else (whole,):
        for phrase in phrases:
            _find(stream, phrase, term, found)
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
