"""Markdown knowledge documents: front matter, headings, chunks and links (K2, K4, K5)."""
