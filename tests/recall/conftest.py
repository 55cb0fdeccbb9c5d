from __future__ import annotations

RELEVANT = "how many days does a merchant have to submit chargeback evidence?"
OFF_TOPIC = "what is the best way to boil an egg for a runny yolk"

# ``indexed`` (the example knowledge, BM25 only) comes from tests/conftest.py.
