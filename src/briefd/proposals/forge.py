"""GitHub pull requests over the REST API (T1): ``POST /repos/{owner}/{repo}/pulls`` opens
one, ``GET /repos/{owner}/{repo}/pulls/{number}`` reads its state (``merged`` / ``merged_at``
say merged; otherwise ``state`` is ``open`` or ``closed``), ``GET …/pulls?head=owner:branch``
finds the one a branch has, ``GET …/pulls?state=all`` the ones updated last. Every failure is a
:class:`~briefd.errors.ProposalError` that names the request and what GitHub said (a
:class:`~briefd.errors.ProposalRemoteError` when GitHub did not answer at all, a
:class:`~briefd.errors.ForgeServerError` when it failed on its side (5xx: opening a pull
request, it may have opened it all the same), a
:class:`~briefd.errors.ForgeRateLimitedError` for its rate limit), with what to do about it
(:mod:`.refusals`); a redirect is never followed."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from briefd.errors import (
    ForgeAccessError,
    ForgeRateLimitedError,
    ForgeServerError,
    ForgeTokenError,
    ProposalError,
    ProposalRemoteError,
)
from briefd.proposals.refusals import already_exists, message, moved, rate_limit
from briefd.proxy import Proxy, proxied_client, tls_context
from briefd.settings import ForgeSettings
from briefd.settings.trust import USERS_WORD, ProjectNamed, unsent_problem

API_VERSION = "2022-11-28"
DEFAULT_API = ForgeSettings().api_url  # github.com's
RECENT = 100  # pull requests one list request reads (GitHub's most per page)
_GITHUB_REMOTE = re.compile(r"github\.com[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?$")

if TYPE_CHECKING:  # httpx loads when a forge is called (O4)
    import httpx


@dataclass(frozen=True, slots=True)
class PullRequest:
    number: int
    url: str
    status: str  # open | closed | merged


class GitHub:
    """One repository on a GitHub (or GitHub Enterprise) API."""

    def __init__(self, api_url: str, repo: str, token: str, client: httpx.Client) -> None:
        self.base = f"{api_url.rstrip('/')}/repos/{repo}"
        self.repo = repo
        self.client = client
        self.proxy: Proxy | None = None  # the environment's proxy ``client`` sends through
        self.headers = {
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {token}",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": "briefd",
        }

    def create_pull(self, head: str, base: str, title: str, body: str) -> PullRequest:
        """The pull request opened from ``head``; the one already open from it when GitHub
        says so (422 "A pull request already exists": a create it answered too late, or one
        opened by hand), for the proposal to follow rather than be left without one."""
        payload = {"title": title, "head": head, "base": base, "body": body}
        response = self._send("POST", "/pulls", payload)
        if already_exists(response):
            return self._existing(head, self._refusal("POST", "/pulls", response))
        if response.status_code >= 500:  # its front failed: the pull request may be open anyway
            raise ForgeServerError(self._refusal("POST", "/pulls", response))
        return _pull(self._answer("POST", "/pulls", response), "POST /pulls")

    def _existing(self, head: str, refusal: str) -> PullRequest:
        try:
            found = self.find_pull(head)
        except ProposalError as exc:
            raise ProposalError(f"{refusal}, and looking it up failed: {exc}") from None
        if found is None:
            raise ProposalError(f"{refusal}, but none from {head} was found")
        return found

    def find_pull(self, head: str) -> PullRequest | None:
        """The pull request from this repository's branch ``head``, in any state (None: none)."""
        from urllib.parse import urlencode

        owner = self.repo.split("/", 1)[0]
        query = urlencode({"head": f"{owner}:{head}", "state": "all"})
        data = self._call("GET", f"/pulls?{query}", None)
        if not isinstance(data, list) or not data:
            return None
        return _pull(data[0], f"GET /pulls?{query}")

    def recent_pulls(self) -> list[tuple[str, PullRequest]]:
        """The 100 pull requests updated last, in any state, most recent first, each with its
        branch ('' for a fork's: not a proposal's); one request, however many are looked for."""
        path = f"/pulls?state=all&sort=updated&direction=desc&per_page={RECENT}"
        data = self._call("GET", path, None)
        found: list[tuple[str, PullRequest]] = []
        for item in data if isinstance(data, list) else ():
            head = _mapping(item, "head")
            own = str(_mapping(head, "repo").get("full_name", "")).lower() == self.repo.lower()
            found.append((str(head.get("ref")) if own else "", _pull(item, f"GET {path}")))
        return found

    def pull(self, number: int) -> PullRequest:
        return _pull(self._call("GET", f"/pulls/{number}", None), f"GET /pulls/{number}")

    def _call(self, method: str, path: str, payload: dict[str, Any] | None) -> Any:
        return self._answer(method, path, self._send(method, path, payload))

    def _send(self, method: str, path: str, payload: dict[str, Any] | None) -> httpx.Response:
        import httpx

        try:
            return self.client.request(method, self.base + path, json=payload, headers=self.headers)
        except httpx.HTTPError as exc:  # unreachable, timed out: the next call would be too
            reason = str(exc) or exc.__class__.__name__
            if self.proxy is not None:
                host = httpx.URL(self.base).host
                raise ProposalRemoteError(
                    f"{self._what(method, path)} failed through {self.proxy.said()}: {reason}; "
                    f"check that proxy and forge.api_url, or, if the forge is reachable without "
                    f"the proxy, add {host} to NO_PROXY"
                ) from None
            raise ProposalRemoteError(
                f"{self._what(method, path)} failed: {reason}; check forge.api_url"
            ) from None

    def _answer(self, method: str, path: str, response: httpx.Response) -> Any:
        """The JSON of a successful answer; else a :class:`ProposalError` saying why."""
        if response.status_code >= 400:
            limited = rate_limit(response)
            if limited is not None:
                raise ForgeRateLimitedError(self._refusal(method, path, response), limited.again)
            if response.status_code == 401:
                raise ForgeTokenError(self._refusal(method, path, response))
            if response.status_code in (403, 404):
                raise ForgeAccessError(self._refusal(method, path, response))
            if response.status_code >= 500:  # down: every other request would fail alike
                raise ForgeServerError(self._refusal(method, path, response))
            raise ProposalError(self._refusal(method, path, response))
        if 300 <= response.status_code < 400:  # never followed: the token stays with forge.api_url
            moving = moved(response, self.repo)
            raise ProposalError(
                f"{self._what(method, path)} answered {response.status_code}: {moving}"
            )
        try:
            return response.json()
        except ValueError:
            raise ProposalError(
                f"{self._what(method, path)} answered with something that is not JSON"
            ) from None

    def _refusal(self, method: str, path: str, response: httpx.Response) -> str:
        return f"{self._what(method, path)} answered {response.status_code}: {message(response)}"

    def _what(self, method: str, path: str) -> str:
        return f"GitHub {method} /repos/{self.repo}{path}"


