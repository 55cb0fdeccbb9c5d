"""The prompt-time hook (I8): the short-lived ``briefd recall`` process a coding agent spawns
on every prompt, a front end of the recall engine (:mod:`briefd.recall`).

``main`` is the fast path: it imports only the standard library until it knows it must answer
in-process. ``discover`` finds the settings, index and server without flags; ``client`` asks a
running ``briefd serve``; ``local`` answers in-process when no server did; ``render`` prints the
result (hook JSON, a ranked list, JSON); ``clients`` writes each agent's config for
``briefd init``.

This package's ``__init__`` imports nothing: the hook's start-up time is its latency.
"""
