"""The operator commands as a user runs them on their own files: ``briefd eval``, ``tune``,
``version``, ``scopes`` — exit codes, exact one-line errors, JSON shapes (real processes)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from briefd.__about__ import __version__
from briefd.embeddings.fake import FakeEmbedder
from briefd.store.db import _statements
from briefd.store.migrations import MIGRATIONS, SCHEMA_VERSION
from briefd.text import fold
from tests.cli.test_cli import briefd
from tests.conftest import EXAMPLE, REPO
from tests.embeddings.fakehttp import Reply, Request, fake_server, json_reply
from tests.embeddings.test_ollama import embed_reply
from tests.ports import free_port

GOOD_SET = "sets:\n  - name: mine\n    queries: q.yaml\n    min: {bm25: {recall@5: 0.5}}\n"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("min: {bm25: {recall@5: 0.5}}", "min: 0.5"), "min must map modes to metrics, e.g. min:"),
        (("{recall@5: 0.5}", "0.5"), "min must map modes to metrics"),
        (("0.5}}", "high}}"), "min.bm25.recall@5 must be a number, got 'high'"),
        (("queries: q.yaml", "queries: [q.yaml]"), "queries must be one path, got ['q.yaml']"),
        (("min:", "subsets: [a]\n    min:"), "subsets must be a list of document counts"),
        (("min:", "trust: {max_emptied: x}\n    min:"), "trust.max_emptied must be a number"),
        (("min:", "recall: 3\n    min:"), "recall must map modes to metrics"),
        (("min:", "mins: 3\n    min:"), "unknown key 'mins'; a set takes name, queries, dataset"),
        # a set without its min, or with it mistyped, was "every set needs…" naming no set
        (("min:", "mins:"), "unknown key 'mins'; a set takes name, queries, dataset"),
        (("    min: {bm25: {recall@5: 0.5}}\n", ""), "no 'min'; every set needs 'name', 'min'"),
    ],
)
def test_a_malformed_thresholds_file_is_one_line_naming_the_set(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    (tmp_path / "gate.yaml").write_text(GOOD_SET.replace(*change), encoding="utf-8")
    result = briefd("eval", "--check", "gate.yaml", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("error: gate.yaml: set 'mine': "), result.stderr
    assert message in result.stderr and result.stderr.count("\n") == 1


def two_documents(kb: Path) -> None:
    """A knowledge folder of two documents, each with the one section a query names."""
    (kb / "domain").mkdir(parents=True)
    (kb / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (kb / "domain" / "fees.md").write_text("# Fees\n\n## Charges\n\nNo charge.\n")


def ollama_env(url: str) -> dict[str, str]:
    """Embeddings from the fake Ollama at ``url`` (its /api/embed wire format)."""
    return {
        "BRIEFD_EMBEDDINGS__ENABLED": "true",
        "BRIEFD_EMBEDDINGS__ADAPTER": "ollama",
        "BRIEFD_EMBEDDINGS__MODEL": "nomic-embed-text",
        "BRIEFD_EMBEDDINGS__BASE_URL": url,
    }


def test_paths_under_home_in_the_settings_file_are_the_users_not_the_files(
    tmp_path: Path,
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / "kb" / "domain").mkdir(parents=True)
    (home / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 30 days.\n")
    user_config = home / ".config" / "briefd" / "briefd.yaml"  # the user's own settings
    user_config.parent.mkdir(parents=True)
    user_config.write_text("source: ~/kb\ndb: ~/index/briefd.db\n")
    project.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    result = briefd("index", "--json", cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert (home / "index" / "briefd.db").is_file()
    assert not (user_config.parent / "~").exists()
    scopes = briefd("scopes", cwd=project, env=env)
    assert scopes.returncode == 0 and "domain" in scopes.stdout, scopes.stderr


def test_a_leading_tilde_in_the_db_and_source_options_is_the_home_folder(tmp_path: Path) -> None:
    """README: a leading ``~`` in ``--db``/``--source`` is the home folder (an agent config's
    ``args`` is expanded by no shell). ``--db '~/i.db'`` made a folder named ``~`` in the
    working directory, and ``--source '~/kb'`` said the source does not exist."""
    home, work = tmp_path / "home", tmp_path / "work"
    (home / "kb" / "domain").mkdir(parents=True)
    (home / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 30 days.\n")
    work.mkdir()
    env = {"HOME": str(home)}
    result = briefd("--db", "~/i.db", "index", "--source", "~/kb", cwd=work, env=env)
    assert result.returncode == 0, result.stderr
    assert (home / "i.db").is_file() and list(work.iterdir()) == []
    found = briefd("--db", "~/i.db", "search", "refunds", cwd=work, env=env)
    assert found.returncode == 0 and "domain/refunds.md" in found.stdout, found.stderr


@pytest.mark.parametrize(
    "thresholds",
    [
        "sets: []\n",
        "sets:\n  - name: public\n    dataset: gone\n    min: {bm25: {recall@5: 0.5}}\n",
    ],
)
def test_an_eval_gate_that_checked_nothing_does_not_pass(tmp_path: Path, thresholds: str) -> None:
    (tmp_path / "gate.yaml").write_text(thresholds, encoding="utf-8")
    result = briefd("eval", "--check", "gate.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert "eval gate passed" not in result.stdout
    assert "trust" not in result.stdout  # no set with trust limits ran: no empty table
    assert result.stderr == (
        "error: no set of gate.yaml was checked; list a set whose queries or dataset exist\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tune",), "pass exactly one of --queries FILE or --dataset DIR; see `briefd tune -h`"),
        (("tune", "--queries", "q.yaml", "--dataset", "d"), "pass exactly one of --queries"),
        (("tune", "--queries", "q.yaml", "--objective", "recall"), "'recall'; use hit_rate or mrr"),
        (("tune", "--queries", "q.yaml", "--trials", "0"), "Invalid value for '--trials'"),
        (
            ("eval",),  # outside a clone of the repository, as from a wheel: no golden sets here
            "no query set given; pass --queries FILE or --dataset DIR (without them, eval runs "
            "eval/golden/queries.yaml and eval/golden/queries-tr.yaml from the working directory, "
            "as in the root of a clone of briefd's repository; the installed package does not "
            "carry them); see `briefd eval -h`",
        ),
        (
            ("eval", "--all-sets"),  # was: cannot read thresholds file eval/thresholds.yaml (1)
            "--all-sets alone checks eval/thresholds.yaml, which is not in the working directory",
        ),
        (
            ("eval", "--check", "gate.yaml", "--mode", "vector"),
            "--mode does nothing with --check or --all-sets, which run the sets and modes of the",
        ),
        (("eval", "--all-sets", "--queries", "mine.yaml"), "--queries does nothing with --check"),
        (("eval", "--check", "gate.yaml", "--misses"), "--misses does nothing with --check"),
        (("eval", "--queries", "mine.yaml", "--explain"), "--explain goes with --check"),
        (("eval", "--dataset", "d", "--source", "kb"), "--source is the knowledge of --queries"),
        (("tune", "--dataset", "d", "--source", "kb"), "--source is the knowledge of --queries"),
    ],
)
def test_usage_errors_of_eval_and_tune_exit_2(  # nothing is read: the files need not exist
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    result = briefd(*args, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr


def test_version_json_still_prints_the_versions_when_the_index_cannot_be_read(
    tmp_path: Path,
) -> None:
    newer = tmp_path / "newer.db"
    with sqlite3.connect(newer) as conn:  # an index written by a later briefd
        conn.execute("CREATE TABLE documents (id INTEGER PRIMARY KEY)")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    result = briefd("--db", str(newer), "version", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert (info["briefd"], info["schema"]) == (__version__, SCHEMA_VERSION)
    assert info["index_error"].startswith(f"index {newer} has schema {SCHEMA_VERSION + 1}, newer")
    assert result.stderr == f"warning: {info['index_error']}\n"
    fresh = briefd("version", "--json", cwd=tmp_path)  # no index yet: the versions alone
    assert fresh.returncode == 0 and set(json.loads(fresh.stdout)) == {"briefd", "schema", "sqlite"}


def test_version_says_an_index_of_an_earlier_schema_and_leaves_it_so(tmp_path: Path) -> None:
    """An index an earlier briefd made before schema 15 (no index_meta): `briefd version`
    printed no index line at all, and `--json` had no "index" but upgraded the file to this
    schema on the way to its gate calibration, after which the briefd that made it (a server
    still running it, a rollback) refuses it as "newer than this briefd understands"."""
    older = tmp_path / "older.db"
    conn = sqlite3.connect(older, isolation_level=None)
    conn.create_function("briefd_fold", 1, fold, deterministic=True)
    for migration in MIGRATIONS[:14]:  # the tables of schema 14, as that briefd made them
        for statement in _statements(migration.sql):
            conn.execute(statement)
        if migration.after is not None:
            migration.after(conn)
    conn.execute("PRAGMA user_version = 14")
    conn.close()
    said = briefd("--db", str(older), "version", cwd=tmp_path)
    assert (said.returncode, said.stderr) == (0, "")
    assert said.stdout.splitlines()[1] == (
        f"index: {older} is of index schema 14, an earlier briefd's: the next command that "
        f"opens it (briefd index, search, serve, …) upgrades it to schema {SCHEMA_VERSION}, "
        "which earlier releases cannot open"
    )
    shown = briefd("--db", str(older), "version", "--json", cwd=tmp_path)
    assert (shown.returncode, shown.stderr) == (0, "")
    index = json.loads(shown.stdout)["index"]
    assert index == {"path": str(older), "schema": 14, "commit": None, "indexed_at": None}
    with sqlite3.connect(older) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 14  # not upgraded


def test_a_section_left_empty_in_the_settings_file_is_its_defaults(tmp_path: Path) -> None:
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    for name in ("refunds", "refund-fees"):
        (tmp_path / "kb" / "domain" / f"{name}.md").write_text(f"# {name}\n\nA refund rule.\n")
    (tmp_path / "briefd.yaml").write_text(
        "source: kb\nsearch:\n  # top_k: 3   (commented out while trying things)\nrecall:\n"
    )
    assert briefd("index", cwd=tmp_path).returncode == 0
    result = briefd("search", "refund", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["hits"]) == 2
    one = briefd("search", "refund", "--json", cwd=tmp_path, env={"BRIEFD_SEARCH__TOP_K": "1"})
    assert one.returncode == 0, one.stderr
    assert len(json.loads(one.stdout)["hits"]) == 1


def test_a_settings_file_of_comments_only_is_the_defaults(tmp_path: Path) -> None:
    """Every setting commented out (a template, or back to the defaults): refused as
    'expected a mapping of settings at the top level', while an empty file, or a section
    whose keys are all commented out, is the defaults."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\nA refund rule.\n")
    (tmp_path / "briefd.yaml").write_text("# source: knowledge\n# search:\n#   top_k: 3\n")
    indexed = briefd("index", "--source", "kb", cwd=tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    result = briefd("search", "refund", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [hit["doc_path"] for hit in json.loads(result.stdout)["hits"]] == ["domain/refunds.md"]


CORPUS = '{"_id": "d1", "title": "Refunds", "text": "Refund within 30 days."}\n'
QUERIES = '{"_id": "q1", "text": "refund window"}\n'
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\n"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"queries.jsonl": '{"_id": "q1", "query": "refund"}\n'}, "queries.jsonl:1: no 'text'"),
        ({"corpus.jsonl": '{"id": "d1", "text": "x"}\n'}, "corpus.jsonl:1: no '_id'"),
        ({"corpus.jsonl": '["d1"]\n'}, "corpus.jsonl:1: not a JSON object; each line holds one"),
        (  # a line cut short was "not a JSON object"
            {"corpus.jsonl": CORPUS + '{"_id": "d2", "text": "cut\n'},
            "corpus.jsonl:2: not valid JSON (Unterminated string starting at: column 23); "
            "each line holds one whole JSON object",
        ),
        # an empty corpus was "knowledge source .briefd/eval-cache/…/source does not exist;
        # pass --source DIR, or point 'source:' in briefd.yaml …"
        (
            {"corpus.jsonl": "\n"},
            "mine/corpus.jsonl holds no document; a BEIR corpus has one JSON object a line: "
            '{"_id": …, "title": …, "text": …}',
        ),
        (
            {"qrels.tsv": "q1\td2\t1\n"},
            "mine: qrels.tsv labels query q1 with document 'd2', which is not in corpus.jsonl; "
            "fix the label or add the document",
        ),
        (
            {"qrels.tsv": QRELS + "q9\td1\t1\n"},
            "mine/qrels.tsv:3: labels query 'q9', which is not in queries.jsonl; fix the query "
            "id or add the query",
        ),
        (
            {"qrels.tsv": QRELS + "q7\td1\t0\nq8\td1\t1\nq7\td1\t1\nq9\td1\t1\n"},
            "mine/qrels.tsv:3: labels query 'q7', which is not in queries.jsonl (nor are 2 "
            "other query ids it labels); fix the query ids or add the queries",
        ),
        ({"qrels.tsv": "\udcff\n"}, "qrels.tsv: not UTF-8 text; save it as UTF-8"),
        (
            {"qrels.tsv": "q1 d1\n"},
            "mine/qrels.tsv:1: expected query-id, corpus-id and score separated by tabs, found 1 "
            "field; separate them with tabs, not spaces",
        ),
    ],
)
def test_a_malformed_beir_dataset_is_one_line(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    data = tmp_path / "mine"
    data.mkdir()
    given = {"corpus.jsonl": CORPUS, "queries.jsonl": QUERIES, "qrels.tsv": QRELS, **files}
    for name, text in given.items():
        (data / name).write_bytes(text.encode("utf-8", "surrogateescape"))
    for command in ("eval", "tune"):
        result = briefd(command, "--dataset", "mine", cwd=tmp_path)
        assert "Traceback" not in result.stderr, command
        assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
        assert result.stderr.startswith("error: mine") and message in result.stderr


@pytest.mark.parametrize(
    ("files", "args", "message"),
    [
        (
            {"q.yaml": "queries: []\n"},
            ("--queries", "q.yaml"),
            "q.yaml: the 'queries:' list is empty",
        ),
        (
            {
                "q.yaml": "queries:\n  - {id: a, query: b, type: keyword, expected: [{path: p, heading: h}]}\n"
            },
            ("--queries", "q.yaml"),
            "q.yaml names no knowledge source ('source:'); pass --source DIR",
        ),
        (
            {"q.yaml": "\udcff\n"},
            ("--queries", "q.yaml"),
            "q.yaml: not UTF-8 text; save it as UTF-8",
        ),
        ({"gate.yaml": "\udcff\n"}, ("--check", "gate.yaml"), "gate.yaml: not UTF-8 text"),
        (
            {"q.yaml": "source: kb\nqueries:\n  - id: a\n    query: x: y\n    type: keyword\n"},
            ("--queries", "q.yaml"),
            "q.yaml is not valid YAML at line 4; fix its syntax",
        ),
        (
            {
                "q.yaml": "source: kb\nqueries:\n  - id: a\n    query: refund window\n"
                "    type: keyword\n    expected: [{path: p, heading: h}]\n"
                "    id: b\n    query: fee on refunds\n"  # the second query lost its '- '
            },
            ("--queries", "q.yaml"),
            "q.yaml: key 'id' appears twice (lines 3 and 7) in one entry: YAML would keep only "
            "the second; if a new entry starts there, begin it with '- '",
        ),
        (
            {"gate.yaml": "sets:\n  - name: a\n\t  queries: q.yaml\n"},
            ("--check", "gate.yaml"),
            "gate.yaml is not valid YAML at line 3: a tab, which YAML does not take there; "
            "use spaces",
        ),
    ],
)
def test_a_users_query_or_thresholds_file_is_checked_in_one_line(
    tmp_path: Path, files: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_bytes(text.encode("utf-8", "surrogateescape"))
    result = briefd("eval", *args, cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert (result.returncode, result.stdout) == (1, ""), result.stderr
    assert result.stderr == f"error: {message}\n" or (
        message in result.stderr and result.stderr.count("\n") == 1
    ), result.stderr


def test_a_golden_query_that_cannot_be_searched_is_named(tmp_path: Path) -> None:
    """V1: the error named the query but not its file (of the two --queries, or of a
    thresholds file's sets, which one?)."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    expected = "expected: [{path: domain/refunds.md, heading: Window}]"
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n"
        f"  - {{id: ok, query: refund window, type: keyword, {expected}}}\n"
        f"  - {{id: vague, query: what is it, type: paraphrase, {expected}}}\n"
    )
    result = briefd("eval", "--queries", "q.yaml", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(
        "error: q.yaml: query vague ('what is it') cannot be searched: the query has only "
        "common words"
    ), result.stderr


def test_a_tuned_file_and_a_settings_file_given_to_the_wrong_config_say_where_they_go(
    tmp_path: Path,
) -> None:
    (tmp_path / "best.json").write_text('{"search": {"top_k": 2}, "tuned": {"trials": 5}}\n')
    (tmp_path / "mine.yaml").write_text("source: kb\n")
    tuned = briefd("--config", "best.json", "search", "refund", cwd=tmp_path)
    assert tuned.returncode == 1
    assert tuned.stderr == (
        "error: best.json is a file from `briefd tune`; it goes after the command (`briefd "
        "search --config best.json …`), while --config before it names the settings file\n"
    )
    settings = briefd("search", "--config", "mine.yaml", "refund", cwd=tmp_path)
    assert settings.returncode == 1
    assert settings.stderr == (
        "error: mine.yaml: a tuned file holds 'search' and 'tuned', not 'source'; a settings "
        "file goes before the command (`briefd --config mine.yaml search …`)\n"
    )


def test_the_hints_for_a_tuned_file_name_the_command_that_was_run(tmp_path: Path) -> None:
    """`briefd --config best.json serve` was told `briefd search --config best.json …`, and
    `briefd serve --config mine.yaml` `briefd --config mine.yaml search …`: a command the
    user never ran, in the line meant to fix the one they did."""
    (tmp_path / "best.json").write_text('{"search": {"top_k": 2}, "tuned": {"trials": 5}}\n')
    (tmp_path / "mine.yaml").write_text("source: kb\n")
    served = briefd("--config", "best.json", "serve", cwd=tmp_path)
    assert served.returncode == 1
    assert served.stderr == (
        "error: best.json is a file from `briefd tune`; it goes after the command (`briefd "
        "serve --config best.json …`), while --config before it names the settings file\n"
    )
    indexed = briefd("--config", "best.json", "index", cwd=tmp_path)  # index reads none
    assert indexed.returncode == 1
    assert indexed.stderr == (
        "error: best.json is a file from `briefd tune`; it goes after a command that reads one "
        "(`briefd search --config best.json …`; also bundle, context, serve, mcp, eval), while "
        "--config before it names the settings file\n"
    )
    bundled = briefd("bundle", "--config", "mine.yaml", "refunds", cwd=tmp_path)
    assert bundled.returncode == 1
    assert bundled.stderr == (
        "error: mine.yaml: a tuned file holds 'search' and 'tuned', not 'source'; a settings "
        "file goes before the command (`briefd --config mine.yaml bundle …`)\n"
    )


def test_a_gate_run_with_embeddings_off_says_which_limits_it_did_not_check(
    tmp_path: Path,
) -> None:
    """V2: with embeddings off only bm25 runs; a pass must not read as the set's vector and
    hybrid minimums, recall limits and trust limits all met."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    (tmp_path / "gate.yaml").write_text(
        "sets:\n  - name: mine\n    queries: q.yaml\n"
        "    trust: {max_emptied: 0.01}\n"
        "    min: {bm25: {recall@5: 0.5}, vector: {recall@5: 0.99}, hybrid: {recall@5: 0.99}}\n"
        "  - name: lexical\n    queries: q.yaml\n    min: {bm25: {recall@5: 0.5}}\n"
    )
    result = briefd("eval", "--check", "gate.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        "mine: bm25 only (embeddings are off in the settings): its vector, hybrid, trust limits "
        "are not checked\n"
    ) in result.stdout
    assert "lexical: bm25 only" not in result.stdout  # it has nothing else to check
    assert result.stdout.endswith("eval gate passed\n")


@pytest.mark.parametrize(
    ("noise", "message"),
    [
        ('prompts:\n  - id: a\n    text: "open\n', "recall-noise.yaml is not valid YAML at line 4"),
        ("\udcff\n", "recall-noise.yaml: not UTF-8 text; save it as UTF-8"),
    ],
)
def test_a_broken_recall_noise_file_beside_the_gate_is_one_line(
    tmp_path: Path, noise: str, message: str
) -> None:
    """I8, V2: a set with `recall:` limits reads the recall-noise prompts beside the thresholds
    file; a broken one is one line naming it, not a traceback."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    (tmp_path / "gate.yaml").write_text(
        "sets:\n  - name: mine\n    queries: q.yaml\n    min: {bm25: {recall@5: 0.5}}\n"
        "    recall: {bm25: {recall@5: 0.1}}\n"
    )
    (tmp_path / "recall-noise.yaml").write_bytes(noise.encode("utf-8", "surrogateescape"))
    result = briefd("eval", "--check", "gate.yaml", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: {message}"), result.stderr


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        (
            "min: {hybrid: {recall@5: 0.5}}\n    trust: {max_emptied: 0.01}\n",
            "error: gate.yaml: set 'mine' has trust limits, measured on the prompts of "
            "offtopic.yaml beside it, which does not exist; copy briefd's own "
            f"({REPO / 'eval' / 'offtopic.yaml'}) there or drop the set's trust: limits\n",
        ),
        (
            "min: {bm25: {recall@5: 0.5}}\n    recall: {bm25: {recall@5: 0.1}}\n",
            "error: gate.yaml: set 'mine' has recall limits, measured on the prompts of "
            "recall-noise.yaml beside it, which does not exist; copy briefd's own "
            f"({REPO / 'eval' / 'recall-noise.yaml'}) there or drop the set's recall: limits\n",
        ),
        (  # both at once: the second was said only by the next run, after the first was mended
            "min: {hybrid: {recall@5: 0.5}}\n    trust: {max_emptied: 0.01}\n"
            "    recall: {bm25: {recall@5: 0.1}}\n",
            "error: 2 problems:\n  gate.yaml: set 'mine' has trust limits, measured on the "
            "prompts of offtopic.yaml beside it, which does not exist; copy briefd's own "
            f"({REPO / 'eval' / 'offtopic.yaml'}) there or drop the set's trust: limits\n"
            "  gate.yaml: set 'mine' has recall limits, measured on the prompts of "
            "recall-noise.yaml beside it, which does not exist; copy briefd's own "
            f"({REPO / 'eval' / 'recall-noise.yaml'}) there or drop the set's recall: limits\n",
        ),
    ],
)
def test_a_gate_whose_limits_need_prompts_it_lacks_says_which_and_what_to_do(
    tmp_path: Path, limits: str, message: str
) -> None:
    """V2, V4, I8: a user's own thresholds file with trust or recall limits needs the prompts
    they are measured on beside it; missing, the error names the set and what to do: copy
    briefd's own file, named where it is (from a wheel there is no eval/ folder to copy)."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    (tmp_path / "gate.yaml").write_text("sets:\n  - name: mine\n    queries: q.yaml\n    " + limits)
    # trust limits run with hybrid search: embeddings on (the prompts are read before any
    # embedding, so nothing answers at the adapter's address)
    env = {"BRIEFD_EMBEDDINGS__ADAPTER": "ollama", "BRIEFD_EMBEDDINGS__ENABLED": "true"}
    result = briefd(
        "eval", "--check", "gate.yaml", cwd=tmp_path, env=env if "trust" in limits else None
    )
    assert (result.returncode, result.stderr) == (1, message)


def test_a_set_of_recall_limits_alone_is_checked_and_one_of_no_limit_is_refused(
    tmp_path: Path,
) -> None:
    """V2, I8: a set with `recall:` limits and `min: {}` was measured, its recall table shown,
    then failed as "no set … was checked"; a set naming no limit at all passed nothing."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    noise = (REPO / "eval" / "recall-noise.yaml").read_text(encoding="utf-8")
    (tmp_path / "recall-noise.yaml").write_text(noise, encoding="utf-8")
    recall_only = "min: {}\n    recall: {bm25: {recall@5: 0.5}}\n"
    (tmp_path / "gate.yaml").write_text(
        GOOD_SET.replace("min: {bm25: {recall@5: 0.5}}\n", recall_only)
    )
    result = briefd("eval", "--check", "gate.yaml", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert "briefd recall (prompt-time hook)" in result.stdout
    assert "briefd eval\n" not in result.stdout  # no empty table of search figures
    assert result.stdout.endswith("eval gate passed\n")
    (tmp_path / "gate.yaml").write_text(GOOD_SET.replace("{recall@5: 0.5}", "{}"))
    result = briefd("eval", "--check", "gate.yaml", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "error: gate.yaml: set 'mine': min names no limit; give one, e.g. min: {bm25: "
        "{recall@5: 0.8}}\n"
    )


def test_a_set_name_with_brackets_is_printed_as_written(tmp_path: Path) -> None:
    """V1, I8: a golden set's `name:` went into the tables as markup: "team [/x]" stopped
    `briefd eval` with a traceback (MarkupError), "[bold]team" lost its brackets."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "q.yaml").write_text(
        "name: '[bold]team [/x]'\nsource: kb\nqueries:\n  - {id: a, query: refund window, "
        "type: keyword, expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    (tmp_path / "eval").mkdir()  # the recall table too: its generic prompts, where eval reads them
    (tmp_path / "eval" / "recall-noise.yaml").write_text(
        "prompts:\n  - {id: n1, kind: chat, text: thanks a lot}\n"
    )
    result = briefd("eval", "--queries", "q.yaml", cwd=tmp_path, env={"COLUMNS": "200"})
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    rows = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert "│ [bold]team [/x] (section) │ bm25 │ 1 │ 1.0000 │ 1.0000 │ 1.0000 │ 1.0000 │" in rows
    assert "│ [bold]team [/x] │ bm25 │ 1.0000 │ 1.0000 │ 1.0000 │ 0/1 (0.0%) │ 0 │" in rows


def test_a_query_file_and_a_dataset_given_to_each_others_option_say_which_takes_them(
    tmp_path: Path,
) -> None:
    """V1, V3: a BEIR folder given to --queries was "cannot read query file …: Is a
    directory", a query file given to --dataset "not a BEIR dataset", neither naming the
    option that takes it."""
    (tmp_path / "mine").mkdir()
    for name, text in {
        "corpus.jsonl": CORPUS,
        "queries.jsonl": QUERIES,
        "qrels.tsv": QRELS,
    }.items():
        (tmp_path / "mine" / name).write_text(text)
    (tmp_path / "q.yaml").write_text("source: kb\nqueries: []\n")
    for command in ("eval", "tune"):
        folder = briefd(command, "--queries", "mine", cwd=tmp_path)
        assert (folder.returncode, folder.stdout) == (1, "")
        assert folder.stderr == (
            "error: mine is a BEIR dataset folder, not a query file; pass it as --dataset\n"
        )
        file = briefd(command, "--dataset", "q.yaml", cwd=tmp_path)
        assert (file.returncode, file.stdout) == (1, "")
        assert file.stderr == (
            "error: q.yaml is a file; --dataset takes the folder holding corpus.jsonl, "
            "queries.jsonl and qrels.tsv (a golden query file goes to --queries)\n"
        )


def test_a_gate_dataset_that_is_a_file_is_refused_not_skipped(tmp_path: Path) -> None:
    """V2: a set's `dataset:` naming a file (the query file, corpus.jsonl) was "skipped …
    not found", as absent public data is, and the gate passed on the other sets."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    wrong = GOOD_SET.replace("mine", "wrong").replace("queries: q.yaml", "dataset: q.yaml")
    (tmp_path / "gate.yaml").write_text(GOOD_SET + wrong.removeprefix("sets:\n"))
    result = briefd("eval", "--check", "gate.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert "skipped" not in result.stdout and "eval gate passed" not in result.stdout
    assert result.stderr == (
        f"error: {tmp_path / 'q.yaml'} is not a BEIR dataset (needs corpus.jsonl, queries.jsonl "
        "and qrels.tsv)\n"
    )


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("", "{q} names no knowledge source ('source:')"),
        ("source: kb\n", "{q}: knowledge source kb is not a directory"),
    ],
)
def test_a_gate_set_without_its_knowledge_is_told_to_name_it_in_the_query_file(
    tmp_path: Path, given: str, said: str
) -> None:
    """V2: a thresholds file's golden set whose query file names no `source:` (or one not
    there) stopped `eval --check` with "…; pass --source DIR", and `--check … --source DIR`
    is refused ("--source does nothing with --check"): the advice led nowhere."""
    (tmp_path / "q.yaml").write_text(
        f"{given}queries:\n  - {{id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    (tmp_path / "gate.yaml").write_text(GOOD_SET)
    result = briefd("eval", "--check", "gate.yaml", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"error: {said.format(q=tmp_path / 'q.yaml')}; write its folder as the query file's "
        "'source:' (from the working directory or a folder above the file): a thresholds "
        "file's sets take no --source\n"
    )


def test_explain_shows_the_gate_calibration_of_a_set_without_trust_limits(
    tmp_path: Path,
) -> None:
    """V1, V4: `eval --check … --explain` printed the gate's calibration for sets with trust
    limits alone; a team's own set with hybrid minimums got nothing, and no word why."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    for topic in ("refunds", "payouts", "disputes"):
        (tmp_path / "kb" / "domain" / f"{topic}.md").write_text(
            f"# {topic.title()}\n\n## Window\n\n{topic} are handled within 30 days.\n"
        )
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    (tmp_path / "gate.yaml").write_text(GOOD_SET.replace("bm25:", "hybrid:"))
    with fake_server() as ollama:  # Ollama's /api/embed wire format, on 127.0.0.1
        ollama.on("POST", "/api/embed", embed_reply)
        env = ollama_env(ollama.url)
        result = briefd("eval", "--check", "gate.yaml", "--explain", cwd=tmp_path, env=env)
        as_json = briefd(
            "eval", "--check", "gate.yaml", "--explain", "--json", cwd=tmp_path, env=env
        )
    assert result.returncode == 0, result.stderr
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("mine: gate threshold")]
    assert re.fullmatch(
        r"mine: gate threshold -?\d\.\d+ \(probe scores \{'median': .*\}; \d+/\d+ probes "
        r"active, left out: .+\)",
        line,
    ), line
    assert as_json.returncode == 0, as_json.stderr
    calibration = json.loads(as_json.stdout)["calibration"]
    assert list(calibration) == ["mine"]
    assert str(calibration["mine"]["threshold"]) in line


