"""Jira over REST (A2): issue search and issue reads, Cloud and Data Center.

Cloud removed ``/rest/api/{2,3}/search`` (it answers 410 Gone): search there is
``POST /rest/api/3/search/jql`` with explicit ``fields``, paged by ``nextPageToken`` (there is
no ``total``). Data Center keeps ``GET /rest/api/2/search`` paged by ``startAt``. Issue text
comes as ``renderedFields`` and comments as ``renderedBody`` — server-rendered HTML, so one
converter serves Cloud v3, v2 and Data Center.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from briefd.atlassian.credentials import Account
from briefd.atlassian.model import Comment, Issue, IssueRow, LinkedPage, RelatedIssue
from briefd.atlassian.site import Site

SEARCH_FIELDS = ("summary", "issuetype", "status", "priority", "assignee", "updated")
ISSUE_FIELDS = (
    "summary",
    "issuetype",
    "status",
    "priority",
    "assignee",
    "reporter",
    "resolution",
    "created",
    "updated",
    "labels",
    "components",
    "fixVersions",
    "description",
    "issuelinks",
    "parent",
    "subtasks",
)
PAGE_SIZE = 50
MAX_COMMENTS = 50
MAX_PAGES = 20
LINKING_OFF = frozenset({403})  # what remote links answer on a site with issue linking off
_PAGE_ID = re.compile(r"pageId=(\d+)|/pages/(\d+)")


class Jira:
    def __init__(self, site: Site, extra_fields: Sequence[str], base: str | None = None) -> None:
        """``base``: where an issue is browsed (default the configured URL; through the API
        gateway, whose links no browser opens, the site's own: :func:`server_base`)."""
        self.site = site
        self.extra_fields = tuple(extra_fields)
        self.api = "/rest/api/3" if site.config.deployment == "cloud" else "/rest/api/2"
        self.base = base or site.config.url

    def search(self, jql: str, limit: int, account: Account) -> tuple[list[IssueRow], bool]:
        """The newest ``limit`` issues, and whether more match (Jira says so: a next page on
        Cloud, ``total`` on Data Center)."""
        if self.site.config.deployment == "cloud":
            raw, more = self._search_cloud(jql, limit, account)
        else:
            raw, more = self._search_datacenter(jql, limit, account)
        return [self._row(issue) for issue in raw[:limit]], more or len(raw) > limit

    def _search_cloud(self, jql: str, limit: int, account: Account) -> tuple[list[Any], bool]:
        found: list[Any] = []
        token: str | None = None
        for _ in range(MAX_PAGES):
            body: dict[str, Any] = {
                "jql": jql,
                "maxResults": min(PAGE_SIZE, limit - len(found)),
                "fields": list(SEARCH_FIELDS),
            }
            if token:
                body["nextPageToken"] = token
            data = self.site.post(
                "/rest/api/3/search/jql", body, account, "no such search", caller_input=True
            )
            found += _list(data, "issues")
            token = data.get("nextPageToken") if isinstance(data, dict) else None
            if len(found) >= limit or not token or data.get("isLast") is True:
                break
        return found, bool(token) and not (isinstance(data, dict) and data.get("isLast") is True)

    def _search_datacenter(self, jql: str, limit: int, account: Account) -> tuple[list[Any], bool]:
        found: list[Any] = []
        for _ in range(MAX_PAGES):
            params = {
                "jql": jql,
                "startAt": len(found),
                "maxResults": min(PAGE_SIZE, limit - len(found)),
                "fields": ",".join(SEARCH_FIELDS),
            }
            data = self.site.get(
                "/rest/api/2/search", params, account, "no such search", caller_input=True
            )
            page = _list(data, "issues")
            found += page
            total = data.get("total") if isinstance(data, dict) else None
            if not page or len(found) >= limit or (isinstance(total, int) and len(found) >= total):
                break
        return found, isinstance(total, int) and total > len(found)

    def issue(
        self, key: str, comments: bool, account: Account, allowed: Callable[[str], None]
    ) -> Issue:
        """The issue ``key`` with its remote links (none on a site with issue linking off)
        and (``comments``) comments. ``allowed``
        checks the key Jira answers under (a moved issue's new one) before anything more is
        fetched: it raises for a project briefd may not read."""
        missing = f"Jira issue {key} does not exist, or the account may not see it; check the key"
        fields = ",".join((*ISSUE_FIELDS, *self.extra_fields))
        params = {"expand": "renderedFields,names", "fields": fields}
        data = self.site.get(f"{self.api}/issue/{key}", params, account, missing)
        found = str(_get(data, "key") or key)
        allowed(found)
        path = f"{self.api}/issue/{found}/remotelink"
        remote = self.site.get(path, {}, account, missing, nothing_on=LINKING_OFF)
        said: list[Any] = []
        total = 0
        if comments:
            query = {"expand": "renderedBody", "orderBy": "-created", "maxResults": MAX_COMMENTS}
            answer = self.site.get(f"{self.api}/issue/{found}/comment", query, account, missing)
            said = _list(answer, "comments")
            total = max(len(said), _count(_get(answer, "total")))
        issue = self._issue(data, remote if isinstance(remote, list) else [], said)
        return replace(issue, comments_total=total)

    def _row(self, raw: Any) -> IssueRow:
        key = str(_get(raw, "key"))
        fields = _get(raw, "fields") or {}
        return IssueRow(
            key=key,
            summary=str(fields.get("summary") or ""),
            type=name(fields.get("issuetype")),
            status=name(fields.get("status")),
            priority=name(fields.get("priority")),
            assignee=name(fields.get("assignee")) or "unassigned",
            updated=str(fields.get("updated") or "")[:10],
            url=self.browse(key),
        )

    def browse(self, key: str) -> str:
        return f"{self.base}/browse/{key}"

    def _issue(self, data: Any, remote: list[Any], said: list[Any]) -> Issue:
        fields: dict[str, Any] = _get(data, "fields") or {}
        rendered: dict[str, Any] = _get(data, "renderedFields") or {}
        key = str(_get(data, "key"))
        description = rendered.get("description")
        if not isinstance(description, str):  # not rendered: Data Center wiki text, or none
            plain = fields.get("description")
            description = f"<pre>{_escape(plain)}</pre>" if isinstance(plain, str) else ""
        return Issue(
            key=key,
            url=self.browse(key),
            summary=str(fields.get("summary") or ""),
            type=name(fields.get("issuetype")),
            status=name(fields.get("status")),
            priority=name(fields.get("priority")),
            assignee=name(fields.get("assignee")) or "unassigned",
            reporter=name(fields.get("reporter")),
            resolution=name(fields.get("resolution")),
            created=str(fields.get("created") or "")[:10],
            updated=str(fields.get("updated") or "")[:10],
            labels=tuple(str(v) for v in fields.get("labels") or ()),
            components=tuple(name(v) for v in fields.get("components") or ()),
            fix_versions=tuple(name(v) for v in fields.get("fixVersions") or ()),
            description_html=description,
            fields=self._extra(fields, rendered, _get(data, "names") or {}),
            related=related(fields),
            pages=tuple(p for p in (linked_page(r) for r in remote) if p is not None),
            comments=tuple(sorted((comment(c) for c in said), key=_newest, reverse=True)),
        )

    def _extra(
        self, fields: dict[str, Any], rendered: dict[str, Any], names: dict[str, Any]
    ) -> tuple[tuple[str, str], ...]:
        """``jira.fields`` with a value: rendered HTML when Jira renders the field, else the
        value as text."""
        out = []
        for field in self.extra_fields:
            html = rendered.get(field)
            value = html if isinstance(html, str) and html.strip() else plain(fields.get(field))
            if value:
                out.append((str(names.get(field) or field), value))
        return tuple(out)


def server_base(site: Site, account: Account) -> str | None:
    """The site's own URL as Jira names it (``baseUrl`` of ``GET …/serverInfo``, which needs no
    permission): what a browser opens where the configured URL is the API gateway's (an
    issue's ``self`` is on the gateway too). None when Jira names no http(s) URL."""
    api = "/rest/api/3" if site.config.deployment == "cloud" else "/rest/api/2"
    data = site.get(f"{api}/serverInfo", {}, account, "Jira names no site URL here")
    base = _get(data, "baseUrl")
    if isinstance(base, str) and base.startswith(("https://", "http://")):
        return base.rstrip("/")
    return None


def related(fields: dict[str, Any]) -> tuple[RelatedIssue, ...]:
    """Issue links with their relation as Jira words it, then the parent and the subtasks."""
    found = []
    for link in fields.get("issuelinks") or ():
        kind = link.get("type") or {}
        if "outwardIssue" in link:
            found.append(_related(str(kind.get("outward") or "relates to"), link["outwardIssue"]))
        elif "inwardIssue" in link:
            found.append(_related(str(kind.get("inward") or "relates to"), link["inwardIssue"]))
    if isinstance(fields.get("parent"), dict):
        found.append(_related("parent", fields["parent"]))
    found += [_related("subtask", sub) for sub in fields.get("subtasks") or ()]
    return tuple(found)


def _related(relation: str, raw: dict[str, Any]) -> RelatedIssue:
    fields = raw.get("fields") or {}
    status = name(fields.get("status"))
    return RelatedIssue(relation, str(raw.get("key")), str(fields.get("summary") or ""), status)


def linked_page(raw: Any) -> LinkedPage | None:
    """A remote link (``/issue/{key}/remotelink``) as a page; Confluence ones carry the id."""
    target = _get(raw, "object") or {}
    url = str(target.get("url") or "")
    if not url:
        return None
    application = (_get(raw, "application") or {}).get("type") or ""
    found = _PAGE_ID.search(f"{_get(raw, 'globalId') or ''} {url}")
    is_confluence = "confluence" in str(application) or found is not None
    page_id = next((g for g in found.groups() if g), None) if found and is_confluence else None
    return LinkedPage(str(target.get("title") or url), url, page_id)


def comment(raw: Any) -> Comment:
    html = _get(raw, "renderedBody")
    if not isinstance(html, str):
        body = _get(raw, "body")
        html = f"<p>{_escape(body)}</p>" if isinstance(body, str) else ""
    created = str(_get(raw, "created") or "")
    return Comment(name(_get(raw, "author")) or "someone", created, html)


def _newest(c: Comment) -> str:
    return c.created


def name(value: Any) -> str:
    """The display form of a Jira value: a user's name, an option's value, a status's name."""
    if isinstance(value, dict):
        for field in ("displayName", "name", "value", "key"):
            if value.get(field):
                return str(value[field])
        return ""
    return "" if value is None else str(value)


def plain(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(v for v in (plain(item) for item in value) if v)
    if isinstance(value, dict) and value.get("type") == "doc":
        return ""  # ADF without a rendered form: nothing faithful to show
    if isinstance(value, dict):
        return _escape(shown(value))
    return _escape(name(value))


def shown(value: dict[str, Any]) -> str:
    """A field's object as text: its name; a cascading select's option with the one chosen
    under it ("EMEA › Germany"); an object without a name (time tracking) by its text
    entries ("originalEstimate: 2d, …"), not nothing."""
    said = name(value)
    child = value.get("child")
    if said and isinstance(child, dict) and name(child):
        return f"{said} › {name(child)}"
    if said:
        return said
    entries = [
        f"{key}: {text}"
        for key, text in value.items()
        if isinstance(text, str) and text.strip() and not text.startswith(("http://", "https://"))
    ]
    return ", ".join(entries)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _get(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, dict) else None


def _list(data: Any, key: str) -> list[Any]:
    found = _get(data, key)
    return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []
