from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.embeddings.fakehttp import FakeServer, fake_server


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with fake_server() as running:
        yield running


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5.0) as instance:
        yield instance
