"""The recall daemon's keyword answer (I8, I10), end to end: the real hook and the daemon it
spawns, the example knowledge embedded by a fake Ollama on 127.0.0.1 that then fails, so the
daemon answers by keywords. That answer had no tiers: every section the lexical gate kept went
in at full size ("keyword"), on every generic turn while the model was away or late."""

from __future__ import annotations

import json
from pathlib import Path

from briefd.api import Briefd
from briefd.hook.place import daemon_files
from briefd.recall import keywords
from briefd.settings import Settings
from briefd.store import documents as docs_table
from tests.conftest import EXAMPLE
from tests.embeddings.fakehttp import Reply, Request, fake_server, json_reply
from tests.hook.conftest import RunHook, hook_json
from tests.hook.test_daemon import (
    DAEMON,
    as_json,
    embedded_with_ollama,
    no_daemon_left,
    serving,
    vectors,
    wait_for,
)

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
        remote = embedded_with_ollama(settings, ollama.url, EXAMPLE)
        with Briefd(settings, embedder=None) as api, api.store.write() as conn:
            # as an earlier briefd left it: the daemon measures
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


def test_where_no_daemon_can_run_prompts_are_answered_by_keywords_not_a_model_each(
    settings: Settings, tmp_path: Path, run_hook: RunHook
) -> None:
    """An index folder the hook cannot make the daemon's lock file in (read-only: a mounted
    team index) starts no daemon, and every prompt loaded the embedding model in the hook's
    own process: measured on a read-only copy of the example knowledge, 11-12 s a prompt
    (past the 10 s the client gives the hook), the model failing to store its graph there.
    Such prompts are now answered by keywords at once, as a first prompt is, saying why, and
    ``--status`` says no daemon starts (it said "the next prompt starts it"). Here the lock
    path is a folder: no lock file can be made, as in a read-only folder."""
    with fake_server() as ollama:
        ollama.on("POST", "/api/embed", vectors)
        remote = embedded_with_ollama(settings, ollama.url, EXAMPLE)
        lock = Path(daemon_files(str(settings.db.resolve()), {}).lock)
        lock.mkdir()
        asked = len(ollama.requests)
        done = run_hook("--json", payload=hook_json(SPECIFIC, "s-1"), env={**DAEMON, **remote})
        assert done.code == 0, done.stderr
        answer = json.loads(done.stdout)
        assert (answer["via"], answer["mode"], answer["confidence"]) == (
            "in-process",
            "bm25",
            "strong",
        )
        assert "Kestrel-Signature" in answer["knowledge"]
        assert len(ollama.requests) == asked  # the model was not asked for this prompt
        assert done.stderr == (
            f"briefd recall: no recall daemon: cannot lock {lock} (Is a directory); answered "
            "by keywords (recall.daemon: false answers with the model, loaded for every "
            "prompt)\n"
        )
        shown = run_hook("--status", env={**DAEMON, **remote}).stdout
        assert shown.startswith(
            f"recall daemon: not running, and none starts: cannot lock {lock} (Is a directory)"
        ), shown
