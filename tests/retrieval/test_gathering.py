"""A hybrid search reads what needs no vector while the query is being embedded: the lexical
lists and the gate's word counts come before the model answers, and the candidates are the
same as gathering them in one go."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from briefd.api import Briefd
from briefd.embeddings.base import EmbeddingKind, Vectors
from briefd.embeddings.fake import FakeEmbedder
from briefd.model import SearchResult
from briefd.retrieval import gate_evidence
from briefd.retrieval.bm25 import Lexicon
from briefd.retrieval.candidates import ALL_TERMS, VECTOR, finish, prefetch, start
from briefd.retrieval.lexical import build_match
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from tests.conftest import WriteFiles
from tests.retrieval.test_fusion_gate import REFUNDS_AND_SETTLEMENT


class HeldQueries(FakeEmbedder):
    """Embeds passages at once; a query waits until ``go`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if kind == "query" and not self.go.wait(timeout=10):
            raise TimeoutError("the query was never released")
        return super().embed_batch(texts, kind)


def test_word_counts_are_read_while_the_query_is_embedded(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(REFUNDS_AND_SETTLEMENT)
    embedder = HeldQueries()
    query = "partial refund of a captured payment"
    with Briefd(settings, embedder=embedder) as api:
        embedder.go.set()
        api.index()
        embedder.go.clear()
        semantic, search, lexicon = api.semantic, settings.search, Lexicon()
        assert semantic is not None
        plan = build_match(query, "text")
        with api.store.read() as conn:
            scopes = ["domain"]
            gathering = start(conn, query, plan, "hybrid", scopes, search, semantic, 20, True)
            assert gathering.pending is not None and not gathering.pending.done()
            assert gathering.found.lists[ALL_TERMS]  # the lexical side is there already
            words = gate_evidence.query_words(conn, plan, lexicon)
            assert words is not None and not gathering.pending.done()
            embedder.go.set()
            found = finish(conn, gathering, search, semantic)
            again = start(conn, query, plan, "hybrid", scopes, search, semantic, 20, True)
            whole = finish(conn, again, search, semantic)  # embedded already: no wait
            best = found.best_lexical()
            evidence = words.evidence(conn, bool(found.corroborated()), best)
            expected = gate_evidence.for_query(conn, plan, True, lexicon, best)
    assert found.lists == whole.lists and found.cosines == whole.cosines
    assert found.lists[VECTOR] and evidence == expected
    assert evidence.all_words and all(evidence.held[0])


class Marked(FakeEmbedder):
    """Sets ``embedding`` when a query starts being embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = threading.Event()

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if kind == "query":
            self.embedding.set()
        return super().embed_batch(texts, kind)


def test_a_search_starts_the_model_before_it_reads_the_index(
    settings: Settings, write_files: WriteFiles
) -> None:
    """The query is embedded beside the scope, typo and term reads, not after them: when the
    search reads the scopes, the model has the query already (a search that submitted it
    only later could not, blocked in the read)."""
    write_files(REFUNDS_AND_SETTLEMENT)
    embedder = Marked()
    seen: list[bool] = []

    def read(sql: str) -> None:
        if "min(scope) FROM documents" in sql and not seen:  # known_scopes()
            seen.append(embedder.embedding.wait(timeout=5))

    with Briefd(settings, embedder=embedder) as api:
        api.index()
        embedder.embedding.clear()
        api.store.conn.set_trace_callback(read)
        try:
            api.search(SearchRequest("refund of a captured payment", mode="hybrid"))
        finally:
            api.store.conn.set_trace_callback(None)
    assert seen == [True]


def test_a_query_embedded_before_does_not_wait_behind_another_being_embedded(
    settings: Settings, write_files: WriteFiles
) -> None:
    """One worker embeds queries, one after another. A query whose vector is at hand (asked
    before, or prefetched) is answered at once, not queued behind another query still in the
    model (a long one takes ~0.1 s, a remote service up to its timeout)."""
    write_files(REFUNDS_AND_SETTLEMENT)
    embedder = HeldQueries()
    query = "partial refund of a captured payment"
    with Briefd(settings, embedder=embedder) as api:
        embedder.go.set()
        api.index()
        first = api.search(SearchRequest(query, mode="hybrid"))
        embedder.go.clear()
        semantic = api.semantic
        assert semantic is not None
        prefetch(semantic, "the daily settlement cutoff")  # held in the model
        answers: list[SearchResult] = []
        again = threading.Thread(
            target=lambda: answers.append(api.search(SearchRequest(query, mode="hybrid")))
        )
        try:
            again.start()
            again.join(timeout=5)
            assert not again.is_alive(), "the search waited behind the held query"
        finally:
            embedder.go.set()
            again.join(timeout=15)
    assert [h.chunk_id for h in answers[0].hits] == [h.chunk_id for h in first.hits]
    assert first.hits and answers[0].hits[0].heading == "Partial refunds"
