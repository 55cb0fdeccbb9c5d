"""Answering a recall from the index: rank (hybrid search, or BM25 behind the lexical
evidence gate, see :mod:`briefd.recall.ranking`), inject in proportion to the confidence (strong:
the sections and what they link to; weak: one short section and
pointers to the other candidates; generic: nothing), leave out what
the session already has, fit the budget, remember what was injected. The server, the daemon and
the in-process hook all come here, so they answer alike.

This module and what it imports stay light (no numpy, no model): a BM25-only hook answers
through :func:`answer` with a store it opened itself; hybrid answers come through
:meth:`briefd.api.Briefd.recall`, which passes its search as ``hybrid``.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from briefd.errors import EmbeddingError, QueryError, StoreError
from briefd.recall import pack, ranking
from briefd.recall.block import Count, block_tokens, knowledge_block
from briefd.recall.evidence import MAX_TERMS
from briefd.recall.generic import chatter
from briefd.recall.ranking import Confidence, HybridSearch, Ranking, tier
from briefd.settings import RecallSettings, Settings
from briefd.state.sessions import IndexSessions, SessionMemory
from briefd.store.db import Store
from briefd.store.runlock import index_run
from briefd.store.scopes import resolve_scopes, served_none
from briefd.store.supersession import superseded_by, superseders
from briefd.text import query_terms

if TYPE_CHECKING:
    from briefd.retrieval.semantic import SemanticIndex
    from briefd.store.activity import QueryLogEntry

RecallMode = Literal["auto", "bm25", "hybrid"]
MAX_PROMPT_CHARS = 20_000
MAX_SESSION_ID = 256  # an id, not content: it is stored with every injected section
MAX_BLOCK_CHARS = 10_000  # Claude Code shows longer hook output as a preview only
MODES = ("auto", "bm25", "hybrid")
KEYWORDS_ONLY = "answered by keywords only (bm25)"  # the note of an auto recall the model failed
GENERIC = "generic"  # the gate a hook prompt read as everyday chatter is logged with (T3)
STANDING_IN = " while the recall daemon starts"
EMPTY_INDEX = "no document is indexed yet; run `briefd index`"  # the CLI search says the same
# A client's own command typed as the prompt (Claude Code's /clear, /compact, /model, a custom
# /project:review): a word after one slash, then flags only; a path (/etc/hosts) is not one.
_COMMAND = re.compile(r"/[^\W\d][\w.:-]*(?=\s|$)")
_FLAGS = re.compile(r"(?:\s+--?[^\W\d][\w-]*(?:=\S*)?)*\s*")
_WORDS = re.compile(r"\S{1,80}")  # see :func:`searched`


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """One prompt to recall for. ``None`` fields take the ``recall.*`` settings."""

    prompt: str
    session_id: str | None = None
    max_tokens: int | None = None
    top_k: int | None = None
    scopes: tuple[str, ...] | None = None
    mode: RecallMode | None = None

    def __post_init__(self) -> None:
        if self.session_id is not None and len(self.session_id) > MAX_SESSION_ID:
            raise QueryError(
                f"session_id is {len(self.session_id)} characters; at most {MAX_SESSION_ID} "
                "(send the agent's session id, not content)"
            )

    @classmethod
    def from_json(cls, data: object) -> RecallRequest:
        """From hook JSON (``prompt``, ``session_id``, …; unknown keys are ignored)."""
        if not isinstance(data, dict):
            raise QueryError("hook input must be a JSON object with a 'prompt' string")
        prompt = data.get("prompt")
        if not isinstance(prompt, str):
            raise QueryError("hook input has no 'prompt' string; send the prompt as 'prompt'")
        # VS Code's hooks send ``sessionId`` (code.visualstudio.com/docs/agent-customization/hooks)
        session = _optional(data, "session_id", str) or _optional(data, "sessionId", str)
        return cls(
            prompt=_unicode(prompt),
            session_id=None if session is None else _unicode(session),
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
    # strong / weak / none (see briefd.recall.confidence); keyword / untiered: no tier was
    # measured (BM25, or an index without the generic calibration), the gate's verdict decided
    confidence: str = ""
    specificity: float | None = None
    # nothing matched and the engine read the prompt as everyday chatter ("continue", "thanks,
    # go on", only common words, or generic by its specificity): logged so, it is no gap (T3)
    generic: bool = False

    @property
    def asked(self) -> bool:
        """Whether the prompt asked anything to log: not an empty one, nor a client command
        alone (/clear, /compact), which would read as knowledge gaps (T3) in every report."""
        command, rest = client_command(self.prompt)
        return bool(self.prompt) and not (command and not rest)

    def log_entry(self) -> QueryLogEntry:
        """This answer as the query log keeps a hook prompt (T3, T6), whoever answered it: the
        sections found (those the session received before count: no gap), the best score, the
        chunk ids served (pointers are not). Imported here: the hook's own process, which
        logs nothing, never loads the query log's module (numpy, the model)."""
        from briefd.store.activity import QueryLogEntry, now_iso

        served = tuple(s["chunk_id"] for s in self.sections if not s.get("pointer"))
        top = self.sections[0]["score"] if self.sections else None
        found = len(self.sections) + self.already_injected
        gate = GENERIC if self.generic else self.gate
        return QueryLogEntry(
            "recall", self.prompt, (), found, top, round(self.took_ms, 3), "hook", now_iso(),
            "hook", gate, served,
        )  # fmt: skip

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
            "confidence": self.confidence,
            "specificity": self.specificity,
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


