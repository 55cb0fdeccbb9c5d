"""``GET /metrics`` (I4): the persisted counters plus live index, sync and shared-state
gauges, in the Prometheus text format. With a token set it needs the token (Prometheus:
``authorization.credentials``) unless ``serve.metrics_auth`` is false."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from briefd.errors import BriefdError, IndexNotFoundError
from briefd.service.deps import State
from briefd.service.metrics import BriefdCollector, Gauge, registry
from briefd.service.state import ServiceState
from briefd.store import activity
from briefd.store.sync_state import SYNC_ROW

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
def metrics(state: State) -> Response:
    collector = BriefdCollector(state.metrics, lambda: gauges(state))
    return Response(generate_latest(registry(collector)), media_type=CONTENT_TYPE_LATEST)


def gauges(state: ServiceState) -> list[Gauge]:
    """The server's uptime (whatever the index's state: a first index can take minutes), then
    whether the shared state answers (replicas), then what the index holds."""
    uptime = Gauge(
        "briefd_uptime_seconds", "Seconds since this server started.", state.uptime_seconds()
    )
    return [uptime, *_state_gauge(state), *_index_gauges(state)]


def _state_gauge(state: ServiceState) -> list[Gauge]:
    """``briefd_state_ok`` with a shared state (PostgreSQL): 0 while /api/health says
    degraded for it (unreachable, too slow, refusing), which a scrape could not see before."""
    shared = state.api.state
    if not shared.shared:
        return []
    try:
        problem = shared.problem()
    except BriefdError as exc:
        problem = str(exc)
    return [
        Gauge(
            "briefd_state_ok",
            "1 when the shared state (PostgreSQL) answers and takes writes; 0 when it is "
            "unreachable, too slow or refuses (/api/health with the token says why).",
            0.0 if problem else 1.0,
        )
    ]


def _index_gauges(state: ServiceState) -> list[Gauge]:
    """From the local index alone: a replica whose shared state (PostgreSQL) is away is still
    scraped, its degraded health then says why."""
    if state.building():  # a first index or a refill: nothing complete to read yet
        return [Gauge("briefd_index_documents", "Indexed documents.", 0.0)]
    try:
        with state.lock:
            with state.api.store.read() as conn:
                overview = activity.overview(conn)
            scopes = state.api.scopes()
    except IndexNotFoundError:  # no index yet: a failing first sync still shows (K3)
        with state.lock:
            status = state.api.sync_status()
        row = {"source": SYNC_ROW, "last_sync_at": status.last_sync_at}
        row["last_error"] = status.last_error
        documents = Gauge("briefd_index_documents", "Indexed documents.", 0.0)
        return [documents, *_sync([row] if status.last_sync_at else [])]
    out = [
        Gauge("briefd_index_documents", "Indexed documents.", float(_num(overview["documents"]))),
        Gauge(
            "briefd_index_vectors", "Stored embedding vectors.", float(_num(overview["vectors"]))
        ),
    ]
    out += [
        Gauge(
            "briefd_index_chunks",
            "Indexed sections per scope.",
            float(s.chunks),
            (("scope", s.name),),
        )
        for s in scopes
    ]
    return out + _sync(overview["sources"])  # type: ignore[arg-type]


def _sync(sources: list[dict[str, Any]]) -> list[Gauge]:
    """The last sync's (or index run's) time and outcome, per ``sync_state`` row."""
    out = []
    for source in sources:
        labels = (("source", str(source["source"])),)
        at = _timestamp(source["last_sync_at"])
        if at is not None:
            out.append(
                Gauge(
                    "briefd_last_sync_timestamp_seconds",
                    "Last sync or index run (Unix time).",
                    at,
                    labels,
                )
            )
        out.append(
            Gauge(
                "briefd_last_sync_ok",
                "1 when the last sync or index run succeeded.",
                0.0 if source["last_error"] else 1.0,
                labels,
            )
        )
    return out


def _num(value: Any) -> float:
    return float(value or 0)


def _timestamp(value: Any) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        return None
