"""The docs corpus's lexical floor (issue 22, "fusion must not throw away a lexical hit that
the vectors cannot see"): ``repo_docs.search.apply_docs_floor`` over a real in-memory FTS5
index (``LexicalIndex.holding_every_word`` checked against a brute-force word count), its
promise checked by brute force on random rankings, partial sets' pinned full-text hits never
moved down, and end to end in a real git repository: the one section holding every word of
a question, first by keywords but barely seen by the vectors, stays in the hybrid top 10 with
the floor and drops out without it."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from gitquarry.config import Config
from gitquarry.repo_docs import search as docs_search
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.lexical import LexicalIndex, Row, section_key
from gitquarry.repo_docs.registry import Registry, Selector
from gitquarry.repo_docs.search import apply_docs_floor
from gitquarry.retrieval.fusion import LexicalFloor

from .conftest import Repo

VOCAB = [f"w{n}" for n in range(12)]


def _row(n: int, path: str, heading: tuple[str, ...]) -> Row:
    return Row(chunk_id=f"c{n}", path=path, ordinal=n, blob_oid="0" * 40, authority="git",
               content_class="docs", byte_start=0, byte_end=1, line_start=n + 1,
               line_end=n + 1, raw_slice_sha256="0" * 64, heading_path=heading)


def _random_index(rng: random.Random) -> tuple[LexicalIndex, dict[str, Row], dict[str, str]]:
    """A few documents of a few sections of one or two chunks each, random words of VOCAB;
    returns the index, the rows by chunk id and each chunk's searchable text (path, heading
    path and body, as the index holds it)."""
    index = LexicalIndex()
    rows: dict[str, Row] = {}
    texts: dict[str, str] = {}
    n = 0
    for d in range(rng.randint(2, 5)):
        items: list[tuple[Row, str]] = []
        path = f"docs/p{d}.md"
        for s in range(rng.randint(1, 4)):
            heading = (f"T{d}", f"S{s} {rng.choice(VOCAB)}")
            for _ in range(rng.randint(1, 2)):
                body = " ".join(rng.choices(VOCAB, k=rng.randint(1, 8)))
                row = _row(n, path, heading)
                items.append((row, body))
                rows[row.chunk_id] = row
                texts[row.chunk_id] = f"{path} {' '.join(heading)} {body}"
                n += 1
        index.add(items)
    return index, rows, texts


def _every_word_brute(query: str, chunk: str, rows: dict[str, Row],
                      texts: dict[str, str]) -> bool:
    """Whether the chunk's heading section (all its chunks' text, path and headings) holds
    every word of ``query``: a plain lower-cased word count."""
    key = section_key(rows[chunk])
    words: set[str] = set()
    for c, text in texts.items():
        if section_key(rows[c]) == key:
            words.update(re.findall(r"\w+", text.lower()))
    return all(w.lower() in words for w in query.split())


@pytest.mark.parametrize("seed", range(150))
def test_floor_promise_by_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    index, rows, texts = _random_index(rng)
    query = " ".join(rng.sample(VOCAB, rng.randint(1, 3)))
    lexical = [row.chunk_id for row, _s in index.search(query, 100)]
    # every_word equals the brute force on every chunk
    everything = index.holding_every_word(query, list(rows))
    assert everything == {c for c in rows if _every_word_brute(query, c, rows, texts)}
    ids = list(rows)
    rng.shuffle(ids)
    fused = [(c, 1.0 / (n + 1)) for n, c in enumerate(ids)]
    keep, window = rng.randint(1, 5), rng.randint(1, 6)
    floor = LexicalFloor(keep=keep, window=window)
    embedded = set(rng.sample(ids, rng.randint(0, len(ids)))) if rng.random() < 0.5 else None
    out = apply_docs_floor(fused, lexical, query, index, rows, floor, embedded=embedded)
    order = [c for c, _v in out]
    assert sorted(order) == sorted(ids)  # the id set never changes
    assert [v for _c, v in out] == [v for _c, v in fused]  # values stay with the places
    promised = [c for c in lexical[:keep] if _every_word_brute(query, c, rows, texts)]
    pinned: list[str] = []
    if embedded is not None:
        with_vectors = {section_key(rows[c]) for c in embedded}
        pinned = [c for c in lexical if section_key(rows[c]) not in with_vectors]
    for c in pinned:  # a full-text hit without a vector never moves down
        assert order.index(c) <= ids.index(c)
    room = window - sum(1 for c in set(pinned) if ids.index(c) < window)
    if len(promised) <= room:  # always so in search: see floor_lexical's docstring
        assert all(order.index(c) < window for c in promised)
    if not promised:
        assert out == fused
    off = apply_docs_floor(fused, lexical, query, index, rows, LexicalFloor(keep=0))
    assert off == fused
    index.close()


def test_holding_every_word_edge_cases() -> None:
    index = LexicalIndex()
    index.add([(_row(0, "docs/a.md", ("A", "Cache")), "redis cache eviction"),
               (_row(1, "docs/a.md", ("A", "Cache")), "second chunk of the same section ttl"),
               (_row(2, "docs/a.md", ("A", "Other")), "redis only")])
    # words split over the two chunks of one section: the section holds them all
    assert index.holding_every_word("redis ttl", ["c0", "c1", "c2"]) == {"c0", "c1"}
    assert index.holding_every_word("*** --", ["c0"]) == set()  # nothing searchable
    assert index.holding_every_word("redis", []) == set()
    assert index.holding_every_word("redis", ["unknown"]) == set()
    assert index.holding_every_word('redis" OR "only', ["c0", "c2"]) == set()  # escaped
    index.close()


QUESTION = "lantern ribbon harbor meadow copper"
WORDS = QUESTION.split()


def _floor_docs() -> dict[str, str | bytes | None]:
    """Twenty decoy pages, each holding two of the question's five words ten times (the
    bag-of-words vectors rank them close; BM25 saturates on repeats), and one page titled
    with all five words among a hundred others (BM25's title weight puts it first; its vector
    is the farthest of the pages holding the words)."""
    files: dict[str, str | bytes | None] = {}
    for n in range(20):
        pair = f"{WORDS[n % 5]} {WORDS[(n + 1 + n // 5) % 5]} "
        files[f"docs/decoy{n}.md"] = f"# Decoy {n}\n\n{pair * 10}\n"
    filler = " ".join(f"filler{n}" for n in range(100))
    files["docs/storage.md"] = f"# {QUESTION.capitalize()}\n\nStorage: {filler}.\n"
    return files


def test_a_full_match_the_vectors_do_not_see_stays_in_the_hybrid_top_ten(
        make_repo: Callable[..., Repo], fake_config: Config,
        monkeypatch: pytest.MonkeyPatch) -> None:
    config = fake_config.replaced(docs={"semantic_weight": 4.0, "heading_weight": 0.0})
    repo = make_repo(_floor_docs())
    service = RepoDocsService(config, Registry())
    try:
        service.register("o/floor", repo.path)
        sel = Selector("o/floor")
        assert service.index(sel).state == "ready"

        def paths(query: str, mode: str, limit: int = 10) -> list[str]:
            r = service.search(sel, query, mode=mode, limit=limit)
            assert r["effective_mode"] == mode
            return [h["path"] for h in r["hits"]]

        assert "docs/storage.md" in paths(QUESTION, "fulltext")[:5]
        monkeypatch.setattr(docs_search, "DOCS_LEXICAL_FLOOR", LexicalFloor(keep=0))
        assert "docs/storage.md" not in paths(QUESTION, "hybrid")  # plain fusion drops it
        monkeypatch.setattr(docs_search, "DOCS_LEXICAL_FLOOR", LexicalFloor(keep=5))
        assert "docs/storage.md" in paths(QUESTION, "hybrid")
        # a question no section holds in full: the floor changes nothing
        partial = "lantern ribbon harbor meadow zeppelin"
        with_floor = service.search(sel, partial, mode="hybrid", limit=10)["hits"]
        monkeypatch.setattr(docs_search, "DOCS_LEXICAL_FLOOR", LexicalFloor(keep=0))
        without = service.search(sel, partial, mode="hybrid", limit=10)["hits"]
        assert [(h["chunk_id"], h["score"]) for h in with_floor] == [
            (h["chunk_id"], h["score"]) for h in without]
    finally:
        service.close()
