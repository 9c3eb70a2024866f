"""Similarity of two results, for deduplication and diversity: word n-gram Jaccard over text
and cosine over unit vectors."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: words per shingle (n-gram deduplication)
NGRAM = 3
#: characters of a text that are shingled (a long text's head says what it is)
MAX_TEXT_CHARS = 20_000
_WORD = re.compile(r"\w+", re.UNICODE)
#: keep the shingles of recently seen texts (a warm process sees the same commits' texts in
#: query after query; a shingle set is a function of the text alone, so a kept one is exact).
#: False: computed every time (tests compare both)
MEMO = True
#: texts whose shingles are kept (least recently used dropped first; ~15 KB a commit message)
MEMO_SIZE = 1024


def shingles(text: str, n: int = NGRAM) -> frozenset[tuple[str, ...]]:
    """``compute_shingles(text, n)``, kept for the last ``MEMO_SIZE`` texts while ``MEMO``."""
    if not MEMO:
        return compute_shingles(text, n)
    return _kept(text, n)


def compute_shingles(text: str, n: int = NGRAM) -> frozenset[tuple[str, ...]]:
    """The distinct word ``n``-grams of ``text`` (words: runs of letters, digits and ``_``,
    case-folded; the first ``MAX_TEXT_CHARS`` characters). A text of fewer than ``n`` words
    gives one shingle holding all its words; an empty text gives the empty set."""
    words = [w.casefold() for w in _WORD.findall(text[:MAX_TEXT_CHARS])]
    if not words:
        return frozenset()
    if len(words) < n:
        return frozenset({tuple(words)})
    # the n-grams words[i:i+n], built by zip at C speed
    return frozenset(zip(*(words[i:] for i in range(n)), strict=False))


_kept = lru_cache(maxsize=MEMO_SIZE)(compute_shingles)


def jaccard(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    """|a ∩ b| / |a ∪ b| in [0, 1]; 0.0 when both are empty (nothing to compare)."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors (any norm; 0.0 when either is zero), in [-1, 1]."""
    import numpy as np  # only when vectors are compared (commands start without NumPy)

    na = float(np.linalg.norm(a))
    nb = float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))
