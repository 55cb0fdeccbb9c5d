"""Settings of the services briefd talks to beyond its index and its git source (O1): the forge
proposals become pull requests on (T1), Confluence and Jira (A1, A2), and the shared state of
replicas (PostgreSQL). Declared here, read as sections of :class:`briefd.settings.Settings`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from briefd.settings.names import site_url_problem, url_flaw, without_account

_OWNER_NAME = re.compile(r"[\w.-]+/[\w.-]+")


@dataclass(frozen=True, slots=True)
class ForgeSettings:
    """Where proposals become pull requests (T1). The token comes from ``token_env``."""

    type: Literal["none", "github"] = "none"
    api_url: str = "https://api.github.com"
    repo: str | None = None  # owner/name
    token_env: str = "GITHUB_TOKEN"
    timeout_seconds: float = 20.0

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``forge.``), or None: an api_url
        without its scheme loaded, and every pull request then failed ("check forge.api_url");
        a repo written as its URL was refused at each proposal as "forge.repo is not set"."""
        return self._repo_problem() or self._api_url_problem()

    def _repo_problem(self) -> str | None:
        repo = self.repo
        if self.type != "github" or repo is None or _OWNER_NAME.fullmatch(repo):
            return None
        path = repo.split("://", 1)[-1].split("?", 1)[0].replace(":", "/").strip().strip("/")
        meant = "/".join(path.removesuffix(".git").split("/")[-2:])
        example = meant if _OWNER_NAME.fullmatch(meant) else "acme/knowledge"
        return (
            f"repo: {repo!r} is not the repository's owner/name (GitHub's owner, a slash, its "
            f"name, nothing around them); write it so, e.g. repo: {example}"
        )

    def _api_url_problem(self) -> str | None:
        url = self.api_url
        why = url_flaw(url, "the variable token_env names, never from the file")
        if why is None and ("?" in url or "#" in url):  # every request's path goes after it
            why = "it holds a query or fragment"
        if why is None:
            return None
        shown = without_account(url)
        fix = (
            f"; add https:// (https://{shown.strip().rstrip('/')})"
            if "://" not in url and why.startswith("it starts with")
            else ""
        )
        return (
            f"api_url: {shown!r} is not an API URL ({why}){fix}; expected "
            "https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server"
        )


@dataclass(frozen=True, slots=True)
class ConfluenceSettings:
    """Live Confluence lookups (A1): off until ``url`` is set. Credentials come from the
    environment variables named here, never from the file; ``spaces`` (empty: every space the
    account sees) is always ANDed into a search and checked on every page read."""

    url: str | None = None  # https://example.atlassian.net (Cloud) or the Data Center base URL
    spaces: tuple[str, ...] = ()
    email_env: str = "CONFLUENCE_EMAIL"
    token_env: str = "CONFLUENCE_TOKEN"
    deployment: Literal["cloud", "datacenter"] = "cloud"
    verify_tls: bool = True
    timeout_seconds: float = 20.0

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``confluence.``), or None."""
        return site_url_problem(self.url)


@dataclass(frozen=True, slots=True)
class JiraSettings:
    """Live Jira lookups (A2) and bundles headed by an issue (B1): off until ``url`` is set.
    ``fields`` are extra field ids rendered by ``jira_issue`` (e.g. ``customfield_10020``);
    without a token of its own Jira uses the Confluence account."""

    url: str | None = None
    projects: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    email_env: str = "JIRA_EMAIL"
    token_env: str = "JIRA_TOKEN"
    deployment: Literal["cloud", "datacenter"] = "cloud"
    verify_tls: bool = True
    timeout_seconds: float = 20.0

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``jira.``), or None."""
        return site_url_problem(self.url)


_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True, slots=True)
class StateSettings:
    """Where the state replicas share lives (query log, usage, proposals, recall sessions,
    bundle manifests, sync status). ``url`` None: the local SQLite index (one node);
    ``postgresql://…``: PostgreSQL, for N replicas behind a load balancer. ``replica`` names
    this process there (default: host name and port)."""

    url: str | None = None
    replica: str | None = None
    pool_size: int = 4
    timeout_seconds: float = 2.0

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``state.``), or None: a URL no
        engine takes is refused at load, not when the server starts. The value is never
        shown (it holds a password); its scheme is."""
        if self.url in (None, "sqlite"):
            return None
        if self.url.startswith(("postgresql://", "postgres://")):
            userinfo = self.url.split("://", 1)[1].rpartition("@")[0]
            if any(c in userinfo for c in "/?#"):  # the URL would be read with another host
                return (
                    "url: its user:password part holds '/', '?' or '#', which end it in a URL: "
                    "percent-encode them (%2F, %3F, %23), or use a password of letters and digits"
                )
            if any(c.isspace() for c in self.url) or _BAD_ESCAPE.search(self.url):
                return (  # PostgreSQL's client quotes the token back in its error, password too
                    "url: it holds a space, or a '%' that starts no %XX escape: percent-encode "
                    "them (%20, %25), or use a password of letters and digits"
                )
            return None
        scheme = (
            f"a {self.url.split('://')[0]}:// URL"
            if "://" in self.url
            else "a value that is not a URL"
        )
        return (
            "url: expected a postgresql://user:password@host:port/database URL (or unset for "
            f"the local SQLite index), got {scheme}"
        )
