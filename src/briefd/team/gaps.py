"""The knowledge-gap report (T3): what agents ask that the knowledge does not answer.

Logged queries are grouped by their grouping key (folded terms, stop words dropped, sorted;
stored as a salted hash, so hashed prompts group too), and — when vectors are on — weak
groups whose phrasings are near-duplicates by embedding are merged. A group's *weakness* is
the larger of the share of requests that came back empty (or with a bundle an agent reported
as helping with nothing, ``report_usage`` naming no section) and how far its best score stays
below the median best score of the window's answered query groups of the same kind (0:
answered as well as a typical question; 1: nothing came back): a hook prompt answered by BM25
scores on a scale of its own, a search or a bundle on the fused one. Gaps are the groups at
least ``GAP_WEAKNESS`` weak, ranked by frequency × weakness. A group any of whose bundles was reported useful (T2) is no
gap: the knowledge answered it, and neither is a group of hook prompts recall read as everyday
chatter ("continue", "thanks, go on": logged with the gate ``generic``), counted apart.
"""

from __future__ import annotations

import logging
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace

import numpy as np

from briefd.atlassian.query import named_issue
from briefd.embeddings.base import Embedder, Vectors
from briefd.errors import EmbeddingError, QueryError, StoreError
from briefd.settings import Settings
from briefd.state import SharedState
from briefd.store import reports
from briefd.store.db import Store, opened
from briefd.team.period import iso, since_cutoff
from briefd.team.shared import mirror_team_log

log = logging.getLogger("briefd.team")
GAP_WEAKNESS = 0.5
NEAR_DUPLICATE = 0.9  # cosine at which two phrasings are one question
MAX_EMBEDDED = 200  # weak groups compared by embedding (the strongest candidates)
EMBED_BATCH = 32
CACHE_WAIT_MS = 100  # the vectors of phrasings are a cache: never worth waiting for
SECTIONS_SHOWN = 3
GENERIC_LEFT_OUT = "hook prompts read as everyday chatter, such as 'continue' or 'thanks, go on'"
UNLOGGED_BY = "activity.log_prompts: off, or for hook prompts activity.log_hook_prompts: off"


Guard = AbstractContextManager[object] | None  # held while phrasings are embedded


@dataclass(frozen=True, slots=True)
class GapsRequest:
    since: str = "30d"
    min_count: int = 1
    limit: int = 20
    offset: int = 0  # gaps skipped, in their order (the next page)


@dataclass(frozen=True, slots=True)
class GapSection:
    """A section a gap's queries got, and how often; ``doc_path`` is None when it is no
    longer in the index."""

    chunk_id: str
    doc_path: str | None
    heading: str | None
    served: int


@dataclass(frozen=True, slots=True)
class Gap:
    """One group of similar queries. ``query`` is a phrasing as asked (None when prompts
    were logged hashed), ``variants`` the other phrasings merged into it."""

    key: str
    query: str | None
    variants: tuple[str, ...]
    asked: int
    surfaces: dict[str, int]
    empty: int
    gated: int
    best_score: float | None
    weakness: float
    rank: float
    kinds: tuple[str, ...]
    first_at: str
    last_at: str
    keys: tuple[str, ...] = ()
    sections: tuple[GapSection, ...] = ()
    best_scores: dict[str, float] = field(default_factory=dict)  # per kind
    unhelped: int = 0  # answered with a bundle reported as helping with nothing (T2)

    def documents(self) -> tuple[tuple[str, int], ...]:
        """The documents its queries got, each once (its sections come one by one), in the
        order of the sections (most served first), with the times their sections were
        served; a section no longer indexed stands for itself, by its chunk id."""
        served: dict[str, int] = {}
        for section in self.sections:
            name = section.doc_path or section.chunk_id
            served[name] = served.get(name, 0) + section.served
        return tuple(served.items())