def test_explain_and_version_add_the_gate_offset_a_tuned_file_or_the_settings_lay_over(
    tmp_path: Path,
) -> None:
    """V3, V4: with `--config best.json` (gate_offset 0.02 from `briefd tune`), `eval --check
    … --explain` said "gate threshold 0.01…", the fitted threshold alone, while `briefd search
    --explain` with the same file said the query fell "below this index's threshold +0.03":
    the threshold in force is the fitted one plus the offset. `version --json` likewise left
    out a `search.gate_offset` set in the settings."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    for topic in ("refunds", "payouts", "disputes"):
        (tmp_path / "kb" / "domain" / f"{topic}.md").write_text(
            f"# {topic.title()}\n\n## Window\n\n{topic} are handled within 30 days.\n"
        )
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    (tmp_path / "gate.yaml").write_text(GOOD_SET.replace("bm25:", "hybrid:"))
    (tmp_path / "best.json").write_text(
        json.dumps({"search": {"gate_offset": 0.02}, "tuned": {"mode": "hybrid"}})
    )
    with fake_server() as ollama:  # Ollama's /api/embed wire format, on 127.0.0.1
        ollama.on("POST", "/api/embed", embed_reply)
        env = ollama_env(ollama.url)
        check = ("eval", "--check", "gate.yaml", "--explain", "--config", "best.json")
        result = briefd(*check, cwd=tmp_path, env=env)
        as_json = briefd(*check, "--json", cwd=tmp_path, env=env)
        indexed = briefd("index", "--source", "kb", cwd=tmp_path, env=env)
        offset = {**env, "BRIEFD_SEARCH__GATE_OFFSET": "-0.01"}
        version = briefd("version", "--json", cwd=tmp_path, env=offset)
    assert result.returncode == 0, result.stderr
    assert as_json.returncode == 0, as_json.stderr
    fitted = json.loads(as_json.stdout)["calibration"]["mine"]
    assert fitted["gate_offset"] == 0.02
    threshold = fitted["threshold"]
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("mine: gate threshold")]
    assert line.startswith(
        f"mine: gate threshold {threshold} + gate_offset 0.02 = {threshold + 0.02:.4f} (probe"
    ), line
    assert indexed.returncode == 0, indexed.stderr
    (knobs,) = json.loads(version.stdout)["gate_calibration"].values()
    assert knobs["gate_offset"] == -0.01


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (  # another database: taken at load, then a traceback after "serving on"
            "mysql://briefd:s3cr3t-pw@db.internal/briefd",
            "expected a postgresql://user:password@host:port/database URL (or unset for the "
            "local SQLite index), got a mysql:// URL",
        ),
        (  # a '/' in the password (openssl rand -base64) made it another host's URL, logged
            # password and all in every 'unreachable' line and in /api/health's state_error
            "postgresql://briefd:Zk9/qW+x=@127.0.0.1:5432/briefd",
            "its user:password part holds '/', '?' or '#', which end it in a URL: "
            "percent-encode them (%2F, %3F, %23), or use a password of letters and digits",
        ),
        *[  # libpq quoted the password back in its error: 'unexpected spaces found in "…"'
            (
                url,
                "it holds a space, or a '%' that starts no %XX escape: percent-encode them "
                "(%20, %25), or use a password of letters and digits",
            )
            for url in (
                "postgresql://briefd:s3cr3t pw@127.0.0.1:5432/briefd",
                "postgresql://briefd:s3cr3t%pw@127.0.0.1:5432/briefd",
            )
        ],
    ],
)
def test_a_state_url_the_server_cannot_use_is_one_line_at_start_without_its_password(
    tmp_path: Path, url: str, said: str
) -> None:
    """O1, S1: refused at load, in one line that never shows the password."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    assert briefd("index", "--source", "kb", cwd=tmp_path).returncode == 0
    env = {"BRIEFD_STATE__URL": url}
    result = briefd("serve", "--no-index", "--port", str(free_port()), cwd=tmp_path, env=env)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"error: environment variable BRIEFD_STATE__URL: state.url: {said}\n"


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        (
            "ALLOWED_ORIGINS",
            '["https://app.example.com/"]',
            "allowed_origins: 'https://app.example.com/' never matches an Origin as a browser "
            "sends it; write 'https://app.example.com'",
        ),
        (
            "ALLOWED_HOSTS",
            "kb.example.com:8484",
            "allowed_hosts: 'kb.example.com:8484' never matches a Host header; write "
            "'kb.example.com'",
        ),
        (  # YAML reads [fd00::1] as a list: "write '[fd00::1]'" asked for what was written
            "ALLOWED_HOSTS",
            "[fd00::1]",
            "allowed_hosts: 'fd00::1' never matches a Host header; write it in brackets and "
            'quotes, "[fd00::1]" (YAML reads [fd00::1] unquoted as a list)',
        ),
        (
            "ALLOWED_HOSTS",
            "https://kb.example.com",
            "allowed_hosts: 'https://kb.example.com' is not a host name; expected a name or "
            "address such as kb.example.com, without scheme, port or path",
        ),
    ],
)
def test_an_allowed_host_or_origin_no_request_can_match_is_refused_at_start(
    tmp_path: Path, key: str, value: str, said: str
) -> None:
    """I3, O1: such an entry was taken, and every request from that page or name was refused
    with 403/421 telling the operator to add what they had added."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    assert briefd("index", "--source", "kb", cwd=tmp_path).returncode == 0
    env = {f"BRIEFD_SERVE__{key}": value}
    result = briefd("serve", "--no-index", "--port", str(free_port()), cwd=tmp_path, env=env)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"error: environment variable BRIEFD_SERVE__{key}: serve.{said}\n"


def test_eval_mode_all_with_embeddings_off_says_it_ran_bm25_alone(tmp_path: Path) -> None:
    """V1: `--mode all` is bm25, vector and hybrid side by side; with embeddings off it ran bm25
    alone without a word (`--mode vector` is an error that says why)."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    result = briefd("eval", "--queries", "q.yaml", "--mode", "all", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [r["mode"] for r in json.loads(result.stdout)["reports"]] == ["bm25"]
    assert result.stderr == "--mode all: bm25 only (embeddings are off in the settings)\n"


