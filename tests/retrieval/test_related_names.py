"""Related links into a long document (R6): a search whose hit links to ``reference.md#…``
worked out every name of every section of reference.md (text, slug, anchor, the headings
above it) again, in every search: 3-10 ms of a search on a 135-section API reference on a
busy machine, after the query embedding was already there. The names are now kept for the
same sections and headings, and an edit of the document is never answered from its old ones."""

from __future__ import annotations

from briefd.api import Briefd
from briefd.retrieval.search import SearchRequest
from briefd.store.sections import document_names
from tests.conftest import WriteFiles

SECTIONS = 600


def _reference(first: str = "", sections: int = SECTIONS) -> str:
    body = "".join(
        f"## Option {n:04d}\n\nOption {n} sets dial {n}.\n\n"
        f"### `gateway.dial_{n}([options][, onTimeout])` (since v{n})\n\nDial {n} waits.\n\n"
        + "".join(f"#### `options.wait_{k}` of dial {n}\n\nWait {k}.\n\n" for k in range(4))
        for n in range(sections)
    )
    return f"# Reference: the gateway's options\n\n{first}{body}"


def _related(api: Briefd, query: str) -> tuple[list[tuple[str, str]], tuple[int, int]]:
    """(heading, content) of the related hits, and the names worked out and kept after it:
    the misses and hits of :func:`document_names`' cache."""
    hits = api.search(SearchRequest(query, mode="bm25")).hits
    info = document_names.cache_info()
    return [(h.heading, h.content) for h in hits if h.related_to is not None], (
        info.misses,
        info.hits,
    )


def test_a_long_linked_documents_names_are_worked_out_once(
    api: Briefd, write_files: WriteFiles
) -> None:
    write_files(
        {
            "domain/reference.md": _reference(),
            "domain/hub.md": "# Hub\n\n## Zebra\n\nZebra: see [the last option]"
            f"(reference.md#option-{SECTIONS - 1:04d}).\n\n## Yak\n\nYak alone.\n",
        }
    )
    api.index()
    document_names.cache_clear()
    last = [(f"Option {SECTIONS - 1:04d}", f"Option {SECTIONS - 1} sets dial {SECTIONS - 1}.")]
    first, (worked_out, _) = _related(api, "zebra")
    again, (worked_out_again, kept) = _related(api, "zebra")
    assert first == again == last
    assert worked_out >= 1
    assert worked_out_again == worked_out  # the second search worked out no name again
    assert kept >= 1


def test_an_edited_linked_document_is_read_with_its_new_sections(
    api: Briefd, write_files: WriteFiles
) -> None:
    """The same link after sections were added above its target: its new place, not the
    position the old names gave."""
    hub = "# Hub\n\n## Zebra\n\nZebra: see [option 7](reference.md#option-0007).\n"
    write_files({"domain/reference.md": _reference(sections=20), "domain/hub.md": hub})
    api.index()
    before, _ = _related(api, "zebra")
    write_files(
        {"domain/reference.md": _reference("## Added\n\nNew.\n\n## Also added\n\nNew.\n\n", 20)}
    )
    api.index()
    after, _ = _related(api, "zebra")
    assert before == after == [("Option 0007", "Option 7 sets dial 7.")]
