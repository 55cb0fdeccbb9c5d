"""Embedding models behind one interface (E1): local, ollama, openai-compatible, none."""
