"""The environment's proxy for a remote embedding service and for ``briefd model pull``
(E2, model pull): the one proxy for the URL, as httpx reads ``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY`` and ``NO_PROXY``, is given to the client alone. ``ALL_PROXY=socks5://…`` (httpx
has no SOCKS support here) broke every index run and query with an ImportError traceback, even
for a service ``NO_PROXY`` exempts; now it fails nothing there, and one the service's requests
would go through is named, not a traceback (real servers on 127.0.0.1)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from briefd.api import Briefd
from briefd.cli.main import app
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from tests.conftest import WriteFiles
from tests.embeddings.fakehttp import FakeServer, Reply, closed_port_url, fake_server
from tests.embeddings.test_remote_index import DOCS, Resizable, ollama_settings
from tests.embeddings.tinymodel import register_tiny

SOCKS = "socks5://relay:secret@127.0.0.1:1080"


@pytest.fixture
def ollama() -> Iterator[FakeServer]:
    with fake_server() as server:
        server.on("POST", "/api/embed", Resizable())
        yield server


@pytest.fixture
def clean_proxies(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for scheme in ("http", "https", "all", "no"):
        for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY"):
            monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_socks_proxy_no_proxy_exempts_the_service_from_does_not_stop_embedding(
    settings: Settings,
    write_files: WriteFiles,
    ollama: FakeServer,
    clean_proxies: pytest.MonkeyPatch,
) -> None:
    clean_proxies.setenv("ALL_PROXY", SOCKS)
    clean_proxies.setenv("NO_PROXY", "127.0.0.1")
    write_files(DOCS)
    with Briefd(ollama_settings(settings, ollama.url)) as api:
        report = api.index()
        assert (report.embedding_error, report.vectors_missing) == (None, 0)
        found = api.search(SearchRequest("card retry"))
    assert found.mode == "hybrid" and found.warnings == ()
    assert len(ollama.requests) >= 2  # the index run's and the query's


def test_an_unusable_proxy_for_the_service_is_named_not_a_traceback(
    settings: Settings,
    write_files: WriteFiles,
    ollama: FakeServer,
    clean_proxies: pytest.MonkeyPatch,
) -> None:
    clean_proxies.setenv("ALL_PROXY", SOCKS)
    write_files(DOCS)
    with Briefd(ollama_settings(settings, ollama.url)) as api:
        report = api.index()
        found = api.search(SearchRequest("card retry"))
    said = (
        "cannot send embedding requests through the proxy socks5://***@127.0.0.1:1080 (from "
        "ALL_PROXY): httpx has no SOCKS support here: install it in briefd's environment (pip "
        "install 'httpx[socks]'), or name an http:// proxy; or, if embeddings.base_url is "
        "reachable without it, add 127.0.0.1 to NO_PROXY"
    )
    assert report.embedding_error == said and report.vectors_missing == 2
    assert found.mode == "bm25" and found.hits[0].heading == "Retry policy"
    assert found.warnings == (
        "searched by keywords only (bm25): this index has no vectors of nomic-embed-text@"
        "ollama; run `briefd index` to embed it with this model",
    )
    assert ollama.requests == []


def test_a_proxy_that_cannot_be_reached_is_named(
    settings: Settings,
    write_files: WriteFiles,
    ollama: FakeServer,
    clean_proxies: pytest.MonkeyPatch,
) -> None:
    proxy = closed_port_url()
    clean_proxies.setenv("ALL_PROXY", SOCKS)  # another scheme's: not this service's
    clean_proxies.setenv("http_proxy", proxy)
    write_files(DOCS)
    with Briefd(ollama_settings(settings, ollama.url)) as api:
        report = api.index()
    assert report.embedding_error == (
        f"Ollama at {ollama.url}/api/embed cannot be reached through the proxy {proxy} (from "
        "http_proxy) (ConnectError); check that proxy, or, if the service is reachable without "
        "it, add 127.0.0.1 to NO_PROXY"
    )
    assert ollama.requests == []


def test_model_pull_from_a_mirror_no_proxy_exempts(
    tmp_path: Path, clean_proxies: pytest.MonkeyPatch
) -> None:
    data = b"weights " * 1000
    register_tiny(clean_proxies, data)
    clean_proxies.setenv("BRIEFD_EMBEDDINGS__MODEL_DIR", str(tmp_path / "models"))
    clean_proxies.setenv("ALL_PROXY", SOCKS)
    clean_proxies.chdir(tmp_path)
    with fake_server() as mirror:
        mirror.on("GET", "/m/w.bin", lambda r: Reply(200, data, "application/octet-stream"))
        argv = ["model", "pull", "--model", "tiny", "--url", mirror.url + "/m"]
        refused = CliRunner().invoke(app, argv)
        clean_proxies.setenv("NO_PROXY", "127.0.0.1")
        pulled = CliRunner().invoke(app, argv)
    assert refused.exit_code == 1 and refused.exception is not None
    assert " ".join(refused.output.split()) == (
        "error: cannot send model download requests through the proxy socks5://***@127.0.0.1:1080 "
        "(from ALL_PROXY): httpx has no SOCKS support here: install it in briefd's environment "
        "(pip install 'httpx[socks]'), or name an http:// proxy; or, if the download URL (--url) "
        "is reachable without it, add 127.0.0.1 to NO_PROXY"
    )
    assert pulled.exit_code == 0, pulled.output
    assert (tmp_path / "models/tiny/w.bin").read_bytes() == data


def test_model_pull_uses_files_already_verified_when_the_proxy_is_unusable(
    tmp_path: Path, clean_proxies: pytest.MonkeyPatch
) -> None:
    """A pull on a machine whose proxy briefd cannot use stopped with the proxy's error even
    when every file was already there and verified: nothing needed the network."""
    data = b"weights " * 1000
    register_tiny(clean_proxies, data)
    clean_proxies.setenv("BRIEFD_EMBEDDINGS__MODEL_DIR", str(tmp_path / "models"))
    clean_proxies.chdir(tmp_path)
    with fake_server() as mirror:
        mirror.on("GET", "/m/w.bin", lambda r: Reply(200, data, "application/octet-stream"))
        argv = ["model", "pull", "--model", "tiny", "--url", mirror.url + "/m"]
        first = CliRunner().invoke(app, argv)
        clean_proxies.setenv("ALL_PROXY", SOCKS)
        again = CliRunner().invoke(app, [*argv, "--json"])
        (tmp_path / "models/tiny/w.bin").write_bytes(b"other " * 10)
        broken = CliRunner().invoke(app, argv)
    assert first.exit_code == 0, first.output
    assert len(mirror.requests) == 1  # the first pull's download; no other
    assert again.exit_code == 0, again.output
    refusal = (
        "cannot send model download requests through the proxy socks5://***@127.0.0.1:1080 "
        "(from ALL_PROXY): httpx has no SOCKS support here: install it in briefd's environment "
        "(pip install 'httpx[socks]'), or name an http:// proxy; or, if the download URL (--url) "
        "is reachable without it, add 127.0.0.1 to NO_PROXY"
    )
    assert " ".join(again.stderr.split()) == (
        "note: every file of tiny is already present and verified, so nothing was downloaded "
        f"(a download would fail: {refusal})"
    )
    pulled = json.loads(again.stdout)
    assert pulled["present"] is True
    assert [(f["path"], f["action"]) for f in pulled["files"]] == [("w.bin", "verified")]
    assert broken.exit_code == 1  # a file that needs downloading again: the proxy's error
    assert " ".join(broken.output.split()) == f"error: {refusal}"


def test_model_pull_sends_a_redirect_through_the_proxy_for_its_own_host(
    tmp_path: Path, clean_proxies: pytest.MonkeyPatch
) -> None:
    """The pull's one client had the first URL's proxy choice and followed redirects with it:
    a mirror ``NO_PROXY`` exempts that redirects to a CDN on another host had the CDN request
    leave unproxied (a network that lets traffic out only through its proxy fails), and an
    http:// to https:// redirect ignored ``HTTPS_PROXY``. Each hop now goes through its own
    URL's proxy."""
    data = b"weights " * 1000
    register_tiny(clean_proxies, data)
    clean_proxies.setenv("BRIEFD_EMBEDDINGS__MODEL_DIR", str(tmp_path / "models"))
    clean_proxies.chdir(tmp_path)
    onward = httpx.Client(trust_env=False)  # the proxy's own request, not through itself
    with onward, fake_server() as mirror, fake_server() as cdn, fake_server() as proxy:
        cdn_host = cdn.url.removeprefix("http://").replace("127.0.0.1", "localhost")
        cdn.on("GET", "/cdn/w.bin", lambda r: Reply(200, data, "application/octet-stream"))
        for path, scheme in (("/m/w.bin", "http"), ("/s/w.bin", "https")):
            moved = (("Location", f"{scheme}://{cdn_host}/cdn/w.bin"),)
            mirror.on("GET", path, lambda r, moved=moved: Reply(302, b"", "text/plain", moved))
        relayed = f"http://{cdn_host}/cdn/w.bin"  # a forward proxy's request line
        proxy.on("GET", relayed, lambda r: Reply(200, onward.get(relayed).content, "text/plain"))
        clean_proxies.setenv("NO_PROXY", "127.0.0.1")  # the mirror's host, not the CDN's
        clean_proxies.setenv("HTTP_PROXY", proxy.url)
        clean_proxies.setenv("HTTPS_PROXY", proxy.url)
        argv = ["model", "pull", "--model", "tiny", "--url"]
        pulled = CliRunner().invoke(app, [*argv, mirror.url + "/m"])
        assert pulled.exit_code == 0, pulled.output
        assert (tmp_path / "models/tiny/w.bin").read_bytes() == data
        (tmp_path / "models/tiny/w.bin").unlink()
        secure = CliRunner().invoke(app, [*argv, mirror.url + "/s"])
    assert [(r.method, r.path) for r in proxy.requests] == [
        ("GET", relayed),
        ("CONNECT", cdn_host),  # the https:// hop asked HTTPS_PROXY for a tunnel
    ]
    assert [r.path for r in mirror.requests] == ["/m/w.bin", "/s/w.bin"]
    assert [r.path for r in cdn.requests] == ["/cdn/w.bin"]  # relayed by the proxy only
    assert secure.exit_code == 1  # this proxy refuses tunnels: said, nothing saved
    assert " ".join(secure.output.split()) == (
        f"error: download of w.bin from {mirror.url}/s/w.bin (redirected to https://{cdn_host}"
        f"/cdn/w.bin) failed through the proxy {proxy.url} (from HTTPS_PROXY) (ProxyError); "
        "check that proxy and the URL (--url), or, if localhost is reachable without the "
        "proxy, add localhost to NO_PROXY; then pull again"
    )


