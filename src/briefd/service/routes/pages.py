"""The dashboard (I5) and the setup page (I6): two static HTML files shipped in the package.
No data is embedded: the dashboard fetches it with the token, and the setup page builds its
instructions from its own URL in the browser, so neither page ever contains the token."""

from __future__ import annotations

import functools
import re
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


# a line of a page that stands for a file beside it: the dashboard's styles and scripts, one
# file per part (its figures, knowledge health, search, start-up), served as one page still
_INLINE = re.compile(r"^<!-- inline: ([\w.-]+) -->$", re.MULTILINE)


@functools.cache
def page(name: str) -> str:
    """The page ``name`` with every file it inlines in place (read once, then cached)."""
    static = files("briefd.service") / "static"
    text = (static / name).read_text(encoding="utf-8")
    return _INLINE.sub(
        lambda m: (static / m.group(1)).read_text(encoding="utf-8").rstrip("\n"), text
    )


@router.get("/", response_class=HTMLResponse)
def dashboard() -> HTMLResponse:
    return HTMLResponse(page("dashboard.html"), headers=HEADERS)


@router.get("/setup", response_class=HTMLResponse)
def setup() -> HTMLResponse:
    return HTMLResponse(page("setup.html"), headers=HEADERS)