def test_eval_json_carries_what_recall_injects_as_the_table_shows(tmp_path: Path) -> None:
    """The table of `briefd eval` shows prompt-time recall beside search; its --json printed
    the search reports alone, and outside briefd's repository (no eval/recall-noise.yaml in
    the working directory) recall was not measured at all."""
    result = briefd(
        "eval",
        "--queries",
        str(REPO / "eval/golden/queries.yaml"),
        "--source",
        str(EXAMPLE),
        "--mode",
        "bm25",
        "--json",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert [r["mode"] for r in out["reports"]] == ["bm25"]
    assert [r["mode"] for r in out["recall"]] == ["bm25"]
    assert out["recall"][0]["noise_prompts"] == 106


@pytest.mark.parametrize(
    ("args", "needs"),
    [
        (("eval", "--mode", "vector"), "--mode vector needs embeddings"),
        (("tune", "--trials", "1"), "tuning needs embeddings (hybrid search)"),
    ],
)
def test_embeddings_off_says_how_to_turn_them_on(
    tmp_path: Path, args: tuple[str, ...], needs: str
) -> None:
    golden = ("--queries", str(REPO / "eval/golden/queries.yaml"), "--source", str(EXAMPLE))
    result = briefd(*args, *golden, cwd=tmp_path)  # BRIEFD_EMBEDDINGS__ENABLED=false
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"error: {needs}; they are off in the settings: set embeddings.enabled: true (and an "
        "embeddings.adapter other than none) in briefd.yaml, or BRIEFD_EMBEDDINGS__ENABLED=true"
        + (", or use --mode bm25" if args[0] == "eval" else "")
        + "\n"
    )


