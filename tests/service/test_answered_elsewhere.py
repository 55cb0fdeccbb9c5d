"""An empty answer names the scopes not requested that answer it (R1, issue 13): a project's
runbook sits in its own scope, outside the default ones, so an agent asking without scopes got
"nothing found" (in hybrid mode: "the query looks unrelated to this knowledge") and worked on
without the rule that was written down. The answer now says which scopes do answer, with
their best sections, and what to ask — over a real index, the real HTTP app and the SDK's MCP
client. Asking every scope, or a query nothing answers anywhere, carries no such warning."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client
from typer.testing import CliRunner

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.cli.main import app as cli
from briefd.retrieval.search import SearchRequest
from briefd.service import create_app
from briefd.settings import load_settings
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run

FILES = {
    "domain/installments.md": "# Installments\n\n## Rules\nA purchase is split into equal "
    "monthly installments.\n",
    "conventions/naming.md": "# Naming\n\n## Branches\nBranch names are lower case.\n",
    "projects/taksit/runbook.md": "# Installments runbook\n\n## Parked settlements\nA "
    "settlement file that arrives before its sale is parked for six hours, then replayed.\n",
}
QUERY = "parked settlement file replayed"
WARNING = (
    "nothing in scopes domain, conventions answers this, but scopes not requested do "
    "(projects/taksit): projects/taksit/runbook.md § Parked settlements; add them to the "
    "requested scopes (or ask every scope: all) to get them"
)


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[Briefd]:
    source = tmp_path / "knowledge"
    for path, text in FILES.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_text(text, encoding="utf-8")
    overrides = {
        "db": str(tmp_path / "index.db"),
        "source": str(source),
        "embeddings.enabled": False,
    }
    with Briefd(load_settings(config=None, env={}, overrides=overrides), embedder=None) as api:
        api.index()
        yield api


def test_an_empty_answer_names_the_scopes_that_answer(indexed: Briefd) -> None:
    found = indexed.search(SearchRequest(QUERY))
    assert found.hits == () and found.scopes == ("domain", "conventions")
    assert found.warnings == (WARNING,)
    everyone = indexed.search(SearchRequest(QUERY, scopes=("all",)))
    assert [h.doc_path for h in everyone.hits] == ["projects/taksit/runbook.md"]
    assert everyone.warnings == ()
    answered = indexed.search(SearchRequest("monthly installments"))
    assert answered.hits and answered.warnings == ()  # an answer in scope: nothing to say
    nowhere = indexed.search(SearchRequest("kebab recipe with garlic"))
    assert nowhere.hits == () and nowhere.warnings == ()  # nothing anywhere: nothing to name


def test_rest_mcp_and_the_cli_carry_it(indexed: Briefd) -> None:
    with TestClient(create_app(indexed, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        rest = http.get("/api/search", params={"q": QUERY}).json()
    assert rest["hits"] == [] and rest["warnings"] == [WARNING]

    async def body(client: Client) -> Any:
        return await client.call_tool("search_context", {"query": QUERY})

    with serving(create_app(indexed, service_config())) as base:
        result = run(base + "/mcp", "auto", body)
    assert not result.is_error, result.content
    assert result.structured_content["warnings"] == [WARNING]
    # what a model reads: not "The knowledge base has nothing on this topic" above it
    assert result.content[0].text == (
        f"No knowledge matches '{QUERY}' in scopes domain, conventions (see below).\n\n"
        f"Warning: {WARNING}"
    )

    settings = indexed.settings
    args = ["--db", str(settings.db), "search", QUERY]
    printed = CliRunner().invoke(cli, args, env={"BRIEFD_EMBEDDINGS__ENABLED": "false"})
    assert printed.exit_code == 0, printed.output
    assert "Nothing found: no matches in scopes domain, conventions." in printed.output
    assert f"warning: {WARNING}" in " ".join(printed.output.split())


def test_an_empty_bundle_names_them_too(indexed: Briefd) -> None:
    """A bundle ranks through the same search: an empty one carries the same warning, in REST,
    in MCP (structured content and the text a model reads) and on the CLI's stderr."""
    empty = indexed.compile_bundle(BundleRequest(QUERY))
    assert empty.items == () and empty.warnings == (WARNING,)
    for budget in range(100, 260, 20):  # the warning only where it fits the budget
        small = indexed.compile_bundle(BundleRequest(QUERY, max_tokens=budget))
        assert small.tokens <= budget and small.warnings in ((), (WARNING,)), budget
    assert small.warnings == (WARNING,)
    everyone = indexed.compile_bundle(BundleRequest(QUERY, scopes=("all",)))
    assert everyone.items and everyone.warnings == ()
    with TestClient(create_app(indexed, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        rest = http.post("/api/bundle", json={"task": QUERY}).json()
    assert rest["warnings"] == [WARNING]

    async def body(client: Client) -> Any:
        return await client.call_tool("compile_bundle", {"task_description": QUERY})

    with serving(create_app(indexed, service_config())) as base:
        result = run(base + "/mcp", "auto", body)
    assert not result.is_error, result.content
    assert result.structured_content["warnings"] == [WARNING]
    assert f"Warning: {WARNING}" in result.content[0].text
    args = ["--db", str(indexed.settings.db), "bundle", QUERY]
    printed = CliRunner().invoke(cli, args, env={"BRIEFD_EMBEDDINGS__ENABLED": "false"})
    assert printed.exit_code == 0, printed.output
    assert f"warning: {WARNING}" in " ".join(printed.output.split())


NOTHING = (
    "nothing in scopes domain, conventions answers this issue: this bundle holds the issue "
    "alone, no section of the knowledge"
)


def test_a_bundle_the_issue_alone_makes_up_says_the_knowledge_had_nothing(
    indexed: Briefd,
) -> None:
    """An issue the knowledge has nothing for: the bundle is the issue alone, which the CLI
    counted as "1 section" and REST and MCP sent without a word (its one item read as a
    section found; the scopes not requested that answer it went unnamed too)."""
    nowhere = indexed.compile_bundle(BundleRequest("", issue="kebab recipe with garlic"))
    assert [i.chunk_id[:6] for i in nowhere.items] == ["issue:"]
    assert nowhere.warnings == (NOTHING,)
    elsewhere = indexed.compile_bundle(BundleRequest("", issue=QUERY))
    assert elsewhere.warnings == (WARNING,)  # said once: not both
    answered = indexed.compile_bundle(BundleRequest("", issue="monthly installments"))
    assert len(answered.items) == 2 and answered.warnings == ()
    with TestClient(create_app(indexed, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        rest = http.post("/api/bundle", json={"issue": "kebab recipe with garlic"}).json()
    assert rest["warnings"] == [NOTHING]

    async def body(client: Client) -> Any:
        return await client.call_tool("compile_bundle", {"issue": "kebab recipe with garlic"})

    with serving(create_app(indexed, service_config())) as base:
        result = run(base + "/mcp", "auto", body)
    assert not result.is_error, result.content
    assert result.structured_content["warnings"] == [NOTHING]
    assert f"Warning: {NOTHING}" in result.content[0].text
    env = {"BRIEFD_EMBEDDINGS__ENABLED": "false"}
    for issue, count in (("kebab recipe with garlic", 0), ("monthly installments", 1)):
        args = ["--db", str(indexed.settings.db), "bundle", "--issue", issue]
        printed = CliRunner().invoke(cli, args, env=env)
        assert printed.exit_code == 0, printed.output
        said = " ".join(printed.output.split())
        assert f" · the issue and {count} section{'s' * (count != 1)} · " in said, said
        assert (f"warning: {NOTHING}" in said) == (count == 0), said