@dataclass(frozen=True)  # no slots: the MCP SDK reads class attributes as defaults
class GapsReport:
    since: str
    groups: int  # query groups in the window
    reference_score: float | None  # that of searches (else bundles, else hook prompts)
    answered_useful: int  # groups left out: a bundle of theirs was reported useful
    unlogged: int  # entries logged without their query (UNLOGGED_BY)
    near_duplicates: bool  # phrasings merged by embedding similarity
    gaps: tuple[Gap, ...]
    # per kind, the median best score of the answered query groups
    reference_scores: dict[str, float] = field(default_factory=dict)
    generic: int = 0  # groups left out: hook prompts recall read as everyday chatter
    gaps_count: int = 0  # every gap asked min_count times or more; ``gaps`` lists ``limit``
    offset: int = 0  # how many gaps, in their order, come before those listed


def listed_some(report: GapsReport) -> bool:
    """Whether ``report.gaps`` leaves gaps out (its ``limit``, its ``offset``): a report then
    says how many there are, not only how many it lists."""
    return report.offset > 0 or len(report.gaps) < report.gaps_count


def weakness(
    asked: int,
    empty: int,
    bests: Mapping[str, float],
    references: Mapping[str, float],
    unhelped: int = 0,
) -> float:
    """0 (answered as well as a typical query) … 1 (nothing ever came back, or nothing that
    helped). Each kind's best score is weighed against the typical best score of its own kind
    (``references``), the group's strongest answer counts; a request whose bundle was reported
    as helping with nothing (``unhelped``) counts as one that came back empty."""
    empty_share = min(asked, empty + unhelped) / asked if asked else 0.0
    if not bests:
        return 1.0 if empty == asked else empty_share
    shares = [best / references[k] for k, best in bests.items() if references.get(k, 0) > 0]
    if not shares:
        return empty_share
    return round(max(empty_share, min(1.0, max(0.0, 1 - max(shares)))), 4)


def as_gap(group: reports.QueryGroup, references: Mapping[str, float], unhelped: int = 0) -> Gap:
    weak = weakness(group.asked, group.empty, group.bests, references, unhelped)
    return Gap(
        key=group.key,
        query=None,
        variants=(),
        asked=group.asked,
        surfaces=group.surfaces,
        empty=group.empty,
        gated=group.gated,
        best_score=group.best,
        weakness=weak,
        rank=round(group.asked * weak, 4),
        kinds=group.kinds,
        first_at=group.first_at,
        last_at=group.last_at,
        keys=(group.key,),
        best_scores=group.bests,
        unhelped=unhelped,
    )


# the scale each kind's best score is on: a bundle ranks by search's fused score, a hook prompt
# answered by BM25 scores on BM25's own
SCALES = {"search": "fused", "bundle": "fused", "recall": "recall"}


def reference_scores(groups: Sequence[reports.QueryGroup]) -> dict[str, float]:
    """Per kind, the median best score of the answered query groups on its scale (kinds none
    answered are left out): searches and hook prompts are not scored on one scale, searches
    and bundles are (one bundle, alone of its kind, is no yardstick for itself)."""
    found: dict[str, list[float]] = {}
    seen: set[str] = set()
    for g in groups:
        if g.asked > g.empty:
            seen.update(g.bests)
            for scale in {SCALES[k] for k in g.bests}:
                best = max(b for k, b in g.bests.items() if SCALES[k] == scale)
                found.setdefault(scale, []).append(best)
    return {k: float(np.median(found[SCALES[k]])) for k in reports.KINDS if k in seen}


def headline_reference(references: Mapping[str, float]) -> float | None:
    """The typical best score a report names first: that of searches, else of bundles, else
    of hook prompts."""
    return next((references[k] for k in reports.KINDS if k in references), None)


def ranked(gaps: Iterable[Gap]) -> list[Gap]:
    """Most asked × weakest first; then the most recent; then by key (stable output)."""
    by_key = sorted(gaps, key=lambda g: g.key)
    by_recent = sorted(by_key, key=lambda g: g.last_at, reverse=True)
    return sorted(by_recent, key=lambda g: g.rank, reverse=True)


