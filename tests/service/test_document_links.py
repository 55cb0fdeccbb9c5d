"""A document's links as the three front ends show them (K5, I1, I2, I7): ``get_document``'s
text, ``GET /api/docs/{path}`` and ``briefd doc``, on a small knowledge repository of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client
from typer.testing import CliRunner

from briefd.api import Briefd
from briefd.cli.main import app
from briefd.service import create_app
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run

KNOWLEDGE = {
    "README.md": "# The knowledge repository\n",
    "domain/a.md": (
        "# A\n\n## Retry Policy {#retry}\n\nRetry twice. See [[#Retry Policy]], "
        "[the anchor](#retry) and [[b]].\n"
    ),
    "domain/b.md": "# B\n\nSee [[a#retry]] and [[ledger]].\n",
    "projects/ledger/ledger.md": "# Ledger\n\nUses [[a]] and [[b]].\n",
    # one name, three documents: two shared, one in a project
    "domain/overview.md": "# Overview\n",
    "conventions/overview.md": "# Conventions overview\n",
    "projects/ledger/overview.md": "# Ledger overview\n",
    "domain/start.md": "# Start\n\nRead the [[overview]].\n",
}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Briefd]:
    source = tmp_path / "knowledge"
    for path, text in KNOWLEDGE.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_text(text, encoding="utf-8")
    with Briefd(service_settings_for(source, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        yield api


@pytest.fixture
def client(api: Briefd) -> Iterator[TestClient]:
    with TestClient(create_app(api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        yield http


def get_document(api: Briefd, **arguments: Any) -> str:
    """The text block of MCP ``get_document``, through the SDK's client on a real server."""
    result = _call_get_document(api, arguments)
    return str(result.content[0].text)


def get_document_structured(api: Briefd, **arguments: Any) -> dict[str, Any]:
    """The structured content of MCP ``get_document`` (what a client parses)."""
    structured = _call_get_document(api, arguments).structured_content
    assert isinstance(structured, dict)
    return structured


def _call_get_document(api: Briefd, arguments: dict[str, Any]) -> Any:
    async def body(client: Client) -> Any:
        return await client.call_tool("get_document", arguments)

    with serving(create_app(api, service_config())) as base:
        result = run(base + "/mcp", "auto", body)
    assert not result.is_error, result.content
    return result


def briefd_doc(api: Briefd, *args: str) -> str:
    done = CliRunner().invoke(app, ["--db", str(api.settings.db), "doc", *args])
    assert done.exit_code == 0, done.output
    return done.output


def test_links_to_its_own_sections_are_not_links_to_another_document(
    api: Briefd, client: TestClient
) -> None:
    text = get_document(api, doc_path="domain/a.md")
    assert text.splitlines()[2:4] == ["links to: domain/b.md", "linked from: domain/b.md"]
    links = client.get("/api/docs/domain/a.md").json()["links"]
    assert sorted(
        (link["target"], link["fragment"] or "", link["target_path"]) for link in links
    ) == [
        ("", "Retry Policy", "domain/a.md"),  # the document itself: one of its own sections
        ("", "retry", "domain/a.md"),
        ("b", "", "domain/b.md"),
    ]
    shown = briefd_doc(api, "domain/a.md")
    assert "  line 5: #Retry Policy → its own section\n" in shown
    assert "  line 5: #retry → its own section\n" in shown
    assert "  line 5: b → domain/b.md\n" in shown


HIDDEN = {
    "target_path": None,
    "status": "outside-scopes",
    "detail": "links into scope 'projects/ledger', which this request did not ask for; add it "
    "to scopes (--scopes on the CLI) or use 'all' to follow it",
}


def test_links_into_scopes_not_requested_show_no_path(api: Briefd, client: TestClient) -> None:
    """Backlinks from a project are left out for a default-scope caller; its links into the
    project keep what was written but not the path the next get_document would refuse."""
    text = get_document(api, doc_path="domain/b.md")
    assert text.splitlines()[2:5] == [
        "links to: domain/a.md",
        "linked from: domain/a.md",  # not projects/ledger/ledger.md either
        "1 more link into scopes not requested (scopes=['all'] follows it)",
    ]
    assert "projects/ledger" not in text
    default = client.get("/api/docs/domain/b.md").json()
    (ledger,) = [link for link in default["links"] if link["target"] == "ledger"]
    assert {k: ledger[k] for k in HIDDEN} == HIDDEN
    assert "projects/ledger/ledger.md" not in str(default)
    every = client.get("/api/docs/domain/b.md", params={"scopes": "all"}).json()
    (ledger,) = [link for link in every["links"] if link["target"] == "ledger"]
    assert (ledger["target_path"], ledger["status"]) == ("projects/ledger/ledger.md", "ok")
    assert "projects/ledger/ledger.md" in get_document(api, doc_path="domain/b.md", scopes=["all"])
    assert "  line 3: ledger → projects/ledger/ledger.md\n" in briefd_doc(api, "domain/b.md")
    narrowed = briefd_doc(api, "domain/b.md", "--scopes", "domain")
    assert f"  line 3: ledger → ?  [outside-scopes: {HIDDEN['detail']}]\n" in narrowed


