"""The nouns of context bundles (B1–B5): requests, candidates, packed items, diagnostics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

BundleFormat = Literal["markdown", "json", "manifest"]
FORMATS: tuple[BundleFormat, ...] = ("markdown", "json", "manifest")
Tier = Literal[1, 2, 3, 4]
TIER_NAMES: dict[int, str] = {1: "issue", 2: "refs", 3: "ranked", 4: "related"}
MIN_TOKENS = 100  # below this the attribution line and the truncation marker leave no room
MAX_TOKENS = 200_000


@dataclass(frozen=True, slots=True)
class BundleRequest:
    """What a caller asks for. ``issue`` is the tracker issue's text (it heads the bundle and
    joins the retrieval query); ``paths`` are code paths the task touches; ``base`` is the
    ``bundle_id`` of a bundle the caller already holds (B5)."""

    task: str
    max_tokens: int = 2000
    scopes: tuple[str, ...] | None = None
    paths: tuple[str, ...] = ()
    format: BundleFormat = "markdown"
    base: str | None = None
    issue: str | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A section competing for a place in the bundle, in collection order within its tier."""

    chunk_id: str
    doc_path: str
    scope: str
    title: str
    heading_path: tuple[str, ...]
    content: str
    score: float
    tier: Tier
    reasons: tuple[str, ...]
    start_line: int
    end_line: int
    updated_at: str
    related_to: str | None = None
    weak: str | None = None  # why a ranked hit is too weak to earn a place, when it is


@dataclass(frozen=True, slots=True)
class ItemDrift:
    """T4: code commits touched what the item's document governs since its last change; the
    rule may be stale. Describes this answer (as ``cached`` does), never part of ``text``."""

    commits: int
    since: str


@dataclass(frozen=True, slots=True)
class BundleItem:
    """A section as packed: ``content`` may be a truncated head; ``tokens`` counts the whole
    rendered section (attribution line included)."""

    chunk_id: str
    doc_path: str
    scope: str
    title: str
    heading_path: tuple[str, ...]
    content: str
    score: float
    tier: Tier
    reasons: tuple[str, ...]
    start_line: int
    end_line: int
    updated_at: str
    tokens: int
    fingerprint: str
    truncated: bool = False
    drift: ItemDrift | None = None


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A candidate the packer skipped, and why."""

    chunk_id: str
    doc_path: str
    tier: Tier
    reason: str
    tokens: int


@dataclass(frozen=True, slots=True)
class Diagnostics:
    estimator: str
    budget: int
    effective_budget: int
    tokens: int
    truncated: bool
    exclusions: tuple[Exclusion, ...]
    ranking_version: str
    index_fingerprint: str
    embedding_model: str
    mode: str
    gate: str
    scopes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeltaEntry:
    """One position of the new bundle: ``reuse`` a section the caller holds, or ``replace``
    it with ``item`` (a changed or new section)."""

    op: Literal["reuse", "replace"]
    chunk_id: str
    item: BundleItem | None = None


@dataclass(frozen=True, slots=True)
class BundleDelta:
    base: str
    entries: tuple[DeltaEntry, ...]
    removed: tuple[str, ...]
    tokens_saved: int


@dataclass(frozen=True, slots=True)
class Packed:
    """The pure packer's output: items in display order, what it skipped, whether a head was
    cut."""

    items: tuple[BundleItem, ...]
    exclusions: tuple[Exclusion, ...]
    truncated: bool


@dataclass(frozen=True, slots=True)
class BundleCacheStats:
    hits: int
    misses: int
    entries: int


@dataclass(frozen=True, slots=True)
class Bundle:
    """A compiled bundle. ``text`` is the output in the requested format and is byte-identical
    for the same request and knowledge state; ``cached``, ``recovered`` and ``delta`` describe
    this particular answer and are never part of ``text``."""

    bundle_id: str
    format: BundleFormat
    text: str
    items: tuple[BundleItem, ...]
    diagnostics: Diagnostics
    cached: bool = False
    recovered: bool = False
    delta: BundleDelta | None = None

    @property
    def tokens(self) -> int:
        """Tokens of the assembled sections (the Markdown block an agent reads)."""
        return self.diagnostics.tokens

    def to_dict(self) -> dict[str, object]:
        """The JSON-ready envelope REST and MCP return."""
        out: dict[str, object] = {
            "bundle_id": self.bundle_id,
            "format": self.format,
            "text": self.text,
            "tokens": self.tokens,
            "cached": self.cached,
            "recovered": self.recovered,
        }
        with_content = self.format != "manifest"
        if self.delta is None:
            out["items"] = [item_dict(i, with_content) for i in self.items]
        else:
            out["delta"] = delta_dict(self.delta, with_content)
        out["diagnostics"] = diagnostics_dict(self.diagnostics)
        return out


def item_dict(item: BundleItem, with_content: bool = True) -> dict[str, object]:
    out: dict[str, object] = {
        "chunk_id": item.chunk_id,
        "doc_path": item.doc_path,
        "scope": item.scope,
        "title": item.title,
        "heading_path": list(item.heading_path),
        "tier": item.tier,
        "tier_name": TIER_NAMES[item.tier],
        "reasons": list(item.reasons),
        "score": item.score,
        "tokens": item.tokens,
        "updated_at": item.updated_at,
        "location": {
            "path": item.doc_path,
            "start_line": item.start_line,
            "end_line": item.end_line,
        },
        "fingerprint": item.fingerprint,
        "truncated": item.truncated,
    }
    if item.drift is not None:
        out["drift"] = {"commits": item.drift.commits, "since": item.drift.since}
    if with_content:
        out["content"] = item.content
    return out


def diagnostics_dict(diag: Diagnostics) -> dict[str, object]:
    return {
        "estimator": diag.estimator,
        "budget": diag.budget,
        "effective_budget": diag.effective_budget,
        "tokens": diag.tokens,
        "truncated": diag.truncated,
        "exclusions": [
            {
                "chunk_id": e.chunk_id,
                "doc_path": e.doc_path,
                "tier": e.tier,
                "reason": e.reason,
                "tokens": e.tokens,
            }
            for e in diag.exclusions
        ],
        "ranking_version": diag.ranking_version,
        "index_fingerprint": diag.index_fingerprint,
        "embedding_model": diag.embedding_model,
        "mode": diag.mode,
        "gate": diag.gate,
        "scopes": list(diag.scopes),
    }


def delta_dict(delta: BundleDelta, with_content: bool = True) -> dict[str, object]:
    return {
        "base": delta.base,
        "entries": [
            {"op": "reuse", "chunk_id": e.chunk_id}
            if e.item is None
            else {"op": "replace", "chunk_id": e.chunk_id, "item": item_dict(e.item, with_content)}
            for e in delta.entries
        ],
        "removed": list(delta.removed),
        "tokens_saved": delta.tokens_saved,
    }