def merge(into: Gap, other: Gap, references: Mapping[str, float]) -> Gap:
    """One gap of two near-duplicate ones (``into`` leads: its phrasing is shown)."""
    asked, empty = into.asked + other.asked, into.empty + other.empty
    scores = [s for s in (into.best_score, other.best_score) if s is not None]
    best = max(scores) if scores else None
    bests = dict(into.best_scores)
    for kind, score in other.best_scores.items():
        bests[kind] = max(score, bests.get(kind, score))
    unhelped = into.unhelped + other.unhelped
    weak = weakness(asked, empty, bests, references, unhelped)
    surfaces = Counter(into.surfaces) + Counter(other.surfaces)
    return replace(
        into,
        variants=(*into.variants, *([other.query] if other.query else []), *other.variants),
        asked=asked,
        surfaces={s: surfaces[s] for s in ("mcp", "rest", "hook") if surfaces[s]},
        empty=empty,
        gated=into.gated + other.gated,
        best_score=best,
        best_scores=bests,
        unhelped=unhelped,
        weakness=weak,
        rank=round(asked * weak, 4),
        kinds=tuple(sorted({*into.kinds, *other.kinds})),
        first_at=min(into.first_at, other.first_at),
        last_at=max(into.last_at, other.last_at),
        keys=(*into.keys, *other.keys),
    )


def merge_near_duplicates(
    gaps: Sequence[Gap], vectors: Vectors, references: Mapping[str, float]
) -> list[Gap]:
    """Greedy, in rank order: a gap joins the earlier one whose phrasing is the most similar,
    when at least ``NEAR_DUPLICATE`` (``vectors``: one L2-normalised row per gap) — but one
    asked by an issue alone (a bundle headed by ``SHOP-42``) only the first naming that issue:
    keys embed alike ("SHOP-42" and "SHOP-43" at 0.93), yet each is a task of its own."""
    issues = [named_issue(g.query or "") for g in gaps]
    leaders: list[int] = []
    merged: dict[int, Gap] = {}
    for i, gap in enumerate(gaps):
        lead = _lead(i, leaders, vectors, issues)
        if lead is not None:
            merged[lead] = merge(merged[lead], gap, references)
            continue
        leaders.append(i)
        merged[i] = gap
    return [merged[i] for i in leaders]


def _lead(
    i: int, leaders: Sequence[int], vectors: Vectors, issues: Sequence[str | None]
) -> int | None:
    """The gap among ``leaders`` that gap ``i`` joins, if any (:func:`merge_near_duplicates`)."""
    if issues[i] is not None:
        return next((lead for lead in leaders if issues[lead] == issues[i]), None)
    plain = [lead for lead in leaders if issues[lead] is None]
    if not plain:
        return None
    similar = vectors[plain] @ vectors[i]
    best = int(np.argmax(similar))
    return plain[best] if similar[best] >= NEAR_DUPLICATE else None


def gaps_report(
    settings: Settings,
    request: GapsRequest,
    embedder: Callable[[], Embedder | None],
    state: SharedState | None = None,
    lock: Guard = None,
) -> GapsReport:
    """The gaps since ``request.since`` (see the module docstring), read on a connection of
    its own. ``embedder`` gives the configured one (None: embeddings are off); when it cannot
    be loaded, or fails (a remote service away), phrasings are grouped without
    near-duplicates. ``lock`` (the server's) is held while phrasings are embedded, and only
    then: reading and grouping a long log holds up no search."""
    if request.min_count < 1 or request.limit < 1:
        raise QueryError("min_count and limit must be at least 1")
    if request.offset < 0:
        raise QueryError(f"offset must be 0 or more, got {request.offset}")
    try:
        vectors = embedder()
    except EmbeddingError as exc:
        log.warning("gaps without near-duplicate merging: %s", exc)
        vectors = None
    with opened(settings.db, settings.source) as store:
        if state is not None:  # replicas: the team's log and usage, not this index's
            mirror_team_log(store, state, iso(since_cutoff(request.since)))
        return _gaps(store, request, vectors, lock or nullcontext())


