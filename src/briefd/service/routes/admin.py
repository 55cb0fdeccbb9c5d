"""The dashboard's admin actions (I5): rebuild the index in the background, reset the
persisted counters. (Triggering a git sync lives with the sync router.)"""

from __future__ import annotations

import threading
from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, status

from briefd.errors import BriefdError, BusyError
from briefd.service.deps import BUSY, ERRORS, State
from briefd.service.opsout import RebuildOut, ResetOut, answers
from briefd.service.state import Job, ServiceState
from briefd.store.activity import now_iso

router = APIRouter(prefix="/api/admin", tags=["admin"])


@router.post(
    "/rebuild",
    name="admin_rebuild",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=None,
    responses=answers(202, RebuildOut, BUSY),
)
def rebuild(state: State) -> dict[str, Any]:
    """Rebuild the index from the knowledge source on a background thread; searches keep
    answering from the previous index until the rebuild commits. Poll ``/api/stats`` (jobs)."""
    job = state.call("rest", "admin_rebuild", lambda: start_rebuild(state))
    return {"job": vars(job)}


@router.post("/reset-counters", response_model=None, responses=answers(200, ResetOut, ERRORS))
def reset_counters(state: State) -> dict[str, Any]:
    """Zero the request, latency, token, cache and embedding counters (here and in SQLite)."""
    state.reset_counters()
    return {"reset": True, "at": now_iso()}


def start_rebuild(state: ServiceState) -> Job:
    current = state.jobs.get("rebuild")
    if current is not None and current.running:
        raise BusyError(
            f"a rebuild started at {current.started_at} is still running; wait for it to finish"
        )
    root = state.source_root()
    job = Job("rebuild", now_iso())
    state.jobs["rebuild"] = job

    def run() -> None:
        try:
            report = state.api.rebuild(root)
            job.summary = {k: v for k, v in asdict(report).items() if k in _SUMMARY_KEYS}
        except BriefdError as exc:
            job.error = str(exc)
        except Exception as exc:  # a thread must not die silently
            job.error = f"rebuild failed: {exc!r}"
        finally:
            job.finished_at = now_iso()

    threading.Thread(target=run, name="briefd-rebuild", daemon=True).start()
    return job


_SUMMARY_KEYS = ("source", "documents", "chunks", "seconds", "embedded", "fingerprint")
