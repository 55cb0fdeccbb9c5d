"""Answering in-process, when no server did: settings and index found by discovery; the
embedding model is loaded only when the answer is hybrid (the index has vectors and
embeddings are on), otherwise nothing heavier than SQLite is imported."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from briefd.hook import discover
from briefd.recall.engine import RecallRequest, answer, choose_mode, embeddings_on
from briefd.settings import Settings, load_settings, with_overrides
from briefd.store.db import Store

HOOK_BUSY_TIMEOUT_MS = 2000  # a hook waits this long for a writer, not the CLI's 30 s


def hook_settings(
    env: Mapping[str, str],
    config: str | None = None,
    db: str | None = None,
    found: bool | None = None,
) -> Settings:
    """Settings as the hook discovers them (see :mod:`briefd.hook.discover`): the index a
    settings file names is the one answered from, even when it is not built yet — never the
    user's default index, which holds other knowledge. ``found``: ``config`` is the file
    discovery found, not one the user named (None: so when ``config`` is None)."""
    path = config or discover.config_file(env)
    # the fast path has used recall.server already; "off" would not parse as a URL setting
    env = {k: v for k, v in env.items() if k != "BRIEFD_RECALL__SERVER"}
    settings = load_settings(  # the hook runs in the project's folder (hook.main._up)
        Path(path) if path else None,
        env=env,
        overrides={"db": db},
        project=Path(),
        found=(config is None) if found is None else found,
        read=discover.settings_mapping(path, env) if path else None,
    )
    named = discover.read_config(path, env).get("db")  # `db: .briefd/briefd.db` names it too
    if db or "BRIEFD_DB" in env or named or settings.db != Settings().db:
        return settings
    return with_overrides(settings, {"db": discover.local_db(env)})


def recall_here(
    request: RecallRequest,
    settings: Settings,
    deadline: float | None = None,
    stand_in: bool = False,
) -> dict[str, Any]:
    """The JSON form of a recall answered in this process; a remote embedding service is
    waited for (the query, the generic probes of a calibration not stored yet) only until
    ``deadline`` (``time.monotonic()``, the hook's budget), then the prompt is answered by
    keywords, saying why. ``stand_in``: a BM25 answer while the daemon starts; when the daemon
    will answer hybrid (embeddings on, the index has vectors), it is tiered on its lexical
    evidence alone (:func:`briefd.recall.ranking.by_keywords`), as the daemon tiers its own;
    when the daemon answers by keywords too, it is answered as the daemon will (its keyword
    tiers, :mod:`briefd.recall.keywords`)."""
    store = Store.open(settings.db, source=settings.source)
    try:
        store.conn.execute(f"PRAGMA busy_timeout = {HOOK_BUSY_TIMEOUT_MS}")
        embeddings = embeddings_on(settings)
        with store.read() as conn:
            tiered = stand_in and choose_mode(conn, settings.recall.mode, embeddings) == "hybrid"
            if stand_in and not tiered:  # the daemon answers by keywords too: as it, tiered
                request = replace(request, mode=None)
            mode = choose_mode(conn, request.mode or settings.recall.mode, embeddings)
        if mode != "hybrid":
            return answer(store, request, settings, stand_in=tiered).to_dict()
    finally:
        store.close()
    import gc

    gc.enable()  # off for the hook's fast path (briefd/hook/script.py); a model load is long
    from briefd.api import Briefd
    from briefd.embeddings.remote import RemoteEmbedder

    with Briefd(settings) as api:
        embedder = api.embedder
        if isinstance(embedder, RemoteEmbedder):  # a local model does not hang on a service
            embedder.deadline = deadline
        return api.recall(request).to_dict()
