"""The link graph between documents: resolution and findings (K5)."""
