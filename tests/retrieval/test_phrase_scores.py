"""A query word FTS5 reads as a phrase ("node.js", "idempotency_key_reused") is scored by a
one-phrase FTS5 query, 200 ms for "node.js" on a million chunks: its scores are kept for the
searches that follow, until the index changes."""

from __future__ import annotations

import shutil
from collections.abc import Callable

import numpy as np

from briefd.api import Briefd
from briefd.retrieval.phrases import PhraseScores, Scores
from briefd.retrieval.search import SearchRequest
from tests.conftest import EXAMPLE, WriteFiles

PHRASE = "idempotency_key_reused"


def _phrase_queries(api: Briefd, query: str) -> tuple[list[str], list[str]]:
    """The FTS5 queries a search ran, and the documents of its hits."""
    seen: list[str] = []
    api.store.conn.set_trace_callback(seen.append)
    try:
        hits = api.search(SearchRequest(query, mode="bm25", scopes=("all",), related=0)).hits
    finally:
        api.store.conn.set_trace_callback(None)
    return [s for s in seen if "chunks_fts MATCH" in s], [h.doc_path for h in hits]


def test_a_phrase_is_scored_by_fts5_once_per_index_state(
    api: Briefd, write_files: WriteFiles
) -> None:
    root = write_files({})
    shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
    api.index(root)
    api.search(SearchRequest("merchant refunds", mode="bm25"))  # the postings load
    first, hits = _phrase_queries(api, f"{PHRASE} 409")
    again, same = _phrase_queries(api, f"retry {PHRASE}")
    assert len(first) == 1 and PHRASE in first[0], first
    assert again == [] and hits and same  # the second query's phrase: from the first
    write_files({"domain/keys.md": f"# Keys\n\nWhen {PHRASE} is seen twice, stop.\n"})
    api.index(root)
    changed, found = _phrase_queries(api, f"retry {PHRASE}")
    assert len(changed) == 1, changed  # a new index state: FTS5 asked again
    assert "domain/keys.md" in found


def test_the_kept_phrase_scores_stay_within_their_bound() -> None:
    kept = PhraseScores(kept=10)
    asked: list[str] = []

    def six(word: str) -> Callable[[], Scores]:
        def compute() -> Scores:
            asked.append(word)
            return np.arange(6), np.ones(6)

        return compute

    for word in ("a", "b", "c"):
        kept.get(word, six(word))
    assert len(kept) == 1  # 18 scores: the oldest two went
    kept.get("c", six("c"))
    kept.get("a", six("a"))
    assert asked == ["a", "b", "c", "a"]
