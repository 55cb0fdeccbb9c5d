"""An ambiguous link name resolves within what the linking document's readers see (K5, K1):
its own scope first, then a shared scope, never another project's document over a shared one;
backlinks, orphans, bundles' linked context and ``briefd links`` follow the stored choice."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.cli.index_fast import report_lines
from briefd.cli.main import app
from briefd.graph.resolve import Catalog, resolve
from briefd.model import Link
from briefd.settings import load_settings, with_overrides
from briefd.sources.state import parse_signature
from briefd.store import documents as docs_table
from tests.conftest import WriteFiles

PROJECTS = {
    "domain/overview.md": "# Overview\n\n## Payments\n\nShared overview of payments.\n",
    "projects/x/overview.md": "# X overview\n\n## Scope\n\nProject x only.\n",
    "projects/y/notes.md": "# Y notes\n\n## Start\n\nStart with [[overview]].\n",
    "projects/y/guide.md": "# Guide\n\n## Setup\n\nRead [[notes]] first.\n",
}
Y_SCOPES = ("domain", "projects/y")
CHOSE_SHARED = "chose domain/overview.md; also matches projects/x/overview.md"


def _link(target: str, source: str) -> Link:
    return Link(source, "S", 1, target, None, None, "wiki")


def test_a_shared_document_wins_over_another_projects() -> None:
    scopes = {
        "domain/overview.md": "domain",
        "conventions/overview.md": "conventions",
        "projects/x/overview.md": "projects/x",
        "projects/y/notes.md": "projects/y",
        "projects/z/a/overview.md": "projects/z",
        "projects/z/b/notes.md": "projects/z",
    }
    catalog = Catalog.build(((p, ()) for p in scopes), (), scopes, {"domain", "conventions"})
    found = resolve(_link("overview", "projects/y/notes.md"), catalog)
    assert (found.target_path, found.status) == ("conventions/overview.md", "ambiguous")
    assert found.detail == (
        "chose conventions/overview.md; also matches domain/overview.md, "
        "projects/x/overview.md, projects/z/a/overview.md"
    )
    own = resolve(_link("overview", "projects/z/b/notes.md"), catalog)  # another folder of z
    assert (own.target_path, own.status) == ("projects/z/a/overview.md", "ambiguous")
    from_domain = resolve(_link("overview", "domain/notes.md"), catalog)
    assert from_domain.target_path == "domain/overview.md"


def test_the_choice_is_what_every_reader_of_links_sees(
    api: Briefd, write_files: WriteFiles
) -> None:
    write_files(PROJECTS)
    api.index()
    (link,) = api.document("projects/y/notes.md").links
    assert (link.target_path, link.status, link.detail) == (
        "domain/overview.md",
        "ambiguous",
        CHOSE_SHARED,
    )
    backlinks = api.document("domain/overview.md", scopes=Y_SCOPES).backlinks
    assert [(r.link.source_path, r.link.line) for r in backlinks] == [("projects/y/notes.md", 5)]
    assert api.document("projects/x/overview.md").backlinks == ()
    found = api.link_findings()
    assert found.orphans == ("projects/x/overview.md", "projects/y/guide.md")
    assert [r.detail for r in found.ambiguous] == [CHOSE_SHARED]

    context = api.compile_bundle(
        BundleRequest("", max_tokens=4000, target="projects/y/guide.md", scopes=Y_SCOPES)
    )
    rows = [(i.doc_path, i.tier, i.reasons[0]) for i in context.items]
    assert ("projects/y/notes.md", "linked", "linked from projects/y/guide.md:5") in rows
    hop = "second hop: linked from projects/y/notes.md:5"
    assert ("domain/overview.md", "linked", hop) in rows
    assert not any(path.startswith("projects/x/") for path, _, _ in rows)
    shared = api.compile_bundle(
        BundleRequest("", max_tokens=4000, target="domain/overview.md", scopes=Y_SCOPES)
    )
    back = "backlink: projects/y/notes.md:5 links to domain/overview.md"
    assert ("projects/y/notes.md", "linked", back) in [
        (i.doc_path, i.tier, i.reasons[0]) for i in shared.items
    ]

    shown = CliRunner().invoke(app, ["--db", str(api.settings.db), "links"])
    assert shown.exit_code == 0, shown.output
    assert f"  projects/y/notes.md:5 {CHOSE_SHARED}\n" in shown.output
    assert "orphans (no inbound links): 2\n  projects/x/overview.md\n" in shown.output


def test_an_index_resolved_the_old_way_resolves_again(api: Briefd, write_files: WriteFiles) -> None:
    """An index built before this rule (its links resolved by top folder) is re-read by the
    next ``briefd index`` although no file changed."""
    write_files(PROJECTS)
    api.index()
    old = "chose projects/x/overview.md; also matches domain/overview.md"
    with api.store.write() as conn:
        conn.execute(
            "UPDATE links SET target_path = 'projects/x/overview.md', detail = ? "
            "WHERE source_path = 'projects/y/notes.md'",
            (old,),
        )
        docs_table.set_meta(conn, "parse", parse_signature(api.settings).split("; links")[0])
    assert api.document("projects/y/notes.md").links[0].detail == old
    report = api.index()
    assert report.rechunked and (report.added, report.changed) == ((), ())
    assert api.document("projects/y/notes.md").links[0].target_path == "domain/overview.md"


def test_a_new_link_resolver_resolves_every_link_again_and_leaves_the_chunks(
    api: Briefd, write_files: WriteFiles
) -> None:
    """An index built by a briefd that resolved links otherwise (another LINKS_VERSION), or
    with other default_scopes, gets every link resolved again by the next run; its documents
    are not read and written again (that re-chunked all of them: on 2,000 documents 34 s)."""
    write_files(PROJECTS)
    api.index()
    signature = parse_signature(api.settings)
    with api.store.write() as conn:
        conn.execute(
            "UPDATE links SET target_path = 'projects/x/overview.md', detail = 'old' "
            "WHERE source_path = 'projects/y/notes.md'"
        )
        docs_table.set_meta(conn, "parse", re.sub(r"links \d+", "links 1", signature))
    rows = "SELECT c.rowid, c.id, d.indexed_at FROM chunks c JOIN documents d ON d.id = c.doc_id"
    before = api.store.conn.execute(rows).fetchall()
    report = api.index()
    assert report.relinked and not report.rechunked and report.unchanged == len(PROJECTS)
    assert "  every link was resolved again" in "\n".join(report_lines(report))
    assert api.document("projects/y/notes.md").links[0].target_path == "domain/overview.md"
    assert api.store.conn.execute(rows).fetchall() == before
    assert docs_table.meta(api.store.conn, "parse") == signature
    assert not api.index().relinked
    shared = with_overrides(api.settings, {"default_scopes": ["domain", "projects/x"]})
    with Briefd(shared, embedder=None) as other:
        again = other.index()
        assert again.relinked and not again.rechunked
        assert other.store.conn.execute(rows).fetchall() == before


def test_the_scopes_setting_says_which_scopes_are_shared(tmp_path: Path) -> None:
    """With ``scopes:`` rules of its own, the rules marked ``default`` are the shared ones:
    a team's name resolves to the handbook, not to another team's page under the same top
    folder."""
    source = tmp_path / "knowledge"
    files = {
        "handbook/onboarding.md": "# Onboarding\n\nEveryone reads this.\n",
        "teams/a/onboarding.md": "# Team A onboarding\n\nOnly team a.\n",
        "teams/b/notes.md": "# B notes\n\nSee [[onboarding]].\n",
    }
    for path, text in files.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_text(text, encoding="utf-8")
    config = tmp_path / "briefd.yaml"
    config.write_text(
        "scopes:\n  - {folder: handbook, default: true}\n  - {folder: 'teams/*'}\n"
        f"db: {tmp_path / 'index.db'}\nsource: {source}\nembeddings: {{enabled: false}}\n",
        encoding="utf-8",
    )
    with Briefd(load_settings(config=config, env={}), embedder=None) as api:
        api.index()
        (link,) = api.document("teams/b/notes.md").links
    assert (link.target_path, link.status, link.detail) == (
        "handbook/onboarding.md",
        "ambiguous",
        "chose handbook/onboarding.md; also matches teams/a/onboarding.md",
    )


def test_a_name_dozens_of_documents_share_names_a_few_and_counts_the_rest(
    api: Briefd, write_files: WriteFiles
) -> None:
    """Every project of a big team has its own overview.md: a link to [[overview]] names five
    of the others and counts the rest, in `briefd links`, `briefd doc` and REST/MCP alike."""
    files = {f"projects/p{i:02d}/overview.md": f"# P{i} overview\n\nText.\n" for i in range(40)}
    files["domain/overview.md"] = "# Overview\n\nShared.\n"
    files["domain/notes.md"] = "# Notes\n\n" + "".join(f"See [[overview]] {n}.\n" for n in range(9))
    write_files(files)
    api.index()
    shown = ", ".join(f"projects/p{i:02d}/overview.md" for i in range(5))
    expected = f"chose domain/overview.md; also matches {shown} and 35 more"
    assert [r.detail for r in api.link_findings().ambiguous] == [expected] * 9
    assert {link.detail for link in api.document("domain/notes.md").links} == {expected}
    scoped = api.document("domain/notes.md", scopes=("domain", "projects/p00", "projects/p01"))
    two = "projects/p00/overview.md, projects/p01/overview.md"
    assert {link.detail for link in scoped.links} == {
        f"chose domain/overview.md; also matches {two} and 38 more in scopes not requested"
    }
    out = CliRunner().invoke(app, ["--db", str(api.settings.db), "links"]).output
    assert f"  domain/notes.md:3 {expected}\n" in out and max(map(len, out.splitlines())) < 300
