"""The nouns of briefd: frozen dataclasses passed between the pure core and its edges."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

LinkKind = Literal["wiki", "markdown", "relation"]  # relation: a front-matter relation (B8)
SearchMode = Literal["bm25", "vector", "hybrid"]
GateVerdict = Literal["off", "kept", "empty"]


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """The recognised front-matter keys of a document (K2)."""

    title: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    relations: tuple[tuple[str, str], ...] = ()  # (relation, target): depends_on, parent… (B8)
    always: bool = False  # part of every bundle of its scopes, whole (B8)


@dataclass(frozen=True, slots=True)
class Heading:
    """An H1–H3 heading: ``text`` never includes its ``{#anchor}``; ``line`` is 1-based."""

    level: int
    text: str
    anchor: str | None
    line: int


@dataclass(frozen=True, slots=True)
class Link:
    """A link written in a document, with its provenance (K5)."""

    source_path: str
    section: str
    line: int
    target: str
    fragment: str | None
    display: str | None
    kind: LinkKind


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable section of a document (K4). Lines are 1-based and inclusive."""

    id: str
    doc_path: str
    heading: str
    heading_path: tuple[str, ...]
    anchor: str | None
    content: str
    tokens: int
    content_hash: str
    position: int
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed knowledge document, ready to be stored."""

    path: str
    scope: str
    title: str
    front_matter: FrontMatter
    content_hash: str
    body: str
    body_start_line: int
    headings: tuple[Heading, ...]
    chunks: tuple[Chunk, ...]
    links: tuple[Link, ...]
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class DocumentProblem:
    path: str
    problem: str


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one ``briefd index`` run did."""

    source: str
    documents: int
    chunks: int
    added: tuple[str, ...]
    changed: tuple[str, ...]
    deleted: tuple[str, ...]
    unchanged: int
    skipped: tuple[SkippedFile, ...]
    problems: tuple[DocumentProblem, ...]
    fingerprint: str
    seconds: float
    rebuilt: bool = False
    embedding_model: str | None = None
    embedded: int = 0
    replaced_models: tuple[str, ...] = ()  # the index held vectors of these models: re-embedded
    vectors_missing: int = 0
    embedding_error: str | None = None
    rechunked: bool = False  # every document was read again (chunker, chunking or scopes)
    relinked: bool = False  # every link resolved again only (link resolution, default_scopes)
    window_words: int = 0  # embeddings.window_words of the run (0: no section windows)
    windows: int = 0  # section windows the index holds vectors of, at that size
    warnings: tuple[str, ...] = ()  # about the settings against this index (default_scopes)
    waited_seconds: float = 0.0  # for another run of this index before this one (not in seconds)
    fitting_seconds: float = 0.0  # of seconds: fitting the gate and recall to the index (R4, I8)


@dataclass(frozen=True, slots=True)
class HitExplain:
    """Why a hit ranks where it does (R3 explain): each list's rank and raw score, and the
    RRF contribution of every list the hit appears in."""

    and_rank: int | None
    and_bm25: float | None
    any_rank: int | None
    any_bm25: float | None
    vector_rank: int | None
    cosine: float | None
    contributions: tuple[tuple[str, float], ...]
    # with section windows (embeddings.window_words): the closest window's cosine; ``cosine``
    # is the best of it and the section's own
    window_cosine: float | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    chunk_id: str
    doc_path: str
    scope: str
    title: str
    heading: str
    heading_path: tuple[str, ...]
    content: str
    score: float
    tokens: int
    start_line: int
    end_line: int
    explain: HitExplain | None = None
    related_to: str | None = None  # R6: the chunk id of the direct hit this one is linked from
    # documents whose front matter says they supersede this one's (K2): prefer them
    superseded_by: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    mode: SearchMode
    scopes: tuple[str, ...]
    hits: tuple[Hit, ...]
    ranking_version: str
    took_ms: float
    sql: tuple[str, ...] = field(default=())
    gate: GateVerdict = "off"
    embedding_model: str | None = None
    gate_reasons: tuple[str, ...] = ()  # why the relevance gate kept or emptied the result
    warnings: tuple[str, ...] = ()  # a default scope the index lacks, no vectors of the model


@dataclass(frozen=True, slots=True)
class ScopeInfo:
    name: str
    documents: int
    chunks: int


OUTSIDE_SCOPES = "outside-scopes"  # a link shown to a caller who may not read its target


@dataclass(frozen=True, slots=True)
class ResolvedLink:
    """A stored link with its resolution: ``status`` is ok, broken, ambiguous or bad-anchor;
    a read limited to some scopes shows a link into another one as ``OUTSIDE_SCOPES``."""

    link: Link
    target_path: str | None
    status: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class DocumentView:
    """A document as ``briefd doc`` / ``get_document`` show it."""

    path: str
    scope: str
    title: str
    front_matter: FrontMatter
    body: str
    updated_at: str
    chunks: tuple[Chunk, ...]
    links: tuple[ResolvedLink, ...]
    backlinks: tuple[ResolvedLink, ...]
    problems: tuple[str, ...]
    body_start_line: int = 1  # the file line the body starts at (after the front matter)


@dataclass(frozen=True, slots=True)
class LinkFindings:
    broken: tuple[ResolvedLink, ...]
    ambiguous: tuple[ResolvedLink, ...]
    unknown_anchors: tuple[ResolvedLink, ...]
    duplicate_anchors: tuple[tuple[str, str, tuple[int, ...]], ...]
    orphans: tuple[str, ...]
    # links from current documents to one another document supersedes (detail: by which)
    to_superseded: tuple[ResolvedLink, ...] = ()
