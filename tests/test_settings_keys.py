"""O1: a section's setting written at the top of briefd.yaml, or as a variable without its
section (``BRIEFD_PORT``), names the key it belongs to, not a look-alike section."""

from __future__ import annotations

from pathlib import Path

import pytest

from briefd.errors import ConfigError
from briefd.settings import load_settings


def test_a_sections_setting_at_the_top_of_the_file_names_its_section(tmp_path: Path) -> None:
    """`port: 9000` at the top was "unknown key 'port'" with no hint, and `mode: bm25`
    "did you mean 'code'?"."""
    config = tmp_path / "briefd.yaml"
    config.write_text("port: 9000\n")
    with pytest.raises(ConfigError) as port:
        load_settings(config, env={})
    assert str(port.value).startswith(
        f"{config}: unknown key 'port' (did you mean 'serve.port'? a section's setting goes "
        "indented under it); accepted keys: activity, bundles, "
    )
    config.write_text("mode: bm25\n")
    with pytest.raises(ConfigError) as mode:
        load_settings(config, env={})
    assert "unknown key 'mode' (did you mean 'search.mode' or 'recall.mode'? " in str(mode.value)


@pytest.mark.parametrize(
    ("variable", "meant"),
    [
        ("BRIEFD_PORT", "BRIEFD_SERVE__PORT"),
        ("BRIEFD_INTERVAL", "BRIEFD_SYNC__INTERVAL"),  # was "did you mean 'eval'?"
        ("BRIEFD_WEBHOOK_SECRET", "BRIEFD_SYNC__WEBHOOK_SECRET"),  # the .env README shows
        ("BRIEFD_TOP_K", "BRIEFD_SEARCH__TOP_K or BRIEFD_RECALL__TOP_K"),
    ],
)
def test_a_variable_without_its_section_names_the_variable_to_set(
    variable: str, meant: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(env={variable: "30"})
    key = variable.removeprefix("BRIEFD_").lower()
    assert str(refused.value).startswith(
        f"environment variable {variable}: unknown key '{key}' (did you mean {meant}? a "
        "section's variable names it after a double underscore); accepted keys: "
    )


def test_a_near_miss_still_gets_its_closest_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown key 'sourse' \(did you mean 'source'\?\)"):
        load_settings(env={"BRIEFD_SOURSE": str(tmp_path)})


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        # a section indented under the one before it (one indent too many when pasted)
        ("search:\n  top_k: 3\n  serve:\n    port: 9000\n", "unknown key 'search.serve' (did you mean 'serve'? it goes at the top, not indented under 'search:')"),
        ("embeddings:\n  enabled: false\n  db: index.db\n", "unknown key 'embeddings.db' (did you mean 'db'? it goes at the top, not indented under 'embeddings:')"),
        ("search:\n  port: 9000\n", "unknown key 'search.port' (did you mean 'serve.port'? a section's setting goes indented under it)"),
    ],
)  # fmt: skip
def test_a_key_under_the_wrong_section_names_where_it_goes(
    tmp_path: Path, text: str, hint: str
) -> None:
    """`serve:` indented under `search:` was "unknown key 'search.serve'" with no hint."""
    config = tmp_path / "briefd.yaml"
    config.write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_settings(config, env={})
    assert str(refused.value).startswith(f"{config}: {hint}; accepted keys: ")
    with pytest.raises(ConfigError) as variable:
        load_settings(env={"BRIEFD_SEARCH__PORT": "9000"})
    assert str(variable.value).startswith(
        "environment variable BRIEFD_SEARCH__PORT: unknown key 'search.port' (did you mean "
        "BRIEFD_SERVE__PORT? "
    )


def test_a_dotted_name_in_the_file_says_how_yaml_nests_it(tmp_path: Path) -> None:
    """README's table names keys dotted (`search.top_k`); written so in briefd.yaml, YAML reads
    one key named "search.top_k", which was "unknown key 'search.top_k' (did you mean
    'search'?)": the one thing the line already said."""
    config = tmp_path / "briefd.yaml"
    config.write_text("search.top_k: 12\n")
    with pytest.raises(ConfigError) as dotted:
        load_settings(config, env={})
    assert str(dotted.value) == (
        f"{config}: unknown key 'search.top_k' (a dotted name is nested in the file: 'top_k:' "
        "goes indented under 'search:', or write search: {top_k: …})"
    )
    config.write_text("search: {top_k: 12}\n")  # as the message says to write it
    assert load_settings(config, env={}).search.top_k == 12
    config.write_text("serach.top_k: 12\n")  # no section of that name: the closest one
    with pytest.raises(ConfigError, match=r"'top_k:' goes indented under 'search:', or write"):
        load_settings(config, env={})
    config.write_text("foo.bar: 12\n")  # nothing like a section: the keys there are
    with pytest.raises(ConfigError, match=r"unknown key 'foo\.bar'; accepted keys: activity, "):
        load_settings(config, env={})


def test_a_section_turned_off_as_a_value_names_its_switch(tmp_path: Path) -> None:
    """`embeddings: false` (BM25 only, as a user writes it) was "embeddings: expected a
    mapping of settings", and nothing named `enabled`; BRIEFD_EMBEDDINGS=false the same."""
    config = tmp_path / "briefd.yaml"
    config.write_text("embeddings: false\n")
    with pytest.raises(ConfigError) as off:
        load_settings(config, env={})
    assert str(off.value) == (
        f"{config}: embeddings: expected a mapping of settings (a section; its keys go "
        "indented under it, such as embeddings: {enabled: false})"
    )
    config.write_text("embeddings: {enabled: false}\n")  # as it says
    assert load_settings(config, env={}).embeddings.enabled is False
    with pytest.raises(ConfigError) as variable:
        load_settings(env={"BRIEFD_PROPOSALS": "true"})
    assert str(variable.value) == (
        "environment variable BRIEFD_PROPOSALS: proposals: expected a mapping of settings (a "
        "section; its keys are variables of their own, such as BRIEFD_PROPOSALS__ENABLED=true)"
    )
    assert load_settings(env={"BRIEFD_PROPOSALS__ENABLED": "true"}).proposals.enabled is True
    config.write_text("search: 5\n")  # a section without a switch: where its keys go
    with pytest.raises(ConfigError, match=r"such as search: \{top_k: …\}\)$"):
        load_settings(config, env={})
