"""The real ``briefd sync`` / ``briefd proposals`` processes, and a sync killed with SIGKILL:
the index is the old state or the new one, never a mix, and proposals survive."""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from briefd.api import Briefd
from briefd.proposals import ProposalRequest
from briefd.store.db import Store
from briefd.sync.webhook import signature
from tests import zygote
from tests.conftest import free_disk, full_disk
from tests.processes import running
from tests.service.live import free_port
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote, git


def briefd_env(tmp_path: Path, remote: Remote) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(
        BRIEFD_SOURCE=remote.url,
        BRIEFD_DB=str(tmp_path / "data" / "index.db"),
        BRIEFD_EMBEDDINGS__ENABLED="false",
    )
    return env


def run(tmp_path: Path, remote: Remote, *args: str) -> subprocess.CompletedProcess[str]:
    return zygote.run(list(args), cwd=tmp_path, env=briefd_env(tmp_path, remote))


def test_sync_command_prints_a_summary(tmp_path: Path, remote: Remote) -> None:
    first = run(tmp_path, remote, "sync")
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0].startswith(f"Synced {remote.url} (clone, main) in ")
    assert lines[1] == f"  commit: {remote.head()[:12]} (none → {remote.head()[:12]})"
    assert lines[2] == ("  index: 2 documents, 2 chunks; 2 new, 0 changed, 0 deleted, 0 unchanged")
    assert lines[3:] == ["    new domain/glossary.md", "    new domain/retry.md"]

    remote.push({"domain/glossary.md": None})
    second = run(tmp_path, remote, "sync", "--json")
    data = json.loads(second.stdout)
    assert second.returncode == 0
    assert data["commit"] == remote.head() and data["error"] is None
    assert data["index"]["deleted"] == ["domain/glossary.md"]


def test_index_of_a_git_url_source_says_it_fetched_nothing(tmp_path: Path, remote: Remote) -> None:
    """T1/K3: a pull request merged on the remote, then `briefd index`, printed "0 changed"
    with the proposal still open and never why: it reads briefd's clone as the last sync left
    it. It says so, and what fetches; `briefd sync` then indexes the merge."""
    assert run(tmp_path, remote, "sync").returncode == 0
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"}, "Merge #1")

    indexed = run(tmp_path, remote, "index")

    assert indexed.returncode == 0, indexed.stderr
    assert "0 changed (0 new), 0 deleted, 2 unchanged" in indexed.stdout
    assert " ".join(indexed.stderr.split()) == (
        f"note: source is the git URL {remote.url}: briefd index read briefd's clone of it as "
        "the last sync left it, and fetched nothing; `briefd sync` fetches what was pushed "
        "since (a merged pull request), indexes it and refreshes the proposals' statuses"
    )
    assert "    new domain/fx.md" in run(tmp_path, remote, "sync").stdout.splitlines()


def test_version_says_which_commit_the_index_serves_without_fetching(
    tmp_path: Path, remote: Remote
) -> None:
    """Only `briefd sync` (which fetches first) and /api/health said which knowledge commit
    the index serves; `briefd version` now says it, from the index alone, with the last sync's
    error when that sync failed and the index kept serving the commit before."""
    assert run(tmp_path, remote, "sync").returncode == 0
    served = remote.head()
    remote.push({"domain/glossary.md": None})  # on the remote only: nothing fetched it yet
    shown = run(tmp_path, remote, "version", "--json")
    assert shown.returncode == 0, shown.stderr
    index = json.loads(shown.stdout)["index"]
    assert (index["path"], index["commit"]) == (str(tmp_path / "data" / "index.db"), served)
    assert index["sync_error"] is None and index["indexed_at"].startswith("20")
    line = run(tmp_path, remote, "version").stdout.splitlines()[1]
    assert line == (
        f"index: {tmp_path / 'data' / 'index.db'} serves commit {served} "
        f"(indexed {index['indexed_at']})"
    )
    remote.bare.rename(tmp_path / "moved.git")
    assert run(tmp_path, remote, "sync").returncode == 1
    failed = json.loads(run(tmp_path, remote, "version", "--json").stdout)["index"]
    assert failed["commit"] == served and failed["sync_error"], failed
    said = run(tmp_path, remote, "version").stdout.splitlines()[1]
    assert said.startswith(f"index: {tmp_path / 'data' / 'index.db'} serves commit {served} ")
    assert f"; the last sync ({failed['synced_at']}) failed: " in said


