"""``briefd serve`` and ``briefd mcp``: index the configured source (incrementally), then serve
REST, MCP, metrics, the dashboard and the setup page with uvicorn — or the MCP tools alone over
stdio."""

from __future__ import annotations

import logging
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import typer

from briefd.api import Briefd
from briefd.cli import interrupt
from briefd.cli.index import ProgressLog
from briefd.cli.installation import client_briefd, this_briefd
from briefd.cli.one_source import OneSource
from briefd.cli.output import console, errors, reported_errors
from briefd.cli.tuned import tuned_settings
from briefd.errors import BriefdError, ConfigError, EmbeddingError, SourceError, StoreError
from briefd.settings import Settings, with_overrides
from briefd.text import counted

if TYPE_CHECKING:  # the service (prometheus, uvicorn) loads only for the commands that serve
    import uvicorn

    from briefd.embeddings.base import Embedder
    from briefd.service.metrics import Metrics

RETRY_MODEL_S = 30.0  # a model that failed to load at start is tried again by a query this often
NOTHING_TO_SERVE = (
    "nothing to serve: no knowledge source is configured and {db} holds no index. "
    "To try briefd on its bundled example, run `briefd demo`. To serve your team's knowledge, "
    "pass --source DIR (Markdown under domain/, conventions/, projects/<name>/), set "
    "BRIEFD_SOURCE to a directory or a git URL, or put `source: …` in briefd.yaml"
)

# an index built with `briefd index --source DIR`, served with no source: never updated
UNSOURCED = (
    "  no knowledge source configured: serving {db} as it was last indexed (edits are not "
    "read); pass --source DIR or put `source: …` in briefd.yaml"
)

NOTHING_OVER_STDIO = (
    "nothing to serve: no knowledge source is configured and {db} holds no index. To try "
    "briefd on its bundled example from a client that spawns `briefd mcp`, run `{briefd} demo` "
    "once (it indexes the example into {demo}; stop it once it says `indexed …`) and give the "
    "client `{client} --db {demo} mcp --no-index` (briefd by its full path: a desktop client "
    "does not get your shell's PATH). To serve your team's knowledge, pass --source "
    "DIR (Markdown under domain/, conventions/, projects/<name>/), set BRIEFD_SOURCE to a "
    "directory or a git URL, or put `source: …` in briefd.yaml"
)

INDEX_WRITERS = ("briefd-index", "briefd-sync", "briefd-rebuild")  # threads that write the index
SIGNAL_POLL_S = 0.1  # a wait's slice: a signal another thread receives wakes no lock wait
HOST = typer.Option(
    None,
    "--host",
    help=(
        "Address to bind (default: serve.host, 127.0.0.1 unless set; another address needs "
        "BRIEFD_API_TOKEN; an IPv6 address with or without brackets)."
    ),
)
PORT = typer.Option(
    None, "--port", min=1, max=65535, help="Port (default: serve.port, 8484 unless set)."
)
SOURCE = typer.Option(
    None, "--source", help="Knowledge directory (default: the configured source)."
)
NO_INDEX = typer.Option(
    False, "--no-index", help="Serve the index as it is, without updating it first."
)
OPTIONS = "command-line option"  # where --host / --port come from, in their errors
TUNED = typer.Option(
    None, "--config", help="Tuned recall settings from `briefd tune` laid over the settings."
)


def register(app: typer.Typer) -> None:
    app.command("serve", cls=OneSource)(serve_command)
    app.command("mcp", cls=OneSource)(mcp_command)


def serve_command(
    ctx: typer.Context,
    host: str | None = HOST,
    port: int | None = PORT,
    source: Path | None = SOURCE,
    no_index: bool = NO_INDEX,
    tuned: Path | None = TUNED,
) -> None:
    """Serve MCP at /mcp, REST at /api, /metrics, the dashboard at / and /setup."""
    serve(_settings(ctx, source, tuned), host, port, no_index)


