from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

import pytest

from briefd.errors import ConfigError
from briefd.settings import Settings, apply_tuned, load_settings


def test_defaults_without_file_or_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings(env={})
    assert settings.source is None
    assert settings.db == Path(".briefd/briefd.db")
    assert settings.default_scopes == ("domain", "conventions")
    assert settings.search.top_k == 8


def test_settings_are_found_where_the_hook_finds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """./briefd.yaml, then ./.briefd/briefd.yaml, then the user's (XDG_CONFIG_HOME, else
    HOME/.config): the order of briefd.hook.discover, so the CLI and the hook read one file."""
    monkeypatch.chdir(tmp_path)
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    user = home / ".config" / "briefd" / "briefd.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("db: index.db\nsearch:\n  top_k: 3\n")
    found = load_settings(env={"HOME": str(home)})
    assert found.search.top_k == 3 and found.db == user.parent / "index.db"
    assert load_settings(env={}).search.top_k == 8  # no HOME given: no user file
    (xdg / "briefd").mkdir(parents=True)
    (xdg / "briefd" / "briefd.yaml").write_text("search:\n  top_k: 4\n")
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}
    assert load_settings(env=env).search.top_k == 4
    (tmp_path / ".briefd").mkdir()
    (tmp_path / ".briefd" / "briefd.yaml").write_text("search:\n  top_k: 5\n")
    assert load_settings(env=env).search.top_k == 5
    (tmp_path / "briefd.yaml").write_text("search:\n  top_k: 6\n")
    assert load_settings(env=env).search.top_k == 6
    named = {**env, "BRIEFD_CONFIG": str(user)}
    assert load_settings(env=named).search.top_k == 3


def test_file_values_paths_relative_to_the_file(tmp_path: Path) -> None:
    config = tmp_path / "conf" / "briefd.yaml"
    config.parent.mkdir()
    config.write_text(
        "source: ../kb\ndb: data/index.db\nsearch:\n  top_k: 3\n"
        "embeddings:\n  model_dir: models\neval:\n  cache_dir: /abs/cache\n"
    )
    settings = load_settings(config, env={})
    assert settings.source == config.parent / "../kb"
    assert settings.db == config.parent / "data/index.db"
    assert settings.embeddings.model_dir == config.parent / "models"
    assert settings.eval.cache_dir == Path("/abs/cache")
    assert settings.search.top_k == 3


def test_environment_overrides_file(tmp_path: Path) -> None:
    config = tmp_path / "briefd.yaml"
    config.write_text("search:\n  top_k: 3\n")
    env = {"BRIEFD_SEARCH__TOP_K": "12", "BRIEFD_SOURCE": "/kb", "BRIEFD_API_TOKEN": "x"}
    settings = load_settings(config, env=env)
    assert settings.search.top_k == 12
    assert settings.source == Path("/kb")