EVERY_MATCH = (
    "chose domain/overview.md; also matches conventions/overview.md, projects/ledger/overview.md"
)


def _ambiguous(links: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [
        (x["target_path"], x["status"], x["detail"]) for x in links if x["status"] == "ambiguous"
    ]


def test_an_ambiguous_links_alternatives_in_scopes_not_requested_are_counted(
    api: Briefd, client: TestClient
) -> None:
    """[[overview]] in domain/start.md also matches a project's document: a reader of the
    default scopes learns that it exists, not its path (the link and the backlink alike)."""
    default = client.get("/api/docs/domain/start.md").json()
    assert _ambiguous(default["links"]) == [
        (
            "domain/overview.md",
            "ambiguous",
            "chose domain/overview.md; also matches conventions/overview.md and 1 more in "
            "scopes not requested",
        )
    ]
    assert "projects/ledger" not in str(default)
    target = client.get("/api/docs/domain/overview.md").json()
    assert [x["source_path"] for x in target["backlinks"]] == ["domain/start.md"]
    assert "projects/ledger" not in str(target)
    narrowed = client.get("/api/docs/domain/start.md", params={"scopes": "domain"}).json()
    assert _ambiguous(narrowed["links"])[0][2] == (
        "chose domain/overview.md; also matches 2 documents in scopes not requested"
    )
    mcp = get_document_structured(api, doc_path="domain/overview.md", scopes=["domain"])
    assert _ambiguous(mcp["backlinks"])[0][2] == (
        "chose domain/overview.md; also matches 2 documents in scopes not requested"
    )
    every = client.get("/api/docs/domain/start.md", params={"scopes": "all"}).json()
    assert _ambiguous(every["links"]) == [("domain/overview.md", "ambiguous", EVERY_MATCH)]
    assert f"  line 3: overview → domain/overview.md  [ambiguous: {EVERY_MATCH}]\n" in (
        briefd_doc(api, "domain/start.md")
    )
    one_more = (
        "[ambiguous: chose domain/overview.md; also matches projects/ledger/overview.md and 1 "
        "more in scopes not requested]"
    )
    assert one_more in briefd_doc(api, "domain/start.md", "--scopes", "domain,projects/ledger")


def test_a_broken_link_is_said_broken_not_named_as_a_document(api: Briefd) -> None:
    """The text block names under "links to" only documents a next get_document can read; a
    link that reaches none is said broken, as its structured status is."""
    source = Path(str(api.settings.source))
    (source / "domain" / "c.md").write_text("# C\n\nSee [[b]] and [[gone]].\n", encoding="utf-8")
    api.index()
    text = get_document(api, doc_path="domain/c.md")
    links = get_document_structured(api, doc_path="domain/c.md")["links"]
    assert sorted((link["target"], link["status"]) for link in links) == [
        ("b", "ok"),
        ("gone", "broken"),
    ]
    assert text.splitlines()[2:4] == ["links to: domain/b.md", "broken links: gone"]


def test_a_relation_to_no_document_is_a_warning_of_the_context(
    api: Briefd, client: TestClient
) -> None:
    """``depends_on: missing.md`` was dropped from the context without a word, while ``briefd
    links`` listed it broken: the agent took the context as all its front matter declared."""
    source = Path(str(api.settings.source))
    (source / "domain" / "d.md").write_text(
        "---\ndepends_on: [missing.md, b]\n---\n# D\n\nDepends on the money rules.\n",
        encoding="utf-8",
    )
    api.index()
    warning = (
        "domain/d.md declares relations in its front matter that match no indexed document, so "
        "this context lacks them: depends_on missing.md; fix the front matter (briefd links "
        "lists broken links)"
    )
    rest = client.post("/api/context", json={"doc_path": "domain/d.md"}).json()
    assert rest["warnings"] == [warning]
    assert [(i["tier"], i["reasons"]) for i in rest["items"]][1] == (
        "structural",
        ["depends_on of domain/d.md (front matter)"],
    )

    async def body(mcp: Client) -> Any:
        return await mcp.call_tool("document_context", {"doc_path": "domain/d.md"})

    with serving(create_app(api, service_config())) as base:
        tool = run(base + "/mcp", "auto", body)
    assert not tool.is_error, tool.content
    assert tool.structured_content["warnings"] == [warning]
    done = CliRunner().invoke(app, ["--db", str(api.settings.db), "context", "domain/d.md"])
    assert done.exit_code == 0, done.output
    assert f"warning: {warning}\n" in done.output
    plain = client.post("/api/context", json={"doc_path": "domain/a.md"}).json()
    assert plain.get("warnings") is None, plain["warnings"]