def test_model_pull_through_a_proxy_that_cannot_be_reached_names_it(
    tmp_path: Path, clean_proxies: pytest.MonkeyPatch
) -> None:
    """A pull whose proxy is down said only "failed (ConnectError); check the URL (--url) and
    the network": the same words as a mirror that is down, so the user could not tell which
    to fix. The proxy it went through is named, with the variable that set it."""
    register_tiny(clean_proxies, b"weights " * 1000)
    clean_proxies.setenv("BRIEFD_EMBEDDINGS__MODEL_DIR", str(tmp_path / "models"))
    clean_proxies.chdir(tmp_path)
    proxy = closed_port_url()
    clean_proxies.setenv("http_proxy", proxy.replace("http://", "http://relay:secret@"))
    with fake_server() as mirror:
        argv = ["model", "pull", "--model", "tiny", "--url", mirror.url + "/m"]
        pulled = CliRunner().invoke(app, argv)
    assert pulled.exit_code == 1
    assert " ".join(pulled.output.split()) == (
        f"error: download of w.bin from {mirror.url}/m/w.bin failed through the proxy "
        f"{proxy.replace('http://', 'http://***@')} (from http_proxy) (ConnectError); check "
        "that proxy and the URL (--url), or, if 127.0.0.1 is reachable without the proxy, add "
        "127.0.0.1 to NO_PROXY; then pull again"
    )
    assert mirror.requests == []
    assert not (tmp_path / "models/tiny/w.bin").exists()
