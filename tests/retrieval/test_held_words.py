"""The all-terms bonus (R3) counts the query words the index holds: a word no section has
tells no section from another, so it keeps none from the bonus."""

from __future__ import annotations

from dataclasses import replace

import pytest

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.errors import StoreError
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from tests.conftest import WriteFiles

TV_MANUAL = {
    "domain/picture.md": "# Picture\n\n"
    "## Dotted line on the screen edge\n\n"
    "A dotted line along the edge of the screen comes from a loose panel cable: reseat the "
    "cable behind the panel.\n\n"
    "## Edge lighting\n\nThe edge of the screen is lit by a row of lights.\n\n"
    "## Brightness\n\nThe screen brightness follows the light in the room.\n",
    "domain/sound.md": "# Sound\n\n## Speakers\n\nThe speakers sit behind the lower edge.\n",
}


def test_a_word_no_section_holds_keeps_no_section_from_the_all_terms_bonus(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(TV_MANUAL)
    search = replace(settings.search, gate=False)  # the fusion alone, whatever the fake's cosines
    with Briefd(replace(settings, search=search), embedder=FakeEmbedder()) as api:
        api.index()
        # "flickering": no section has it, nor a spelling close to it
        result = api.search(
            SearchRequest(
                "flickering dotted line on the screen edge", scopes=("all",), explain=True
            )
        )
    assert [h.heading for h in result.hits][:1] == ["Dotted line on the screen edge"]
    bonus = {
        h.heading: dict(h.explain.contributions)["all-terms"]
        for h in result.hits
        if h.explain is not None
    }
    assert bonus["Dotted line on the screen edge"] == settings.search.all_terms_bonus
    # the others lack "dotted" or "line", words the index holds
    assert bonus["Edge lighting"] == bonus["Brightness"] == bonus["Speakers"] == 0.0
    assert all(h.explain is not None and h.explain.and_rank is None for h in result.hits)


def test_a_query_whose_words_the_index_all_holds_keeps_the_bonus_for_every_word(
    settings: Settings, write_files: WriteFiles
) -> None:
    write_files(TV_MANUAL)
    search = replace(settings.search, gate=False)
    with Briefd(replace(settings, search=search), embedder=FakeEmbedder()) as api:
        api.index()
        result = api.search(SearchRequest("dotted screen edge", scopes=("all",), explain=True))
    bonus = {
        h.heading: dict(h.explain.contributions)["all-terms"]
        for h in result.hits
        if h.explain is not None
    }
    assert bonus == {
        "Dotted line on the screen edge": settings.search.all_terms_bonus,
        "Edge lighting": 0.0,
        "Brightness": 0.0,
        "Speakers": 0.0,
    }


def test_without_the_postings_the_bonus_counts_the_same_words(
    settings: Settings, write_files: WriteFiles
) -> None:
    """FTS5 answers while the postings are out of step (a writer that knows nothing of them,
    until the next index run): the words the index holds are known from FTS5, so the same
    query ranks the same, bonus for bonus."""
    write_files(TV_MANUAL)
    search = replace(settings.search, gate=False)
    queries = (
        "flickering dotted line on the screen edge",  # "flickering": no section has it
        "dotted screen edge",
        "flickering speakers",  # one word held: every section holding it
        "zzzz qqqq",  # none held: no section gets the bonus
    )
    with Briefd(replace(settings, search=search), embedder=FakeEmbedder()) as api:
        api.index()

        def ranked(query: str) -> list[tuple[str, float, tuple[tuple[str, float], ...]]]:
            result = api.search(SearchRequest(query, scopes=("all",), explain=True))
            return [
                (h.heading, h.score, h.explain.contributions)
                for h in result.hits
                if h.explain is not None
            ]

        with_postings = {q: ranked(q) for q in queries}
        with api.store.write() as conn:  # a writer that knows nothing of the postings
            conn.execute("DELETE FROM postings_state")
        api._lexicon.invalidate()
        fallback = api.search(SearchRequest(queries[0], scopes=("all",), explain=True))
        assert "postings" not in fallback.sql[0]
        without = {q: ranked(q) for q in queries}
    first = {heading: dict(parts)["all-terms"] for heading, _, parts in without[queries[0]]}
    assert first["Dotted line on the screen edge"] == settings.search.all_terms_bonus
    assert without == with_postings
    bonus = {h for h, _, parts in without["flickering speakers"] if dict(parts)["all-terms"]}
    assert bonus == {"Speakers"}
    assert without["zzzz qqqq"]
    assert all(dict(parts)["all-terms"] == 0.0 for _, _, parts in without["zzzz qqqq"])


def test_postings_state_damaged_under_a_reader_is_the_damaged_index_error(
    settings: Settings, write_files: WriteFiles
) -> None:
    """A damaged page can hand a reader bytes SQLite does not refuse (the scopes' JSON cut
    short): the search failed with a JSONDecodeError, not the damaged-index error that says to
    rebuild, and a server's start-up warm-up search broke its task group on it."""
    write_files(TV_MANUAL)
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        with api.store.write() as conn:
            conn.execute("UPDATE postings_state SET scopes = '[\"dom'")
        api._lexicon.invalidate()
        with pytest.raises(StoreError, match="malformed") as raised:
            api.search(SearchRequest("dotted screen edge", scopes=("all",)))
        damaged = api.store.damaged  # what /api/health reports
    assert "rebuild" in str(raised.value)
    assert damaged is not None and "postings_state" in damaged
