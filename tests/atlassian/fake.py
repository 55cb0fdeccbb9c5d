"""A fake Atlassian site on 127.0.0.1 — Jira and Confluence, Cloud or Data Center — speaking
the published wire formats: Cloud ``POST /rest/api/3/search/jql`` paged by ``nextPageToken``
(and 410 Gone from the removed ``/rest/api/{2,3}/search``), Data Center ``/rest/api/2/search``
paged by ``startAt``, ``renderedFields`` / ``renderedBody`` HTML, issue links and remote links,
Confluence v1 CQL search paged by ``_links.next`` (cursor on Cloud, ``start`` on Data Center),
Cloud v2 pages and spaces, Data Center content. It checks credentials the way each deployment
does (Basic email:token on Cloud, a Bearer personal access token on Data Center), records every
request, and can be told to answer a path with a status (401/403/429 …) or slowly. A Cloud site
also answers ``GET /rest/api/{2,3}/serverInfo`` (its ``baseUrl``) and, as the API gateway
does, everything under ``/ex/jira/<cloud id>`` (an issue's ``self`` then on the gateway)."""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.atlassian import data
from tests.service.live import serving

GONE = (
    "The requested API has been removed. Please migrate to the /rest/api/3/search/jql API. "
    "A full migration guideline is available at https://developer.atlassian.com/changelog/#CHANGE-2046"
)
FILTERS = {  # the values this site knows, per JQL field; any other is refused with a 400
    "status": {"To Do", "In Progress", "Done"},
    "issuetype": {"Bug", "Story", "Task"},
    "assignee": {"Ada Lovelace", "dev-ada@example.com"},
}
PROJECTS = {"SHOP", "PAY", "OPS"}  # the projects the site's accounts may browse
MOVED = {"SHOP-17": "OPS-3"}  # an issue moved to another project: old key → new key
GATEWAY = "https://api.atlassian.com"
_GATEWAY_PATH = re.compile(r"/ex/(?:jira|confluence)/[0-9a-f-]{8,}(?=/)")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    authorization: str


@dataclass
class Scripted:
    pattern: str
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    delay: float = 0.0
    trickle: float = 0.0  # seconds between the JSON body's bytes, sent one at a time