def ready_mode(conn: sqlite3.Connection, mode: str, semantic: SemanticIndex | None) -> str:
    """:func:`choose_mode` in a process that has the model: ``auto`` is hybrid only when the
    index holds this model's vectors, all of them, as search's default mode wants; an index
    embedded under another model id (an upgrade, another CPU's) answers by keywords until
    ``briefd index`` embeds it, where the daemon and the server's hook route refused (400)."""
    chosen = choose_mode(conn, mode, semantic is not None)
    if chosen != "hybrid" or mode != "auto" or semantic is None:
        return chosen
    from briefd.retrieval.search import vectors_missing  # numpy: never on the hook's own path

    return "bm25" if vectors_missing(conn, semantic) is not None else "hybrid"


def answer(
    store: Store,
    request: RecallRequest,
    settings: Settings,
    hybrid: HybridSearch | None = None,
    memory: SessionMemory | None = None,
    stand_in: bool = False,
) -> RecallResult:
    """Recall for one prompt; with ``hybrid`` the ranking is that search's (gate included),
    without it BM25 behind the lexical evidence gate. ``memory`` holds what each session was
    given (default: the index's own table; replicas share one, :mod:`briefd.state`).
    ``stand_in``: this BM25 answer stands in for a hybrid one (the hook's first prompt, while
    the daemon loads the model). A BM25 answer where ``auto`` was asked for (no model, an index
    without vectors, a model that failed or missed its deadline), and a stand-in, are tiered
    on their lexical evidence (:func:`briefd.recall.ranking.by_keywords`); one that asked for
    ``bm25`` is the lexical gate's verdict alone (``keyword``)."""
    memory = memory or IndexSessions(lambda: store)
    started = time.perf_counter()
    config = settings.recall
    prompt = request.prompt.strip()[:MAX_PROMPT_CHARS]
    now = time.time()
    with store.read() as conn:
        scopes = resolve_scopes(
            conn, request.scopes or config.scopes or None, settings.default_scopes
        )
    found, hybrid, failed = _ranked(store, request, prompt, scopes, settings, hybrid)
    confidence = tier(found.specificity, config.weak_z, config.strong_z) if found.ranked else "none"
    if confidence == "strong" and found.lifted:
        confidence = "weak"  # specific only against its own language's chatter: one section
    tiered = stand_in or (request.mode or config.mode) == "auto"  # not an asked-for bm25
    said = (STANDING_IN if stand_in else "") if hybrid is None and tiered else None
    chance = False
    if said is not None and found.ranked:  # by keywords where a tier is due
        found, confidence, chance = _by_keywords(store, settings, found, stand_in)
    if hybrid is not None and confidence == "none" and found.ranked:
        confidence = _by_its_words(store, prompt, scopes, settings, found)
    direct, related, budget = _plan(found, confidence, request, config)
    with store.read() as conn:
        sections = _hydrate(conn, direct) + _linked(conn, related, {c for c, _ in direct})
        sections = _superseded(conn, sections, scopes)
    seen, forgot = _seen(memory, request.session_id, now, config.session_hours)
    fresh, repeated = pack.unseen(sections, seen, whole=confidence == "strong")
    if confidence == "weak" and fresh[:1] != sections[:1]:
        fresh = []  # a weak match is evidence for its best section alone, given before
    packing = pack.brief if confidence == "weak" else pack.fit
    count = _exact() if hybrid is not None else None  # see briefd.recall.block
    chosen = packing(fresh, budget, min(config.max_chars, MAX_BLOCK_CHARS), count)
    notes = failed + forgot
    notes += _remember(memory, request.session_id, chosen, now, config.session_hours)
    return RecallResult(
        prompt=prompt,
        session_id=request.session_id,
        mode="hybrid" if hybrid is not None else "bm25",
        gate=found.gate,
        sections=tuple(chosen),
        already_injected=repeated,
        tokens=block_tokens(chosen, count),
        budget=budget,
        took_ms=round((time.perf_counter() - started) * 1000, 3),
        knowledge=knowledge_block(chosen),
        reason=_reason(found, confidence, config, bool(sections), chosen, repeated, said),
        notes=notes,
        confidence=_label(confidence, found, hybrid is not None, chance),
        specificity=None if found.specificity is None else round(found.specificity, 3),
        generic=not sections and _generic(prompt, found, confidence),
    )


