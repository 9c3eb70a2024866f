"""Repository-documentation corpus: tracked policy, immutable revision sets, a locator-only
cache, full-text (BM25 over the exact blobs) and hybrid search, digest-checked citations."""
