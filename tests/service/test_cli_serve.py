from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import zygote
from tests.conftest import EXAMPLE, full_disk
from tests.service.live import free_port
from tests.sync.gitrepo import Remote


def briefd(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    base = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    base.update({"BRIEFD_EMBEDDINGS__ENABLED": "false", **(env or {})})
    return zygote.popen(
        ["--db", str(tmp_path / "x.db"), *args],
        cwd=tmp_path,
        env=base,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def until_up(process: subprocess.Popen[str], health_url: str) -> httpx.Response:
    """The first answer of a briefd server starting up (it may index first), within 60 s."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return httpx.get(health_url, timeout=1)
        except httpx.TransportError:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "briefd did not come up"
            time.sleep(0.1)


def test_serve_indexes_then_serves(tmp_path: Path) -> None:
    source = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, source)
    port = free_port()
    process = briefd(tmp_path, "serve", "--source", str(source), "--port", str(port))
    try:
        health = until_up(process, f"http://127.0.0.1:{port}/api/health")
        assert health.json()["documents"] == 45
        hits = httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "retry policy"})
        assert hits.json()["hits"][0]["doc_path"] == "domain/retry-policy.md"
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert f"briefd serving on http://127.0.0.1:{port}" in out
    assert "indexed " in err and "45 documents" in err
    first = f"indexing {source} into {tmp_path / 'x.db'} for the first time"
    assert err.splitlines()[0] == first  # BM25 alone: no minute per 300 sections to embed
    assert re.search(r"INFO warm-up: the index loaded in \d+ ms", err), err


def test_serve_refuses_a_public_bind_without_a_token(tmp_path: Path) -> None:
    process = briefd(tmp_path, "serve", "--host", "0.0.0.0", "--no-index")
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.strip() == (
        "error: refusing to bind 0.0.0.0 without a token: set BRIEFD_API_TOKEN to a long "
        "random secret, or bind 127.0.0.1 (the default)"
    )


def test_serve_on_a_host_that_is_no_host_name_is_one_line(tmp_path: Path) -> None:
    """O1: `--host` / `serve.host` with an empty label ('10..0.1') or one over 63 characters
    ended in a UnicodeError traceback from the IDNA codec, not the line a host that does not
    resolve gets."""
    env = {"BRIEFD_API_TOKEN": "a-long-enough-token-for-any-address"}
    for host in ("10..0.1", "a" * 64 + ".example"):
        process = briefd(tmp_path, "serve", "--host", host, "--no-index", env=env)
        out, err = process.communicate(timeout=60)
        assert (process.returncode, out) == (1, "")
        assert err == (
            f"error: serve.host: cannot resolve '{host}' (not a valid host name); use an address "
            "such as 127.0.0.1\n"
        )


def test_serve_on_an_ipv6_address_in_brackets_listens_there(tmp_path: Path) -> None:
    """O2: `--host [::1]` (as a URL writes it, and as serve.allowed_hosts and the hook take it)
    stopped with "cannot resolve '[::1]'": the brackets went to the resolver."""
    with socket.socket(socket.AF_INET6) as probe:
        try:
            probe.bind(("::1", 0))
        except OSError:
            pytest.skip("no IPv6 loopback on this machine")
    source = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, source)
    port = free_port()
    process = briefd(
        tmp_path, "serve", "--source", str(source), "--host", "[::1]", "--port", str(port)
    )
    try:
        health = until_up(process, f"http://[::1]:{port}/api/health")
        assert health.json()["documents"] == 45
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert f"briefd serving on http://[::1]:{port}  (dashboard" in out, err


def test_serve_listens_where_the_settings_say_and_its_help_says_so(tmp_path: Path) -> None:
    """O2: `briefd serve -h` said "--port  Port (default 8484)" and "--host … (default
    127.0.0.1…)" while serve.port / serve.host in briefd.yaml are the defaults it uses."""
    shown = briefd(tmp_path, "serve", "-h")
    words = " ".join(shown.communicate(timeout=60)[0].split())  # as wrapped at any width
    assert "--port <int range> Port (default: serve.port, 8484 unless set)." in words
    assert "--host <str> Address to bind (default: serve.host, 127.0.0.1 unless set; " in words
    port = free_port()
    (tmp_path / "briefd.yaml").write_text(f"serve:\n  port: {port}\n")
    (tmp_path / "k" / "domain").mkdir(parents=True)
    (tmp_path / "k" / "domain" / "a.md").write_text("# Refunds\n\nRefunds take five days.\n")
    process = briefd(tmp_path, "serve", "--source", "k")
    try:
        assert until_up(process, f"http://127.0.0.1:{port}/api/health").json()["documents"] == 1
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=30)
    assert f"briefd serving on http://127.0.0.1:{port}  (" in out