def mcp_command(
    ctx: typer.Context,
    source: Path | None = SOURCE,
    no_index: bool = NO_INDEX,
    tuned: Path | None = TUNED,
) -> None:
    """Serve the MCP tools over stdio, for clients that spawn their MCP servers."""
    import anyio

    from briefd.service.stdio import serve_stdio

    settings = _settings(ctx, source, tuned)
    with reported_errors():
        if _nothing_to_serve(settings):  # `briefd demo` serves HTTP: say how stdio gets there
            raise ConfigError(_nothing_over_stdio(settings))
        api, metrics, building, left = prepared_beside(
            settings, no_index, settings.serve.index_wait_seconds, "answering MCP"
        )
    _log_to_stderr()  # stdout is the protocol; the client keeps stderr in its log file
    try:
        anyio.run(serve_stdio, api, metrics, building, left)
    except KeyboardInterrupt:
        pass
    finally:
        api.close()
    leave_unfinished(0)  # the client closed stdin


def _nothing_over_stdio(settings: Settings) -> str:
    """How a client that spawns ``briefd mcp`` gets to the example, with this installation's
    briefd as a terminal runs it and as the client's configuration must name it."""
    quoted = shlex.quote(str(demo_db()))  # the index in full: the client chose the folder
    return NOTHING_OVER_STDIO.format(
        db=settings.db.absolute(), demo=quoted, briefd=this_briefd(), client=client_briefd()
    )


def _settings(ctx: typer.Context, source: Path | None, tuned: Path | None) -> Settings:
    with reported_errors():
        settings = tuned_settings(ctx.obj.settings(source=source), tuned, ctx.info_name)
    return settings


def serve(settings: Settings, host: str | None, port: int | None, no_index: bool) -> None:
    """Update the index (unless ``no_index``), then serve it over HTTP until stopped; an
    update that takes longer than ``serve.index_wait_seconds`` goes on beside the server."""
    import uvicorn

    from briefd.service import ServiceConfig, create_app
    from briefd.service.bind import bind
    from briefd.service.config import check_bind
    from briefd.service.listener import BoundedH11Protocol

    with reported_errors():  # --host / --port checked as the settings are, token or not
        flags = with_overrides(settings, {"serve.host": host, "serve.port": port}, OPTIONS)
        config = ServiceConfig.from_settings(flags.serve)
        check_bind(config)
        # --host / --port are the settings from here on: the replica's default name is its port
        settings = with_overrides(settings, {"serve.host": config.host, "serve.port": config.port})
        sock = bind(config)
        interrupt.watch_stop()
        try:
            api, metrics, building, left = prepared_beside(
                settings, no_index, settings.serve.index_wait_seconds, "serving"
            )
            app = create_app(api, config, metrics, building, left)
        except BaseException:
            sock.close()
            raise
        finally:
            interrupt.unwatch_stop()
    url = f"http://{config.host if ':' not in config.host else f'[{config.host}]'}:{config.port}"
    console.print(
        f"briefd serving on {url}  (dashboard {url}/, MCP {url}/mcp, setup {url}/setup)",
        markup=False,
    )
    if config.token is None:
        console.print("  no BRIEFD_API_TOKEN set: open to this machine only", markup=False)
    if not no_index and settings.source is None and not settings.sync.remote:
        console.print(UNSOURCED.format(db=settings.db), markup=False, soft_wrap=True)
    _log_to_stderr()
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=config.host,
            port=config.port,
            log_level="warning",
            timeout_graceful_shutdown=5,
            http=BoundedH11Protocol,
        )
    )
    status: int | None = None  # a stop asked for: 0 (SIGTERM), 130 (Ctrl-C)
    try:
        with _stopped_by_sigterm(server):
            server.run(sockets=[sock])
        status = 0
    except KeyboardInterrupt:  # Ctrl-C, once uvicorn has shut down: exit 130, said by nothing
        interrupt.stopped()
        status = 130
        raise
    finally:
        sock.close()
        api.close()
        if status is not None:
            leave_unfinished(status)


