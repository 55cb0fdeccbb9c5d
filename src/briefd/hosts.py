"""Whether a host named in a URL is this machine, by its text alone: the one rule the prompt
hook (``recall.server``) and the settings' trust rule (``settings/trust.py``: where a secret
may go) both follow. Standard library only, and nothing imported: the hook's start-up time is
its latency."""

from __future__ import annotations


def loopback(host: str) -> bool:
    """Whether ``host`` is this machine by its text alone: ``localhost``, an address in
    127.0.0.0/8, or ``::1``. No resolver: a name's address may change between this check and
    the connection, so any other name (even one that resolves to 127.0.0.1) is not."""
    host = host.strip().removeprefix("[").removesuffix("]").rstrip(".").lower()
    if host in ("localhost", "::1", "0:0:0:0:0:0:0:1"):
        return True
    parts = host.split(".")
    return (
        len(parts) == 4
        and parts[0] == "127"
        and all(p.isdigit() and len(p) <= 3 and int(p) < 256 for p in parts)
    )
