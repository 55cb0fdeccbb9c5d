"""The first prompt (I8, I10): no daemon serves yet, so the real ``briefd recall`` answers it in
its own process by keywords while the daemon starts. Where the daemon will answer hybrid (with
confidence tiers), that stand-in is tiered on its lexical evidence alone. Each test holds the
daemon's lock, as a hook starting one does, so every prompt takes the first-prompt path and no
daemon is spawned."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.hook.place import daemon_files
from briefd.settings import Settings
from tests.conftest import EXAMPLE
from tests.hook.conftest import RunHook, hook_json
from tests.recall.conftest import RELEVANT

DAEMON = {"BRIEFD_RECALL__DAEMON": "true"}
GENERIC = "the tests are failing on main"
SPECIFIC = "which header carries the HMAC signature of a webhook and how is the secret rotated"
CI = "the ci job is failing on the lint step, can you fix it"


@pytest.fixture(scope="module")
def embedded_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example knowledge indexed with vectors (the fake embedder's), once per module."""
    from briefd.settings import load_settings

    base = tmp_path_factory.mktemp("embedded-example")
    template = load_settings(
        config=None,
        env={},
        overrides={"db": str(base / "index.db"), "embeddings.enabled": False},
    )
    with Briefd(template, embedder=FakeEmbedder()) as api:
        api.index(EXAMPLE)
    return template.db


@pytest.fixture
def starting(settings: Settings, hook_env: dict[str, str]) -> Iterator[Path]:
    """The test's index, its daemon being started (its lock held): prompts are answered here."""
    lock = os.open(daemon_files(str(settings.db.resolve()), hook_env).lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        yield settings.db.resolve()
    finally:
        os.close(lock)


def first(run_hook: RunHook, prompt: str, session: str, embeddings: bool) -> dict[str, object]:
    env = {**DAEMON, "BRIEFD_EMBEDDINGS__ENABLED": "true" if embeddings else "false"}
    done = run_hook("--json", payload=hook_json(prompt, session), env=env)
    assert done.code == 0 and done.stderr == "", done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    assert (result["via"], result["mode"]) == ("in-process", "bm25")
    return result


def test_a_generic_first_prompt_injects_nothing_where_the_daemon_answers_hybrid(
    settings: Settings, embedded_example: Path, starting: Path, run_hook: RunHook
) -> None:
    """The first prompt of a session put every section the lexical gate kept in at full size:
    "the tests are failing on main" got five sections (~1,200 tokens) of the example knowledge,
    where the daemon's hybrid tiers inject nothing. It is now tiered on how likely the best
    section's matched words meet by chance; a specific question still gets its sections."""
    shutil.copyfile(embedded_example, settings.db)
    generic = first(run_hook, GENERIC, "s-1", embeddings=True)
    assert (generic["sections"], generic["knowledge"], generic["confidence"]) == ([], "", "none")
    assert str(generic["reason"]).startswith("answered by keywords while the recall daemon starts")
    specific = first(run_hook, SPECIFIC, "s-2", embeddings=True)
    assert specific["confidence"] == "strong" and len(specific["sections"]) > 1  # type: ignore[arg-type]
    assert "Kestrel-Signature" in str(specific["knowledge"])


def test_a_first_prompt_of_some_evidence_gets_one_short_section(
    settings: Settings, embedded_example: Path, starting: Path, run_hook: RunHook
) -> None:
    """Words that meet by chance in under 5% of such indexes, not under 0.1% (ci, job, lint
    and step in one section): at most one short section (recall.weak_tokens), as the daemon's
    weak tier gives — not the five sections (~1,340 tokens) it got."""
    shutil.copyfile(embedded_example, settings.db)
    weak = first(run_hook, CI, "s-1", embeddings=True)
    given = [s for s in weak["sections"] if not s.get("pointer")]  # type: ignore[union-attr]
    assert (weak["confidence"], len(given)) == ("weak", 1)
    assert 0 < int(str(weak["tokens"])) <= 300
    # a question whose words are common in this knowledge: its best section, short
    question = first(run_hook, RELEVANT, "s-2", embeddings=True)
    given = [s for s in question["sections"] if not s.get("pointer")]  # type: ignore[union-attr]
    assert (question["confidence"], len(given)) == ("weak", 1)
    assert "Merchants have 7 calendar days" in str(question["knowledge"])


def test_without_embeddings_the_first_prompt_answers_as_the_daemon_will(
    settings: Settings, embedded_example: Path, starting: Path, run_hook: RunHook
) -> None:
    """Embeddings off: the daemon answers by keywords too, tiered on the index's keyword levels
    (recall.keywords); the first prompt as well. It was answered untiered: five sections of
    the example knowledge for "the tests are failing on main"."""
    shutil.copyfile(embedded_example, settings.db)
    keywords = first(run_hook, GENERIC, "s-1", embeddings=False)
    assert (keywords["confidence"], keywords["sections"], keywords["knowledge"]) == ("none", [], "")
    assert str(keywords["reason"]).startswith("answered by keywords: ")
    specific = first(run_hook, SPECIFIC, "s-2", embeddings=False)
    assert specific["confidence"] == "strong" and len(specific["sections"]) > 1  # type: ignore[arg-type]


STACK_TRACE = (
    'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()"'
    ' because "s" is null\n'
    "\tat com.example.app.Util.count(Util.java:12)\n"
    "\tat com.example.app.Main.run(Main.java:33)\n"
    "\tat com.example.app.Main.main(Main.java:8)"
)
HALTED = (
    "ledger-writer stopped consuming, what do I do?\n"
    "2026-12-06T09:12:44Z ERROR ledger-writer partition=7 offset=88123 event=evt_9f2 "
    "UnbalancedEntryError: debits 1000 != credits 990\n"
    "2026-12-06T09:12:44Z WARN ledger-writer partition 7 halted (on_failure=halt)"
)


def test_a_pasted_stack_trace_as_first_prompt_injects_nothing_and_our_services_log_its_sections(
    settings: Settings, embedded_example: Path, starting: Path, run_hook: RunHook
) -> None:
    """A Java stack trace pasted as the first prompt got a short section of the example
    knowledge by keywords: main, app and util meet in one section by chance in 0.05% of such
    indexes, counted as if they were the knowledge's words, though main and app are as common
    in everyday agent prompts (the generic probes) as in it. Only words the knowledge holds more
    often than those prompts now count; a log of the team's ledger-writer still gets its sections."""
    shutil.copyfile(embedded_example, settings.db)
    pasted = first(run_hook, STACK_TRACE, "s-1", embeddings=True)
    assert (pasted["confidence"], pasted["sections"], pasted["knowledge"]) == ("none", [], "")
    log = first(run_hook, HALTED, "s-2", embeddings=True)
    assert log["confidence"] == "strong"
    assert "Those consumers stop the partition instead (`on_failure: halt`)" in str(
        log["knowledge"]
    )
    bare = run_hook(payload=hook_json(STACK_TRACE, "s-3"), env=DAEMON)  # what the agent gets
    assert (bare.code, bare.stdout, bare.stderr) == (0, "", "")
