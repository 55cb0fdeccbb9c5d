"""A query word FTS5 reads as a phrase ("node.js", "idempotency_key_reused") is found and
scored by FTS5, tens of milliseconds for "node.js" on a million chunks: what it learns is kept
for the searches that follow, until the index changes."""

from __future__ import annotations

import shutil
from collections.abc import Callable

import numpy as np

from briefd.api import Briefd
from briefd.retrieval.bm25 import Lexicon
from briefd.retrieval.candidates import start
from briefd.retrieval.lexical import build_match, joined_terms
from briefd.retrieval.phrases import Known, PhraseScores
from briefd.retrieval.search import SearchRequest
from briefd.settings import SearchSettings, Settings
from briefd.store.scopes import known_scopes
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
    # the chunks holding it, then its score in them (tests/retrieval/test_bm25.py)
    assert len(first) == 2 and all(PHRASE in s for s in first), first
    assert again == [] and hits and same  # the second query's phrase: from the first
    write_files({"domain/keys.md": f"# Keys\n\nWhen {PHRASE} is seen twice, stop.\n"})
    api.index(root)
    changed, found = _phrase_queries(api, f"retry {PHRASE}")
    assert len(changed) == 2, changed  # a new index state: FTS5 asked again
    assert "domain/keys.md" in found


def test_the_kept_phrase_scores_stay_within_their_bound() -> None:
    kept = PhraseScores(kept=10)
    asked: list[str] = []

    def six(word: str) -> Callable[[], Known]:
        def compute() -> Known:
            asked.append(word)
            return Known(np.arange(6), np.ones(6))

        return compute

    for word in ("a", "b", "c"):
        kept.get(word, six(word))
    assert len(kept) == 1  # 18 scores: the oldest two went
    kept.get("c", six("c"))
    kept.get("a", six("a"))
    assert asked == ["a", "b", "c", "a"]


def _sections(count: int) -> dict[str, str]:
    """Sections naming Node.js once to four times (in the title of some), with "node" and
    "js" also apart in most: the postings cannot tell how often the phrase occurs there."""
    files = {}
    for n in range(count):
        title = "Node.js timers" if n % 7 == 0 else f"Service {n}"
        named = " ".join(["Run it on node.js today."] * (1 + n % 4))
        apart = "" if n % 5 == 0 else " A node runs js files. The js node."
        files[f"domain/service-{n:03d}.md"] = f"# {title}\n\n{named}{apart} Timers {n}.\n"
    return files


def test_a_phrase_is_asked_of_fts5_only_where_it_can_be_among_the_best(
    settings: Settings, write_files: WriteFiles
) -> None:
    """FTS5 scoring a phrase in every chunk holding it walks its position lists twice and
    reads each chunk's length (~190 ms for "node.js" on a million chunks): the postings bound
    its score in each, and FTS5 is asked only for those that can be among the best. The
    lists are the ones FTS5 ranks itself, to the last bit."""
    root = write_files(_sections(300))  # more than phrases.ASK_ALL: not all asked at once
    search = SearchSettings()
    with Briefd(settings, embedder=None) as api:
        api.index(root)
        lexicon = Lexicon()
        with api.store.read() as conn:
            scopes = tuple(known_scopes(conn))
            holding = conn.execute(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH '\"node.js\"'"
            ).fetchone()[0]
            scored: list[str] = []  # FTS5's bm25() of the phrase, as the two searches asked
            for query in ("node.js timers", "node.js"):
                plan = build_match(query, "text", terms=joined_terms(conn, query))
                assert plan.terms[0] == "node.js"
                statements: list[str] = []
                conn.set_trace_callback(statements.append)
                try:
                    ours = start(conn, query, plan, "bm25", scopes, search, None, 5, True, lexicon)
                finally:
                    conn.set_trace_callback(None)
                fts5 = start(conn, query, plan, "bm25", scopes, search, None, 5, True, None)
                assert ours.found.postings and not fts5.found.postings
                for name, listed in fts5.found.lists.items():
                    assert ours.found.lists[name] == listed, (query, name)
                scored += [s for s in statements if "bm25(chunks_fts" in s]
    assert scored and all("+rowid IN (" in s for s in scored), scored
    asked = [s.count(",", s.index("+rowid IN")) + 1 for s in scored]
    assert sum(asked) < holding / 2, (asked, holding)


def test_a_phrase_no_section_holds_beside_words_that_some_do(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A phrase word none of whose tokens the index holds ("zzqx_wvvy") scores 0.0 wherever
    the other words lead (bounded by its tokens' counts: there are none), as FTS5 ranks it."""
    root = write_files({})
    shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
    api.index(root)
    query, search = "zzqx_wvvy merchant refunds", SearchSettings()
    assert api.search(SearchRequest(query, mode="bm25", scopes=("all",))).hits
    with api.store.read() as conn:
        scopes = tuple(known_scopes(conn))
        plan = build_match(query, "text", terms=joined_terms(conn, query))
        ours = start(conn, query, plan, "bm25", scopes, search, None, 5, True, Lexicon())
        fts5 = start(conn, query, plan, "bm25", scopes, search, None, 5, True, None)
    assert ours.found.postings and ours.found.lists == fts5.found.lists
