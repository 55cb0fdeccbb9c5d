"""The recall daemon across an upgrade of briefd (I10, O2): the hook as ``briefd init`` writes
it, run from an installed copy of the package in tmp_path, the real daemon it spawns from that
copy, and the copy's files replaced as ``pip install -U`` replaces them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import briefd
from briefd.api import Briefd
from briefd.hook.place import daemon_files
from briefd.settings import Settings
from tests.hook.conftest import hook_json
from tests.hook.test_daemon import DAEMON, daemons, wait_for
from tests.recall.conftest import RELEVANT


@pytest.fixture
def db(indexed: Briefd, settings: Settings) -> Path:
    """The example knowledge indexed BM25-only, closed: only the hook and its daemon use it."""
    indexed.close()
    return settings.db.resolve()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """A folder holding a copy of the briefd package, as site-packages holds an installed one;
    every daemon started from it is ended afterwards."""
    folder = tmp_path / "site"
    source = Path(briefd.__file__).parent
    shutil.copytree(source, folder / "briefd", ignore=shutil.ignore_patterns("__pycache__"))
    yield folder
    for pid in daemons(tmp_path):
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not daemons(tmp_path), 30)


def ask(site: Path, env: dict[str, str], session: str, cwd: Path) -> dict[str, object]:
    """A prompt through the hook line of the installation in ``site``."""
    done = subprocess.run(
        [sys.executable, "-S", "-P", str(site / "briefd" / "hook" / "script.py"), "--json"],
        input=json.dumps(hook_json(RELEVANT, session)),
        capture_output=True, text=True, cwd=cwd, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_a_daemon_left_running_by_the_briefd_an_upgrade_replaced_stops(
    db: Path, tmp_path: Path, site: Path, hook_env: dict[str, str]
) -> None:
    """The daemon a prompt started went on answering every prompt with the code it was started
    from after `pip install -U briefd` replaced it (measured: the same pid, started before the
    upgrade, answered the upgraded hook's prompts; it exits only after 30 idle minutes, which
    an agent in use never leaves it). It now stops within a second of a file of the briefd it
    runs being replaced, and the next prompts start and use a daemon of the new one."""
    env = {**hook_env, **DAEMON, "PYTHONPATH": str(site)}  # the daemon imports the copy too
    log = Path(daemon_files(str(db), {}).log)
    assert ask(site, env, "s-1", tmp_path)["via"] == "in-process"  # and starts the daemon
    wait_for(lambda: log.exists() and "serving" in log.read_text())
    (before,) = daemons(tmp_path)
    assert ask(site, env, "s-2", tmp_path)["via"] == "daemon"

    # pip and uv write each file of the new version anew and move it into place
    module = site / "briefd" / "recall" / "engine.py"  # one the daemon runs
    fresh = module.with_name("engine.py.new")
    fresh.write_bytes(module.read_bytes())
    fresh.replace(module)
    wait_for(lambda: before not in daemons(tmp_path), 30)
    assert f"stopped: briefd was upgraded or reinstalled under it ({module} changed)" in (
        log.read_text()
    )

    assert ask(site, env, "s-3", tmp_path)["via"] == "in-process"  # and starts another
    wait_for(lambda: log.read_text().count("serving") == 2)
    (after,) = daemons(tmp_path)
    assert after != before
    assert ask(site, env, "s-4", tmp_path)["via"] == "daemon"
