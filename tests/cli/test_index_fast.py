"""``briefd index`` with nothing to do (O4): the source key, the fast answer, and every change
that must still send the run to the full command."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.cli.index_fast import index_args, main, unchanged
from briefd.embeddings.fake import FakeEmbedder
from briefd.embeddings.registry import model_id_of
from briefd.errors import EmbeddingError
from briefd.recall import generic
from briefd.retrieval import gate_fit
from briefd.settings import Settings, with_overrides
from briefd.store import freshness
from tests.conftest import WriteFiles

FILES = {
    "domain/refunds.md": "# Refunds\n\nPartial refunds within 30 days.\n",
    "domain/retries.md": "# Retries\n\nSoft declines are retried three times.\n",
}


@pytest.fixture
def indexed(settings: Settings, write_files: WriteFiles) -> Settings:
    write_files(FILES)
    with Briefd(settings, embedder=None) as api:
        api.index()
    return settings


def test_index_args_take_only_the_plain_forms() -> None:
    assert index_args(["index"]) == {"json": False}
    assert index_args(["--db", "x.db", "index", "--source=k", "--json"]) == {
        "json": True,
        "db": "x.db",
        "source": "k",
    }
    for argv in (["index", "--rebuild"], ["index", "--help"], ["search", "x"], ["--db"], []):
        assert index_args(argv) is None


def test_nothing_changed_gives_the_last_report(indexed: Settings) -> None:
    with Briefd(indexed, embedder=None) as api:
        full = api.index()  # the full command with nothing to do
    fast = unchanged(indexed)
    assert fast is not None
    assert dataclasses.replace(fast, seconds=0) == dataclasses.replace(full, seconds=0)
    assert fast.documents == 2 and fast.unchanged == 2 and fast.added == ()


def test_every_change_goes_to_the_full_run(indexed: Settings, write_files: WriteFiles) -> None:
    root = indexed.source
    assert root is not None and unchanged(indexed) is not None
    write_files({"domain/refunds.md": "# Refunds\n\nPartial refunds within 60 days.\n"})
    assert unchanged(indexed) is None  # an edit
    with Briefd(indexed, embedder=None) as api:
        assert api.index().changed == ("domain/refunds.md",)
    assert unchanged(indexed) is not None
    write_files({"domain/new.md": "# New\n\nA new page.\n"})
    assert unchanged(indexed) is None  # a new file
    (root / "domain/new.md").unlink()
    assert unchanged(indexed) is not None  # back to what was indexed
    rescoped = with_overrides(indexed, {"default_scopes": ["domain"], "chunking.max_tokens": 900})
    assert unchanged(rescoped) is None  # the chunker's settings
    hybrid = with_overrides(indexed, {"embeddings.enabled": True})
    assert unchanged(hybrid) is None  # a model now, none before


def test_an_incomplete_index_is_never_skipped(settings: Settings, write_files: WriteFiles) -> None:
    class Broken(FakeEmbedder):
        def embed_batch(self, texts, kind):  # type: ignore[no-untyped-def]
            raise EmbeddingError("the model is unreachable")

    write_files(FILES)
    with Briefd(settings, embedder=Broken()) as api:
        assert api.index().embedding_error == "the model is unreachable"
        with api.store.read() as conn:
            assert freshness.stored_key(conn) == ""
    assert unchanged(settings) is None


def test_a_run_stopped_before_the_gate_is_fitted_is_never_skipped(
    settings: Settings, write_files: WriteFiles
) -> None:
    """The run commits the index, then fits the gate (R4) to it. Stopped in between (Ctrl-C,
    a kill), the stored key said the index was complete: every later ``briefd index`` found
    nothing changed and the gate stayed unfitted, off, until the knowledge changed."""

    class Interrupted(FakeEmbedder):
        def embed_batch(self, texts, kind):  # type: ignore[no-untyped-def]
            if kind == "query":  # the gate's probes, embedded after the index committed
                raise KeyboardInterrupt
            return super().embed_batch(texts, kind)

    write_files(FILES)
    with Briefd(settings, embedder=Interrupted()) as api:
        with pytest.raises(KeyboardInterrupt):
            api.index()
        with api.store.read() as conn:
            assert freshness.stored_key(conn) == ""
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        assert api.index().unchanged == 2
        assert set(api.gate_calibration()) == {FakeEmbedder().model_id}
        with api.store.read() as conn:
            assert freshness.stored_key(conn) != ""


@pytest.mark.parametrize(
    ("stored", "older"),
    [
        (f"v{gate_fit.VERSION}:", f"v{int(gate_fit.VERSION) - 1}:"),  # the gate's (R4)
        (f"g{generic.VERSION}:", f"g{int(generic.VERSION) - 1}:"),  # recall's generic one (I8)
    ],
)
def test_an_upgrade_that_fits_the_gate_anew_is_never_skipped(
    settings: Settings, write_files: WriteFiles, stored: str, older: str
) -> None:
    """A release that fits the relevance gate another way bumps its version and leaves the
    index itself as it was: ``briefd index`` found nothing changed and kept the older
    release's fit (the one before the upgrade) until a document was edited."""
    hybrid = with_overrides(settings, {"embeddings.enabled": True})
    model = model_id_of(hybrid)
    assert model is not None
    embedder = FakeEmbedder(name=model.partition("@")[0])
    embedder.runtime = model.partition("@")[2]  # the configured model's id: its fits are read
    write_files(FILES)
    with Briefd(hybrid, embedder=embedder) as api:
        api.index()
    assert unchanged(hybrid) is not None
    with Briefd(hybrid, embedder=embedder) as api, api.store.write() as conn:
        # the fits as the release before the upgrade left them: its version in their names
        conn.execute(
            "UPDATE calibration SET fingerprint = replace(fingerprint, ?, ?)", (stored, older)
        )
        conn.execute("UPDATE index_meta SET value = replace(value, ?, ?)", (stored, older))
    assert unchanged(hybrid) is None
    with Briefd(hybrid, embedder=embedder) as api:
        assert api.index().unchanged == 2
        with api.store.read() as conn:
            fits = dict(conn.execute("SELECT model, fingerprint FROM calibration").fetchall())
    gate = fits[model]
    assert gate.startswith(f"v{gate_fit.VERSION}:")
    assert fits[f"{model}|generic"] == generic.fitted_to(gate)
    assert unchanged(hybrid) is not None


