"""What every index run — and so every sync — also does for the team's reports: prune the
query log and usage feedback past ``activity.retention_days`` (T6), and on replicas the
vectors of phrasings the shared log no longer holds, and refresh drift against
the code repositories (T4), and measure the levels keyword recall answers are tiered on (I8,
:mod:`briefd.recall.keywords`). None ever fails the index run: a problem is logged, and a code
repository's error is kept with its state (``briefd drift`` shows it)."""

from __future__ import annotations

import logging

from briefd.errors import BriefdError
from briefd.recall import keywords
from briefd.settings import Settings
from briefd.state import SharedState
from briefd.store.db import Store
from briefd.team import activity, drift

log = logging.getLogger("briefd.team")


def after_index(store: Store, settings: Settings, state: SharedState) -> None:
    try:
        with store.write() as conn:
            activity.prune(conn, settings.activity)
        if state.shared:
            activity.prune_shared_vectors(store, state)
        drift.refresh(store, settings)
        keywords.refresh(store, settings)
    except BriefdError as exc:
        log.warning("after indexing: %s", exc)
