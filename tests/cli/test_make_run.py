"""``make run`` as the README's Quick start gives it, run by the real make on the repository's
Makefile: it indexes the example knowledge and serves it on the port it names, 8484 unless
``PORT=N`` says another (the bind error's "pass --port N" cannot be said through make)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.ports import free_port

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def checkout(tmp_path: Path) -> Path:
    """The Makefile and the example knowledge in a folder of their own, with an installed venv:
    its ``briefd`` is this checkout's (so the run installs nothing and indexes nowhere else)."""
    root = tmp_path / "briefd"
    (root / "testdata").mkdir(parents=True)
    shutil.copy(REPO / "Makefile", root / "Makefile")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    shutil.copytree(REPO / "testdata" / "knowledge", root / "testdata" / "knowledge")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, command in (("python", ""), ("briefd", " -m briefd")):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec {sys.executable}{command} "$@"\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (root / ".venv" / ".installed-runtime").touch()  # newer than pyproject.toml: installed
    return root


def environment() -> dict[str, str]:
    """This environment without BRIEFD_* nor the flags of a make running these tests (``make
    test``: its -s, -j2 and output sync would reach the make run here)."""
    make = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
    return {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_") and k not in make}


def test_make_run_serves_the_example_on_the_port_named(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    port = free_port()
    env = environment()
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (REPO / "src", REPO))
    env["BRIEFD_EMBEDDINGS__ENABLED"] = "false"  # BM25: the model's path is tested elsewhere
    env["PORT"] = "1"  # a PORT of the environment (a PaaS shell's) is not the one make serves on
    log = tmp_path / "make.log"
    with log.open("w") as out:
        make = subprocess.Popen(
            ["make", "--no-print-directory", "run", f"PORT={port}"],
            cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/api/health", timeout=2) as answer:
                    if json.loads(answer.read())["status"] == "ok":
                        break
            except OSError:
                pass
            assert make.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        query = urllib.parse.urlencode({"q": "chargeback evidence deadline", "top_k": 3})
        with urllib.request.urlopen(f"{url}/api/search?{query}", timeout=30) as answer:
            hits = json.loads(answer.read())["hits"]
        assert hits[0]["doc_path"] == "domain/chargebacks.md"
    finally:
        os.killpg(make.pid, signal.SIGINT)
        make.wait(timeout=60)
    said = log.read_text()
    assert f"--no-index --port {port}\n" in said
    assert f"briefd serving on {url} " in said
    assert (root / ".briefd" / "briefd.db").is_file()  # the index is the checkout's own


def test_a_venv_that_failed_half_way_is_made_again(tmp_path: Path) -> None:
    """Debian's python3 without python3-venv makes ``.venv`` and its ``bin/python``, then stops
    at ensurepip (saying to install python3-venv). The venv was left: after the install the
    next ``make run`` skipped making it and stopped at "No module named pip"."""
    root = tmp_path / "briefd"
    root.mkdir()
    shutil.copy(REPO / "Makefile", root / "Makefile")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    debian = tmp_path / "python3"  # makes the venv without pip, then fails as Debian's does
    debian.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" = "-m venv" ]; then\n'
        f'    {sys.executable} -m venv --without-pip "$3"\n'
        "    echo 'The virtual environment was not created successfully because ensurepip is"
        " not available.' >&2\n"
        "    exit 1\n"
        "fi\n"
        f'exec {sys.executable} "$@"\n'
    )
    debian.chmod(debian.stat().st_mode | stat.S_IXUSR)
    failed = subprocess.run(
        ["make", "--no-print-directory", "run", f"PYTHON={debian}"],
        cwd=root, env=environment(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert failed.returncode != 0 and "ensurepip is not available" in failed.stderr
    assert not (root / ".venv").exists()
    # once python3-venv is installed, the next run makes the venv (pip and all) again
    again = subprocess.run(
        ["make", "--no-print-directory", "-n", "run"],
        cwd=root, env=environment(), capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "python3 -m venv .venv" in again.stdout
