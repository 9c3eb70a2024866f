"""The second vector of a docs chunk: its heading path embedded alone (issue 22).

A chunk's own vector embeds its path, heading path and body (``chunker.embedding_input``);
in a long section the body dominates it, so a question that names the section's subject
("confirmation prompts") ranks a sibling section's chunk with similar prose just as high.
Each chunk therefore also has the vector of :func:`heading_text` (the heading path, the
document title where the chunk has none, the file path where the document has no heading at
all), and hybrid search ranks chunks by

    similarity = cos(query, chunk vector) + HEADING_WEIGHT · cos(query, heading vector)

(``[docs] heading_weight``; 0 turns it off). Because both terms are dot products with the
same query vector, the sum is one dot product with the row ``chunk + w · heading``: the
combined matrix is built once per set (:func:`ranking_matrix`) and a query costs what it cost
before. Measured on the click and flask docs dev sets (docs/performance.md, "Heading-path
vectors (2026-12-02, s4-docs-vec)").

Storage (``repo_docs.db``, no text): ``heading_vectors`` holds one vector per distinct heading
text and embedding namespace, keyed by the sha256 of the text ("same text, same vector": a
page with 30 chunks under one heading embeds it once, and so does every revision and every
file that repeats it), ``chunk_headings`` links a chunk id to its text's digest. The digest
of a short heading is guessable by whoever can guess the heading (as the chunk-text digests
are for short chunks); it is never the text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from gitquarry.repo_docs.chunker import ChunkSpan

#: the heading text's format (a change needs a migration clearing ``chunk_headings``)
HEADING_FORMAT = "repo-docs-heading-v1"
#: default weight of the heading cosine (``[docs] heading_weight``)
HEADING_WEIGHT = 0.4


def document_title(spans: Sequence[ChunkSpan]) -> str:
    """The document's title: the first heading of its first chunk that has one ("" when the
    document has no heading). ``spans``: all its chunks, in document order."""
    return next((s.heading_path[0] for s in spans if s.heading_path), "")


def heading_text(path: str, heading_path: Sequence[str], title: str) -> str:
    """The text embedded as a chunk's heading vector: its heading path joined with ``" > "``
    (the title is its first element), else the document ``title``, else the file ``path``
    (never empty)."""
    return " > ".join(heading_path) or title or path


def text_digest(text: str) -> str:
    """sha256 (hex) of the UTF-8 text: the key of a heading vector."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def ranking_matrix(chunks: np.ndarray, headings: np.ndarray, weight: float) -> np.ndarray:
    """The matrix hybrid search ranks by: ``chunks + weight · headings`` (float32, same
    shape ``(n, d)``, rows aligned); its dot product with a unit query vector is the chunk
    cosine plus ``weight`` times the heading cosine (range [-(1+w), 1+w])."""
    import numpy as np

    out = np.asarray(chunks, dtype=np.float32) + np.float32(weight) * np.asarray(
        headings, dtype=np.float32)
    return np.ascontiguousarray(out, dtype=np.float32)
