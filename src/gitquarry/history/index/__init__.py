"""Building the commit index: walking refs, documents, patch-ids, refs, vectors."""