def test_a_host_with_a_port_or_a_scheme_is_refused_as_such_not_for_want_of_a_token(
    tmp_path: Path,
) -> None:
    """O2: `--host 127.0.0.1:9000` (or `serve.host: localhost:9000`, `http://localhost`) was
    "refusing to bind 127.0.0.1:9000 without a token: set BRIEFD_API_TOKEN…", and with a
    token "cannot resolve"; `briefd init` wrote it into the clients' URLs."""
    process = briefd(tmp_path, "serve", "--host", "127.0.0.1:9000", "--no-index")
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out) == (1, "")
    assert err == (
        "error: command-line option: serve.host: '127.0.0.1:9000' is not an address to bind "
        "(it holds a port; give the port as serve.port or --port); expected a host name or an "
        "address such as 127.0.0.1, 0.0.0.0 or ::1\n"
    )
    (tmp_path / "briefd.yaml").write_text("serve:\n  host: http://localhost\n")
    process = briefd(tmp_path, "serve", "--no-index")
    _, err = process.communicate(timeout=60)
    assert err == (
        "error: briefd.yaml: serve.host: 'http://localhost' is not an address to bind (a URL; "
        "give the host alone); expected a host name or an address such as 127.0.0.1, 0.0.0.0 "
        "or ::1\n"
    )


def test_serve_on_a_taken_port_fails_before_indexing_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        process = briefd(tmp_path, "serve", "--source", str(EXAMPLE), "--port", str(port))
        out, err = process.communicate(timeout=60)
    assert process.returncode == 1 and out == ""  # no "serving on" banner
    assert err.strip() == (
        f"error: cannot listen on 127.0.0.1:{port}: the port is in use (another `briefd "
        "serve`?); stop that process or pass --port N"
    )
    assert not (tmp_path / "x.db").exists()  # failed before the index was built


def test_demo_indexes_the_whole_example_whatever_layout_the_folder_configures(
    tmp_path: Path,
) -> None:
    """`briefd demo` in a team's folder took that folder's briefd.yaml scopes for the example:
    4 of its 45 documents indexed (only domain/adr matched `**/adr`), default scopes missing."""
    (tmp_path / "briefd.yaml").write_text(
        "scopes:\n"
        "  - {folder: docs, default: true}\n"
        '  - {folder: "teams/*"}\n'
        '  - {folder: "**/adr", scope: adr, default: true}\n'
        "proposals:\n"
        "  enabled: true\n",
        encoding="utf-8",
    )
    port = free_port()
    process = briefd(tmp_path, "demo", "--port", str(port))
    url = f"http://127.0.0.1:{port}"
    try:
        health = until_up(process, f"{url}/api/health")
        assert health.json()["documents"] == 45
        scopes = httpx.get(f"{url}/api/scopes").json()
        assert [s["name"] for s in scopes["scopes"]] == [
            "conventions", "domain", "projects/checkout", "projects/ledger"
        ]  # fmt: skip
        assert scopes["default_scopes"] == ["domain", "conventions"] and not scopes["warnings"]
        proposed = httpx.post(
            f"{url}/api/proposals",
            json={"doc_path": "domain/glossary.md", "change_description": "x", "new_content": "x"},
        )
        assert proposed.status_code == 403  # the example is no repository of the team's
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def test_serve_on_a_full_disk_serves_the_index_it_has(tmp_path: Path) -> None:
    """The index run at start-up failed on a full disk and briefd serve exited with it."""
    source = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, source)
    built = briefd(tmp_path, "index", "--source", str(source))
    _, err = built.communicate(timeout=120)
    assert built.returncode == 0, err
    for n in range(40):  # more to write than the full disk takes
        (source / "domain" / f"zebra-{n}.md").write_text(
            f"# Zebra {n}\n\n"
            + "".join(f"## Stripe {p}\nZebra stripes {n} {p}.\n" for p in range(8))
        )
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    serve = ["serve", "--source", str(source), "--port", str(port)]
    process = subprocess.Popen(
        [sys.executable, "-m", "briefd", "--db", str(tmp_path / "x.db"), *serve],
        cwd=tmp_path, env={**env, "BRIEFD_EMBEDDINGS__ENABLED": "false", "COLUMNS": "1000"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=full_disk(),
    )  # fmt: skip
    try:
        health = until_up(process, f"http://127.0.0.1:{port}/api/health")
        assert health.json()["documents"] == 45  # the index it had, none of the new documents
        hits = httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "retry policy"})
        assert hits.json()["hits"][0]["doc_path"] == "domain/retry-policy.md"
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert (
        f"warning: cannot write index {tmp_path / 'x.db'}: disk I/O error; free disk space and "
        "run the command again; serving the index as it was"
    ) in err