def _label(confidence: Confidence, found: Ranking, hybrid: bool, chance: bool) -> str:
    """The confidence an answer says it has: its tier, or, for one no tier was measured for
    (BM25 behind the lexical gate, whose verdict alone decides; a hybrid answer from an index
    without the generic calibration), what its evidence was: ``keyword`` or ``untiered``,
    where "strong" claimed a confidence nobody measured."""
    if confidence != "strong" or found.specificity is not None or chance:
        return confidence
    return "untiered" if hybrid else "keyword"


def _by_keywords(
    store: Store, settings: Settings, found: Ranking, stand_in: bool
) -> tuple[Ranking, Confidence, bool]:
    """A keyword answer's tier (:func:`briefd.recall.ranking.by_keywords`), its ranking with
    its keyword specificity (its best BM25 score against what the generic probes score in
    this index, :mod:`briefd.recall.keywords`), and whether chance alone decided: the levels
    not stored (an answer does not measure them), or a stand-in's where too few probes reach
    the index. Otherwise, too few probes reaching it, the lexical gate's verdict stands."""
    from briefd.recall import keywords

    levels = keywords.levels(store, settings, measure_now=False)
    z = None if levels is None else levels.z(found.ranked[0][1])
    found = replace(found, specificity=z)
    if z is None and levels is not None and not stand_in:
        return found, "strong", False
    return found, ranking.by_keywords(z, found.chance, settings.recall), z is None


def _by_its_words(
    store: Store, prompt: str, scopes: tuple[str, ...], settings: Settings, found: Ranking
) -> Confidence:
    """A hybrid answer read as generic: one short section when its words, by keywords, pick
    the same best section and meet there too unlikely by chance for chatter
    (:func:`briefd.recall.ranking.lexically_specific`), else nothing."""
    asked = client_command(prompt)[1]
    if chatter(asked):  # "thanks, run the tests again": no query for what its words settle
        return "none"
    with store.read() as conn:
        specific = ranking.lexically_specific(conn, asked, scopes, settings, found.ranked[0][0])
    return "weak" if specific else "none"


def _generic(prompt: str, found: Ranking, confidence: Confidence) -> bool:
    """Whether a prompt nothing matched is everyday chatter, not a question the knowledge
    misses: only common words, read as generic by its specificity (hybrid), or by its words
    (:func:`briefd.recall.generic.chatter`, in either mode)."""
    _, asked = client_command(prompt)
    by_specificity = bool(found.ranked) and confidence == "none" and found.specificity is not None
    return not query_terms(asked) or by_specificity or chatter(asked)


def _exact() -> Count:
    """The exact counter, for answers that loaded the model (the BM25 hook path never imports
    it)."""
    from briefd.tokens import count_tokens

    return count_tokens


def _ranked(
    store: Store,
    request: RecallRequest,
    prompt: str,
    scopes: tuple[str, ...],
    settings: Settings,
    hybrid: HybridSearch | None,
) -> tuple[Ranking, HybridSearch | None, tuple[str, ...]]:
    """The ranking, the hybrid search it came from (None: BM25) and a note: in ``auto``, a
    model that fails (a remote embedding service down) leaves BM25, said, as search does."""
    top_k = request.top_k or settings.recall.top_k
    try:
        return _rank(store, prompt, scopes, top_k, settings, hybrid), hybrid, ()
    except EmbeddingError as exc:
        if hybrid is None or (request.mode or settings.recall.mode) != "auto":
            raise
        said = f"{KEYWORDS_ONLY}: the embedding model failed ({exc})"
        return _rank(store, prompt, scopes, top_k, settings, None), None, (said,)


