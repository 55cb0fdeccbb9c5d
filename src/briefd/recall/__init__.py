"""Prompt-time recall (I8): the ``briefd recall`` hook and its pieces.

``hook`` is the fast path a coding agent spawns on every prompt: it imports only the standard
library until it knows it must answer in-process. ``client`` asks a running ``briefd serve``;
``engine`` answers from the index (through :meth:`briefd.api.Briefd.recall` or, for a BM25-only
answer, straight from the store); ``evidence`` is the lexical relevance gate of a BM25-only
answer; ``pack`` fits sections into the budget; ``render`` writes the ``<knowledge>`` block and
the terminal list; ``session`` remembers what a session was already given.

This package's ``__init__`` imports nothing: the hook's start-up time is its latency.
"""
