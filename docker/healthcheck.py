"""HEALTHCHECK of the briefd image: ``GET /api/health`` on the port the server listens on
answers 200 with an index to serve (not ``building`` its first one: a first index of a large
source outlasts the server's wait before it listens) — the ``--port`` of the server's command
line (``docker run … serve --port 9000``) when it has one, else the configured ``serve.port``."""

import json
import sys
import urllib.request
from pathlib import Path

SERVER_CMDLINE = Path("/proc/1/cmdline")  # the entrypoint execs briefd: it is PID 1


def served_port(args: list[str], configured: int) -> int:
    """The ``--port N`` / ``--port=N`` of a ``briefd serve`` command line, else ``configured``."""
    for i, arg in enumerate(args):
        value = args[i + 1] if arg == "--port" and i + 1 < len(args) else None
        if arg.startswith("--port="):
            value = arg.removeprefix("--port=")
        if value is not None and value.isdigit():
            return int(value)
    return configured


def main() -> int:
    from briefd.settings import load_settings

    try:
        args = SERVER_CMDLINE.read_bytes().decode("utf-8", "replace").split("\0")
    except OSError:
        args = []
    port = served_port(args, load_settings().serve.port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=4) as answer:
            status = json.loads(answer.read()).get("status") if answer.status == 200 else None
    except OSError as exc:
        print(f"briefd is not answering on port {port}: {exc}")
        return 1
    except ValueError as exc:  # not briefd's JSON on that port
        print(f"port {port} does not answer as briefd does: {exc}")
        return 1
    if status == "building":
        print("briefd is building its first index: it serves once that is done")
    return 0 if status not in (None, "building") else 1


if __name__ == "__main__":
    sys.exit(main())