def test_a_tuned_record_pasted_into_the_settings_says_to_drop_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """V3, O1: a team moving `briefd tune`'s result into briefd.yaml whole (its record too) was
    told the file goes after the command, as a tuned file, which then refused its 'source'."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "briefd.yaml").write_text(
        "source: kb\nsearch:\n  vector_weight: 0.6\ntuned:\n  objective: mrr\n  trials: 5\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(env={})
    assert str(caught.value) == (
        "briefd.yaml: 'tuned' is the record `briefd tune` writes beside its search: values, not "
        "a setting; delete that section (the search: values can stay)"
    )
    (tmp_path / "briefd.yaml").write_text("source: kb\nsearch:\n  vector_weight: 0.6\n")
    assert load_settings(env={}).search.vector_weight == 0.6


def test_unknown_key_names_key_and_accepted_keys(tmp_path: Path) -> None:
    config = tmp_path / "briefd.yaml"
    config.write_text("vectors:\n  blas_thread: 3\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(config, env={})
    assert str(caught.value) == (
        f"{config}: unknown key 'vectors.blas_thread' (did you mean 'vectors.blas_threads'?); "
        "accepted keys: vectors.ann_threshold, vectors.blas_threads"
    )


def test_a_key_of_an_earlier_briefd_names_what_replaced_it(tmp_path: Path) -> None:
    """A settings or tuned file written for an earlier briefd (the gate's margins became
    search.gate_offset, bundles.issue_share went): the message says what to write now."""
    config = tmp_path / "briefd.yaml"
    config.write_text("search:\n  top_k: 5\n  gate_soft_margin: -0.02\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(config, env={})
    assert str(caught.value) == (
        f"{config}: 'search.gate_soft_margin' is a setting of an earlier briefd: "
        "'search.gate_offset' replaces it (default 0: the gate fits its threshold to each "
        "index, the offset moves it, and `briefd tune` searches it); remove it, or set that "
        "instead"
    )
    config.write_text("bundles:\n  issue_share: 0.35\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(config, env={})
    assert str(caught.value).startswith(
        f"{config}: 'bundles.issue_share' is a setting of an earlier briefd: nothing replaces it"
    )
    tuned = tmp_path / "best.json"
    tuned.write_text('{"search": {"gate_margin": 0.02, "rrf_k": 40}, "tuned": {}}')
    config.write_text("search:\n  top_k: 5\n")
    with pytest.raises(ConfigError) as caught:
        apply_tuned(load_settings(config, env={}), tuned)
    assert str(caught.value).startswith(f"{tuned}: 'search.gate_margin' is a setting of an ")


def test_bad_value_names_key_and_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_settings(None, env={"BRIEFD_SEARCH__TOP_K": "many"})
    assert str(caught.value) == (
        "environment variable BRIEFD_SEARCH__TOP_K: search.top_k: "
        "expected a whole number ≥ 1, got 'many'"
    )


def test_unknown_environment_variable_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="unknown key 'sourse' \\(did you mean 'source'\\?\\)"):
        load_settings(None, env={"BRIEFD_SOURSE": "/kb"})


def test_literal_value_lists_choices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_settings(None, env={"BRIEFD_SEARCH__QUERY_MODE": "fts"})
    assert str(caught.value) == (
        "environment variable BRIEFD_SEARCH__QUERY_MODE: search.query_mode: "
        "expected 'text' or 'advanced', got 'fts'"
    )


def test_an_environment_list_left_open_is_refused_not_read_as_one_glob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BRIEFD_INDEX__EXCLUDE='["private/**"' (its bracket left open) is not YAML; it was taken
    as text, and a list setting read the text as the one glob '["private/**"', which matches
    nothing: every private document was indexed and served without a word. It is refused with
    the variable, the key and the form to write; a bracketed IPv6 host stays text."""
    monkeypatch.chdir(tmp_path)
    for value, at, problem in (
        ('["private/**"', 14, "expected ',' or ']', but got '<stream end>'"),
        ('["private/**", \'drafts/**]', 27, "found unexpected end of stream"),
    ):
        with pytest.raises(ConfigError) as caught:
            load_settings(None, env={"BRIEFD_INDEX__EXCLUDE": value})
        assert str(caught.value) == (
            f"environment variable BRIEFD_INDEX__EXCLUDE: index.exclude: {value!r} is not valid "
            f"YAML at column {at} ({problem}); close its brackets and quotes (a list: "
            '["drafts/**", "private/**"])'
        )
    closed = load_settings(None, env={"BRIEFD_INDEX__EXCLUDE": '["private/**", drafts/**]'})
    assert closed.index.exclude == ("private/**", "drafts/**")
    hosts = load_settings(None, env={"BRIEFD_SERVE__ALLOWED_HOSTS": "[::1]"})
    assert hosts.serve.allowed_hosts == ("[::1]",)


def test_invalid_yaml_reports_line(tmp_path: Path) -> None:
    config = tmp_path / "briefd.yaml"
    config.write_text("search:\n  top_k: [1,\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value) == (  # what the reader found, where it stopped
        f"{config}: not valid YAML at line 3 (expected the node content, but found "
        "'<stream end>'); fix the syntax"
    )


@pytest.mark.parametrize(
    ("text", "line"), [("source: kb\nsearch:\n\ttop_k: 3\n", 3), ("search:\n  top_k:\t3\n", 2)]
)
def test_a_tab_in_the_settings_file_is_named(tmp_path: Path, text: str, line: int) -> None:
    """A tab (shown as spaces by the editor) was only 'not valid YAML at line 3; fix the
    syntax', the line looking right."""
    config = tmp_path / "briefd.yaml"
    config.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value) == (
        f"{config}: not valid YAML at line {line}: a tab, which YAML does not take there; "
        "use spaces"
    )


def test_model_files_live_beside_the_index_unless_set(tmp_path: Path) -> None:
    assert load_settings(config=None, env={}).embeddings.model_dir == Path(".briefd/models")
    elsewhere = load_settings(config=None, env={}, overrides={"db": str(tmp_path / "x.db")})
    assert elsewhere.embeddings.model_dir == tmp_path / "models"
    env = {"BRIEFD_EMBEDDINGS__MODEL_DIR": "/opt/models"}
    chosen = load_settings(config=None, env=env, overrides={"db": str(tmp_path / "x.db")})
    assert chosen.embeddings.model_dir == Path("/opt/models")


