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

import re
import sqlite3
from dataclasses import dataclass

from gitquarry.retrieval.fts import query_words
from gitquarry.retrieval.tokenize import FTS5_TOKENIZE, expand_token, holds_cjk, query_units

#: a token as ``unicode61`` sees it (``_`` separates)
_TOKEN = re.compile(r"[^\W_]+")
_V_VERSION = re.compile(r"[vV]\d+")


@dataclass(frozen=True)
class _Part:
    """One unit of the part stream: its text and the span a match of it marks."""

    text: str
    start: int
    end: int


def _parts(text: str, match: re.Match[str]) -> list[_Part]:
    """The parts of one token: ``expand_token``'s words (each a substring, in order); a whole
    token's span for each part unless the token holds a CJK character (then its own span)."""
    token, start, end = match.group(), match.start(), match.end()
    if _V_VERSION.fullmatch(token) and re.match(r"\.\d", text[end : end + 2]):
        return [_Part(token[1:], start, end)]  # v2.0.1 is also indexed as 2.0.1
    words = expand_token(token).split()
    if len(words) == 1:
        return [_Part(token, start, end)]
    cjk = holds_cjk(token)
    out: list[_Part] = []
    at = 0
    for word in words:
        offset = token.index(word, at)
        at = offset + len(word)
        if cjk:
            out.append(_Part(word, start + offset, start + at))
        else:
            out.append(_Part(word, start, end))
    return out


def _terms(strings: set[str]) -> dict[str, str]:
    """Each string's index term (its first ``porter unicode61`` token), from SQLite itself."""
    listed = sorted(strings)
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS5_TOKENIZE}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(listed))
        terms: dict[str, str] = {}
        for doc, term in conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            terms.setdefault(listed[doc], term)
        return terms
    finally:
        conn.close()


def _phrases(query: str) -> list[list[str]]:
    """Each query word's phrases: its own tokens, then each expansion unit's words."""
    out: list[list[str]] = []
    for word in query_words(query):
        own = _TOKEN.findall(word)
        if own:
            out.append(own)
        out.extend(unit.split() for unit in query_units(word) or ())
    return [phrase for phrase in out if phrase]


def _find(stream: list[_Part], phrase: list[str], term: dict[str, str],
          spans: list[tuple[int, int]]) -> None:
    wanted = [term.get(word) for word in phrase]
    if any(w is None for w in wanted):
        return
    keys = [term.get(part.text) for part in stream]
    size = len(wanted)
    for i in range(len(stream) - size + 1):
        if keys[i : i + size] == wanted:
            spans.append((stream[i].start, stream[i + size - 1].end))


def match_spans(text: str, query: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` character spans of ``text`` that ``query`` matches (see the module
    doc), sorted and merged where they overlap; ``[]`` when the query has no searchable word.

    Cost: one pass over ``text`` and one in-memory SQLite table of its distinct words.
    """
    phrases = _phrases(query)
    if not phrases:
        return []
    tokens = list(_TOKEN.finditer(text))
    whole = [_Part(m.group(), m.start(), m.end()) for m in tokens]
    parts = [part for m in tokens for part in _parts(text, m)]
    strings = {p.text for p in whole} | {p.text for p in parts} | \
        {word for phrase in phrases for word in phrase}
    term = _terms(strings)
    found: list[tuple[int, int]] = []
    for phrase in phrases:
        _find(whole, phrase, term, found)
        _find(parts, phrase, term, found)
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
