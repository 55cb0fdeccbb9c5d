"""Search with code paths (R5): the best section of each document whose ``refs`` cover a path
leads, ranked by the query among those documents; then the other hits, within ``top_k``."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.errors import QueryError
from briefd.retrieval.search import SearchRequest
from tests.conftest import WriteFiles

ROUNDING = "Rounding bug in the half-even rule: the rounding bug hides in minor units.\n"


@pytest.fixture
def indexed(api: Briefd, write_files: WriteFiles) -> Briefd:
    files = {
        f"domain/money-{n}.md": f"# Money {n}\n\n## Rounding\n\n{ROUNDING * (4 - n)}"
        for n in (1, 2, 3)
    }
    files.update(
        {
            "domain/posting.md": """\
                ---
                refs: ["svc/ledger/**"]
                ---
                # Posting

                ## Overview

                Postings are written once and never changed.

                ## Amounts

                Amounts are integers; a rounding step happens before posting.
                """,
            "domain/balances.md": """\
                ---
                refs: ["svc/ledger/balance/**"]
                ---
                # Balances

                ## Snapshots

                Snapshots are taken hourly.

                ## Fixing a bug

                A rounding bug in a snapshot is fixed by replaying postings.
                """,
            "conventions/go.md": """\
                ---
                refs: ["svc/**/*.go"]
                ---
                # Go services

                ## Layout

                One module per service; internal packages stay internal.
                """,
            "projects/ledger/notes.md": """\
                ---
                refs: ["svc/ledger/**"]
                ---
                # Ledger notes

                ## Rounding

                The ledger project fixed a rounding bug last year.
                """,
        }
    )
    write_files(files)
    api.index()
    return api


def paths_of(api: Briefd, request: SearchRequest, paths: tuple[str, ...] = ()) -> list[str]:
    return [f"{h.doc_path} › {h.heading}" for h in api.search(replace(request, paths=paths)).hits]


def test_documents_the_paths_touch_lead_ranked_by_the_query(indexed: Briefd) -> None:
    request = SearchRequest("rounding bug", top_k=3)
    assert paths_of(indexed, request) == [
        "domain/money-1.md › Rounding",
        "domain/money-2.md › Rounding",
        "domain/money-3.md › Rounding",
    ]
    touched = paths_of(
        indexed, SearchRequest("rounding bug", top_k=5), ("svc/ledger/balance/x.go",)
    )
    assert touched == [
        "domain/balances.md › Fixing a bug",  # every query term, in its best section
        "domain/posting.md › Amounts",  # some query terms
        "conventions/go.md › Layout",  # none: its first section
        "domain/money-1.md › Rounding",
        "domain/money-2.md › Rounding",
    ]


def test_top_k_holds_and_a_ranked_governed_section_is_not_repeated(indexed: Briefd) -> None:
    request = SearchRequest("rounding bug", top_k=2)
    assert paths_of(indexed, request, ("./svc/ledger/balance/x.go", "svc/ledger/balance/x.go")) == [
        "domain/balances.md › Fixing a bug",
        "domain/posting.md › Amounts",
    ]
    wide = SearchRequest("rounding bug", top_k=10)
    hits = paths_of(indexed, wide, ("svc/ledger/balance/x.go",))
    assert len(hits) == len(set(hits))
    assert hits[:3] == [
        "domain/balances.md › Fixing a bug",
        "domain/posting.md › Amounts",
        "conventions/go.md › Layout",
    ]
    assert set(paths_of(indexed, wide)) <= set(hits)


def test_only_documents_in_the_requested_scopes_lead(indexed: Briefd) -> None:
    paths = ("svc/ledger/posting.py",)
    assert paths_of(indexed, SearchRequest("rounding bug", top_k=1), paths) == [
        "domain/posting.md › Amounts"
    ]
    every = SearchRequest("rounding bug", scopes=("all",), top_k=2)
    assert paths_of(indexed, every, paths) == [
        "projects/ledger/notes.md › Rounding",
        "domain/posting.md › Amounts",
    ]


def test_paths_no_document_governs_change_nothing(indexed: Briefd) -> None:
    request = SearchRequest("rounding bug", top_k=3)
    assert paths_of(indexed, request, ("web/app.ts",)) == paths_of(indexed, request)
    assert (
        indexed.search(replace(request, paths=("web/app.ts",))).hits == indexed.search(request).hits
    )


def test_paths_lead_even_when_the_query_matches_nothing(indexed: Briefd) -> None:
    assert paths_of(indexed, SearchRequest("kubernetes"), ("svc/ledger/balance/x.go",)) == [
        "conventions/go.md › Layout",
        "domain/balances.md › Snapshots",
        "domain/posting.md › Overview",
    ]


def test_a_related_hit_leaves_with_the_hit_it_is_linked_from(
    api: Briefd, write_files: WriteFiles, tmp_path: Path
) -> None:
    write_files(
        {
            "domain/a.md": "# A\n\n## Rounding\n\nRounding bug, rounding bug: see [[c]].\n",
            "domain/c.md": "# C\n\n## Linked\n\nPlain words only.\n",
            "domain/b.md": '---\nrefs: ["svc/**"]\n---\n# B\n\n## Intro\n\nNothing here.\n',
        }
    )
    api.index()
    plain = api.search(SearchRequest("rounding bug", top_k=1)).hits
    assert [(h.doc_path, h.related_to is not None) for h in plain] == [
        ("domain/a.md", False),
        ("domain/c.md", True),
    ]
    led = api.search(SearchRequest("rounding bug", top_k=1, paths=("svc/x.go",))).hits
    assert [h.doc_path for h in led] == ["domain/b.md"]
    both = api.search(SearchRequest("rounding bug", top_k=2, paths=("svc/x.go",))).hits
    assert [h.doc_path for h in both] == ["domain/b.md", "domain/a.md", "domain/c.md"]
    assert both[2].related_to == both[1].chunk_id


def test_hybrid_search_takes_paths_the_same_way(
    hybrid_api: Briefd, write_files: WriteFiles
) -> None:
    write_files(
        {
            "domain/a.md": "# A\n\n## Rounding\n\nRounding bug, rounding bug.\n",
            "domain/b.md": '---\nrefs: ["svc/**"]\n---\n# B\n\n## Intro\n\nNothing.\n\n'
            "## Bug\n\nA rounding bug.\n",
        }
    )
    hybrid_api.index()
    request = SearchRequest("rounding bug", top_k=2, mode="hybrid")
    hits = hybrid_api.search(replace(request, paths=("svc/x.go",))).hits
    assert [(h.doc_path, h.heading) for h in hits if h.related_to is None] == [
        ("domain/b.md", "Bug"),
        ("domain/a.md", "Rounding"),
    ]


def test_paths_answer_a_query_of_only_common_words(indexed: Briefd) -> None:
    request = SearchRequest("what is this about?")
    assert paths_of(indexed, request, ("svc/ledger/balance/x.go",)) == [
        "conventions/go.md › Layout",
        "domain/balances.md › Snapshots",
        "domain/posting.md › Overview",
    ]
    with pytest.raises(QueryError, match="only common words"):
        indexed.search(request)


def test_common_words_and_paths_nothing_governs_are_an_error_not_an_empty_answer(
    indexed: Briefd, write_files: WriteFiles
) -> None:
    """Without a word to search for, the governing documents are the whole answer: when no
    document in the scopes governs the paths (a typo, a folder no refs name, a tag none of
    them has), search and bundles say so, naming those in scopes not requested."""
    words = "the query has only common words (what, is, this), which every section contains"
    with pytest.raises(QueryError) as typo:
        indexed.search(SearchRequest("what is this?", paths=("web/app.ts",)))
    assert str(typo.value) == (
        f"no document in scopes domain, conventions has refs covering web/app.ts, and {words}; "
        "add the words that name what you are looking for"
    )
    elsewhere = (
        "no document in scopes conventions has refs covering svc/ledger/x.py (domain/posting.md, "
        "projects/ledger/notes.md do, in scopes not requested: add them to scopes)"
    )
    with pytest.raises(QueryError, match=re.escape(elsewhere)):
        indexed.compile_bundle(
            BundleRequest("what is this?", scopes=("conventions",), paths=("svc/ledger/x.py",))
        )
    write_files({"domain/kargo.md": "---\ntags: [kargo]\n---\n# Kargo\n\nShipping.\n"})
    indexed.index()
    with pytest.raises(QueryError, match="no document tagged kargo in scopes domain, conv"):
        indexed.compile_bundle(BundleRequest("", paths=("svc/ledger/x.go",), tags=("kargo",)))
    governed = indexed.compile_bundle(BundleRequest("", paths=("svc/ledger/x.go",)))
    assert {i.doc_path for i in governed.items} == {"domain/posting.md", "conventions/go.md"}


def test_a_folder_named_without_its_trailing_slash_is_the_folder(indexed: Briefd) -> None:
    """``svc/ledger`` (a folder as a shell or an editor names it) is ``svc/ledger/``: the
    documents whose refs cover the folder lead, and a bundle says which glob covers it."""
    request = SearchRequest("what is this?")
    led = ["domain/posting.md › Overview"]
    assert paths_of(indexed, request, ("svc/ledger/",)) == led
    assert paths_of(indexed, request, ("svc/ledger",)) == led
    bundle = indexed.compile_bundle(BundleRequest("", paths=("svc/ledger",)))
    assert {(i.doc_path, i.reasons) for i in bundle.items} == {
        ("domain/posting.md", ("refs svc/ledger/** covers svc/ledger",))
    }


def test_paths_are_read_as_the_file_they_name_and_never_out_of_the_repository(
    indexed: Briefd,
) -> None:
    """``svc//ledger/x.go`` (joined strings) and ``svc/ledger/./x.go`` name svc/ledger/x.go,
    which posting.md governs; ``svc/ledger/balance/../x.go`` too, and not the balances.md
    of ``svc/ledger/balance/**`` its spelling starts in. ``../x.go`` is no code path: an error
    says so, in search and in bundles, rather than an answer without the paths."""
    request = SearchRequest("what is this?")
    led = ["conventions/go.md › Layout", "domain/posting.md › Overview"]
    for path in ("svc//ledger/x.go", "svc/ledger/./x.go", "svc/ledger/balance/../x.go"):
        assert paths_of(indexed, request, (path,)) == led, path
    out = "path '../x.go' leads out of the code repository; name code paths from the repository"
    with pytest.raises(QueryError, match=re.escape(out)):
        indexed.search(SearchRequest("rounding bug", paths=("../x.go",)))
    with pytest.raises(QueryError, match=re.escape(out)):
        indexed.compile_bundle(BundleRequest("rounding bug", paths=("svc/a.go", "../x.go")))
