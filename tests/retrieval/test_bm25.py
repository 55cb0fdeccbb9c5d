"""BM25 from the stored postings equals FTS5's bm25(), and the postings follow every change."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.retrieval.bm25 import Lexicon, PostingsIndex, Word, with_coverage
from briefd.retrieval.candidates import ANY_TERM, Candidates, finish, start
from briefd.retrieval.lexical import FieldWeights, build_match, common_terms
from briefd.retrieval.search import SearchRequest
from briefd.retrieval.spelling import Speller
from briefd.settings import SearchSettings, Settings
from briefd.store import postings
from briefd.store.migrations import MIGRATIONS
from briefd.store.scopes import known_scopes
from briefd.text import query_terms
from tests.conftest import EXAMPLE, EXAMPLE_TR, REPO, WriteFiles

GOLDEN = {
    EXAMPLE: REPO / "eval" / "golden" / "queries.yaml",
    EXAMPLE_TR: REPO / "eval" / "golden" / "queries-tr.yaml",
}
EXTRA = [
    "refunds refund refunded",  # three words, one stem: three phrases with one token
    "merchnat chargebak",  # typos: a group of the word and its correction
    "the of and unknownword",  # stop words with one other word
    "zzzz unknownword",
    "idempotency_key_reused retry_policy _ __init__",  # phrases to FTS5, and no token at all
]


def _both(
    conn: sqlite3.Connection,
    query: str,
    settings: SearchSettings,
    scopes: tuple[str, ...],
    every: bool,
    lexicon: Lexicon,
) -> tuple[Candidates, Candidates]:
    terms = tuple(query_terms(query))
    fixes = Speller().corrections(conn, terms)
    common = common_terms(conn, terms, settings.any_term_max_share, settings.any_term_min_chunks)
    # prefix forms are scored from the postings alone (FTS5 cannot take the larger of a word's
    # two forms), so the comparison is on the words as typed
    plan = build_match(query, "text", fixes, common, prefix=0)
    # depth 400: every matching chunk, so the comparison is not cut at a tie
    run = (lexicon, None)
    got = [
        finish(
            conn,
            start(conn, query, plan, "hybrid", scopes, settings, None, 400, every, x),
            settings,
            None,
        )
        for x in run
    ]
    return got[0], got[1]


def _assert_same(ours: Candidates, fts5: Candidates, query: str) -> None:
    assert ours.postings and not fts5.postings
    assert ours.lists.keys() == fts5.lists.keys(), query
    for name in ours.lists:
        mine, theirs = ours.lists[name], fts5.lists[name]
        assert [r for r, _ in mine] == [r for r, _ in theirs], (query, name)
        assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], rel=1e-12), query
    # the all-terms bonus goes to the same sections: those holding every word the index holds
    bonus = [(e.key, e.all_terms) for e in ours.evidence()]
    assert bonus == [(e.key, e.all_terms) for e in fts5.evidence()], query


@pytest.mark.parametrize("source", list(GOLDEN), ids=["golden-en", "golden-tr"])
def test_postings_rank_every_golden_query_exactly_as_fts5(
    settings: Settings, source: Path, tmp_path: Path
) -> None:
    queries = [q["query"] for q in yaml.safe_load(GOLDEN[source].read_text())["queries"]]
    # binary fractions: FTS5 adds a weight per occurrence, the postings multiply (see bm25.py)
    tuned = SearchSettings(title_weight=1.75, heading_weight=0.375, body_weight=1.125)
    with Briefd(settings, embedder=None) as api:
        api.index(source)
        lexicon = Lexicon()
        with api.store.read() as conn:
            known = tuple(known_scopes(conn))
            for query in queries + EXTRA:
                for search_settings in (SearchSettings(), tuned):
                    ours, fts5 = _both(conn, query, search_settings, known, True, lexicon)
                    _assert_same(ours, fts5, query)
                ours, fts5 = _both(conn, query, SearchSettings(), known[:1], False, lexicon)
                _assert_same(ours, fts5, query)


def test_a_snake_case_word_is_scored_as_the_phrase_fts5_reads(api: Briefd) -> None:
    api.index(EXAMPLE)
    query = "idempotency_key_reused 409"
    with api.store.read() as conn:
        scopes = tuple(known_scopes(conn))
        ours, fts5 = _both(conn, query, SearchSettings(), scopes, True, Lexicon())
    _assert_same(ours, fts5, query)
    assert ours.lists[ANY_TERM]
    result = api.search(SearchRequest(query, top_k=3, mode="bm25"))
    assert "idempotency_key_reused" in result.hits[0].content


def test_a_query_reads_each_token_and_phrase_once(settings: Settings) -> None:
    """The all-terms and any-term lists and the gate's word counts hold the same words: what
    the first read, the others reuse (a phrase's FTS5 query costs milliseconds on a large
    index, each token's postings are a blob)."""
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index(EXAMPLE)
        query = SearchRequest("idempotency_key_reused merchant 409", mode="hybrid", top_k=3)
        # the postings, vectors and spelling vocabulary load (a phrase's scores, once read,
        # are kept for later searches: tests/retrieval/test_phrase_scores.py)
        api.search(SearchRequest("merchant 409 retries", mode="hybrid", top_k=3))
        statements: list[str] = []
        api.store.conn.set_trace_callback(statements.append)
        try:
            found = api.search(query)
        finally:
            api.store.conn.set_trace_callback(None)
    assert any("idempotency_key_reused" in hit.content for hit in found.hits)
    phrases = [s for s in statements if "chunks_fts MATCH" in s]
    # the chunks holding the phrase, then its scores in those its bounds leave in the running
    assert [s.split(" FROM")[0] for s in phrases] == [
        "SELECT rowid",
        "SELECT rowid, bm25(chunks_fts, 3.0, 2.0, 1.0)",
    ], phrases
    reads = [s for s in statements if "FROM postings WHERE term IN" in s]
    tokens = [t for s in reads for t in s.split("IN (", 1)[1].rstrip(")").split(", ")]
    assert tokens and len(tokens) == len(set(tokens)), reads


def test_search_uses_the_postings_and_explains_the_equal_fts5_query(api: Briefd) -> None:
    api.index(EXAMPLE)
    result = api.search(SearchRequest("partial refunds pending", mode="bm25", explain=True))
    assert result.hits[0].doc_path == "domain/refunds.md"
    assert "scored from briefd's BM25 postings" in result.sql[0]
    assert 'MATCH "partial" AND "refunds" AND "pending"' in result.sql[0]


def _dump(conn: sqlite3.Connection) -> tuple[list[tuple[str, bytes, bytes]], tuple[bytes, ...]]:
    terms = conn.execute("SELECT term, rows, freqs FROM postings ORDER BY term").fetchall()
    state = conn.execute(
        "SELECT chunks, rows, lengths, scope_codes, scopes FROM postings_state"
    ).fetchone()
    return [tuple(t) for t in terms], tuple(state)


def _rebuilt(conn: sqlite3.Connection) -> tuple[list[tuple[str, bytes, bytes]], tuple[bytes, ...]]:
    conn.execute("BEGIN")
    try:
        postings.rebuild(conn)
        return _dump(conn)
    finally:
        conn.execute("ROLLBACK")


def test_incremental_updates_equal_a_full_rebuild(
    api: Briefd, write_files: WriteFiles, tmp_path: Path
) -> None:
    root = write_files({})
    shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
    api.index()
    conn = api.store.conn
    assert _dump(conn) == _rebuilt(conn)
    refunds = root / "domain" / "refunds.md"
    refunds.write_text(refunds.read_text() + "\n## Brand new\n\nZebra quokka refunds.\n")
    (root / "domain" / "chargebacks.md").unlink()
    write_files({"projects/new/notes.md": "# Notes\n\nQuokka sightings, pending refunds.\n"})
    report = api.index()
    assert report.changed and report.deleted and report.added
    assert _dump(conn) == _rebuilt(conn)
    assert conn.execute("SELECT 1 FROM postings WHERE term = 'quokka'").fetchone()
    terms = {r[0] for r in conn.execute("SELECT term FROM postings")}
    assert "chargeback" in terms  # still in other documents
    hits = api.search(SearchRequest("quokka", mode="bm25", scopes=("all",))).hits
    assert {h.doc_path for h in hits} == {"domain/refunds.md", "projects/new/notes.md"}


def test_postings_out_of_step_fall_back_to_fts5_until_the_next_index(
    api: Briefd, write_files: WriteFiles
) -> None:
    root = write_files({})
    shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
    api.index()
    before = api.search(SearchRequest("chargeback evidence deadline", mode="bm25", explain=True))
    with api.store.write() as conn:  # a writer that knows nothing of the postings
        conn.execute("DELETE FROM chunks WHERE rowid = (SELECT max(rowid) FROM chunks)")
    api._lexicon.invalidate()
    after = api.search(SearchRequest("chargeback evidence deadline", mode="bm25", explain=True))
    assert "postings" not in after.sql[0]
    assert after.hits[0].chunk_id == before.hits[0].chunk_id
    (root / "domain" / "refunds.md").write_text("# Refunds\n\nOnly a stub now.\n")
    api.index()
    conn = api.store.conn
    assert _dump(conn) == _rebuilt(conn)
    again = api.search(SearchRequest("chargeback evidence deadline", mode="bm25", explain=True))
    assert "postings" in again.sql[0]


def test_postings_that_name_other_chunks_are_not_used(api: Briefd, write_files: WriteFiles) -> None:
    """As many chunks as the postings know, but one under another rowid: FTS5 answers."""
    root = write_files({})
    shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
    api.index()
    query = SearchRequest("chargeback evidence deadline", mode="bm25", explain=True)
    before = api.search(query)
    with api.store.write() as conn:  # a writer that knows nothing of the postings
        conn.execute(
            "UPDATE chunks SET rowid = (SELECT max(rowid) + 1000 FROM chunks) "
            "WHERE rowid = (SELECT min(rowid) FROM chunks)"
        )
    with api.store.read() as conn:
        assert Lexicon().index(conn) is None
    api._lexicon.invalidate()
    after = api.search(query)
    assert "postings" not in after.sql[0]
    assert [h.chunk_id for h in after.hits] == [h.chunk_id for h in before.hits]


def test_rebuild_and_migration_fill_the_postings(settings: Settings, api: Briefd) -> None:
    seen: list[tuple[str, int, int]] = []
    api.index(EXAMPLE, rebuild=True, progress=lambda *step: seen.append(step))
    conn = api.store.conn
    terms = conn.execute("SELECT count(*) FROM postings").fetchone()[0]
    assert ("postings", terms, terms) == [s for s in seen if s[0] == "postings"][-1]
    assert _dump(conn) == _rebuilt(conn)
    assert next(m for m in MIGRATIONS if m.name == "m014_bm25_postings").after is not None
    chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert postings.load_coverage(conn) is not None
    assert conn.execute("SELECT chunks FROM postings_state").fetchone()[0] == chunks


def test_tokens_come_from_fts5_itself() -> None:
    scratch = postings.scratch_tokenizer()
    assert postings.tokens_of(scratch, "Refunds") == ("refund",)
    assert postings.tokens_of(scratch, "ödeme") == ("odem",)
    assert postings.tokens_of(scratch, "snake_case") == ("snake", "case")
    migration = next(m for m in MIGRATIONS if m.name == "m002_chunks_fts")
    assert f"tokenize='{postings.FTS_TOKENIZE}'" in migration.sql


def test_a_reader_sees_another_writers_changes_through_the_postings(
    settings: Settings, write_files: WriteFiles
) -> None:
    root = write_files({})
    shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
    with Briefd(settings, embedder=None) as writer, Briefd(settings, embedder=None) as reader:
        writer.index()
        query = SearchRequest("quokka chargeback", mode="bm25", scopes=("all",), explain=True)
        first = reader.search(query)  # loads the postings of the first index state
        assert "postings" in first.sql[0]
        assert all("quokka" not in h.content.lower() for h in first.hits)
        write_files({"domain/quokka.md": "# Quokka chargebacks\n\nA quokka chargeback note.\n"})
        writer.index()
        second = reader.search(query)
        assert "postings" in second.sql[0]
        assert second.hits[0].doc_path == "domain/quokka.md"


def test_ties_at_the_cut_go_to_the_chunk_id(api: Briefd, write_files: WriteFiles) -> None:
    same = "# Wombat\n\nA wombat note.\n"
    write_files({f"domain/w{n:02d}.md": same for n in range(90)})  # more than the depth
    api.index()
    request = SearchRequest("wombat note", mode="bm25", top_k=3, related=0)
    with api.store.read() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id LIMIT 3")]
    assert [h.chunk_id for h in api.search(request).hits] == ids


def test_a_turkish_index_matches_query_words_by_prefix_an_english_one_does_not(
    settings: Settings, tmp_path: Path
) -> None:
    """Porter leaves most Turkish words as they are, so on the Turkish example a query word
    also matches the other forms of it ("bağlantısının" finds "bağlantı"); on the English
    example the stemmer conflates already and nothing is matched by prefix."""
    lexicon = Lexicon()
    with Briefd(settings, embedder=None) as api:
        api.index(EXAMPLE_TR)
        with api.store.read() as conn:
            index = lexicon.index(conn)
            assert index is not None and index.conflate
            assert postings.stemmed_share(conn) < 0.5
            [group] = lexicon.tokenizer.groups([("bağlantısının", "bağla*")], True)
            assert [(w.text, w.prefix) for w in group] == [
                ("bağlantısının", False),
                ("bağla*", True),
            ]
            # the share of the typed word the prefix keeps
            assert group[1].weight == pytest.approx(5 / len("bağlantısının"))
            assert lexicon.tokenizer.groups([("bağlantısının", "bağla*")], False) == (group[:1],)
            found = bm25_ranked(conn, index, [group])
            exact = bm25_ranked(conn, index, [group[:1]])
            assert len(found) > len(exact)
            texts = _contents(conn, [r for r, _ in found])
            assert any("bağlantı" in t.lower() and "bağlantısının" not in t.lower() for t in texts)
    english = Lexicon()
    with Briefd(replace(settings, db=tmp_path / "en.db"), embedder=None) as api:
        api.index(EXAMPLE)
        with api.store.read() as conn:
            index = english.index(conn)
            assert index is not None and not index.conflate
            assert postings.stemmed_share(conn) > 0.5


def bm25_ranked(
    conn: sqlite3.Connection, index: PostingsIndex, groups: list[tuple[Word, ...]]
) -> list[tuple[int, float]]:
    return with_coverage(conn, index, groups, FieldWeights(), 400, None, False)[0]


def _contents(conn: sqlite3.Connection, rowids: list[int]) -> list[str]:
    marks = ", ".join("?" * len(rowids))
    rows = conn.execute(f"SELECT content FROM chunks WHERE rowid IN ({marks})", rowids)
    return [r[0] for r in rows]


THREE_TURKISH_SECTIONS = {
    "domain/a.md": "# Kayıt\n\nSiparişlerin iptali kayıt defterine yazılır.\n",
    "domain/b.md": "# Not\n\nSipariş iptal edilince not düşülür.\n",
    "domain/c.md": "# Başka\n\nBu bölüm kargo ve teslimat sürelerini anlatır.\n",
}


def test_a_prefix_match_scores_below_the_word_as_typed(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A section holding the word as typed outranks one holding only another form of it,
    and the prefix form never adds to the word as typed (the larger of the two counts)."""
    write_files(THREE_TURKISH_SECTIONS)
    api.index()
    lexicon = Lexicon()
    with api.store.read() as conn:
        index = lexicon.index(conn)
        assert index is not None
        index = replace(index, conflate=True)  # three sections are too few to measure
        [group] = lexicon.tokenizer.groups([("siparişlerin", "sipar*")], True)
        scores = dict(bm25_ranked(conn, index, [group]))
        [typed] = lexicon.tokenizer.groups([("siparişlerin",)])
        alone = dict(bm25_ranked(conn, index, [typed]))
        paths = dict(
            conn.execute("SELECT c.rowid, d.path FROM chunks c JOIN documents d ON d.id = c.doc_id")
        )
    by_path = {paths[r]: s for r, s in scores.items()}
    assert set(by_path) == {"domain/a.md", "domain/b.md"}
    assert by_path["domain/a.md"] < by_path["domain/b.md"]  # FTS5 order: lower is better
    a_row = next(r for r, p in paths.items() if p == "domain/a.md")
    assert scores[a_row] == pytest.approx(alone[a_row])


def test_coverage_is_the_share_of_query_words_a_section_holds(
    api: Briefd, write_files: WriteFiles
) -> None:
    """Score fusion's coverage (R1): every section, in the any-term list or not, is known by
    how many of the query's words it holds; a prefix form counts for its word."""
    write_files(THREE_TURKISH_SECTIONS)
    api.index()
    lexicon = Lexicon()
    with api.store.read() as conn:
        index = lexicon.index(conn)
        assert index is not None
        index = replace(index, conflate=True)
        groups = list(
            lexicon.tokenizer.groups(
                [("siparişlerin", "sipar*"), ("iptali", "iptal*"), ("defterine", "defte*")], True
            )
        )
        found, coverage = with_coverage(conn, index, groups, FieldWeights(), 1, None, False)
        rows = {
            p: r
            for r, p in conn.execute(
                "SELECT c.rowid, d.path FROM chunks c JOIN documents d ON d.id = c.doc_id"
            )
        }
    assert [r for r, _ in found] == [rows["domain/a.md"]]  # limit 1: the list is cut
    assert coverage.share(rows["domain/a.md"]) == pytest.approx(1.0)
    assert coverage.share(rows["domain/b.md"]) == pytest.approx(2 / 3)  # "Sipariş", "iptal"
    assert coverage.share(rows["domain/c.md"]) == 0.0
    assert coverage.share(10**9) == 0.0  # a chunk the index does not know


def test_explain_names_the_prefix_forms_a_turkish_query_also_matched(
    settings: Settings, tmp_path: Path
) -> None:
    """--explain showed only the words as typed ("the same bm25 as this query") while hits
    came from their prefix forms: a section holding none of the typed words was unexplained."""
    with Briefd(settings, embedder=None) as api:
        api.index(EXAMPLE_TR)
        request = SearchRequest(
            "komisyonlarının iadesi", scopes=("all",), mode="bm25", explain=True, related=0
        )
        result = api.search(request)
    assert any(
        "komisyonlarının" not in h.content.lower() and "komisyon" in h.content.lower()
        for h in result.hits
    )
    assert result.sql[-1].endswith(
        "\n-- plus, from the postings only, prefix forms: komis* (bm25 × 0.33), "
        "iades* (bm25 × 0.83); a prefix counts at the share of the typed word it keeps, "
        "and never adds to the word itself"
    )
    assert "prefix" not in result.sql[0]  # the all-terms list takes the words as typed
    with Briefd(replace(settings, db=tmp_path / "en.db"), embedder=None) as api:
        api.index(EXAMPLE)
        english = api.search(SearchRequest("refunds pending", mode="bm25", explain=True))
    assert not any("prefix" in sql for sql in english.sql)