@pytest.mark.parametrize("word", ["off", "false", "no", "null", "~"])
def test_off_turns_an_optional_setting_off(tmp_path: Path, word: str) -> None:
    settings = load_settings(env={"BRIEFD_RECALL__SERVER": word})
    assert settings.recall.server is None
    config = tmp_path / "briefd.yaml"
    config.write_text(f"recall:\n  server: {word}\nsync:\n  branch: {word}\n")
    from_file = load_settings(config=config, env={})
    assert from_file.recall.server is None and from_file.sync.branch is None


def test_off_is_still_refused_where_a_value_is_required(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"search\.mode: expected"):
        load_settings(env={"BRIEFD_SEARCH__MODE": "off"})


def test_zero_where_it_would_quietly_do_nothing_is_refused(tmp_path: Path) -> None:
    for key in ("EMBEDDINGS__BATCH_SIZE", "BUNDLES__CANDIDATES", "SEARCH__TOP_K"):
        with pytest.raises(ConfigError, match=r"expected a whole number ≥ 1, got 0"):
            load_settings(env={f"BRIEFD_{key}": "0"})
    assert load_settings(env={"BRIEFD_SEARCH__RELATED": "0"}).search.related == 0


def test_a_config_file_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "briefd.yaml"
    config.write_bytes(b"search:\n  top_k: 5  # caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8 text; save it as UTF-8"):
        load_settings(config=config, env={})


def test_an_unreadable_config_file_says_when_briefd_config_named_it(tmp_path: Path) -> None:
    """A BRIEFD_CONFIG exported long ago, its file since moved: every command failed with
    'cannot read config file …' and nothing said where that path came from."""
    gone = tmp_path / "moved.yaml"
    with pytest.raises(ConfigError) as named:
        load_settings(env={"BRIEFD_CONFIG": str(gone)})
    assert str(named.value) == (
        f"cannot read config file {gone}, which BRIEFD_CONFIG names: No such file or "
        "directory; fix BRIEFD_CONFIG or unset it"
    )
    with pytest.raises(ConfigError) as given:  # --config: the user typed it just now
        load_settings(config=gone, env={"BRIEFD_CONFIG": str(tmp_path / "other.yaml")})
    assert str(given.value) == f"cannot read config file {gone}: No such file or directory"


def test_proposals_push_takes_true_false_a_remote_name_or_nothing(tmp_path: Path) -> None:
    def push(value: str | None) -> object:
        env = {} if value is None else {"BRIEFD_PROPOSALS__PUSH": value}
        return load_settings(env=env).proposals.push

    assert [push(None), push("true"), push("false"), push("upstream")] == [
        None,
        True,
        False,
        "upstream",
    ]
    assert load_settings(env={}).proposals.enabled is False
    with pytest.raises(ConfigError, match=r"proposals\.push: expected a non-empty string"):
        load_settings(env={"BRIEFD_PROPOSALS__PUSH": "[1]"})
    assert push("") is None and push(" ") is None  # empty turns an optional one off (README)


def test_environment_values_read_as_yaml_reads_them() -> None:
    import yaml

    from briefd.settings.raw import parse_env_value as _parse_env_value

    samples = ["true", "false", "0", "12", "/tmp/x y/index.db", "http://127.0.0.1:8484"]
    samples += ["https://h/mcp", "/a#b", "off", "1.5", "0123", "[a, b]", "  /x  ", "/x: y", "null"]
    for value in samples:
        assert _parse_env_value(value) == yaml.safe_load(value), value


def test_environment_values_of_text_settings_are_taken_as_they_are() -> None:
    env = {
        "BRIEFD_SYNC__WEBHOOK_SECRET": "s3cr3t #prod",  # YAML would end it at " #"
        "BRIEFD_SYNC__BRANCH": "2.0",  # YAML would make it a number, then refuse it
        "BRIEFD_STATE__REPLICA": "1",
        "BRIEFD_PROPOSALS__AUTHOR_NAME": "yes",
    }
    settings = load_settings(env=env)
    assert settings.sync.webhook_secret == "s3cr3t #prod"
    assert (settings.sync.branch, settings.state.replica) == ("2.0", "1")
    assert settings.proposals.author_name == "yes"
    assert load_settings(env={"BRIEFD_SEARCH__TOP_K": "12"}).search.top_k == 12
    assert load_settings(env={"BRIEFD_SYNC__WEBHOOK_SECRET": "off"}).sync.webhook_secret is None