def _gaps(
    store: Store,
    request: GapsRequest,
    embedder: Embedder | None,
    lock: AbstractContextManager[object],
) -> GapsReport:
    since = iso(since_cutoff(request.since))
    with store.read() as conn:
        groups = reports.query_groups(conn, since)
        useful = reports.useful_keys(conn, since)
        unhelped = reports.unhelped_counts(conn, since)
        unlogged = reports.unhashed_entries(conn, since)
    references = reference_scores(groups)
    chatter = {g.key for g in groups if g.generic == g.asked} - useful  # always read so
    left_out = useful | chatter
    open_groups = [as_gap(g, references, unhelped[g.key]) for g in groups if g.key not in left_out]
    weak = ranked(g for g in open_groups if g.weakness >= GAP_WEAKNESS)
    if embedder is not None:
        head = with_phrasings(store, since, weak[:MAX_EMBEDDED])
        try:  # a remote service is first asked here: away, the report is made without it
            with lock:
                vectors = phrase_vectors(store, embedder, head)
        except EmbeddingError as exc:
            log.warning("gaps without near-duplicate merging: %s", exc)
            embedder = None
        else:
            merged = merge_near_duplicates(head, vectors, references)
            weak = ranked([*merged, *weak[MAX_EMBEDDED:]])
    found = [g for g in weak if g.asked >= request.min_count]
    start = request.offset
    chosen = with_phrasings(store, since, found[start : start + request.limit])
    with store.read() as conn:
        chosen = with_sections(conn, since, chosen)
    return GapsReport(
        since=since,
        groups=len(groups),
        reference_score=headline_reference(references),
        answered_useful=sum(1 for g in groups if g.key in useful),
        unlogged=unlogged,
        near_duplicates=embedder is not None,
        gaps=tuple(chosen),
        reference_scores=references,
        generic=len(chatter),
        gaps_count=len(found),
        offset=request.offset,
    )


def with_phrasings(store: Store, since: str, gaps: list[Gap]) -> list[Gap]:
    """``gaps`` with a phrasing as asked (None when every entry was logged hashed)."""
    todo = [g.key for g in gaps if g.query is None]
    if not todo:
        return gaps
    with store.read() as conn:
        found = reports.phrasings(conn, since, todo)
    return [g if g.query is not None else replace(g, query=found.get(g.key)) for g in gaps]


def phrase_vectors(store: Store, embedder: Embedder, gaps: Sequence[Gap]) -> Vectors:
    """One row per gap: its phrasing's vector — stored ones reused, new ones embedded and
    stored; a gap without a phrasing gets a zero row, similar to nothing."""
    model = embedder.model_id
    with store.read() as conn:
        known = reports.cached_vectors(conn, model, [g.key for g in gaps if g.query])
    todo = [g for g in gaps if g.query and g.key not in known]
    for start in range(0, len(todo), EMBED_BATCH):
        part = todo[start : start + EMBED_BATCH]
        vectors = embedder.embed_batch([g.query or "" for g in part], "query")
        known.update((g.key, v) for g, v in zip(part, vectors, strict=True))
    if todo:
        try:
            with store.write(wait_ms=CACHE_WAIT_MS, durable=False) as conn:
                reports.save_vectors(conn, model, [(g.key, known[g.key]) for g in todo])
        except StoreError:
            pass  # a busy index costs the next report the same embedding work
    rows = [known.get(g.key, np.zeros(embedder.dim, np.float32)) for g in gaps]
    return np.stack(rows) if rows else np.zeros((0, embedder.dim), np.float32)


def with_sections(conn: sqlite3.Connection, since: str, gaps: list[Gap]) -> list[Gap]:
    """Each gap with the sections its queries got most often."""
    keys = [k for g in gaps for k in g.keys]
    if not keys:
        return gaps
    served = reports.sections_served(conn, since, keys)
    out = []
    for gap in gaps:
        counts: Counter[str] = Counter()
        for key in gap.keys:
            counts.update(served.get(key, Counter()))
        top = counts.most_common(SECTIONS_SHOWN)
        info = reports.section_info(conn, [c for c, _ in top]) if top else {}
        sections = tuple(
            GapSection(
                c,
                info[c].doc_path if c in info else None,
                info[c].heading if c in info else None,
                n,
            )
            for c, n in top
        )
        out.append(replace(gap, sections=sections))
    return out
