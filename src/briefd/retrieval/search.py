"""The search entry point: scopes → candidate lists → fusion → hits (R1–R5)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from briefd.errors import EmbeddingError, QueryError
from briefd.model import Hit, HitExplain, SearchMode, SearchResult
from briefd.retrieval import gate_evidence, proximity, supersession
from briefd.retrieval.bm25 import Lexicon
from briefd.retrieval.candidates import Candidates, embedding, finish, start
from briefd.retrieval.fusion import Evidence, Fused, rrf, score_fusion
from briefd.retrieval.gate import (
    Calibration,
    GateDecision,
    LexicalEvidence,
    Vectors,
    decide,
    probe_score,
    section_margin,
)
from briefd.retrieval.gate_evidence import QueryWords
from briefd.retrieval.gate_fit import earlier_fit
from briefd.retrieval.lexical import (
    FieldWeights,
    MatchPlan,
    QueryMode,
    build_match,
    common_terms,
    joined_terms,
    no_terms_message,
    search_sql,
)
from briefd.retrieval.related import related_rowids
from briefd.retrieval.semantic import SemanticIndex
from briefd.retrieval.spelling import Speller
from briefd.settings import SearchSettings
from briefd.store.scopes import known_scopes, resolve_scopes
from briefd.store.supersession import superseders
from briefd.store.surfaces import restored
from briefd.store.tags import check_tags, normalise_tags, tagged_rowids
from briefd.text import query_terms
from briefd.vectors import store as vector_store

RANKING_VERSION = "r13"  # r7: a typo's tie goes to the word holding it with letters added;
# r8: a superseded document's hit goes after the first hit of the one superseding it; r9: the
# English clitic an apostrophe joins to a query word is no query word ("what's": what), and a
# joined name the index holds is one phrase term ("payments.events.v1", "2025-03-14"); r10: so
# is a compound the index writes joined ("cert-manager", "e-mail"); r11: the model reads a word
# typed without diacritics as the index mostly writes it ("sifre": şifre); r12: the all-terms
# bonus counts the query words the index holds (a word no section has keeps it from none);
# r13: query words near each other in a section's text, table or heading add to its BM25
TAGGED_DEPTH = 4  # with a tags filter, candidate lists go this many times deeper


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    scopes: tuple[str, ...] | None = None  # None: the configured default scopes
    top_k: int | None = None
    mode: SearchMode | None = None  # None: the configured default (hybrid, bm25 without vectors)
    explain: bool = False
    query_mode: QueryMode | None = None
    related: int | None = None  # None: search.related from settings; 0: none
    paths: tuple[str, ...] = ()  # code paths the task touches (R5): governing documents lead
    tags: tuple[str, ...] = ()  # only documents with any of these front-matter tags (R5)


def search(
    conn: sqlite3.Connection,
    request: SearchRequest,
    settings: SearchSettings,
    default_scopes: Sequence[str],
    semantic: SemanticIndex | None = None,
    speller: Speller | None = None,
    lexicon: Lexicon | None = None,
) -> SearchResult:
    """A request naming no mode is answered by keywords when the model fails (a remote
    embedding service down, or answering with another model), with a warning that says why:
    the index can still answer. A request for vector or hybrid gets the error."""
    try:
        return _search(conn, request, settings, default_scopes, semantic, speller, lexicon)
    except EmbeddingError as exc:
        if request.mode is not None or semantic is None:
            raise
        keywords = replace(request, mode="bm25")
        found = _search(conn, keywords, settings, default_scopes, semantic, speller, lexicon)
        said = f"searched by keywords only (bm25): the embedding model failed ({exc})"
        return replace(found, warnings=(*found.warnings, said))


def _search(
    conn: sqlite3.Connection,
    request: SearchRequest,
    settings: SearchSettings,
    default_scopes: Sequence[str],
    semantic: SemanticIndex | None,
    speller: Speller | None,
    lexicon: Lexicon | None,
) -> SearchResult:
    started = time.perf_counter()
    mode = _mode(request, settings, semantic)
    warned: tuple[str, ...] = ()
    if mode != "bm25" and semantic is not None and not _has_vectors(conn, semantic):
        mode, warned = "bm25", (_without_vectors(conn, request, semantic),)
    top_k = _checked_top_k(request, settings)
    read = _model_text(conn, request.query, mode, semantic)
    # the model runs beside what follows; two readings side by side (the one as typed on the
    # worker a prefetch of it went to)
    typed = embedding(semantic, request.query, mode) if read != request.query else None
    pending = embedding(semantic, read, mode, beside=typed is not None)
    known = known_scopes(conn)
    scopes = resolve_scopes(conn, request.scopes, default_scopes, known)
    tags = normalise_tags(request.tags)
    check_tags(conn, tags, scopes)
    plan = None if mode == "vector" else _plan(conn, request, settings, speller)
    depth = max(settings.candidates, top_k) * (TAGGED_DEPTH if tags else 1)
    every = set(scopes) == set(known)
    gathering = start(
        conn, read, plan, mode, scopes, settings, semantic, depth, every, lexicon, pending, typed
    )
    # the gate's word counts need no vector: read while the query is being embedded
    lists = gathering.found.reads
    words = gate_evidence.query_words(conn, plan, lexicon, lists) if mode == "hybrid" else None
    found = finish(conn, gathering, settings, semantic)
    lexical = _lexical(conn, found, words) if mode == "hybrid" else None
    fused = _fuse(conn, found, mode, settings, lexical)
    gate = None
    if mode == "hybrid" and settings.gate and semantic is not None:
        gate = _gate(read, found, semantic, settings, lexical)
        if gate is not None and semantic.calibration is not None:
            warned += earlier_fit(semantic.calibration.fingerprint)
        if gate is not None and gate.decision == "empty":
            fused = []
    if tags:
        tagged = tagged_rowids(conn, [f.key for f in fused], tags)
        fused = [f for f in fused if f.key in tagged]
    fused = fused[:top_k]
    rows = hydrate(conn, [f.key for f in fused])
    hits = [
        hit_from_row(rows[f.key], f.score, found.explain(f) if request.explain else None)
        for f in fused
    ]
    hits += _related(conn, request, settings, scopes, [f.key for f in fused], tags)
    hits = supersession.marked(hits, superseders(conn, {h.doc_path for h in hits}), scopes)
    return SearchResult(
        query=request.query,
        mode=mode,
        scopes=scopes,
        hits=tuple(hits),
        ranking_version=RANKING_VERSION,
        took_ms=round((time.perf_counter() - started) * 1000, 3),
        sql=_explain_sql(plan, scopes, every, settings, found) if request.explain else (),
        gate=gate.decision if gate is not None else "off",
        gate_reasons=gate.reasons if gate is not None else (),
        embedding_model=semantic.embedder.model_id if semantic and mode != "bm25" else None,
        warnings=warned,
    )


def _model_text(
    conn: sqlite3.Connection, query: str, mode: SearchMode, semantic: SemanticIndex | None
) -> str:
    """What the embedding model reads of ``query`` (and the gate weighs against its probes):
    its words as the index writes them ("sifre": şifre, :func:`restored`), "" for no model.
    When that differs, the query as typed is embedded too and a section's cosine is the
    closer of the two (:func:`briefd.retrieval.candidates.finish`); BM25 reads it as typed."""
    return restored(conn, query) if mode != "bm25" and semantic is not None else ""


def _checked_top_k(request: SearchRequest, settings: SearchSettings) -> int:
    """The hits asked for, once the request is known to be answerable (else QueryError)."""
    top_k = request.top_k if request.top_k is not None else settings.top_k
    if top_k < 1:
        raise QueryError(f"top_k must be at least 1, got {top_k}")
    if request.related is not None and request.related < 0:
        raise QueryError(f"related must be 0 (none) or more, got {request.related}")
    if (request.query_mode or settings.query_mode) == "text" and not query_terms(request.query):
        raise QueryError(no_terms_message(request.query))
    return top_k


def _plan(
    conn: sqlite3.Connection,
    request: SearchRequest,
    settings: SearchSettings,
    speller: Speller | None,
) -> MatchPlan:
    """The FTS5 queries for a request: free text gets typo corrections and, when configured,
    leaves very common terms out of the any-term query."""
    query_mode = request.query_mode or settings.query_mode
    if query_mode != "text":
        return build_match(request.query, query_mode)
    terms = joined_terms(conn, request.query)
    fixes = {}
    if speller is not None and settings.typo_tolerance:
        fixes = speller.corrections(conn, terms)
    common = common_terms(conn, terms, settings.any_term_max_share, settings.any_term_min_chunks)
    return build_match(request.query, query_mode, fixes, common, terms=terms)


def _fuse(
    conn: sqlite3.Connection,
    found: Candidates,
    mode: SearchMode,
    settings: SearchSettings,
    lexical: LexicalEvidence | None = None,
) -> list[Fused[int]]:
    """Score fusion for hybrid (RRF when configured). The lexical side of a query in another
    language than the index's (:meth:`LexicalEvidence.foreign`) counts by the share of its
    words the index has: BM25 on the few it shares (a name, "euro") is mostly noise there.
    The first pass's best are then fused again with their query words' proximity added to
    their BM25 (:mod:`briefd.retrieval.proximity`)."""
    if mode == "hybrid" and settings.fusion == "score":
        scale = lexical.present() if lexical is not None and lexical.foreign() else 1.0

        def fuse(evidence: list[Evidence]) -> list[Fused[int]]:
            return score_fusion(
                evidence,
                settings.vector_weight,
                settings.all_terms_bonus,
                settings.coverage_bonus,
                scale,
            )

        evidence = found.evidence(coverage=settings.coverage_bonus > 0)
        chunks = len(found.coverage.index.rows) if found.coverage is not None else None
        return proximity.rescored(
            conn, found, evidence, fuse(evidence), fuse, settings.heading_weight, chunks
        )
    return rrf(found.ranked(settings), settings.rrf_k)


def _lexical(
    conn: sqlite3.Connection, found: Candidates, words: QueryWords | None
) -> LexicalEvidence | None:
    """The query words' evidence, looked up in the best semantic and lexical sections."""
    if words is None:
        return None
    top = max(found.cosines, key=found.cosines.__getitem__, default=None)
    sections = ((top,) if top is not None else ()) + found.best_lexical()
    return words.evidence(conn, bool(found.corroborated()), sections)


