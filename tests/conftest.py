from __future__ import annotations

import logging
import resource
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.embeddings.openvino_engine import CONVERTER
from briefd.settings import Settings, load_settings
from tests.postgres import Postgres, drop_postgres, start_postgres

# `pytest.importorskip("openvino")` imports it directly: keep its telemetry out here too (O3)
sys.modules.setdefault(CONVERTER, None)  # type: ignore[arg-type]

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "testdata" / "knowledge"
EXAMPLE_TR = REPO / "testdata" / "knowledge-tr"
EVAL_DATA = REPO.parent / "shared" / "eval-data"

WriteFiles = Callable[[dict[str, str]], Path]

CLI_QUIETED = ("briefd.state", "psycopg.pool")  # loggers the CLI's callback quiets for good


@pytest.fixture(autouse=True)
def cli_log_levels() -> Iterator[None]:
    """The CLI's callback sets these loggers' levels for its whole process (one command); a
    command run in-process here (typer's CliRunner) must not silence them for later tests."""
    levels = {name: logging.getLogger(name).level for name in CLI_QUIETED}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def full_disk(size: int = 40_960) -> Callable[[], None]:
    """A ``preexec_fn`` that makes a child process's disk full: no file it writes may grow past
    ``size`` bytes (RLIMIT_FSIZE; Python ignores SIGXFSZ, so a write fails with EFBIG as on a
    full disk). 40 KB leaves room for SQLite's 32 KB shared-memory file, not for an index run.
    The hard limit stays, so :func:`free_disk` can lift it from outside."""

    def limit() -> None:
        resource.setrlimit(
            resource.RLIMIT_FSIZE, (size, resource.getrlimit(resource.RLIMIT_FSIZE)[1])
        )

    return limit


def free_disk(pid: int) -> None:
    """Lift :func:`full_disk` from the running process ``pid``: space was freed."""
    hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)[1]
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard, hard))


@pytest.fixture
def write_files(tmp_path: Path) -> WriteFiles:
    """Write {relative path: text} under tmp_path/knowledge (dedented) and return the root."""
    root = tmp_path / "knowledge"

    def write(files: dict[str, str]) -> Path:
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        root.mkdir(exist_ok=True)
        return root

    return write


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ``embeddings.model_dir`` for a worker's tests: the default model's ONNX graph and
    OpenVINO's compiled cache are built on the first test that loads the model (~3.6 s), not
    in every test's own folder. Tests about where model files go set their own."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture
def settings(tmp_path: Path, model_dir: Path) -> Settings:
    """Defaults, with the index in tmp_path, no briefd.yaml / BRIEFD_* influence and embeddings
    off (tests that want vectors inject an embedder, or turn the default model on: its files
    are the worker's :func:`model_dir`)."""
    return load_settings(
        config=None,
        env={},
        overrides={
            "db": str(tmp_path / "index.db"),
            "source": str(tmp_path / "knowledge"),
            "eval.cache_dir": str(tmp_path / "eval-cache"),
            "embeddings.enabled": False,
            "embeddings.model_dir": str(model_dir),
        },
    )


@pytest.fixture
def api(settings: Settings) -> Iterator[Briefd]:
    """BM25 only: lexical behaviour without any embedder."""
    with Briefd(settings, embedder=None) as instance:
        yield instance


@pytest.fixture(scope="session")
def example_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example knowledge indexed once per session, BM25 only (``api.index(EXAMPLE)``): a
    closed SQLite file that :func:`indexed` copies instead of indexing again."""
    template = template_settings(tmp_path_factory.mktemp("example-index"))
    with Briefd(template, embedder=None) as instance:
        instance.index(EXAMPLE)
    return template.db


def template_settings(base: Path) -> Settings:
    """Settings of an index built once for a session's tests to copy: ``base/template.db`` of
    ``base/knowledge``, BM25 only."""
    return load_settings(
        config=None,
        env={},
        overrides={
            "db": str(base / "template.db"),
            "source": str(base / "knowledge"),
            "eval.cache_dir": str(base / "eval-cache"),
            "embeddings.enabled": False,
        },
    )


@pytest.fixture
def indexed(settings: Settings, example_index: Path) -> Iterator[Briefd]:
    """The example knowledge repository indexed BM25-only: a copy of :func:`example_index` in
    this test's tmp_path, opened like :func:`api`."""
    shutil.copyfile(example_index, settings.db)
    with Briefd(settings, embedder=None) as instance:
        yield instance


@pytest.fixture
def hybrid_api(settings: Settings) -> Iterator[Briefd]:
    """With the deterministic fake embedder (real vectors, no neural model)."""
    with Briefd(settings, embedder=FakeEmbedder()) as instance:
        yield instance


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A real PostgreSQL cluster for the session (see :mod:`tests.postgres`)."""
    pg = start_postgres()
    try:
        yield pg
    finally:
        drop_postgres(pg)