def test_the_commands_demo_prints_run_as_written_from_a_home_with_a_space(
    tmp_path: Path,
) -> None:
    """A macOS home ("/Users/Ada Lovelace"): the banner's `briefd --db <path> search …` split
    the unquoted path at the space, and a user pasting it got 'unexpected extra argument'."""
    data = tmp_path / "Application Support"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_EMBEDDINGS__ENABLED="false", XDG_DATA_HOME=str(data))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "briefd", "demo", "--port", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        until_up(process, f"http://127.0.0.1:{port}/api/health")
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    printed = [line.strip() for line in err.splitlines() if line.startswith("  briefd --db ")]
    assert len(printed) == 2, err
    for line in printed:  # pasted into a shell
        done = subprocess.run(
            ["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, (line, done.stderr)
        assert "domain/" in done.stdout, line


def test_a_degraded_replica_logs_whole_lines_and_no_pool_retries(tmp_path: Path) -> None:
    """S1, O5: with PostgreSQL away, the connection pool's retries reached the log through
    the MCP SDK's rich handler: each warning cut into lines at 80 columns, a dozen a minute,
    beside briefd's own 'unreachable' line. The log is briefd's timestamped lines alone."""
    source = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, source)
    port = free_port()
    env = {
        "BRIEFD_STATE__URL": f"postgresql://briefd:s3cret@127.0.0.1:{free_port()}/briefd",
        "BRIEFD_STATE__TIMEOUT_SECONDS": "1",
        "BRIEFD_SERVE__FLUSH_SECONDS": "0.5",
    }
    process = briefd(tmp_path, "serve", "--source", str(source), "--port", str(port), env=env)
    try:
        until_up(process, f"http://127.0.0.1:{port}/api/health")
        httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "retry policy"})
        time.sleep(3)
        health = httpx.get(f"http://127.0.0.1:{port}/api/health").json()
        assert health["status"] == "degraded"
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    logged = [line for line in err.splitlines() if not line.startswith(("indexing ", "indexed "))]
    stamped = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING|ERROR) ")
    assert [line for line in logged if not stamped.match(line)] == []
    assert not [line for line in logged if "error connecting" in line]
    unreachable = [line for line in logged if "ERROR the shared state" in line]
    assert len(unreachable) == 1 and "s3cret" not in err


def test_a_replica_starting_without_its_shared_state_says_so_once_not_the_pools_retries(
    tmp_path: Path,
) -> None:
    """S1, O5: a replica following a git source tells the shared state its commit during the
    first sync, before the server's log is set up: psycopg.pool's 'error connecting in …'
    warnings (rich-wrapped once the MCP SDK was loaded) came first, a dozen lines."""
    remote = Remote(tmp_path / "git")
    remote.push({"domain/retry.md": "# Retry policy\n\nRetry a failed payment three times.\n"})
    port = free_port()
    env = {
        "BRIEFD_SOURCE": remote.url,
        "BRIEFD_STATE__URL": f"postgresql://briefd:s3cret@127.0.0.1:{free_port()}/briefd",
        "BRIEFD_STATE__TIMEOUT_SECONDS": "1",
        "BRIEFD_SYNC__INTERVAL": "0",
    }
    process = briefd(tmp_path, "serve", "--port", str(port), env=env)
    try:
        assert until_up(process, f"http://127.0.0.1:{port}/api/health").status_code == 200
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    assert not [
        line for line in err.splitlines() if "error connecting" in line or "pool.py" in line
    ]
    said = [line for line in err.splitlines() if line.startswith("the shared state (")]
    assert len(said) == 1 and "is unreachable: " in said[0] and "s3cret" not in err


