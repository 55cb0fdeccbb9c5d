"""Chunk vectors (E1, R2): what text is embedded, storage by text hash, the in-memory index."""
