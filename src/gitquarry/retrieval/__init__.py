"""Shared ranking: tokenisation, FTS5 query escaping, glob and time filters, vector top-k,
RRF fusion."""

from typing import TYPE_CHECKING

from gitquarry._lazy import lazy_exports

if TYPE_CHECKING:
    from gitquarry.retrieval.fts import fts5_match_expression, quote_fts5_terms
    from gitquarry.retrieval.tokenize import FTS5_TOKENIZE, index_text, register_functions

#: exported name -> the module that defines it (imported on first use)
_EXPORTS = {
    "fts5_match_expression": "gitquarry.retrieval.fts",
    "quote_fts5_terms": "gitquarry.retrieval.fts",
    "FTS5_TOKENIZE": "gitquarry.retrieval.tokenize",
    "index_text": "gitquarry.retrieval.tokenize",
    "register_functions": "gitquarry.retrieval.tokenize",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "FTS5_TOKENIZE",
    "fts5_match_expression",
    "index_text",
    "quote_fts5_terms",
    "register_functions",
]
