"""``LexicalIndex.rows_by_chunk`` (each chunk id's first row) is built once per index state and
reused by every query, and always equals the dict a query used to build for itself."""

from __future__ import annotations

import random

from gitquarry.repo_docs.lexical import LexicalIndex, Row


def row(chunk: str, path: str, ordinal: int) -> Row:
    return Row(chunk_id=chunk, path=path, ordinal=ordinal, blob_oid="b" * 40, authority="git",
               content_class="markdown", byte_start=ordinal * 10, byte_end=ordinal * 10 + 9,
               line_start=ordinal + 1, line_end=ordinal + 1, raw_slice_sha256="0" * 64,
               heading_path=(f"H{ordinal % 3}",))


def per_query(index: LexicalIndex) -> dict[str, Row]:
    """What ``search.rank`` built for every query before."""
    out: dict[str, Row] = {}
    for r in index.rows:
        out.setdefault(r.chunk_id, r)
    return out


def test_built_once_per_state_and_equal_to_the_per_query_dict() -> None:
    rng = random.Random(5)
    index = LexicalIndex()
    try:
        assert index.rows_by_chunk == {}
        for batch in range(4):
            # identical files under several paths share chunk ids: the first row wins
            items = [(row(f"c{rng.randrange(40)}", f"doc{batch}-{d}.md", k), f"text {k} word{d}")
                     for d in range(3) for k in range(rng.randint(1, 8))]
            index.add(items)
            built = index.rows_by_chunk
            assert built == per_query(index)
            assert all(built[c] is per_query(index)[c] for c in built)
            assert index.rows_by_chunk is built  # reused while the rows stay as they are
        assert len(index.rows) > len(index.rows_by_chunk)  # duplicates were exercised
    finally:
        index.close()
