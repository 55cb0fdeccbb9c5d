"""The test suite's port picker: two pytest-xdist workers never share a port."""

from __future__ import annotations

import socket

import pytest

from tests import ports


def test_each_worker_picks_bindable_ports_from_its_own_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # workers 6 and 7: blocks no worker of `make test` (two) uses, so no server of theirs is hit
    picked = {}
    for worker in ("gw6", "gw7"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        picked[worker] = {ports.free_port() for _ in range(20)}
    six, seven = ports.BASE + 6 * ports.BLOCK, ports.BASE + 7 * ports.BLOCK
    assert all(six <= p < seven for p in picked["gw6"])
    assert all(seven <= p < seven + ports.BLOCK for p in picked["gw7"])
    assert max(picked["gw7"]) < ports._ephemeral_low()  # never where bind(0) lands
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", min(picked["gw7"])))  # nothing listens there


def test_a_port_in_use_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw5")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", ports.free_port()))
        busy.listen(1)
        taken = busy.getsockname()[1]
        assert taken not in {ports.free_port() for _ in range(ports.BLOCK - 1)}
