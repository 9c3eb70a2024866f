"""Searching the commit index: lexical, semantic, fusion input, narrowing."""
