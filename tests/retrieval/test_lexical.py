from __future__ import annotations

import pytest

from briefd.api import Briefd
from briefd.errors import QueryError, ScopeError
from briefd.retrieval.fusion import RankedList, rrf
from briefd.retrieval.lexical import FieldWeights, build_match, common_terms, search_sql
from briefd.retrieval.search import QueryMode, SearchRequest
from briefd.settings import Settings
from briefd.text import MAX_QUERY_TERMS, query_terms
from briefd.tokens import count_tokens
from tests.conftest import WriteFiles

DOCS = {
    "domain/retry-policy.md": """
        ---
        aliases: [backoff rules]
        ---
        # Retry policy for card payments

        ## Retry Policy {#retry-policy}

        Soft declines are retried at most three times; capture is at most once and idempotent.

        ## Scheme limits

        Visa limits reattempts of a declined card transaction.
        """,
    "domain/glossary.md": """
        # Glossary

        ## Capture

        Capture moves authorised money; a card payment is retried only when soft declined.
        """,
    "domain/odeme.md": """
        # Ödeme iadeleri

        ## Kısmi iade

        Kısmi iade işlemi çekim tutarını aşamaz; ılımlı kurallar uygulanır.
        """,
    "projects/checkout/notes.md": "# Checkout notes\n\nRetry the webhook delivery.\n",
}


@pytest.fixture
def indexed(api: Briefd, write_files: WriteFiles) -> Briefd:
    write_files(DOCS)
    api.index()
    return api


def test_search_sql_is_pinned() -> None:
    assert search_sql(FieldWeights(3.0, 2.0, 1.0)) == (
        "SELECT rowid, bm25(chunks_fts, 3.0, 2.0, 1.0) AS bm25\n"
        "FROM chunks_fts\n"
        "WHERE chunks_fts MATCH ?\n"
        "ORDER BY bm25\n"
        "LIMIT ?"
    )


def test_narrow_scope_still_fills_the_list(api: Briefd, write_files: WriteFiles) -> None:
    many = {f"domain/d{i}.md": f"# D{i}\n\nretry card {i}\n" for i in range(40)}
    write_files({**many, "projects/x/one.md": "# One\n\nretry once\n"})
    api.index()
    hits = api.search(SearchRequest("retry", scopes=("projects/x",), top_k=5)).hits
    assert [h.doc_path for h in hits] == ["projects/x/one.md"]


def test_free_text_is_quoted_and_stop_words_dropped() -> None:
    plan = build_match('How do we retry-policy: "at most once" (idempotent) AND OR NOT *')
    assert plan.terms == ("retry", "policy", "most", "once", "idempotent")
    assert plan.all_terms == '"retry" AND "policy" AND "most" AND "once" AND "idempotent"'
    assert plan.any_term == '"retry" OR "policy" OR "most" OR "once" OR "idempotent"'


def test_a_query_of_only_stop_words_has_no_terms_and_a_clear_error(indexed: Briefd) -> None:
    assert query_terms("how to do it") == []
    assert query_terms("Bu ne, ödeme mi?") == ["ödeme"]
    for mode in ("bm25", None):
        with pytest.raises(QueryError, match=r"only common words \(what, is, it\)"):
            indexed.search(SearchRequest("What is it?", mode=mode))
    advanced = SearchRequest('"is at most once"', query_mode="advanced")  # FTS5 syntax as is
    assert indexed.search(advanced).hits[0].doc_path == "domain/retry-policy.md"


def test_punctuation_never_raises(indexed: Briefd) -> None:
    for query in [
        'retry-policy: "at most once" (idempotent) AND OR NOT *',
        "a'b",
        "NEAR(",
        "^x",
        "x*",
        "don't retry",
    ]:
        result = indexed.search(SearchRequest(query, scopes=("all",)))
        assert result.ranking_version == "r13"


def test_query_without_words_is_a_clear_error(indexed: Briefd) -> None:
    with pytest.raises(QueryError, match="the query has no words to search for; type some words"):
        indexed.search(SearchRequest("?!*"))


