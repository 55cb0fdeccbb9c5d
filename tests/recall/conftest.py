from __future__ import annotations

import pytest

from briefd.api import Briefd
from tests.conftest import EXAMPLE

RELEVANT = "how many days does a merchant have to submit chargeback evidence?"
OFF_TOPIC = "what is the best way to boil an egg for a runny yolk"


@pytest.fixture
def indexed(api: Briefd) -> Briefd:
    """The example knowledge repository indexed BM25-only."""
    api.index(EXAMPLE)
    return api
