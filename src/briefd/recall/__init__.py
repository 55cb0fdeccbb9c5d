"""Prompt-time recall (I8), the engine: which knowledge sections to inject for a prompt.

``engine`` answers a :class:`~briefd.recall.engine.RecallRequest` from the index (hybrid
search passed in by :meth:`briefd.api.Briefd.recall`, or BM25 straight from the store);
``evidence`` is the lexical relevance gate of a BM25-only answer; ``pack`` fits sections into
the budget; ``block`` writes the ``<knowledge>`` block; ``session`` remembers what a session
was already given. The front ends — the hook (:mod:`briefd.hook`), REST, the CLI — come here;
this package imports none of them, nor :mod:`briefd.api`.

This package's ``__init__`` imports nothing: the hook imports the engine on its in-process path.
"""