def test_upkeep_due_goes_to_the_full_run(indexed: Settings) -> None:
    with Briefd(indexed, embedder=None) as api, api.store.write() as conn:
        conn.execute(
            "INSERT INTO bundle_manifests (id, request_key, created_at, sections) "
            "VALUES ('old', 'k', '2000-01-01T00:00:00+00:00', '[]')"
        )
    assert unchanged(indexed) is None


def test_a_stricter_log_prompts_goes_to_the_full_run(indexed: Settings) -> None:
    """Hashing turned on with nothing else changed: the run that empties the text logged
    before is not skipped as "nothing to do" (T6)."""
    assert unchanged(indexed) is not None
    hashed = with_overrides(indexed, {"activity.log_prompts": "hashed"})
    assert unchanged(hashed) is None
    with Briefd(hashed, embedder=None) as api:
        api.index()
    assert unchanged(hashed) is not None


def test_the_process_answers_without_parser_numpy_or_typer(indexed: Settings) -> None:
    argv = ["--db", str(indexed.db), "index", "--source", str(indexed.source), "--json"]
    code = (
        "import sys, json; from briefd.cli.index_fast import main; status = main(sys.argv[1:]); "
        "heavy = [m for m in ('numpy', 'typer', 'rich', 'briefd.markdown.parse', 'onnxruntime') "
        "if m in sys.modules]; print(json.dumps([status, heavy]), file=sys.stderr)"
    )
    env = {"BRIEFD_EMBEDDINGS__ENABLED": "false", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=60
    )
    assert json.loads(done.stderr) == [0, []]
    report = json.loads(done.stdout)
    assert report["documents"] == 2 and report["unchanged"] == 2 and report["changed"] == []
    assert main(["index", "--rebuild"]) is None
    assert Path(report["source"]) == indexed.source


def test_progress_without_a_terminal_logs_rate_and_time_left() -> None:
    from briefd.cli.index import ProgressLog

    now = [0.0]
    lines: list[str] = []
    progress = ProgressLog(lines.append, every=5.0, clock=lambda: now[0])
    for step in range(41):  # 40 passages, one every 0.5 s
        now[0] = step * 0.5
        progress("embed", step, 40)
    progress("write", 1, 2)  # a short stage prints nothing
    assert lines == [
        "embed: 10/40 (2.0/s, ~15 s left)",
        "embed: 20/40 (2.0/s, ~10 s left)",
        "embed: 30/40 (2.0/s, ~5 s left)",
        "embed: 40/40 (2.0/s)",
    ]


def test_progress_says_the_time_left_at_every_step_for_a_stop_to_weigh() -> None:
    """A server stopped during a first index does not wait for one with far more left (see
    tests/service/test_stdio_stop.py): the time left is known between printed lines too."""
    from briefd.cli.index import ProgressLog

    now = [0.0]
    progress = ProgressLog([].append, every=5.0, clock=lambda: now[0])
    assert progress.left() is None
    progress("embed", 0, 40)
    assert progress.left() is None  # no rate yet
    now[0] = 1.5
    progress("embed", 3, 40)  # 2/s, not printed
    assert progress.left() == 18.5
    progress("write", 0, 2)
    assert progress.left() is None  # a new stage: its own rate first
    now[0] = 2.0
    progress("write", 2, 2)
    assert progress.left() is None  # done
