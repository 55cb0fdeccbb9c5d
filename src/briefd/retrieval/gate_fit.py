"""Which fit of the relevance gate (R4) an index holds, read with the standard library only.

A fit is stored under the index state it was made for, prefixed with the :data:`VERSION` of
the way it was made (:func:`fitted_to`). A no-change ``briefd index`` (O4,
:mod:`briefd.cli.index_fast`) asks :func:`stored_fit` before it answers "nothing to do": after
an upgrade that fits the gate another way, the stored fit is an older release's, and the run
must refit it. Kept apart from :mod:`briefd.retrieval.calibration` so that question loads no
numpy.
"""

from __future__ import annotations

import json
import sqlite3

VERSION = "14"  # bump when the probes or the way the gate is fitted change
META = "gate-calibration:"


def fitted_to(state: str, words: int) -> str:
    """What a fit made by this release for the index state ``state`` is stored as
    (``words``: the windows' size, ``embeddings.window_words``, 0: none)."""
    return f"v{VERSION}:{state}" + (f"/w{words}" if words > 0 else "")


def stored_fit(conn: sqlite3.Connection, model: str) -> str | None:
    """The fingerprint of ``model``'s stored fit, when its probes' row and its knobs agree
    (as :func:`briefd.retrieval.calibration.load` reads them); None: no usable fit."""
    row = conn.execute(
        "SELECT fingerprint, probes, length(probe_vectors) FROM calibration WHERE model = ?",
        (model,),
    ).fetchone()
    knobs = conn.execute("SELECT value FROM index_meta WHERE key = ?", (META + model,)).fetchone()
    if row is None or not row[1] or not row[2] or knobs is None or not knobs[0]:
        return None
    try:
        data = json.loads(knobs[0])
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("fingerprint") != row[0]:
        return None
    return str(row[0])


def earlier_fit(fingerprint: str) -> tuple[str, ...]:
    """What to tell of a stored fit (its ``fingerprint``) that an earlier release made — a
    search gated by it empties what this release's fit may keep, and keeps what it may empty,
    until ``briefd index`` refits it; () for this release's fit."""
    made, sep, _ = fingerprint.partition(":")
    if sep and made == f"v{VERSION}":
        return ()
    by = (
        f"fit v{made[1:]}"
        if sep and made[:1] == "v" and made[1:].isdigit()
        else "an unversioned fit"
    )
    return (
        f"the relevance gate was fitted to this index by an earlier briefd ({by}; this one "
        f"fits v{VERSION}), and gates this search so until an index run refits it: run "
        "`briefd index` (no document needs to change)",
    )
