"""The nouns of context bundles (B1–B8): requests, candidates, packed items, diagnostics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

BundleMode = Literal["markdown", "package", "manifest"]
MODES: tuple[BundleMode, ...] = ("markdown", "package", "manifest")
MODE_ALIASES: dict[str, BundleMode] = {"json": "package"}  # its name before schema 2
SCHEMA_VERSION = 2  # of every bundle response: 2 has modes, tiers by name, hard limits

Tier = Literal["mandatory", "structural", "governed", "linked", "ranked", "related"]
TIERS: tuple[Tier, ...] = ("mandatory", "structural", "governed", "linked", "ranked", "related")
TIER_ORDER: dict[str, int] = {tier: order for order, tier in enumerate(TIERS)}

MIN_TOKENS = 100  # accepted; under ~200 the answer's envelope leaves no room (a warning says so)
MAX_TOKENS = 200_000
HARD_LIMIT_FACTOR = 4  # the default hard limit is this many times the budget
MAX_HARD_LIMIT = HARD_LIMIT_FACTOR * MAX_TOKENS


@dataclass(frozen=True, slots=True)
class BundleRequest:
    """What a caller asks for. ``max_tokens`` is the soft budget that optional content fills;
    ``hard_limit`` (default 4× the budget) the ceiling above which mandatory content is
    reported as exceeded. ``issue`` is a tracker issue's text and ``target`` a document path
    (both mandatory content); ``paths`` are code paths the task touches; ``tags`` keep ranked
    and governed content to documents with any of them; ``base`` is the ``bundle_id`` of a
    bundle the caller already holds (B5)."""

    task: str
    max_tokens: int = 2000
    scopes: tuple[str, ...] | None = None
    paths: tuple[str, ...] = ()
    mode: BundleMode = "markdown"
    base: str | None = None
    issue: str | None = None
    hard_limit: int | None = None
    target: str | None = None
    tags: tuple[str, ...] = ()

    @property
    def ceiling(self) -> int:
        """The hard limit in effect (always finite)."""
        if self.hard_limit is None:
            return HARD_LIMIT_FACTOR * self.max_tokens
        return self.hard_limit


@dataclass(frozen=True, slots=True)
class ItemDrift:
    """T4: code commits touched what the item's document governs since its last change; the
    rule may be stale. Known before packing and counted within the budget as the client
    receives it: a ``drift`` field of the item's JSON, a note after the Markdown block
    (:func:`briefd.bundles.render.drift_notes`); never inside the block itself."""

    commits: int
    since: str


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
    drift: ItemDrift | None = None  # its document drifts from the code (T4)
    superseded_by: tuple[str, ...] = ()  # documents superseding its document (K2)


@dataclass(frozen=True, slots=True)
class BundleItem:
    """A section as packed: ``content`` may be a truncated head; ``tokens`` is what the
    bundle's output spends on it: the rendered section, attribution line included (markdown),
    or its item as compact JSON (package, manifest: see :mod:`briefd.bundles.measure`)."""

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
    superseded_by: tuple[str, ...] = ()  # on its attribution line (markdown), a field (JSON)


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
    """How a bundle was made. ``tokens`` counts the answer as a client receives it: the
    sections as the mode delivers them (the assembled Markdown block, or a package's items as
    compact JSON), the envelope around them and the warnings; it exceeds the budget only
    when mandatory content does, and ``overage`` is what it has over the hard limit (then
    ``budget_exceeded``)."""

    estimator: str
    budget: int
    effective_budget: int
    hard_limit: int
    tokens: int
    budget_exceeded: bool
    overage: int
    truncated: bool
    exclusions: tuple[Exclusion, ...]
    ranking_version: str
    index_fingerprint: str
    embedding_model: str
    search_mode: str
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
    """A compiled bundle. ``text`` is the output in the requested mode (the Markdown block,
    or the package / manifest as JSON: the answer as sent, ``cached`` left out) and is
    byte-identical for the same request and knowledge state; ``cached`` describes this
    particular answer and is never part of ``text``. ``target``: the document a context was
    compiled around."""

    bundle_id: str
    mode: BundleMode
    text: str
    items: tuple[BundleItem, ...]
    diagnostics: Diagnostics
    target: str | None = None
    cached: bool = False
    recovered: bool = False
    delta: BundleDelta | None = None
    state_error: str | None = None  # the shared state could not take this bundle's manifest
    warnings: tuple[str, ...] = ()  # a default scope the index lacks; a budget fitting nothing

    @property
    def tokens(self) -> int:
        """Tokens of the sections as the mode delivers them (see :class:`Diagnostics`)."""
        return self.diagnostics.tokens

    @property
    def knowledge(self) -> tuple[BundleItem, ...]:
        """The items of indexed documents: the tracker issue heading a bundle (no document of
        the index) is the caller's, not an answer of the knowledge (the query log, T3, T6)."""
        return tuple(i for i in self.items if i.doc_path)
