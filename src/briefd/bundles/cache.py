"""Bundle cache (B3): key = hash of the request and the knowledge state; an in-process LRU in
front of the SQLite ``bundles`` table; hit counts flushed lazily so a hit never waits on a
write lock. ``bundle_manifests`` remembers what each bundle held, for incremental reuse (B5),
longer than the cache rows themselves."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from briefd.__about__ import __version__
from briefd.bundles.model import (
    Bundle,
    BundleCacheStats,
    BundleItem,
    BundleMode,
    Diagnostics,
    Exclusion,
    ItemDrift,
)
from briefd.bundles.render import held
from briefd.settings import Settings
from briefd.state import Manifest

# b3: modes, tiers by name, hard limits, targets, tags; b4: packages packed by their JSON,
# manifests of what the client holds, the issue named by its key, markers with the scope;
# b5: items packed with their drift (T4), the drift in the key; b6: the whole answer counted
# (envelope, a Markdown bundle's metadata and escaping); b7: a section's fence or HTML block
# left open by its document closed in the block; b8: a title over several lines put on the
# attribution line; b9: the gate off when nothing was searched; b10: a section's first line
# keeps its indentation in the block; b11: paths cleaned and matched as folders, tags before the
# related cap, a heading's own section linked (R5, R6, B8); b12: a superseded document's
# sections say so (K2); b13: a truncated section's marker names its first line (get_document
# reads long documents in parts); b14: a package's and a manifest's text as compact JSON (it was
# indented, over the tokens it reported); b15: a relation naming a section brings it first, a
# second hop comes only beside its first, a truncated section's call quotes its path as JSON
# (B8, B7); b16: a governing section the governed share has no room for competes as the ranked
# hit it is (B1); b17: the linked sections past the tier's cap are in the exclusions (B4); b18:
# a target over the hard limit comes from its top as far as the limit holds (B7); b19: issue
# text over the hard limit is cut to its share, as a live issue is (B1); b20: an always: true
# document over the hard limit comes from its top as far as the limit holds (B7). The
# release is in the key too: a bundle stored by an older briefd is never served
# by a newer one
CACHE_VERSION = "b20"


@dataclass(frozen=True, slots=True)
class CacheKey:
    """``key`` covers the request and the knowledge state; ``request_key`` only the request,
    so a base bundle from an older state can be recognised as the same request."""

    key: str
    request_key: str

    @property
    def bundle_id(self) -> str:
        return self.key[:16]


@dataclass(frozen=True, slots=True)
class StoredSection:
    """A section of a manifest; ``fingerprint`` is of what the client holds
    (:func:`briefd.bundles.render.held`: content and location), not the content alone."""

    chunk_id: str
    fingerprint: str
    tokens: int


def held_sections(bundle: Bundle) -> tuple[tuple[str, str, int], ...]:
    """(chunk id, held fingerprint, tokens) of each section: what a manifest remembers."""
    return tuple((i.chunk_id, held(i), i.tokens) for i in bundle.items)


def cache_key(
    *,
    task: str,
    issue: str | None,
    target: str | None,
    scopes: Sequence[str],
    paths: Sequence[str],
    tags: Sequence[str],
    max_tokens: int,
    hard_limit: int,
    mode: BundleMode,
    search_mode: str,
    index_fingerprint: str,
    model: str,
    ranking_version: str,
    settings: str,
    drift: str,
    dates: str,
    warnings: Sequence[str],
) -> CacheKey:
    """Every request field that shapes the bundle; ``settings``: :func:`settings_digest`
    (tuned weights change the bundle too); ``drift``: the drift state
    (:func:`briefd.store.code.drift_state`: drift is packed with the items, so a change of it
    is a new bundle); ``dates``: the documents' "updated" days
    (:func:`briefd.store.documents.dates_state`), which attribution lines show; ``warnings``:
    the request's own (a default scope the index lacks), whose room the packer keeps back: a
    state, not the request (a base from before the scope was indexed is still comparable)."""
    request = {
        "version": CACHE_VERSION,
        "task": task,
        "issue": issue or "",
        "target": target or "",
        "scopes": sorted(scopes),
        "paths": sorted(paths),
        "tags": sorted(tags),
        "max_tokens": max_tokens,
        "hard_limit": hard_limit,
        "mode": mode,
        "search_mode": search_mode,
    }
    state = {
        "release": __version__,
        "index": index_fingerprint,
        "model": model,
        "ranking": ranking_version,
        "settings": settings,
        "drift": drift,
        "dates": dates,
        "warnings": list(warnings),
    }
    request_key = _sha256(request)
    return CacheKey(_sha256({"request": request_key, **state}), request_key)


@functools.lru_cache(maxsize=16)
def settings_digest(settings: Settings) -> str:
    """The settings that shape a bundle's content: search and bundles (not cache sizes), and
    how a task is scored against the vectors (section windows, prefixes)."""
    embeddings = settings.embeddings
    shaping = {
        "search": dataclasses.asdict(settings.search),
        "embeddings": [embeddings.window_words, embeddings.query_prefix, embeddings.passage_prefix],
        "bundles": {
            k: v
            for k, v in dataclasses.asdict(settings.bundles).items()
            if k not in ("cache_entries", "manifest_days")
        },
    }
    return _sha256(shaping)[:16]


def _sha256(value: object) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class BundleCache:
    """The in-process LRU and counters; SQLite access goes through the connection passed in."""

    def __init__(self, entries: int) -> None:
        self._entries = max(entries, 0)
        self._lru: OrderedDict[str, Bundle] = OrderedDict()
        self._pending_hits: dict[str, int] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Bundle | None:
        with self._lock:
            bundle = self._lru.get(key)
            if bundle is not None:
                self._lru.move_to_end(key)
                self._count_hit(bundle.bundle_id)
            return bundle

    def put(self, key: str, bundle: Bundle, hit: bool) -> None:
        with self._lock:
            if hit:
                self._count_hit(bundle.bundle_id)
            else:
                self.misses += 1
            if self._entries:
                self._lru[key] = bundle
                self._lru.move_to_end(key)
                while len(self._lru) > self._entries:
                    self._lru.popitem(last=False)

    def _count_hit(self, bundle_id: str) -> None:
        self.hits += 1
        self._pending_hits[bundle_id] = self._pending_hits.get(bundle_id, 0) + 1

    def take_pending_hits(self) -> dict[str, int]:
        with self._lock:
            pending, self._pending_hits = self._pending_hits, {}
            return pending

    def restore_pending_hits(self, pending: dict[str, int]) -> None:
        with self._lock:
            for bundle_id, count in pending.items():
                self._pending_hits[bundle_id] = self._pending_hits.get(bundle_id, 0) + count

    def clear(self) -> None:
        with self._lock:
            self._lru.clear()

    def stats(self) -> BundleCacheStats:
        with self._lock:
            return BundleCacheStats(self.hits, self.misses, len(self._lru))


# -- SQLite side ----------------------------------------------------------------------------


def load(conn: sqlite3.Connection, key: str) -> Bundle | None:
    """A bundle another process (or an earlier run) compiled for the same key."""
    row = conn.execute(
        "SELECT id, format, content, sections FROM bundles WHERE cache_key = ?", (key,)
    ).fetchone()
    if row is None:
        return None
    stored = json.loads(row["sections"])
    items = tuple(_item(i) for i in stored["items"])
    diagnostics = _diagnostics(stored["diagnostics"])
    target = stored.get("target")
    return Bundle(row["id"], row["format"], row["content"], items, diagnostics, target, cached=True)


def _item(raw: dict[str, Any]) -> BundleItem:
    drift = raw.get("drift")
    return BundleItem(
        **{
            **raw,
            "heading_path": tuple(raw["heading_path"]),
            "reasons": tuple(raw["reasons"]),
            "drift": ItemDrift(**drift) if drift else None,
            "superseded_by": tuple(raw.get("superseded_by", ())),
        }
    )


def _diagnostics(raw: dict[str, Any]) -> Diagnostics:
    exclusions = tuple(Exclusion(**e) for e in raw["exclusions"])
    return Diagnostics(**{**raw, "exclusions": exclusions, "scopes": tuple(raw["scopes"])})


def _diagnostics_row(d: Diagnostics) -> dict[str, object]:
    """``dataclasses.asdict(d)``, its exclusions without a deep copy each (40,000 of them, a
    target cut at the hard limit, took 2 s)."""
    row: dict[str, object] = {f.name: getattr(d, f.name) for f in dataclasses.fields(d)}
    row["exclusions"] = [{f: getattr(e, f) for f in _EXCLUSION_FIELDS} for e in d.exclusions]
    return row


_EXCLUSION_FIELDS = tuple(f.name for f in dataclasses.fields(Exclusion))


def save(
    conn: sqlite3.Connection,
    key: CacheKey,
    bundle: Bundle,
    task: str,
    scopes: Sequence[str],
    paths: Sequence[str],
    max_tokens: int,
) -> None:
    now = now_iso()
    stored = json.dumps(
        {
            "items": [dataclasses.asdict(i) for i in bundle.items],
            "diagnostics": _diagnostics_row(bundle.diagnostics),
            "target": bundle.target,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
    conn.execute(
        """INSERT OR IGNORE INTO bundles (id, cache_key, task, scopes, paths, max_tokens, format,
               index_fingerprint, model, content, tokens, sections, truncated, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            bundle.bundle_id,
            key.key,
            task,
            json.dumps(sorted(scopes)),
            json.dumps(sorted(paths)),
            max_tokens,
            bundle.mode,
            bundle.diagnostics.index_fingerprint,
            bundle.diagnostics.embedding_model,
            bundle.text,
            bundle.tokens,
            stored,
            int(bundle.diagnostics.truncated),
            now,
        ),
    )
    save_manifest(conn, bundle.bundle_id, key.request_key, held_sections(bundle), now)