def _gate(
    query: str,
    found: Candidates,
    semantic: SemanticIndex,
    settings: SearchSettings,
    lexical: LexicalEvidence | None,
) -> GateDecision | None:
    """All or nothing, on the whole candidate set (R4); None: the index is not calibrated."""
    calibration = semantic.calibration
    if calibration is None:
        return None
    top = max(found.cosines, key=found.cosines.__getitem__, default=None)
    best = found.cosines[top] if top is not None else None
    vector = semantic.query_vector(query)
    probe = probe_score(calibration, vector)
    offset = settings.gate_offset
    foreign = lexical is not None and lexical.foreign()
    language = held_language(calibration, vector, foreign)
    floor, threshold = calibration.levels(language)
    section = _section(calibration, best, semantic.vector(top) if top is not None else None)
    level = calibration.section_level(language)
    if (floor, threshold) == calibration.levels(None):
        language = None  # the pooled levels: no language to name
    checked = (section, level + offset) if section is not None and level is not None else None
    return decide(lexical, best, probe, threshold + offset, floor + offset, language, checked)


def held_language(calibration: Calibration, vector: Vectors, foreign: bool) -> str | None:
    """The language whose off-topic level a query is held to (None: the pooled levels): its
    own when ``foreign`` (most of its words are in no section), or when it is the index's own
    (:meth:`Calibration.levels` keeps the pooled threshold there where lower). A German team's
    notes held German questions to the pooled threshold, raised by the English probes (+0.034
    against German's +0.025). A question in another language holding the index's words is
    held to the pooled one."""
    language = calibration.language_of(vector)
    return language if foreign or language in calibration.home() else None


