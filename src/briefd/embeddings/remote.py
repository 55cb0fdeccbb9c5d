"""What the HTTP adapters (``ollama``, ``openai-compatible``) share: one POST, checked vectors.

The ``httpx.Client`` is injected (tests point it at a fake server speaking the real wire
format); by default one is made with ``embeddings.timeout_seconds``, which index runs wait. A
search's query (:meth:`RemoteEmbedder.embed_query`) waits ``embeddings.query_timeout_seconds``
instead, and after it timed out, the queries of the next :data:`QUIET_SECONDS` fail at once
(searches answer by keywords, saying so) rather than each waiting again. A service's vector size is
learned from its first answer (``dim`` probes once when read before any call) and every later
answer must keep it. Every failure becomes an :class:`EmbeddingError` naming the URL (never its ``user:password@``)
and what to check.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import numpy as np

from briefd.embeddings.base import Embedder, EmbeddingKind, Vectors, normalise
from briefd.errors import EmbeddingError
from briefd.proxy import Proxy, proxied_client, tls_context
from briefd.settings.names import without_account

E5_PREFIXES = ("query: ", "passage: ")


def service_client(url: str, timeout: float) -> tuple[httpx.Client, Proxy | None, str | None]:
    """The client for a service at ``url``, the environment's proxy for it, and why no request
    may be sent (a proxy unusable for ``url``, said on every request, not a traceback at
    start-up; a proxy only other URLs use is no matter)."""
    try:
        key = "embeddings.base_url"
        client, proxy = proxied_client(url, "embedding", key, EmbeddingError, timeout=timeout)
    except EmbeddingError as exc:
        return httpx.Client(timeout=timeout, verify=tls_context(), trust_env=False), None, str(exc)
    return client, proxy, None


def prefixes_for(model: str, query: str | None, passage: str | None) -> tuple[str, str]:
    """The texts' prefixes: as configured, else e5's ``query: `` / ``passage: `` for a model
    whose name says e5 (the family is trained with them), else none."""
    auto = E5_PREFIXES if "e5" in model.lower().replace("-", "").replace("_", "") else ("", "")
    return (auto[0] if query is None else query, auto[1] if passage is None else passage)


class RemoteEmbedder(Embedder):
    """Subclasses set ``service`` and implement :meth:`_request` (texts → rows of floats).
    ``prefixes`` (query, passage) are put before the texts; since they change the vectors,
    a non-empty pair is part of the runtime name, so the index re-embeds when they change."""

    service = "embedding service"
    batch = 0  # texts one request may carry (embeddings.batch_size); 0: any number
    # a credential the service may quote back in an error body, and what stands for it there
    secret: tuple[str, str] = ("", "")
    sleep: Callable[[float], None] = staticmethod(time.sleep)
    query_timeout: float | None = None  # embeddings.query_timeout_seconds; None: the client's
    # time.monotonic() past which no request waits (the prompt hook's budget); None: no such
    deadline: float | None = None
    within = "the prompt hook's time (recall.budget_seconds)"  # what the deadline ends
    # why nothing may be sent to ``url`` (settings.trust: only a project's own file names
    # it); every request is refused with it before connecting
    refused: str | None = None
    proxy: Proxy | None = None  # the environment's proxy requests go through, named when refused

    def __init__(
        self,
        model: str,
        url: str,
        client: httpx.Client,
        runtime: str,
        prefixes: tuple[str, str] = ("", ""),
    ) -> None:
        self.name = model
        self.runtime = runtime + (f"+prefixes{list(prefixes)}" if any(prefixes) else "")
        self.url = url
        self.prefixes = prefixes
        self._client = client
        self._dim = 0
        self._quiet_until = 0.0  # time.monotonic(): queries before it are not sent (timed out)

    @property
    def dim(self) -> int:
        if not self._dim:
            self.embed_batch(["dimension probe"], "query")
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._dim = value

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        return self._embed(texts, kind, None)

    def embed_query(self, text: str) -> Vectors:
        """A search's query, given ``query_timeout`` (someone waits for the answer, a hook
        for its prompt). After a timeout the service is not asked again for
        :data:`QUIET_SECONDS`: a server's queries wait in line for the one embedding worker,
        and each would otherwise wait the whole timeout for nothing."""
        if self.query_timeout is None:
            return self._embed([text], "query", None)
        quiet = self._quiet_until - time.monotonic()
        if quiet > 0:
            ago = QUIET_SECONDS - quiet
            when = "just now" if ago < 1 else f"{ago:.0f} s ago"
            raise self._error(
                f"did not answer a query within {self.query_timeout:g} s "
                f"(embeddings.query_timeout_seconds) {when}: this process does not ask it "
                f"again for {math.ceil(quiet)} s more; check that it is up"
            )
        try:
            return self._embed([text], "query", self.query_timeout)
        except _QueryTimeout as exc:
            self._quiet_until = time.monotonic() + QUIET_SECONDS
            raise self._error(str(exc)) from None

    def _embed(self, texts: Sequence[str], kind: EmbeddingKind, timeout: float | None) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        prefix = self.prefixes[0] if kind == "query" else self.prefixes[1]
        size = self.batch or len(texts)  # a service may cap a request's inputs (TEI: 32)
        parts = []
        for start in range(0, len(texts), size):
            part = [prefix + text for text in texts[start : start + size]]
            parts.append(self._checked(self._request(part, timeout), len(part)))
        return normalise(np.concatenate(parts))

    def _request(self, texts: list[str], timeout: float | None) -> Any:
        """The rows for ``texts``; ``timeout``: a query's (None: the client's)."""
        raise NotImplementedError

    def _post(
        self, body: dict[str, Any], headers: dict[str, str] | None, timeout: float | None
    ) -> Any:
        if self.refused is not None:
            raise EmbeddingError(self.refused)
        response = self._send(body, headers, timeout)
        wait = _asked_wait(response)
        patience = self._patience() if timeout is None else timeout
        if self.deadline is not None:  # a rate limit's wait too ends by the deadline
            patience = min(patience, self.deadline - time.monotonic())
        if wait is not None and wait <= patience:  # a rate limit's wait, once
            self.sleep(wait)
            response = self._send(body, headers, timeout)
        if response.status_code >= 400:
            raise self._error(
                f"answered HTTP {response.status_code}: {_error_text(response, self.secret)}; "
                + self._status_hint(response)
            )
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise self._malformed("a body that is not JSON") from None

    def _patience(self) -> float:
        """The longest wait a rate limit gets: one request's timeout."""
        read = self._client.timeout.read
        return read if read is not None else MAX_WAIT

    def _send(
        self, body: dict[str, Any], headers: dict[str, str] | None, timeout: float | None
    ) -> httpx.Response:
        """One request, waiting ``timeout`` (None: the client's), or only what is left before
        :attr:`deadline` (the prompt hook's budget) when that is less; none at all when
        nothing is left."""
        left = None if self.deadline is None else self.deadline - time.monotonic()
        if left is not None and left >= (self._patience() if timeout is None else timeout):
            left = None  # the request's own timeout ends first
        if left is not None and left <= 0.05:
            raise self._error(f"was not asked: {self.within} was up")
        wait = timeout if left is None else left
        try:
            if wait is None:
                return self._client.post(self.url, json=body, headers=headers)
            return self._client.post(self.url, json=body, headers=headers, timeout=wait)
        except httpx.TimeoutException:
            if left is not None:
                raise self._error(
                    f"did not answer within the {left:.1f} s left of {self.within}; check that "
                    "it is up"
                ) from None
            if timeout is not None:
                raise _QueryTimeout(
                    f"did not answer a query within {timeout:g} s "
                    f"(embeddings.query_timeout_seconds; index runs wait timeout_seconds): "
                    f"this process does not ask it again for {QUIET_SECONDS:g} s; check that "
                    "it is up"
                ) from None
            raise self._error(
                "timed out; check that it is up, or raise embeddings.timeout_seconds"
            ) from None
        except httpx.HTTPError as exc:
            if self.proxy is not None:
                raise self._error(self._unreached(self.proxy, exc)) from None
            raise self._error(f"cannot be reached ({type(exc).__name__}); {self._hint()}") from None

    def _unreached(self, proxy: Proxy, exc: httpx.HTTPError) -> str:
        """A request through the environment's proxy that failed: the proxy is named."""
        host = httpx.URL(self.url).host
        return (
            f"cannot be reached through {proxy.said()} ({type(exc).__name__}); check that "
            f"proxy, or, if the service is reachable without it, add {host} to NO_PROXY"
        )

    def _checked(self, rows: Any, count: int) -> Vectors:
        if not isinstance(rows, list) or len(rows) != count:
            got = len(rows) if isinstance(rows, list) else type(rows).__name__
            raise self._malformed(f"{got} vectors for {count} texts")
        try:
            vectors = np.array(rows, dtype=np.float32)
        except (TypeError, ValueError):
            raise self._malformed("vectors that are not equal-length lists of numbers") from None
        if vectors.ndim != 2 or vectors.shape[1] == 0 or not np.isfinite(vectors).all():
            raise self._malformed("vectors that are not equal-length lists of numbers")
        if self._dim and vectors.shape[1] != self._dim:
            raise self._error(
                f"returned {vectors.shape[1]}-dim vectors after {self._dim}-dim ones; "
                f"embeddings.model must name one model ('{self.name}') and the service must "
                "not switch it"
            )
        self._dim = int(vectors.shape[1])
        return vectors

    def _hint(self) -> str:
        return "check embeddings.base_url and that the service is running"

    def _status_hint(self, response: httpx.Response) -> str:
        status = response.status_code
        if status == 407 and self.proxy is not None:  # the proxy, not the service, refused
            return (
                f"{self.proxy.said()} wants an account (407 Proxy Authentication Required): "
                f"put it in {self.proxy.variable} (http://USER:PASSWORD@HOST:PORT), or add "
                f"{httpx.URL(self.url).host} to NO_PROXY if the service is reachable without it"
            )
        if status == 404:
            return f"check embeddings.base_url and that model '{self.name}' exists there"
        if status in (429, 503):
            return "the service is rate limiting or busy: try again later"
        if status in (400, 413, 422, 500) and _TOO_LONG.search(_error_text(response)):
            return (
                "a text is longer than the model takes: have the service truncate its inputs "
                "(text-embeddings-inference: --auto-truncate); for a limit on a whole request, "
                f"lower embeddings.batch_size (the texts one request carries: {self.batch or 'all'})"
            )
        if status in (400, 413, 422):
            return (
                "check embeddings.model, and embeddings.batch_size (the texts one request "
                f"carries: {self.batch or 'all'}) against the service's limit, and its log"
            )
        return "check embeddings.model and the service's log"

    def _malformed(self, what: str) -> EmbeddingError:
        return self._error(f"answered {what}; check that embeddings.base_url points at it")

    def _error(self, what: str) -> EmbeddingError:
        return EmbeddingError(f"{self.service} at {without_account(self.url)} {what}")


