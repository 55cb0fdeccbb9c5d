"""Trust figures (V4): what a user loses or is spared by the relevance gate and by fusion.

* **emptied** — real queries (each has a relevant document in the index) for which hybrid
  search returned nothing: the gate hid an answer, the worst failure a context tool can have;
* **off-topic rejected** — per language, the share of the off-topic set (``eval/offtopic.yaml``)
  for which hybrid search returned nothing, as it should;
* **fusion gap** — how far hybrid nDCG@10 falls below the better of its two sides (negative:
  hybrid is better than both).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from briefd.api import Briefd
from briefd.errors import EvalError
from briefd.eval.datasets import check_keys, read_yaml
from briefd.eval.run import EvalReport, prime
from briefd.retrieval.search import SearchRequest
from briefd.store.scopes import ALL_SCOPES

LANGUAGES = ("en", "tr", "de")


@dataclass(frozen=True, slots=True)
class OffTopicQuery:
    id: str
    lang: str
    kind: str
    query: str


@dataclass(frozen=True, slots=True)
class TrustFigures:
    name: str
    documents: int
    queries: int
    emptied: int
    emptied_share: float
    offtopic_rejected: dict[str, float]  # language → share of its off-topic queries emptied
    offtopic_kept: tuple[str, ...]  # ids of off-topic queries that got an answer
    ndcg: dict[str, float]  # mode → nDCG@10
    fusion_gap: float | None  # max(bm25, vector) − hybrid nDCG@10; None without all three
    calibration: dict[str, object] | None = None  # the gate's knobs fitted to this index


def load_offtopic(path: Path) -> tuple[OffTopicQuery, ...]:
    data = read_yaml(path, "off-topic query file")
    items = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise EvalError(f"{path}: expected a mapping with a 'queries:' list")
    queries = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict) or not {"id", "lang", "kind", "query"} <= item.keys():
            raise EvalError(f"{path}: query #{number} needs id, lang, kind and query")
        check_keys(f"{path}: query #{number}", item, "query", {"id", "lang", "kind", "query"})
        if item["lang"] not in LANGUAGES:
            raise EvalError(f"{path}: query {item['id']}: lang must be one of en, tr, de")
        queries.append(
            OffTopicQuery(str(item["id"]), item["lang"], str(item["kind"]), str(item["query"]))
        )
    return tuple(queries)


def offtopic_answered(api: Briefd, queries: Sequence[OffTopicQuery]) -> set[str]:
    """Ids of the off-topic queries hybrid search answers with at least one hit."""
    if api.semantic is None:
        raise EvalError("off-topic figures need embeddings (hybrid search); they are off")
    prime(api, [q.query for q in queries])
    answered = set()
    for item in queries:
        request = SearchRequest(item.query, (ALL_SCOPES,), top_k=10, mode="hybrid", related=0)
        if api.search(request).hits:
            answered.add(item.id)
    return answered


def figures(
    name: str,
    documents: int,
    reports: Sequence[EvalReport],
    offtopic: Sequence[OffTopicQuery],
    answered: set[str],
) -> TrustFigures:
    """The figures of one set from its eval reports (hybrid needed) and off-topic answers."""
    by_mode = {r.mode: r for r in reports}
    hybrid = by_mode.get("hybrid")
    if hybrid is None:
        raise EvalError(f"{name}: trust figures need a hybrid report")
    # a query search refused (only common words) is a miss, not the gate's doing
    emptied = sum(1 for o in hybrid.outcomes if not o.top and o.expected and not o.refused)
    total: dict[str, int] = defaultdict(int)
    rejected: dict[str, int] = defaultdict(int)
    for item in offtopic:
        total[item.lang] += 1
        rejected[item.lang] += item.id not in answered
    ndcg: dict[str, float] = {mode: r.overall["ndcg@10"] for mode, r in by_mode.items()}
    sides = [ndcg[m] for m in ("bm25", "vector") if m in ndcg]
    return TrustFigures(
        name=name,
        documents=documents,
        queries=hybrid.queries,
        emptied=emptied,
        emptied_share=emptied / hybrid.queries if hybrid.queries else 0.0,
        offtopic_rejected={lang: rejected[lang] / n for lang, n in sorted(total.items())},
        offtopic_kept=tuple(sorted(answered)),
        ndcg=ndcg,
        fusion_gap=max(sides) - ndcg["hybrid"] if len(sides) == 2 else None,
    )
