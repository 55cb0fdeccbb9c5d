"""Names the settings hold that another program reads: a git branch (``proposals.branch_prefix``
makes them), an Atlassian site's URL (``confluence.url``, ``jira.url``) and the environment
variables credentials come from (``…_env``). Checked at load, so a typo is a settings error that
names its key, not a failure on every proposal or lookup."""

from __future__ import annotations

import re
import urllib.parse

REF_FORBIDDEN = frozenset(" ~^:?*[\\")


def branch_name_problem(name: str) -> str | None:
    """Why git would refuse ``name`` as a branch (``git check-ref-format --branch``), or None."""
    parts = name.split("/")
    if name.startswith("-"):
        return "starts with '-'"
    if any(ord(c) < 32 or ord(c) == 127 or c in REF_FORBIDDEN for c in name):
        return "holds a space, a control character or one of ~ ^ : ? * [ \\"
    if ".." in name or "@{" in name or name == "@":
        return "holds '..' or '@{'"
    if any(not part for part in parts):
        return "has an empty path component (a leading, trailing or double '/')"
    if any(part.startswith(".") or part.endswith(".lock") for part in parts):
        return "a component starts with '.' or ends with '.lock'"
    if name.endswith("."):
        return "ends with '.'"
    return None


def site_url_problem(url: str | None) -> str | None:
    """Why ``url`` cannot be an Atlassian site's address (as ``url: …``), or None: checked at
    load, so a typo is a settings error instead of a failure on every lookup."""
    if url is None:
        return None
    why = url_flaw(url)
    if why is None and ("?" in url or "#" in url):  # every request's path goes after it
        why = "it holds a query or fragment"
    if why is None:
        return None
    return (
        f"url: {without_account(url)!r} is not a site URL ({why}); expected https://host "
        "(or http://host:port), optionally with a path"
    )


def bind_host_problem(host: str) -> str | None:
    """Why ``serve.host`` / ``--host`` names no address to bind (as ``host: …``), or None:
    ``127.0.0.1:9000`` or ``http://localhost`` was refused as an address beyond loopback
    ("refusing to bind … without a token: set BRIEFD_API_TOKEN"), and `briefd init` wrote
    it into the clients' URLs. An IPv6 address may come in brackets (``[::1]``)."""
    name = host.strip()
    bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    if "://" in name or "/" in name:
        why = "a URL; give the host alone"
    elif any(c.isspace() or not c.isprintable() for c in name):
        why = "it holds a space or a control character"
    elif ":" in bare and not _ipv6(bare):  # localhost:9000, 127.0.0.1:9000, [::1]:9000
        why = "it holds a port; give the port as serve.port or --port"
    else:
        return None
    return (
        f"host: {host!r} is not an address to bind ({why}); expected a host name or an "
        "address such as 127.0.0.1, 0.0.0.0 or ::1"
    )


