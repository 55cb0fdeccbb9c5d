"""The state replicas share (query log, usage, proposals, recall sessions, bundle manifests,
sync status) behind one interface (:class:`SharedState`): the local SQLite index by default,
PostgreSQL with ``state.url``. The search index itself stays local to each replica. Names are
imported on first use, so the hook's fast path (:mod:`.sessions`) stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from briefd.errors import ConfigError
from briefd.settings import Settings
from briefd.settings.trust import shared_state_problem

if TYPE_CHECKING:
    from briefd.state.base import SYNC_CHANNEL, SharedState
    from briefd.state.local import LocalState
    from briefd.state.model import Manifest, Proposal, ReplicaStatus
    from briefd.state.sessions import SessionMemory
    from briefd.store.db import Store

__all__ = [
    "SYNC_CHANNEL",
    "LocalState",
    "Manifest",
    "Proposal",
    "ReplicaStatus",
    "SessionMemory",
    "SharedState",
    "open_state",
    "replica_name",
]

_WHERE = {
    "SYNC_CHANNEL": "base",
    "SharedState": "base",
    "LocalState": "local",
    "Manifest": "model",
    "Proposal": "model",
    "ReplicaStatus": "model",
    "SessionMemory": "sessions",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"briefd.state.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'briefd.state' has no attribute {name!r}")


def replica_name(settings: Settings) -> str:
    """``state.replica``, or this host's name and the port served."""
    if settings.state.replica:
        return settings.state.replica
    import socket  # here: the hook's fast path imports this package and never names a replica

    return f"{socket.gethostname()}:{settings.serve.port}"


def open_state(settings: Settings, open_store: Callable[[], Store]) -> SharedState:
    """The configured engine: PostgreSQL for a ``postgresql://`` URL, else the local index."""
    url = settings.state.url
    if not url or url == "sqlite":
        from briefd.state.local import LocalState

        return LocalState(open_store)
    if not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            "state.url must be a postgresql://user:password@host:port/database URL "
            "(or unset for the local SQLite index)"
        )
    refused = shared_state_problem(settings.project_named, url)
    if refused is not None:  # before any connection: libpq would add $PGPASSWORD
        raise ConfigError(refused)
    from briefd.state.postgres import PostgresState  # psycopg only when configured

    return PostgresState(settings.state, replica_name(settings))
