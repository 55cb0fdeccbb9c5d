"""Superseded documents (K2, R1, B1, I8): a document whose front matter says ``supersedes:
old.md`` replaces it. The old text used to be served as if current — first, when the query
matched its words best — with nothing to say it was replaced: an agent read "five times"
where the rule now says three."""

from __future__ import annotations

import json

import httpx2
from mcp import Client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.bundles.wire import response
from briefd.model import Hit
from briefd.recall.engine import RecallRequest
from briefd.retrieval.search import SearchRequest
from briefd.retrieval.supersession import marked
from briefd.service import create_app
from briefd.service.schemas import hit_out
from briefd.settings import Settings
from briefd.store.supersession import NOT_REQUESTED
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run

FILES = {
    "domain/retry-2023.md": (
        "# Card retry policy 2023\n\nA declined card payment is retried five times, hourly, "
        "by the retry worker.\n"
    ),
    "domain/retry.md": (
        "---\nsupersedes: retry-2023.md\n---\n# Card retry policy\n\nA declined card payment "
        "is retried three times with jitter by the retry worker.\n"
    ),
    "domain/fees.md": "# Fees\n\nA card payment costs a fee of two percent.\n",
    # a project's own replacement: readers of the default scopes are told it exists, not where
    "projects/wallet/retry.md": (
        "---\nsupersedes: ../../domain/retry-2023.md\n---\n# Wallet retry\n\nWallet card "
        "payments are retried twice.\n"
    ),
}
QUERY = "how many times is a declined card payment retried, five times hourly?"
OLD_BY = ("domain/retry.md", NOT_REQUESTED)


def test_a_superseded_document_follows_the_one_that_supersedes_it_and_says_so(
    write_files: WriteFiles, settings: Settings
) -> None:
    write_files(FILES)
    with Briefd(settings, embedder=None) as api:
        api.index()
        hits = api.search(SearchRequest(QUERY, mode="bm25")).hits
        everyone = api.search(SearchRequest(QUERY, mode="bm25", scopes=("all",))).hits
        bundle = api.compile_bundle(BundleRequest(QUERY, max_tokens=1000))
        package = api.compile_bundle(BundleRequest(QUERY, max_tokens=1000, mode="package"))
        recalled = api.recall(RecallRequest(QUERY))
    paths = [h.doc_path for h in hits]
    assert paths[:2] == ["domain/retry.md", "domain/retry-2023.md"], paths
    assert [h.superseded_by for h in hits[:2]] == [(), OLD_BY]
    old = next(h for h in everyone if h.doc_path == "domain/retry-2023.md")
    assert old.superseded_by == ("domain/retry.md", "projects/wallet/retry.md")
    assert hit_out(hits[1]).superseded_by == list(OLD_BY)
    assert "superseded_by" not in hit_out(hits[0]).model_dump()  # none for a current one
    line = next(x for x in bundle.text.splitlines() if x.startswith("> domain/retry-2023.md"))
    assert line.endswith(f" · superseded by domain/retry.md, {NOT_REQUESTED}"), line
    assert bundle.text.index("> domain/retry.md") < bundle.text.index(line)
    items = json.loads(json.dumps(response(package)))["items"]  # as a client receives them
    assert [
        i.get("superseded_by") for i in items if i["location"]["path"].startswith("domain/r")
    ] == [
        None,
        list(OLD_BY),
    ]
    assert "domain/retry-2023.md · Card retry policy 2023 · " in recalled.knowledge
    assert f"superseded by domain/retry.md, {NOT_REQUESTED}]" in recalled.knowledge


def test_a_chain_of_supersessions_orders_newest_first_and_a_cycle_ends() -> None:
    def hit(path: str, related: str | None = None) -> Hit:
        return Hit(path, path, "domain", path, "", (), "", 1.0, 1, 1, 1, related_to=related)

    found = {"a.md": (("b.md", "domain"),), "b.md": (("c.md", "domain"),)}
    ranked = [hit("a.md"), hit("x.md"), hit("b.md"), hit("a.md", "x.md"), hit("c.md")]
    order = [(h.doc_path, h.related_to) for h in marked(ranked, found, ("domain",))]
    assert order == [
        ("x.md", None),
        ("c.md", None),
        ("b.md", None),
        ("a.md", None),
        ("a.md", "x.md"),  # a linked hit stays after the direct ones
    ]
    cycle = {"a.md": (("b.md", "domain"),), "b.md": (("a.md", "domain"),)}
    assert [h.doc_path for h in marked([hit("a.md"), hit("b.md")], cycle, ("domain",))] == [
        "b.md",
        "a.md",
    ]


def test_rest_and_mcp_items_name_what_supersedes_their_document(
    write_files: WriteFiles, settings: Settings
) -> None:
    """The package's items as REST and MCP send them (through their response model) kept
    every field but ``superseded_by``: an agent reading the package got the 2023 rule with
    nothing to say it was replaced, while ``briefd bundle --json`` said so."""
    write_files(FILES)
    args = {"max_tokens": 1000, "mode": "package"}

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("compile_bundle", {"task_description": QUERY, **args})

    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            answer = httpx2.post(
                base + "/api/bundle",
                json={"task": QUERY, **args},
                headers={"Authorization": f"Bearer {TOKEN}"},
                timeout=30,
            )
            tool = run(base + "/mcp", "legacy", body)
    assert answer.status_code == 200, answer.text
    assert tool.structured_content is not None, tool.content
    for items in (answer.json()["items"], tool.structured_content["items"]):
        marks = {i["location"]["path"]: i.get("superseded_by") for i in items}
        assert marks["domain/retry-2023.md"] == list(OLD_BY), marks
        assert marks["domain/retry.md"] is None
