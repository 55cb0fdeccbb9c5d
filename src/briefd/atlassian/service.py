"""The live lookups as one object built from settings (A1, A2, B1): what the API hands out.

Nothing is enabled unless ``confluence.url`` / ``jira.url`` is set; nothing is indexed,
cached, stored or logged. Each call opens one HTTP client for its requests (or uses the one
injected), so connections never outlive a call.
"""

from __future__ import annotations

import os
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from briefd.atlassian import render
from briefd.atlassian.confluence import Confluence, within
from briefd.atlassian.credentials import Account, service_account
from briefd.atlassian.jira import Jira, server_base
from briefd.atlassian.model import (
    Issue,
    IssueAnswer,
    IssueSearchAnswer,
    LinkedPage,
    PageAnswer,
    PageSearchAnswer,
    RelatedIssue,
)
from briefd.atlassian.query import (
    MAX_LIMIT,
    MIN_TOKENS,
    JiraQuery,
    cql,
    is_issue_key,
    issue_key,
    jql,
    narrowed,
    page_id,
    project_of,
)
from briefd.atlassian.site import Site, SiteConfig, checked_url, open_client
from briefd.errors import IntegrationError, IntegrationOffError, QueryError, RemoteNotFoundError
from briefd.proxy import site_proxy
from briefd.settings import ConfluenceSettings, JiraSettings, Settings
from briefd.settings.trust import unsent_problem
from briefd.tokens import count_tokens

if TYPE_CHECKING:
    import httpx

# (issue text or key, token budget) → (Markdown heading the bundle, query text), or None
IssueLookup = Callable[[str, int], tuple[str, str] | None]
# lookups of one product at a time: each waits on a thread for up to timeout_seconds, and a
# server's worker threads (anyio's 40) serve every route and tool, searches too
MAX_WAITING = 16


