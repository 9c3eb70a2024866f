"""What the result pipeline does (``retrieval.pipeline``): its settings and their defaults.

A module of its own so that ``config`` can build the ``[search]`` section's defaults from the
pipeline's (issue 23 §3: the arrow points down, config → retrieval) without importing the
pipeline itself at every command start. ``retrieval.pipeline`` re-exports both names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: MMR chooses from this many survivors of the filters, whatever ``top_n`` is (the first k
#: results never depend on how many were asked for; issue 20 §3); at least ``top_n``.
MMR_POOL = 100


@dataclass(frozen=True, kw_only=True)
class PipelineSettings:
    """What the pipeline does; the seed's ``SearchPipelineConfig`` names and defaults, plus
    ``collapse`` (copies of one change) and ``normalise`` (min-max first, for raw scores)."""

    # the one declaration of these defaults: ``config.SearchConfig`` (``[search]``) takes them
    min_confidence: float = 0.0
    max_chunks_per_doc: int = 2
    dedup_enabled: bool = False
    dedup_threshold: float = 0.85
    ngram_dedup_enabled: bool = True
    ngram_dedup_threshold: float = 0.7
    mmr_enabled: bool = False
    mmr_lambda: float = 0.7
    rerank_enabled: bool = False
    rerank_top_n: int = 10
    collapse: bool = True
    normalise: bool = False

    @classmethod
    def from_search_config(
        cls,
        search: Any,
        *,
        diverse: bool | None = None,
        min_score: float | None = None,
        collapse: bool | None = None,
        normalise: bool = False,
        max_chunks_per_doc: int | None = None,
    ) -> PipelineSettings:
        """Settings from ``[search]`` (``config.SearchConfig``) with per-request overrides:
        ``diverse`` turns MMR on/off, ``min_score`` replaces ``min_confidence``,
        ``collapse`` turns copy collapsing on/off (None: the configured value)."""
        return cls(
            min_confidence=search.min_confidence if min_score is None else min_score,
            max_chunks_per_doc=(
                search.max_chunks_per_doc if max_chunks_per_doc is None else max_chunks_per_doc
            ),
            dedup_enabled=search.dedup_enabled,
            dedup_threshold=search.dedup_threshold,
            ngram_dedup_enabled=search.ngram_dedup_enabled,
            ngram_dedup_threshold=search.ngram_dedup_threshold,
            mmr_enabled=search.mmr_enabled if diverse is None else diverse,
            mmr_lambda=search.mmr_lambda,
            rerank_enabled=search.rerank_enabled,
            rerank_top_n=search.rerank_top_n,
            collapse=search.collapse_copies if collapse is None else collapse,
            normalise=normalise,
        )

    def pool_size(self, top_n: int, *, rerank: bool) -> int:
        """How many survivors of the filters the ordering steps choose ``top_n`` from."""
        size = top_n
        if self.mmr_enabled:
            size = max(size, MMR_POOL)
        if rerank:
            size = max(size, self.rerank_top_n)
        return size


__all__ = ["MMR_POOL", "PipelineSettings"]
