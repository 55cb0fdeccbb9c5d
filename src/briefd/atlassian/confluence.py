"""Confluence over REST (A1): CQL search and page reads, Cloud and Data Center.

CQL search exists only in REST v1, ``GET …/rest/api/search?cql=…``, paged by following
``_links.next`` (a cursor on Cloud, ``start`` on Data Center; only relative links on the
configured site are followed). Cloud serves it under ``/wiki``; Data Center has no ``/wiki``
prefix and no v2 API. Bodies are fetched as server-rendered HTML: ``GET /wiki/api/v2/pages/{id}
?body-format=export_view`` (and the space by id for its key) on Cloud,
``GET /rest/api/content/{id}?expand=body.export_view,space,version`` on Data Center.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from briefd.atlassian.credentials import Account
from briefd.atlassian.model import Page, PageHit, PageInfo
from briefd.atlassian.site import Site
from briefd.errors import RemoteNotFoundError

PAGE_SIZE = 25
MAX_PAGES = 20
_HIGHLIGHT = re.compile(r"@@@(?:end)?hl@@@")
_SPACE_PATH = re.compile(r"/(?:spaces|display|space)/([^/?#]+)")


class Confluence:
    def __init__(self, site: Site) -> None:
        self.site = site
        cloud = site.config.deployment == "cloud"
        self.prefix = "/wiki" if cloud and not site.config.url.endswith("/wiki") else ""

    def search(self, cql: str, limit: int, account: Account) -> tuple[list[PageHit], bool]:
        """The first ``limit`` hits, and whether more match (a next page after them)."""
        params: dict[str, Any] | None = {"cql": cql, "limit": min(PAGE_SIZE, limit)}
        path = f"{self.prefix}/rest/api/search"
        hits: list[PageHit] = []
        for _ in range(MAX_PAGES):
            data = self.site.get(path, params, account, "the search endpoint is missing")
            base = str(_links(data).get("base") or self.site.config.url + self.prefix)
            hits += [hit for hit in (_hit(r, base) for r in _results(data)) if hit is not None]
            following = _links(data).get("next")
            if len(hits) >= limit or not _relative(following):
                break
            path, params = self.prefix + str(following), None
        return hits[:limit], len(hits) > limit or _relative(following)

    def page(self, page_id: str, account: Account) -> Page:
        missing = (
            f"Confluence page {page_id} does not exist, or the account may not see it; take ids "
            "from confluence_search"
        )
        if self.site.config.deployment == "cloud":
            return self._cloud_page(page_id, account, missing)
        params = {"expand": "body.export_view,space,version"}
        data = self.site.get(f"/rest/api/content/{page_id}", params, account, missing)
        if _get(data, "type") not in ("page", "blogpost"):
            raise RemoteNotFoundError(missing)
        space = _get(data, "space") or {}
        version = _get(data, "version") or {}
        return _page(data, str(space.get("key") or ""), version.get("when"), self._base(data))

    def _cloud_page(self, page_id: str, account: Account, missing: str) -> Page:
        params = {"body-format": "export_view"}
        try:
            data = self.site.get(f"{self.prefix}/api/v2/pages/{page_id}", params, account, missing)
        except RemoteNotFoundError:
            path = f"{self.prefix}/api/v2/blogposts/{page_id}"
            data = self.site.get(path, params, account, missing)
        space_id = _get(data, "spaceId")
        space = self.site.get(f"{self.prefix}/api/v2/spaces/{space_id}", {}, account, missing)
        version = _get(data, "version") or {}
        key = str(_get(space, "key") or "")
        return _page(data, key, version.get("createdAt"), self._base(data))

    def _base(self, data: Any) -> str:
        return str(_links(data).get("base") or self.site.config.url + self.prefix)


def _page(data: Any, space: str, updated: Any, base: str) -> Page:
    body = _get(data, "body") or {}
    export = body.get("export_view") or {}
    version = _get(data, "version") or {}
    info = PageInfo(
        id=str(_get(data, "id")),
        title=str(_get(data, "title") or ""),
        space=space,
        url=base + str(_links(data).get("webui") or ""),
        version=int(version.get("number") or 0),
        updated=str(updated or "")[:10],
    )
    return Page(info, str(export.get("value") or ""))


def _hit(raw: dict[str, Any], base: str) -> PageHit | None:
    content = raw.get("content") or {}
    if content.get("type") not in ("page", "blogpost") or not content.get("id"):
        return None
    return PageHit(
        id=str(content["id"]),
        type=str(content["type"]),
        title=_plain(raw.get("title") or content.get("title") or ""),
        space=space_key(raw),
        url=base + str(raw.get("url") or (content.get("_links") or {}).get("webui") or ""),
        excerpt=_plain(raw.get("excerpt") or ""),
        updated=str(raw.get("lastModified") or "")[:10],
    )


def space_key(raw: dict[str, Any]) -> str:
    """A search result's space key: ``content.space`` when expanded, else the space path the
    result names (``_expandable.space``, the container's ``displayUrl``)."""
    content = raw.get("content") or {}
    space = content.get("space")
    if isinstance(space, dict) and space.get("key"):
        return str(space["key"])
    container = raw.get("resultGlobalContainer") or {}
    for path in ((content.get("_expandable") or {}).get("space"), container.get("displayUrl")):
        found = _SPACE_PATH.search(str(path or ""))
        if found:
            return found.group(1)
    return ""


def within(hits: Sequence[PageHit], spaces: Sequence[str]) -> list[PageHit]:
    """Only hits in ``spaces`` (all when empty): the CQL asks for that, and this holds it."""
    allowed = {s.casefold() for s in spaces}
    return [h for h in hits if not allowed or h.space.casefold() in allowed]


def _plain(text: str) -> str:
    return " ".join(html.unescape(_HIGHLIGHT.sub("", text)).split())


def _relative(link: Any) -> bool:
    return isinstance(link, str) and link.startswith("/") and not link.startswith("//")


def _results(data: Any) -> list[dict[str, Any]]:
    found = _get(data, "results")
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def _links(data: Any) -> dict[str, Any]:
    links = _get(data, "_links")
    return links if isinstance(links, dict) else {}


def _get(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, dict) else None