def _pull(data: Any, what: str) -> PullRequest:
    try:
        number, url, state = int(data["number"]), str(data["html_url"]), str(data["state"])
    except (KeyError, TypeError, ValueError):
        raise ProposalError(f"GitHub {what}: the answer is not a pull request") from None
    merged = bool(data.get("merged")) or bool(data.get("merged_at"))
    return PullRequest(number, url, "merged" if merged else state)


def _mapping(data: Any, key: str) -> dict[str, Any]:
    """``data[key]`` when both are JSON objects, else an empty one."""
    found = data.get(key) if isinstance(data, dict) else None
    return found if isinstance(found, dict) else {}


def forge_repo(settings: ForgeSettings, remote_url: str | None) -> str | None:
    """``forge.repo``, else owner/name read from a github.com remote URL."""
    if settings.repo:
        return settings.repo
    found = _GITHUB_REMOTE.search(remote_url or "")
    return found.group(1) if found else None


def forge_client(settings: ForgeSettings) -> tuple[httpx.Client, Proxy | None]:
    """The client for ``forge.api_url`` and the environment's proxy for it, given to the client
    alone: a proxy only other URLs use fails nothing, one unusable for the forge is a
    :class:`ProposalRemoteError` naming it (raised before anything is pushed)."""
    import httpx

    if settings.type == "none":  # nothing is sent
        return httpx.Client(
            timeout=settings.timeout_seconds, verify=tls_context(), trust_env=False
        ), None
    return proxied_client(
        settings.api_url,
        "GitHub",
        "forge.api_url",
        ProposalRemoteError,
        timeout=settings.timeout_seconds,
    )


def open_forge(
    settings: ForgeSettings,
    remote_url: str | None,
    client: httpx.Client,
    named: ProjectNamed = USERS_WORD,
    proxy: Proxy | None = None,
) -> GitHub | None:
    """The configured forge (None: ``forge.type: none``); a configuration gap is an error
    raised before anything is pushed, as is an ``api_url`` only a project's own settings file
    (``named``) gives, which the token may not go to."""
    if settings.type == "none":
        return None
    repo = forge_repo(settings, remote_url)
    if not repo or repo.count("/") != 1:
        raise ProposalError(
            "forge.type is github but forge.repo is not set (owner/name); set it in briefd.yaml"
        )
    token = os.environ.get(settings.token_env, "").strip()  # a file's last line break
    if not token:
        raise ProposalError(
            f"forge.type is github but ${settings.token_env} is empty; export a token that may "
            "open pull requests, or set forge.token_env"
        )
    _check_sendable(token, settings.token_env)
    api, env = settings.api_url, settings.token_env
    refused = unsent_problem(named, "forge.api_url", api, DEFAULT_API, f"${env}")
    if refused is not None:
        raise ProposalError(refused)
    made = GitHub(settings.api_url, repo, token, client)
    made.proxy = proxy
    return made


def _check_sendable(token: str, env: str) -> None:
    """A token goes in a header, which carries printable ASCII alone; the error httpx would
    raise on another character quotes the header, token and all. Said without the token."""
    at = next((i for i, c in enumerate(token) if not "!" <= c <= "~"), None)
    if at is not None:
        odd = token[at]
        what = (
            "a line break" if odd in "\r\n" else "a space" if odd.isspace() else f"U+{ord(odd):04X}"
        )
        raise ProposalError(
            f"${env} holds a character (character {at + 1}: {what}) that an HTTP header cannot "
            "carry: a paste that took a line break or a space with it? Set it again, exactly "
            "as issued"
        )