def _section(calibration: Calibration, best: float | None, row: Vectors | None) -> float | None:
    """The query's section margin (:func:`briefd.retrieval.gate.section_margin`), None
    without a best section's vector."""
    return section_margin(calibration, best, row) if best is not None and row is not None else None


def _related(
    conn: sqlite3.Connection,
    request: SearchRequest,
    settings: SearchSettings,
    scopes: Sequence[str],
    direct: Sequence[int],
    tags: Sequence[str],
) -> list[Hit]:
    cap = settings.related if request.related is None else request.related
    if cap <= 0 or not direct:
        return []
    keep = (lambda rowids: tagged_rowids(conn, rowids, tags)) if tags else None
    pairs = related_rowids(conn, direct, scopes, cap, keep)
    rows = hydrate(conn, [r for r, _ in pairs] + [s for _, s in pairs])
    return [replace(hit_from_row(rows[r], 0.0, None), related_to=rows[s]["id"]) for r, s in pairs]


def _mode(
    request: SearchRequest, settings: SearchSettings, semantic: SemanticIndex | None
) -> SearchMode:
    """The requested mode; without embeddings an explicit vector/hybrid request is an error
    and the configured default falls back to bm25."""
    mode = request.mode or settings.mode
    if mode != "bm25" and semantic is None:
        if request.mode is not None:
            raise QueryError(
                f"search mode '{mode}' needs embeddings, which are off for this index "
                "(embeddings.enabled / embeddings.adapter); use --mode bm25"
            )
        return "bm25"
    return mode


