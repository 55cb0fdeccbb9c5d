"""The recall daemon's keyword answer (I8, I10), end to end: the real hook and the daemon it
spawns, the example knowledge embedded by a fake Ollama on 127.0.0.1 that then fails, so the
daemon answers by keywords. That answer had no tiers: every section the lexical gate kept went
in at full size ("keyword"), on every generic turn while the model was away or late."""

from __future__ import annotations

import json
from pathlib import Path

from briefd.api import Briefd
from briefd.recall import keywords
from briefd.settings import Settings, with_overrides
from briefd.store import documents as docs_table
from tests.conftest import EXAMPLE
from tests.embeddings.fakehttp import Reply, Request, fake_server, json_reply
from tests.hook.conftest import RunHook
from tests.hook.test_daemon import DAEMON, as_json, no_daemon_left, serving, vectors, wait_for

__all__ = ["no_daemon_left"]  # the autouse fixture: every test stops the daemons it started

GENERIC = "the tests are failing on main"
SPECIFIC = "which header carries the HMAC signature of a webhook and how is the secret rotated"


def test_the_daemons_keyword_answer_is_tiered(
    settings: Settings, tmp_path: Path, run_hook: RunHook
) -> None:
    away = [False]

    def embed(request: Request) -> Reply:
        if away[0]:
            return json_reply({"error": "model is loading"}, 500)
        return vectors(request)

    with fake_server() as ollama:
        ollama.on("POST", "/api/embed", embed)
        remote = {
            "BRIEFD_EMBEDDINGS__ENABLED": "true",
            "BRIEFD_EMBEDDINGS__ADAPTER": "ollama",
            "BRIEFD_EMBEDDINGS__MODEL": "nomic-embed-text",
            "BRIEFD_EMBEDDINGS__BASE_URL": ollama.url,
        }
        overrides = {k[7:].lower().replace("__", "."): v for k, v in remote.items()}
        with Briefd(with_overrides(settings, {**overrides, "embeddings.enabled": True})) as api:
            assert api.index(EXAMPLE).vectors_missing == 0
            with api.store.write() as conn:  # as an earlier briefd left it: the daemon measures
                conn.execute("DELETE FROM index_meta WHERE key = ?", (keywords.KEY,))
        db = settings.db.resolve()
        away[0] = True
        as_json(run_hook, SPECIFIC, "s-1", **remote)  # answered here; the daemon starts
        wait_for(lambda: serving(db))
        generic = as_json(run_hook, GENERIC, "s-2", **remote)
        assert (generic["via"], generic["mode"]) == ("daemon", "bm25")
        assert (generic["confidence"], generic["sections"], generic["knowledge"]) == (
            "none",
            [],
            "",
        )
        assert str(generic["reason"]).startswith("answered by keywords: its best section's match")
        specific = as_json(run_hook, SPECIFIC, "s-3", **remote)
        assert (specific["via"], specific["mode"], specific["confidence"]) == (
            "daemon",
            "bm25",
            "strong",
        )
        assert "Kestrel-Signature" in str(specific["knowledge"])
        assert run_hook("--stop", env={**DAEMON, **remote}).code == 0
    with Briefd(settings, embedder=None) as api, api.store.read() as conn:
        stored = docs_table.meta(conn, keywords.KEY)  # the daemon measured them as it loaded
    assert stored is not None and json.loads(stored)["reaching"] >= keywords.MIN_REACHING