def _rank(
    store: Store,
    prompt: str,
    scopes: tuple[str, ...],
    top_k: int,
    settings: Settings,
    hybrid: HybridSearch | None,
) -> Ranking:
    command, prompt = client_command(prompt)
    if command and not prompt:
        return Ranking([], "off", f"the prompt is the client command {command}, not a question")
    if not prompt or not scopes:  # no scope at all: no document (a first index run stopped)
        return Ranking([], "off", "empty prompt" if not prompt else empty_index(store))
    if not query_terms(prompt):
        return Ranking([], "empty", "the prompt has only common words")
    related = settings.recall.related
    if hybrid is not None:  # outside a read transaction: search opens its own
        found = hybrid(searched(prompt), scopes, top_k, related)
        if found.gate == "empty" and not found.reason:
            return replace(found, reason="the prompt looks unrelated to the knowledge base")
        return found
    with store.read() as conn:
        return ranking.lexical(conn, prompt, scopes, settings, related)


def empty_index(store: Store) -> str:
    """Why an index without documents answers nothing: none was built (or a first run
    stopped), or a first index run is building it now, said with how far it is, as the run's
    lock file tells (a hook that said "run `briefd index`" then sent the user to start what
    was already running), or the last run found files and served none (outside the scopes:
    another run changes nothing, the settings do)."""
    run = index_run(store.path)
    if run is None:
        with store.read() as conn:
            return served_none(conn) or EMPTY_INDEX
    facts = [f"pid {run.pid}"] if run.pid else []
    if run.since:
        facts.append(f"for {max(0, round(time.time() - run.since))} s")
    if run.stage and run.total:
        facts.append(f"{run.stage} {run.done}/{run.total}")
    said = f" ({', '.join(facts)})" if facts else ""
    return (
        f"no document is indexed yet: an index run{said} is building the index now; prompts "
        "get knowledge once it finishes"
    )


def searched(prompt: str) -> str:
    """What a hybrid recall searches for ``prompt``: all of it, or its head with at most
    ``MAX_TERMS`` distinct terms, as many as a BM25 recall looks at. A pasted page, diff or long
    spec (search takes up to 256 distinct words) cost the warm daemon 2-5 s on a loaded 2-core
    machine, past the hook's 1 s: the prompt got nothing, and three such prompts in a row had
    the daemon ended as stuck. The model reads only the head of a long prompt anyway (512
    tokens). A run of 80 characters without a space counts as a word here."""
    seen: set[str] = set()
    for word in _WORDS.finditer(prompt):
        seen.update(query_terms(word.group()))
        if len(seen) > MAX_TERMS:
            return prompt[: word.start()].rstrip()
    return prompt


def client_command(prompt: str) -> tuple[str, str]:
    """(the client command the prompt starts with, the words after it): ``/compact`` alone or
    with flags only asks the knowledge base nothing, and ``/review the refund limits`` asks about
    the refund limits, not about reviews. ("", prompt) when it starts with none."""
    command = _COMMAND.match(prompt)
    if command is None:
        return "", prompt
    rest = prompt[command.end() :]
    flags = _FLAGS.fullmatch(rest)
    return command.group(), "" if flags is not None else rest.strip()


def _plan(
    found: Ranking, confidence: Confidence, request: RecallRequest, config: RecallSettings
) -> tuple[list[tuple[str, float]], list[tuple[str, str]], int]:
    """(direct hits, related sections, token budget) the confidence allows: the hits scoring
    at least ``recall.relative_floor`` × the best (in a small knowledge base the top few are
    most of it, and the fourth may be there only for being less unrelated than the fifth),
    and the sections linked from those."""
    budget = request.max_tokens or config.max_tokens
    if confidence == "none":
        return [], [], budget
    top_k = request.top_k or config.top_k
    ranked = found.ranked[:top_k]
    floor = config.relative_floor * ranked[0][1] if ranked else 0.0
    direct = [(chunk, score) for chunk, score in ranked if score >= floor]
    if confidence == "weak":  # one short section, the other candidates as pointers
        return direct, [], min(budget, config.weak_tokens)
    kept = {chunk for chunk, _ in direct}
    return direct, [pair for pair in found.related if pair[1] in kept][: config.related], budget


