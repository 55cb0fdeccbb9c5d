"""Whom briefd reads Confluence and Jira as (A1, A2, credentials).

Cloud takes Basic ``email:api_token``; Data Center a personal access token as Bearer. The
service account comes from the environment variables the settings name (never from the file);
a caller may send ``X-Atlassian-Email`` / ``X-Atlassian-Token`` (or the older
``X-Confluence-Email`` / ``X-Confluence-Token``) to be served with its own account; Jira falls
back to the Confluence account when it has none. An :class:`Account` never shows its secrets
in a ``repr``, so a stray log line cannot carry them.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field

from briefd.atlassian.query import Deployment
from briefd.errors import IntegrationError, QueryError

HEADER_PAIRS = (
    ("X-Atlassian-Email", "X-Atlassian-Token"),
    ("X-Confluence-Email", "X-Confluence-Token"),
)


@dataclass(frozen=True, slots=True)
class Account:
    """``origin`` says where it came from, for error messages (never the secret itself);
    ``give_email`` how to give the email it lacks there (Cloud needs one)."""

    email: str | None = field(repr=False)
    token: str = field(repr=False)
    origin: str
    give_email: str = "send X-Atlassian-Email too"
    from_caller: bool = False  # sent in the request's headers: the caller's to fix
    headers: tuple[str, str] = HEADER_PAIRS[0]  # a caller's: the (email, token) headers it sent


def caller_account(headers: Mapping[str, str] | None) -> Account | None:
    """The account a request names in its headers, or None (then the service account). A
    request that sends one of the headers but no token (an empty one: a client's header set
    from an unset variable) names an account without one, which no lookup sends
    (:func:`authorization`): it is not served as the service account in the caller's place."""
    if not headers:
        return None
    lower = {name.lower(): value for name, value in headers.items()}
    for email_header, token_header in HEADER_PAIRS:
        token = lower.get(token_header.lower(), "").strip()
        if token:
            email = lower.get(email_header.lower(), "").strip() or None
            return Account(
                email,
                token,
                f"the caller's {token_header} header",
                f"send {email_header} too",
                from_caller=True,
                headers=(email_header, token_header),
            )
    for email_header, token_header in HEADER_PAIRS:
        if email_header.lower() in lower or token_header.lower() in lower:
            email = lower.get(email_header.lower(), "").strip() or None
            origin = f"the caller's {token_header} header"
            give = f"send {email_header} too"
            return Account(email, "", origin, give, True, (email_header, token_header))
    return None


def service_account(
    email_env: str, token_env: str, env: Mapping[str, str], fallback: Account | None = None
) -> Account | None:
    """The account of the environment variables ``email_env`` / ``token_env``; ``fallback``
    (Jira: the Confluence account) when ``token_env`` is unset or empty."""
    token = env.get(token_env, "").strip()
    if not token:
        return fallback
    email = env.get(email_env, "").strip() or None
    return Account(email, token, f"${email_env} / ${token_env}", f"export ${email_env} too")


def authorization(account: Account, deployment: Deployment, product: str, key: str) -> str:
    """The ``Authorization`` header value for ``account`` on a ``deployment`` site."""
    if not account.token:  # only a caller's headers name an account without one
        raise QueryError(
            f"the request names its own {product} account, but {account.origin} is missing or "
            "empty: send the account's token in it (Cloud: an API token with X-Atlassian-Email; "
            "Data Center: a personal access token), or leave the X-Atlassian-* (X-Confluence-*) "
            "headers out to be served as briefd's own account"
        )
    _check_sendable(account, product)
    if deployment == "datacenter":
        return f"Bearer {account.token}"
    if not account.email:  # a caller's headers: the caller's to fix (REST 400), as above
        raise (QueryError if account.from_caller else IntegrationError)(
            f"{product} Cloud needs the account's email with its API token, and "
            f"{account.origin} gave only a token; {account.give_email} (Data Center personal "
            f"access tokens: {key}.deployment: datacenter)"
        )
    pair = f"{account.email}:{account.token}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


def _check_sendable(account: Account, product: str) -> None:
    """Tokens are printable ASCII: one holding a line break, a space or another letter (a paste
    that took a second line, or a character typed by hand) cannot go in a header, and the error
    it would raise there quotes the header, token and all. Said without the token."""
    odd = next((c for c in account.token if not "!" <= c <= "~"), None)
    name = "token"
    if odd is None:  # an email travels base64-encoded: any printable letter does
        odd, name = next((c for c in account.email or "" if not c.isprintable()), None), "email"
    if odd is not None:
        raise (QueryError if account.from_caller else IntegrationError)(
            f"the {product} account's {name} from {account.origin} holds a character "
            f"({_named(odd)}) that an HTTP header cannot carry: a paste that took a line "
            "break or a space with it? Set it again, exactly as issued"
        )


def _named(char: str) -> str:
    if char in "\n\r":
        return "a line break"
    if char.isspace():
        return "a space"
    return f"U+{ord(char):04X}" + ("" if char.isprintable() else ", not printable")


def caller_refused(account: Account, product: str, key: str, deployment: Deployment) -> str:
    """What to fix when a site answers 401 to the account a caller sent in its headers (the
    caller's to fix: REST 400, an MCP error; not a failure of the site that a client retries
    unchanged): the headers it sent."""
    email_header, token_header = account.headers
    sent = (
        f"the personal access token in {token_header}"
        if deployment == "datacenter"
        else f"{email_header} and {token_header} (an API token of that email's account; a "
        f"scoped one works only while {key}.url is the gateway, "
        f"https://api.atlassian.com/ex/{key}/<cloud id>)"
    )
    return (
        f"{product} refused the credentials from {account.origin} (401 Unauthorized): check "
        f"{sent}, or leave the X-Atlassian-* (X-Confluence-*) headers out to be served as "
        "briefd's own account"
    )
