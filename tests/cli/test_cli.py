"""The real ``briefd`` process: exit codes, exact messages, JSON shapes."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest

from briefd.retrieval.search import RANKING_VERSION
from briefd.store.db import Store
from tests import zygote
from tests.conftest import EXAMPLE, REPO
from tests.ports import free_port


def briefd(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    clean["BRIEFD_EMBEDDINGS__ENABLED"] = "false"  # BM25 here; the real model has its own tests
    return zygote.run(list(args), cwd=cwd, env={**clean, **(env or {})})


def indexed_folder(factory: pytest.TempPathFactory, name: str, source: Path = EXAMPLE) -> Path:
    """A new working folder whose default index holds ``source`` (BM25), built by the CLI."""
    cwd = factory.mktemp(name)
    result = briefd("index", "--source", str(source), cwd=cwd)
    assert result.returncode == 0, result.stderr
    return cwd


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_folder(tmp_path_factory, "cli")


def test_a_count_of_one_is_said_in_the_singular(tmp_path: Path) -> None:
    """An index of one document said "Indexed …: 1 documents, 1 chunks"; the MCP scopes text
    and the dashboard said "1 documents" too (tests/service/test_dashboard_sync_browser.py)."""
    source = tmp_path / "knowledge"
    (source / "domain").mkdir(parents=True)
    (source / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 30 days.\n", "utf-8")
    result = briefd("index", "--source", str(source), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(
        rf"Indexed {re.escape(str(source))}: 1 document, 1 chunk in \d\.\d\ds",
        result.stdout.splitlines()[0],
    )
    bundle = briefd("bundle", "refunds within 30 days", cwd=tmp_path)
    assert bundle.returncode == 0, bundle.stderr
    assert " · 1 section · " in bundle.stderr.splitlines()[0], bundle.stderr
    (source / "domain" / "refunds.md").rename(source / "refunds.md")  # outside every scope
    (tmp_path / "new").mkdir()
    empty = briefd("index", "--source", str(source), cwd=tmp_path / "new")
    assert "and the file it found is outside those folders (refunds.md)" in empty.stderr


def test_files_outside_every_scope_say_where_the_scopes_came_from(tmp_path: Path) -> None:
    """A new user wrote briefd.yaml (its scopes) in the knowledge folder and indexed it from
    elsewhere: 13 of 16 files were skipped, each "add its folder to 'scopes' in briefd.yaml",
    and nothing said that no settings file had been read, nor that one there is not (QA)."""
    source = tmp_path / "knowledge"
    (source / "runbooks").mkdir(parents=True)
    (source / "runbooks" / "failover.md").write_text("# Failover\n\nPromote the replica.\n")
    (source / "domain").mkdir()
    (source / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 30 days.\n")
    (source / "briefd.yaml").write_text("scopes:\n  - folder: runbooks\n  - folder: domain\n")
    (tmp_path / "elsewhere").mkdir()
    env = {"HOME": str(tmp_path / "home")}
    away = briefd("index", "--source", str(source), cwd=tmp_path / "elsewhere", env=env)
    looked = ", ".join(
        str(tmp_path / "elsewhere" / name) for name in ("briefd.yaml", ".briefd/briefd.yaml")
    )
    assert (
        f"warning: {source / 'briefd.yaml'} is not read from the knowledge folder (no settings "
        f"file was read (looked for {looked}, "
        f"{tmp_path / 'home' / '.config' / 'briefd' / 'briefd.yaml'}): the default scopes "
        f"hold): run briefd in {source}, or pass --config {source / 'briefd.yaml'}"
    ) in " ".join(away.stdout.split())
    for _ in range(2):  # nothing changed: answered without indexing, then from the stamp
        again = briefd("index", "--source", str(source), cwd=tmp_path / "elsewhere", env=env)
        assert again.stdout.splitlines()[2:] == away.stdout.splitlines()[2:]
    named = briefd(
        "--config", str(source / "briefd.yaml"), "--db", "x.db", "index", "--source", str(source),
        cwd=tmp_path / "elsewhere", env=env,
    )  # fmt: skip
    assert named.returncode == 0 and "2 documents" in named.stdout and "warning" not in named.stdout
    (source / "notes").mkdir()
    (source / "notes" / "n.md").write_text("# Note\n\nText.\n")
    there = briefd("index", "--source", ".", cwd=source, env=env)  # it is read from there
    assert "skipped notes/n.md: outside every scope" in there.stdout
    assert there.returncode == 0 and "warning" not in there.stdout


def test_index_summary_and_no_op_rerun(indexed: Path) -> None:
    result = briefd("index", "--source", str(EXAMPLE), cwd=indexed)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert re.fullmatch(
        rf"Indexed {re.escape(str(EXAMPLE))}: \d+ documents, \d+ chunks in \d\.\d\ds", lines[0]
    )
    assert re.fullmatch(r"  0 changed \(0 new\), 0 deleted, \d+ unchanged, 1 skipped", lines[1])
    assert lines[2] == (
        "  skipped README.md: outside every scope (domain/, conventions/, projects/*/); "
        "not served: add its folder to 'scopes' in briefd.yaml"
    )


def test_hundreds_of_skipped_files_are_counted_past_the_first_twenty(tmp_path: Path) -> None:
    """A knowledge folder of 300 notes in a folder no scope takes, beside one that is: each
    was a line of its own (3,000 in a big team's repository) on every run, the no-op ones
    too. The first 20 are listed, then how many more; --json holds every one."""
    source = tmp_path / "knowledge"
    (source / "domain").mkdir(parents=True)
    (source / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 30 days.\n", "utf-8")
    (source / "notes").mkdir()
    for n in range(300):
        (source / "notes" / f"n{n:03d}.md").write_text(f"# Note {n}\n\nText.\n", "utf-8")
    first = briefd("index", "--source", str(source), cwd=tmp_path)
    again = briefd("index", "--source", str(source), cwd=tmp_path)
    listed = briefd("index", "--source", str(source), "--json", cwd=tmp_path)
    assert first.returncode == again.returncode == listed.returncode == 0, first.stderr
    for result in (first, again):
        lines = result.stdout.splitlines()
        assert len(lines) == 2 + 20 + 1, result.stdout
        assert lines[2].startswith("  skipped notes/n000.md: outside every scope")
        assert lines[-1] == "  … and 280 more skipped files (--json lists every one)"
    assert len(json.loads(listed.stdout)["skipped"]) == 300


def test_search_json_has_the_hit_fields(indexed: Path) -> None:
    result = briefd("search", "retry policy for card payments", "--json", cwd=indexed)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["ranking_version"] == "r13" and data["mode"] == "bm25"
    hit = data["hits"][0]
    assert {
        "chunk_id",
        "doc_path",
        "heading",
        "content",
        "score",
        "tokens",
        "start_line",
        "end_line",
    } <= set(hit)
    assert hit["doc_path"] == "domain/retry-policy.md"
    assert data["gate"] == {"decision": "off", "reasons": []}  # BM25: no relevance gate


def test_search_with_fts_punctuation_exits_zero(indexed: Path) -> None:
    result = briefd("search", 'retry-policy: "at most once" (idempotent) AND OR NOT *', cwd=indexed)
    assert result.returncode == 0, result.stderr
    assert "domain/retry-policy.md" in result.stdout


def test_explain_shows_sql_and_scores(indexed: Path) -> None:
    result = briefd("search", "capture at most once", "--explain", "--top-k", "2", cwd=indexed)
    assert result.returncode == 0
    assert "bm25(chunks_fts, 3.0, 2.0, 1.0)" in result.stdout
    assert '-- MATCH "capture" AND "most" AND "once"' in result.stdout
    assert re.search(r"all-terms rank 1 bm25 -\d+\.\d+", result.stdout)


def test_a_folder_given_as_the_index_says_to_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    for args in (("search", "retry"), ("index", "--source", str(EXAMPLE))):
        result = briefd(*args, cwd=tmp_path, env={"BRIEFD_DB": "data"})
        assert result.returncode == 1, args
        assert result.stderr == (
            "error: the index path data is a folder; give the index file's path (--db, "
            "BRIEFD_DB or db: in briefd.yaml), e.g. data/briefd.db\n"
        ), (args, result.stderr)


def test_an_index_that_cannot_be_made_says_why_and_what_to_do(tmp_path: Path) -> None:
    """A file where the index's folder goes said "[Errno 17] File exists", and SQLite's refusal
    "cannot open index x.db: unable to open database file", neither with a next step."""
    (tmp_path / "data").write_text("not a folder")
    (tmp_path / "gone.db").symlink_to(tmp_path / "nowhere" / "x.db")  # SQLite cannot create it
    for db, line in (
        ("data/briefd.db", "cannot create the index data/briefd.db (data is a file, not a "
         "folder); pass --db (or 'db:' in briefd.yaml) a path in a folder you can write"),
        ("gone.db", "cannot open or write the index gone.db (unable to open database file); "
         "check that its directory exists and is writable by you, or pass --db (or 'db:' in "
         "briefd.yaml) elsewhere"),
    ):  # fmt: skip
        result = briefd("--db", db, "index", "--source", str(EXAMPLE), cwd=tmp_path)
        assert (result.returncode, result.stderr) == (1, f"error: {line}\n"), db


def test_a_read_only_index_file_is_named_not_its_folder(tmp_path: Path) -> None:
    """An index file made read-only (chmod a-w, a copy off a read-only mount) in a folder the
    user can write said "check that its directory exists and is writable by you": the folder
    was fine, and the file, and the -wal and -shm SQLite then made read-only like it, went
    unnamed. The message names them and how to make them writable; the index is unchanged."""
    assert briefd("--db", "k.db", "index", "--source", str(EXAMPLE), cwd=tmp_path).returncode == 0
    (tmp_path / "k.db").chmod(0o444)
    as_user = ["setpriv", "--inh-caps=-dac_override", "--bounding-set=-dac_override"]
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("root writes read-only files; setpriv is needed to run briefd as a user")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env["BRIEFD_EMBEDDINGS__ENABLED"] = "false"
    run = [*(as_user if os.geteuid() == 0 else []), sys.executable, "-m", "briefd", "--db"]
    done = subprocess.run(
        [*run, "k.db", "index", "--source", str(EXAMPLE), "--rebuild"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    said = "error: cannot write the index k.db (attempt to write a readonly database): k.db"
    assert (done.returncode, done.stderr[: len(said)]) == (1, said), done.stderr
    assert "read-only for you; make" in done.stderr, done.stderr
    assert "writable (chmod u+w k.db" in done.stderr, done.stderr  # SQLite's -wal/-shm after it
    assert "directory" not in done.stderr, done.stderr
    for name in ("k.db", "k.db-wal", "k.db-shm"):
        if (tmp_path / name).exists():
            (tmp_path / name).chmod(0o644)
    found = briefd("--db", "k.db", "search", "refund window", "--json", cwd=tmp_path)
    assert json.loads(found.stdout)["hits"][0]["doc_path"] == "domain/refunds.md"


def test_a_read_only_index_in_a_read_only_folder_names_both(tmp_path: Path) -> None:
    """An index copied off a read-only mount into a folder then made read-only too: the
    message named the file alone (chmod u+w k.db), and once that was done, the next run
    failed on the folder: two rounds for one fix. A search reads it (read-only and immutable:
    SQLite cannot make the -shm it reads a WAL index with); an index run names both."""
    folder = tmp_path / "ro"
    folder.mkdir()
    assert briefd("--db", "k.db", "index", "--source", str(EXAMPLE), cwd=folder).returncode == 0
    for name in ("k.db-wal", "k.db-shm"):
        (folder / name).unlink(missing_ok=True)
    (folder / "k.db").chmod(0o444)
    folder.chmod(0o555)
    as_user = ["setpriv", "--inh-caps=-dac_override", "--bounding-set=-dac_override"]
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("root writes read-only files; setpriv is needed to run briefd as a user")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env["BRIEFD_EMBEDDINGS__ENABLED"] = "false"
    run = [*(as_user if os.geteuid() == 0 else []), sys.executable, "-m", "briefd", "--db"]
    try:
        found = subprocess.run(
            [*run, str(folder / "k.db"), "search", "refund window", "--json"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        done = subprocess.run(
            [*run, str(folder / "k.db"), "index", "--source", str(EXAMPLE)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        folder.chmod(0o755)
    assert json.loads(found.stdout)["hits"][0]["doc_path"] == "domain/refunds.md", found.stderr
    said = " ".join(done.stderr.split())
    assert done.returncode == 1, said
    assert f"{folder / 'k.db'} is read-only for you, and so is its folder {folder}, where " in said
    assert f"make them writable (chmod u+w {folder / 'k.db'} {folder}, or chown" in said


def test_an_empty_index_file_is_no_index_and_stays_empty(tmp_path: Path) -> None:
    """``touch briefd.db`` (or a copy cut short): read as no index, by the hook too, and no
    reader writes a schema into it, which would make it read as a built index with nothing in
    it; ``briefd index`` then builds into it."""
    (tmp_path / "briefd.db").touch()
    said = (
        "the index file briefd.db is empty (0 bytes): nothing was indexed into it; build it "
        "with `briefd index --source DIR`\n"
    )
    env = {"BRIEFD_DB": "briefd.db"}
    for args in (("search", "retry"), ("scopes",), ("bundle", "retry declined cards")):
        result = briefd(*args, cwd=tmp_path, env=env)
        assert (result.returncode, result.stderr) == (1, "error: " + said), args
    hook = json.dumps({"prompt": "how do we retry declined card payments", "session_id": "s"})
    result = subprocess.run(
        [sys.executable, "-m", "briefd", "recall", "--no-server"],
        cwd=tmp_path,
        env={**os.environ, **env},
        input=hook,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "briefd recall: " + said
    assert (tmp_path / "briefd.db").stat().st_size == 0
    (tmp_path / "nothing").mkdir()  # a run that finds no document leaves an empty index
    assert briefd("index", "--source", "nothing", cwd=tmp_path, env=env).returncode == 1
    result = briefd("search", "retry", cwd=tmp_path, env=env)
    assert result.stdout == "Nothing found: no document is indexed yet; run `briefd index`.\n"
    assert briefd("index", "--source", str(EXAMPLE), cwd=tmp_path, env=env).returncode == 0
    result = briefd("search", "retry declined", cwd=tmp_path, env=env)
    assert result.returncode == 0 and "domain/retry-policy.md" in result.stdout


def test_a_search_while_the_first_index_is_built_says_so(tmp_path: Path) -> None:
    """`briefd demo` prints searches to try while its first index may still run: one run then
    said "no document is indexed yet; run `briefd index`", which was being done."""
    env = {"BRIEFD_DB": "briefd.db"}
    (tmp_path / "nothing").mkdir()  # a run that finds no document leaves an empty index
    assert briefd("index", "--source", "nothing", cwd=tmp_path, env=env).returncode == 1
    Store.open(tmp_path / "first.db", create=True).close()  # as a first run makes it
    with (
        (tmp_path / "briefd.db.index.lock").open("a") as held,
        (tmp_path / "first.db.index.lock").open("a") as first,
    ):
        fcntl.flock(held, fcntl.LOCK_EX)  # as an index run of another process holds it
        fcntl.flock(first, fcntl.LOCK_EX)
        result = briefd("search", "retry", cwd=tmp_path, env=env)
        # the bundle the demo prints said "the index is empty; build it with `briefd index`"
        bundle = briefd("--db", "first.db", "bundle", "retry declined cards", cwd=tmp_path)
    building = (
        "no document is indexed yet: an index run (`briefd index`, `serve` or `demo`) is "
        "building it now; try again once it says `indexed …`"
    )
    assert result.stdout == f"Nothing found: {building}.\n"
    assert (bundle.returncode, bundle.stderr) == (1, f"error: {building}\n")
    result = briefd("search", "retry", cwd=tmp_path, env=env)  # no run: the advice it was
    assert result.stdout == "Nothing found: no document is indexed yet; run `briefd index`.\n"
    bundle = briefd("--db", "first.db", "bundle", "retry declined cards", cwd=tmp_path)
    assert "build it with `briefd --db first.db index` first" in bundle.stderr


@pytest.mark.parametrize(
    "url, shown",
    [
        ("https://github.com/acme/kb.git", "https://github.com/acme/kb.git"),
        ("file:///srv/git/kb.git", "file:///srv/git/kb.git"),
        ("git@github.com:acme/kb.git", "git@github.com:acme/kb.git"),
        ("https://bot:ghp_s3@cret@github.com/acme/kb.git", "https://***@github.com/acme/kb.git"),
    ],
)
def test_a_git_url_given_as_source_folder_is_told_where_urls_go(
    tmp_path: Path, url: str, shown: str
) -> None:
    """`briefd index --source URL` said only "is not a directory; pass --source DIR", though
    `source:` in briefd.yaml takes git URLs; and it printed a token in the URL whole. The URL
    it told to put in `source:` was shown with one slash (`https:/github.com/…`, as a path
    keeps it), so copied there it named no repository: it is shown as it was typed."""
    result = briefd("index", "--source", url, cwd=tmp_path)
    assert (result.returncode, result.stderr) == (
        1,
        f"error: knowledge source {shown} is not a directory: --source takes a folder; to "
        "follow a git repository, put its URL in `source:` (briefd.yaml) or BRIEFD_SOURCE, and "
        "`briefd sync` or `briefd serve` clones it\n",
    )


def test_a_git_address_without_its_scheme_as_source_is_told_to_write_it_as_a_url(
    tmp_path: Path,
) -> None:
    """`source: github.com/acme/kb.git` (the address as a browser's bar shows it) was read as a
    folder beside briefd.yaml, and the error said only "does not exist; pass --source DIR"."""
    (tmp_path / "briefd.yaml").write_text("source: github.com/acme/kb.git\n", encoding="utf-8")
    result = briefd("index", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.endswith(
        "; if github.com/acme/kb.git is a git repository's address, write it as a URL in "
        "`source:` (https://github.com/acme/kb.git), and `briefd sync` or `briefd serve` "
        "clones it\n"
    ), result.stderr
    (tmp_path / "notes").mkdir()
    plain = briefd("index", "--source", str(tmp_path / "notes" / "gone" / "domain"), cwd=tmp_path)
    assert plain.returncode == 1 and "repository's address" not in plain.stderr, plain.stderr


def rebuild_run(tmp_path: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """``briefd index --rebuild`` of the example, BM25 only, as a process of its own."""
    return subprocess.Popen(
        [sys.executable, "-m", "briefd", "index", "--source", str(EXAMPLE), "--rebuild"],
        cwd=tmp_path,
        env={**env, "BRIEFD_EMBEDDINGS__ENABLED": "false"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_run_that_waited_for_another_says_so(tmp_path: Path) -> None:
    """A second ``briefd index`` takes its turn behind the run holding the index: its report
    said "in 0.15s" after a wait of half a minute; it now names the wait."""
    assert briefd("index", "--source", str(EXAMPLE), cwd=tmp_path).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    with (tmp_path / ".briefd" / "briefd.db.index.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another run, in the middle of its work
        run = rebuild_run(tmp_path, env)
        _until_blocked_on(held, run)  # however long the process takes to start
        time.sleep(1.5)
        assert run.poll() is None  # it waits for the run holding the lock
        fcntl.flock(held, fcntl.LOCK_UN)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    first = out.splitlines()[0]
    assert re.fullmatch(
        r"Rebuilt .*: 45 documents, \d+ chunks in \d+\.\d\ds, after waiting "
        r"(\d+\.\d)s for another index run",
        first,
    ), first
    assert float(first.rsplit("waiting ", 1)[1].split("s")[0]) >= 1.5


def test_a_run_waiting_for_another_says_so_while_it_waits(tmp_path: Path) -> None:
    """Without a terminal (CI, cron, a git hook) a run waiting for another printed nothing
    until the other was done, however long that took."""
    assert briefd("index", "--source", str(EXAMPLE), cwd=tmp_path).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    with (tmp_path / ".briefd" / "briefd.db.index.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        run = rebuild_run(tmp_path, env)
        _until_blocked_on(held, run)  # said before it blocks, if at all
        fcntl.flock(held, fcntl.LOCK_UN)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0 and out.startswith("Rebuilt "), err
    assert err.startswith("waiting for another index run of this index\n"), err


def test_a_run_waiting_for_another_process_names_it(tmp_path: Path) -> None:
    """A run waiting for another said only 'waiting for another index run of this index': a
    git hook's or cron's run behind one that hung (a stuck mount, a stopped terminal) waited
    for ever, and nothing said which process to look at or whether ending it was safe."""
    assert briefd("index", "--source", str(EXAMPLE), cwd=tmp_path).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    hold = (
        "import sys; from pathlib import Path; from briefd.store.runlock import index_run_lock\n"
        "with index_run_lock(Path('.briefd/briefd.db')):\n"
        "    print('held', flush=True); sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold], cwd=tmp_path, env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    assert holder.stdin is not None and holder.stdout is not None
    assert holder.stdout.readline() == "held\n"
    run = rebuild_run(tmp_path, env)
    with (tmp_path / ".briefd" / "briefd.db.index.lock").open("a") as lock:
        _until_blocked_on(lock, run)
    holder.communicate(timeout=30)  # its stdin closed: it ends its run
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0 and out.startswith("Rebuilt "), err
    assert re.fullmatch(
        rf"waiting for another index run of this index \(pid {holder.pid} since "
        rf"\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC; if it hangs, ending it loses nothing: "
        rf"`kill {holder.pid}`\)",
        err.splitlines()[0],
    ), err
    assert (tmp_path / ".briefd" / "briefd.db.index.lock").read_text() == ""


def test_serve_waiting_for_an_index_run_says_so(tmp_path: Path) -> None:
    """briefd serve updates the index before it serves; while another run held the index it
    printed nothing, and did not serve, for as long as that run took."""
    assert briefd("index", "--source", str(EXAMPLE), cwd=tmp_path).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    serve = ["serve", "--source", str(EXAMPLE), "--port", str(free_port())]
    with (tmp_path / ".briefd" / "briefd.db.index.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        server = subprocess.Popen(
            [sys.executable, "-m", "briefd", *serve],
            cwd=tmp_path,
            env={**env, "BRIEFD_EMBEDDINGS__ENABLED": "false", "COLUMNS": "1000"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        _until_blocked_on(held, server)  # said before it blocks, if at all
        fcntl.flock(held, fcntl.LOCK_UN)
    try:
        assert server.stderr is not None
        first = server.stderr.readline()
        second = server.stderr.readline()  # the index run it waited for
    finally:
        server.terminate()
        server.communicate(timeout=30)
    assert first == "waiting for another index run of this index: serving starts after it\n"
    assert second.startswith("indexed "), second


def _until_blocked_on(held: IO[str], run: subprocess.Popen[str]) -> None:
    """Until ``run`` waits for the lock ``held`` holds: a blocked flock is listed in
    /proc/locks with "->" and the file's inode."""
    inode = f":{os.fstat(held.fileno()).st_ino} "
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and run.poll() is None:
        locks = Path("/proc/locks").read_text(encoding="ascii").splitlines()
        if any("->" in line and inode in line for line in locks):
            return
        time.sleep(0.05)
    raise AssertionError(f"briefd index never waited for the lock (exit {run.poll()})")


def test_a_base_of_another_request_is_not_called_unknown(indexed: Path) -> None:
    """The CLI's summary says what REST and MCP say of a base this index issued for another
    request: the full bundle comes back, and the base was not unknown."""
    first = briefd("bundle", "partial refunds", cwd=indexed)
    base = re.match(r"bundle ([0-9a-f]{16}) ", first.stderr.splitlines()[-1])
    assert first.returncode == 0 and base, first.stderr
    other = briefd("bundle", "webhook retries", "--base", base.group(1), cwd=indexed)
    assert other.returncode == 0, other.stderr
    assert other.stderr.splitlines()[-1].endswith(
        " · base unknown or compiled for another request: full bundle (recovered)"
    ), other.stderr


def test_unknown_scope_is_one_line_error(indexed: Path) -> None:
    result = briefd("search", "retry", "--scopes", "projects/nope", cwd=indexed)
    assert result.returncode == 1
    assert result.stderr == (
        "error: scope 'projects/nope' does not exist; known scopes: conventions, domain, "
        "projects/checkout, projects/ledger (or 'all')\n"
    )
    assert "Traceback" not in result.stderr


def test_docs_doc_and_recall_take_the_scope_alias(indexed: Path) -> None:
    """search and bundle take `--scope` beside `--scopes`; `briefd docs --scope X` and
    `briefd doc P --scope X` said "No such option: --scope" (exit 2), recall "unknown option"."""
    docs = briefd("docs", "--scope", "projects/ledger", "--json", cwd=indexed)
    assert docs.returncode == 0, docs.stderr
    assert {d["scope"] for d in json.loads(docs.stdout)["documents"]} == {"projects/ledger"}
    path = "projects/ledger/month-end-close.md"
    doc = briefd("doc", path, "--scope", "projects/ledger", "--json", cwd=indexed)
    assert doc.returncode == 0, doc.stderr
    assert json.loads(doc.stdout)["path"] == path
    recall = briefd("recall", "--no-server", "--scope", "domain", "--json", "refunds", cwd=indexed)
    assert (recall.returncode, recall.stderr) == (0, ""), recall.stderr


def test_a_project_document_without_its_scope_says_the_cli_option(indexed: Path) -> None:
    """The error said "add it to scopes", a word the CLI does not have (it takes --scopes)."""
    result = briefd("context", "projects/ledger/month-end-close.md", cwd=indexed)
    assert result.returncode == 1
    assert result.stderr == (
        "error: no document 'projects/ledger/month-end-close.md' in scopes domain, conventions; "
        "scope 'projects/ledger' is not requested: add it to scopes (--scopes on the CLI) or "
        "use 'all' to read it\n"
    )
    asked = briefd(
        "context", "projects/ledger/month-end-close.md", "--scopes", "projects/ledger", cwd=indexed
    )
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("> projects/ledger/month-end-close.md:"), asked.stdout[:200]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("context", ""), "the document path is empty; name a document, e.g. domain/glossary.md"),
        (
            ("doc", "/etc/passwd"),
            "in the index (or outside the requested scopes); list documents with `briefd docs`",
        ),
    ],
)
def test_bad_arguments_are_one_line_errors(
    indexed: Path, args: tuple[str, ...], message: str
) -> None:
    result = briefd(*args, cwd=indexed)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("proposals", "--status", "bogus"),
            "'--status': 'bogus'; use local, pushed, open, merged",
        ),
        (("search", "refunds", "--related", "-1"), "'--related': -1 is not in the range x>=0"),
        (("search", "refunds", "--top-k", "0"), "'--top-k' / '-k': 0 is not in the range x>=1"),
        (("search", "refunds", "--query-mode", "bogus"), "'--query-mode': 'bogus'; use text or"),
        (
            ("bundle", "refunds", "--max-tokens", "5"),
            "'--max-tokens': 5 is not in the range 100<=x<=200000",
        ),
        (
            ("context", "domain/x.md", "--hard-limit", "9"),
            "'--hard-limit': 9 is not in the range 100<=x<=800000",
        ),
        (("gaps", "--since", "fortnight"), "'--since': 'fortnight'; use a span such as 30d, 12h"),
        (("usage", "--since", "-3d"), "'--since': '-3d'; use a span such as 30d, 12h or 2w"),
        (("init", "--client", "emacs"), "'--client': 'emacs'; use claude-code, cursor, codex"),
        (("init", "--url", "briefd.example.com"), "expected an http:// or https:// URL, got"),
        (("serve", "--port", "70000"), "'--port': 70000 is not in the range 1<=x<=65535"),
        (("demo", "--port", "0"), "'--port': 0 is not in the range 1<=x<=65535"),
        (("model", "pull", "--model", "e5-large"), "unknown embedding model 'e5-large'"),
        (("model", "pull", "--url", "mirror.example.com"), "'--url': expected an http:// or"),
        (
            ("jira", "search", "refund", "--limit", "51"),
            "'--limit': 51 is not in the range 1<=x<=50",
        ),
        (
            ("confluence", "page", "12", "--max-tokens", "9"),
            "'--max-tokens': 9 is not in the range x>=50",
        ),
    ],
)
def test_a_bad_option_value_is_a_usage_error_before_anything_is_read(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    """Exit 2, as click says a mistyped option, whether typer or briefd checks the value; in a
    folder without an index or settings, so nothing but the value can be wrong."""
    result = briefd(*args, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr.startswith("error: Invalid value for ") and message in result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.endswith(" -h`\n")
    assert not list(tmp_path.iterdir())  # no index, no banner, nothing started


def test_missing_index_message(tmp_path: Path) -> None:
    result = briefd("search", "x", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        "error: no index at .briefd/briefd.db; build one with `briefd index --source DIR`\n"
    )


def test_a_missing_index_named_with_db_is_built_by_the_line_given(tmp_path: Path) -> None:
    """`briefd --db team.db search x` said to build it with `briefd index --source DIR`, which
    builds .briefd/briefd.db: the search failed again on team.db."""
    missing = briefd("--db", "team.db", "search", "refund window", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (
        1,
        "error: no index at team.db; build one with `briefd --db team.db index --source DIR`\n",
    )
    line = re.findall(r"`(briefd [^`]*)`", missing.stderr)[0].replace("DIR", str(EXAMPLE))
    assert briefd(*shlex.split(line)[1:], cwd=tmp_path).returncode == 0
    found = briefd("--db", "team.db", "search", "refund window", "--json", cwd=tmp_path)
    assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr


def test_missing_source_message(tmp_path: Path) -> None:
    result = briefd("index", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        "error: no knowledge source configured; pass --source DIR, set 'source:' in "
        "briefd.yaml, or set BRIEFD_SOURCE\n"
    )


def test_a_source_folder_whose_name_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    """A folder named on a Latin-1 system ("café" as the byte 0xe9): its files were read, then
    recording the run failed with a UnicodeEncodeError traceback; and a mistyped such name,
    on an index that exists, failed recording its error the same way."""
    assert briefd("index", "--source", str(EXAMPLE), cwd=tmp_path).returncode == 0
    latin1 = tmp_path / os.fsdecode(b"k-caf\xe9")
    shutil.copytree(EXAMPLE / "domain", latin1 / "domain")
    result = briefd("index", "--source", str(latin1), "--json", cwd=tmp_path)
    where = len(str(tmp_path)) + len("/k-caf\xe9")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"error: knowledge source {tmp_path}/k-caf\\xe9: its path is not valid UTF-8 text "
        f"(byte 0xe9 at character {where}); rename that folder\n"
    )
    missing = briefd("index", "--source", os.fsdecode(b"caf\xe9"), cwd=tmp_path)
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: knowledge source caf\\udce9 does not exist;")
    assert "Traceback" not in missing.stderr


def test_an_index_file_whose_name_is_not_utf8_is_built_and_said(tmp_path: Path) -> None:
    """``--db`` under a folder named on a Latin-1 system: the index was built, then the run
    ended in a UnicodeEncodeError traceback (where the index's recall daemon keeps its
    socket), its report unsaid."""
    db = os.fsdecode(b"caf\xe9.db")
    result = briefd("--db", db, "index", "--source", str(EXAMPLE), cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith(f"Indexed {EXAMPLE}: 45 documents, 338 chunks in ")
    found = briefd("--db", db, "search", "refund", "--json", cwd=tmp_path)
    assert json.loads(found.stdout)["hits"]


def test_bad_config_value_message(tmp_path: Path) -> None:
    (tmp_path / "briefd.yaml").write_text("search:\n  top_k: lots\n")
    result = briefd("scopes", cwd=tmp_path)
    assert result.returncode == 1
    assert (
        result.stderr
        == "error: briefd.yaml: search.top_k: expected a whole number ≥ 1, got 'lots'\n"
    )


def test_env_override_reaches_settings(indexed: Path) -> None:
    result = briefd("search", "refund", "--json", cwd=indexed, env={"BRIEFD_SEARCH__TOP_K": "2"})
    assert len(json.loads(result.stdout)["hits"]) == 2


def test_doc_shows_links_and_backlinks(indexed: Path) -> None:
    result = briefd("doc", "domain/retry-policy.md", "--json", cwd=indexed)
    assert result.returncode == 0, result.stderr
    view = json.loads(result.stdout)
    assert view["title"] == "Retry policy for card payments"
    assert any(c["heading"] == "Retry Policy" for c in view["chunks"])
    assert view["backlinks"], "the retry policy is linked from other documents"
    missing = briefd("doc", "domain/retry-polcy.md", cwd=indexed)
    assert missing.stderr == (
        "error: no document 'domain/retry-polcy.md' in the index (or outside the requested "
        "scopes); did you mean domain/retry-policy.md?\n"
    )


def test_doc_and_context_take_the_files_own_path(tmp_path: Path) -> None:
    """In a repository whose briefd.yaml has `source: knowledge`, the path a shell completes
    (knowledge/domain/refunds.md at the top, refunds.md in its folder, the absolute path)
    said "no document 'knowledge/domain/refunds.md' in the index"."""
    shutil.copytree(EXAMPLE, tmp_path / "knowledge")
    (tmp_path / "briefd.yaml").write_text("source: knowledge\n", "utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert briefd("index", cwd=tmp_path).returncode == 0
    folder = tmp_path / "knowledge" / "domain"
    for path, cwd in [
        ("knowledge/domain/refunds.md", tmp_path),
        ("./refunds.md", folder),
        ("../domain/refunds.md", folder),
        (str(folder / "refunds.md"), tmp_path / "knowledge"),
    ]:
        shown = briefd("doc", path, cwd=cwd)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith("domain/refunds.md  (domain, updated "), shown.stdout
        context = briefd("context", path, "--mode", "manifest", cwd=cwd)
        assert context.returncode == 0, context.stderr
        assert json.loads(context.stdout)["target"] == "domain/refunds.md"


def test_doc_names_the_front_matter_key_of_a_relation_backlink(indexed: Path) -> None:
    """A backlink declared in front matter (``depends_on``) is in no section: it was printed as
    ``domain/currency-and-rounding.md:6 ()``."""
    result = briefd("doc", "domain/adr/0004-integer-minor-units.md", cwd=indexed)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    backlinks = lines[lines.index("backlinks (7):") + 1 :]
    assert "  domain/currency-and-rounding.md:6 (front matter: depends_on)" in backlinks
    assert not any(line.endswith("()") for line in backlinks)
    assert "  domain/adr/0001-event-sourced-ledger.md:45 (Decision)" in backlinks


def test_scopes_and_links(indexed: Path) -> None:
    scopes = json.loads(briefd("scopes", "--json", cwd=indexed).stdout)
    assert [s["name"] for s in scopes["scopes"]] == [
        "conventions",
        "domain",
        "projects/checkout",
        "projects/ledger",
    ]
    assert scopes["default_scopes"] == ["domain", "conventions"]  # as GET /api/scopes says
    links = briefd("links", cwd=indexed)
    assert links.returncode == 0
    assert "broken links: 1" in links.stdout
    assert "legacy-settlement-batch (no document matches 'legacy-settlement-batch')" in links.stdout


def test_version(tmp_path: Path) -> None:
    result = briefd("version", cwd=tmp_path)  # no index here: the versions alone
    assert re.fullmatch(
        r"briefd \d+\.\d+\.\d+ \(index schema \d+, SQLite \d+\.\d+\.\d+\)\n", result.stdout
    )


def test_version_names_the_commit_a_checkouts_index_was_read_at(tmp_path: Path) -> None:
    """A git checkout indexed with `briefd index`: `briefd version` names the commit its
    documents were read at; a commit made since is not it until the next index run."""
    source = tmp_path / "kb"
    (source / "domain").mkdir(parents=True)
    (source / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 180 days.\n")
    for args in (["init", "--quiet"], ["add", "."], ["commit", "--quiet", "-m", "notes"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=source)
    read_at = subprocess.run(["git", "rev-parse", "HEAD"], cwd=source, capture_output=True)
    assert briefd("index", "--source", str(source), cwd=tmp_path).returncode == 0
    (source / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 90 days.\n")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "90"], cwd=source
    )
    shown = json.loads(briefd("version", "--json", cwd=tmp_path).stdout)["index"]
    db = tmp_path / ".briefd" / "briefd.db"
    assert (shown["path"], shown["commit"]) == (str(db), read_at.stdout.decode().strip())
    assert "synced_at" not in shown  # no sync: a checkout briefd only reads
    assert briefd("version", cwd=tmp_path).stdout.splitlines()[1] == (
        f"index: {db} serves commit {shown['commit']} (indexed {shown['indexed_at']})"
    )


def test_version_of_a_checkout_without_commits_does_not_say_outside_git(tmp_path: Path) -> None:
    """Knowledge in a git repository with no commit yet (`git init`, nothing committed):
    `briefd version` said "serves a folder outside git"."""
    source = tmp_path / "kb"
    (source / "domain").mkdir(parents=True)
    (source / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 180 days.\n")
    subprocess.run(["git", "init", "--quiet"], cwd=source, check=True)
    assert briefd("index", "--source", str(source), cwd=tmp_path).returncode == 0
    shown = json.loads(briefd("version", "--json", cwd=tmp_path).stdout)["index"]
    assert (shown["commit"], shown.get("git_without_commits")) == (None, True)
    db = tmp_path / ".briefd" / "briefd.db"
    assert briefd("version", cwd=tmp_path).stdout.splitlines()[1] == (
        f"index: {db} serves files of a git checkout read before its first commit "
        f"(indexed {shown['indexed_at']})"
    )
    plain = tmp_path / "plain"
    shutil.copytree(source / "domain", plain / "domain")
    assert briefd("index", "--source", str(plain), cwd=tmp_path / "kb").returncode == 0
    assert "serves a folder outside git (indexed" in briefd("version", cwd=source).stdout


def test_version_json_shows_the_gate_calibration_of_the_index(indexed: Path) -> None:
    result = briefd("version", "--json", cwd=indexed)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["gate_calibration"] == {}  # BM25 only: no model, nothing calibrated


def test_every_command_has_help_and_is_in_the_readme() -> None:
    """The real process lists every command; each command's own help runs in-process on the
    same typer app (one interpreter instead of one per command)."""
    from typer.testing import CliRunner

    from briefd.cli.main import app

    readme = (REPO / "README.md").read_text()
    names = [c.name for c in app.registered_commands]
    assert names, "no commands registered"
    top = briefd("--help", cwd=REPO)
    assert top.returncode == 0 and "Usage:" in top.stdout, top.stderr
    recall = briefd("recall", "--help", cwd=REPO)  # the launcher's one special case
    assert recall.returncode == 0 and "Usage:" in recall.stdout, recall.stderr
    runner = CliRunner()
    for name in names:
        assert name is not None
        assert f"briefd {name}" in readme, f"`briefd {name}` is missing from README.md"
        assert name in top.stdout, f"`briefd --help` does not list {name}"
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.stdout, (name, result.output)


def test_document_text_is_never_read_as_rich_markup(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    (root / "domain").mkdir(parents=True)
    (root / "domain" / "volumes.md").write_text(
        "# Volumes\n\nMount the wombat volume with [/data] flags; see [[glossary]] and [bold].\n"
    )
    assert briefd("index", "--source", str(root), cwd=tmp_path).returncode == 0
    result = briefd("search", "mount wombat volume flags", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "[/data]" in result.stdout and "[[glossary]]" in result.stdout
    assert "[bold]" in result.stdout


def test_a_title_over_several_lines_is_one_line_of_the_search_cell(tmp_path: Path) -> None:
    """``title: |`` broke the cell's breadcrumb in two, "# not a heading" a line of its own."""
    root = tmp_path / "kb"
    (root / "domain").mkdir(parents=True)
    (root / "domain" / "currency.md").write_text(
        "---\ntitle: |\n  Currency conversion\n  # not a heading\n---\n"
        "Conversion uses the daily rate snapshot.\n"
    )
    assert briefd("index", "--source", str(root), cwd=tmp_path).returncode == 0
    result = briefd("search", "currency conversion", cwd=tmp_path, env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    rows = [line.strip("│ ") for line in result.stdout.splitlines()]
    assert "Currency conversion # not a heading" in rows
    assert "# not a heading" not in rows


def test_briefd_doc_puts_a_title_over_several_lines_on_its_line(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    (root / "domain").mkdir(parents=True)
    (root / "domain" / "currency.md").write_text(
        "---\ntitle: |\n  Currency conversion\n  # not a heading\n---\nDaily rates.\n"
    )
    assert briefd("index", "--source", str(root), cwd=tmp_path).returncode == 0
    result = briefd("doc", "domain/currency.md", cwd=tmp_path)
    assert result.stdout.splitlines()[1] == "title: Currency conversion # not a heading"


def test_recall_server_off_leaves_other_commands_working(indexed: Path) -> None:
    result = briefd("scopes", cwd=indexed, env={"BRIEFD_RECALL__SERVER": "off"})
    assert result.returncode == 0, result.stderr
    assert "domain" in result.stdout


def test_bundle_and_serve_take_the_tuned_file_search_takes(indexed: Path) -> None:
    good, bad = indexed / "best.json", indexed / "broken.json"
    good.write_text(json.dumps({"search": {"candidates": 5}, "tuned": {"trials": 3}}))
    bad.write_text(json.dumps({"search": {"candidats": 5}}))
    result = briefd("bundle", "partial refunds", "--config", str(good), "--json", cwd=indexed)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["items"]
    for command in (["bundle", "partial refunds"], ["serve", "--no-index", "--port", "1"]):
        failed = briefd(*command, "--config", str(bad), cwd=indexed)
        assert failed.returncode == 1
        assert "unknown key 'search.candidats' (did you mean 'search.candidates'?)" in failed.stderr


def test_a_missing_tuned_file_is_named_a_tuned_file(tmp_path: Path) -> None:
    """`briefd search q --config missing.json` said "cannot read config file missing.json",
    sending the user to their briefd.yaml for what is a file from `briefd tune`."""
    commands = (["search", "q"], ["bundle", "q"], ["eval"], ["serve", "--no-index", "--port", "1"])
    for command in commands:
        result = briefd(*command, "--config", "missing.json", cwd=tmp_path)
        assert (result.returncode, result.stderr) == (
            1,
            "error: cannot read tuned file missing.json: No such file or directory (--config "
            "after the command names a file from `briefd tune`; a settings file goes before the "
            f"command: `briefd --config FILE {command[0]} …`)\n",
        ), command


def test_a_tuned_file_from_another_ranking_is_applied_with_a_warning(indexed: Path) -> None:
    """V3: a file `briefd tune` wrote for an earlier ranking (its record says r1) was laid
    over the settings without a word, its knobs chosen for a ranking this briefd no longer
    has; it is still applied, and every command that takes it says so on stderr."""
    stale, current = indexed / "stale.json", indexed / "current.json"
    record = {"set": "/team/queries.yaml", "mode": "hybrid", "ranking_version": "r1"}
    stale.write_text(json.dumps({"search": {"candidates": 5}, "tuned": record}))
    record = {**record, "ranking_version": RANKING_VERSION}
    current.write_text(json.dumps({"search": {"candidates": 5}, "tuned": record}))
    said = (
        f"warning: {stale} was tuned for ranking r1, and this briefd ranks with "
        f"{RANKING_VERSION}: its knobs were chosen for a ranking it no longer has; run `briefd "
        f"tune --queries /team/queries.yaml --output {stale}` again"
    )
    for command in (["search", "partial refunds", "--json"], ["bundle", "partial refunds"]):
        result = briefd(*command, "--config", str(stale), cwd=indexed)
        assert result.returncode == 0, result.stderr
        assert said in " ".join(result.stderr.split()), command
        fresh = briefd(*command, "--config", str(current), cwd=indexed)
        assert fresh.returncode == 0 and "warning" not in fresh.stderr, fresh.stderr
    assert json.loads(
        briefd("search", "partial refunds", "--json", "--config", str(stale), cwd=indexed).stdout
    )["hits"]


def test_search_paths_lead_with_the_documents_that_govern_them(indexed: Path) -> None:
    args = ["search", "fix a rounding bug in the retry", "--json", "--top-k", "3"]
    plain = json.loads(briefd(*args, cwd=indexed).stdout)
    led = json.loads(briefd(*args, "--paths", "libs/go/money/round.go", cwd=indexed).stdout)
    assert led["hits"][0]["doc_path"] == "domain/currency-and-rounding.md"
    direct = [h for h in led["hits"] if h["related_to"] is None]
    assert len(direct) == 3 and led["hits"] != plain["hits"]


def test_the_command_line_loads_neither_the_service_nor_the_mcp_sdk(indexed: Path) -> None:
    """Every ``briefd`` command imports the command line; FastAPI and the MCP SDK cost ~1 s
    and ~40 MB of that, so only ``serve`` (and the Atlassian and drift commands, for their
    output models) load them."""
    heavy = ("mcp", "mcp_types", "fastapi", "uvicorn", "briefd.service.app")
    code = (
        "import sys, json; from briefd.cli.main import run; sys.argv = ['briefd', *sys.argv[1:]]\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]), file=sys.stderr)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env["BRIEFD_EMBEDDINGS__ENABLED"] = "false"

    def loaded(*args: str) -> tuple[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=indexed, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        return done.stdout, done.stderr.strip().splitlines()[-1]

    out, heavy_loaded = loaded("search", "soft decline retries", "--json")
    assert json.loads(out)["hits"] and json.loads(heavy_loaded) == []
    for args in (("jira", "issue", "SHOP-1"), ("confluence", "page", "42")):
        _, heavy_loaded = loaded(*args)  # not configured: says so before any output model
        assert json.loads(heavy_loaded) == [], args


def test_tune_checks_where_it_writes_before_the_trials(indexed: Path, tmp_path: Path) -> None:
    queries = str(REPO / "eval" / "golden" / "queries.yaml")
    for output, message in (
        (tmp_path / "missing" / "b.json", f"the folder {tmp_path / 'missing'} does not exist"),
        (tmp_path, f"--output {tmp_path} is a directory"),
    ):
        result = briefd("tune", "--queries", queries, "--output", str(output), cwd=indexed)
        assert result.returncode == 1
        assert len(result.stderr.strip().splitlines()) == 1  # one line, no traceback, no trials
        assert message in result.stderr


def test_tune_never_writes_its_result_over_a_file_of_another_kind(
    indexed: Path, tmp_path: Path
) -> None:
    """V3: `--output` naming the golden set or the settings file would have replaced it with
    the tuned JSON; only an empty file or an earlier tune's result is replaced."""
    golden = tmp_path / "golden.yaml"
    golden.write_text((REPO / "eval" / "golden" / "queries.yaml").read_text(encoding="utf-8"))
    settings = tmp_path / "briefd.yaml"
    settings.write_text(f"source: {EXAMPLE}\nsearch:\n  top_k: 5\n")
    for output in (golden, settings):
        before = output.read_text(encoding="utf-8")
        result = briefd("tune", "--queries", str(golden), "--output", str(output), cwd=indexed)
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr == (
            f"error: --output {output} holds something other than a result of `briefd tune` (a "
            "golden set, settings?), which it would replace; name a new file, e.g. --output "
            "best.json\n"
        )
        assert output.read_text(encoding="utf-8") == before
    earlier = tmp_path / "best.json"
    earlier.write_text('{"search": {"top_k": 4}, "tuned": {"trials": 5}}\n')
    source = ("--source", str(EXAMPLE))
    again = briefd("tune", "--queries", str(golden), *source, "--output", str(earlier), cwd=indexed)
    assert "--output" not in again.stderr  # accepted; here it stops for want of embeddings
    assert "tuning needs embeddings" in again.stderr


def test_tune_refuses_a_golden_file_eval_refuses(indexed: Path, tmp_path: Path) -> None:
    broken = tmp_path / "golden.yaml"
    original = (REPO / "eval" / "golden" / "queries.yaml").read_text(encoding="utf-8")
    broken.write_text(
        original.replace("path: domain/chargebacks.md", "path: domain/chargebackz.md", 1)
    )
    source = str(EXAMPLE)
    out = tmp_path / "best.json"
    for args in (
        ("eval", "--queries", str(broken), "--source", source),
        ("tune", "--queries", str(broken), "--source", source, "--output", str(out)),
    ):
        result = briefd(*args, cwd=indexed)
        assert result.returncode == 1, args
        assert "expects section" in result.stderr and "domain/chargebackz.md" in result.stderr
    assert not out.exists()  # no tuned file from a broken set


def test_eval_check_json_prints_json_alone(indexed: Path, tmp_path: Path) -> None:
    gate = tmp_path / "thresholds.yaml"
    gate.write_text(
        "sets:\n"
        f"  - name: golden-en\n    queries: {REPO / 'eval' / 'golden' / 'queries.yaml'}\n"
        "    min:\n      bm25: {recall@5: 0.5}\n"
        f"  - name: absent\n    dataset: {tmp_path / 'no-such-set'}\n"
        "    min:\n      bm25: {ndcg@10: 0.1}\n"
    )
    result = briefd("eval", "--check", str(gate), "--json", cwd=indexed)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # the status lines went to stderr
    assert data["failures"] == [] and data["reports"][0]["mode"] == "bm25"
    assert "skipped absent" in result.stderr and "eval gate passed" in result.stderr


def test_eval_misses_with_json_says_where_the_misses_are(tmp_path: Path) -> None:
    """`briefd eval --misses --json` printed the JSON alone: --misses was dropped without a
    word, and a script author thought no query missed."""
    (tmp_path / "q.yaml").write_text(
        f"source: {EXAMPLE}\nqueries:\n  - {{id: a, query: zebra unicorn, type: keyword, "
        "expected: [{path: domain/chargebacks.md, heading: Evidence deadline}]}\n"
    )
    result = briefd("eval", "--queries", "q.yaml", "--misses", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)["reports"][0]["outcomes"][0]  # stdout: the JSON alone
    assert (outcome["id"], outcome["metrics"]["recall@5"]) == ("a", 0.0)
    assert (
        "note: --misses lists nothing with --json, which holds every query's outcome: a miss is "
        "an outcome in reports[].outcomes whose recall@5 is below 1, and recall[].losses says "
        "why recall did not inject an expected section"
    ) in " ".join(result.stderr.split())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("search", "-3DS failures"),
            "error: No such option: -3; text that starts with '-' goes after `--` (`briefd "
            "search -- '-3DS …'`); see `briefd search -h`",
        ),
        (("serch", "x"), "error: No such command 'serch'. Did you mean 'search', 'serve'?; "
         "see `briefd -h`"),
        (("search",), "error: Missing argument 'query'; see `briefd search -h`"),
        (("bundle",), "error: Missing argument 'task': describe the task, or pass --issue or "
         "--paths; see `briefd bundle -h`"),  # was exit 1, as if it had run
        (("search", "retry", "policy"), "error: Got unexpected extra argument(s) (policy); text "
         "of several words goes in quotes (`briefd search 'retry policy'`); see `briefd search -h`"),
        (("bundle", "add", "partial", "refunds"), "error: Got unexpected extra argument(s) "
         "(partial refunds); text of several words goes in quotes (`briefd bundle 'add partial "
         "refunds'`); see `briefd bundle -h`"),
        (("scopes", "all"), "error: Got unexpected extra argument(s) (all); see `briefd scopes -h`"),
        (("search", "--", "-3DS", "failures"), "error: Got unexpected extra argument(s) "
         "(failures); text of several words goes in quotes (`briefd search -- '-3DS failures'`); "
         "see `briefd search -h`"),  # the line given was `briefd search '-3DS failures'`: -3
        (("search", "--", "-3DS failures", "-k", "1", "--json"), "error: Got unexpected extra "
         "argument(s) (-k 1 --json); options go before `--` (`briefd search -k 1 --json -- "
         "'-3DS failures'`); see `briefd search -h`"),  # was: quote the options into the text
        (("search", "--", "refund " * 2000, "-k", "3"), "error: Got unexpected extra "
         "argument(s) (-k 3); options go before `--` (`briefd search -k 3 -- '"
         + ("refund " * 12)[:80] + "…'`); see `briefd search -h`"),  # was the whole 14 KB query
        (("-v",), "error: No such option: -v; see `briefd -h`"),  # no text to pass after `--`
        (("docs", "-x"), "error: No such option: -x; see `briefd docs -h`"),
        (("search", "retry", "--db", "x.db"), "error: --db is a global option: it goes before "
         "the command (`briefd --db FILE search …`); see `briefd -h`"),
        (("model", "list", "--config=c.yaml"), "error: --config is a global option: it goes "
         "before the command (`briefd --config FILE model list …`); see `briefd -h`"),
    ],
)  # fmt: skip
def test_usage_mistakes_are_one_line(indexed: Path, args: tuple[str, ...], message: str) -> None:
    result = briefd(*args, cwd=indexed)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", message + "\n")


def test_the_command_line_a_usage_error_gives_runs_when_pasted(indexed: Path) -> None:
    """Options written after `--` (README's `briefd search -- "-3DS failures"`, then `-k 1`)."""
    mistake = briefd("search", "--", "-3DS failures", "-k", "1", "--json", cwd=indexed)
    line = re.findall(r"`(briefd search [^`]*)`", mistake.stderr)[0]
    result = briefd(*shlex.split(line)[1:], cwd=indexed)
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)["hits"]
    assert [h["related_to"] is None for h in hits].count(True) == 1, hits


def test_text_starting_with_a_dash_goes_after_the_double_dash(indexed: Path) -> None:
    result = briefd("search", "--json", "--", "-3DS soft decline retries", cwd=indexed)
    assert result.returncode == 0 and json.loads(result.stdout)["hits"]


@pytest.mark.parametrize("empty", ["", ",", " , "])
def test_an_empty_scopes_option_reads_the_default_scopes(indexed: Path, empty: str) -> None:
    """As REST reads ``?scopes=``: not a search of no scope ("Nothing found … (none)")."""
    plain = briefd("search", "refund window", "--json", cwd=indexed)
    result = briefd("search", "refund window", "--scopes", empty, "--json", cwd=indexed)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["scopes"] == ["domain", "conventions"]
    assert data["hits"] and data["hits"] == json.loads(plain.stdout)["hits"]
    bundle = briefd("bundle", "refund window", "--scopes", empty, "--json", cwd=indexed)
    assert bundle.returncode == 0, bundle.stderr
    assert json.loads(bundle.stdout)["items"]


def test_the_summary_counts_related_sections_apart_from_the_hits(indexed: Path) -> None:
    """``--top-k 3`` is three hits; the linked sections appended after them are counted as
    related, not as more hits ("5 hits" for three asked for)."""
    result = briefd("search", "refund window", "--top-k", "3", cwd=indexed)
    assert result.returncode == 0, result.stderr
    labels = re.findall(r"^│ +(rel|\d+) │", result.stdout, re.MULTILINE)
    related = labels.count("rel")
    assert len(labels) - related == 3 and related >= 1, labels
    summary = result.stdout.splitlines()[-1]
    assert summary.startswith(f"3 hits + {related} related in "), summary
    alone = briefd("search", "refund window", "--top-k", "3", "--related", "0", cwd=indexed)
    assert alone.stdout.splitlines()[-1].startswith("3 hits in "), alone.stdout
    one = briefd("search", "refund window", "--top-k", "1", "--related", "0", cwd=indexed)
    assert one.stdout.splitlines()[-1].startswith("1 hit in "), one.stdout  # was "1 hits"


def test_explain_shows_a_missing_rank_as_a_dash_not_python_none(indexed: Path) -> None:
    """BM25 only: no vector rank; a single word: no all-terms list. Shown as its scores are."""
    result = briefd("search", "refund", "--explain", "--top-k", "1", "--related", "0", cwd=indexed)
    assert result.returncode == 0, result.stderr
    assert "None" not in result.stdout, result.stdout
    assert "vector rank - cosine -" in " ".join(result.stdout.replace("│", " ").split())


@pytest.mark.parametrize("typed", ["domain/REFUNDS.md", "Domain/Refunds.md", "domain/Refund.md"])
def test_a_path_in_other_letter_case_is_offered_the_document_it_names(
    indexed: Path, typed: str
) -> None:
    """Not the nearest spelling of its capitals ("did you mean domain/fees.md?")."""
    missing = briefd("doc", typed, cwd=indexed)
    assert missing.returncode == 1
    assert missing.stderr.endswith("; did you mean domain/refunds.md?\n"), missing.stderr