def test_all_terms_lead_any_term_follows(indexed: Briefd) -> None:
    hits = indexed.search(SearchRequest("retry card", scopes=("all",), explain=True)).hits
    both = [h for h in hits if h.explain and h.explain.and_rank is not None]
    assert hits[: len(both)] == tuple(both)
    assert {h.heading for h in both} == {"Capture", "Scheme limits", "Retry Policy"}
    assert hits[-1].doc_path == "projects/checkout/notes.md"
    assert hits[-1].explain is not None and hits[-1].explain.and_rank is None


def test_one_word_query_explains_its_all_terms_rank(indexed: Briefd) -> None:
    """A one-word query's any-term list is its all-terms list (every hit holds every word and
    gets the all-terms bonus in hybrid fusion); --explain used to print "all-terms rank -"."""
    hits = indexed.search(SearchRequest("retry", scopes=("all",), explain=True)).hits
    assert hits
    for hit in hits:
        assert hit.explain is not None and hit.explain.and_rank is not None, hit.doc_path
        assert (hit.explain.and_rank, hit.explain.and_bm25) == (
            hit.explain.any_rank,
            hit.explain.any_bm25,
        )


def test_title_aliases_and_heading_outweigh_body(indexed: Briefd) -> None:
    assert (
        indexed.search(SearchRequest("backoff rules")).hits[0].doc_path == "domain/retry-policy.md"
    )
    first = indexed.search(SearchRequest("capture")).hits[0]
    assert first.heading == "Capture"


def test_advanced_mode_passes_fts5_syntax(indexed: Briefd) -> None:
    hits = indexed.search(SearchRequest('"at most once"', query_mode="advanced")).hits
    assert [h.heading for h in hits] == ["Retry Policy"]
    hits = indexed.search(SearchRequest("reattempt* NOT visa", query_mode="advanced")).hits
    assert hits == ()


def test_advanced_mode_syntax_error_says_what_to_do(indexed: Briefd) -> None:
    with pytest.raises(QueryError) as caught:
        indexed.search(SearchRequest('"unclosed', query_mode="advanced"))
    assert str(caught.value).startswith("the query is not valid FTS5 syntax (")
    assert str(caught.value).endswith(
        "); fix it, or search without --query-mode advanced to have punctuation escaped"
    )


def test_default_scopes_and_unknown_scope(indexed: Briefd) -> None:
    result = indexed.search(SearchRequest("retry"))
    assert result.scopes == ("domain",)  # conventions has no documents here
    assert all(h.scope == "domain" for h in result.hits)
    with pytest.raises(ScopeError) as caught:
        indexed.search(SearchRequest("retry", scopes=("projects/x",)))
    assert str(caught.value) == (
        "scope 'projects/x' does not exist; known scopes: domain, projects/checkout (or 'all')"
    )
    only = indexed.search(SearchRequest("retry", scopes=("projects/checkout",))).hits
    assert [h.doc_path for h in only] == ["projects/checkout/notes.md"]


def test_turkish_without_diacritics_matches(indexed: Briefd) -> None:
    for query in ("kismi iade", "KISMİ İADE", "ilimli kurallar", "odeme iadeleri"):
        hits = indexed.search(SearchRequest(query)).hits
        assert hits and hits[0].doc_path == "domain/odeme.md", query


def test_hit_fields(indexed: Briefd) -> None:
    hit = indexed.search(SearchRequest("visa reattempts")).hits[0]
    assert (hit.doc_path, hit.heading, hit.heading_path) == (
        "domain/retry-policy.md",
        "Scheme limits",
        ("Scheme limits",),
    )
    assert (hit.start_line, hit.end_line) == (10, 12)
    assert hit.content == "Visa limits reattempts of a declined card transaction."
    assert hit.tokens == count_tokens(hit.content) and len(hit.chunk_id) == 16 and hit.score > 0


def test_rrf_weights_and_contributions() -> None:
    fused = rrf([RankedList("a", 1.0, ["x", "y"]), RankedList("b", 0.25, ["y", "z"])], k=60)
    assert [f.key for f in fused] == ["y", "x", "z"]
    y = fused[0]
    assert y.contributions == (("a", 1.0 / 62), ("b", 0.25 / 61))
    assert y.score == pytest.approx(1.0 / 62 + 0.25 / 61)


