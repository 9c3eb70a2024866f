"""Shared ranking: FTS5 query escaping, glob and time filters, vector top-k, RRF fusion."""

from gitquarry.retrieval.fts import fts5_match_expression, quote_fts5_terms

__all__ = ["fts5_match_expression", "quote_fts5_terms"]
