"""Uptime is a duration: measured on the monotonic clock, not the wall clock."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient


def test_a_clock_set_back_does_not_make_the_uptime_negative(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """I2, I4: /api/health's uptime_seconds (and briefd_uptime_seconds) was the wall clock
    now minus the wall clock at start: an NTP step or a clock set back an hour made it
    -3600, and a monitor alerting on a restart (uptime going down) fired."""
    wall = time.time
    monkeypatch.setattr(time, "time", lambda: wall() - 3600)  # the clock set back an hour
    health = client.get("/api/health").json()
    assert 0 <= health["uptime_seconds"] < 600, health
    metrics = client.get("/metrics").text
    line = next(x for x in metrics.splitlines() if x.startswith("briefd_uptime_seconds "))
    assert 0 <= float(line.split()[1]) < 600, line
