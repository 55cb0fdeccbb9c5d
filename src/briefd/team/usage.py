"""Usage feedback (T2): which sections of a bundle an agent found useful."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Sequence

from briefd.bundles.cache import manifest as bundle_manifest
from briefd.bundles.compile import unsaved_manifest
from briefd.errors import NotFoundError, QueryError, StoreError
from briefd.settings import Settings
from briefd.store import activity
from briefd.store.activity import UsageReceipt
from briefd.store.db import Store

MAX_LISTED = 10  # chunk ids named in a report_usage error
WAIT_MS = 200  # for another process's write; then the report waits in memory (Store.defer)


def report_usage(
    store: Store,
    settings: Settings,
    bundle_id: str,
    useful_chunk_ids: Sequence[str] = (),
    client: str | None = None,
) -> UsageReceipt:
    """Store which sections of a bundle were useful (no ranking effect yet). The bundle must be
    one this index issued (remembered ``bundles.manifest_days``) and every chunk id one of its
    sections; otherwise nothing is stored (:class:`NotFoundError`, :class:`QueryError`)."""
    bundle_id = bundle_id.strip()
    if not bundle_id:
        raise QueryError("bundle_id is empty; pass the bundle_id that compile_bundle returned")
    ids = tuple(dict.fromkeys(c.strip() for c in useful_chunk_ids if c.strip()))
    _check(store, settings, bundle_id, ids)
    with store.read() as conn:
        known = activity.existing_chunk_ids(conn, ids)
    at = activity.now_iso()

    def save(conn: sqlite3.Connection) -> None:
        activity.save_usage(conn, bundle_id, ids, client, at)

    try:
        with store.write(wait_ms=WAIT_MS) as conn:
            save(conn)
    except StoreError:  # another process writes (a reindex), or the disk is full: later
        store.defer(f"usage:{bundle_id}:{secrets.token_hex(8)}", save)
    return UsageReceipt(bundle_id, max(len(ids), 1), ids, tuple(c for c in ids if c not in known))


def _check(store: Store, settings: Settings, bundle_id: str, given: Sequence[str]) -> None:
    with store.read() as conn:
        held = bundle_manifest(conn, bundle_id) or unsaved_manifest(store, bundle_id)
    if held is None:
        raise NotFoundError(
            f"no bundle '{bundle_id}' was issued by this index (bundles are remembered "
            f"for {settings.bundles.manifest_days} days); pass the bundle_id that "
            "compile_bundle (POST /api/bundle, `briefd bundle`) returned"
        )
    sections = [s.chunk_id for s in held[1]]
    strangers = [c for c in given if c not in sections]
    if strangers:
        listing = ", ".join(sections[:MAX_LISTED]) + (", …" if len(sections) > MAX_LISTED else "")
        raise QueryError(
            f"not sections of bundle {bundle_id}: {', '.join(strangers[:MAX_LISTED])}; "
            f"nothing was stored. Report chunk ids of its sections: {listing or 'none'}"
        )
