"""The hook's time budget (I8): when an embedding service takes the query, or the generic
probes of a calibration not stored yet, and never answers, `briefd recall` answering
in-process answers by keywords before the agent ends it (`briefd init` gives it 10 s).
The real hook process, a real fake Ollama on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.settings import Settings
from tests.conftest import WriteFiles
from tests.embeddings.fakehttp import FakeServer, Reply, Request, fake_server
from tests.embeddings.test_remote_index import DOCS, Hanging, Resizable, ollama_settings
from tests.hook.conftest import RunHook, hook_json
from tests.hook.test_daemon import DAEMON, daemons, serving, wait_for

PROMPT = "How many times are failed card payments retried?"
BUDGET = 3.0  # recall.budget_seconds in these tests (the default is 8 s): a loaded CI machine
# spends over a second on the hook's start-up before the service is asked
MARGIN = 1.5  # the answer's rendering, the process's exit, a busy machine


@pytest.fixture
def ollama(settings: Settings, write_files: WriteFiles) -> Iterator[tuple[FakeServer, Resizable]]:
    """The knowledge indexed through a fake Ollama (its generic calibration stored)."""
    answer = Resizable()
    write_files(DOCS)
    with fake_server() as server:
        server.on("POST", "/api/embed", answer)
        with Briefd(ollama_settings(settings, server.url)) as api:
            assert api.index().vectors_missing == 0
        yield server, answer


def ollama_env(url: str) -> dict[str, str | None]:
    """The hook's environment: in-process (no daemon), the fake Ollama as the index's model,
    its query waited for 10 s (raised, as for a slow service), the hook's budget 3 s."""
    return {
        "BRIEFD_EMBEDDINGS__ENABLED": "true",
        "BRIEFD_EMBEDDINGS__ADAPTER": "ollama",
        "BRIEFD_EMBEDDINGS__MODEL": "nomic-embed-text",
        "BRIEFD_EMBEDDINGS__BASE_URL": url,
        "BRIEFD_EMBEDDINGS__TIMEOUT_SECONDS": "20",
        "BRIEFD_EMBEDDINGS__QUERY_TIMEOUT_SECONDS": "10",
        "BRIEFD_RECALL__BUDGET_SECONDS": str(BUDGET),
    }


def test_a_hanging_embedding_service_is_waited_for_only_within_the_hook_budget(
    ollama: tuple[FakeServer, Resizable], run_hook: RunHook
) -> None:
    """No server answering, no daemon: the in-process answer's query to an embedding service
    that hangs waited embeddings.query_timeout_seconds (5 s by default, more when raised for
    a slow service) on top of the hook's start-up, the model's imports and the waits before,
    with nothing bounding the sum by the client's 10 s. The query now waits only what is left
    of the hook's budget, and keywords answer."""
    server, _ = ollama
    hanging = Hanging()
    server.on("POST", "/api/embed", hanging)
    env = ollama_env(server.url)
    try:
        started = time.monotonic()
        done = run_hook(payload=hook_json(PROMPT), env=env)
        took = time.monotonic() - started
    finally:
        hanging.released.set()
    assert done.code == 0 and "Failed card payments are retried" in done.stdout
    assert "answered by keywords only (bm25): the embedding model failed (Ollama at " in (
        done.stderr
    )
    assert budget_said(done.stderr)
    assert took < BUDGET + MARGIN


def budget_said(stderr: str) -> bool:
    """stderr says the hook's budget bounded the wait: what was left of it, or (a loaded
    machine's start-up having spent it all) that the service was not asked at all."""
    return "left of the prompt hook's time (recall.budget_seconds)" in stderr or (
        "was not asked: the prompt hook's time (recall.budget_seconds) was up" in stderr
    )


