"""Shared ranking: tokenisation, FTS5 query escaping, glob and time filters, vector top-k,
RRF fusion."""

from gitquarry.retrieval.fts import fts5_match_expression, quote_fts5_terms
from gitquarry.retrieval.tokenize import FTS5_TOKENIZE, index_text, register_functions

__all__ = [
    "FTS5_TOKENIZE",
    "fts5_match_expression",
    "index_text",
    "quote_fts5_terms",
    "register_functions",
]