def test_the_line_break_a_secret_file_ends_in_is_not_part_of_a_text_setting() -> None:
    """A Kubernetes secret made from a file (``--from-file``), a ``.env`` edited on Windows:
    the value ends in a line break, which BRIEFD_* text settings kept. state.url was refused
    as holding "a space" that no one could find, and a git URL source failed to clone with
    "credential url cannot be parsed"."""
    env = {
        "BRIEFD_STATE__URL": "postgresql://briefd:pw@db:5432/briefd\n",
        "BRIEFD_SOURCE": "https://github.com/acme/knowledge.git\r\n",
        "BRIEFD_SYNC__WEBHOOK_SECRET": "s3cr3t\n",
    }
    settings = load_settings(env=env)
    assert settings.state.url == "postgresql://briefd:pw@db:5432/briefd"
    assert settings.sync.remote == "https://github.com/acme/knowledge.git"
    assert settings.sync.webhook_secret == "s3cr3t"


def test_a_key_given_twice_is_an_error_not_a_lost_section(tmp_path: Path) -> None:
    config = tmp_path / "briefd.yaml"
    config.write_text("search:\n  top_k: 3\nsearch:\n  mode: bm25\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config=config, env={})
    assert str(refused.value) == (
        f"{config}: key 'search' appears twice (lines 1 and 3): YAML would keep only the "
        "second; merge them into one"
    )
    config.write_text("search:\n  top_k: 3\n  top_k: 4\n")
    with pytest.raises(ConfigError, match=r"key 'top_k' appears twice \(lines 2 and 3\)"):
        load_settings(config=config, env={})


def test_a_key_yaml_cannot_hash_is_a_config_error_and_merge_keys_load(tmp_path: Path) -> None:
    """A list as a key (``? [a, b]``) stopped every command with a TypeError traceback from the
    duplicate-key check; the YAML merge key ``<<: *anchor`` was called not valid YAML."""
    config = tmp_path / "briefd.yaml"
    config.write_text("search:\n  ? [a, b]\n  : x\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config=config, env={})
    assert str(refused.value) == (
        f"{config}: not valid YAML at line 2 (found unhashable key); fix the syntax"
    )
    config.write_text(
        "search: &common\n  top_k: 4\n  mode: bm25\nrecall:\n  top_k: 2\n"
        "eval:\n  search:\n    <<: *common\n    top_k: 9\n"
    )
    with pytest.raises(ConfigError, match=r"unknown key 'eval\.search'"):
        load_settings(config=config, env={})  # merged and read: the key itself is unknown
    config.write_text("base: &b\n  top_k: 4\nsearch:\n  <<: *b\n  mode: bm25\n  top_k: 6\n")
    with pytest.raises(ConfigError, match=r"unknown key 'base'"):
        load_settings(config=config, env={})


def test_sync_checkout_dir_is_relative_to_the_file(tmp_path: Path) -> None:
    config = tmp_path / "project" / "briefd.yaml"
    config.parent.mkdir()
    config.write_text("source: file:///srv/knowledge.git\nsync:\n  checkout_dir: clone\n")
    settings = load_settings(config=config, env={})
    assert settings.sync.checkout_dir == tmp_path / "project" / "clone"


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "SERVE__FLUSH_SECONDS",
            "0",
            "serve.flush_seconds: expected a number of seconds > 0, got 0",
        ),
        (
            "JIRA__TIMEOUT_SECONDS",
            "-1",
            "jira.timeout_seconds: expected a number of seconds > 0, got -1",
        ),
        (
            "EMBEDDINGS__QUERY_TIMEOUT_SECONDS",
            "0",
            "embeddings.query_timeout_seconds: expected a number of seconds > 0, got 0",
        ),
        (
            "SERVE__QUERY_WAIT_SECONDS",
            "0",
            "serve.query_wait_seconds: expected a number of seconds > 0, got 0",
        ),
        (
            "SERVE__INDEX_WAIT_SECONDS",
            "-5",
            "serve.index_wait_seconds: expected a number of seconds > 0, got -5",
        ),
        (
            "RECALL__IDLE_MINUTES",
            ".inf",
            "recall.idle_minutes: expected a finite number of minutes, got",
        ),
        ("SEARCH__TITLE_WEIGHT", ".inf", "search.title_weight: expected a finite number, got inf"),
        ("SEARCH__BODY_WEIGHT", "1" + "0" * 400, "search.body_weight: expected a finite number"),
        ("SEARCH__GATE_OFFSET", "-.inf", "search.gate_offset: expected a finite number, got -inf"),
        ("BUNDLES__HEADROOM", "3", "bundles.headroom: expected a number from 0 to 0.5, got 3"),
        ("BUNDLES__HEADROOM", "-3", "bundles.headroom: expected a number from 0 to 0.5"),
        ("SEARCH__VECTOR_WEIGHT", "1.5", "search.vector_weight: expected a number from 0 to 1"),
        ("SEARCH__TITLE_WEIGHT", "-2", "search.title_weight: expected a number ≥ 0, got -2"),
        (
            "CHUNKING__TARGET_TOKENS",
            "0",
            "chunking.target_tokens: expected a whole number of tokens ≥ 1",
        ),
        ("CHUNKING__TARGET_TOKENS", "900", "chunking.max_tokens: 800 is below target_tokens"),
        ("RECALL__WEAK_Z", "5", "recall.strong_z: 3.09 is below weak_z (5.0)"),
        (
            "INDEX__MAX_FILE_BYTES",
            "0",
            "index.max_file_bytes: expected a whole number of bytes ≥ 1",
        ),
        ("SERVE__PORT", "70000", "serve.port: expected a whole number from 1 to 65535, got"),
        ("SERVE__PORT", "0", "serve.port: expected a whole number from 1 to 65535, got 0"),
        (
            "ACTIVITY__RETENTION_DAYS",
            "1000000",
            "activity.retention_days: expected a whole number of days from 0 to 36500",
        ),
        (
            "BUNDLES__MANIFEST_DAYS",
            "1000000",
            "bundles.manifest_days: expected a whole number of days from 0 to 36500",
        ),
    ],
)
def test_numbers_out_of_their_range_are_refused(key: str, value: str, expected: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(env={f"BRIEFD_{key}": value})
    assert str(refused.value).startswith(f"environment variable BRIEFD_{key}: {expected}")


@pytest.mark.parametrize(
    ("key", "globs", "glob"),
    [
        ("INCLUDE", '["**/*.md", "!"]', "!"),
        ("EXCLUDE", '["drafts\\\\"]', "drafts\\"),
        ("EXCLUDE", '["notes/[z-a]*"]', "notes/[z-a]*"),  # re.error: bad character range
    ],
)
def test_an_index_glob_no_scan_can_read_is_refused_at_load(key: str, globs: str, glob: str) -> None:
    """A lone ``!`` or a Windows folder ending in ``\\`` in ``index.include`` /
    ``index.exclude`` stopped every ``briefd index`` with a GitIgnorePatternError traceback."""
    with pytest.raises(ConfigError) as refused:
        load_settings(env={f"BRIEFD_INDEX__{key}": globs})
    assert str(refused.value) == (
        f"environment variable BRIEFD_INDEX__{key}: index.{key.lower()}: '{glob}' is not a glob "
        "briefd can read; separate folders with '/' (drafts/**), and put a glob after a '!'"
    )


def test_numbers_in_range_still_load() -> None:
    env = {"BRIEFD_SEARCH__GATE_OFFSET": "-0.02", "BRIEFD_SEARCH__RRF_VECTOR_WEIGHT": "2"}
    settings = load_settings(env={**env, "BRIEFD_BUNDLES__HEADROOM": "0"})
    assert settings.search.gate_offset == -0.02 and settings.bundles.headroom == 0


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:8O80", "port '8O80' is not a number from 1 to 65535"),
        ("https://example.atlassian.net:99999", "port '99999' is not a number from 1 to 65535"),
        ("https://[::1", "Invalid IPv6 URL"),
        ("example.atlassian.net", "it starts with neither https:// nor http://"),
        ("ftp://example.atlassian.net", "it starts with neither https:// nor http://"),
        ("https://:8443/wiki", "it names no host"),
        ("https://exa mple.atlassian.net", "it holds a space or a control character"),
        ("https://example.atlassian.net/?x=1", "it holds a query or fragment"),
        ("https://jira.example.com/jira#browse", "it holds a query or fragment"),
    ],
)
def test_a_malformed_atlassian_url_is_refused_at_load(url: str, why: str) -> None:
    shown = url.replace("?x=1", "?…").replace("#browse", "#…")  # never a parameter's value
    for section in ("jira", "confluence"):
        with pytest.raises(ConfigError) as caught:
            load_settings(env={}, overrides={f"{section}.url": url})
        assert str(caught.value) == (
            f"command-line option: {section}.url: {shown!r} is not a site URL ({why}); expected "
            "https://host (or http://host:port), optionally with a path"
        )


