"""What the in-process API shows a request (K1, I1/I2): documents and link suggestions within
the scopes asked for, the default scopes when none are (REST, MCP), every document for the
local ``briefd doc``; usage reports only for bundles and sections this index issued (T2)."""

from __future__ import annotations

import pytest

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.errors import NotFoundError, QueryError, ScopeError
from briefd.graph.suggest import LinkSuggestion, visible

LEDGER = "projects/ledger/overview.md"


def test_briefd_doc_reads_every_scope_and_agents_the_default_ones(service_api: Briefd) -> None:
    assert service_api.document(LEDGER).scope == "projects/ledger"  # `briefd doc`, unscoped
    with pytest.raises(NotFoundError) as hidden:
        service_api.document(LEDGER, scoped=True)
    assert str(hidden.value) == (
        "no document 'projects/ledger/overview.md' in scopes domain, conventions; scope "
        "'projects/ledger' is not requested: add it to scopes (--scopes on the CLI) or use 'all' "
        "to read it"
    )
    assert service_api.document(LEDGER, ("projects/ledger",), scoped=True).title
    assert service_api.document(LEDGER, ("all",)).title
    with pytest.raises(ScopeError, match="scope 'projects/nope' does not exist"):
        service_api.document(LEDGER, ("projects/nope",), scoped=True)


def test_not_found_hints_name_only_visible_documents(service_api: Briefd) -> None:
    with pytest.raises(NotFoundError) as unscoped:
        service_api.document("projects/ledger/overviw.md")
    assert str(unscoped.value) == (
        "no document 'projects/ledger/overviw.md' in the index (or outside the requested "
        "scopes); did you mean projects/ledger/overview.md?"
    )
    with pytest.raises(NotFoundError) as scoped:
        service_api.document("projects/ledger/overviw.md", ("domain",))
    assert "overview.md" not in str(scoped.value)
    with pytest.raises(NotFoundError) as elsewhere:
        service_api.document("zzz/qqq.md", scoped=True)
    assert str(elsewhere.value) == (  # the example is a document the index has
        "no document 'zzz/qqq.md' in scopes domain, conventions; paths are relative to the "
        "repository root, e.g. conventions/api-design.md"
    )


def test_a_file_name_alone_or_a_path_it_ends_is_told_the_documents_it_names(
    service_api: Briefd,
) -> None:
    """A served text's relative links name documents by file name ('overview.md',
    'ledger/overview.md#Goals'): get_document found no nearest spelling of the whole path and
    said only that paths are relative to the root, with an example the index need not have."""
    for asked in ("ledger/overview.md", "ledger/OVERVIEW.md", "ledger/overview.md#Goals"):
        with pytest.raises(NotFoundError) as told:
            service_api.document(asked, ("all",), scoped=True)
        assert str(told.value).endswith("; did you mean projects/ledger/overview.md?"), asked
    with pytest.raises(NotFoundError) as several:
        service_api.document("overview.md", ("all",), scoped=True)
    assert str(several.value).endswith(
        "did you mean projects/checkout/overview.md or projects/ledger/overview.md?"
    )


def test_a_name_as_a_wikilink_writes_it_is_told_the_document_it_names(
    service_api: Briefd,
) -> None:
    """A served text's wikilinks name documents by file name (``[[fees]]``, ``[[Retry
    Policy]]``, ``[[settlement#Cutoff times]]``): an agent asking get_document for one was told
    only that paths are relative to the root, with an unrelated example (a long name alone
    was near enough its path to be guessed)."""
    asked = {
        "fees": "domain/fees.md",
        "Retry Policy": "domain/retry-policy.md",
        "[[settlement#Cutoff times|cutoff]]": "domain/settlement.md",
    }
    for name, path in asked.items():
        with pytest.raises(NotFoundError) as told:
            service_api.document(name, scoped=True)
        assert str(told.value).endswith(f"; did you mean {path}?"), name
    with pytest.raises(NotFoundError) as several:
        service_api.document("overview", ("all",), scoped=True)
    assert str(several.value).endswith(
        "did you mean projects/checkout/overview.md or projects/ledger/overview.md?"
    )
    with pytest.raises(NotFoundError) as hidden:  # never a document of scopes not asked for
        service_api.document("overview", scoped=True)
    assert "projects/" not in str(hidden.value)


