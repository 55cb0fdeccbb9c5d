"""The dashboard (I5) and the setup page (I6): two static HTML files shipped in the package.
No data is embedded: the dashboard fetches it with the token, and the setup page builds its
instructions from its own URL in the browser, so neither page ever contains the token."""

from __future__ import annotations

import functools
from importlib.resources import files

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)

HEADERS = {
    "x-frame-options": "DENY",
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "content-security-policy": (
        "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'"
    ),
}


@functools.cache
def page(name: str) -> str:
    return (files("briefd.service") / "static" / name).read_text(encoding="utf-8")


@router.get("/", response_class=HTMLResponse)
def dashboard() -> HTMLResponse:
    return HTMLResponse(page("dashboard.html"), headers=HEADERS)


@router.get("/setup", response_class=HTMLResponse)
def setup() -> HTMLResponse:
    return HTMLResponse(page("setup.html"), headers=HEADERS)
