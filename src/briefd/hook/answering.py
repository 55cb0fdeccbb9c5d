"""The recall daemon's index and answers (I10): :class:`Daemon` holds one index, its API and
the bookkeeping ``/status`` shows; it answers a prompt in the server's formats within the
hook's wait (by keywords when the model would miss it, :func:`answering_within`), keeps the
index warm between prompts, and writes the query log. The socket server and the process around
it are :mod:`briefd.hook.daemon`'s."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from briefd.api import Briefd
from briefd.embeddings.remote import RemoteEmbedder
from briefd.errors import BriefdError
from briefd.hook import discover
from briefd.hook.codewatch import CodeWatch
from briefd.hook.place import DaemonFiles, config_key, variables_key
from briefd.hook.render import hook_output
from briefd.hook.starter import ASK_TIMEOUT
from briefd.recall import keywords
from briefd.recall.engine import (
    KEYWORDS_ONLY,
    MAX_PROMPT_CHARS,
    RecallRequest,
    RecallResult,
    client_command,
    searched,
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
POLL_SECONDS = 1.0  # how often the idle, identity and stop checks run between prompts
MAX_PENDING = 1000  # prompts kept for the query log while the index refuses them
STOP_WAIT_SECONDS = 3.0  # at the stop, for an index run writing: inside the 5 s `--stop` gives
BUSY_RETRY_SECONDS = 0.25
WARM_UP = "warm up the recall index"
DAEMON_WAIT = f"the {ASK_TIMEOUT:g} s a prompt hook waits for the recall daemon"

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
                    prefetch(self.api.semantic, searched(prompt))
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
            "started": iso(self.started),
            "uptime_s": round(time.monotonic() - self._since, 1),
            "idle_s": round(time.monotonic() - self.last, 1),
            "idle_minutes": self.idle_seconds / 60,
            "requests": self.requests,
            "rss_mb": rss_mb(),
        }


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


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")