def test_a_flush_failing_on_a_full_disk_says_the_server_tries_again(tmp_path: Path) -> None:
    """The periodic flush's warning ended "free disk space and run the command again": there
    is no command to run, the server writes what waits at its next flush by itself."""
    source = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, source)
    built = briefd(tmp_path, "index", "--source", str(source))
    _, err = built.communicate(timeout=120)
    assert built.returncode == 0, err
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_EMBEDDINGS__ENABLED="false", BRIEFD_SERVE__FLUSH_SECONDS="0.2")
    process = subprocess.Popen(
        [sys.executable, "-m", "briefd", "--db", str(tmp_path / "x.db"), "serve", "--no-index",
         "--source", str(source), "--port", str(port)],
        cwd=tmp_path, env={**env, "COLUMNS": "1000"}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=full_disk(),
    )  # fmt: skip
    try:
        until_up(process, f"http://127.0.0.1:{port}/api/health")
        for n in range(60):  # more query log than the full disk takes
            httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": f"retry {n} " * 40})
        time.sleep(1)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    (said,) = [line for line in err.splitlines() if "save counters and the query log: " in line]
    assert said.endswith("; free disk space: the server tries again every 0.2 s"), said


def test_serve_on_a_full_disk_before_the_models_graph_is_stored_serves_by_keywords(
    tmp_path: Path,
) -> None:
    """The default model's ONNX graph is built into embeddings.model_dir on its first load (a
    new install, an upgrade, a models folder deleted to free space); on a full disk storing it
    failed and briefd serve exited at start ('error: cannot store the e5 ONNX graph … set
    embeddings.model_dir to a writable directory'), though it had an index to serve."""
    source = tmp_path / "knowledge" / "domain"
    source.mkdir(parents=True)
    (source / "retry.md").write_text("# Retry\n\n## Soft declines\nRetry soft declines.\n")
    models = {"BRIEFD_EMBEDDINGS__ENABLED": "true"}
    built = briefd(tmp_path, "index", "--source", str(source.parent), env=models)
    _, err = built.communicate(timeout=300)
    assert built.returncode == 0, err
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "briefd", "--db", str(tmp_path / "x.db"), "serve", "--port",
         str(port)],
        cwd=tmp_path, env={**env, "BRIEFD_EMBEDDINGS__MODEL_DIR": str(tmp_path / "elsewhere"),
                           "COLUMNS": "1000"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=full_disk(),
    )  # fmt: skip
    try:
        until_up(process, f"http://127.0.0.1:{port}/api/health")
        found = httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "soft declines"})
        answer = found.json()
        assert (answer["mode"], [h["doc_path"] for h in answer["hits"]]) == (
            "bm25",
            ["domain/retry.md"],
        )
        (said,) = answer["warnings"]
        assert "the embedding model failed (cannot store the e5 ONNX graph in " in said
        assert "; free disk space, or set embeddings.model_dir to a folder on another " in said
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert "warning: the embedding model failed to load (cannot store the e5 ONNX graph" in err


def test_sigterm_stops_the_server_cleanly_exit_0_and_the_index_closed(tmp_path: Path) -> None:
    """O2: uvicorn raises SIGTERM again once it has shut down, and the default handler killed
    the process there: exit -15 (143 in a container, a failed stop to a supervisor), and
    ``api.close()`` never ran (the index's -wal was left open, PostgreSQL's pool not closed).
    A clean stop now exits 0 after closing the index (SQLite removes the -wal it checkpoints)."""
    source = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, source)
    port = free_port()
    process = briefd(tmp_path, "serve", "--source", str(source), "--port", str(port))
    try:
        until_up(process, f"http://127.0.0.1:{port}/api/health")
        found = httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "refund window"})
        assert found.json()["hits"], found.text
        assert (tmp_path / "x.db-wal").exists()
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert not (tmp_path / "x.db-wal").exists(), err
