"""``python -S tests/warm_exec.py SOCKET ARGS…``: a ``briefd ARGS…`` that a third party spawns
(the MCP SDK's stdio client), answered by a warm child of :mod:`tests.zygote`.

Standard library only and no ``site`` (it starts in ~15 ms): it hands its own stdin, stdout
and stderr, folder and environment to a child of the warm process, passes on the signals it
gets, and ends with the child's status. Where its environment differs from the warm process's
in what is read at start-up, it becomes a fresh ``python -m briefd`` instead."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from pathlib import Path

RUNTIME_KEYS = ("BRIEFD_", "HOME", "XDG_", "GIT_", "PYTEST_")  # as tests/zygote.py reads them
PASSED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)


def main() -> None:
    address, args = sys.argv[1], sys.argv[2:]
    startup = {k: v for k, v in os.environ.items() if not k.startswith(RUNTIME_KEYS)}
    if json.loads(Path(address + ".env").read_text(encoding="utf-8")) != startup:
        os.execv(sys.executable, [sys.executable, "-m", "briefd", *args])
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(address)
    request = {"args": args, "cwd": str(Path.cwd()), "env": dict(os.environ), "session": False}
    body = json.dumps(request).encode()
    socket.send_fds(conn, [len(body).to_bytes(4, "big") + body], [0, 1, 2])
    pid = int(_line(conn))
    for signum in PASSED_ON:
        signal.signal(signum, lambda number, _: os.kill(pid, number))
    code = int(_line(conn))
    if code < 0:  # killed by a signal: so is this process
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def _line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(64)
        if not chunk:
            sys.exit(1)
        data += chunk
    return data


if __name__ == "__main__":
    main()