def test_sync_says_what_it_skipped_and_why_nothing_was_indexed(
    tmp_path: Path, remote: Remote
) -> None:
    """A team repository keeping its notes in docs/: `briefd sync` printed "Synced …" and
    "index: 0 documents", exit 0, and never why, nor any file it skipped on any sync (a stray
    byte, a file outside every scope), which `briefd index` prints."""
    remote.rewrite({"docs/retry.md": RETRY, "docs/setup.md": "# Setup\n\n## Steps\nRun it.\n"})
    first = run(tmp_path, remote, "sync")
    assert first.returncode == 1
    assert "  skipped docs/retry.md: outside every scope (domain/, conventions/, projects/*/)" in (
        first.stdout
    )
    said = " ".join(first.stderr.split())
    assert said.startswith("error: indexed 0 documents from "), said
    assert said.endswith("e.g. scopes: [{folder: docs, default: true}]"), said

    (remote.work / "domain").mkdir()
    (remote.work / "domain" / "retry.md").write_text(RETRY, encoding="utf-8")
    (remote.work / "domain" / "bad.md").write_bytes(b"# Bad\n\nsaid \x92so\x92\n")
    git(remote.work, "add", "domain")
    git(remote.work, "commit", "--quiet", "-m", "notes in domain/, one with a pasted quote")
    git(remote.work, "push", "--quiet", "origin", "main")
    second = run(tmp_path, remote, "sync")
    assert second.returncode == 0, second.stderr
    assert "  skipped domain/bad.md: not valid UTF-8 text: byte 0x92 at line 3" in second.stdout


def test_a_source_that_cannot_be_resolved_is_named_in_the_summary(
    tmp_path: Path, remote: Remote
) -> None:
    """A bare repository's folder as the source: the summary said "Sync failed for  (none)",
    and --json "source": "", naming nothing."""
    env = {**briefd_env(tmp_path, remote), "BRIEFD_SOURCE": str(remote.bare)}
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "sync", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and json.loads(done.stdout)["source"] == str(remote.bare)
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "sync"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert re.fullmatch(
        rf"Sync failed for {re.escape(str(remote.bare))} in \d+\.\d\ds\n", done.stdout
    )
    assert "is a bare git repository" in done.stderr


def test_sync_without_a_source_or_index_says_so(tmp_path: Path, remote: Remote) -> None:
    env = {k: v for k, v in briefd_env(tmp_path, remote).items() if k != "BRIEFD_SOURCE"}
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "sync"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: no knowledge source to sync: set 'source:' in briefd.yaml (a folder or a git "
        "URL) or BRIEFD_SOURCE\n"
    )
    gone = run(tmp_path, Remote(tmp_path / "elsewhere"), "sync")  # an empty remote: no index
    assert gone.returncode == 1
    assert gone.stderr.startswith("error: sync failed, there is no index yet: ")