@contextmanager
def _stopped_by_sigterm(server: uvicorn.Server) -> Iterator[None]:
    """SIGTERM (``docker stop``, systemd, Kubernetes) stops ``server`` and returns, so the
    index and the shared state are closed and the process exits 0. uvicorn raises the signal
    again once it has shut down, to the handler it found: the default one killed the process
    there (exit 143, -15), ``api.close()`` never ran and a supervisor saw a failure."""

    def stop(signum: int, frame: FrameType | None) -> None:
        server.should_exit = True  # before uvicorn's own handler is in: stops once it starts

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def leave_unfinished(status: int, running: bool = False) -> None:
    """Exit now with ``status`` when an index run still goes on beside the stopped server (a
    first index, a sync or a rebuild the shutdown's wait gave up on): the interpreter's normal
    exit tears down the native runtimes that thread is inside (OpenVINO's embedding threads),
    and the process died of SIGABRT, "terminate called without an active exception". The
    counters and query log are saved by then, the index keeps its last committed state, and
    the git commands still running end with the process group of each. ``running``: the
    caller knows an index run goes on, which a thread's is_alive() no longer says once Ctrl-C
    interrupted a join of it."""
    writing = any(t.name in INDEX_WRITERS and t.is_alive() for t in threading.enumerate())
    if not (running or writing):
        return
    from briefd.sources import git

    git.end_running()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _log_to_stderr() -> None:
    """The server's own log (warm-up and reload times, warnings) on stderr, timestamped; the
    libraries' warnings the same way (the MCP SDK set a rich handler on the root logger, which
    wraps a line at 80 columns in a container's log). The connection pool's retries stay out:
    briefd says once that the shared state is unreachable, and once that it answers again."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    root = logging.getLogger("briefd")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False
    logging.getLogger().handlers[:] = [handler]
    logging.getLogger().setLevel(logging.WARNING)
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)


def prepared_beside(
    settings: Settings, no_index: bool, wait: float, meanwhile: str
) -> tuple[Briefd, Metrics, Callable[[], bool], Callable[[], float | None]]:
    """The API for a server: its embedder counted into fresh metrics, and its index brought
    up to date with the source (a git URL: clone or fetch first) unless ``no_index``, given
    ``wait`` seconds: an MCP client gives up on a server that does not answer its handshake,
    a browser on a page that does not load, and a first index takes about a minute per 300
    sections. A longer update goes on, on a connection of its own, while the server answers
    (``meanwhile`` says how) from the index as it was; the callable says whether a first
    index (none before) still runs, which requests say instead of answering from an index
    half written, and the other the seconds it says it has left (a stop does not wait for a
    first index that has more left than the stop's wait). Messages go to stderr: for
    ``briefd mcp``, stdout is the protocol."""
    api, metrics = _opened(settings, no_index)
    if no_index:
        return api, metrics, lambda: False, lambda: None
    first = not settings.db.is_file()
    worker = Briefd(settings, embedder=api.embedder)
    failed: list[BaseException] = []
    serving: list[bool] = []  # the protocol is up: a failure from then on is only said
    ended: list[bool] = []  # the update is over (its thread may still be unwinding)
    lock = threading.Lock()

    def update() -> None:
        try:
            _brought_up_to_date(worker, settings, progress)
        except BaseException as exc:
            with lock:
                failed.append(exc)
                if serving:
                    errors.print(f"error: {exc}", markup=False, soft_wrap=True)
        finally:
            worker.close()
            ended.append(True)

    progress = ProgressLog(_said_on_stderr, waiting=SERVING_AFTER)
    thread = threading.Thread(target=update, name="briefd-index", daemon=True)
    thread.start()
    try:
        _joined(thread, wait)
    except KeyboardInterrupt:  # Ctrl-C (or SIGTERM) before the wait is over
        api.close()
        interrupt.say()
        # not thread.is_alive(): a join that Ctrl-C interrupts marks a running thread stopped
        leave_unfinished(130, running=not ended)
        raise
    with lock:
        if failed:
            api.close()
            raise failed[0]
        serving.append(True)
    if thread.is_alive():
        errors.print(
            f"still indexing after {wait:.0f} s: {meanwhile} meanwhile from the index as it "
            "was (none yet: requests are told the index is being built)",
            markup=False,
            soft_wrap=True,
        )

    def building() -> bool:
        return first and thread.is_alive()

    return api, metrics, building, lambda: progress.left() if building() else None


def _joined(thread: threading.Thread, seconds: float) -> None:
    """Wait for ``thread`` to end, ``seconds`` at most, in slices: the kernel hands SIGTERM to
    any thread of the process, and one the index thread (or its git) receives sets Python's
    flag without waking the main thread's lock wait, so one long join answered
    ``docker stop`` only when it ended, 20 s later, after docker's SIGKILL."""
    deadline = time.monotonic() + seconds
    while thread.is_alive() and (left := deadline - time.monotonic()) > 0:
        thread.join(min(left, SIGNAL_POLL_S))


def demo_db() -> Path:
    """``$XDG_DATA_HOME/briefd/demo/briefd.db`` (default ``~/.local/share/…``), where
    ``briefd demo`` indexes the example: never mixed with a project's own index."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "briefd" / "demo" / "briefd.db"


def _nothing_to_serve(settings: Settings) -> bool:
    """No source, no remote to clone and no index: a server would answer nothing."""
    return settings.source is None and not settings.sync.remote and not settings.db.is_file()


def _opened(settings: Settings, no_index: bool) -> tuple[Briefd, Metrics]:
    from briefd.service.metrics import CountingEmbedder, Metrics

    if _nothing_to_serve(settings):
        raise ConfigError(NOTHING_TO_SERVE.format(db=settings.db))
    metrics = Metrics()
    embedder = _loaded_or_deferred(settings)
    counted = CountingEmbedder(embedder, metrics) if embedder is not None else None
    api = Briefd(settings, embedder=counted)
    if no_index:  # opened now: a broken index is one line here, not a traceback at start-up
        try:
            api.counters()
        except BaseException:
            api.close()
            raise
    return api, metrics


def _loaded_or_deferred(settings: Settings) -> Embedder | None:
    """The model, loaded now; when loading fails though it is installed (its ONNX graph
    cannot be stored on a full disk), the index is served by keywords meanwhile, said once
    here and in each search's warning, and a query tries to load it again every
    :data:`RETRY_MODEL_S`. A model not installed, or its weights missing, still stops the
    server (DeferredEmbedder refuses them too)."""
    from briefd.embeddings.registry import create_embedder

    try:
        return create_embedder(settings)
    except EmbeddingError as exc:
        if settings.embeddings.adapter != "local":
            raise
        from briefd.embeddings.deferred import DeferredEmbedder
        from briefd.embeddings.registry import get_model

        config = settings.embeddings  # each query tries again, at most every RETRY_MODEL_S
        deferred = DeferredEmbedder(get_model(config.model), config, RETRY_MODEL_S)
        errors.print(
            f"warning: the embedding model failed to load ({exc}); searches are by keywords "
            f"(bm25) until it loads, which a query tries again every {RETRY_MODEL_S:.0f} s",
            markup=False,
            soft_wrap=True,
        )
        return deferred


def _brought_up_to_date(api: Briefd, settings: Settings, progress: ProgressLog) -> None:
    if settings.sync.remote:  # a git URL: clone or fetch, then reindex
        from briefd.cli.sync import startup_sync

        startup_sync(api)
    elif settings.source is not None:
        _update_index(api, settings, progress)


def _update_index(api: Briefd, settings: Settings, progress: ProgressLog) -> None:
    """Bring the index of a directory source up to date before serving. A source gone empty
    or missing, or an index that cannot be written now (a full disk, another writer holding
    it), is a warning when there is an index to serve as it was; else the error."""
    existed = settings.db.is_file()
    if not existed:
        slow = " (embedding every section: about a minute per 300 sections on 2 cores)"
        errors.print(
            f"indexing {settings.source} into {settings.db} for the first time"
            + (slow if api.embedder is not None else ""),  # BM25 alone: a second or two
            markup=False,
            soft_wrap=True,
        )
    try:  # each stage's progress every few seconds, as `briefd index` logs it to a pipe
        report = api.index(progress=progress)
    except (SourceError, StoreError) as exc:
        if not existed or not _readable(api):
            api.close()
            raise
        errors.print(f"warning: {exc}; serving the index as it was", markup=False, soft_wrap=True)
        return
    errors.print(
        f"indexed {report.source}: {counted(report.documents, 'document')}, "
        f"{counted(report.chunks, 'section')} ({len(report.added) + len(report.changed)} changed) "
        f"in {report.seconds:.1f}s",
        markup=False,
        soft_wrap=True,
    )
    if report.documents == 0:
        from briefd.sources.layout import nothing_indexed

        errors.print(f"warning: {nothing_indexed(report, settings)}", markup=False, soft_wrap=True)


SERVING_AFTER = ": serving starts after it"  # said of another run that holds the index


def _said_on_stderr(line: str) -> None:
    errors.print(line, markup=False, soft_wrap=True)


def _readable(api: Briefd) -> bool:
    """The index answers reads (what a server needs), whatever stopped a write to it."""
    try:
        api.counters()
    except BriefdError:
        return False
    return True