MAX_WAIT = 60.0
QUIET_SECONDS = 30.0  # after a query timed out, queries fail at once for this long


class _QueryTimeout(Exception):
    """A query's request timed out (:meth:`RemoteEmbedder.embed_query` says it)."""


# a service's "longer than the model takes" ("must have less than 512 tokens", "maximum context
# length is 512 tokens", llama.cpp's "input (600 tokens) is too large"): a count of tokens
_TOO_LONG = re.compile(r"\d+ tokens\b", re.IGNORECASE)


def _asked_wait(response: httpx.Response) -> float | None:
    """The seconds a 429 (or a 503) asks to wait with ``Retry-After``, or None: no such ask
    (an HTTP date or no header: 1 s for a 429, which asks to wait by its status)."""
    if response.status_code not in (429, 503):
        return None
    value = response.headers.get("retry-after", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return 1.0 if response.status_code == 429 else None
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _error_text(response: httpx.Response, secret: tuple[str, str] = ("", "")) -> str:
    """The service's own error message, shortened to one line, with ``secret[0]`` (an API key
    it may quote: "Incorrect API key provided: …") replaced by ``secret[1]``."""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = response.text
    if isinstance(body, dict):
        error = body.get("error", body)
        body = error.get("message", error) if isinstance(error, dict) else error
    text = " ".join(str(body).split()) or response.reason_phrase
    if secret[0]:  # before the cut: a key cut in two would show its first part
        text = text.replace(secret[0], secret[1])
    return text[:200]
