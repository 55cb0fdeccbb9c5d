"""How a typed question becomes query words (R1, R4): the clitics an apostrophe joins to a word."""

from __future__ import annotations

import pytest

from briefd.api import Briefd
from briefd.errors import QueryError
from briefd.retrieval import gate_evidence
from briefd.retrieval.bm25 import Lexicon
from briefd.retrieval.lexical import build_match
from briefd.retrieval.search import SearchRequest
from tests.conftest import WriteFiles

GLOSSARY = {
    "domain/glossary.md": """
        # Glossary

        ## Acquirer

        The bank that processes card payments on behalf of a shop.

        ## Settlement

        The transfer of funds from the acquirer to the merchant's bank account.
        """,
    "domain/refunds.md": """
        # Refunds

        ## Refund window

        A full refund can be asked for within 30 days of the capture.

        ## Deploys

        Let's keep deploys out of the maintenance window on Sundays.
        """,
}


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("what's an acquirer", ("acquirer",)),
        ("why doesn't the webhook retry", ("webhook", "retry")),
        ("it’s a hard decline, we'll not retry", ("hard", "decline", "retry")),
        ("whats the refund window", ("refund", "window")),
        ("the customer's refund", ("customer", "refund")),
        ("I'd say we've got it", ("say", "got")),
        # a Turkish ending is no clitic: a section that writes the word alike holds it too
        ("Türkiye'deki iade süresi", ("türkiye", "deki", "iade", "süresi")),
        ("pod'lara ne kadar sürede", ("pod", "lara", "kadar", "sürede")),
    ],
)
def test_an_english_clitic_an_apostrophe_joins_to_a_word_is_no_query_word(
    query: str, terms: tuple[str, ...]
) -> None:
    assert build_match(query).terms == terms


def test_a_contraction_finds_the_section_the_plain_question_finds(
    api: Briefd, write_files: WriteFiles
) -> None:
    """ "what's" was searched as "s": the section holding "merchant's" and "acquirer" held every
    query word and came before the one on acquirers."""
    write_files(GLOSSARY)
    api.index()
    for query in ("what is an acquirer", "what's an acquirer", "what’s an acquirer"):
        hits = api.search(SearchRequest(query, scopes=("all",), explain=True)).hits
        assert [h.heading for h in hits] == ["Acquirer", "Settlement"], query
        assert hits[0].explain is not None and hits[0].explain.and_rank == 1


def test_a_contraction_leaves_the_gate_its_lexical_evidence(
    api: Briefd, write_files: WriteFiles
) -> None:
    """With "s" a word of the query, no section held every word: the gate read the lexical
    evidence as weak and weighed the question on the model's margin alone."""
    write_files(GLOSSARY)
    api.index()
    with api.store.read() as conn:
        plain, contracted = (
            gate_evidence.for_text(conn, text, Lexicon())
            for text in ("what is the refund window", "what's the refund window")
        )
    assert contracted.words == plain.words == ("refund", "window")
    assert contracted.all_words and contracted.strong


def test_a_query_of_a_contraction_alone_names_it_as_typed(
    api: Briefd, write_files: WriteFiles
) -> None:
    write_files(GLOSSARY)
    api.index()
    with pytest.raises(QueryError, match=r"only common words \(don't, do, it\)"):
        api.search(SearchRequest("don't do it"))
