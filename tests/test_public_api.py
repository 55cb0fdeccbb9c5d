"""The public API (``briefd/__init__.py``): every exported name resolves to the object its
home module defines, and importing the package loads nothing else (the hook imports it)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import briefd

EXPECTED = {
    "Briefd",
    "Settings",
    "load_settings",
    "SearchRequest",
    "SearchResult",
    "Hit",
    "DocumentView",
    "IndexReport",
    "BundleRequest",
    "Bundle",
    "BundleItem",
    "RecallRequest",
    "RecallResult",
    "ProposalRequest",
    "Proposal",
    "SyncReport",
    "BriefdError",
    "ConfigError",
    "SourceError",
    "IndexNotFoundError",
    "QueryError",
    "ScopeError",
    "NotFoundError",
    "ProposalError",
    "GapsRequest",
    "GapsReport",
    "DriftReport",
    "UsageReport",
    "__version__",
}


def test_all_names_exactly_the_public_api() -> None:
    assert set(briefd.__all__) == EXPECTED
    assert len(briefd.__all__) == len(set(briefd.__all__))
    assert set(briefd._HOMES) == EXPECTED - {"__version__"}


@pytest.mark.parametrize("name", sorted(EXPECTED - {"__version__"}))
def test_each_name_is_the_object_its_module_defines(name: str) -> None:
    value = getattr(briefd, name)
    home = importlib.import_module(value.__module__)
    assert getattr(home, name) is value


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = briefd.Nope  # type: ignore[attr-defined]


def test_importing_the_package_loads_no_other_briefd_module_nor_typing() -> None:
    code = (
        "import sys; before = 'typing' in sys.modules; import briefd; "
        "print(sorted(m for m in sys.modules if m.startswith('briefd')), "
        "'typing' in sys.modules and not before)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['briefd', 'briefd.__about__'] False"