@pytest.mark.parametrize(
    ("key", "url", "said"),
    [
        (  # GitHub took a token as a parameter once: a copied API URL may still carry one
            "forge.api_url",
            "https://api.github.com?access_token=ghp_s3cretTOKENvalue",
            "forge.api_url: 'https://api.github.com?…' is not an API URL (it holds a query or "
            "fragment)",
        ),
        (  # Jira Server's old URL login
            "jira.url",
            "https://jira.example.com/login.jsp?os_username=bob&os_password=s3cretTOKENvalue",
            "jira.url: 'https://jira.example.com/login.jsp?…' is not a site URL (it holds a "
            "query or fragment)",
        ),
        (
            "recall.server",
            "ftp://kb.example.com/#s3cretTOKENvalue",
            "recall.server: 'ftp://kb.example.com/#…' is not a server URL",
        ),
    ],
)
def test_a_token_in_a_urls_query_is_never_repeated_in_the_error(
    key: str, url: str, said: str
) -> None:
    """A settings error is printed, logged and shown to agents: a URL with a token in its query
    (or fragment) was refused quoting the URL whole, the token with it."""
    with pytest.raises(ConfigError) as caught:
        load_settings(env={}, overrides={key: url})
    assert "s3cretTOKENvalue" not in str(caught.value)
    assert said in str(caught.value)


