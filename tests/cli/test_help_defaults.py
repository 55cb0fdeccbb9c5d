"""O2: an option left out takes its value from a setting, and its ``-h`` says which one and
what that setting's default is, never a fixed number a briefd.yaml may have changed."""

from __future__ import annotations

import re
from typing import Any

import typer.main

from briefd.cli.main import app
from briefd.settings import Settings

# (command, option's parameter) → the setting a left-out option falls back to
FROM_SETTINGS = {
    ("search", "top_k"): "search.top_k",
    ("search", "related"): "search.related",
    ("search", "mode"): "search.mode",
    ("search", "query_mode"): "search.query_mode",
    ("recall", "top_k"): "recall.top_k",
    ("recall", "max_tokens"): "recall.max_tokens",
    ("recall", "mode"): "recall.mode",
    ("recall", "scopes"): "recall.scopes",
    ("recall", "server"): "recall.server",
    ("serve", "host"): "serve.host",
    ("serve", "port"): "serve.port",
    ("demo", "host"): "serve.host",
    ("demo", "port"): "serve.port",
    ("model pull", "model"): "embeddings.model",
}


def _default(dotted: str) -> Any:
    value: Any = Settings()
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def _option(command: str, name: str) -> Any:
    found: Any = typer.main.get_command(app)
    for word in command.split():
        found = found.commands[word]
    return next(p for p in found.params if p.name == name)


def test_an_option_from_a_setting_names_it_and_its_default_in_its_help() -> None:
    """`briefd recall -h` said "--top-k  Most sections (default 4)" and "--mode  auto
    (default)", `briefd search -h` "--mode … (default: hybrid …)": fixed values, while a
    briefd.yaml's recall.top_k or search.mode decides them."""
    wrong = []
    for (command, name), key in FROM_SETTINGS.items():
        option = _option(command, name)
        assert option.default is None, f"{command} {name}: a fixed default hides {key}"
        said = re.search(rf"{re.escape(key)}(?:, ([\w.-]+))?", option.help or "")
        default = _default(key)
        if said is None:
            wrong.append(f"briefd {command} {option.opts[0]}: {option.help!r} does not name {key}")
        elif said.group(1) not in (None, "else") and said.group(1) != str(default):
            wrong.append(
                f"briefd {command} {option.opts[0]}: says {said.group(1)}, {key} is {default}"
            )
    assert wrong == []