def _reason(
    found: Ranking,
    confidence: Confidence,
    config: RecallSettings,
    matched: bool,
    chosen: Sequence[Mapping[str, Any]],
    repeated: int,
    keywords: str | None = None,
) -> str:
    """Why nothing was injected (""; something was). ``keywords``: a keyword answer tiered on
    its lexical evidence ("" or what it stood in for), None: a hybrid or an untiered one."""
    if chosen:
        return ""
    if matched:
        if repeated and confidence == "weak":
            return "its best matching section was already injected in this session"
        if repeated:
            return "every matching section was already injected in this session"
        return "no matching section fits the budget"
    if (
        found.ranked
        and confidence == "none"
        and found.specificity is not None
        and keywords is not None
    ):
        return (
            f"answered by keywords{keywords}: its best section's match is no stronger than "
            "generic requests' matches in this index, nor its words' meeting unlikely enough "
            f"by chance (keyword specificity {found.specificity:.2f}; recall.weak_z "
            f"{config.weak_z:g})"
        )
    if found.ranked and confidence == "none" and found.specificity is not None:
        return (
            "the prompt reads like a generic request, not a question about the knowledge base "
            f"(specificity {found.specificity:.2f} < recall.weak_z {config.weak_z:g})"
        )
    if found.ranked and confidence == "none" and found.chance is not None:  # chance decided
        return (
            f"answered by keywords{keywords or ''}: the prompt's words in its "
            f"best section would meet in {found.chance:.2g} sections by chance alone, too "
            "likely for keywords alone to inject anything"
        )
    return found.reason or "no section has enough evidence for this prompt"


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


def _linked(
    conn: sqlite3.Connection, related: Sequence[tuple[str, str]], direct: set[str]
) -> list[dict[str, Any]]:
    """Related sections (R6) after the hits, each marked with the hit that links to it."""
    wanted = [(chunk, source) for chunk, source in related if source in direct]
    sections = _hydrate(conn, [(chunk, 0.0) for chunk, _ in wanted])
    sources = dict(wanted)
    return [{**s, "related_to": sources[s["chunk_id"]]} for s in sections]


def _superseded(
    conn: sqlite3.Connection, sections: list[dict[str, Any]], scopes: Sequence[str]
) -> list[dict[str, Any]]:
    """Sections of superseded documents name the documents superseding them (K2)."""
    found = superseders(conn, {s["doc_path"] for s in sections})
    return [
        {**s, "superseded_by": list(superseded_by(found, s["doc_path"], scopes))}
        if s["doc_path"] in found
        else s
        for s in sections
    ]


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


def _seen(
    memory: SessionMemory, session_id: str | None, now: float, hours: float
) -> tuple[dict[str, str], tuple[str, ...]]:
    """What the session was given; an unreachable memory costs the no-repeat check of this
    turn, never the answer."""
    if not session_id:
        return {}, ()
    try:
        return memory.seen(session_id, now, hours), ()
    except (StoreError, sqlite3.Error) as exc:
        return {}, (f"could not read what this session was given: {exc}",)


def _remember(
    memory: SessionMemory,
    session_id: str | None,
    chosen: Sequence[Mapping[str, Any]],
    now: float,
    hours: float,
) -> tuple[str, ...]:
    """Record the injection; a busy or read-only index costs the no-repeat memory of this turn,
    never the answer."""
    if not session_id or not chosen:
        return ()
    pairs = [(s["chunk_id"], pack.given(s)) for s in chosen if not s.get("pointer")]
    # Session memory is worth no fsync and no long wait on the hook's path: a power cut or a
    # reindex holding the write lock can only cost the no-repeat memory of this turn.
    try:
        memory.remember(session_id, pairs, now, hours)
    except (StoreError, sqlite3.Error) as exc:
        return (f"could not remember this injection: {exc}",)
    return ()


def _unicode(text: str) -> str:
    """``text`` with each lone surrogate — JSON may spell one (``"\\ud800"``, half an emoji cut
    by the agent), an argument not in UTF-8 arrives as one — made U+FFFD: SQLite, the tokenizer
    and the session memory take only valid Unicode, and one broken character must not cost a
    prompt its answer."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


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
