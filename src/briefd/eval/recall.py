"""Prompt-time recall in the eval (I8): what the hook would inject, measured.

Two figures per golden set, through the recall engine as ``briefd recall`` answers (a fresh
session per prompt, default settings, ``top_k`` 5, every scope as in the search eval):

* **Recall@5 through recall**: the golden queries as prompts; the share of their expected
  sections among the sections injected, with a budget that holds five whole sections (five
  times ``chunking.max_tokens``, plus the block's frame and attribution lines) within the
  hook's character cap, so the figure shows what the confidence rules keep, not what the token
  budget cuts; the same at the default budget (``recall.max_tokens``) is reported beside it. A
  recall that stays quiet on a real question loses here.
* **Recall noise**: the generic prompts of ``eval/recall-noise.yaml`` (build failures,
  dependency bumps, "thanks, continue"…) against the same knowledge base: the share of them
  that injected anything, and the tokens the noisy ones injected. A recall that talks on every
  turn loses here.

For each golden query that loses an expected section, the report says why, section by section
(``briefd eval --misses`` prints it): search itself does not have it in its top 5; the prompt
read as generic (specificity below ``recall.weak_z``) or, in BM25, had no section with enough
lexical evidence (nothing injected: the engine's reason); it read as weak (one short section,
and this was not it); in BM25, the evidence rules did not keep this section; or, on a strong
prompt, the budget or the character cap.

Both are measured on what the agent receives: the ``<knowledge>`` block the hook prints. A
section counts as injected when its attribution line is in the block, and tokens are the
block's, frame and attribution lines included, counted with the real tokenizer (cl100k).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from briefd.api import Briefd
from briefd.errors import EvalError
from briefd.eval.datasets import GoldenQuery, GoldenSet, check_keys, read_yaml
from briefd.eval.metrics import score_ranking
from briefd.eval.sections import Section, expected_sections, section_key
from briefd.model import SearchMode
from briefd.recall.block import FRAME_TOKENS, bound_tokens
from briefd.recall.engine import RecallMode, RecallRequest, RecallResult
from briefd.recall.ranking import lexical
from briefd.retrieval.search import SearchRequest
from briefd.store.scopes import ALL_SCOPES, resolve_scopes
from briefd.tokens import count_tokens

TOP_K = 5
NOISE_FILE = Path("eval/recall-noise.yaml")  # in briefd's repository; a wheel ships a copy


def default_noise_file() -> Path | None:
    """The generic prompts recall is measured against: ``eval/recall-noise.yaml`` in the
    working directory (a team's own, or the repository root), else briefd's own copy
    (:func:`shipped`); None when none is."""
    return NOISE_FILE if NOISE_FILE.is_file() else shipped(NOISE_FILE.name)


def shipped(name: str) -> Path | None:
    """briefd's own copy of the prompt file ``eval/<name>`` (``recall-noise.yaml``,
    ``offtopic.yaml``): the one a wheel ships beside this module, else the repository's (a
    checkout, an editable install); None when neither is there."""
    here = Path(__file__).resolve().parent
    for path in (here / name, here.parents[2] / "eval" / name):
        if path.is_file():
            return path
    return None


@dataclass(frozen=True, slots=True)
class NoisePrompt:
    id: str
    text: str
    kind: str


@dataclass(frozen=True, slots=True)
class RecallReport:
    """What recall injected for one golden set (``noise_*``: for the generic prompts)."""

    name: str
    mode: str
    queries: int
    recall_at_5: float  # its attribution line in the block: given, or pointed to (not shown)
    recall_at_5_default_budget: float
    shown_at_5: float  # its content in the block: given, not a pointer's source line alone
    answered: float  # share of golden queries that injected anything
    tokens_mean: float  # tokens injected per golden query
    noise_prompts: int
    noise_injected: int
    noise_share: float
    noise_tokens_max: int
    noise_tokens_mean: float  # per noise prompt that injected anything
    noisy: tuple[tuple[str, int], ...]  # (prompt id, tokens) of those
    missed: tuple[str, ...]  # golden query ids whose expected section was not injected
    losses: tuple[RecallLoss, ...] = ()  # why, for each of those


@dataclass(frozen=True, slots=True)
class RecallLoss:
    """A golden query whose expected section recall did not print, and why (per section)."""

    id: str
    query: str
    confidence: str
    specificity: float | None
    causes: tuple[tuple[str, str], ...]  # (expected "path § heading", cause)


def figures(report: RecallReport) -> dict[str, float]:
    """What the gate file limits (see :func:`briefd.eval.thresholds.recall_shortfalls`)."""
    return {
        "recall@5": report.recall_at_5,
        "shown@5": report.shown_at_5,
        "noise_share": report.noise_share,
        "noise_tokens": float(report.noise_tokens_max),
    }


def load_noise(path: Path) -> tuple[NoisePrompt, ...]:
    data = read_yaml(path, "recall-noise file")
    items = data.get("prompts") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(_noise_item(i) for i in items):
        raise EvalError(f"{path}: expected 'prompts:' entries with id, kind and text")
    for number, item in enumerate(items, 1):
        check_keys(f"{path}: prompt #{number}", item, "text", {"id", "kind", "text"})
    return tuple(NoisePrompt(str(i["id"]), str(i["text"]), str(i["kind"])) for i in items)


def _noise_item(item: Any) -> bool:
    return isinstance(item, dict) and all(k in item for k in ("id", "kind", "text"))


def printed(result: RecallResult, shown: bool = False) -> list[tuple[str, str]]:
    """The sections (path, heading) whose attribution line is in the printed block, in order;
    ``shown``: only those whose content is (a weak answer's pointers are a source line
    alone, marked ``not shown``: the agent is told where to look, not what it says)."""
    block = result.knowledge
    units = [
        (s["doc_path"], section_key(s["title"], s["heading_path"]))
        for s in result.sections
        if not (shown and s.get("pointer"))
        and (f" · chunk {s['chunk_id']}]" in block or f" · chunk {s['chunk_id']} · " in block)
    ]
    return list(dict.fromkeys(units))


def answer(api: Briefd, prompt: str, mode: RecallMode, budget: int | None = None) -> RecallResult:
    """What recall answers ``prompt`` (a fresh session, every scope, top 5)."""
    return api.recall(RecallRequest(prompt, None, budget, TOP_K, (ALL_SCOPES,), mode))


def injected(
    api: Briefd, prompt: str, mode: RecallMode, budget: int | None = None
) -> tuple[list[tuple[str, str]], int]:
    """The sections (path, heading) in the block recall prints for ``prompt``, and the block's
    tokens."""
    result = answer(api, prompt, mode, budget)
    return printed(result), count_tokens(result.knowledge)


def loss(
    api: Briefd,
    query: GoldenQuery,
    result: RecallResult,
    named: Mapping[tuple[str, str], Section],
) -> RecallLoss:
    """Why each expected section of ``query`` (``named``: as :func:`expected_sections` reads
    the set's entries) is not in ``result``'s printed block."""
    search_mode: SearchMode = "bm25" if result.mode == "bm25" else "hybrid"
    request = SearchRequest(query.query, (ALL_SCOPES,), top_k=TOP_K, mode=search_mode, related=0)
    searched = api.search(request)
    found = {(h.doc_path, section_key(h.heading, h.heading_path)) for h in searched.hits}
    shown, pointed = set(printed(result, shown=True)), set(printed(result))
    kept = _lexically_kept(api, query.query) if result.mode == "bm25" else None
    causes = []
    for unit in dict.fromkeys(named[e] for e in query.expected):
        if unit in shown:
            continue
        if unit in pointed:
            cause = "pointed to (its source line, not shown): read as weak, another section given"
        elif searched.gate == "empty":
            cause = f"the relevance gate emptied the search: {'; '.join(searched.gate_reasons)}"
        elif unit not in found:
            cause = "not in search's top 5"
        elif result.confidence == "none":  # the engine's own why: generic, or no evidence
            cause = f"nothing injected: {result.reason or 'no section has enough evidence'}"
        elif result.confidence == "weak":
            cause = "read as weak: one short section and pointers, neither this one"
        elif kept is not None and unit not in kept:
            cause = LEXICAL_RULES
        else:
            cause = "left out by the budget or the character cap"
        causes.append((f"{unit[0]} § {unit[1]}", cause))
    return RecallLoss(query.id, query.query, result.confidence, result.specificity, tuple(causes))


LEXICAL_RULES = (
    "left out by BM25 recall's evidence rules (a section needs recall.min_terms informative "
    "words of the prompt, specific together, and a score within recall.relative_floor of the "
    "best one's)"
)


def _lexically_kept(api: Briefd, prompt: str) -> set[tuple[str, str]]:
    """The sections (path, section key) BM25 recall ranks for ``prompt`` before it packs
    them: what its evidence rules keep, as :func:`briefd.recall.ranking.lexical` finds them
    over every scope."""
    with api.store.read() as conn:
        scopes = resolve_scopes(conn, (ALL_SCOPES,), api.settings.default_scopes)
        ranked = lexical(conn, prompt, scopes, api.settings, 0).ranked
        ids = [chunk for chunk, _ in ranked]
        marks = ", ".join("?" * len(ids))
        rows = conn.execute(
            "SELECT d.path, c.heading, c.heading_path FROM chunks c JOIN documents d "
            f"ON d.id = c.doc_id WHERE c.id IN ({marks})",
            ids,
        ).fetchall()
    return {(path, section_key(heading, json.loads(trail))) for path, heading, trail in rows}


def five_sections(api: Briefd) -> int:
    """A block budget that holds five whole sections of the largest size the chunker makes."""
    line = bound_tokens("[source: " + "x" * 200 + "]")  # a long attribution line, bounded
    return FRAME_TOKENS + TOP_K * (api.settings.chunking.max_tokens + line)


def run_recall(
    api: Briefd, golden: GoldenSet, noise: tuple[NoisePrompt, ...], mode: RecallMode
) -> RecallReport:
    five = five_sections(api)
    recalls, defaults, tokens, missed, losses, given = [], [], [], [], [], []
    named = expected_sections(api, golden)
    for query in golden.queries:
        relevant: dict[Hashable, float] = dict.fromkeys((named[e] for e in query.expected), 1.0)
        result = answer(api, query.query, mode, five)
        recalls.append(score_ranking(printed(result), relevant)["recall@5"])
        given.append(score_ranking(printed(result, shown=True), relevant)["recall@5"])
        units, used = injected(api, query.query, mode)
        defaults.append(score_ranking(units, relevant)["recall@5"])
        tokens.append(used)
        if given[-1] < 1.0:
            missed.append(query.id)
            losses.append(loss(api, query, result, named))
    noisy = []
    for prompt in noise:
        _, used = injected(api, prompt.text, mode)
        if used:
            noisy.append((prompt.id, used))
    count = max(1, len(golden.queries))
    return RecallReport(
        name=golden.name,
        mode=mode,
        queries=len(golden.queries),
        recall_at_5=sum(recalls) / count,
        recall_at_5_default_budget=sum(defaults) / count,
        shown_at_5=sum(given) / count,
        answered=sum(1 for t in tokens if t) / count,
        tokens_mean=sum(tokens) / count,
        noise_prompts=len(noise),
        noise_injected=len(noisy),
        noise_share=len(noisy) / max(1, len(noise)),
        noise_tokens_max=max((t for _, t in noisy), default=0),
        noise_tokens_mean=sum(t for _, t in noisy) / max(1, len(noisy)),
        noisy=tuple(noisy),
        missed=tuple(missed),
        losses=tuple(losses),
    )