def test_common_terms_leave_the_any_term_query_only_on_large_indexes(
    api: Briefd, write_files: WriteFiles
) -> None:
    files = {f"domain/d{i}.md": f"# Doc {i}\n\nsettlement batch number {i}\n" for i in range(30)}
    files["domain/rare.md"] = "# Rare\n\nsettlement reversal\n"
    api.index(write_files(files))
    with api.store.read() as conn:
        terms = ("settlement", "reversal")
        assert common_terms(conn, terms, share=0.5, floor=0) == {"settlement": 31}
        assert common_terms(conn, terms, share=0.5, floor=2000) == {}  # small index: keep all
        plan = build_match("settlement reversal", common=common_terms(conn, terms, 0.5))
    assert plan.any_term == '"reversal"'
    assert plan.all_terms == '"settlement" AND "reversal"'


def test_a_full_all_terms_list_skips_the_any_term_query_without_changing_the_ranking(
    settings: Settings, write_files: WriteFiles
) -> None:
    from dataclasses import replace

    files = {
        f"domain/d{i}.md": f"# Doc {i}\n\nrefund ledger {' refund' * (i % 7)} entry {i}\n"
        for i in range(12)
    }
    files["domain/partial.md"] = "# Partial\n\nrefund without the other word\n"
    root = write_files(files)
    small = replace(settings, search=replace(settings.search, candidates=5, related=0))
    request = SearchRequest("refund ledger", top_k=5, mode="bm25", explain=True)
    with Briefd(small, embedder=None) as skipping:
        skipping.index(root)
        fast = skipping.search(request)
    # any-term weight 1.0: a chunk missing a term could compete, so both queries run
    both = replace(small, search=replace(small.search, any_term_weight=1.0))
    with Briefd(both, embedder=None) as full:
        slow = full.search(request)
    assert [h.chunk_id for h in fast.hits] == [h.chunk_id for h in slow.hits]
    assert all(h.explain and h.explain.any_rank is None for h in fast.hits)
    assert all(h.explain and h.explain.any_rank is not None for h in slow.hits)


def test_a_pasted_page_is_searched_by_its_first_words(indexed: Briefd) -> None:
    filler = " ".join(f"zz{n:05d}x" for n in range(5000))
    result = indexed.search(SearchRequest(f"Visa reattempts {filler}", mode="bm25"))
    assert result.hits[0].heading == "Scheme limits"
    assert len(query_terms(filler)) == MAX_QUERY_TERMS