def test_site_urls_that_are_fine_load() -> None:
    for url in (
        "https://example.atlassian.net",
        "http://127.0.0.1:8080",
        "https://[::1]:8443/wiki",
        "https://api.atlassian.com/ex/jira/1a2b-3c4d",
    ):
        settings = load_settings(env={}, overrides={"jira.url": url, "confluence.url": url})
        assert settings.jira.url == settings.confluence.url == url


def test_an_atlassian_timeout_of_zero_or_less_is_refused() -> None:
    for key in ("JIRA__TIMEOUT_SECONDS", "CONFLUENCE__TIMEOUT_SECONDS"):
        for value in ("0", "-1.5"):
            with pytest.raises(ConfigError) as caught:
                load_settings(env={f"BRIEFD_{key}": value})
            name = key.lower().replace("__", ".")
            assert str(caught.value) == (
                f"environment variable BRIEFD_{key}: {name}: expected a number of seconds > 0, "
                f"got {float(value) if '.' in value else int(value)!r}"
            )
    assert load_settings(env={"BRIEFD_JIRA__TIMEOUT_SECONDS": "0.5"}).jira.timeout_seconds == 0.5


def test_every_declared_setting_is_in_the_readme_table_and_every_row_is_declared() -> None:
    """The README's settings table and the declared dataclasses must name the same keys:
    ``sync.remote`` was accepted (and listed in every "accepted keys" message) but nowhere
    documented. A row names a key, or several sharing the first one's section
    (`` `search.gate` / `gate_offset` ``)."""
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    documented = set()
    for row in table.splitlines():
        if not row.startswith("| `"):
            continue
        section = ""
        for key in re.findall(r"`([^`]+)`", row.split("|")[1]):
            section = key.rpartition(".")[0] if "." in key else section
            documented.add(key if "." in key or not section else f"{section}.{key}")
    declared = set()

    def walk(cls: type, prefix: str) -> None:
        internal = {f.name for f in dataclasses.fields(cls) if f.metadata.get("internal")}
        for name, hint in typing.get_type_hints(cls).items():
            if name in internal:  # what load_settings records, never a key of the file
                continue
            if dataclasses.is_dataclass(hint):
                walk(typing.cast(type, hint), f"{prefix}{name}.")
            else:
                declared.add(prefix + name)

    walk(Settings, "")
    assert sorted(declared - documented) == []
    assert sorted(documented - declared) == ["BRIEFD_API_TOKEN"]  # environment only


