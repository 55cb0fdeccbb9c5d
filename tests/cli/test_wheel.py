"""The wheel as a product: ``python -m build`` makes the sdist and the wheel (from the sdist),
the wheel installs into a fresh venv outside the repository, and there — with nothing but the
wheel — ``briefd demo`` indexes and serves the example knowledge it carries, and search, bundle,
``--version``, ``-h``, completion and the no-source message work."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from briefd.__about__ import __version__
from briefd.cli.serve import NOTHING_TO_SERVE
from tests.conftest import EXAMPLE, REPO
from tests.service.live import free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``dist/`` of ``python -m build``: the sdist, and the wheel built from it. Without
    isolation: the build backend is a pinned dev dependency, so nothing is fetched (an isolated
    build installs it from the package index, in the middle of the suite)."""
    dist = tmp_path_factory.mktemp("wheel") / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(REPO)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    return dist


@pytest.fixture(scope="module")
def installed(dist: Path) -> Path:
    """``bin/`` of a fresh venv holding briefd from its wheel. The suite reaches no package
    index: the wheel goes in without its dependencies, which the venv reads from this one's
    (a ``.pth`` line, after its own site-packages; their ``.pth`` files, this checkout's
    editable install among them, are not read), once each is checked to be the very version
    the wheel pins."""
    base = dist.parent
    (wheel,) = dist.glob("briefd-*.whl")
    assert wheel.name == f"briefd-{__version__}-py3-none-any.whl"
    readme = (REPO / "README.md").read_text()  # its pipx and uvx lines name this very file
    assert f"pipx install dist/{wheel.name}" in readme
    assert f"uvx --from ./dist/{wheel.name} briefd demo" in readme
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stderr[-3000:]
    assert pinned_here(wheel) == []
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def pinned_here(wheel: Path) -> list[str]:
    """The wheel's requirements (for this Python, extras aside) that are not pinned with
    ``==`` to the version installed here: [] when the venv may take its dependencies from
    this one."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(f"briefd-{__version__}.dist-info/METADATA").decode()
    wrong = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist: "):
            continue
        requirement = Requirement(line.removeprefix("Requires-Dist: "))
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        pins = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        try:
            installed: str | None = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if pins != [installed]:
            wrong.append(f"{requirement} (installed here: {installed})")
    return wrong


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """An environment with nothing of this repository in it: no BRIEFD_*, no PYTHONPATH, no
    ``briefd`` on PATH (as under ``uvx``, or with a venv not activated), a data directory of its
    own; BM25 only (the real model's path is the image test's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRIEFD_", "PYTHON"))}
    folders = env.get("PATH", os.defpath).split(os.pathsep)
    env["PATH"] = os.pathsep.join(f for f in folders if not (Path(f) / "briefd").exists())
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["BRIEFD_EMBEDDINGS__ENABLED"] = "false"
    return env


def run(bin_dir: Path, *args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(
        [str(bin_dir / "briefd"), *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture
def demo(installed: Path, tmp_path: Path, home: dict[str, str]) -> Iterator[str]:
    port = free_port()
    said = tmp_path / "demo.err"  # read while it serves: the commands it prints to try
    with said.open("w") as stderr:
        process = subprocess.Popen(
            [str(installed / "briefd"), "demo", "--port", str(port)],
            cwd=tmp_path, env=home, stdout=subprocess.PIPE, stderr=stderr, text=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                with urllib.request.urlopen(url + "/api/health", timeout=2) as response:
                    if json.loads(response.read())["status"] == "ok":
                        break
            except OSError:
                pass
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "briefd demo did not come up"
            time.sleep(0.5)
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=30)
    assert "briefd demo: the example knowledge in" in said.read_text()
    assert "serving on " + url in out


def test_the_wheel_and_sdist_carry_the_license_text_and_nothing_of_the_checkout(dist: Path) -> None:  # fmt: skip
    """pyproject declares Apache-2.0, whose text a redistributed copy must carry: the sdist and
    the wheel carried none (no LICENSE in the repository), and ``License-File`` was missing."""
    (wheel,) = dist.glob("briefd-*.whl")
    info = f"briefd-{__version__}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert archive.read(f"{info}/licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
        metadata = archive.read(f"{info}/METADATA").decode()
    assert "License-Expression: Apache-2.0\n" in metadata
    assert "License-File: LICENSE\n" in metadata
    assert (
        "Apache License\n                           Version 2.0" in (REPO / "LICENSE").read_text()
    )
    assert {name.split("/")[0] for name in names} == {"briefd", info}  # no tests/, no .venv
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".db"))]
    (sdist,) = dist.glob("briefd-*.tar.gz")
    with tarfile.open(sdist) as archive:
        license_text, pkg_info = (
            archive.extractfile(f"briefd-{__version__}/{name}") for name in ("LICENSE", "PKG-INFO")
        )
        assert license_text is not None and pkg_info is not None
        assert license_text.read() == (REPO / "LICENSE").read_bytes()
        assert "License-File: LICENSE\n" in pkg_info.read().decode()


def test_the_wheel_carries_what_it_needs(installed: Path, tmp_path: Path, home: dict[str, str]) -> None:  # fmt: skip
    where = subprocess.run(
        [str(installed / "python"), "-c", "import briefd, sys; print(briefd.__file__)"],
        cwd=tmp_path, env=home, capture_output=True, text=True, check=True,
    )  # fmt: skip
    package = Path(where.stdout.strip()).parent
    assert package.is_relative_to(installed.parent) and not package.is_relative_to(REPO)
    example = package / "example"
    shipped = sorted(str(p.relative_to(example)) for p in example.rglob("*.md"))
    assert shipped == sorted(str(p.relative_to(EXAMPLE)) for p in EXAMPLE.rglob("*.md"))
    assert len(shipped) == 46  # 45 documents in scopes and the repository's README

    assert run(installed, "--version", cwd=tmp_path, env=home).stdout == f"briefd {__version__}\n"
    short = run(installed, "-h", cwd=tmp_path, env=home)
    assert (
        short.returncode == 0 and "demo" in short.stdout and "--install-completion" in short.stdout
    )
    # name the shell rather than detect it from the process tree (under make that is sh)
    named = {**home, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    completion = run(installed, "--show-completion", "bash", cwd=tmp_path, env=named)
    assert completion.returncode == 0 and "_BRIEFD_COMPLETE=complete_bash" in completion.stdout
    models = json.loads(run(installed, "model", "list", "--json", cwd=tmp_path, env=home).stdout)
    default = next(m for m in models["models"] if m["name"] == "multilingual-e5-small-onnx")
    assert default["present"] and default["configured"]


def test_serve_without_a_source_says_what_to_do(installed: Path, tmp_path: Path, home: dict[str, str]) -> None:  # fmt: skip
    result = run(installed, "serve", cwd=tmp_path, env=home)
    assert result.returncode == 1
    db = Path(".briefd/briefd.db")
    assert result.stderr.replace("\n", " ").strip() == "error: " + NOTHING_TO_SERVE.format(db=db)
    assert not (tmp_path / ".briefd").exists()


def test_demo_serves_the_example_and_the_cli_reads_its_index(
    installed: Path, demo: str, tmp_path: Path, home: dict[str, str]
) -> None:
    query = urllib.parse.urlencode({"q": "chargeback evidence deadline", "top_k": 3})
    with urllib.request.urlopen(f"{demo}/api/search?{query}", timeout=30) as response:
        hits = json.loads(response.read())["hits"]
    assert hits[0]["doc_path"] == "domain/chargebacks.md"
    assert "7 calendar days" in " ".join(
        hit["content"] for hit in hits
    )  # BM25 ranks the intro first

    db = str(Path(home["XDG_DATA_HOME"]) / "briefd" / "demo" / "briefd.db")
    found = run(
        installed, "--db", db, "search", "partial refunds", "--json", cwd=tmp_path, env=home
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["doc_path"] == "domain/refunds.md"
    bundle = run(installed, "--db", db, "bundle", "refund part of a card payment", cwd=tmp_path, env=home)  # fmt: skip
    assert bundle.returncode == 0, bundle.stderr
    assert "domain/refunds.md" in bundle.stdout and "bundle " in bundle.stderr

    # the commands demo prints to try run as printed, from another terminal: here no `briefd`
    # is on PATH, so they name this installation's (they said `briefd`: command not found)
    said = (tmp_path / "demo.err").read_text().splitlines()
    tries = [line.strip() for line in said if " --db " in line]
    assert [shlex.split(line)[0] for line in tries] == [str(installed / "briefd")] * 2
    answers = [
        subprocess.run(line, shell=True, cwd=tmp_path, env=home, capture_output=True, text=True, timeout=120)
        for line in tries
    ]  # fmt: skip
    assert [a.returncode for a in answers] == [0, 0], [a.stderr for a in answers]
    assert "domain/retry-policy.md" in answers[0].stdout
    assert "domain/refunds.md" in answers[1].stdout


def first_command_demo_prints(installed: Path, cwd: Path, env: dict[str, str]) -> str:
    """The program of the first command ``briefd demo`` prints to try (read, then it is ended)."""
    process = subprocess.Popen(
        [str(installed / "briefd"), "demo", "--port", str(free_port())],
        cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        lines = iter(process.stderr.readline, "")
        line = next((line for line in lines if " --db " in line), "")
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    return shlex.split(line)[0]


def test_demo_names_briefd_as_another_terminal_finds_it(
    installed: Path, tmp_path: Path, home: dict[str, str]
) -> None:
    """``briefd`` where the one on PATH is this installation (pipx, uv tool, an activated
    venv); under ``uvx``, which puts its environment in uv's cache on the PATH of briefd's
    process only, the script's path (it said ``briefd``: not found in the user's terminal)."""
    on_path = {**home, "PATH": f"{installed}{os.pathsep}{home['PATH']}"}
    assert first_command_demo_prints(installed, tmp_path, on_path) == "briefd"
    uvx = {**on_path, "UV_CACHE_DIR": str(installed.parent.parent.resolve())}
    assert first_command_demo_prints(installed, tmp_path, uvx) == str(installed / "briefd")


def test_a_teams_gate_names_the_prompt_files_the_wheel_carries(
    installed: Path, tmp_path: Path, home: dict[str, str]
) -> None:
    """V4, I8: a team's thresholds file with trust and recall limits needs offtopic.yaml and
    recall-noise.yaml beside it. The wheel carried no offtopic.yaml, and the error said to copy
    "briefd's eval/offtopic.yaml", a folder only a clone of the repository has; it names the
    copies the wheel carries, and with them copied the gate runs."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    (tmp_path / "gate.yaml").write_text(
        "sets:\n  - name: mine\n    queries: q.yaml\n    min: {bm25: {recall@5: 0.5}}\n"
        "    trust: {max_emptied: 1.0}\n    recall: {bm25: {recall@5: 0.1}}\n"
    )
    # trust limits are checked in hybrid search only (the file is read before any embedding);
    # with embeddings off, the recall limits come next
    embeddings = {**home, "BRIEFD_EMBEDDINGS__ENABLED": "true"}
    for name, env in (("offtopic.yaml", embeddings), ("recall-noise.yaml", home)):
        result = run(installed, "eval", "--check", "gate.yaml", cwd=tmp_path, env=env)
        assert result.returncode == 1, result.stderr
        said = " ".join(result.stderr.split())
        copy = re.search(r"copy briefd's own \((/\S+)\) there", said)
        assert copy is not None, said
        own = Path(copy.group(1))
        assert own.name == name and own.is_relative_to(installed.parent)
        assert own.read_bytes() == (REPO / "eval" / name).read_bytes()
        shutil.copy(own, tmp_path / name)
    checked = run(installed, "eval", "--check", "gate.yaml", cwd=tmp_path, env=home)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.endswith("eval gate passed\n")
