"""Answering a recall from the index: rank (hybrid search, or BM25 behind the lexical
evidence gate), leave out what the session already has, fit the budget, remember what was
injected. The server and the in-process hook both come here, so they answer alike.

This module and what it imports stay light (no numpy, no model): a BM25-only hook answers
through :func:`answer` with a store it opened itself; hybrid answers come through
:meth:`briefd.api.Briefd.recall`, which passes its search as ``hybrid``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from briefd.errors import QueryError, StoreError
from briefd.recall import pack, session
from briefd.recall.block import knowledge_block
from briefd.recall.evidence import EvidenceRules, lexical_recall
from briefd.retrieval.lexical import FieldWeights
from briefd.settings import Settings
from briefd.store.db import Store
from briefd.store.scopes import resolve_scopes
from briefd.text import query_terms

RecallMode = Literal["auto", "bm25", "hybrid"]
# (prompt, scopes, top_k) -> ([(chunk id, score)] best first, gate verdict)
HybridSearch = Callable[[str, tuple[str, ...], int], tuple[list[tuple[str, float]], str]]
MAX_PROMPT_CHARS = 20_000
MAX_BLOCK_CHARS = 10_000  # Claude Code shows longer hook output as a preview only
MODES = ("auto", "bm25", "hybrid")
REMEMBER_WAIT_MS = 200


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """One prompt to recall for. ``None`` fields take the ``recall.*`` settings."""

    prompt: str
    session_id: str | None = None
    max_tokens: int | None = None
    top_k: int | None = None
    scopes: tuple[str, ...] | None = None
    mode: RecallMode | None = None

    @classmethod
    def from_json(cls, data: object) -> RecallRequest:
        """From hook JSON (``prompt``, ``session_id``, …; unknown keys are ignored)."""
        if not isinstance(data, dict):
            raise QueryError("hook input must be a JSON object with a 'prompt' string")
        prompt = data.get("prompt")
        if not isinstance(prompt, str):
            raise QueryError("hook input has no 'prompt' string; send the prompt as 'prompt'")
        return cls(
            prompt=prompt,
            # VS Code's hooks send ``sessionId`` (code.visualstudio.com/docs/agent-customization/hooks)
            session_id=_optional(data, "session_id", str) or _optional(data, "sessionId", str),
            max_tokens=_optional(data, "max_tokens", int),
            top_k=_optional(data, "top_k", int),
            scopes=_scopes(data.get("scopes")),
            mode=_mode(data.get("mode")),
        )


@dataclass(frozen=True, slots=True)
class RecallResult:
    """What a recall found; ``sections`` are JSON-ready dicts (see ``to_dict``)."""

    prompt: str
    session_id: str | None
    mode: str
    gate: str
    sections: tuple[dict[str, Any], ...]
    already_injected: int
    tokens: int
    budget: int
    took_ms: float
    knowledge: str
    reason: str = ""
    via: str = "in-process"
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "session_id": self.session_id,
            "mode": self.mode,
            "gate": self.gate,
            "sections": [dict(s) for s in self.sections],
            "already_injected": self.already_injected,
            "tokens": self.tokens,
            "budget": self.budget,
            "took_ms": self.took_ms,
            "knowledge": self.knowledge,
            "reason": self.reason,
            "via": self.via,
            "notes": list(self.notes),
        }


def embeddings_on(settings: Settings) -> bool:
    return settings.embeddings.enabled and settings.embeddings.adapter != "none"


def choose_mode(conn: sqlite3.Connection, mode: str, embeddings: bool) -> str:
    """bm25 or hybrid: ``auto`` is hybrid when embeddings are on and the index has vectors."""
    if mode != "auto":
        return mode
    if not embeddings:
        return "bm25"
    has_vectors = conn.execute("SELECT 1 FROM chunk_vectors LIMIT 1").fetchone() is not None
    return "hybrid" if has_vectors else "bm25"


def answer(
    store: Store,
    request: RecallRequest,
    settings: Settings,
    hybrid: HybridSearch | None = None,
) -> RecallResult:
    """Recall for one prompt; with ``hybrid`` the ranking is that search's (gate included),
    without it BM25 behind the lexical evidence gate."""
    started = time.perf_counter()
    config = settings.recall
    prompt = request.prompt.strip()[:MAX_PROMPT_CHARS]
    top_k = request.top_k or config.top_k
    budget = request.max_tokens or config.max_tokens
    max_chars = min(config.max_chars, MAX_BLOCK_CHARS)
    now = time.time()
    with store.read() as conn:
        scopes = resolve_scopes(
            conn, request.scopes or config.scopes or None, settings.default_scopes
        )
    ranked: list[tuple[str, float]] = []
    if not prompt or not scopes:
        gate, reason = "off", "empty prompt" if not prompt else "no scopes"
    elif not query_terms(prompt):
        gate, reason = "empty", "the prompt has only common words"
    elif hybrid is not None:  # outside a read transaction: search opens its own
        ranked, gate = hybrid(prompt, scopes, top_k)
        reason = "the prompt looks unrelated to the knowledge base" if gate == "empty" else ""
    else:
        with store.read() as conn:
            ranked, gate, reason = _lexical(conn, prompt, scopes, settings)
    with store.read() as conn:
        sections = _hydrate(conn, ranked[:top_k])
        seen = (
            session.seen(conn, request.session_id, now, config.session_hours)
            if request.session_id
            else {}
        )
    fresh, repeated = pack.unseen(sections, seen)
    chosen = pack.fit(fresh, budget, max_chars)
    notes = _remember(store, request.session_id, chosen, now, config.session_hours)
    if sections and not chosen:
        reason = (
            "every matching section was already injected in this session"
            if repeated
            else "no matching section fits the budget"
        )
    elif not sections and not reason:
        reason = "no section has enough evidence for this prompt"
    return RecallResult(
        prompt=prompt,
        session_id=request.session_id,
        mode="hybrid" if hybrid is not None else "bm25",
        gate=gate,
        sections=tuple(chosen),
        already_injected=repeated,
        tokens=sum(s["tokens"] for s in chosen),
        budget=budget,
        took_ms=round((time.perf_counter() - started) * 1000, 3),
        knowledge=knowledge_block(chosen),
        reason="" if chosen else reason,
        notes=notes,
    )


def _lexical(
    conn: sqlite3.Connection, prompt: str, scopes: tuple[str, ...], settings: Settings
) -> tuple[list[tuple[str, float]], str, str]:
    config, search = settings.recall, settings.search
    weights = FieldWeights(search.title_weight, search.heading_weight, search.body_weight)
    rules = EvidenceRules(
        config.min_terms,
        config.common_share,
        config.relative_floor,
        config.max_chance,
        config.min_lift,
    )
    known = {r[0] for r in conn.execute("SELECT DISTINCT scope FROM documents")}
    found = lexical_recall(conn, prompt, scopes, set(scopes) == known, weights, rules)
    ids = dict(conn.execute(_ids_sql(len(found.rows)), [r for r, _ in found.rows]).fetchall())
    ranked = [(ids[r], round(-score, 4)) for r, score in found.rows if r in ids]
    if ranked:
        return ranked, "kept", ""
    if not found.informative:
        return [], "empty", "no word of the prompt is specific to the knowledge base"
    return [], "empty", "no section has enough evidence for this prompt"


def _ids_sql(count: int) -> str:
    return f"SELECT rowid, id FROM chunks WHERE rowid IN ({', '.join('?' * count)})"


def _hydrate(conn: sqlite3.Connection, ranked: Sequence[tuple[str, float]]) -> list[dict[str, Any]]:
    if not ranked:
        return []
    marks = ", ".join("?" * len(ranked))
    rows = conn.execute(
        "SELECT c.id, c.content_hash, d.path, c.scope, c.title, c.heading_path, c.content, "
        "c.tokens, c.start_line, c.end_line, coalesce(d.updated_at, d.indexed_at) AS updated "
        f"FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id IN ({marks})",
        [chunk for chunk, _ in ranked],
    )
    by_id = {row["id"]: row for row in rows}
    return [_section(by_id[chunk], score) for chunk, score in ranked if chunk in by_id]


def _section(row: sqlite3.Row, score: float) -> dict[str, Any]:
    return {
        "chunk_id": row["id"],
        "doc_path": row["path"],
        "scope": row["scope"],
        "title": row["title"],
        "heading_path": json.loads(row["heading_path"]),
        "content": row["content"],
        "content_hash": row["content_hash"],
        "score": score,
        "tokens": row["tokens"],
        "start_line": row["start_line"],
        "end_line": row["end_line"],
        "updated_at": row["updated"],
    }


def _remember(
    store: Store,
    session_id: str | None,
    chosen: Sequence[Mapping[str, Any]],
    now: float,
    hours: float,
) -> tuple[str, ...]:
    """Record the injection; a busy or read-only index costs the no-repeat memory of this turn,
    never the answer."""
    if not session_id or not chosen:
        return ()
    pairs = [(s["chunk_id"], s["content_hash"]) for s in chosen]
    # Session memory is worth no fsync and no long wait on the hook's path: a power cut or a
    # reindex holding the write lock can only cost the no-repeat memory of this turn.
    try:
        with store.write(wait_ms=REMEMBER_WAIT_MS, durable=False) as conn:
            session.record(conn, session_id, pairs, now, hours)
    except (StoreError, sqlite3.Error) as exc:
        return (f"could not remember this injection: {exc}",)
    return ()


def _optional(data: Mapping[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise QueryError(f"hook input '{key}' must be a {kind.__name__}, got {value!r}")
    return value


def _scopes(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise QueryError("hook input 'scopes' must be a list of scope names")
    return tuple(value) or None


def _mode(value: object) -> RecallMode | None:
    if value is None:
        return None
    if value not in MODES:
        raise QueryError(f"recall mode must be auto, bm25 or hybrid, got {value!r}")
    return value  # type: ignore[return-value]
