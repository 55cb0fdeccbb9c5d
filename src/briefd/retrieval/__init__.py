"""Retrieval: lexical (FTS5 BM25) search, rank fusion and the search entry point (R1–R6)."""
