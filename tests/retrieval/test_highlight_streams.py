"""Snippet marks with the per-text streams cached (``retrieval.highlight._streams``) are the
spans of the previous one-pass implementation, kept here as the reference: on the project's
own docs (real Markdown: code, camelCase, versions) cut into chunk-sized texts, on mixed-script
texts, for many queries, cold, warm and after the streams cache overflowed."""

from __future__ import annotations

import random
import re
from pathlib import Path

from gitquarry.retrieval import highlight

ROOT = Path(__file__).resolve().parents[2]
MIXED = [
    "Adding a parseConfigFile helper: it was built for PyPI releases (v2.0.1) and 修复数据库连接",
    "XMLHttpRequest and HttpAdapter.py read readSettingsFromDisk before v3.10 ships; über-fix",
    "Привет мир: FastAPI のドキュメント, 한국어 문서 and HTTPServer(v1.2) — connections pooled",
]


def reference_spans(text: str, query: str) -> list[tuple[int, int]]:
    """``match_spans`` as it was before the streams were cached (one pass, query words and
    text strings looked up together)."""
    phrases = highlight._phrases(query)
    if not phrases:
        return []
    tokens = list(highlight._TOKEN.finditer(text))
    whole = [highlight._Part(m.group(), m.start(), m.end()) for m in tokens]
    parts = [part for m in tokens for part in highlight._parts(text, m)]
    strings = {p.text for p in whole} | {p.text for p in parts} | \
        {word for phrase in phrases for word in phrase}
    term = highlight._terms(strings)
    found: list[tuple[int, int]] = []
    for stream in (whole, parts):
        keys = [term.get(part.text) for part in stream]
        at = highlight._positions(keys)
        for phrase in phrases:
            highlight._find(stream, keys, at, phrase, term, found)
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
