"""Loopback ports for tests that start a server on a port they pick, or need one where nothing
listens. ``bind(0)`` would hand out a port from the kernel's ephemeral range, which any other
socket may take between the pick and the use — another pytest-xdist worker's server, or a
connection's source port. Each worker (``PYTEST_XDIST_WORKER`` gw0, gw1, …) takes its ports
from its own block below that range instead, so a port picked here is never handed to another
worker or to a socket bound to 0."""

from __future__ import annotations

import itertools
import os
import random
import socket
from pathlib import Path

BASE = 20_000
BLOCK = 1_500  # ports per worker
_NEXT = itertools.count(random.randrange(BLOCK))  # a fresh start per run: no TIME_WAIT reuse


def _worker() -> int:
    digits = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    return int(digits) if digits.isdigit() else 0


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default; macOS starts at 49152


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on, from this worker's block."""
    start = BASE + _worker() * BLOCK
    if start + BLOCK > _ephemeral_low():  # the block would overlap the ephemeral range
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])
    for _ in range(BLOCK):
        port = start + next(_NEXT) % BLOCK
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:  # in use, or in TIME_WAIT from an earlier test
                continue
            return port
    raise RuntimeError(f"no free port in 127.0.0.1:{start}-{start + BLOCK - 1}")