def test_a_bare_repository_as_source_says_to_use_its_url(tmp_path: Path, remote: Remote) -> None:
    """A self-hosted remote's path (``/srv/git/kb.git``) was read as a folder: no document,
    and ``briefd sync`` said "Synced"."""
    env = {**briefd_env(tmp_path, remote), "BRIEFD_SOURCE": str(remote.bare)}
    git_dir = remote.work / ".git"

    def why(path: Path) -> str:
        return (
            f"knowledge source {path} is a bare git repository (or a .git folder): it holds "
            f"git's objects, not the documents; set source to its URL, {path.as_uri()}, and "
            "briefd clones it, or to a checkout's folder"
        )

    for args, line in (
        (["sync"], f"error: sync failed, there is no index yet: {why(remote.bare)}"),
        (["index"], f"error: {why(remote.bare)}"),
        (["index", "--source", str(git_dir)], f"error: {why(git_dir)}"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "briefd", *args],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 1, (args, done.stdout)
        assert done.stderr.strip().splitlines()[-1] == line, args


CHANGED_SETTINGS = {
    "scopes": (
        "scopes:\n  - {folder: domain, scope: rules, default: true}\n",
        ("rules", ["domain/glossary.md", "domain/retry.md"]),
        "default_scopes rules; scopes domain=rules; here: default_scopes domain,conventions; "
        "scopes domain=*,conventions=*,projects/*=*",
    ),
    "exclude": (
        "index:\n  exclude: [domain/glossary.md]\n",
        ("domain", ["domain/retry.md"]),
        "index.exclude domain/glossary.md; here: index.exclude (none)",
    ),
}


@pytest.mark.parametrize("changed_key", sorted(CHANGED_SETTINGS))
def test_a_server_does_not_undo_an_index_run_with_changed_settings(
    tmp_path: Path, remote: Remote, changed_key: str
) -> None:
    """K1, K3: a teammate renamed a scope (or excluded a file) in the project's briefd.yaml;
    after the pull a `briefd index` (a git hook's) read it, but the running server, with the
    settings it read at its start, read every document again at its next poll with the old
    ones, the next `briefd index` again with the new ones, and so on: the scopes (the
    excluded file) flipped at every run, and nothing said why. The server's sync now leaves
    that index as it is and says to restart."""
    text, (scope, paths), differences = CHANGED_SETTINGS[changed_key]
    with Briefd(git_settings(tmp_path, remote.url), embedder=None) as api:
        assert api.sync().ok
        changed = tmp_path / "changed.yaml"
        changed.write_text(text)
        clone = str(tmp_path / "data" / "repo")
        done = run(tmp_path, remote, "--config", str(changed), "index", "--source", clone)
        assert done.returncode == 0, done.stderr

        report = api.sync()

        assert [s.name for s in api.scopes()] == [scope]
        assert sorted(d.path for d in api.documents([scope])) == paths
        assert report.error == (
            "the index was last built with other settings than this briefd read at its start "
            f"({differences}): another briefd indexed it with a settings file that changed "
            "since; restart this one to read it again (or index with its settings); the index "
            "is left as that run built it"
        )


def test_sync_command_fails_with_one_line_and_keeps_the_index(
    tmp_path: Path, remote: Remote
) -> None:
    assert run(tmp_path, remote, "sync").returncode == 0
    remote.bare.rename(remote.bare.with_name("gone.git"))

    result = run(tmp_path, remote, "sync")

    assert result.returncode == 1
    error = result.stderr.strip().splitlines()
    assert len(error) == 1
    assert error[0].startswith(
        "error: sync failed, the previous index is still served: git fetch failed: fatal: "
    )
    assert result.stdout.startswith(f"Sync failed for {remote.url} (clone")
    search = run(tmp_path, remote, "search", "soft decline", "--json")
    assert json.loads(search.stdout)["hits"][0]["doc_path"] == "domain/retry.md"
    as_json = run(tmp_path, remote, "sync", "--json")  # the report, and the same one line
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["error"] in error[0]
    assert as_json.stderr.strip().splitlines() == error


def test_a_relative_db_path_clones_the_source_and_code_repos_beside_it(
    tmp_path: Path, remote: Remote
) -> None:
    """``db: data/index.db`` (relative, as a briefd.yaml in the working folder gives it): git ran
    in the clone's parent folder with the clone's relative path, so it cloned into
    data/data/.repo.cloning, the next step said "git is not installed", and every later run
    failed on the half-made clone."""
    env = {**briefd_env(tmp_path, remote), "BRIEFD_DB": "data/index.db"}
    env["BRIEFD_CODE__REPOS"] = json.dumps([{"source": remote.url, "name": "knowledge"}])
    for command in (["index"], ["index"], ["drift", "--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "briefd", *command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "data" / "repo" / "domain" / "retry.md").read_text() == RETRY.lstrip()
    assert (tmp_path / "data" / "code" / "knowledge.git" / "HEAD").is_file()
    assert not (tmp_path / "data" / "data").exists()
    (repo,) = json.loads(done.stdout)["repos"]
    assert (repo["name"], repo["error"]) == ("knowledge", None)


def test_a_file_where_a_clone_goes_is_one_line_naming_the_setting(
    tmp_path: Path, remote: Remote
) -> None:
    """A file at sync.checkout_dir (or code.checkout_dir): sync printed a NotADirectoryError
    traceback, then 'sync failed unexpectedly (…); see the log'; drift was a FileExistsError
    traceback."""
    (tmp_path / "taken").write_text("a file")
    code = {"BRIEFD_CODE__CHECKOUT_DIR": "taken/code"}
    code["BRIEFD_CODE__REPOS"] = json.dumps([{"source": remote.url, "name": "app"}])

    def briefd(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return zygote.run(list(args), cwd=tmp_path, env={**briefd_env(tmp_path, remote), **env})

    synced = briefd("sync", BRIEFD_SYNC__CHECKOUT_DIR="taken")
    assert (synced.returncode, synced.stderr) == (
        1,
        "error: sync failed, there is no index yet: taken is a file, not a folder, so nothing "
        "can be cloned into taken; set sync.checkout_dir to a folder\n",
    )
    assert briefd("sync").returncode == 0  # the knowledge in its default place
    drift = briefd("drift", "--json", **code)
    assert drift.returncode == 0, drift.stderr
    (repo,) = json.loads(drift.stdout)["repos"]
    assert repo["error"] == (
        f"code repo 'app' ({remote.url}): taken is a file, not a folder, so nothing can be "
        "cloned into taken/code/app.git; set code.checkout_dir to a folder"
    )


def test_proposals_command_lists_stored_proposals(tmp_path: Path, remote: Remote) -> None:
    missing = run(tmp_path, remote, "proposals")
    assert missing.returncode == 1 and "no index at" in missing.stderr
    assert run(tmp_path, remote, "sync").returncode == 0
    assert run(tmp_path, remote, "proposals").stdout.strip() == "No proposals."
    with Briefd(git_settings(tmp_path, remote.url), embedder=None) as api:
        made = api.propose_update(
            ProposalRequest("domain/retry.md", "Retry four times", RETRY.replace("three", "four"))
        )

    listed = json.loads(run(tmp_path, remote, "proposals", "--json").stdout)
    table = run(tmp_path, remote, "proposals").stdout

    assert [p["id"] for p in listed] == [made.id]
    assert listed[0]["branch"] == f"briefd/proposal-{made.id}"
    assert listed[0]["status"] == "pushed"
    assert made.id in table and "domain/retry.md" in table
    assert run(tmp_path, remote, "proposals", "--status", "open").stdout.strip() == (
        "No proposals with status open."
    )


def indexed_state(db: Path) -> tuple[set[tuple[str, str]], int, str]:
    """(path, content hash) of every document, chunk count, stored fingerprint; checks the
    FTS index against its content and the database's integrity."""
    store = Store.open(db)
    conn = store.conn
    try:
        docs = set(conn.execute("SELECT path, content_hash FROM documents").fetchall())
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
        fingerprint = conn.execute(
            "SELECT index_fingerprint FROM sync_state WHERE source = 'index'"
        ).fetchone()[0]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return docs, chunks, fingerprint
    finally:
        store.close()


def many_documents(count: int) -> dict[str, str | None]:
    section = "Paragraph about payment rule {n} with enough words to make a real chunk. " * 8
    return {
        f"domain/rules/rule-{n:04}.md": f"# Rule {n}\n\n"
        + "".join(f"## Part {p}\n{section.format(n=n)}\n\n" for p in range(4))
        for n in range(count)
    }


def test_sigkill_during_sync_loses_nothing(tmp_path: Path, remote: Remote) -> None:
    db = tmp_path / "data" / "index.db"
    assert run(tmp_path, remote, "sync").returncode == 0
    with Briefd(git_settings(tmp_path, remote.url), embedder=None) as api:
        proposal = api.propose_update(
            ProposalRequest("domain/retry.md", "Retry four times", RETRY.replace("three", "four"))
        )
    old = indexed_state(db)
    new_commit = remote.push({**many_documents(600), "domain/glossary.md": None}, "big change")
    branch_ref = tmp_path / "data" / "repo" / ".git" / "refs" / "heads" / "main"

    process = zygote.popen(
        ["sync"],
        cwd=tmp_path,
        env=briefd_env(tmp_path, remote),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while branch_ref.read_text().strip() != new_commit and time.monotonic() < deadline:
        time.sleep(0.005)  # wait until the clone is reset: the reindex is starting
    time.sleep(0.3)
    still_running = process.poll() is None
    process.send_signal(signal.SIGKILL)
    process.wait()

    assert still_running, "the sync finished before it could be killed; make it bigger"
    after_kill = indexed_state(db)
    assert after_kill == old  # killed mid-reindex: the old index, whole

    restarted = run(tmp_path, remote, "sync", "--json")
    assert restarted.returncode == 0, restarted.stderr
    docs, chunks, fingerprint = indexed_state(db)
    assert len(docs) == 601 and chunks == 600 * 4 + 1
    assert ("domain/glossary.md", next(h for p, h in old[0] if p == "domain/glossary.md")) not in (
        docs
    )
    assert fingerprint != old[2]
    assert json.loads(restarted.stdout)["commit"] == new_commit
    listed = json.loads(run(tmp_path, remote, "proposals", "--json").stdout)
    assert [p["id"] for p in listed] == [proposal.id]


def start_server(
    tmp_path: Path, remote: Remote, port: int, preexec_fn: Callable[[], None] | None = None
) -> subprocess.Popen[bytes]:
    env = {**briefd_env(tmp_path, remote), "BRIEFD_SYNC__WEBHOOK_SECRET": "s3cret"}
    env["BRIEFD_SYNC__INTERVAL"] = "0"
    env["BRIEFD_PROPOSALS__ENABLED"] = "true"
    env["BRIEFD_SERVE__FLUSH_SECONDS"] = "0.5"
    process = subprocess.Popen(
        [sys.executable, "-m", "briefd", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=preexec_fn,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("briefd serve did not start")


def serve_start_up(tmp_path: Path, env: dict[str, str]) -> str:
    """What ``briefd serve`` says on stderr until it answers (or exits), then stopped."""
    port = free_port()
    server = zygote.popen(
        ["serve", "--port", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.poll() is None:
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    return stderr


def test_serve_says_there_is_no_index_when_its_first_sync_fails(
    tmp_path: Path, remote: Remote
) -> None:
    """A first start against an unreachable remote said "serving the previous index"."""
    remote.bare.rename(remote.bare.with_name("gone.git"))
    env = {**briefd_env(tmp_path, remote), "BRIEFD_SYNC__INTERVAL": "45", "COLUMNS": "1000"}
    stderr = serve_start_up(tmp_path, env)
    said = " ".join(stderr.split())
    assert f"warning: sync of {remote.url} failed: git clone failed: fatal: " in said
    assert "serving the previous index" not in said
    assert said.split("; check the repository URL in `source`")[1].startswith(
        "; there is no index to serve yet: the server tries again every 45 s, or run "
        "`briefd sync` once the remote answers"
    )


def test_serve_start_up_lines_stay_whole_in_a_log(tmp_path: Path, remote: Remote) -> None:
    """stderr that is no terminal (a container's log) got the start-up sync line cut at 80
    columns: "synced <url> (main) at <commit>: 2 documents, 2" and "sections in 0.1s"."""
    env = {k: v for k, v in briefd_env(tmp_path, remote).items() if k != "COLUMNS"}
    stderr = serve_start_up(tmp_path, env)
    synced = [line for line in stderr.splitlines() if line.startswith("synced ")]
    assert len(f"synced {remote.url}") > 80  # long enough to have been cut
    whole = f"synced {re.escape(remote.url)} \\(main\\) at {remote.head()[:12]}: 2 documents, 2 "
    assert len(synced) == 1 and re.fullmatch(whole + r"sections in \d+\.\ds", synced[0]), synced


def test_serve_says_why_its_first_sync_indexed_nothing(tmp_path: Path, remote: Remote) -> None:
    """A git URL source with its notes in docs/: the start-up said "synced …: 0 documents, 0
    sections" and nothing more, while a folder source's start-up says why and what to set."""
    remote.rewrite({"docs/retry.md": RETRY})
    env = {**briefd_env(tmp_path, remote), "BRIEFD_SYNC__INTERVAL": "0", "COLUMNS": "1000"}
    said = " ".join(serve_start_up(tmp_path, env).split())
    assert ": 0 documents, 0 sections in " in said
    assert "warning: indexed 0 documents from " in said, said
    assert "(docs/retry.md); map their folders to scopes with 'scopes' in briefd.yaml" in said


def test_sigkill_of_the_server_during_a_webhook_sync(tmp_path: Path, remote: Remote) -> None:
    db = tmp_path / "data" / "index.db"
    port = free_port()
    server = start_server(tmp_path, remote, port)
    try:
        url = f"http://127.0.0.1:{port}"
        new = RETRY.replace("three", "four").lstrip("\n")
        made = httpx.post(
            f"{url}/api/proposals",
            json={"doc_path": "domain/retry.md", "change_description": "4", "new_content": new},
        ).json()
        old = indexed_state(db)
        new_commit = remote.push(many_documents(600), "big change")
        body = b'{"ref": "refs/heads/main"}'
        headers = {"X-Hub-Signature-256": signature("s3cret", body)}
        assert httpx.post(f"{url}/webhook/git", content=body, headers=headers).status_code == 202
        branch_ref = tmp_path / "data" / "repo" / ".git" / "refs" / "heads" / "main"
        deadline = time.monotonic() + 60
        while branch_ref.read_text().strip() != new_commit and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.3)
        assert server.poll() is None
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()

    assert indexed_state(db) == old  # killed mid-reindex: the old index, whole

    server = start_server(tmp_path, remote, port)  # startup sync: clone is there, reindex
    try:
        hits = httpx.get(f"{url}/api/search", params={"q": "payment rule 599"}).json()["hits"]
        assert hits and hits[0]["doc_path"].startswith("domain/rules/")
        listed = httpx.get(f"{url}/api/proposals").json()["proposals"]
        assert [p["id"] for p in listed] == [made["id"]]
    finally:
        server.terminate()
        server.wait(timeout=30)
    docs, chunks, _ = indexed_state(db)
    assert len(docs) == 602 and chunks == 600 * 4 + 2


def test_serve_on_a_full_disk_serves_the_last_synced_index(tmp_path: Path, remote: Remote) -> None:
    """The start-up sync's reindex failed on a full disk, recording that failure failed too,
    and briefd serve exited with the error instead of serving the index it had."""
    db = tmp_path / "data" / "index.db"
    reader = synced_past_a_long_read(tmp_path, remote)
    old = indexed_state(db)
    remote.push({"domain/zebra.md": "# Zebra\n\n## Stripes\nZebra stripes.\n"}, "a zebra")
    port = free_port()
    env = {**briefd_env(tmp_path, remote), "BRIEFD_SYNC__INTERVAL": "0", "COLUMNS": "1000"}
    server = subprocess.Popen(
        [sys.executable, "-m", "briefd", "serve", "--port", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=full_disk(),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                hits = httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "rule 42"})
                break
            except httpx.TransportError:
                assert server.poll() is None, server.communicate()
                assert time.monotonic() < deadline, "briefd serve did not come up"
                time.sleep(0.05)
        assert hits.json()["hits"][0]["doc_path"] == "domain/rules/rule-0042.md"
    finally:
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=30)
        reader.close()
    said = " ".join(stderr.split())
    assert (
        f"warning: sync of {remote.url} failed, serving the previous index: cannot write index "
        f"{db}: disk I/O error; free disk space and run the command again"
    ) in said
    assert indexed_state(db) == old


def synced_past_a_long_read(tmp_path: Path, remote: Remote) -> sqlite3.Connection:
    """Sync, then sync 60 rules more while a read (a report, say) holds on: the write-ahead
    log cannot start over while that read lasts, so on a full disk (:func:`full_disk`) every
    later write fails, even a small one. Close the returned reader to end the read."""
    assert run(tmp_path, remote, "sync").returncode == 0
    reader = sqlite3.connect(tmp_path / "data" / "index.db")
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM documents").fetchone()
    remote.push(many_documents(60), "more rules")
    assert run(tmp_path, remote, "sync").returncode == 0
    return reader


def test_a_proposal_on_a_full_disk_is_kept_until_it_can_be_written(
    tmp_path: Path, remote: Remote
) -> None:
    """The branch was pushed, then recording the proposal failed and the agent got a 503
    ("try again"): the proposal was never listed, and proposing again made a second branch."""
    reader = synced_past_a_long_read(tmp_path, remote)
    port = free_port()
    server = start_server(tmp_path, remote, port, preexec_fn=full_disk())
    try:
        url = f"http://127.0.0.1:{port}"
        new = RETRY.replace("three", "four").lstrip("\n")
        body = {"doc_path": "domain/retry.md", "change_description": "4", "new_content": new}
        made = httpx.post(f"{url}/api/proposals", json=body, timeout=60)
        assert made.status_code == 201, made.text
        proposal = made.json()
        assert remote.head(proposal["branch"]) == proposal["commit_hash"]
        free_disk(server.pid)
        deadline = time.monotonic() + 60
        listed: list[str] = []
        while proposal["id"] not in listed and time.monotonic() < deadline:
            time.sleep(0.1)  # the next flush writes it
            listed = [p["id"] for p in httpx.get(f"{url}/api/proposals").json()["proposals"]]
        assert listed == [proposal["id"]]
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
        reader.close()
    stored = json.loads(run(tmp_path, remote, "proposals", "--json").stdout)
    assert [(p["id"], p["status"]) for p in stored] == [(proposal["id"], "pushed")]


def test_a_stopped_server_leaves_no_git_waiting_on_a_remote(tmp_path: Path, remote: Remote) -> None:
    """The remote stops answering (it accepts the connection, then nothing) while the server
    polls it: stopping the server (SIGTERM, as `docker stop`) left the sync's git fetch and its
    `git-remote-http` running, for as long as the remote kept the connection open; then, with
    the fetch ended, the sync went on to `git ls-remote` on the same remote and the server did
    not stop within docker's 10 s (killed, its counters and query log unsaved)."""
    assert run(tmp_path, remote, "sync").returncode == 0
    with socket.create_server(("127.0.0.1", 0)) as hanging:
        url = f"http://127.0.0.1:{hanging.getsockname()[1]}/stopped-answering.git"
        env = {**briefd_env(tmp_path, remote), "BRIEFD_SOURCE": url}
        env.update(BRIEFD_SYNC__INTERVAL="1", BRIEFD_SYNC__GIT_TIMEOUT="60")
        server = zygote.popen(
            ["serve", "--no-index", "--port", str(free_port())],
            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            assert _eventually(lambda: running(url) != [], 30)  # the sync waits on it
        finally:
            server.terminate()
            server.wait(10)
        assert _eventually(lambda: running(url) == [], 2), running(url)


def test_sigterm_while_the_server_starts_ends_its_clone_and_says_so(
    tmp_path: Path, remote: Remote
) -> None:
    """O5, K3: SIGTERM while `briefd serve` clones before serving (a first start) had its
    default action: the process died on the spot, its git clone and `git-remote-http` left
    waiting on the remote; as a container's PID 1 (no default action) it was ignored until
    docker killed it 10 s later. It is Ctrl-C's stop now: git ended, one line, exit 130."""
    with socket.create_server(("127.0.0.1", 0)) as hanging:
        url = f"http://127.0.0.1:{hanging.getsockname()[1]}/never-answers.git"
        server = _cloning_server(tmp_path, remote, url)
        try:
            assert _eventually(lambda: running(url) != [], 30)  # the clone waits on it
        finally:
            server.terminate()
            out, err = _ended(server, 10)  # docker stop's SIGKILL comes 10 s after its SIGTERM
        assert (server.returncode, out, err) == (130, "", "error: interrupted\n")
        assert _eventually(lambda: running(url) == [], 2), running(url)


def test_sigterm_another_thread_receives_stops_the_start_up_at_once(
    tmp_path: Path, remote: Remote
) -> None:
    """O5: the kernel hands a process's SIGTERM to any thread of it. One the clone's thread
    received set Python's flag, but the main thread, waiting on that thread for 20 s before
    serving, woke only then: docker stop's SIGKILL came first (1 stop in 20 on a loaded
    machine). Sent to that thread here, as the kernel may."""
    tgkill = ctypes.CDLL(None, use_errno=True).tgkill
    with socket.create_server(("127.0.0.1", 0)) as hanging:
        url = f"http://127.0.0.1:{hanging.getsockname()[1]}/never-answers.git"
        server = _cloning_server(tmp_path, remote, url)
        try:
            assert _eventually(lambda: running(url) != [], 30)
            tasks = sorted(int(t.name) for t in Path(f"/proc/{server.pid}/task").iterdir())
            assert tgkill(server.pid, tasks[-1], signal.SIGTERM) == 0, tasks  # not the main
        finally:
            out, err = _ended(server, 5)
        assert (server.returncode, out, err) == (130, "", "error: interrupted\n")
        assert _eventually(lambda: running(url) == [], 2), running(url)


def _cloning_server(
    tmp_path: Path, remote: Remote, url: str
) -> subprocess.Popen[str] | zygote.WarmProcess:
    """`briefd serve` on a first start, its clone of ``url`` waiting on the remote (60 s)."""
    env = {**briefd_env(tmp_path, remote), "BRIEFD_SOURCE": url}
    env.update(BRIEFD_SYNC__GIT_TIMEOUT="60")
    return zygote.popen(
        ["serve", "--port", str(free_port())],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def _ended(process: subprocess.Popen[str], seconds: float) -> tuple[str, str]:
    """What ``process`` printed once it exits within ``seconds``; else it is killed (not left
    running into the next test) and the test fails."""
    try:
        return process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(
            f"still running {seconds:g} s after SIGTERM: {out!r} {err!r}"
        ) from None


def _eventually(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