def vectors_missing(conn: sqlite3.Connection, semantic: SemanticIndex | None) -> str | None:
    """Why the configured mode falls back to bm25 on this index now (the warning a search
    naming no mode gets), or None when its vectors are there (or embeddings are off)."""
    if semantic is None or _has_vectors(conn, semantic):
        return None
    return _without_vectors(conn, SearchRequest(""), semantic)


def _has_vectors(conn: sqlite3.Connection, semantic: SemanticIndex) -> bool:
    """The index has vectors for the configured model (or no chunks at all) — all of them
    while another model's are kept: a server never searches an index half embedded with a
    new model id (an upgrade's) as if it were done."""
    if len(semantic.index(conn)) and not semantic.to_embed:
        return True
    return conn.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is None


def _without_vectors(
    conn: sqlite3.Connection, request: SearchRequest, semantic: SemanticIndex
) -> str:
    """No vector of the configured model, or not yet one for every chunk while another model's
    are kept: the default mode falls back to bm25, with a warning that says why (an index
    embedded with an earlier briefd's model id, say) and how to get them; an explicit
    vector/hybrid request is an error that says so."""
    model = semantic.embedder.model_id
    others = [m for m in vector_store.models(conn) if m != model]
    found = f" (it has vectors of {', '.join(others)})" if others else ""
    has, held = "none", f"no vectors of {model}"
    if semantic.to_embed:
        part = (
            f"for part of it only ({semantic.to_embed} sections to go: an index run is "
            "embedding them, or stopped before it was done)"
        )
        has, held = f"them {part}", f"vectors of {model} {part}"
    if request.mode is None:
        return (
            f"searched by keywords only (bm25): this index has {held}{found}; "
            "run `briefd index` to embed it with this model"
        )
    raise QueryError(
        f"search mode '{request.mode}' needs vectors of {model}, and this index has {has}{found}; "
        "run `briefd index` to embed it with this model, or use --mode bm25"
    )


def _explain_sql(
    plan: MatchPlan | None,
    scopes: Sequence[str],
    every: bool,
    settings: SearchSettings,
    found: Candidates,
) -> tuple[str, ...]:
    """The FTS5 queries, or for a postings answer the FTS5 queries it equals; the any-term
    one (the last) names the prefix forms the postings also scored, which FTS5 has not."""
    if plan is None:
        return ()
    weights = FieldWeights(settings.title_weight, settings.heading_weight, settings.body_weight)
    matches = [m for m in (plan.all_terms, plan.any_term) if m]
    scoped = "" if every else f"\n-- then kept if the chunk's scope is in {list(scopes)}"
    source = ""
    if found.postings:
        source = "\n-- scored from briefd's BM25 postings: the same bm25 as this query"
    sql = [f"{search_sql(weights)}\n-- MATCH {m}{scoped}{source}" for m in matches]
    if found.prefixes and sql:
        forms = ", ".join(f"{w.text} (bm25 × {w.weight:.2f})" for w in found.prefixes)
        sql[-1] += (
            f"\n-- plus, from the postings only, prefix forms: {forms}; a prefix counts at the "
            "share of the typed word it keeps, and never adds to the word itself"
        )
    return tuple(sql)


def hydrate(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, sqlite3.Row]:
    if not rowids:
        return {}
    placeholders = ", ".join("?" * len(rowids))
    rows = conn.execute(
        "SELECT c.rowid AS rowid, c.id, d.path, c.scope, c.title, c.heading, c.heading_path, "
        "c.content, c.tokens, c.start_line, c.end_line "
        f"FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.rowid IN ({placeholders})",
        tuple(rowids),
    )
    return {row["rowid"]: row for row in rows}


def hit_from_row(row: sqlite3.Row, score: float, explain: HitExplain | None) -> Hit:
    return Hit(
        chunk_id=row["id"],
        doc_path=row["path"],
        scope=row["scope"],
        title=row["title"],
        heading=row["heading"],
        heading_path=tuple(json.loads(row["heading_path"])),
        content=row["content"],
        score=round(score, 6),
        tokens=row["tokens"],
        start_line=row["start_line"],
        end_line=row["end_line"],
        explain=explain,
    )