def _ipv6(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def allowed_names_problem(hosts: tuple[str, ...], origins: tuple[str, ...]) -> str | None:
    """Why an entry of ``serve.allowed_hosts`` / ``allowed_origins`` can never match a
    request (as ``allowed_…: …``), or None: a Host header is matched by its name without the
    port, an Origin exactly as the browser sends it, so ``kb.example.com:8484`` or
    ``https://app.example.com/`` would be accepted and every request from there refused."""
    for host in hosts:
        name = host.strip().lower()
        v6 = name.removeprefix("[").partition("]")[0]
        fixed = f"[{v6}]" if name.startswith("[") or name.count(":") > 1 else name.split(":")[0]
        if any(c in name for c in "/@ ") or not fixed.strip("[]"):
            return (
                f"allowed_hosts: {host!r} is not a host name; expected a name or address "
                "such as kb.example.com, without scheme, port or path"
            )
        if fixed != name and fixed.startswith("[") and not name.startswith("["):
            return (  # YAML reads [fd00::1] unwritten in quotes as a list: keep its brackets
                f"allowed_hosts: {host!r} never matches a Host header; write it in brackets "
                f'and quotes, "{fixed}" (YAML reads {fixed} unquoted as a list)'
            )
        if fixed != name:
            return f"allowed_hosts: {host!r} never matches a Host header; write {fixed!r}"
    for origin in origins:
        sent = _origin(origin)
        if sent is None:
            return (
                f"allowed_origins: {without_account(origin)!r} is not an origin; expected "
                "scheme://host[:port] as a browser sends it, such as https://app.example.com"
            )
        if sent != origin:
            return (
                f"allowed_origins: {without_account(origin)!r} never matches an Origin as a "
                f"browser sends it; write {sent!r}"
            )
    return None


def _origin(origin: str) -> str | None:
    """``origin`` as a browser sends it (scheme and host in lower case, no default port, no
    path), or None when it names no http(s) host."""
    try:
        parts = urllib.parse.urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    default = 443 if parts.scheme == "https" else 80
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


def without_account(url: str) -> str:
    """``url`` with a ``user:token@`` part shown as ``***@``, and a query or fragment as ``?…``
    / ``#…`` (for messages): a URL the settings hold (``embeddings.base_url`` too) is never
    shown with its password, nor with a token pasted as a parameter (``?access_token=…``)."""
    cut = next((i for i, c in enumerate(url) if c in "?#"), len(url))
    url, tail = url[:cut], (url[cut] + "…" if cut < len(url) else "")
    scheme, sep, rest = url.partition("://")
    end = next((i for i, c in enumerate(rest) if c == "/"), len(rest))
    if not sep or "@" not in rest[:end]:
        return url + tail
    return f"{scheme}://***@{rest[:end].rpartition('@')[2]}{rest[end:]}{tail}"


def url_flaw(
    url: str,
    account: str = "the environment variables named by email_env / token_env, never from the file",
) -> str | None:
    """Why ``url`` is no http(s) URL of a host; ``account`` says where its credentials come
    from instead of a ``user:token@`` part."""
    if any(c.isspace() or not c.isprintable() for c in url):
        return "it holds a space or a control character"
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:  # an IPv6 host without its closing ']'
        return str(exc)
    if parts.scheme not in ("http", "https"):
        return "it starts with neither https:// nor http://"
    if not parts.hostname:
        return "it names no host"
    if "@" in parts.netloc:  # sent with every request and shown in every link to the site
        return f"it holds an account (user:token@); the account comes from {account}"
    port = parts.netloc.rpartition("]")[2].rpartition("@")[2].partition(":")[2]
    if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        return f"port {port!r} is not a number from 1 to 65535"
    return None


_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# how the tokens of the services briefd talks to begin (GitHub's, Atlassian's API tokens)
_TOKEN_PREFIXES = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "ATATT")
# keys that hold a credential where a ``…_env`` key names the variable that holds it instead
CREDENTIAL_KEYS = frozenset(
    {"token", "api_token", "api_key", "apikey", "key", "password", "pat", "access_token"}
)


def variable_name_problem(name: str) -> str | None:
    """Why ``name`` (a ``…_env`` setting) cannot be the name of an environment variable, or
    None: a token written there (where the hint for ``token:`` pointed) was looked up as a
    variable's name, and every error then showed it ("export $ATATT3x…")."""
    if _VARIABLE.fullmatch(name) and not name.startswith(_TOKEN_PREFIXES):
        return None
    return (  # the value is not shown: it may be the secret itself
        "expected the name of an environment variable (letters, digits and '_', such as "
        "MY_TOKEN) that holds the secret, got a value that is none (not shown: it may be the "
        "secret itself; if so, put it in that variable instead, and revoke it if the file was "
        "shared)"
    )


def credential_key_hint(key: str, prefix: str, env_keys: dict[str, str], unset: str) -> str | None:
    """What to do about a credential given as the key ``key`` of the section ``prefix``
    (``confluence.token``, ``serve.token``, a top-level ``api_token``), or None when ``key``
    names no credential. ``env_keys``: the section's ``…_env`` keys and their defaults;
    ``unset``: how the key goes away ("remove this key", "unset BRIEFD_…")."""
    lowered = key.lower()
    if lowered in ("email", "user", "username"):
        named = next((k for k in env_keys if k.startswith("email")), None)
    elif lowered in CREDENTIAL_KEYS:
        named = next((k for k in env_keys if k.startswith(("token", "api_key"))), None)
    else:
        return None
    if named is not None:
        return (
            "briefd reads no credential from its settings; put it in the environment variable "
            f"{env_keys[named]} (or the one '{prefix}{named}' names: a variable's name, never "
            f"the secret), and {unset}"
        )
    if prefix in ("", "serve.") and lowered in CREDENTIAL_KEYS:
        return (
            "the API token is never a setting: it comes from the environment variable "
            f"BRIEFD_API_TOKEN only; {unset}"
        )
    return None
