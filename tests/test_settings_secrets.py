"""O1: a credential written into the settings is refused with what to do, never echoed, and
never pointed at a ``…_env`` key, where it would be looked up as a variable's name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from briefd.errors import ConfigError
from briefd.settings import load_settings

SECRET = "ATATT3xFfGF0T-not-a-real-token=1A2B3C"


def test_a_token_under_its_section_names_the_variable_not_the_env_key(tmp_path: Path) -> None:
    """`confluence: token: …` was told "did you mean 'confluence.token_env'?"; a user who did
    so had every Confluence error print the token ("export $ATATT3x…")."""
    config = tmp_path / "briefd.yaml"
    config.write_text(f"confluence:\n  url: https://acme.atlassian.net\n  token: {SECRET}\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value) == (
        f"{config}: 'confluence.token': briefd reads no credential from its settings; put it in "
        "the environment variable CONFLUENCE_TOKEN (or the one 'confluence.token_env' names: a "
        "variable's name, never the secret), and remove this key"
    )
    assert "did you mean" not in str(refused.value)


def test_the_api_token_in_the_settings_says_where_it_goes(tmp_path: Path) -> None:
    config = tmp_path / "briefd.yaml"
    for text in ("serve:\n  token: s3cr3t-s3cr3t-s3cr3t\n", "api_token: s3cr3t-s3cr3t-s3cr3t\n"):
        config.write_text(text)
        with pytest.raises(ConfigError) as refused:
            load_settings(config, env={})
        assert str(refused.value).endswith(
            "the API token is never a setting: it comes from the environment variable "
            "BRIEFD_API_TOKEN only; remove this key"
        )
        assert "s3cr3t" not in str(refused.value)
    with pytest.raises(ConfigError) as variable:
        load_settings(env={"BRIEFD_JIRA__TOKEN": SECRET})
    assert str(variable.value).endswith(
        "put it in the environment variable JIRA_TOKEN (or the one 'jira.token_env' names: a "
        "variable's name, never the secret), and unset BRIEFD_JIRA__TOKEN"
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("confluence.token_env", SECRET),
        ("forge.token_env", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
        ("embeddings.api_key_env", "sk-proj-abc123"),
    ],
)
def test_a_secret_as_a_variable_name_is_refused_without_showing_it(
    tmp_path: Path, key: str, value: str
) -> None:
    section, name = key.split(".")
    config = tmp_path / "briefd.yaml"
    config.write_text(f"{section}:\n  {name}: '{value}'\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value) == (
        f"{config}: {key}: expected the name of an environment variable (letters, digits and "
        "'_', such as MY_TOKEN) that holds the secret, got a value that is none (not shown: it "
        "may be the secret itself; if so, put it in that variable instead, and revoke it if "
        "the file was shared)"
    )
    config.write_text(f"{section}:\n  {name}: TEAM_{name.upper()}\n")
    assert load_settings(config, env={}) is not None  # a variable's name loads


def test_the_command_line_never_prints_a_token_given_as_a_variable_name(tmp_path: Path) -> None:
    """What a user saw: `briefd confluence search` answered "no Confluence account: export
    $ATATT3x…", the token on the terminal (and in an agent's tool result over MCP)."""
    (tmp_path / "briefd.yaml").write_text(
        f"confluence:\n  url: https://acme.atlassian.net\n  token_env: {SECRET}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "confluence", "search", "refunds"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert SECRET not in done.stdout + done.stderr
    assert done.stderr.startswith("error: briefd.yaml: confluence.token_env: expected the name")


@pytest.mark.parametrize(
    ("key", "value", "kind"),
    [
        ("sync.webhook_secret", "12345678", "a number"),
        ("sync.webhook_secret", "90817263.5", "a number"),
        ("sync.webhook_secret", "yes", "true or false"),
        ("forge.token_env", "4815162342", "a number"),
        ("state.url", "20240101", "a number"),
    ],
)
def test_a_secret_yaml_reads_as_no_text_is_refused_without_showing_it(
    tmp_path: Path, key: str, value: str, kind: str
) -> None:
    """`webhook_secret: 12345678` was "expected a non-empty string, got 12345678": the secret
    on the terminal, in a container's log. Now what YAML read it as, and to quote it."""
    section, name = key.split(".")
    config = tmp_path / "briefd.yaml"
    config.write_text(f"{section}:\n  {name}: {value}\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value) == (
        f"{config}: {key}: expected a non-empty string, got what YAML reads as {kind} (not "
        "shown: it may be the secret); put it in quotes to keep it as text"
    )
    assert value.split(".")[0] not in str(refused.value)
    if key == "sync.webhook_secret":
        config.write_text(f"{section}:\n  {name}: '{value}'\n")
        assert load_settings(config, env={}).sync.webhook_secret == value  # quoted, it loads


@pytest.mark.parametrize(
    ("value", "start", "read_as"),
    [
        ("*Xk9pQ2sVw7", "*", "an alias"),
        ("!Xk9pQ2sVw7", "!", "a tag"),
        ("!!Xk9pQ2sVw7", "!", "a tag"),
    ],
)
def test_a_secret_yaml_cannot_read_is_not_shown_in_its_syntax_error(
    tmp_path: Path, value: str, start: str, read_as: str
) -> None:
    """`webhook_secret: *Xk9pQ2sVw7` (a random secret that starts with '*') was "not valid
    YAML at line 4 (found undefined alias 'Xk9pQ2sVw7'); fix the syntax", a '!' one "could not
    determine a constructor for the tag '!Xk9pQ2sVw7'": the secret on the terminal and in a
    container's log, and no word of the quotes that fix it."""
    config = tmp_path / "briefd.yaml"
    config.write_text(f"source: kb\nsync:\n  branch: main\n  webhook_secret: {value}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "index"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: briefd.yaml: not valid YAML at line 4 (a value that starts with '{start}', "
        f"which YAML reads as {read_as}; not shown, as it may be a secret); put that value in "
        f"quotes ('{start}…')\n"
    )
    assert "Xk9pQ2sVw7" not in done.stderr
    config.write_text(f"sync:\n  webhook_secret: '{value}'\n")  # as it says: quoted, it loads
    assert load_settings(config, env={}).sync.webhook_secret == value


def test_a_secret_yaml_reads_as_an_anchor_is_refused_not_turned_off(tmp_path: Path) -> None:
    """`webhook_secret: &Xk9pQ2sVw7` loaded as no secret at all (YAML took '&Xk9pQ2sVw7' as an
    anchor's name and the value as null): the webhook answered every delivery 401, and nothing
    said why; `&Xk9 pQ2s` loaded as the secret 'pQ2s'. An anchor another value uses loads."""
    config = tmp_path / "briefd.yaml"
    for value in ("&Xk9pQ2sVw7", "&Xk9pQ2s Vw7"):
        config.write_text(f"sync:\n  branch: main\n  webhook_secret: {value}\n")
        with pytest.raises(ConfigError) as refused:
            load_settings(config, env={})
        assert str(refused.value) == (
            f"{config}: line 3 holds a value that starts with '&', which YAML reads as an "
            "anchor; not shown, as it may be a secret; put that value in quotes ('&…')"
        )
        assert "Xk9" not in str(refused.value)
        config.write_text(f"sync:\n  webhook_secret: '{value}'\n")
        assert load_settings(config, env={}).sync.webhook_secret == value  # quoted, it loads
    config.write_text("sync:\n  branch: &b main\nproposals:\n  author_name: *b\n")
    assert load_settings(config, env={}).proposals.author_name == "main"
