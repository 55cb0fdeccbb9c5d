"""The prompt-time hook (I8): the short-lived ``briefd recall`` process a coding agent spawns
on every prompt, a front end of the recall engine (:mod:`briefd.recall`).

``main`` is the fast path: it imports only the standard library until it knows it must answer
in-process. ``discover`` finds the settings, index and server without flags; ``client`` asks a
running ``briefd serve``; ``local`` answers in-process when no server did; ``render`` prints the
result (hook JSON, a ranked list, JSON); ``clients`` writes each agent's config for
``briefd init``.

This package's ``__init__`` imports nothing: the hook's start-up time is its latency.
"""

_site = {"loaded": False}


class HookError(Exception):
    """Bad input to the hook (reported on stderr; the hook still exits 0)."""


def need_site() -> None:
    """Make site-packages importable when the hook was started without ``site`` (``python
    -S``, the command :mod:`briefd.hook.script` gives ``briefd init``) and must now import a
    package from there (``yaml``, or the in-process answer): the search path, ``.pth`` files
    and user site as a normal start would have set them. Nothing in a normal start."""
    import sys

    if sys.flags.no_site and not _site["loaded"]:
        import site

        site.main()
        _site["loaded"] = True