def test_a_number_written_with_an_exponent_is_a_number(tmp_path: Path) -> None:
    """YAML 1.1 reads 1e-2 (no dot) as text: 'expected a number, got '1e-2'' refused a
    number, in the file and in BRIEFD_* alike."""
    config = tmp_path / "briefd.yaml"
    config.write_text("search:\n  gate_offset: -1e-2\n  coverage_bonus: 3E-1\n")
    settings = load_settings(config, env={"BRIEFD_SEARCH__VECTOR_WEIGHT": "5e-1"})
    assert settings.search.gate_offset == -0.01 and settings.search.coverage_bonus == 0.3
    assert settings.search.vector_weight == 0.5
    with pytest.raises(ConfigError) as refused:  # still a number in its range
        load_settings(config, env={"BRIEFD_SEARCH__VECTOR_WEIGHT": "5e1"})
    assert str(refused.value).endswith(
        "search.vector_weight: expected a number from 0 to 1, got 50.0"
    )


def test_a_nested_variable_with_one_underscore_names_the_variable_to_set() -> None:
    """BRIEFD_SEARCH_TOP_K (one underscore) was told "did you mean 'search'?", and
    BRIEFD_SEARCH=3 then "search: expected a mapping of settings"."""
    with pytest.raises(ConfigError) as refused:
        load_settings(env={"BRIEFD_SEARCH_TOP_K": "3"})
    assert str(refused.value).startswith(
        "environment variable BRIEFD_SEARCH_TOP_K: unknown key 'search_top_k' (did you mean "
        "BRIEFD_SEARCH__TOP_K? a nested key takes a double underscore); accepted keys: "
    )
    with pytest.raises(ConfigError) as longer:
        load_settings(env={"BRIEFD_RECALL_SERVER_TIMEOUT": "3"})
    assert "(did you mean BRIEFD_RECALL__SERVER_TIMEOUT? " in str(longer.value)


def test_an_ipv6_allowed_host_written_as_the_error_says_loads() -> None:
    """The error for [fd00::1], which YAML reads as a list, says to quote it; so written, in
    the file or a variable, it loads with its brackets."""
    env = {"BRIEFD_SERVE__ALLOWED_HOSTS": '"[fd00::1]"'}
    assert load_settings(None, env=env).serve.allowed_hosts == ("[fd00::1]",)


def test_allowed_hosts_and_origins_as_requests_carry_them_load() -> None:
    env = {
        "BRIEFD_SERVE__ALLOWED_HOSTS": "KB.example.com, 10.0.0.5, [fd00::1]",
        "BRIEFD_SERVE__ALLOWED_ORIGINS": '["https://docs.example.com", "http://[::1]:3000"]',
    }
    serve = load_settings(env=env).serve
    assert serve.allowed_hosts == ("KB.example.com", "10.0.0.5", "[fd00::1]")
    assert serve.allowed_origins == ("https://docs.example.com", "http://[::1]:3000")


def test_a_list_left_empty_in_the_settings_file_is_its_default(tmp_path: Path) -> None:
    """A list whose entries are all commented out (``repos:`` over ``# - ../app``) was refused
    as "code.repos: expected a list, got None", while a section left empty is its defaults."""
    config = tmp_path / "briefd.yaml"
    config.write_text(
        "code:\n  repos:\n  # - ../app\nserve:\n  allowed_hosts:\n  # - kb.example.com\n"
        "index:\n  include:\n  exclude:\n  # - drafts/**\nscopes:\n  # - {folder: teams/*}\n"
        "default_scopes:\nrecall:\n  scopes:\n"
    )
    settings = load_settings(config, env={"BRIEFD_JIRA__PROJECTS": "null"})
    defaults = Settings()
    assert (settings.code.repos, settings.serve.allowed_hosts, settings.index.exclude) == (
        (),
        (),
        (),
    )
    assert settings.index.include == ("**/*.md", "**/*.markdown")
    assert (settings.scopes, settings.default_scopes) == (defaults.scopes, defaults.default_scopes)
    assert (settings.recall.scopes, settings.jira.projects) == ((), ())
    with pytest.raises(
        ConfigError, match=r"search\.top_k: expected a whole number ≥ 1, got an empty"
    ):
        load_settings(env={"BRIEFD_SEARCH__TOP_K": "null"})  # a value left empty stays an error


@pytest.mark.parametrize("value", ["8484a", "-1", "8484.5"])
def test_a_port_that_is_no_whole_number_names_the_range(value: str) -> None:
    """'serve.port: expected a whole number ≥ 0' named a range that 0 is not in."""
    with pytest.raises(ConfigError) as refused:
        load_settings(env={"BRIEFD_SERVE__PORT": value})
    assert str(refused.value).startswith(
        "environment variable BRIEFD_SERVE__PORT: serve.port: expected a whole number from 1 to "
        "65535, got "
    )