def test_link_suggestions_stay_in_the_visible_documents(service_api: Briefd) -> None:
    default = service_api.suggest_links(limit=1000)
    every = service_api.suggest_links(limit=1000, scopes=("all",))
    assert default and len(every) > len(default)
    assert set(default) == {s for s in every if _names_only(s, ("domain/", "conventions/"))}
    assert service_api.suggest_links(limit=2) == default[:2]
    with pytest.raises(NotFoundError, match="scope 'projects/ledger' is not requested"):
        service_api.suggest_links(LEDGER)
    with pytest.raises(QueryError, match="limit must be at least 1, got 0"):
        service_api.suggest_links(limit=0)


def test_visible_keeps_suggestions_about_visible_documents() -> None:
    mention = LinkSuggestion("domain/a.md", "unlinked-mention", "projects/p/b.md", "B", 3, "")
    inside = LinkSuggestion("domain/a.md", "unlinked-mention", "domain/c.md", "C", 4, "")
    broken = LinkSuggestion("domain/a.md", "broken-link", "nowhere", "nowhere", 5, "")
    hidden = LinkSuggestion("projects/p/b.md", "broken-link", "nowhere", "nowhere", 6, "")
    found = [mention, inside, broken, hidden]
    assert visible(found, {"domain/a.md", "domain/c.md"}) == [inside, broken]


def test_usage_needs_a_bundle_and_its_sections(service_api: Briefd) -> None:
    bundle = service_api.compile_bundle(BundleRequest("refund a captured payment"))
    ids = [item.chunk_id for item in bundle.items]
    receipt = service_api.report_usage(bundle.bundle_id, [ids[0], f" {ids[0]} "], "test")
    assert (receipt.stored, receipt.useful_chunk_ids) == (1, (ids[0],))
    with pytest.raises(NotFoundError, match="no bundle '0123456789abcdef' was issued"):
        service_api.report_usage("0123456789abcdef", [ids[0]])
    with pytest.raises(QueryError) as stranger:
        service_api.report_usage(bundle.bundle_id, ["zzz", ids[0], "yyy"])
    assert str(stranger.value).startswith(
        f"not sections of bundle {bundle.bundle_id}: zzz, yyy; nothing was stored."
    )
    with pytest.raises(QueryError, match="bundle_id is empty"):
        service_api.report_usage("  ", [])
    count = service_api.store.conn.execute("SELECT count(*) FROM usage_events").fetchone()[0]
    assert count == 1


def _names_only(s: LinkSuggestion, prefixes: tuple[str, ...]) -> bool:
    target_ok = s.kind == "broken-link" or s.target.startswith(prefixes)
    return s.doc_path.startswith(prefixes) and target_ok


def test_a_path_whose_name_is_like_no_documents_gets_no_guess(service_api: Briefd) -> None:
    """A file name like no document's was "guessed" from the folder and the extension it
    shares with one: get_document('domain/nonexist.md') answered "did you mean
    domain/fees.md?", `briefd doc nonexist.md` "did you mean conventions/testing.md?",
    sending the user to a document that has nothing to do with the one asked for."""
    for path in ("domain/nonexist.md", "domain/payment-routing.md"):
        with pytest.raises(NotFoundError) as told:
            service_api.document(path, scoped=True)
        assert str(told.value) == (
            f"no document '{path}' in scopes domain, conventions; paths are relative to the "
            "repository root, e.g. conventions/api-design.md"
        ), path
    with pytest.raises(NotFoundError) as unscoped:
        service_api.document("nonexist.md")
    assert str(unscoped.value) == (
        "no document 'nonexist.md' in the index (or outside the requested scopes); list "
        "documents with `briefd docs`"
    )
    for typed, meant in (
        ("domain/refund.md", "domain/refunds.md"),
        ("domian/refunds.md", "domain/refunds.md"),
        ("domain/REFUNDS.md", "domain/refunds.md"),
        ("domain/retry-polcy.md", "domain/retry-policy.md"),
    ):
        with pytest.raises(NotFoundError) as near:
            service_api.document(typed, scoped=True)
        assert str(near.value).endswith(f"; did you mean {meant}?"), typed
