"""Snippet marks with the per-text streams cached (``retrieval.highlight._streams``) are the
spans of the previous one-pass implementation, kept here as the reference: on the project's
own docs (real Markdown: code, camelCase, versions) cut into chunk-sized texts, on mixed-script
texts, for many queries, cold, warm and after the streams cache overflowed."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import NamedTuple

from gitquarry.retrieval import highlight

ROOT = Path(__file__).resolve().parents[2]
MIXED = [
    "Adding a parseConfigFile helper: it was built for PyPI releases (v2.0.1) and 修复数据库连接",
    "XMLHttpRequest and HttpAdapter.py read readSettingsFromDisk before v3.10 ships; über-fix",
    "Привет мир: FastAPI のドキュメント, 한국어 문서 and HTTPServer(v1.2) — connections pooled",
]


class _Part(NamedTuple):
    """(the reference's own copy of the part tuple and helpers it used, as they were)"""

    text: str
    start: int
    end: int


def _parts(text: str, match: re.Match[str]) -> list[_Part]:
    token, start, end = match.group(), match.start(), match.end()
    if token[0] in "vV" and highlight._V_VERSION.fullmatch(token) \
            and text[end : end + 1] == "." and text[end + 1 : end + 2].isdigit():
        return [_Part(token[1:], start, end)]
    split = highlight._split(token)
    if split is None:
        return [_Part(token, start, end)]
    return [_Part(word, start + lo, start + hi) for word, lo, hi in split]


def _positions(keys: list[str | None]) -> dict[str, list[int]]:
    at: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        if key is not None:
            at.setdefault(key, []).append(i)
    return at


def _find(stream: list[_Part], keys: list[str | None], at: dict[str, list[int]],
          phrase: list[str], term: dict[str, str], spans: list[tuple[int, int]]) -> None:
    wanted = [term.get(word) for word in phrase]
    first = wanted[0]
    if first is None or any(w is None for w in wanted):
        return
    size = len(wanted)
    for i in at.get(first, ()):
        if keys[i : i + size] == wanted:
            spans.append((stream[i].start, stream[i + size - 1].end))


def reference_spans(text: str, query: str) -> list[tuple[int, int]]:
    """``match_spans`` as it was before the streams were cached (one pass, query words and
    text strings looked up together)."""
    phrases = highlight._phrases(query)
    if not phrases:
        return []
    tokens = list(highlight._TOKEN.finditer(text))
    whole = [_Part(m.group(), m.start(), m.end()) for m in tokens]
    parts = [part for m in tokens for part in _parts(text, m)]
    strings = {p.text for p in whole} | {p.text for p in parts} | \
        {word for phrase in phrases for word in phrase}
    term = highlight._terms(strings)
    found: list[tuple[int, int]] = []
    for stream in (whole, parts):
        keys = [term.get(part.text) for part in stream]
        at = _positions(keys)
        for phrase in phrases:
            _find(stream, keys, at, phrase, term, found)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _texts() -> list[str]:
    out = list(MIXED)
    for path in sorted((ROOT / "docs").glob("*.md"))[:12]:
        text = path.read_text(encoding="utf-8")
        out.extend(" ".join(text[i : i + 1500].split()) for i in range(0, len(text), 1500))
    return out


def _queries(texts: list[str], rng: random.Random) -> list[str]:
    words = sorted({w for t in texts for w in re.findall(r"\w+", t)})
    queries = ["config", "v2.0.1", "数据库", "http adapter", "connection pooling", "index",
               "search query", "Über", "--json", "a", "ドキュメント"]
    queries += [" ".join(rng.sample(words, rng.randint(1, 3))) for _ in range(40)]
    return queries


def test_cached_streams_give_the_reference_spans() -> None:
    rng = random.Random(5)
    texts = _texts()
    assert len(texts) > 50
    queries = _queries(texts, rng)
    expected = {(t, q): reference_spans(t, q) for t in texts for q in queries}
    assert sum(1 for spans in expected.values() if spans) > 200  # the inputs match a lot
    highlight._streams.cache_clear()
    for _ in range(2):  # cold, then warm (streams from the cache)
        for (t, q), spans in expected.items():
            assert highlight.match_spans(t, q) == spans, (t[:60], q)
    assert highlight._streams.cache_info().hits > 0
    # more texts than the cache holds, in random order: evictions change nothing
    pairs = list(expected.items())
    rng.shuffle(pairs)
    for (t, q), spans in pairs[:3000]:
        assert highlight.match_spans(t, q) == spans, (t[:60], q)
    assert highlight._streams.cache_info().currsize <= highlight.STREAMS_CACHE_SIZE


def test_both_stream_shapes_give_the_reference_spans() -> None:
    """Texts whose part stream is the whole-token stream over again (kept once) and texts
    with expanding tokens or ``v`` versions (kept twice) both mark what the reference marks."""
    plain = ["connection pooling keeps the search index warm, and queries read it twice",
             "the running runner runs: searching searched searches in indexes indexed",
             "v2 alone is no version here, nor is v3 . 1 with spaces; v10x neither"]
    expanding = ["parseConfigFile reads v2.0.1 settings", "数据库连接 pooling",
                 "the HTTPServer and XMLHttpRequest", "version v3.10 then V2.0"]
    queries = ["connection", "search index", "run", "v2", "2.0.1", "config file",
               "数据库", "http server", "3.10", "version", "indexed", "twice"]
    highlight._streams.cache_clear()
    for text in plain:
        assert highlight._streams(text)[1] is None
    for text in expanding:
        assert highlight._streams(text)[1] is not None
    marked = 0
    for text in plain + expanding:
        for query in queries:
            spans = highlight.match_spans(text, query)
            assert spans == reference_spans(text, query), (text, query)
            marked += bool(spans)
    assert marked >= 15
