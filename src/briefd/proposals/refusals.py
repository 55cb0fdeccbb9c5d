"""What GitHub's refusals mean and what to do about them (T1): the message of an error answer
with its advice — a rate limit (403 or 429 with ``X-RateLimit-Remaining: 0`` and
``X-RateLimit-Reset``, or ``Retry-After``) is not a token without permission — and a
redirect (301, 307: the repository was renamed or transferred), which is not followed: the
settings name the repository, so they are what changes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    import httpx

EXISTS = "A pull request already exists"
_MOVED_TO = re.compile(r"/repos/([\w.-]+/[\w.-]+)(?:/|$)")
_BY_ID = re.compile(r"/repositories/\d+(?:/|$)")
_ADVICE = {
    401: "; check the token",
    403: "; the token lacks permission",
    # GitHub hides a private repository from a token that may not read it: 404, not 403
    404: "; check forge.repo (owner/name), and that the token may read that repository (a "
    "fine-grained token lists the repositories it reaches)",
}


def message(response: httpx.Response) -> str:
    """What GitHub said in an error answer, with what to do about it."""
    limited = rate_limit(response)
    return _said(response) + (limited.advice if limited else _ADVICE.get(response.status_code, ""))


def already_exists(response: httpx.Response) -> bool:
    """GitHub's 422 for a head that already has an open pull request into that base."""
    if response.status_code != 422:
        return False
    try:
        errors = response.json().get("errors")
    except (ValueError, AttributeError):
        return False
    return isinstance(errors, list) and any(
        isinstance(e, dict) and str(e.get("message", "")).startswith(EXISTS) for e in errors
    )


def moved(response: httpx.Response, repo: str) -> str:
    """Why a redirect is not followed and what to change: the repository ``repo`` moved."""
    where = response.headers.get("location")
    if not where:
        return "a redirect without a Location; check forge.api_url"
    location = urljoin(str(response.request.url), where)
    found = _MOVED_TO.search(urlsplit(location).path)
    if _same_origin(location, str(response.request.url)) and found:
        return (
            f"the repository {repo} moved to {found.group(1)} (Location: {location}); set "
            f"forge.repo: {found.group(1)} in briefd.yaml, and point the source's remote URL "
            "at the moved repository"
        )
    if _BY_ID.search(urlsplit(location).path):
        return (
            f"the repository {repo} was renamed or transferred (Location: {location}, by its "
            "id); set forge.repo in briefd.yaml to its new owner/name, and point the source's "
            "remote URL at the moved repository"
        )
    return f"a redirect to {location}, not followed; check forge.api_url and forge.repo"


def _said(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    if not isinstance(data, dict):
        return str(data)[:200]
    said = str(data.get("message", response.reason_phrase))
    errors = data.get("errors")
    if isinstance(errors, list) and errors:
        said += " (" + "; ".join(_detail(e) for e in errors) + ")"
    return said


_BRANCH_ADVICE = {
    "head": "the proposal branch is not in forge.repo's repository: forge.repo must name the "
    "repository proposals are pushed to (source's, or proposals.push's remote)",
    "base": "the base branch is not in forge.repo's repository: forge.repo must name the "
    "repository proposals are pushed to, whose branch sync.branch names",
}


def _detail(error: object) -> str:
    """One of GitHub's validation errors: its message, else what its fields say ("head
    invalid", GitHub's answer for a branch the repository lacks) and what that means."""
    if not isinstance(error, dict):
        return str(error)
    if "message" in error:
        return str(error["message"])
    field, code = str(error.get("field", "")), str(error.get("code", ""))
    said = " ".join(part for part in (field, code) if part) or str(error)
    advice = _BRANCH_ADVICE.get(field) if code == "invalid" else None
    return f"{said}: {advice}" if advice else said


@dataclass(frozen=True, slots=True)
class RateLimit:
    """A rate-limited answer: what to do (appended to what GitHub said) and when GitHub takes
    the token's requests again ("after 2030-03-17 17:46:40 UTC")."""

    advice: str
    again: str


def rate_limit(response: httpx.Response) -> RateLimit | None:
    """GitHub's primary limit (the token's requests this hour are used up) or a secondary one
    (too many at once); None: the answer is not a rate limit."""
    headers = response.headers
    if response.status_code not in (403, 429):
        return None
    if headers.get("x-ratelimit-remaining") == "0":
        reset = _epoch(headers.get("x-ratelimit-reset"))
        until = f"until {reset} (X-RateLimit-Reset)" if reset else "until its limit resets"
        return RateLimit(
            "; rate-limited, not a permission problem: GitHub takes no more requests from this "
            f"token {until}; wait until then",
            f"after {reset}" if reset else "once the token's hourly limit resets",
        )
    wait = headers.get("retry-after", "").strip()
    if wait.isdigit():
        at = _utc(datetime.now(UTC) + timedelta(seconds=int(wait)))
        return RateLimit(
            f"; rate-limited (a secondary limit), not a permission problem: wait {wait} s",
            f"after {at}",
        )
    if response.status_code == 429 or "rate limit" in _said(response).lower():
        return RateLimit(
            "; rate-limited, not a permission problem: wait a minute or more", "in a minute or more"
        )
    return None


def _epoch(value: str | None) -> str | None:
    """Epoch seconds as a UTC time (None: not a number)."""
    if not value or not value.strip().isdigit():
        return None
    try:
        return _utc(datetime.fromtimestamp(int(value), UTC))
    except (OverflowError, OSError, ValueError):
        return None


def _utc(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _same_origin(url: str, other: str) -> bool:
    a, b = urlsplit(url), urlsplit(other)
    return (a.scheme, a.netloc) == (b.scheme, b.netloc)