class ProbesHang:
    """An Ollama answering one-text requests (queries) at once and hanging on the generic
    probes' batch until released."""

    def __init__(self, answer: Resizable) -> None:
        self.answer = answer
        self.hanging = Hanging()

    def __call__(self, request: Request) -> Reply:
        if len(request.json()["input"]) > 1:
            return self.hanging(request)
        return self.answer(request)


def test_generic_probes_not_stored_are_not_waited_for_past_the_hook_budget(
    ollama: tuple[FakeServer, Resizable], run_hook: RunHook, settings: Settings
) -> None:
    """A recall answered in-process embeds the generic probes when their calibration is not
    stored (a busy index when it was saved, an upgrade's new probes): with the service hanging
    on them, the hook waited embeddings.timeout_seconds (60 s by default) and the client
    ended it. Now they get what is left of the hook's budget; keywords answer, saying why."""
    server, answer = ollama
    with sqlite3.connect(settings.db) as conn:
        assert conn.execute("DELETE FROM calibration WHERE model LIKE '%|generic'").rowcount == 1
    probes = ProbesHang(answer)
    server.on("POST", "/api/embed", probes)
    try:
        started = time.monotonic()
        done = run_hook(payload=hook_json(PROMPT), env=ollama_env(server.url))
        took = time.monotonic() - started
    finally:
        probes.hanging.released.set()
    assert done.code == 0 and "Failed card payments are retried" in done.stdout
    assert budget_said(done.stderr)
    if "was not asked" not in done.stderr:  # asked: the probes were what it waited for
        assert "(embedding recall's generic probes, whose calibration is not stored yet)" in (
            done.stderr
        )
    assert took < BUDGET + MARGIN


class HangsWhenTold(Resizable):
    """An Ollama answering until ``hang`` is set, then holding every request until released."""

    def __init__(self) -> None:
        super().__init__()
        self.hanging = Hanging()
        self.hang = False

    def __call__(self, request: Request) -> Reply:
        return self.hanging(request) if self.hang else super().__call__(request)


def test_the_daemon_answers_by_keywords_before_the_hook_stops_waiting_for_it(
    settings: Settings, write_files: WriteFiles, run_hook: RunHook, tmp_path: Path
) -> None:
    """With the recall daemon (the default when no server answers), an embedding service that
    stopped answering held the daemon's query embedding 5 s (query_timeout_seconds), but the
    hook waits 1 s for the daemon: the prompt got nothing and 'the recall daemon … did not
    answer within 1 s' — again on every prompt more than 30 s after the last timeout, as agent
    turns are. The daemon now waits for the service only within that second and answers by
    keywords, saying why."""
    answer = HangsWhenTold()
    write_files(DOCS)
    with fake_server() as server:
        server.on("POST", "/api/embed", answer)
        with Briefd(ollama_settings(settings, server.url)) as api:
            assert api.index().vectors_missing == 0
        env = ollama_env(server.url) | DAEMON
        try:
            first = run_hook("--json", payload=hook_json(PROMPT), env=env)  # starts the daemon
            # answered here by keywords, tiered as the hybrid daemon's answers are: on two
            # sections no words are unlikely together by chance, so nothing (see test_first_prompt)
            assert (first.code, json.loads(first.stdout)["confidence"]) == (0, "none")
            wait_for(lambda: serving(settings.db.resolve()))
            answer.hang = True
            started = time.monotonic()
            done = run_hook("--json", payload=hook_json(PROMPT, "s-2"), env=env)
            took = time.monotonic() - started
        finally:
            answer.hanging.released.set()
            for pid in daemons(tmp_path):
                os.kill(pid, signal.SIGKILL)
    assert done.code == 0 and done.stderr == "", done.stderr
    result = json.loads(done.stdout)
    assert (result["via"], result["mode"]) == ("daemon", "bm25")
    assert "Failed card payments are retried" in result["knowledge"]
    (said,) = result["notes"]
    assert "the 1 s a prompt hook waits for the recall daemon" in said
    assert took < 1.0 + MARGIN
