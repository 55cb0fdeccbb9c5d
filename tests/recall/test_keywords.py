"""Keyword recall's tiers (I8, :mod:`briefd.recall.keywords`): with no model (`embeddings:
none`), every BM25 answer the lexical gate kept went in at full size; on the example knowledge
"the tests are failing on main" got five sections. They are now tiered on levels measured from
the generic probes against the index itself, through the real `briefd recall` process."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from briefd.api import Briefd
from briefd.recall import keywords
from briefd.recall.engine import RecallRequest
from briefd.settings import Settings
from briefd.store import documents as docs_table
from tests.conftest import EXAMPLE
from tests.recall.conftest import RELEVANT

GENERIC = ("the tests are failing on main", "this goroutine leaks, find out why")
SPECIFIC = "which header carries the HMAC signature of a webhook and how is the secret rotated"


def recall(settings: Settings, prompt: str, *extra: str) -> dict[str, object]:
    """`briefd recall --no-server --json` as its own process, on the test's index."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env |= {"BRIEFD_DB": str(settings.db), "BRIEFD_EMBEDDINGS__ENABLED": "false"}
    done = subprocess.run(
        [sys.executable, "-m", "briefd", "recall", "--no-server", "--json", *extra, prompt],
        capture_output=True,
        text=True,
        env=env,
        cwd=settings.db.parent,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_without_a_model_generic_prompts_get_nothing_and_questions_their_sections(
    indexed: Briefd,
) -> None:
    for prompt in GENERIC:
        quiet = recall(indexed.settings, prompt)
        assert (quiet["mode"], quiet["confidence"], quiet["knowledge"]) == ("bm25", "none", ""), (
            prompt
        )
        assert str(quiet["reason"]).startswith("answered by keywords: its best section's match")
        # asked for keywords as such: the gate's verdict alone, as before
        asked = recall(indexed.settings, prompt, "--mode", "bm25")
        assert asked["confidence"] == "keyword" and asked["sections"], prompt
    strong = recall(indexed.settings, SPECIFIC)
    assert strong["confidence"] == "strong" and len(strong["sections"]) > 1  # type: ignore[arg-type]
    assert "Kestrel-Signature" in str(strong["knowledge"])
    weak = recall(indexed.settings, RELEVANT)
    given = [s for s in weak["sections"] if not s.get("pointer")]  # type: ignore[union-attr]
    assert (weak["confidence"], len(given)) == ("weak", 1)
    assert 0 < int(str(weak["tokens"])) <= indexed.settings.recall.weak_tokens
    assert "Merchants have 7 calendar days" in str(weak["knowledge"])
    # a short question: its few words score low against the probes, yet are unlikely together
    short = recall(indexed.settings, "how do we rotate hsm keys")
    given = [s for s in short["sections"] if not s.get("pointer")]  # type: ignore[union-attr]
    assert (short["confidence"], len(given)) == ("weak", 1)
    assert 0 < int(str(short["tokens"])) <= indexed.settings.recall.weak_tokens


def test_the_levels_are_measured_by_the_index_run_and_follow_the_index(
    indexed: Briefd, tmp_path: Path
) -> None:
    """Stored by the index run (the hook's process never measures them: ~0.6 s); another index
    state has other levels, measured again."""
    with indexed.store.read() as conn:
        stored = json.loads(docs_table.meta(conn, keywords.KEY) or "{}")
        made = keywords.fingerprint(conn, indexed.settings)
    assert stored["fingerprint"] == made and stored["reaching"] >= keywords.MIN_REACHING
    assert 0 < stored["std"] < stored["mean"]
    source = tmp_path / "more"
    shutil.copytree(EXAMPLE, source)
    (source / "domain" / "flaky.md").write_text(
        "# Flaky tests\n\nWhen the tests are failing on main, rerun the pipeline once.\n"
    )
    indexed.index(source)
    with indexed.store.read() as conn:
        again = json.loads(docs_table.meta(conn, keywords.KEY) or "{}")
    assert again["fingerprint"] != made and again["fingerprint"].startswith("k1/")


def test_a_read_only_index_without_levels_answers_at_once_by_chance(
    settings: Settings, example_index: Path
) -> None:
    """An index whose levels are not stored (made by an earlier briefd) in a folder the hook
    cannot write: the hook's process does not measure them on every prompt (~0.6 s); the
    chance tiers decide, and a generic prompt still gets nothing."""
    shutil.copyfile(example_index, settings.db)
    with Briefd(settings, embedder=None) as api, api.store.write() as conn:
        conn.execute("DELETE FROM index_meta WHERE key = ?", (keywords.KEY,))
    folder = settings.db.parent
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    settings.db.chmod(stat.S_IRUSR)
    try:
        quiet = recall(settings, GENERIC[0])
        assert (quiet["confidence"], quiet["knowledge"]) == ("none", "")
        assert quiet["specificity"] is None  # no levels: not measured in the hook's process
        assert str(quiet["reason"]).startswith("answered by keywords: the prompt's words in its")
    finally:
        folder.chmod(stat.S_IRWXU)
        settings.db.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_too_few_probes_reaching_the_index_leave_the_gate_to_decide(indexed: Briefd) -> None:
    levels = keywords.KeywordLevels("f", 8.0, 2.0, keywords.MIN_REACHING - 1, 164)
    assert levels.z(20.0) is None
    assert keywords.KeywordLevels("f", 8.0, 2.0, keywords.MIN_REACHING, 164).z(12.0) == 2.0
    result = indexed.recall(RecallRequest(SPECIFIC))
    assert result.confidence == "strong"