def test_a_pair_of_variables_checked_together_loads_in_either_order() -> None:
    """BRIEFD_CHUNKING__MAX_TOKENS=300 with BRIEFD_CHUNKING__TARGET_TOKENS=200 was refused
    ("300 is below target_tokens (500)"): each variable was checked before the next, in
    alphabetical order, against the default of the other."""
    env = {"BRIEFD_CHUNKING__MAX_TOKENS": "300", "BRIEFD_CHUNKING__TARGET_TOKENS": "200"}
    zs = {"BRIEFD_RECALL__STRONG_Z": "1.5", "BRIEFD_RECALL__WEAK_Z": "1.0"}
    settings = load_settings(env={**env, **zs})
    assert (settings.chunking.target_tokens, settings.chunking.max_tokens) == (200, 300)
    assert (settings.recall.weak_z, settings.recall.strong_z) == (1.0, 1.5)
    with pytest.raises(ConfigError) as alone:  # still refused when the pair does not hold
        load_settings(env={"BRIEFD_CHUNKING__MAX_TOKENS": "300"})
    assert str(alone.value).startswith("environment variable BRIEFD_CHUNKING__MAX_TOKENS: ")
    with pytest.raises(ConfigError) as later:  # a later variable that never builds is named
        load_settings(env={**env, "BRIEFD_SEARCH__TOP_K": "abc"})
    assert str(later.value).startswith("environment variable BRIEFD_SEARCH__TOP_K: search.top_k")


def test_an_embeddings_base_url_with_a_query_is_refused_without_showing_it() -> None:
    """The adapter's path went after the query (…/v1?api-key=K/v1/embeddings), and every error
    then showed the key."""
    url = "http://alice:PASSWORD@127.0.0.1:11434/v1?api-key=QUERYKEY"
    with pytest.raises(ConfigError) as caught:
        load_settings(env={}, overrides={"embeddings.base_url": url})
    assert str(caught.value) == (
        "command-line option: embeddings.base_url: 'http://***@127.0.0.1:11434/v1'… holds a "
        "query or fragment, which the API's path would follow; give the address alone (an API "
        "key comes from the variable api_key_env names)"
    )


def test_a_true_false_variable_takes_one_and_zero() -> None:
    """``BRIEFD_EMBEDDINGS__ENABLED=0``, as a container's environment says false, was refused
    ("expected true or false, got 0"); numbers and text keep what YAML reads."""
    off = load_settings(env={"BRIEFD_EMBEDDINGS__ENABLED": "0", "BRIEFD_SEARCH__GATE": "0"})
    assert (off.embeddings.enabled, off.search.gate) == (False, False)
    on = load_settings(env={"BRIEFD_RECALL__DAEMON": "1", "BRIEFD_SERVE__METRICS_AUTH": "1"})
    assert (on.recall.daemon, on.serve.metrics_auth) == (True, True)
    assert load_settings(env={"BRIEFD_SEARCH__RELATED": "0"}).search.related == 0
    assert load_settings(env={"BRIEFD_STATE__REPLICA": "1"}).state.replica == "1"
    with pytest.raises(ConfigError, match=r"recall\.daemon: expected true or false, got 2$"):
        load_settings(env={"BRIEFD_RECALL__DAEMON": "2"})


def test_an_empty_variable_leaves_a_list_at_its_default() -> None:
    """`BRIEFD_DEFAULT_SCOPES: ${DEFAULT_SCOPES:-}` in a compose file (set, and empty) made no
    scope a default one, and every search without scopes failed "no default scope is in this
    index … set default_scopes in briefd.yaml"; an empty BRIEFD_INDEX__INCLUDE indexed nothing
    and BRIEFD_SCOPES= was "expected a non-empty list". An empty value is the default, as
    `null` and a list left empty in the file are."""
    defaults = Settings()
    env = {"BRIEFD_DEFAULT_SCOPES": "", "BRIEFD_INDEX__INCLUDE": " ", "BRIEFD_SCOPES": ""}
    settings = load_settings(env=env)
    assert settings.default_scopes == defaults.default_scopes == ("domain", "conventions")
    assert settings.index.include == defaults.index.include
    assert settings.scopes == defaults.scopes
    assert load_settings(env={"BRIEFD_CODE__REPOS": ""}).code.repos == ()
    assert load_settings(env={"BRIEFD_DEFAULT_SCOPES": "domain"}).default_scopes == ("domain",)
