"""REST for B6–B8 and R5: ``POST /api/context``, bundle modes and limits, ``tags`` on search."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from briefd.service.state import ServiceState
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.service.live import TOKEN

MONEY = "domain/currency-and-rounding.md"


def test_context_route_answers_like_the_tool(client: TestClient) -> None:
    body = {"doc_path": MONEY, "task": "rounding", "max_tokens": 4000}
    first = client.post("/api/context", json=body).json()
    assert first["schema_version"] == 2 and first["target"] == MONEY
    assert first["items"][0]["tier"] == "mandatory"
    assert "structural" in {i["tier"] for i in first["items"]}
    assert first["text"].startswith(f"> {MONEY}:")
    assert "recovered" not in first and set(first["diagnostics"]) == {"estimator"}
    again = client.post("/api/context", json={**body, "base": first["bundle_id"]}).json()
    assert again["text"] == "" and "items" not in again
    assert {e["op"] for e in again["delta"]["entries"]} == {"reuse"}
    missing = client.post("/api/context", json={"doc_path": "domain/nope.md"})
    assert missing.status_code == 404
    assert missing.json()["detail"].startswith("no document 'domain/nope.md' in scopes")


def test_bundle_modes_limits_and_verbose(client: TestClient) -> None:
    task = {"task": "refund a captured payment", "max_tokens": 1000}
    package = client.post("/api/bundle", json={**task, "mode": "package"}).json()
    assert "text" not in package and package["items"][0]["content"]
    old_name = client.post("/api/bundle", json={**task, "format": "json"}).json()
    assert old_name["mode"] == "package" and old_name["bundle_id"] == package["bundle_id"]
    verbose = client.post("/api/bundle", json={**task, "verbose": True}).json()
    assert {"exclusions", "search_mode", "scopes"} <= set(verbose["diagnostics"])
    assert verbose["hard_limit"] == 4000 and verbose["budget_exceeded"] is False
    low = client.post("/api/bundle", json={**task, "hard_limit": 50})
    assert low.status_code == 422
    assert low.json()["detail"] == "hard_limit: Input should be greater than or equal to 100"


def test_search_and_bundles_take_tags(client: TestClient) -> None:
    hits = client.get("/api/search", params={"q": "retry", "tags": "webhooks,refunds"}).json()
    assert {h["doc_path"] for h in hits["hits"]} <= {
        "domain/merchant-webhooks.md",
        "domain/refunds.md",
    }
    unknown = client.get("/api/search", params={"q": "retry", "tags": "nope"})
    assert unknown.status_code == 400
    assert unknown.json()["detail"].startswith("tag 'nope' is on no document; known tags: ")
    bundle = client.post(
        "/api/bundle", json={"task": "retry a failed delivery", "tags": ["webhooks"]}
    ).json()
    sources = [line for line in bundle["text"].splitlines() if line.startswith("> ")]
    assert sources and all(s.startswith("> domain/merchant-webhooks.md:") for s in sources)


def test_tags_only_outside_the_scopes_say_so(client: TestClient) -> None:
    """A tag carried only by documents of scopes the request did not name matched nothing,
    and the answer read as "nothing on this topic" (a bundle: no section and no warning); it
    is an error naming the scope that carries it, as an unknown tag is (R5)."""
    message = (
        "tag 'checkout' is on no document in scopes domain, conventions (only in "
        "projects/checkout): add it to scopes (--scopes on the CLI) or use 'all'"
    )
    task, tags = "hosted payment page redirect", ["checkout"]
    answers = [
        client.get("/api/search", params={"q": task, "tags": "checkout"}),
        client.post("/api/bundle", json={"task": task, "tags": tags}),
        client.post("/api/context", json={"doc_path": MONEY, "tags": tags}),
    ]
    for answer in answers:
        assert (answer.status_code, answer.json().get("detail")) == (400, message)
    found = client.post("/api/bundle", json={"task": task, "tags": tags, "scopes": ["all"]})
    assert found.json()["items"], found.json()  # in its scope, the tag finds its documents
    either = client.post("/api/bundle", json={"task": task, "tags": ["checkout", "refunds"]})
    assert either.status_code == 200  # any of them: one in the scopes is enough


def test_a_document_asked_for_by_path_is_no_gap(client: TestClient) -> None:
    """A context without a task asks for a document, not a question: it never reads as a weak
    answer in the gaps report, while a task nothing answers still does."""
    for q in ("retry policy for card payments", "partial refunds", "ledger entries"):
        assert client.get("/api/search", params={"q": q}).status_code == 200
    assert client.post("/api/context", json={"doc_path": "domain/refunds.md"}).status_code == 200
    unanswered = {"task": "quarterly rollout of the loyalty points program", "tags": ["pci"]}
    assert client.post("/api/bundle", json=unanswered).status_code == 200
    state: ServiceState = client.app.state.briefd  # type: ignore[attr-defined]
    state.flush()
    logged = {e.query: e.top_score for e in state.api.state.recent_queries(10)}
    assert logged["domain/refunds.md"] is None
    gaps = [g["query"] for g in client.get("/api/gaps").json()["gaps"]]
    assert "domain/refunds.md" not in gaps
    assert gaps == [unanswered["task"]]


def test_a_body_that_is_not_a_json_object_says_so(client: TestClient) -> None:
    broken = client.post(
        "/api/bundle", content='{"task": "refunds",}', headers={"Content-Type": "application/json"}
    )
    assert broken.status_code == 422
    assert broken.json()["detail"] == (
        "the body is not valid JSON at character 19 (Expecting property name enclosed in double "
        "quotes); send one JSON object"
    )
    listed = client.post("/api/bundle", json=["refunds"])
    assert listed.json()["detail"] == (
        "the body must be one JSON object of the route's fields (see /docs)"
    )
    typed = client.post("/api/bundle", json={"task": "refunds", "max_tokens": "lots"})
    assert typed.json()["detail"] == (
        "max_tokens: Input should be a valid integer, unable to parse string as an integer"
    )


def test_a_relation_into_a_scope_not_requested_is_named_not_dropped_silently(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A project spec declaring ``depends_on`` a domain document, asked for with its own scope
    (as a project document must be), lost the dependency without a word: the structural tier
    keeps to the requested scopes, and nothing said one was declared. A warning names it, as
    written, with its scope; asked with that scope too, it is there and the warning is not."""
    write_files(
        {
            "projects/x/spec.md": """
                ---
                depends_on: [domain/money.md, domain/nowhere.md]
                ---
                # Spec

                Payouts of project x round with the money rules.
                """,
            "domain/money.md": "# Money\n\nMinor units everywhere.\n",
        }
    )
    api.index()
    with TestClient(create_app(api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        ask = {"doc_path": "projects/x/spec.md", "max_tokens": 1000, "mode": "manifest"}
        alone = http.post("/api/context", json={**ask, "scopes": ["projects/x"]}).json()
        both = http.post("/api/context", json={**ask, "scopes": ["projects/x", "domain"]}).json()
    assert [i["location"]["path"] for i in alone["items"]] == ["projects/x/spec.md"]
    broken = (  # in no scope at all: said whatever the scopes (not as in one not requested)
        "projects/x/spec.md declares relations in its front matter that match no indexed "
        "document, so this context lacks them: depends_on domain/nowhere.md; fix the front "
        "matter (briefd links lists broken links)"
    )
    assert alone["warnings"] == [
        "projects/x/spec.md declares relations to documents in scopes not requested (domain): "
        "depends_on domain/money.md; add them to the requested scopes to get them",
        broken,
    ]
    assert [(i["location"]["path"], i["tier"]) for i in both["items"]] == [
        ("projects/x/spec.md", "mandatory"),
        ("domain/money.md", "structural"),
    ]
    assert both["warnings"] == [broken]


def test_a_target_over_a_hard_limit_under_max_tokens_is_read_in_parts_within_the_limit(
    api: Briefd, write_files: WriteFiles
) -> None:
    """The warning on a target over hard_limit named get_document with max_tokens set to the
    request's max_tokens: with max_tokens 4000 and hard_limit 600, the route it named gave the
    2,500-token document back whole, in one part, not "in parts" within what the caller allowed.
    It names the tighter of the two now, and the route it names answers a part within it."""
    write_files(
        {"domain/big.md": "# Big\n\n" + "Refunds settle in the ledger every night.\n\n" * 200}
    )
    api.index()
    with TestClient(create_app(api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        ask = {"doc_path": "domain/big.md", "max_tokens": 4000, "hard_limit": 600}
        context = http.post("/api/context", json=ask).json()
        (warning,) = context["warnings"]
        route = re.search(r"\(REST: GET (/api/docs/domain/big\.md\?scopes=domain&\S+)\)", warning)
        assert route is not None and route.group(1).endswith("&max_tokens=600"), warning
        assert 'get_document("domain/big.md", scopes=["domain"], start_line=' in warning
        part = http.get(route.group(1)).json()["part"]
    assert part["next_start_line"] is not None and part["tokens"] <= 600
    assert context["tokens"] <= 600 and not context["budget_exceeded"]


def test_links_into_a_scope_not_requested_are_named_not_dropped_silently(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A project overview linking the domain's ADR and glossary, asked for with its own scope
    (as the README says a project document needs), came back without either and without a
    word: its linked tier keeps to the requested scopes. A warning names the links as written,
    with their scopes; asked with those scopes, they are linked sections and nothing is said."""
    write_files(
        {
            "projects/x/overview.md": """
                # Overview

                Project x books payouts as the [ADR](../../domain/adr-1.md) says, in the
                terms of the [[glossary]], and as its [[runbook]] and [[conventions/style.md]]
                say.
                """,
            "projects/x/runbook.md": "# Runbook\n\nRestart the payout worker.\n",
            "domain/adr-1.md": "# ADR 1\n\nPayouts are event sourced.\n",
            "domain/glossary.md": "# Glossary\n\nA payout moves money to a merchant.\n",
            "conventions/style.md": "# Style\n\nName payout events in the past tense.\n",
        }
    )
    api.index()
    with TestClient(create_app(api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        ask = {"doc_path": "projects/x/overview.md", "max_tokens": 2000, "mode": "manifest"}
        alone = http.post("/api/context", json={**ask, "scopes": ["projects/x"]}).json()
        every = http.post("/api/context", json={**ask, "scopes": ["all"]}).json()
    assert [i["location"]["path"] for i in alone["items"] if i["tier"] == "linked"] == [
        "projects/x/runbook.md"
    ]
    assert alone["warnings"] == [
        "projects/x/overview.md links to documents in scopes not requested (conventions, "
        "domain): ../../domain/adr-1.md; glossary; conventions/style.md; add them to the "
        "requested scopes to get them"
    ]
    linked = {i["location"]["path"] for i in every["items"] if i["tier"] == "linked"}
    assert linked == {
        "projects/x/runbook.md",
        "domain/adr-1.md",
        "domain/glossary.md",
        "conventions/style.md",
    }
    assert "warnings" not in every


def test_the_schema_says_what_a_bundles_warnings_are(client: TestClient) -> None:
    """The OpenAPI schema (and MCP's outputSchema, the same model) said ``warnings`` is set
    only when a default scope is missing from the index, while a bundle warns of a target
    over its hard limit, a budget that fits no section, scopes not requested…: an agent that
    read the schema had no reason to read them."""
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    described = schemas["BundleOut"]["properties"]["warnings"]["description"]
    over = client.post("/api/context", json={"doc_path": "domain/refunds.md", "max_tokens": 500})
    small = client.post("/api/bundle", json={"task": "partial refunds", "max_tokens": 150})
    assert "over hard_limit" in over.json()["warnings"][0]
    assert "fits no section" in small.json()["warnings"][0]
    for said in ("over hard_limit", "fits no section", "scopes not requested"):
        assert said in described, described


def test_the_setup_page_says_what_a_target_over_hard_limit_gets(client: TestClient) -> None:
    """The setup page told a team's agents that mandatory content "is always whole" and only
    reported over hard_limit: a document_context whose target is over hard_limit comes from
    its top as far as the limit holds, with a warning naming the call that reads on."""
    ask = {"doc_path": "conventions/api-design.md", "max_tokens": 200, "hard_limit": 400}
    context = client.post("/api/context", json=ask).json()
    assert context["tokens"] <= 400 and not context["budget_exceeded"]
    assert 'Read on with get_document("conventions/api-design.md"' in context["warnings"][0]
    page = " ".join(re.sub(r"<[^>]+>", "", client.get("/setup").text).split())
    assert "is always whole" not in page
    assert (
        "a longer document comes from its top as far as hard_limit holds, and warnings name "
        "the get_document call that reads on from there (or raise hard_limit)"
    ) in page
