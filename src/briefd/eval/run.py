"""Running evaluations through the real index and search path, with cached eval indexes."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from briefd.api import Briefd
from briefd.errors import EvalError, QueryError, ScopeError
from briefd.eval.datasets import (
    BeirSet,
    GoldenSet,
    beir_doc_path,
    beir_markdown,
    folder_name,
    is_beir,
    load_beir,
    load_golden,
)
from briefd.eval.metrics import dedupe, mean, score_ranking
from briefd.eval.sections import expected_sections, section_key
from briefd.graph.resolve import path_key
from briefd.model import Hit, SearchMode
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from briefd.store.scopes import ALL_SCOPES, resolve_scopes
from briefd.store.surfaces import restored
from briefd.text import shown

DEPTH = 50  # hits fetched per query before de-duplication into sections / documents
EVAL_FORMAT = "1"  # bump when the way datasets are turned into Markdown changes


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    id: str
    query: str
    type: str
    metrics: dict[str, float]
    top: tuple[str, ...]
    expected: tuple[str, ...]
    # why search refused the query (a public set's "a?": only common words), "" when it ran; a
    # refused query of a BEIR set is scored as what its user gets, no hits (:func:`run_beir`)
    refused: str = ""
    # per expected: where it ranked (1 first; None: not among the ``DEPTH`` hits fetched)
    ranks: tuple[int | None, ...] = ()


@dataclass(frozen=True, slots=True)
class EvalReport:
    name: str
    level: str  # "section" or "document"
    mode: SearchMode
    queries: int
    overall: dict[str, float]
    by_type: dict[str, dict[str, float]]
    outcomes: tuple[QueryOutcome, ...]


def _cache_dir(settings: Settings, key: str) -> Path:
    """An eval index's folder under ``eval.cache_dir``, made now: a file in its way or a
    folder that cannot be written is an EvalError naming the setting, never a traceback."""
    folder = settings.eval.cache_dir / key
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EvalError(_unwritable(folder, exc)) from None
    return folder


def _unwritable(folder: Path, exc: OSError) -> str:
    in_way = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
    why = f"{in_way} is a file, not a folder" if in_way else f"{exc.strerror}: {exc.filename}"
    return (
        f"cannot write the eval cache {folder} ({why}); set eval.cache_dir (briefd.yaml or "
        "BRIEFD_EVAL__CACHE_DIR) to a folder you can write"
    )


def golden_index(settings: Settings, source: Path) -> Settings:
    """Settings for a cached eval index of ``source`` (kept fresh incrementally), one per
    layout that decides what is indexed (``scopes``, ``index.include`` / ``exclude``): run
    with another briefd.yaml (tune with a team's ``--config``, eval from another folder), a
    shared index lost every document and was refused as "found no document … delete
    index.db", or kept the other layout's scopes."""
    layout = f"{source.resolve()}|{settings.scopes!r}|{settings.index.include!r}"
    key = hashlib.sha256(f"{layout}|{settings.index.exclude!r}".encode()).hexdigest()[:16]
    db = _cache_dir(settings, f"golden-{folder_name(source)}-{key}") / "index.db"
    return replace(settings, db=db, source=source)


def beir_index(settings: Settings, dataset: BeirSet) -> Settings:
    """Settings for the cached eval index of a BEIR dataset, materialised as Markdown once."""
    chunking = f"{settings.chunking.target_tokens}/{settings.chunking.max_tokens}"
    key = hashlib.sha256(f"{dataset.digest}|{EVAL_FORMAT}|{chunking}".encode()).hexdigest()[:16]
    root = _cache_dir(settings, f"beir-{folder_name(dataset.path)}-{key}")
    source = root / "source"
    marker = root / "source.complete"
    if not marker.exists():
        try:
            for doc_id, title, text in dataset.corpus:
                path = source / beir_doc_path(doc_id)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(beir_markdown(title, text, doc_id), encoding="utf-8")
            marker.write_text("ok\n", encoding="utf-8")
        except OSError as exc:  # a full disk, say
            raise EvalError(_unwritable(root, exc)) from None
    return replace(settings, db=root / "index.db", source=source)


Case = tuple[str, str, str, Mapping[Any, float]]  # id, query, type, relevant unit → gain
UnitOf = Callable[[Hit], Hashable]  # what a hit counts as: its section, or its document


SOURCE_FROM_FILE = (
    "write its folder as the query file's 'source:' (from the working directory or a folder "
    "above the file): a thresholds file's sets take no --source"
)


Progress = Callable[[str, int, int], None]  # stage, done, total: an index run's progress


def open_golden(
    settings: Settings,
    path: Path,
    source: Path | None,
    fix: str = "pass --source DIR",
    progress: Progress | None = None,
) -> tuple[Briefd, GoldenSet]:
    """The golden set and an API over its (cached, freshly indexed) eval index; ``fix``: how
    to name the knowledge when the file names none, or none that is there (a thresholds
    file's set: :data:`SOURCE_FROM_FILE`, as ``--check`` refuses ``--source``). With the
    model, the index is brought up to date by keywords first and the sections the queries
    name are checked then: a heading misspelled in a Docker team's query file was named only
    after its 344 chunks were embedded (2 min 43 s)."""
    if is_beir(path):  # the two options mixed up
        raise EvalError(f"{path} is a BEIR dataset folder, not a query file; pass it as --dataset")
    golden = load_golden(path)
    root = source or golden.source
    if root is None:
        raise EvalError(f"{path} names no knowledge source ('source:'); {fix}")
    if not root.is_dir():
        raise EvalError(f"{path}: knowledge source {root} is not a directory; {fix}")
    indexed = golden_index(settings, root)
    if settings.embeddings.enabled:  # the sections its queries name, before any is embedded
        with Briefd(for_modes(indexed, ("bm25",))) as plain:
            plain.index(progress=progress)
            expected_sections(plain, golden)
    api = Briefd(indexed)
    api.index(progress=progress)
    return api, golden


def for_modes(settings: Settings, modes: Sequence[str]) -> Settings:
    """``settings`` for an eval of ``modes``: BM25 alone needs no vector, so its eval index is
    brought up to date without the model (a new set's corpus is not embedded first, ~2 min on
    2 cores for a small knowledge base, before a typo in its query file is even read); a later
    vector or hybrid eval of the same cached index embeds what it lacks then."""
    if any(mode != "bm25" for mode in modes):
        return settings
    return replace(settings, embeddings=replace(settings.embeddings, enabled=False))


def open_beir(
    settings: Settings, folder: Path, split: str | None = None, progress: Progress | None = None
) -> tuple[Briefd, BeirSet]:
    if folder.is_file():  # the two options mixed up
        raise EvalError(
            f"{folder} is a file; --dataset takes the folder holding corpus.jsonl, "
            "queries.jsonl and qrels.tsv (a golden query file goes to --queries)"
        )
    if not is_beir(folder):
        raise EvalError(not_beir(folder))
    dataset = load_beir(folder, split)
    api = Briefd(beir_index(settings, dataset))
    api.index(progress=progress)
    return api, dataset


BEIR_FILES = "corpus.jsonl, queries.jsonl and qrels.tsv"


def not_beir(folder: Path) -> str:
    """Why ``folder`` is no BEIR dataset, and what to give instead: a folder that does not
    exist (a typo) read as one of the wrong kind, and a knowledge folder said nothing of
    --queries."""
    if not folder.exists():
        return f"{folder} does not exist; --dataset takes the folder holding {BEIR_FILES}"
    if not folder.is_dir():
        return f"{folder} is not a folder; --dataset takes the folder holding {BEIR_FILES}"
    lacking = [name for name in ("corpus.jsonl", "queries.jsonl") if not (folder / name).is_file()]
    said = f"{folder} is not a BEIR dataset: it has no {' and no '.join(lacking)}"
    if any(folder.glob("*.y*ml")):
        return f"{said}; a golden query file (YAML) goes to --queries FILE"
    if any(folder.glob("*.md")) or any(folder.glob("*/*.md")):  # domain/x.md, not all of ~
        return (
            f"{said}; a folder of Markdown knowledge is a golden set's source: --queries FILE "
            "--source DIR"
        )
    return f"{said}; --dataset takes the folder holding {BEIR_FILES}"


def golden_cases(api: Briefd, golden: GoldenSet) -> tuple[list[Case], UnitOf]:
    """The queries, each with the sections it expects (a broken entry is an error, see
    :func:`expected_sections`), and a hit as the section it is."""
    named = expected_sections(api, golden)
    cases: list[Case] = [
        (q.id, q.query, q.type, dict.fromkeys((named[e] for e in q.expected), 1.0))
        for q in golden.queries
    ]
    return cases, lambda h: (h.doc_path, section_key(h.heading, h.heading_path))


def outside_defaults(api: Briefd, golden: GoldenSet) -> str | None:
    """A note when queries of ``golden`` expect documents outside ``default_scopes``: eval
    searches every scope, and an agent's default search (search, bundle, MCP, REST) would not
    see them; None when every expected document is in a default scope."""
    with api.store.read() as conn:
        try:
            defaults = set(resolve_scopes(conn, None, api.settings.default_scopes))
        except ScopeError:  # no default scope indexed: every document is outside them
            defaults = set()
        rows = conn.execute("SELECT path, scope FROM documents ORDER BY path DESC").fetchall()
        scope_of = {path_key(path): scope for path, scope in rows}  # either spelling (NFC/NFD)
    outside: set[str] = set()
    counted = 0
    for query in golden.queries:
        scopes = (scope_of.get(path_key(p), "") for p, _ in query.expected)
        others = {scope for scope in scopes if scope and scope not in defaults}
        outside |= others
        counted += bool(others)
    if not counted:
        return None
    return (
        f"{golden.path}: {counted} of {len(golden.queries)} queries expect documents outside "
        f"default_scopes ({', '.join(api.settings.default_scopes)}), in {', '.join(sorted(outside))}: "
        "eval searches every scope; an agent's default search (briefd search, bundle, MCP, "
        "REST) does not"
    )


def run_golden(api: Briefd, golden: GoldenSet, mode: SearchMode) -> EvalReport:
    cases, unit = golden_cases(api, golden)
    return _run(api, golden.name, "section", mode, cases, unit, f"{golden.path}: ")


def beir_cases(dataset: BeirSet) -> tuple[list[Case], UnitOf]:
    path_to_id = {beir_doc_path(doc_id): doc_id for doc_id, _, _ in dataset.corpus}
    cases: list[Case] = [
        (qid, text, "all", dataset.qrels.get(qid, {})) for qid, text, _ in dataset.queries
    ]
    if not cases:
        raise EvalError(
            f"{dataset.path}: no query of queries.jsonl has relevance labels in "
            f"{dataset.qrels_file} (tab-separated lines: query-id, corpus-id, score)"
        )
    known = set(path_to_id.values())
    for qid, _, _, relevant in cases:  # a label no document answers is broken, not a miss
        stranger = next(
            (doc for doc, gain in relevant.items() if gain > 0 and doc not in known), None
        )
        if stranger is not None:
            raise EvalError(
                f"{dataset.path}: {dataset.qrels_file} labels query {qid} with document "
                f"'{shown(stranger)}', which is not in corpus.jsonl; fix the label or add the document"
            )
    return cases, lambda h: path_to_id.get(h.doc_path, h.doc_path)


def run_beir(api: Briefd, dataset: BeirSet, mode: SearchMode) -> EvalReport:
    """A public set's queries cannot be fixed like a team's golden file, and one of thousands
    that search refuses (only common words) must not throw away the run: it scores as a miss
    and is named (:attr:`QueryOutcome.refused`, :func:`refused`)."""
    cases, unit = beir_cases(dataset)
    return _run(api, dataset.name, "document", mode, cases, unit, None)


def refused(report: EvalReport) -> str | None:
    """The queries of ``report`` that search refused, as a warning (None: there are none)."""
    found = [o for o in report.outcomes if o.refused]
    if not found:
        return None
    first = found[0]
    said = (
        "1 query could not be searched and counts as a miss"
        if len(found) == 1
        else f"{len(found)} queries could not be searched and count as misses"
    )
    return (
        f"{report.name}: {said} (no hits), e.g. {first.id} ({first.query!r}): {first.refused}; ids: "
        + ", ".join(o.id for o in found[:20])
        + (", …" if len(found) > 20 else "")
    )


def score_cases(
    api: Briefd, mode: SearchMode, cases: Sequence[Case], unit: UnitOf, where: str | None = ""
) -> list[dict[str, float]]:
    """Per-query metrics of ``cases`` through the real search path; ``where``: the file the
    queries come from, as an error about one of them starts (``"q.yaml: "``; None: a public
    set, whose queries search refuses score as misses)."""
    return [m for m, _, _ in _outcomes(api, mode, cases, unit, where)]


def _outcomes(
    api: Briefd, mode: SearchMode, cases: Sequence[Case], unit: UnitOf, where: str | None
) -> list[tuple[dict[str, float], list[Hashable], str]]:
    """Each case's metrics, ranking and why search refused it; ``where`` None: a refused query
    is a miss (a public set), else an EvalError naming it in the file ``where`` starts."""
    if mode != "bm25":
        prime(api, [query for _, query, _, _ in cases])
    found = []
    for qid, query, _, relevant in cases:
        request = SearchRequest(query, (ALL_SCOPES,), top_k=DEPTH, mode=mode, related=0)
        why = ""
        try:
            hits: Sequence[Hit] = api.search(request).hits
        except QueryError as exc:  # which of hundreds of queries, or the set cannot be fixed
            if where is not None:
                raise EvalError(
                    f"{where}query {qid} ({query!r}) cannot be searched: {exc}"
                ) from None
            hits, why = (), str(exc)
        ranked = dedupe([unit(h) for h in hits])
        found.append((score_ranking(ranked, relevant), ranked, why))
    return found


def prime(api: Briefd, queries: Sequence[str]) -> None:
    """Embed ``queries`` in batches, as the model reads them in a search (:func:`restored`)."""
    if api.semantic is None:
        return
    with api.store.read() as conn:
        api.semantic.prime([restored(conn, query) for query in queries])


def _rank(ranked: Sequence[object], key: object) -> int | None:
    """Where ``key`` is in ``ranked`` (1: first), None when it is not."""
    return ranked.index(key) + 1 if key in ranked else None


def _run(
    api: Briefd,
    name: str,
    level: str,
    mode: SearchMode,
    cases: Sequence[Case],
    unit: UnitOf,
    where: str | None,
) -> EvalReport:
    outcomes = [
        QueryOutcome(
            qid,
            query,
            qtype,
            metrics,
            tuple(_label(k) for k in ranked[:5]),
            tuple(_label(k) for k, gain in relevant.items() if gain > 0),  # 0: judged not relevant
            why,
            tuple(_rank(ranked, k) for k, gain in relevant.items() if gain > 0),
        )
        for (qid, query, qtype, relevant), (metrics, ranked, why) in zip(
            cases, _outcomes(api, mode, cases, unit, where), strict=True
        )
    ]
    by_type: dict[str, list[dict[str, float]]] = defaultdict(list)
    for outcome in outcomes:
        by_type[outcome.type].append(outcome.metrics)
    return EvalReport(
        name=name,
        level=level,
        mode=mode,
        queries=len(outcomes),
        overall=mean([o.metrics for o in outcomes]),
        by_type={t: mean(rows) for t, rows in sorted(by_type.items())} if len(by_type) > 1 else {},
        outcomes=tuple(outcomes),
    )


def _label(key: Hashable) -> str:
    if isinstance(key, tuple):
        return " # ".join(str(k) for k in key)
    return str(key)
