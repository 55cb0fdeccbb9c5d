"""``GET /api/health`` says when searches answer by keywords only: a server started with
``--no-index`` on an index embedded with another model (an upgrade's new model id, a changed
``embeddings.model``) serves bm25 where the settings ask for hybrid. Over a real index and the
real HTTP app."""

from __future__ import annotations

from dataclasses import replace

from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.service import create_app
from briefd.service.routes.health import KEYWORDS_OPENLY
from briefd.settings import Settings
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.service.live import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}
FALLBACK = (
    "searched by keywords only (bm25): this index has no vectors of fake-b@fake-1 (it has "
    "vectors of fake-a@fake-1); run `briefd index` to embed it with this model"
)


def health_and_search(api: Briefd) -> tuple[dict[str, object], dict[str, object]]:
    with TestClient(create_app(api, service_config())) as client:
        health = client.get("/api/health", headers=AUTH)
        search = client.get("/api/search", params={"q": "partial refunds"}, headers=AUTH)
    assert health.status_code == 200 and search.status_code == 200, search.text
    return health.json(), search.json()


def test_health_says_searches_answer_by_keywords_only(
    settings: Settings, write_files: WriteFiles
) -> None:
    """The notice was null: only each search's warning said it, so a liveness check or the
    operator reading health saw an 'ok' server quietly without its vectors."""
    write_files({"domain/refunds.md": "# Refunds\n\nPartial refunds of a captured payment.\n"})
    with Briefd(settings, embedder=FakeEmbedder(name="fake-a")) as api:
        api.index()
        health, search = health_and_search(api)  # its own model's vectors: nothing to say
        assert (health["status"], health["notice"], search["mode"]) == ("ok", None, "hybrid")
    with Briefd(settings, embedder=FakeEmbedder(name="fake-b")) as other:  # served as it is
        health, search = health_and_search(other)
        assert (search["mode"], search["warnings"]) == ("bm25", [FALLBACK])
        assert (health["status"], health["notice"]) == ("ok", FALLBACK)
        with TestClient(create_app(other, service_config())) as client:  # without the token
            assert client.get("/api/health").json()["notice"] == KEYWORDS_OPENLY
        other.index()  # embeds with fake-b: searches are hybrid again, and the notice goes
        health, search = health_and_search(other)
        assert (health["notice"], search["mode"]) == (None, "hybrid")
    keywords = replace(settings, search=replace(settings.search, mode="bm25"))
    with Briefd(keywords, embedder=FakeEmbedder(name="fake-c")) as asked:  # bm25 as configured
        health, search = health_and_search(asked)
        assert (health["notice"], search["mode"], search["warnings"]) == (None, "bm25", None)