class Atlassian:
    def __init__(
        self,
        settings: Settings,
        client: httpx.Client | None = None,
        env: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``client``: one injected ``httpx.Client`` for both sites (tests, benchmarks);
        ``env``: where the secrets' variables are read (default ``os.environ``)."""
        self.confluence_settings = settings.confluence
        self.jira_settings = settings.jira
        self._named = settings.project_named
        self._client = client
        self._env = os.environ if env is None else env
        self._sleep = sleep
        self._bases: dict[str, str | None] = {}  # a gateway's jira.url → the site's own URL
        self._waiting = {"Confluence": Waiting(), "Jira": Waiting()}

    @property
    def confluence_on(self) -> bool:
        return self.confluence_settings.url is not None

    @property
    def jira_on(self) -> bool:
        return self.jira_settings.url is not None

    def confluence_search(
        self, text: str, spaces: Sequence[str], limit: int, max_tokens: int, account: Account | None
    ) -> PageSearchAnswer:
        _check(self.confluence_settings, "Confluence", limit, max_tokens)
        conf = self.confluence_settings
        allowed = narrowed(spaces, conf.spaces, "space", "confluence.spaces")
        query = cql(text, allowed, conf.deployment)
        with self._confluence(account) as (confluence, who):
            found, more = confluence.search(query, limit, who)
        hits = within(found, conf.spaces)
        said = render.more_matching(more, limit, MAX_LIMIT)
        return render.page_search_answer(query, hits, max_tokens, more=said)

    def confluence_page(self, id: str, max_tokens: int, account: Account | None) -> PageAnswer:
        _check(self.confluence_settings, "Confluence", 1, max_tokens)
        wanted = page_id(id)
        spaces = self.confluence_settings.spaces
        with self._confluence(account) as (confluence, who):
            page = confluence.page(wanted, who)
        if spaces and page.info.space.casefold() not in {s.casefold() for s in spaces}:
            raise RemoteNotFoundError(
                f"Confluence page {wanted} is in space {page.info.space}, outside confluence.spaces "
                f"({', '.join(spaces)}); briefd reads only those"
            )
        if self.jira_settings.projects:  # its Jira issue macros show issues' summaries
            from briefd.atlassian.convert import withheld_issues

            page = replace(page, html=withheld_issues(page.html, lambda k: not self._inside(k)))
        blocks = tuple(render.page_blocks(page))
        ask = render.ask_for_more(render.ASK_PAGE, max_tokens, page.info.url)
        return PageAnswer(page, render.fit(blocks, max_tokens, ask), blocks)

    def jira_search(self, query: JiraQuery, account: Account | None) -> IssueSearchAnswer:
        _check(self.jira_settings, "Jira", query.limit, query.max_tokens)
        allowed = self.jira_settings.projects
        text = jql(query, allowed)
        with self._jira(account) as (jira, who):
            try:
                rows, more = jira.search(text, query.limit, who)
                unseen: tuple[str, ...] = ()
            except QueryError as refused:
                unseen = self._unseen(query, refused)
                rest = [p for p in allowed if p not in unseen]
                if not unseen or not rest:
                    raise
                text = jql(replace(query, projects=tuple(rest)), allowed)
                rows, more = jira.search(text, query.limit, who)
        said = render.more_matching(more, query.limit, MAX_LIMIT)
        return render.issue_search_answer(text, rows, query.max_tokens, unseen=unseen, more=said)

    def _unseen(self, query: JiraQuery, refused: QueryError) -> tuple[str, ...]:
        """The projects of ``jira.projects`` a 400 to a search names, when the caller named
        none: Jira refuses a project the account may not browse as it refuses an unknown key
        ("The value 'PAY' does not exist for the field 'project'."), so one such project
        failed every search of an account that sees the others."""
        said = str(refused)
        if query.projects or "'project'" not in said:
            return ()
        return tuple(p for p in self.jira_settings.projects if f"'{p}'" in said)

    def jira_issue(
        self, key: str, comments: bool, max_tokens: int, account: Account | None
    ) -> IssueAnswer:
        _check(self.jira_settings, "Jira", 1, max_tokens)
        issue = self._issue(self.browsed_key(key) or key, comments, account)
        blocks = tuple(render.issue_blocks(issue))
        ask = render.ask_for_more(render.ASK_ISSUE, max_tokens, issue.url)
        fitted = render.fit(blocks, max_tokens, ask)
        return IssueAnswer(issue, fitted, render.issue_query(issue), blocks)

    def issue_lookup(self, account: Account | None = None) -> IssueLookup:
        """For bundles (B1): :meth:`prefetch` when the bundle asks."""
        return lambda issue, max_tokens: self.prefetch(issue, account)(issue, max_tokens)

    def prefetch(self, issue: str | None, account: Account | None = None) -> IssueLookup:
        """An issue key fetched now (a server does this outside its index lock) and rendered
        later within the share of the budget the bundle gives; any other text is the issue's
        own text, for which the lookup answers None (the bundle uses it as given). A key
        typed in lower case ("shop-42") is looked up too, but text that only has a key's shape
        ("utf-8", "sha-256") must not fail a bundle: without Jira, or when Jira has no such
        issue, it is the issue's text."""
        browsed = self.browsed_key(issue or "")
        if browsed is not None:  # a browse URL of the configured site names its issue
            issue = browsed
        if not issue or not is_issue_key(issue):
            return _as_given
        as_jira_writes = issue.strip() == issue.strip().upper()
        if not self.jira_on:
            if not as_jira_writes:
                return _as_given
            raise IntegrationOffError(
                f"issue '{issue.strip()}' is a Jira key, but Jira is not configured: set "
                f"{SETTINGS_OF['Jira']}, or pass the issue's text instead of its key"
            )
        try:
            found = self._issue(issue, True, account)
        except RemoteNotFoundError:
            if as_jira_writes:
                raise
            return _as_given

        # converted and counted now, as it is fetched: a server calls this outside its lock,
        # and a head fitted under it (an issue with 50 comments of CI logs took seconds to
        # convert) held up every other request meanwhile
        blocks = tuple(render.issue_blocks(found))
        whole = count_tokens(render.SEPARATOR.join(b for b in blocks if b))
        query = render.issue_query(found)
        fitted: dict[int, tuple[str, str]] = {}

        def head(_: str, max_tokens: int) -> tuple[str, str]:
            """The issue fitted to ``max_tokens``, once for each budget (a server fits it
            before taking its lock, for the budget the bundle gives)."""
            budget = max(MIN_TOKENS, max_tokens)
            if budget not in fitted:
                markdown = render.fit(blocks, budget, render.ASK_ISSUE, whole).markdown
                fitted[budget] = (markdown.removeprefix("# "), query)
            return fitted[budget]

        return head

    def browsed_key(self, value: str) -> str | None:
        """The key of an issue's browse URL on the configured Jira site (a browser's address
        bar, Jira's "copy link": ``https://acme.atlassian.net/browse/SHOP-42``, a query or
        fragment after it too), else None: passed as ``issue``, it headed the bundle as text
        and the bundle searched for its words. A URL of another site stays text: the key
        there names another issue here."""
        text = value.strip()
        url = self.jira_settings.url
        if url is None or not text.startswith(("https://", "http://")) or len(text.split()) > 1:
            return None
        try:
            link = urllib.parse.urlsplit(text)
        except ValueError:
            return None
        head, browse, key = link.path.rstrip("/").rpartition("/browse/")
        if not browse or not is_issue_key(key):
            return None
        site = urllib.parse.urlsplit(url)  # (the gateway's URL: none is browsed there)
        same = head == site.path.rstrip("/") and _same_site(site, link)
        return key.upper() if same else None

    def _issue(self, key: str, comments: bool, account: Account | None) -> Issue:
        wanted = issue_key(key)
        self._allowed(wanted)
        with self._jira(account) as (jira, who):
            # a moved issue answers under its new key: checked before its comments and links
            found = jira.issue(wanted, comments, who, self._allowed)
        pages = tuple(self._on_our_site(p) for p in found.pages)
        related = tuple(self._withheld(r) for r in found.related)
        return self._keys_only(replace(found, related=related, pages=pages))

    def _keys_only(self, issue: Issue) -> Issue:
        """``issue`` with the issues its text links to outside ``jira.projects`` by their keys
        alone: Jira renders such a link with the linked issue's summary (convert.withheld_issues)."""
        if not self.jira_settings.projects:
            return issue
        from briefd.atlassian.convert import withheld_issues

        def cut(html: str) -> str:
            return withheld_issues(html, lambda key: not self._inside(key))

        return replace(
            issue,
            description_html=cut(issue.description_html),
            fields=tuple((name, cut(value)) for name, value in issue.fields),
            comments=tuple(replace(c, html=cut(c.html)) for c in issue.comments),
        )

    def _on_our_site(self, page: LinkedPage) -> LinkedPage:
        """``page`` with its id only when it is a page of the configured Confluence site: an
        id of another site's page would fetch an unrelated page of ours. (Through the API
        gateway the site's own host is unknown: ids are kept.)"""
        ours = self.confluence_settings.url
        if page.page_id is None or ours is None:
            return page
        site = urllib.parse.urlsplit(ours)
        if site.hostname == GATEWAY_HOST or _same_site(site, urllib.parse.urlsplit(page.url)):
            return page
        return replace(page, page_id=None)

    def _withheld(self, link: RelatedIssue) -> RelatedIssue:
        """A linked issue in a project outside ``jira.projects`` as its key alone: briefd
        reads only those projects, their summaries and statuses included."""
        if self._inside(link.key):
            return link
        return RelatedIssue(link.relation, link.key, "", "", outside=True)

    def _inside(self, key: str) -> bool:
        projects = self.jira_settings.projects
        return not projects or project_of(key).casefold() in {p.casefold() for p in projects}

    def _allowed(self, key: str) -> None:
        projects = self.jira_settings.projects
        project = project_of(key)
        if not self._inside(key):
            raise RemoteNotFoundError(
                f"{key} is in project {project}, outside jira.projects ({', '.join(projects)}); "
                "briefd reads only those"
            )

    @contextmanager
    def _confluence(self, account: Account | None) -> Iterator[tuple[Confluence, Account]]:
        conf = self.confluence_settings
        who = account or self._sendable("confluence", conf, self.confluence_account())
        with self._site("Confluence", "confluence", conf, who) as (site, checked):
            yield Confluence(site), checked

    @contextmanager
    def _jira(self, account: Account | None) -> Iterator[tuple[Jira, Account]]:
        conf = self.jira_settings
        who = account or self._sendable("jira", conf, self.jira_account())
        with self._site("Jira", "jira", conf, who) as (site, checked):
            yield Jira(site, conf.fields, self._browse_base(site, checked)), checked

    def _browse_base(self, site: Site, account: Account) -> str | None:
        """Where issues are browsed: the configured URL (None), but through the API gateway —
        ``https://api.atlassian.com/ex/jira/<cloud id>/browse/KEY`` opens nothing — the site's
        own, asked of Jira once. An answer naming none is kept too (the configured URL then);
        a failure is not: the next lookup asks again (its own requests say what is wrong)."""
        url = site.config.url
        if not _on_gateway(url):
            return None
        if url not in self._bases:
            try:
                self._bases[url] = server_base(site, account)
            except IntegrationError:
                return None
        return self._bases[url]

    def _sendable(
        self, key: str, conf: ConfluenceSettings | JiraSettings, account: Account | None
    ) -> Account | None:
        """The account of the environment, refused (before connecting) when only a project's
        own settings file names the site it would go to (:mod:`briefd.settings.trust`)."""
        if account is None or conf.url is None:
            return account
        refused = unsent_problem(self._named, f"{key}.url", conf.url, None, account.origin)
        if refused is not None:
            raise IntegrationError(refused)
        return account

    def confluence_account(self) -> Account | None:
        conf = self.confluence_settings
        return service_account(conf.email_env, conf.token_env, self._env)

    def jira_account(self) -> Account | None:
        conf = self.jira_settings
        fallback = self.confluence_account() if self.confluence_on else None
        return service_account(conf.email_env, conf.token_env, self._env, fallback)

    @contextmanager
    def _site(
        self,
        product: str,
        key: str,
        conf: ConfluenceSettings | JiraSettings,
        account: Account | None,
    ) -> Iterator[tuple[Site, Account]]:
        if conf.url is None:  # checked by every entry point: _check
            raise IntegrationOffError(f"{product} is not configured")
        if account is None:
            raise IntegrationError(
                f"no {product} account: export ${conf.token_env} (and ${conf.email_env} on "
                "Cloud), or send X-Atlassian-Email and X-Atlassian-Token with the request"
            )
        config = SiteConfig(
            product,
            key,
            checked_url(conf.url, key),
            conf.deployment,
            conf.timeout_seconds,
            conf.verify_tls,
        )
        with self._waiting[product].one(config):
            if self._client is not None:
                yield Site(config, self._client, self._sleep), account
                return
            proxy = site_proxy(config.url, product, IntegrationError)
            with open_client(config, proxy) as client:
                yield Site(config, client, self._sleep, proxy), account


class Waiting:
    """The lookups of one product under way in this process, at most :data:`MAX_WAITING`: a
    site that stopped answering held a server thread with each lookup asked meanwhile, until
    every one of them waited on it and searches waited for a thread in turn (45 bundles
    headed by an issue while Jira hung kept a search waiting 20 s). One past them is not
    sent, and says why."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    @contextmanager
    def one(self, config: SiteConfig) -> Iterator[None]:
        with self._lock:
            full = self._count >= MAX_WAITING
            self._count += 0 if full else 1
        if full:
            raise IntegrationError(
                f"{config.product} at {config.url} is not keeping up: {MAX_WAITING} lookups are "
                f"waiting for its answers already (each up to {config.timeout:g} s, "
                f"{config.key}.timeout_seconds), so this one was not sent; try again shortly, "
                f"and if it persists check that {config.url} is up"
            )
        try:
            yield
        finally:
            with self._lock:
                self._count -= 1


GATEWAY_HOST = "api.atlassian.com"


def _on_gateway(url: str) -> bool:
    try:
        return urllib.parse.urlsplit(url).hostname == GATEWAY_HOST
    except ValueError:  # an invalid URL: its request says so
        return False


def _same_site(site: urllib.parse.SplitResult, link: urllib.parse.SplitResult) -> bool:
    """``link`` is on the site at ``site``: the same host and port, under its path (a Data
    Center context path such as ``/confluence``)."""
    try:
        same_port = site.port == link.port
    except ValueError:  # a link's port that is no number
        return False
    under = link.path.startswith(site.path.rstrip("/") + "/") or not site.path.strip("/")
    return site.hostname == link.hostname and same_port and under


def _as_given(issue: str, max_tokens: int) -> None:
    return None


SETTINGS_OF = {  # what turns a product on, wherever briefd runs (a server adds its /setup)
    product: f"{product.lower()}.url in briefd.yaml or BRIEFD_{product.upper()}__URL, and the "
    f"account in {product.upper()}_EMAIL / {product.upper()}_TOKEN (README: Confluence and Jira)"
    for product in ("Confluence", "Jira")
}


def not_configured(product: str) -> IntegrationOffError:
    """What a question to Confluence or Jira gets while that product is off (REST, MCP, CLI):
    the settings to write, as there may be no server (``briefd mcp`` over stdio) to show them."""
    return IntegrationOffError(f"{product} is not configured: set {SETTINGS_OF[product]}")


def _check(
    conf: ConfluenceSettings | JiraSettings, product: str, limit: int, max_tokens: int
) -> None:
    """Configured first (a question to a product that is off gets that answer), then sizes."""
    if conf.url is None:
        raise not_configured(product)
    if not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if max_tokens < MIN_TOKENS:
        raise QueryError(f"max_tokens must be at least {MIN_TOKENS}, got {max_tokens}")
