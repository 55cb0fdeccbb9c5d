"""Knowledge health through the service (T3, T4, T6): REST ``/api/gaps``, ``/api/drift`` and
``/api/usage``, the three MCP tools through the SDK's client on a real uvicorn (both protocol
eras), and drift on bundle items — over a real knowledge checkout, a real code repository that
drifted from it and a seeded query log."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import jsonschema
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from typer.testing import CliRunner

from briefd.api import Briefd
from briefd.cli.main import app
from briefd.retrieval.search import SearchRequest
from briefd.service import create_app
from tests.cli.test_cli import briefd
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import MODES, run
from tests.team.seeded import health_api
from tests.team.test_gaps import entry

__all__ = ["health_api"]


@pytest.fixture
def http(health_api: Briefd) -> Iterator[TestClient]:
    with TestClient(create_app(health_api, service_config())) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        yield client


def test_rest_gaps_rank_the_seeded_log(http: TestClient) -> None:
    body = http.get("/api/gaps", params={"since": "30d"}).json()
    assert [(g["query"], g["asked"], g["surfaces"], g["empty"]) for g in body["gaps"]] == [
        ("kafka consumer lag alerts", 7, {"mcp": 7}, 7),
        (None, 5, {"hook": 5}, 5),  # hook prompts are logged hashed by default
    ]
    assert body["groups"] == 4 and body["unlogged"] == 0
    assert http.get("/api/gaps", params={"min_count": 6}).json()["gaps"][0]["asked"] == 7
    bad = http.get("/api/gaps", params={"since": "yesterday-ish"})
    assert bad.status_code == 400 and "30d" in bad.json()["detail"]


def test_rest_drift_lists_the_commit(http: TestClient) -> None:
    body = http.get("/api/drift").json()
    (doc,) = body["documents"]
    assert doc["doc_path"] == "domain/retry.md" and doc["since"].startswith("2026-03-15")
    (commit,) = doc["commits"]
    assert commit["subject"] == "Raise the soft decline retry limit to 5"
    assert commit["author"] == "Dev One" and commit["paths"] == ["services/payment/retry.py"]
    assert [(r["name"], r["branch"], r["error"]) for r in body["repos"]] == [
        ("payments", "main", None)
    ]


def test_rest_usage_counts_documents_and_days(http: TestClient) -> None:
    body = http.get("/api/usage", params={"since": "30d", "limit": 5}).json()
    searches = sum(1 + back % 4 for back in range(14))  # 33 answered searches, 14 bundles
    assert body["requests"] == searches + 14 + 7 + 5  # and 7 + 5 gaps
    assert body["surfaces"] == {"mcp": searches + 7, "rest": 14, "hook": 5}
    top = body["documents"][0]
    assert top["doc_path"] == "domain/retry.md" and top["surfaces"] == {"mcp": 33, "rest": 14}
    assert body["never_served"] == ["domain/glossary.md", "domain/ledger.md"]
    assert len(body["days"]) >= 30 and body["days"][-1]["requests"] > 0


def test_a_bundle_item_from_a_drifting_document_carries_drift(http: TestClient) -> None:
    body = {"task": "change the soft decline retries", "paths": ["services/payment/retry.py"]}
    bundle = http.post("/api/bundle", json=body).json()
    manifest = http.post("/api/bundle", json={**body, "mode": "manifest"}).json()
    by_path = {i["location"]["path"]: i for i in manifest["items"]}
    expected = {"doc_path": "domain/retry.md", "commits": 1, "since": "2026-03-15T12:00:00+00:00"}
    assert by_path["domain/retry.md"]["drift"] == expected
    assert all("drift" not in i for p, i in by_path.items() if p != "domain/retry.md")
    assert [i["drift"] for i in bundle["items"] if "drift" in i] == [expected]
    again = http.post("/api/bundle", json=body).json()
    assert again["cached"] and again["text"] == bundle["text"]  # drift never changes the bytes


@pytest.mark.parametrize("mode", MODES)
def test_the_three_mcp_tools_answer_with_structured_content(health_api: Briefd, mode: str) -> None:
    async def body(client: Client) -> dict[str, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        out = {}
        for name, arguments in (
            ("knowledge_gaps", {"since": "30d", "limit": 5}),
            ("knowledge_drift", {}),
            ("knowledge_usage", {"since": "30d", "limit": 3}),
        ):
            tool = tools[name]
            assert tool.annotations is not None and tool.annotations.read_only_hint
            result = await client.call_tool(name, arguments)
            assert not result.is_error, result.content
            assert tool.output_schema is not None, name
            jsonschema.validate(result.structured_content, tool.output_schema)
            out[name] = (result.structured_content, result.content[0].text)  # type: ignore[union-attr]
        bundle = await client.call_tool(
            "compile_bundle",
            {"task_description": "soft decline retries", "paths": ["services/payment/retry.py"]},
        )
        out["bundle"] = (None, bundle.content[0].text)  # type: ignore[union-attr]
        out["bad"] = (
            None,
            (await client.call_tool("knowledge_gaps", {"since": "soon"})).content[0].text,
        )  # type: ignore[union-attr]
        return out

    with serving(create_app(health_api, service_config())) as base:
        out = run(base + "/mcp", mode, body)
    gaps, text = out["knowledge_gaps"]
    assert gaps["gaps"][0]["query"] == "kafka consumer lag alerts"
    assert "1. 'kafka consumer lag alerts': asked 7x (7 mcp), empty 7" in text
    drift, text = out["knowledge_drift"]
    assert drift["documents"][0]["doc_path"] == "domain/retry.md"
    assert "1 of 2 documents with refs drift (payments (main at" in text
    assert "Dev One: Raise the soft decline retry limit to 5 [services/payment/retry.py]" in text
    usage, text = out["knowledge_usage"]
    assert usage["documents"][0]["doc_path"] == "domain/retry.md"
    assert "Never served (2): domain/glossary.md, domain/ledger.md" in text
    assert (
        "(drift: code under the refs of domain/retry.md changed in 1 commit(s)" in out["bundle"][1]
    )
    assert "since must be a span such as 30d" in out["bad"][1]


def test_never_served_documents_are_listed_to_the_limit_and_counted(
    write_files: WriteFiles, api: Briefd
) -> None:
    """A big knowledge base nobody has searched yet: the usage report (REST, the dashboard's
    panel, MCP's structured content) lists `limit` never-served documents, not every one."""
    write_files({f"domain/d{i:03d}.md": f"# Doc {i}\n\nText {i}.\n" for i in range(300)})
    api.index()
    with TestClient(create_app(api, service_config(token=None))) as client:
        body = client.get("/api/usage", params={"limit": 5}).json()
        panel = client.get("/api/dashboard/health").json()["usage"]
    assert body["never_served"] == [f"domain/d{i:03d}.md" for i in range(5)]
    assert body["never_served_count"] == 300
    assert len(panel["never_served"]) == 10 and panel["never_served_count"] == 300
    shown = CliRunner().invoke(app, ["--db", str(api.settings.db), "usage", "--limit", "3"])
    assert "never served (300):\n  domain/d000.md\n" in shown.output
    assert shown.output.endswith("  domain/d002.md\n  … and 297 more (--limit)\n")


SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin"}  # what a browser adds on the dashboard's fetch


def test_searches_made_on_the_dashboard_are_no_gap_and_serve_no_tokens(
    client: TestClient,
) -> None:
    """The dashboard names its searches client=dashboard: a person reading there is no agent
    asking, so they were listed as gaps "agents ask" and counted as tokens served. They stay
    out of the query log (gaps, usage, the daily charts) and the tokens served; the same
    searches from an agent are in both."""
    state = client.app.state.briefd  # type: ignore[attr-defined]
    asked = ("purple elephant onboarding", "retry policy")

    def search_as(who: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
        for query in asked:
            params = {"q": query, "client": who, "scopes": "all"}
            assert client.get("/api/search", params=params, headers=headers).status_code == 200
        state.flush()
        return {
            "tokens": client.get("/api/stats").json()["tokens_served"],
            "gaps": [g["query"] for g in client.get("/api/gaps").json()["gaps"]],
            "usage": client.get("/api/usage").json()["requests"],
        }

    assert search_as("dashboard", SAME_ORIGIN) == {"tokens": 0, "gaps": [], "usage": 0}
    by_an_agent = search_as("claude-code")
    assert by_an_agent["tokens"] > 0 and by_an_agent["usage"] == 2
    assert by_an_agent["gaps"] == ["purple elephant onboarding"]


def test_an_api_client_naming_itself_dashboard_is_booked_as_any_client(
    client: TestClient,
) -> None:
    """Any API client could send client=dashboard and keep its searches out of the team's
    gaps, usage and tokens served. Only the dashboard's page (a browser's same-origin fetch)
    is left out now; a program claiming the name, or a page of another site, is booked under
    it like any client."""
    state = client.app.state.briefd  # type: ignore[attr-defined]
    claimed = {"client": "dashboard", "scopes": "all"}
    for query in ("purple elephant onboarding", "retry policy"):
        assert client.get("/api/search", params={"q": query, **claimed}).status_code == 200
    cross_site = {"Sec-Fetch-Site": "cross-site"}
    params = {"q": "purple elephant onboarding", **claimed}
    assert client.get("/api/search", params=params, headers=cross_site).status_code == 200
    state.flush()
    assert client.get("/api/usage").json()["requests"] == 3
    assert client.get("/api/stats").json()["tokens_served"] > 0
    gaps = client.get("/api/gaps").json()["gaps"]
    assert [(g["query"], g["asked"]) for g in gaps] == [("purple elephant onboarding", 2)]


def test_the_gaps_tool_names_each_document_it_got_once(service_api: Briefd) -> None:
    """T3: knowledge_gaps' text named a document once per section its queries got, each
    section's count apart ("got: domain/chargebacks.md (2x), domain/chargebacks.md (2x), …"):
    each document once, most served first, its sections' counts summed."""
    hits = service_api.search(SearchRequest("chargeback dispute evidence", scopes=("all",))).hits
    by_doc: dict[str, list[str]] = {}
    for hit in hits:
        by_doc.setdefault(hit.doc_path, []).append(hit.chunk_id)
    first = next(d for d, ids in by_doc.items() if len(ids) >= 2)
    other = next(d for d in by_doc if d != first)
    weak = entry("chargeback evidence deadline receipts", 2, 0.05)
    service_api.log_queries(
        [replace(weak, sections=tuple(by_doc[first][:2]))] * 2
        + [replace(weak, sections=(by_doc[other][0],))]
        + [entry("retry policy", 1, 0.9)] * 3  # answered well: the weak one is a gap
    )

    async def body(client: Client) -> str:
        result = await client.call_tool("knowledge_gaps", {"since": "30d"})
        assert not result.is_error, result.content
        return str(result.content[0].text)  # type: ignore[union-attr]

    with serving(create_app(service_api, service_config())) as base:
        text = run(base + "/mcp", "auto", body)
    got = [line.strip() for line in text.splitlines() if line.strip().startswith("got:")]
    assert got == [f"got: {first} (4x), {other} (1x)"]


def test_answered_searches_are_no_gaps_beside_hook_prompts_scored_on_their_own_scale(
    client: TestClient,
) -> None:
    """T3: a hook prompt answered by BM25 is logged with its BM25 score (~10), a search with
    its fused one (~0.02). The gaps report weighed every group against one median best score:
    with more hook prompts than searches in the window, that median was a BM25 score, and every
    well answered search read as 99% weak, the top gaps. Each kind is weighed against its own."""
    state = client.app.state.briefd  # type: ignore[attr-defined]
    prompts = [
        "how do we rotate hsm keys",
        "kafka consumer lag alerts",
        "chargeback evidence deadline",
        "idempotency key header",
        "feature flag naming",
    ]
    for prompt in prompts:
        body = {"prompt": prompt, "mode": "bm25"}  # the gate's verdict alone: no keyword tiers
        answer = client.post("/api/hook/recall?format=json", json=body)
        assert answer.status_code == 200 and answer.json()["sections"], answer.text
    for query in ("soft decline retry policy", "refund window"):
        found = client.get("/api/search", params={"q": query})
        assert found.status_code == 200 and found.json()["hits"], found.text
    state.flush()

    report = client.get("/api/gaps").json()

    assert [(g["query"], g["weakness"]) for g in report["gaps"]] == []
    assert report["groups"] == len(prompts) + 2
    assert set(report["reference_scores"]) == {"search", "recall"}
    assert report["reference_scores"]["recall"] > 100 * report["reference_scores"]["search"]


def test_a_window_with_an_offset_written_in_a_url_is_that_time(http: TestClient) -> None:
    """`--since 2026-01-31T09:00+01:00` works on the command line; in a URL the "+" arrives
    as a space, and GET /api/gaps and /api/usage answered 400 "since must be a span such as
    30d … got '2026-01-31T09:00 01:00'". Both read it as the time it is."""
    day = datetime.now(UTC).date() - timedelta(days=3)
    for path in ("/api/usage", "/api/gaps"):
        written = http.get(f"{path}?since={day}T09:00+01:00")
        encoded = http.get(path, params={"since": f"{day}T09:00+01:00"})
        assert written.status_code == 200, written.text
        assert written.json()["since"] == encoded.json()["since"] == f"{day}T08:00:00+00:00"


def test_everyday_hook_prompts_are_no_gaps_and_are_counted_apart(
    client: TestClient, service_api: Briefd
) -> None:
    """T3: with the hook on, "continue", "yes", "thanks, go on", "run the tests again" come
    back empty (BM25: no section has enough evidence) and were logged as hook prompts, hashed:
    they were the top gaps, shown as "(hashed 4ffb912f)", weakness 1.00. Recall reads them as
    everyday chatter and logs them so; the report leaves them out and says how many, while a
    domain question the knowledge does not answer, asked the same way, is still a gap."""
    chatter = ["continue", "yes", "thanks, go on", "run the tests again", "sounds good, keep going"]
    question = "what is our kubernetes autoscaling policy"
    for prompt in [*chatter, *chatter, question, question]:
        answer = client.post("/api/hook/recall?format=json", json={"prompt": prompt}).json()
        assert answer["sections"] == [] and answer["knowledge"] == "", prompt
    client.app.state.briefd.flush()  # type: ignore[attr-defined]

    report = client.get("/api/gaps").json()

    assert [(g["asked"], g["kinds"], g["weakness"]) for g in report["gaps"]] == [
        (2, ["recall"], 1.0)
    ]
    assert (report["groups"], report["generic"]) == (len(chatter) + 1, len(chatter))
    settings = service_api.settings
    env = {"BRIEFD_DB": str(settings.db), "BRIEFD_SOURCE": str(settings.source), "COLUMNS": "200"}
    table = briefd("gaps", cwd=settings.db.parent, env=env).stdout
    assert "1 gap(s) among 6 query group(s)" in table
    assert (
        "5 group(s) left out: hook prompts read as everyday chatter, such as 'continue' or "
        "'thanks, go on'"
    ) in table
    assert table.count("(hashed ") == 1

    async def body(mcp: Client) -> str:
        result = await mcp.call_tool("knowledge_gaps", {"since": "30d"})
        return str(result.content[0].text)  # type: ignore[union-attr]

    with serving(create_app(service_api, service_config())) as base:
        text = run(base + "/mcp", "auto", body)
    assert text.count("(hashed ") == 1
    assert "(5 group(s) left out: hook prompts read as everyday chatter" in text


def test_the_gaps_tool_names_each_hashed_prompt_as_the_cli_and_dashboard_do(
    client: TestClient, service_api: Briefd
) -> None:
    """T3: knowledge_gaps wrote every hook prompt logged hashed as "'(prompt logged hashed)'"
    (quoted, as if asked so), so two such gaps read alike and none could be matched to the row
    `briefd gaps` and the dashboard show as "(hashed 4ffb912f)". The tool names the hash too."""
    for prompt in ["what is our kubernetes autoscaling policy"] * 2 + ["terraform state locking"]:
        client.post("/api/hook/recall?format=json", json={"prompt": prompt})
    client.app.state.briefd.flush()  # type: ignore[attr-defined]
    keys = [g["key"][:8] for g in client.get("/api/gaps").json()["gaps"]]

    async def body(mcp: Client) -> str:
        result = await mcp.call_tool("knowledge_gaps", {"since": "30d"})
        return str(result.content[0].text)  # type: ignore[union-attr]

    with serving(create_app(service_api, service_config())) as base:
        text = run(base + "/mcp", "auto", body)
    ranked = [line.split(": asked")[0] for line in text.splitlines() if ": asked " in line]
    assert ranked == [f"{n}. (hashed {key})" for n, key in enumerate(keys, 1)]
    assert len(keys) == 2


def test_the_dashboards_gaps_hold_up_no_search_while_they_read_the_log(http: TestClient) -> None:
    """T6: every open dashboard asks for the health panels each minute, and the gaps report read
    and grouped the whole query log under the server's lock: over 100,000 logged requests,
    every search waited about a second each minute. Only embedding phrasings
    takes the lock now (embeddings off here: none), so the panels load while a request holds
    it."""
    state = http.app.state.briefd  # type: ignore[attr-defined]
    answered: list[dict[str, Any]] = []
    with state.lock:  # a search (or a long index update) holds the lock
        reader = threading.Thread(
            target=lambda: answered.append(http.get("/api/dashboard/health").json())
        )
        reader.start()
        reader.join(10)
        assert not reader.is_alive(), "the health panels waited for the lock"
    assert answered[0]["gaps"]["gaps"][0]["query"] == "kafka consumer lag alerts"


def test_gaps_asked_over_rest_or_mcp_hold_up_no_search_while_they_read_the_log(
    health_api: Briefd,
) -> None:
    """T3: GET /api/gaps and the knowledge_gaps tool (an agent's call, not only a person's)
    read and grouped the whole query log under the server's lock, as the dashboard's panels
    did: over 100,000 logged queries every search waited 5 to 7 s behind each call. Like the
    panels, they now take the lock only while phrasings are embedded (embeddings off here:
    none), so they answer while a request holds it."""

    async def body(mcp: Client) -> str:
        result = await mcp.call_tool("knowledge_gaps", {"since": "30d"})
        return str(result.content[0].text)  # type: ignore[union-attr]

    answered: dict[str, Any] = {}
    app = create_app(health_api, service_config())
    with serving(app) as base:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        readers = {
            "rest": lambda: answered.update(
                rest=httpx.get(base + "/api/gaps", headers=auth, timeout=30).json()
            ),
            "mcp": lambda: answered.update(mcp=run(base + "/mcp", "auto", body)),
        }
        with app.state.briefd.lock:  # a search (or a long index update) holds the lock
            for name, read in readers.items():
                reader = threading.Thread(target=read)
                reader.start()
                reader.join(10)
                assert not reader.is_alive(), f"{name} gaps waited for the lock"
    assert answered["rest"]["gaps"][0]["query"] == "kafka consumer lag alerts"
    assert "1. 'kafka consumer lag alerts': asked 7x" in answered["mcp"]
