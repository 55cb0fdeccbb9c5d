"""The example knowledge repository that ships with briefd — a fictional payments company, 45
documents — which ``briefd demo`` indexes and serves. In an installed wheel it is package data
(``briefd/example``); in a source checkout it is ``testdata/knowledge``."""

from __future__ import annotations

from pathlib import Path

from briefd.errors import ConfigError

PACKAGED = Path(__file__).resolve().parent.parent / "example"
CHECKOUT = Path(__file__).resolve().parents[3] / "testdata" / "knowledge"


def example_knowledge() -> Path:
    for root in (PACKAGED, CHECKOUT):
        if (root / "domain").is_dir():
            return root
    raise ConfigError(
        f"this installation of briefd has no example knowledge ({PACKAGED} is missing); "
        "reinstall briefd from its wheel"
    )