def test_a_scope_named_composed_otherwise_is_the_same_scope(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A folder name written decomposed (NFD, as macOS writes it) gives a scope an agent
    types composed, and the other way round: "scope 'projects/ödeme' does not exist; known
    scopes: …, projects/ödeme"."""
    write_files(
        {
            "projects/ödeme/iade.md": "# İade\n\nİade süresi 14 gün.\n",
            "projects/o\u0308zel/not.md": "# Not\n\nİade notu.\n",
            "domain/x.md": "# X\n\nx\n",
        }
    )
    api.index()
    decomposed = api.search(SearchRequest("iade", scopes=("projects/o\u0308deme",)))
    assert decomposed.scopes == ("projects/ödeme",)
    assert [h.doc_path for h in decomposed.hits] == ["projects/ödeme/iade.md"]
    composed = api.search(SearchRequest("iade", scopes=("projects/özel",)))
    assert [h.doc_path for h in composed.hits] == ["projects/o\u0308zel/not.md"]
    view = api.document("projects/ödeme/iade.md", scopes=("projects/o\u0308deme",))
    assert view.title == "İade"


SPACELESS_DOCS = {
    "domain/返金.md": """
        ---
        tags: [返金ポリシー]
        ---
        # 返金ポリシー

        ## 部分返金

        部分返金も可能ですが、合計額は売上金額を超えることはできません。

        ## 3Dセキュア認証

        認証に失敗した取引は自動的に拒否されます。
        """,
    "domain/退款.md": """
        # 退款规则

        ## 对账流程

        每天晚上十一点进行对账，银行文件与我们的账本逐笔核对。
        """,
}


def test_a_word_inside_a_japanese_or_chinese_sentence_is_found(
    api: Briefd, write_files: WriteFiles
) -> None:
    """Japanese and Chinese put no spaces between words: a sentence was one FTS5 word, and a
    word of it typed as a query (BM25, as with embeddings off) found nothing."""
    write_files(SPACELESS_DOCS)
    api.index()

    def top(query: str, mode: QueryMode = "text") -> tuple[str, tuple[str, ...]]:
        hits = api.search(SearchRequest(query, top_k=3, query_mode=mode)).hits
        return (hits[0].doc_path, hits[0].heading_path) if hits else ("", ())

    assert top("合計額") == ("domain/返金.md", ("部分返金",))
    assert top("拒否") == ("domain/返金.md", ("3Dセキュア認証",))
    assert top("セキュア") == ("domain/返金.md", ("3Dセキュア認証",))
    assert top("银行文件") == ("domain/退款.md", ("对账流程",))
    assert top('"売上金額"', "advanced") == ("domain/返金.md", ("部分返金",))  # a phrase
    assert top('"金額売上"', "advanced") == ("", ())  # ... of these characters in this order
    with pytest.raises(QueryError) as refused:  # a tag is named as written, not as searched
        api.search(SearchRequest("合計額", tags=("返金",)))
    assert "返金ポリシー" in str(refused.value)


def test_sharp_s_and_ss_find_each_other(api: Briefd, write_files: WriteFiles) -> None:
    """German typed without an ß key, and Swiss German always, write "ss": with both spellings
    in the knowledge (so neither is taken for a typo), "strasse" found only the Swiss page
    and "Straße" only the German one."""
    write_files(
        {
            "domain/adresse.md": "# Adressen\n\n## Straße\n\nDie Straße mit Hausnummer.\n",
            "domain/schweiz.md": "# Schweiz\n\n## Strasse\n\nDie Strasse mit Hausnummer.\n",
            "domain/konto.md": "# Konten\n\n## Schliessung\n\nDie Schliessung des Kontos.\n",
            "domain/tor.md": "# Tore\n\n## Schließung\n\nDie Schließung der Tore.\n",
        }
    )
    api.index()

    def found(query: str) -> set[str]:
        return {h.doc_path for h in api.search(SearchRequest(query)).hits}

    street = {"domain/adresse.md", "domain/schweiz.md"}
    assert found("strasse") == found("STRASSE") == found("Straße") == street
    assert found("Schließung") == found("schliessung") == {"domain/konto.md", "domain/tor.md"}


def test_full_width_and_half_width_forms_find_the_usual_ones(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A Japanese or Chinese input method types Latin letters and digits full-width (ＡＰＩ,
    ３Ｄ) and some keyboards katakana half-width (ｾｷｭｱ): those found nothing written API, 3D
    or セキュア, as "API" found nothing in a page written ＡＰＩキー."""
    write_files(
        {
            "domain/secure.md": "# 認証\n\n## 3Dセキュア\n\n3Dセキュアで本人認証します。\n",
            "domain/keys.md": "# 鍵\n\n## ＡＰＩキー\n\nＡＰＩキーは管理画面で発行します。\n",
        }
    )
    api.index()

    def top(query: str) -> str:
        hits = api.search(SearchRequest(query)).hits
        return hits[0].doc_path if hits else ""

    assert top("３Ｄ") == top("ｾｷｭｱ") == "domain/secure.md"
    assert top("API") == top("ＡＰＩ") == top("api") == "domain/keys.md"


def test_pointed_hebrew_and_arabic_are_found_by_the_words_as_typed(
    api: Briefd, write_files: WriteFiles
) -> None:
    """FTS5 reads a combining mark as a space: a word written with Hebrew points or Arabic
    harakat (a glossary's pronunciation, a name) was indexed in pieces, and the word as
    everyone types it, without them, found nothing; with them, it found the unpointed page."""
    write_files(
        {
            "domain/he.md": "# מילון\n\n## שָׁלוֹם\n\nבִּטּוּל עִסְקָה לִפְנֵי סְלִיקָה.\n",
            "domain/ar.md": "# مسرد\n\n## الاسْتِرْدَاد\n\nيَجِبُ طَلَبُ الاسْتِرْدَادِ خِلالَ مُـدَّة.\n",
        }
    )
    api.index()

    def top(query: str) -> str:
        hits = api.search(SearchRequest(query)).hits
        return hits[0].doc_path if hits else ""

    assert top("שלום") == top("סליקה") == top("שָׁלוֹם") == "domain/he.md"
    assert top("طلب الاسترداد") == top("مدة") == top("الاسْتِرْدَاد") == "domain/ar.md"
