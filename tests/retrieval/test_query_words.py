"""How a typed question becomes query words (R1, R4): the clitics an apostrophe joins to a word."""

from __future__ import annotations

import pytest

from briefd.api import Briefd
from briefd.errors import QueryError
from briefd.retrieval import gate_evidence
from briefd.retrieval.bm25 import Lexicon
from briefd.retrieval.lexical import build_match
from briefd.retrieval.search import SearchRequest
from briefd.text import compound_words, joined_words
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


EVENTS = {
    "domain/events.md": """
        # Payment events

        ## Topic

        Every state change of a payment is published to `payments.events.v1`, keyed by its id.

        ## Retention

        Events stay 7 days on the events topic; `payments.state.v1` keeps the latest state of
        each payment forever, so payments can be replayed.
        """,
    "domain/certificates.md": """
        # Certificates

        ## Client certificate

        The client certificate for the acquirer expires every 13 months; the next expiry is on
        2025-03-14.

        ## Status

        Accepted on 2025-01-03, reviewed 14 days later: 14 reviewers.

        ## Renewal

        cert-manager renews the server certificates.
        """,
}


@pytest.mark.parametrize(
    ("query", "name", "heading"),
    [
        ("payments.events.v1", "payments.events.v1", "Topic"),
        ("payments.state.v1 retention", "payments.state.v1", "Retention"),
        ("2025-03-14", "2025-03-14", "Client certificate"),
        ("when does it expire, 2025-03-14?", "2025-03-14", "Client certificate"),
    ],
)
def test_a_joined_name_the_index_holds_is_matched_as_written(
    api: Briefd, write_files: WriteFiles, query: str, name: str, heading: str
) -> None:
    """Its parts as words of their own matched a section holding them anywhere: the section on
    "payments.state.v1" and "events" came first for "payments.events.v1", the one "accepted on
    2025-01-03" and "14 days" for "2025-03-14"."""
    write_files(EVENTS)
    api.index()
    result = api.search(SearchRequest(query, scopes=("all",), explain=True))
    assert result.hits[0].heading == heading
    assert f'"{name}"' in result.sql[-1]  # --explain shows the name matched as one phrase


def test_a_joined_name_the_index_lacks_keeps_its_parts(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A typo inside a name: no section holds "payments.evnts.v1", its parts are searched (and
    "evnts" corrected) as before."""
    write_files(EVENTS)
    api.index()
    result = api.search(SearchRequest("payments.evnts.v1", scopes=("all",), explain=True))
    assert result.hits[0].heading == "Topic"
    assert '"payments" AND ("evnts" OR "events") AND "v1"' in result.sql[0]


TEAM = {
    "domain/certificates.md": """
        # TLS certificates

        ## Renewal

        cert-manager renews a certificate 30 days before it expires.

        ## Upgrading cert-manager

        Upgrade cert-manager one minor version at a time, staging first.
        """,
    "domain/receipts.md": """
        # Receipts

        ## Sending

        Customers get an e-mail receipt after every payment, sent through SES.

        ## Bounces

        After two hard e-mail bounces we stop sending receipts.
        """,
    "domain/roles.md": """
        # Team roles

        ## Release manager

        The release manager cuts the release branch and may upgrade the staging cluster.

        ## Engineering manager

        The engineering manager approves on-call swaps and answers mail from the board.
        """,
    "domain/hospitals.md": """
        # Hospitals

        ## Teaching hospitals

        Teaching hospitals train residents; a teaching hospital reports outcomes yearly.

        ## Staffing

        Non-teaching hospitals hire from teaching programmes.

        ## Outcomes

        Outcomes of teaching wards are audited.

        ## Transfers

        Non-urgent transfers go by road; non-profit clinics take the rest.

        ## Funding

        Non-profit hospitals are funded by the region.
        """,
}


@pytest.mark.parametrize(
    ("query", "name", "headings"),
    [
        ("upgrade cert-manager", "cert-manager", ["Upgrading cert-manager", "Renewal"]),
        ("e-mail bounces", "e-mail", ["Bounces", "Sending"]),
    ],
)
def test_a_compound_the_index_writes_joined_is_matched_as_written(
    api: Briefd, write_files: WriteFiles, query: str, name: str, headings: list[str]
) -> None:
    """Its parts as words of their own matched every section holding one of them: "upgrade
    cert-manager" ranked the release manager's section ("upgrade" and "manager") above the
    renewal by cert-manager and found the engineering manager's, and "e-mail bounces" found
    the engineering manager's "mail from the board"."""
    write_files(TEAM)
    api.index()
    result = api.search(SearchRequest(query, scopes=("all",), explain=True))
    assert f'"{name}"' in result.sql[0]
    found = [h.heading for h in result.hits]
    assert found[:2] == headings
    assert "Engineering manager" not in found


def test_a_compound_the_index_also_writes_apart_keeps_its_parts(
    api: Briefd, write_files: WriteFiles
) -> None:
    """Sections write "teaching" (the rarer of its words) alone: "non-teaching" stays two
    words, and the sections on teaching hospitals are found."""
    write_files(TEAM)
    api.index()
    result = api.search(SearchRequest("non-teaching hospitals", scopes=("all",), explain=True))
    assert '"non" AND "teaching" AND "hospitals"' in result.sql[0]
    assert "Teaching hospitals" in [h.heading for h in result.hits]


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("payments.events.v1 events", [("payments.events.v1", ("payments", "v1"))]),
        (
            "see platform/http/retry.py",
            [("platform/http/retry.py", ("platform", "http", "retry", "py"))],
        ),
        ("2025-03-14 at 02:00", [("2025-03-14", ("2025", "03", "14")), ("02:00", ("02", "00"))]),
        # words joined by hyphens or one slash, and abbreviations, are also written apart
        ("non-teaching hospitals", []),
        ("TCR/CD3 microdomains", []),
        ("cert-manager GLP-1R", []),
        ("M.Sc.Dr. e.g.", []),
    ],
)
def test_which_joined_words_are_one_name(
    query: str, names: list[tuple[str, tuple[str, ...]]]
) -> None:
    assert joined_words(query) == names


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("upgrade cert-manager", [("cert-manager", ("cert", "manager"))]),
        ("read-only replicas, read-only", [("read-only", ("read", "only"))]),
        ("e-mail bounces and mail", [("e-mail", ("e",))]),
        ("GLP-1R and IL-6", [("glp-1r", ("glp", "1r")), ("il-6", ("il", "6"))]),
        # names (joined_words), paths, abbreviations and one slash are no compounds
        ("2025-03-14 in platform/http-client/retry.py, e.g. TCR/CD3 or a-b", []),
    ],
)
def test_which_words_joined_by_hyphens_are_compounds(
    query: str, names: list[tuple[str, tuple[str, ...]]]
) -> None:
    assert compound_words(query) == names
