"""O1: a number or true/false written in quotes (as templates write them) is refused with why:
to YAML it is text, though the message showed it as the very value asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from briefd.errors import ConfigError
from briefd.settings import load_settings

QUOTES = " (text: in quotes, YAML reads no number or true/false; write it without them)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('serve:\n  port: "8484"\n', "serve.port: expected a whole number from 1 to 65535, got '8484'"),
        ("search:\n  vector_weight: '0.5'\n", "search.vector_weight: expected a finite number, got '0.5'"),
        ('embeddings:\n  enabled: "false"\n', "embeddings.enabled: expected true or false, got 'false'"),
    ],
)  # fmt: skip
def test_a_value_in_quotes_says_the_quotes_make_it_text(
    tmp_path: Path, text: str, message: str
) -> None:
    """`port: "8484"` was "expected a whole number from 1 to 65535, got '8484'"."""
    config = tmp_path / "briefd.yaml"
    config.write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value) == f"{config}: {message}{QUOTES}"
    config.write_text(text.replace('"', "").replace("'", ""))
    assert load_settings(config, env={}) is not None  # without them, it loads


def test_text_that_is_no_number_gets_no_word_about_quotes(tmp_path: Path) -> None:
    config = tmp_path / "briefd.yaml"
    for value in ("high", "nan"):
        config.write_text(f"search:\n  vector_weight: {value}\n")
        with pytest.raises(ConfigError) as refused:
            load_settings(config, env={})
        assert str(refused.value).endswith(f"expected a finite number, got '{value}'")


def test_code_repos_as_text_is_a_list_as_for_other_lists(tmp_path: Path) -> None:
    """`BRIEFD_CODE__REPOS=https://github.com/acme/app.git` (a container's one code repository)
    was "code.repos: expected a list, got 'https://…'", while a list of text takes
    `a, b` (index.exclude, scopes' names); in the file, `repos: ../app` is relative to it."""
    one = load_settings(env={"BRIEFD_CODE__REPOS": "https://github.com/acme/app.git"})
    assert [r.source for r in one.code.repos] == ["https://github.com/acme/app.git"]
    two = load_settings(env={"BRIEFD_CODE__REPOS": "git@github.com:acme/app.git, /srv/web"})
    assert [r.source for r in two.code.repos] == ["git@github.com:acme/app.git", "/srv/web"]
    config = tmp_path / "briefd.yaml"
    config.write_text("code:\n  repos: ../app\n")
    assert [r.source for r in load_settings(config, env={}).code.repos] == [
        str(tmp_path / "../app")
    ]


@pytest.mark.parametrize("url", ["127.0.0.1:11434", "localhost:11434", "ollama.internal"])
def test_an_embeddings_base_url_without_its_scheme_is_refused_at_load(
    tmp_path: Path, url: str
) -> None:
    """`base_url: 127.0.0.1:11434` (as Ollama's own OLLAMA_HOST is written) indexed every
    section without a vector, warning "Ollama at 127.0.0.1:11434/api/embed cannot be reached
    (UnsupportedProtocol); start it with `ollama serve`" of a server that was running."""
    config = tmp_path / "briefd.yaml"
    config.write_text(f"embeddings:\n  adapter: ollama\n  base_url: {url}\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value) == (
        f"{config}: embeddings.base_url: '{url}' is not an http:// or https:// URL of a host; "
        "expected such as http://127.0.0.1:11434 (Ollama) or https://api.openai.com/v1"
    )
    config.write_text(f"embeddings:\n  adapter: ollama\n  base_url: http://{url}\n")
    assert load_settings(config, env={}).embeddings.base_url == f"http://{url}"


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("https://github.com/acme/kb", "acme/kb"),
        ("git@github.com:acme/kb.git", "acme/kb"),
        ("https://ghe.acme.com/acme/kb.git/", "acme/kb"),
        ("kb", "acme/knowledge"),
    ],
)
def test_a_forge_repo_written_as_a_url_is_refused_at_load(
    tmp_path: Path, written: str, meant: str
) -> None:
    """T1: `forge.repo: https://github.com/acme/kb` (the repository's address, as the browser
    shows it) loaded, and every proposal was refused "forge.type is github but forge.repo is
    not set (owner/name)", of a setting that was set; each sync said it again."""
    config = tmp_path / "briefd.yaml"
    config.write_text(f"forge:\n  type: github\n  repo: '{written}'\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value) == (
        f"{config}: forge.repo: '{written}' is not the repository's owner/name (GitHub's owner, "
        f"a slash, its name, nothing around them); write it so, e.g. repo: {meant}"
    )
    config.write_text("forge:\n  type: github\n  repo: acme/kb.docs\n")
    assert load_settings(config, env={}).forge.repo == "acme/kb.docs"