def save_manifest(
    conn: sqlite3.Connection,
    bundle_id: str,
    request_key: str,
    sections: Sequence[tuple[str, str, int]],
    at: str,
) -> None:
    """What a bundle holds (ids, held fingerprints, tokens: never its text), for ``base=`` and
    ``report_usage``."""
    row = json.dumps([list(s) for s in sections], separators=(",", ":"))
    conn.execute(
        "INSERT OR IGNORE INTO bundle_manifests (id, request_key, sections, created_at) "
        "VALUES (?, ?, ?, ?)",
        (bundle_id, request_key, row, at),
    )


def add_hits(conn: sqlite3.Connection, pending: dict[str, int]) -> None:
    """Count the hits; a bundle served again is remembered ``manifest_days`` from now (its
    caller may still report usage or send it as ``base``)."""
    hits = sorted(pending.items())
    conn.executemany("UPDATE bundles SET hits = hits + ? WHERE id = ?", [(n, i) for i, n in hits])
    now = now_iso()
    conn.executemany(
        "UPDATE bundle_manifests SET created_at = ? WHERE id = ?", [(now, i) for i, _ in hits]
    )


def manifest(
    conn: sqlite3.Connection, bundle_id: str
) -> tuple[str, tuple[StoredSection, ...]] | None:
    """(request key, sections) of a bundle issued earlier, or None if unknown."""
    row = conn.execute(
        "SELECT request_key, sections FROM bundle_manifests WHERE id = ?", (bundle_id,)
    ).fetchone()
    if row is None:
        return None
    sections = tuple(StoredSection(c, f, int(t)) for c, f, t in json.loads(row[1]))
    return str(row[0]), sections


def stored_sections(manifest: Manifest) -> tuple[StoredSection, ...]:
    """The sections of a manifest from the shared state."""
    return tuple(StoredSection(c, f, t) for c, f, t in manifest.sections)


def prune(conn: sqlite3.Connection, fingerprint: str, manifest_days: int) -> int:
    """Drop cache rows of other knowledge states and manifests older than ``manifest_days``."""
    gone = conn.execute("DELETE FROM bundles WHERE index_fingerprint != ?", (fingerprint,))
    cutoff = (datetime.now(UTC) - timedelta(days=manifest_days)).isoformat(timespec="seconds")
    conn.execute("DELETE FROM bundle_manifests WHERE created_at < ?", (cutoff,))
    return gone.rowcount


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
