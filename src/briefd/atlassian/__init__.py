"""Live Confluence and Jira lookups (A1, A2) and the issue that heads a bundle (B1): built
from settings, read-only, nothing indexed or stored. ``Atlassian`` is the facade the API hands
out; ``Account`` is whom a request is served as.

The client (:mod:`.service`: HTTP, TLS, the page converter) is imported when one of its names
is first asked for: a command line that only reads the answer types (``briefd jira -h``,
``briefd search``) does not load it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from briefd.atlassian.credentials import Account, caller_account
from briefd.atlassian.query import JiraQuery

if TYPE_CHECKING:
    from briefd.atlassian.service import Atlassian, IssueLookup

__all__ = ["Account", "Atlassian", "IssueLookup", "JiraQuery", "caller_account"]
_FROM_SERVICE = ("Atlassian", "IssueLookup")


def __getattr__(name: str) -> Any:
    if name in _FROM_SERVICE:
        return getattr(importlib.import_module("briefd.atlassian.service"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
