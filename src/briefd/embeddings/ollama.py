"""The ``ollama`` adapter: ``POST {base_url}/api/embed`` with ``{"model", "input": [...]}``.

Ollama answers ``{"embeddings": [[...], ...]}`` in input order. It does not tell queries from
passages, so ``kind`` becomes a text prefix (e5 models get ``query: `` / ``passage: ``; see
``embeddings.query_prefix`` / ``passage_prefix``).
"""

from __future__ import annotations

from typing import Any

import httpx

from briefd.embeddings.remote import RemoteEmbedder, prefixes_for, service_client
from briefd.settings import EmbeddingsSettings
from briefd.settings.trust import USERS_WORD, ProjectNamed, unsent_problem

DEFAULT_BASE_URL = "http://127.0.0.1:11434"


class OllamaEmbedder(RemoteEmbedder):
    service = "Ollama"

    def __init__(
        self,
        model: str,
        base_url: str,
        client: httpx.Client,
        prefixes: tuple[str, str] = ("", ""),
    ) -> None:
        url = base_url.rstrip("/") + "/api/embed"
        super().__init__(model, url, client, "ollama", prefixes)

    @classmethod
    def from_settings(
        cls,
        config: EmbeddingsSettings,
        client: httpx.Client | None = None,
        named: ProjectNamed = USERS_WORD,
    ) -> OllamaEmbedder:
        """``named``: what a project's own settings file gave: nothing is sent to a host only
        it names (every request is refused, before connecting)."""
        prefixes = prefixes_for(config.model, config.query_prefix, config.passage_prefix)
        base_url = config.base_url or DEFAULT_BASE_URL
        proxy = problem = None
        if client is None:
            client, proxy, problem = service_client(base_url, config.timeout_seconds)
        made = cls(config.model, base_url, client, prefixes)
        made.refused = unsent_problem(named, "embeddings.base_url", base_url, None, None) or problem
        made.proxy = proxy
        made.batch = config.batch_size
        made.query_timeout = config.query_timeout_seconds
        return made

    def _request(self, texts: list[str], timeout: float | None) -> Any:
        body = self._post({"model": self.name, "input": texts}, None, timeout)
        if not isinstance(body, dict) or "embeddings" not in body:
            raise self._malformed("JSON without 'embeddings'")
        return body["embeddings"]

    def _hint(self) -> str:
        return "start it with `ollama serve`, or check embeddings.base_url"

    def _status_hint(self, response: httpx.Response) -> str:
        if response.status_code != 404:
            return super()._status_hint(response)
        if response.headers.get("content-type", "").startswith("application/json"):
            return f"run `ollama pull {self.name}`, or check embeddings.model"  # Ollama's own
        # a router's plain 404: no /api/embed at this address (a base_url ending in /v1)
        return (
            "no /api/embed there: set embeddings.base_url to Ollama's own address "
            "(http://HOST:11434, without /v1 or /api), or upgrade an Ollama too old to have it"
        )