class FakeSite:
    """``accounts``: token → email (Cloud checks both, Data Center only the token)."""

    def __init__(self, deployment: str, accounts: dict[str, str], page_size: int = 2) -> None:
        self.deployment = deployment
        self.accounts = accounts
        self.page_size = page_size
        self.seen: list[Seen] = []
        self.scripts: list[Scripted] = []
        self.url = ""
        self.app = Starlette(routes=[Route("/{path:path}", self.handle, methods=["GET", "POST"])])

    @property
    def cloud(self) -> bool:
        return self.deployment == "cloud"

    def script(self, pattern: str, status: int, **kwargs: Any) -> None:
        self.scripts.append(Scripted(pattern, status, **kwargs))

    def paths(self) -> list[str]:
        return [f"{s.method} {s.path}" for s in self.seen]

    async def handle(self, request: Request) -> Response:
        path = "/" + request.path_params["path"]
        raw = await request.body()
        body = json.loads(raw) if raw else None
        auth = request.headers.get("authorization", "")
        self.seen.append(Seen(request.method, path, dict(request.query_params), body, auth))
        for scripted in self.scripts:
            if scripted.times and re.search(scripted.pattern, path):
                scripted.times -= 1
                await anyio.sleep(scripted.delay)
                if scripted.trickle:
                    return _trickled(scripted)
                if isinstance(scripted.body, str):
                    return Response(scripted.body, scripted.status, scripted.headers, "text/html")
                if scripted.status:  # escaped JSON: a lone UTF-16 half, as Atlassian sends one
                    text = json.dumps(scripted.body)
                    return Response(text, scripted.status, scripted.headers, "application/json")
        if self.cloud and re.fullmatch(r"/rest/api/(2|3|latest)/search", path):
            return JSONResponse({"errorMessages": [GONE], "errors": {}}, 410)  # for everyone
        if not self._authorised(auth):
            message = "Client must be authenticated to access this resource."
            return JSONResponse({"errorMessages": [message], "errors": {}}, 401)
        gateway = _GATEWAY_PATH.match(path) if self.cloud else None
        if gateway is not None:  # the gateway's answer: the site's, with its links on the gateway
            api, path = GATEWAY + gateway.group(0), path[gateway.end() :]
            return self._route(request.method, path, dict(request.query_params), body, api)
        return self._route(request.method, path, dict(request.query_params), body, self.url)

    def _authorised(self, header: str) -> bool:
        if self.cloud and header.startswith("Basic "):
            email, _, token = base64.b64decode(header[6:]).decode().partition(":")
            return self.accounts.get(token) == email
        return not self.cloud and header.startswith("Bearer ") and header[7:] in self.accounts

    def _route(
        self, method: str, path: str, query: dict[str, str], body: Any, api: str
    ) -> Response:
        """``api``: the URL the request came in on (the site's, or the gateway's)."""
        version = "3" if self.cloud else "2"
        if path == "/rest/api/3/search/jql" and self.cloud and method == "POST":
            return self._jql_cloud(body, api)
        if path == "/rest/api/2/search" and not self.cloud:
            return self._jql_datacenter(query)
        if re.fullmatch(r"/rest/api/(2|3)/serverInfo", path):
            return JSONResponse(self._server_info())
        issue = re.fullmatch(
            rf"/rest/api/{version}/issue/([A-Z]+-\d+)(/comment|/remotelink)?", path
        )
        if issue:
            return self._issue(issue.group(1), issue.group(2), query, api)
        prefix = "/wiki" if self.cloud else ""
        if path == f"{prefix}/rest/api/search":
            return self._cql(query)
        page = re.fullmatch(r"/wiki/api/v2/(pages|blogposts)/(\d+)", path)
        if page and self.cloud:
            return self._page_v2(page.group(1), page.group(2))
        space = re.fullmatch(r"/wiki/api/v2/spaces/(\d+)", path)
        if space and self.cloud:
            return self._space(space.group(1))
        content = re.fullmatch(r"/rest/api/content/(\d+)", path)
        if content and not self.cloud:
            return self._content(content.group(1), query)
        return Response("<html><body>Not Found</body></html>", 404, media_type="text/html")

    # -- Jira -----------------------------------------------------------------------------

    def _matches(self, jql: str) -> list[tuple[str, str, str]]:
        projects = re.search(r"project in \(([^)]*)\)", jql)
        allowed = set(_QUOTED.findall(projects.group(1))) if projects else None
        words = re.search(r"text ~ (\"(?:[^\"\\]|\\.)*\")", jql)
        wanted = json.loads(words.group(1)).lower().split() if words else []
        return [
            row
            for row in data.SEARCH_SUMMARIES
            if (allowed is None or row[0].split("-")[0] in allowed)
            and all(w.rstrip("s") in row[1].lower() for w in wanted)
        ]

    def _server_info(self) -> dict[str, Any]:
        """``GET /rest/api/{2,3}/serverInfo`` as Jira Cloud (or Data Center) answers it."""
        if not self.cloud:
            return {
                "baseUrl": self.url,
                "version": "9.12.2",
                "versionNumbers": [9, 12, 2],
                "deploymentType": "Server",
                "buildNumber": 9120002,
                "buildDate": "2024-02-06T00:00:00.000+0000",
                "databaseBuildNumber": 9120002,
                "serverTime": "2026-05-04T10:00:00.000+0000",
                "scmInfo": "6b6bd1c6eb0ed3b53da2a24e2c7f31b3d0b34b4a",
                "serverTitle": "Jira",
            }
        return {
            "baseUrl": self.url,
            "displayUrl": self.url,
            "displayUrlConfluence": f"{self.url}/wiki",
            "displayUrlServicedeskHelpCenter": f"{self.url}/servicedesk/customer/portals",
            "version": "1001.0.0-SNAPSHOT",
            "versionNumbers": [1001, 0, 0],
            "deploymentType": "Cloud",
            "buildNumber": 100300,
            "buildDate": "2026-04-27T00:00:00.000+0000",
            "serverTime": "2026-05-04T10:00:00.000+0000",
            "serverTimeZone": "Etc/UTC",
            "scmInfo": "1b0c8e4f0d6a4f3c9e2d7a5b6c8d9e0f1a2b3c4d",
            "serverTitle": "Jira",
            "defaultLocale": {"locale": "en_US"},
        }

    def _row(
        self, key: str, summary: str, status: str, fields: list[str], api: str
    ) -> dict[str, Any]:
        values = {
            "summary": summary,
            "issuetype": {"name": "Bug"},
            "status": {"name": status},
            "priority": {"name": "Medium"},
            "assignee": None,
            "updated": "2026-05-02T16:40:02.000+0000",
        }
        number = int(key.split("-")[1])
        version = "3" if self.cloud else "2"
        return {
            "expand": "operations,versionedRepresentations,editmeta,changelog,renderedFields",
            "id": str(10000 + number),
            "self": f"{api}/rest/api/{version}/issue/{10000 + number}",
            "key": key,
            "fields": {name: values[name] for name in fields if name in values},
        }

    def _refused(self, jql: str) -> Response | None:
        """Jira's 400 for a filter value it does not know (its words, both deployments); a
        project the account may not browse is one Jira does not know."""
        projects = re.search(r"project in \(([^)]*)\)", jql)
        named = (
            [json.loads(f'"{p}"') for p in _QUOTED.findall(projects.group(1))] if projects else []
        )
        unknown = [p for p in named if p not in PROJECTS]
        if unknown:
            said = [f"The value '{p}' does not exist for the field 'project'." for p in unknown]
            return JSONResponse({"errorMessages": said, "errors": {}}, 400)
        for field_name, known in FILTERS.items():
            for value in re.findall(rf'{field_name} = ("(?:[^"\\]|\\.)*")', jql):
                if json.loads(value) not in known:
                    message = (
                        f"The value '{json.loads(value)}' does not exist for the field "
                        f"'{field_name}'."
                    )
                    return JSONResponse({"errorMessages": [message], "errors": {}}, 400)
        return None

    def _jql_cloud(self, body: dict[str, Any], api: str) -> Response:
        refused = self._refused(body["jql"])
        if refused is not None:
            return refused
        rows = self._matches(body["jql"])
        start = int(base64.b64decode(body["nextPageToken"])) if body.get("nextPageToken") else 0
        size = min(int(body.get("maxResults", 50)), self.page_size)
        page = rows[start : start + size]
        wanted = body.get("fields") or []
        out: dict[str, Any] = {"issues": [self._row(*r, wanted, api) for r in page]}
        if start + size < len(rows):
            out["nextPageToken"] = base64.b64encode(str(start + size).encode()).decode()
        out["isLast"] = "nextPageToken" not in out
        return JSONResponse(out)

    def _jql_datacenter(self, query: dict[str, str]) -> Response:
        refused = self._refused(query["jql"])
        if refused is not None:
            return refused
        rows = self._matches(query["jql"])
        start = int(query.get("startAt", 0))
        size = min(int(query.get("maxResults", 50)), self.page_size)
        fields = query.get("fields", "").split(",")
        issues = [self._row(*r, fields, self.url) for r in rows[start : start + size]]
        out = {"expand": "names,schema", "startAt": start, "maxResults": size}
        return JSONResponse({**out, "total": len(rows), "issues": issues})

    def _issue(self, asked: str, part: str | None, query: dict[str, str], api: str) -> Response:
        key = MOVED.get(asked, asked)  # Jira answers a moved issue's old key under its new one
        if key not in ("SHOP-42", *MOVED.values()):
            message = "Issue does not exist or you do not have permission to see it."
            return JSONResponse({"errorMessages": [message], "errors": {}}, 404)
        if part == "/remotelink":
            links = json.loads(json.dumps(data.REMOTE_LINKS).replace("{site}", self.url))
            return JSONResponse(links)
        if part == "/comment":
            return JSONResponse(self._comments(query))
        fields = copy.deepcopy(data.SHOP_42_FIELDS)
        fields["description"] = data.ADF_DESCRIPTION if self.cloud else "h3. Steps\n# Capture"
        wanted = query.get("fields", "").split(",")
        out: dict[str, Any] = {
            "expand": "renderedFields,names,schema",
            "id": "10042",
            "self": f"{api}/rest/api/{'3' if self.cloud else '2'}/issue/10042",
            "key": key,
            "fields": {k: v for k, v in fields.items() if k in wanted},
        }
        if "renderedFields" in query.get("expand", ""):
            out["renderedFields"] = {"description": data.DESCRIPTION_HTML, "summary": None}
        if "names" in query.get("expand", ""):
            out["names"] = {"customfield_10020": "Story Points", "summary": "Summary"}
        return JSONResponse(out)

    def _comments(self, query: dict[str, str]) -> dict[str, Any]:
        comments = []
        for number, (author, created, text) in enumerate(data.COMMENTS, start=1):
            body: Any = text if not self.cloud else {"type": "doc", "version": 1, "content": []}
            comment = {"id": str(number), "author": {"displayName": author}, "body": body}
            comment |= {"created": created, "updated": created}
            if "renderedBody" in query.get("expand", ""):
                comment["renderedBody"] = f"<p>{text}</p>"
            comments.append(comment)
        comments.sort(key=lambda c: c["created"], reverse=query.get("orderBy") == "-created")
        return {"startAt": 0, "maxResults": 50, "total": len(comments), "comments": comments}

    # -- Confluence -----------------------------------------------------------------------

    def _cql(self, query: dict[str, str]) -> Response:
        cql = query["cql"]
        spaces = re.search(r"space in \(([^)]*)\)", cql)
        allowed = set(_QUOTED.findall(spaces.group(1))) if spaces else None
        found = [
            (pid, page)
            for pid, page in data.PAGES.items()
            if (allowed is None or page["space"] in allowed) and "Refund" in page["title"]
        ]
        size = min(int(query.get("limit", 25)), self.page_size)
        key = "cursor" if self.cloud else "start"
        start = int(
            base64.b64decode(query[key]) if self.cloud and key in query else query.get(key, 0)
        )
        results = [self._result(pid, page) for pid, page in found[start : start + size]]
        base = self.url + ("/wiki" if self.cloud else "")
        links: dict[str, Any] = {"base": base, "context": "/wiki" if self.cloud else ""}
        if start + size < len(found):
            value = str(start + size)
            value = base64.b64encode(value.encode()).decode() if self.cloud else value
            links["next"] = f"/rest/api/search?cql={quote(cql)}&{key}={quote(value)}&limit={size}"
        out = {"results": results, "start": start, "limit": size, "size": len(results)}
        return JSONResponse({**out, "cqlQuery": cql, "searchDuration": 7, "_links": links})

    def _webui(self, pid: str, page: dict[str, Any]) -> str:
        title = quote(page["title"].replace(" ", "+"), safe="+")
        if self.cloud:
            return f"/spaces/{page['space']}/pages/{pid}/{title}"
        return f"/display/{page['space']}/{title}"

    def _result(self, pid: str, page: dict[str, Any]) -> dict[str, Any]:
        webui = self._webui(pid, page)
        content = {"id": pid, "type": page["type"], "status": "current", "title": page["title"]}
        content |= {"_expandable": {"space": f"/rest/api/space/{page['space']}"}}
        content |= {"_links": {"webui": webui}}
        title = page["title"].replace("Refund", "@@@hl@@@Refund@@@endhl@@@")
        return {
            "content": content,
            "title": title,
            "excerpt": "About @@@hl@@@refunds@@@endhl@@@ &amp; races",
            "url": webui,
            "resultGlobalContainer": {
                "title": data.SPACES[page["space"]][1],
                "displayUrl": f"/spaces/{page['space']}",
            },
            "entityType": "content",
            "lastModified": "2026-04-01T10:00:00.000Z",
        }

    def _page_v2(self, kind: str, pid: str) -> Response:
        page = data.PAGES.get(pid)
        if page is None or kind != page["type"] + "s":
            error = {"status": 404, "code": "NOT_FOUND", "title": "Not Found", "detail": None}
            return JSONResponse({"errors": [error]}, 404)
        return JSONResponse(
            {
                "id": pid,
                "status": "current",
                "title": page["title"],
                "spaceId": data.SPACES[page["space"]][0],
                "authorId": "5b10ac8d82e05b22cc7d4ef5",
                "createdAt": "2026-03-30T08:00:00.000Z",
                "version": {"createdAt": "2026-04-01T10:00:00.000Z", "number": 4},
                "body": {
                    "export_view": {"value": self._html(page), "representation": "export_view"}
                },
                "_links": {"webui": self._webui(pid, page), "base": self.url + "/wiki"},
            }
        )

    def _html(self, page: dict[str, Any]) -> str:
        """The page's export_view; its links from the root carry the site's context path."""
        return str(page["html"]).replace("{context}", "/wiki" if self.cloud else "")

    def _space(self, space_id: str) -> Response:
        for key, (sid, name) in data.SPACES.items():
            if sid == space_id:
                return JSONResponse({"id": sid, "key": key, "name": name, "type": "global"})
        return JSONResponse({"errors": [{"status": 404, "title": "Not Found"}]}, 404)

    def _content(self, pid: str, query: dict[str, str]) -> Response:
        page = data.PAGES.get(pid)
        if page is None:
            return JSONResponse({"statusCode": 404, "message": "No content found with id"}, 404)
        expand = query.get("expand", "")
        out: dict[str, Any] = {"id": pid, "type": page["type"], "status": "current"}
        out |= {"title": page["title"], "_links": {"webui": self._webui(pid, page)}}
        out["_links"] |= {"base": self.url, "context": ""}
        if "space" in expand:
            out["space"] = {"key": page["space"], "name": data.SPACES[page["space"]][1]}
        if "version" in expand:
            out["version"] = {"number": 4, "when": "2026-04-01T10:00:00.000Z"}
        if "body.export_view" in expand:
            out["body"] = {
                "export_view": {"value": self._html(page), "representation": "export_view"}
            }
        return JSONResponse(out)


def _trickled(scripted: Scripted) -> Response:
    raw = json.dumps(scripted.body).encode()

    async def body() -> AsyncIterator[bytes]:
        for i in range(len(raw)):
            await anyio.sleep(scripted.trickle)
            yield raw[i : i + 1]

    return StreamingResponse(body(), scripted.status, media_type="application/json")


@contextmanager
def serve(site: FakeSite, tls: tuple[Path, Path] | None = None) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 (over TLS with ``tls`` = (key, cert)); yields its URL."""
    options: dict[str, Any] = {"lifespan": "off"}
    if tls is not None:
        options |= {"ssl_keyfile": str(tls[0]), "ssl_certfile": str(tls[1])}
    with serving(site.app, **options) as url:
        site.url = url
        yield url