def test_an_eval_cache_that_cannot_be_written_names_the_setting(tmp_path: Path) -> None:
    """A file where ``eval.cache_dir`` goes: a BEIR set's Markdown was a NotADirectoryError
    traceback, a golden set's index 'cannot open index …: [Errno 17] File exists'."""
    (tmp_path / "cache").write_text("not a folder")
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text('{"_id": "d1", "title": "Retry", "text": "retry"}\n')
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "retry"}\n')
    (beir / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    golden = ("--queries", str(REPO / "eval/golden/queries.yaml"), "--source", str(EXAMPLE))
    for args in (("--dataset", str(beir)), golden):
        result = briefd("eval", *args, cwd=tmp_path, env={"BRIEFD_EVAL__CACHE_DIR": "cache"})
        assert (result.returncode, result.stdout) == (1, ""), result.stderr
        assert re.fullmatch(
            r"error: cannot write the eval cache cache/(beir-beir|golden-knowledge)-[0-9a-f]{16} "
            r"\(cache is a file, not a folder\); set eval\.cache_dir \(briefd\.yaml or "
            r"BRIEFD_EVAL__CACHE_DIR\) to a folder you can write\n",
            result.stderr,
        ), result.stderr


@pytest.mark.parametrize(
    ("output", "line"),
    [
        ("results", "--output results is a directory; name a file, e.g. results/best.json"),
        ("gone/best.json", "--output: the folder gone does not exist; create it or pick another"),
        ("notes.txt/best.json", "--output: the folder notes.txt is a file, not a folder; create "
         "it or pick another"),
    ],
)  # fmt: skip
def test_a_tune_output_that_cannot_be_written_is_refused_before_the_trials(
    tmp_path: Path, output: str, line: str
) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "notes.txt").write_text("a file")
    golden = ("--queries", str(REPO / "eval/golden/queries.yaml"), "--source", str(EXAMPLE))
    result = briefd("tune", *golden, "--output", output, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"error: {line}\n")


