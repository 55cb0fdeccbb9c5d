"""``/docs``: Swagger UI over the OpenAPI schema, its script, stylesheet and icon served from
the pinned ``fastapi-offline`` package, so the page loads nothing from outside the server (O3).
Like the schema it describes, it needs the token when one is set (see the guard).

Every address the page uses is relative to it, as the dashboard's and the setup page's are, so
it works behind a reverse proxy that serves briefd under a path (``…/briefd/docs``): it reads
the schema from ``docs/openapi.json``, which names the server as ``..`` — relative to that
address, the one the page came from — so "Try it out" calls ``…/briefd/api/…``, not the host's
``/api/…``. ``/openapi.json`` itself names no server, for the clients generated from it."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

from briefd.service.deps import FRAMING

router = APIRouter(include_in_schema=False)

ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon.png": "image/png",
}
THIS_SERVER = {"url": "..", "description": "this server, at the address this page came from"}


@router.get("/docs", response_class=HTMLResponse)
def docs() -> HTMLResponse:
    """The page, which no other site may frame: its "Try it out" buttons send requests as this
    server's own page (a same-origin ``Origin``), which a page that frames it could click for
    the user (clickjacking ``POST /api/admin/reset-counters`` on a tokenless loopback server)."""
    page = get_swagger_ui_html(
        openapi_url="docs/openapi.json",
        title="briefd API",
        swagger_js_url="docs/assets/swagger-ui-bundle.js",
        swagger_css_url="docs/assets/swagger-ui.css",
        swagger_favicon_url="docs/assets/favicon.png",
        # Swagger UI would otherwise ask validator.swagger.io for a badge
        swagger_ui_parameters={"validatorUrl": None},
    )
    page.headers.update(FRAMING)
    return page


@router.get("/docs/openapi.json")
def schema(request: Request) -> dict[str, Any]:
    """The schema ``/openapi.json`` serves, with the server the page's requests go to."""
    return {**request.app.openapi(), "servers": [THIS_SERVER]}


@router.get("/docs/assets/{name}")
def asset(name: str) -> FileResponse:
    if name not in ASSETS:
        raise HTTPException(404, f"no asset '{name}'; the page uses {', '.join(ASSETS)}")
    path = Path(str(files("fastapi_offline") / "static" / name))
    return FileResponse(path, media_type=ASSETS[name], headers={"cache-control": "max-age=3600"})
