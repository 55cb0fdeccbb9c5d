"""The all-terms bonus (R3) counts the query words the index holds: a word no section has
tells no section from another, so it keeps none from the bonus."""

from __future__ import annotations

from dataclasses import replace

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
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