@pytest.mark.parametrize("host", ["github.acme.com/api/v3", "github.acme.com:8443/api/v3"])
def test_a_forge_api_url_without_its_scheme_is_refused_at_load(tmp_path: Path, host: str) -> None:
    """`forge.api_url: github.acme.com/api/v3` (GitHub Enterprise, written as its page shows
    it) loaded; every pull request then failed "… failed: …; check forge.api_url"."""
    config = tmp_path / "briefd.yaml"
    config.write_text(f"forge:\n  type: github\n  repo: acme/kb\n  api_url: {host}\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value) == (
        f"{config}: forge.api_url: '{host}' is not an API URL (it starts with neither https:// "
        f"nor http://); add https:// (https://{host}); expected https://api.github.com, or "
        "https://HOST/api/v3 for GitHub Enterprise Server"
    )
    config.write_text(f"forge:\n  type: github\n  repo: acme/kb\n  api_url: https://{host}\n")
    assert load_settings(config, env={}).forge.api_url == f"https://{host}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sync:\n  interval: off\n", "sync.interval: expected a whole number of seconds ≥ 0, got false (YAML reads an unquoted no or off as false too)"),
        ("search:\n  mode: off\n", "search.mode: expected 'bm25' or 'vector' or 'hybrid', got false (YAML reads an unquoted no or off as false too)"),
        ("search:\n  top_k:\n", "search.top_k: expected a whole number ≥ 1, got an empty value (YAML's null)"),
        ("embeddings:\n  enabled:\n", "embeddings.enabled: expected true or false, got an empty value (YAML's null)"),
        ("forge:\n  token_env:\n", "forge.token_env: expected a non-empty string, got an empty value (YAML's null)"),
        ("index:\n  exclude: yes\n", "index.exclude: expected a list of strings, got true (YAML reads an unquoted yes or on as true too)"),
    ],
)  # fmt: skip
def test_a_value_yaml_reads_as_null_or_a_boolean_is_shown_as_written(
    tmp_path: Path, text: str, message: str
) -> None:
    """`interval: off` was "expected a whole number ≥ 0, got False", a key left empty "got
    None" (and a …_env one "got what YAML reads as a NoneType"): Python's words, not the
    file's."""
    assert_refused(tmp_path, text, message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sync:\n  interval: 5m\n", "sync.interval: expected a whole number of seconds ≥ 0, got '5m' (a number alone, without a unit)"),
        ("index:\n  max_file_bytes: 2MB\n", "index.max_file_bytes: expected a whole number of bytes ≥ 1, got '2MB' (a number alone, without a unit)"),
        ("recall:\n  server_timeout: 2s\n", "recall.server_timeout: expected a finite number of seconds, got '2s' (a number alone, without a unit)"),
        ("recall:\n  session_hours: 0\n", "recall.session_hours: expected a number of hours > 0, got 0"),
        ("search:\n  top_k: lots\n", "search.top_k: expected a whole number ≥ 1, got 'lots'"),
    ],
)  # fmt: skip
def test_a_number_setting_names_what_it_counts(tmp_path: Path, text: str, message: str) -> None:
    """`interval: 5m` was "expected a whole number ≥ 0, got '5m'" and `max_file_bytes: 2MB`
    "… ≥ 1, got '2MB'": the accepted form without its unit, so the next guess was a guess."""
    assert_refused(tmp_path, text, message)


@pytest.mark.parametrize(
    ("branch", "why"),
    [("main branch", "holds a space"), ("release/", "empty path component"), ("v1..2", "'..'")],
)
def test_a_sync_branch_git_cannot_name_is_refused_at_load(
    tmp_path: Path, branch: str, why: str
) -> None:
    """K3: `sync.branch: main branch` loaded, and every sync then failed with git's words
    ("fatal: invalid refspec …") in /api/sync and the log, naming no setting."""
    config = tmp_path / "briefd.yaml"
    config.write_text(f"sync:\n  branch: '{branch}'\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    said = str(refused.value)
    assert said.startswith(f"{config}: sync.branch: {branch!r} is not a branch name git takes (")
    assert why in said and said.endswith("or leave it out to follow the remote's default branch")
    config.write_text("sync:\n  branch: release/2026.12\n")
    assert load_settings(config, env={}).sync.branch == "release/2026.12"


def assert_refused(tmp_path: Path, text: str, message: str) -> None:
    """briefd.yaml holding ``text`` is refused at load with ``message`` after its path."""
    config = tmp_path / "briefd.yaml"
    config.write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value) == f"{config}: {message}"