@pytest.mark.parametrize(
    "args",
    [
        ("search", "retry", "--json"),
        ("bundle", "retry", "--json"),
        ("doc", "domain/x.md", "--json"),
        ("docs", "--json"),
        ("scopes", "--json"),
        ("links", "--json"),
        ("gaps", "--json"),
        ("usage", "--json"),
        ("proposals", "--json"),
        ("index", "--json"),
        ("sync", "--json"),
    ],
)
def test_with_json_an_error_leaves_stdout_empty(tmp_path: Path, args: tuple[str, ...]) -> None:
    """As the README's command reference says: a script reading stdout as JSON gets nothing
    to misread, and the one error line is on stderr."""
    result = briefd(*args, cwd=tmp_path)  # no index, no source
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_a_team_command_without_its_shared_state_says_why_in_one_line(tmp_path: Path) -> None:
    """S1, O1: `briefd proposals` (usage, gaps) with PostgreSQL away printed the pool's
    'error connecting in …' retries and the server's log line before its own error: four
    lines for one."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    assert briefd("index", "--source", "kb", cwd=tmp_path).returncode == 0
    url = f"postgresql://briefd:s3cret@127.0.0.1:{free_port()}/briefd"
    env = {"BRIEFD_STATE__URL": url, "BRIEFD_STATE__TIMEOUT_SECONDS": "1"}
    for command in ("proposals", "usage"):
        result = briefd(command, cwd=tmp_path, env=env)
        assert result.returncode == 1, result.stderr
        [line] = result.stderr.splitlines()
        assert line.startswith("error: the shared state (postgresql://briefd:***@127.0.0.1:")
        assert "is unreachable: " in line and "Connection refused" in line


def test_a_thresholds_files_paths_are_read_from_its_own_folder(tmp_path: Path) -> None:
    """V2: a team's ci/gate.yaml with `queries: queries.yaml` was read from the working
    directory, so from the repository root the gate failed on a file it could not find; its
    paths are now the file's own folder's, as briefd.yaml's are (from any directory)."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "queries.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    (tmp_path / "ci" / "gate.yaml").write_text(GOOD_SET.replace("q.yaml", "queries.yaml"))
    for cwd in (tmp_path, tmp_path / "ci"):
        result = briefd(
            "eval", "--check", "ci/gate.yaml" if cwd == tmp_path else "gate.yaml", cwd=cwd
        )
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
        assert result.stdout.endswith("eval gate passed\n")


def test_a_gates_table_and_its_failure_lines_name_the_same_set(tmp_path: Path) -> None:
    """V2: the table named a set by its query file's `name:` (team-kb) and the failure lines by
    the thresholds file's (team), so a failure pointed at a row that did not exist."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "q.yaml").write_text(
        "name: team-kb\nsource: kb\nqueries:\n  - {id: a, query: zebra quota, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
    )
    (tmp_path / "gate.yaml").write_text(GOOD_SET.replace("name: mine", "name: team"))
    result = briefd("eval", "--check", "gate.yaml", "--json", cwd=tmp_path)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["failures"] == ["team bm25 recall@5 = 0.0000 < 0.5000"]
    assert [report["name"] for report in data["reports"]] == ["team"]
    text = briefd("eval", "--check", "gate.yaml", cwd=tmp_path)
    assert "team (section)" in text.stdout and "team-kb" not in text.stdout


def test_a_tune_that_found_nothing_keeps_an_earlier_results_values(tmp_path: Path) -> None:
    """V3: a second `briefd tune` whose trials beat nothing wrote `search: {}` over the earlier
    best.json, erasing the tuned values it held; it keeps them now and says so, --force
    replaces them."""
    two_documents(tmp_path / "kb")
    (tmp_path / "q.yaml").write_text(  # each answered first already: no trial can beat that
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
        "  - {id: b, query: fees charges, type: keyword, "
        "expected: [{path: domain/fees.md, heading: Charges}]}\n"
    )
    earlier = '{"search": {"candidates": 40}, "tuned": {"trials": 5}}\n'
    (tmp_path / "best.json").write_text(earlier)
    tune = ("tune", "--queries", "q.yaml", "--trials", "2", "--json")
    with fake_server() as ollama:  # Ollama's /api/embed wire format, on 127.0.0.1
        ollama.on("POST", "/api/embed", embed_reply)
        env = ollama_env(ollama.url)
        kept = briefd(*tune, cwd=tmp_path, env=env)
        assert kept.returncode == 0, kept.stderr
        assert json.loads(kept.stdout)["search"] == {}  # nothing beat the current settings
        assert (tmp_path / "best.json").read_text() == earlier
        assert json.loads(kept.stdout)["written"] is False
        assert (  # one line, as every message on stderr: it was cut at 80 columns
            "kept best.json: no trial beat the current settings, and it holds the tuned values "
            "of an earlier run, which this empty result would erase; pass --force to replace it\n"
        ) in kept.stderr.splitlines(keepends=True)
        forced = briefd(*tune, "--force", cwd=tmp_path, env=env)
    assert forced.returncode == 0, forced.stderr
    assert json.loads((tmp_path / "best.json").read_text())["search"] == {}


def bag_of_words(request: Request) -> Reply:
    """Ollama's /api/embed answered with briefd's test embedder's vectors (hashed bags of
    words): texts that share words are close, so trials of `briefd tune` differ."""
    body = request.json()
    rows = FakeEmbedder().embed_batch(body["input"], "passage").tolist()
    return json_reply({"model": body["model"], "embeddings": rows})


def test_a_tune_that_scores_below_an_earlier_result_keeps_it(tmp_path: Path) -> None:
    """V3: a quick `briefd tune --trials 1` over the best.json of an earlier 20-trial run
    replaced it, though its best (tune fold mrr 0.5985) scored below the earlier values
    (0.6129) on the same queries: the better result was lost without a word. An earlier
    result whose values score at least as well on this run's tune fold is kept (said, and
    `written: false`); a run that beats it, or --force, replaces it."""
    shutil.copytree(EXAMPLE, tmp_path / "kb")
    golden = (REPO / "eval" / "golden" / "queries.yaml").read_text()
    (tmp_path / "q.yaml").write_text(golden.replace("source: testdata/knowledge", "source: kb"))
    tune = ("tune", "--queries", "q.yaml", "--objective", "mrr", "--json")
    with fake_server() as ollama:  # Ollama's /api/embed wire format, on 127.0.0.1
        ollama.on("POST", "/api/embed", bag_of_words)
        env = ollama_env(ollama.url)
        first = briefd(*tune, "--trials", "8", cwd=tmp_path, env=env)  # mrr .5599 (20: .5629)
        assert first.returncode == 0, first.stderr
        earlier = (tmp_path / "best.json").read_text()
        quick = briefd(*tune, "--trials", "1", "--seed", "5", cwd=tmp_path, env=env)
        assert quick.returncode == 0, quick.stderr
        said = json.loads(quick.stdout)
        assert said["search"]  # it found values that beat the current settings …
        assert said["tuned"]["tune"]["mrr"] < json.loads(earlier)["tuned"]["tune"]["mrr"]
        assert (tmp_path / "best.json").read_text() == earlier  # … and kept the better ones
        assert said["written"] is False
        assert said["earlier"] == json.loads(earlier)["tuned"]["tune"]  # rescored: the same
        assert (
            "kept best.json: the tuned values it holds from an earlier run score at least as "
            "well on this run's tune fold as this run's best, which would replace them; pass "
            "--force to replace them"
        ) in " ".join(quick.stderr.split())
        better = briefd(*tune, "--trials", "1", "--seed", "9", cwd=tmp_path, env=env)
    assert better.returncode == 0, better.stderr
    assert json.loads(better.stdout)["written"] is True
    assert json.loads((tmp_path / "best.json").read_text()) == {
        key: value for key, value in json.loads(better.stdout).items() if key in ("search", "tuned")
    }


def test_a_file_tuned_without_section_windows_is_said_to_be_stale_with_them(
    tmp_path: Path,
) -> None:
    """V3: a tuned file's fusion weights and gate offset fit the cosines search met when it
    was tuned; turning section windows on (embeddings.window_words: 60, a chunk met at its
    closest window) changes them as another model does, and `briefd eval|search --config
    best.json` applied the file without a word (a model change is warned about)."""
    two_documents(tmp_path / "kb")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
        "  - {id: b, query: fees charges, type: keyword, "
        "expected: [{path: domain/fees.md, heading: Charges}]}\n"
    )
    measure = ("eval", "--queries", "q.yaml", "--mode", "hybrid", "--config", "best.json")
    with fake_server() as ollama:  # Ollama's /api/embed wire format, on 127.0.0.1
        ollama.on("POST", "/api/embed", bag_of_words)
        env = ollama_env(ollama.url)
        tuned = briefd("tune", "--queries", "q.yaml", "--trials", "2", cwd=tmp_path, env=env)
        assert tuned.returncode == 0, tuned.stderr
        same = briefd(*measure, cwd=tmp_path, env=env)
        windows = {**env, "BRIEFD_EMBEDDINGS__WINDOW_WORDS": "60"}
        other = briefd(*measure, cwd=tmp_path, env=windows)
    assert same.returncode == 0, same.stderr
    assert "warning" not in same.stderr
    assert other.returncode == 0, other.stderr
    assert (
        "warning: best.json was tuned with embeddings.window_words 0, and the settings use 60: "
        "its fusion weights and gate offset were fitted to the cosines of whole sections (no "
        "windows), and search now meets windows of 60 words; run `briefd tune --queries "
        f"{tmp_path / 'q.yaml'} --output best.json` again"
    ) in " ".join(other.stderr.split())


def test_the_eval_command_tune_suggests_measures_the_set_it_tuned_on(tmp_path: Path) -> None:
    """V3: `briefd tune --queries q.yaml` ended "compare with `briefd eval --mode hybrid
    --config best.json`", which names no set: in a team's repository that command stopped
    with "no query set given; pass --queries FILE or --dataset DIR" (exit 2), and in briefd's
    own it measured briefd's golden sets, not the team's."""
    two_documents(tmp_path / "kb")
    (tmp_path / "team set").mkdir()
    (tmp_path / "team set" / "q.yaml").write_text(
        "name: team\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
        "  - {id: b, query: fees charges, type: keyword, "
        "expected: [{path: domain/fees.md, heading: Charges}]}\n"
    )
    tune = ("tune", "--queries", "team set/q.yaml", "--source", "kb", "--trials", "2")
    compared = tune_then_compare(
        tmp_path,
        (*tune, "--output", "best.json"),
        embed_reply,
        "eval --queries 'team set/q.yaml' --source kb --mode hybrid --config best.json",
    )
    assert re.search(r"team \(section\) +│ hybrid +│ +2 │", compared.stdout), compared.stdout


def tune_then_compare(
    tmp_path: Path, tune: tuple[str, ...], embed: Any, expected: str
) -> subprocess.CompletedProcess[str]:
    """Run `briefd tune` against a fake Ollama, check the compare command it suggests is
    `expected`, run that command as pasted and return it (exit 0 checked)."""
    with fake_server() as ollama:  # Ollama's /api/embed wire format, on 127.0.0.1
        ollama.on("POST", "/api/embed", embed)
        env = ollama_env(ollama.url)
        tuned = briefd(*tune, cwd=tmp_path, env=env)
        assert tuned.returncode == 0, tuned.stderr
        found = re.search(r"compare with `briefd ([^`]+)`", tuned.stdout)
        assert found is not None, tuned.stdout
        assert found.group(1) == expected
        compared = briefd(*shlex.split(found.group(1)), cwd=tmp_path, env=env)
    assert compared.returncode == 0, compared.stderr
    return compared


def _project_set(tmp_path: Path) -> None:
    """A knowledge base with a domain document and a project document, and a query on each."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "kb" / "projects" / "alpha").mkdir(parents=True)
    (tmp_path / "kb" / "projects" / "alpha" / "plan.md").write_text(
        "# Alpha\n\n## Launch\n\nAlpha launches in March.\n"
    )
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
        "  - {id: b, query: alpha launch, type: keyword, "
        "expected: [{path: projects/alpha/plan.md, heading: Launch}]}\n"
    )


def test_eval_says_when_a_golden_set_expects_documents_outside_default_scopes(
    tmp_path: Path,
) -> None:
    """V1: eval searches every scope, `briefd search` and an agent only `default_scopes`: a
    question about a project document scored as a hit without a word that an agent's default
    search would not see it."""
    _project_set(tmp_path)
    result = briefd("eval", "--queries", "q.yaml", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["reports"][0]["overall"]["recall@5"] == 1.0
    assert result.stderr == (
        "note: q.yaml: 1 of 2 queries expect documents outside default_scopes (domain, "
        "conventions), in projects/alpha: eval searches every scope; an agent's default search "
        "(briefd search, bundle, MCP, REST) does not\n"
    )


def test_eval_with_a_tuned_file_says_its_hybrid_knobs_do_nothing_in_bm25(tmp_path: Path) -> None:
    """V3: `briefd eval --config best.json` runs bm25 by default (and only bm25 with embeddings
    off), where the fusion weights and the gate's offset `briefd tune` chose act not at all:
    the table looked like the tuned file's, and was the settings' own."""
    _project_set(tmp_path)
    (tmp_path / "best.json").write_text(
        '{"search": {"vector_weight": 0.6, "gate_offset": 0.01, "title_weight": 3.0}}\n'
    )
    result = briefd("eval", "--queries", "q.yaml", "--config", "best.json", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        "warning: best.json sets search.vector_weight, search.gate_offset, which act in hybrid "
        "search only, and this eval runs bm25: they change nothing here; to measure them, turn "
        "embeddings on (embeddings.enabled: true) and pass --mode hybrid"
    )
    (tmp_path / "best.json").write_text('{"search": {"title_weight": 3.0}}\n')
    quiet = briefd("eval", "--queries", "q.yaml", "--config", "best.json", "--json", cwd=tmp_path)
    assert "warning" not in quiet.stderr


def test_the_tune_command_a_stale_file_suggests_names_its_source(tmp_path: Path) -> None:
    """V3: a file tuned with `briefd tune --queries q.yaml --source kb` said, once stale, "run
    `briefd tune` again on …/q.yaml"; its record did not keep --source, and that command
    stopped with "names no knowledge source". The record keeps it, and the warning names it."""
    two_documents(tmp_path / "kb")
    (tmp_path / "q.yaml").write_text(  # no `source:`: the knowledge is given as --source
        "queries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: domain/refunds.md, heading: Window}]}\n"
        "  - {id: b, query: fees charges, type: keyword, "
        "expected: [{path: domain/fees.md, heading: Charges}]}\n"
    )
    tune = ("tune", "--queries", "q.yaml", "--source", "kb", "--trials", "2")
    with fake_server() as ollama:  # Ollama's /api/embed wire format, on 127.0.0.1
        ollama.on("POST", "/api/embed", bag_of_words)
        env = ollama_env(ollama.url)
        tuned = briefd(*tune, cwd=tmp_path, env=env)
        assert tuned.returncode == 0, tuned.stderr
        windows = {**env, "BRIEFD_EMBEDDINGS__WINDOW_WORDS": "60"}
        measure = ("eval", "--queries", "q.yaml", "--source", "kb", "--mode", "hybrid")
        stale = briefd(*measure, "--config", "best.json", cwd=tmp_path, env=windows)
        assert stale.returncode == 0, stale.stderr
        said = " ".join(stale.stderr.split())
        command = (
            f"briefd tune --queries {shlex.quote(str(tmp_path / 'q.yaml'))} "
            f"--source {shlex.quote(str(tmp_path / 'kb'))} --output best.json"
        )
        assert f"search now meets windows of 60 words; run `{command}` again" in said
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        pasted = [*shlex.split(command)[1:-2], "--trials", "1", "--output", "again.json"]
        again = briefd(*pasted, cwd=elsewhere, env=windows)
    assert again.returncode == 0, again.stderr
    assert (elsewhere / "again.json").is_file()
