from __future__ import annotations

import re
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.embeddings.fake import FakeEmbedder
from briefd.service import create_app
from briefd.service.routes.apidocs import THIS_SERVER
from briefd.settings import Settings
from briefd.store import views
from briefd.tokens import count_tokens
from tests.conftest import WriteFiles
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN


def test_health_counts_documents(client: TestClient) -> None:
    body = client.get("/api/health").json()
    assert body["status"] == "ok"
    assert body["documents"] == 45


def test_a_server_without_an_index_says_so(tmp_path: Path) -> None:
    settings = service_settings_for(tmp_path / "knowledge", tmp_path / "none.db")
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        assert http.get("/api/health").json()["status"] == "no_index"
        response = http.get("/api/scopes", headers={"authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 503
        assert response.json() == {
            "error": "index_not_found",
            "detail": f"no index at {tmp_path / 'none.db'}; build one with `briefd index` "
            f"(source: {tmp_path / 'knowledge'}, from the settings)",
        }


def test_search_returns_attributed_hits_within_budget(client: TestClient) -> None:
    response = client.get("/api/search", params={"q": "retry policy for card payments"})
    assert response.status_code == 200
    body = response.json()
    assert body["hits"][0]["doc_path"] == "domain/retry-policy.md"
    assert body["scopes"] == ["domain", "conventions"]
    first = body["hits"][0]
    assert first["start_line"] <= first["end_line"] and first["chunk_id"]
    small = client.get("/api/search", params={"q": "retry policy", "max_tokens": 300}).json()
    assert sum(h["tokens"] for h in small["hits"]) == small["tokens"] <= 300
    assert small["omitted"] >= 1


def test_a_budget_below_the_best_hit_returns_its_head(client: TestClient) -> None:
    answer = client.get("/api/search", params={"q": "retry policy", "max_tokens": 200})
    body = answer.json()
    assert len(body["hits"]) == 1 and count_tokens(answer.text) <= 200  # the whole answer
    assert body["hits"][0]["doc_path"] == "domain/retry-policy.md"
    assert body["hits"][0]["content"].endswith("[… truncated to fit max_tokens]")
    full = client.get("/api/search", params={"q": "retry policy"}).json()["hits"][0]
    assert body["note"] == (
        f"the top section ({full['tokens']} tokens) was cut to fit max_tokens=200; "
        "read it whole with get_document('domain/retry-policy.md', "
        f"start_line={full['start_line']}, scopes=['domain'])"
    )


def test_a_budget_too_small_for_any_content_returns_nothing_and_says_why(
    client: TestClient,
) -> None:
    params = {"q": "partial refunds validation", "max_tokens": 5}
    body = client.get("/api/search", params=params).json()
    full = client.get("/api/search", params={**params, "max_tokens": 20000}).json()
    assert body["hits"] == [] and body["tokens"] == 0
    assert body["omitted"] == len(full["hits"])
    assert body["note"] == (
        f"max_tokens=5 is too small for any section ({len(full['hits'])} matched; the top one "
        f"has {full['hits'][0]['tokens']} tokens); ask again with a larger max_tokens"
    )
    assert full["note"] is None


def test_a_related_hit_never_comes_without_the_hit_it_is_linked_from(client: TestClient) -> None:
    params = {"q": "partial refunds validation"}
    full = client.get("/api/search", params={**params, "max_tokens": 20000}).json()["hits"]
    related = [h for h in full if h["related_to"]]
    assert related and related[0]["tokens"] < 60  # small enough to fit every budget below
    for budget in (220, 300, 600, 1200, 2000):
        hits = client.get("/api/search", params={**params, "max_tokens": budget}).json()["hits"]
        direct = [h["chunk_id"] for h in hits if h["related_to"] is None]
        assert direct, budget
        assert hits[: len(direct)] == [h for h in hits if h["related_to"] is None], budget
        for hit in hits[len(direct) :]:
            assert hit["related_to"] in direct, budget
    tight = client.get("/api/search", params={**params, "max_tokens": 220}).json()
    assert [h["doc_path"] for h in tight["hits"]] == ["domain/refunds.md"]
    assert tight["hits"][0]["chunk_id"] == full[0]["chunk_id"]


def test_search_paths_put_governing_documents_first(client: TestClient) -> None:
    params = {"q": "ledger posting", "scopes": "all", "top_k": 8}
    plain = client.get("/api/search", params=params).json()["hits"]
    governed = client.get(
        "/api/search", params={**params, "paths": "tools/ledger-replay/main.go"}
    ).json()["hits"]
    assert {h["chunk_id"] for h in plain} == {h["chunk_id"] for h in governed}
    assert plain[0]["doc_path"] != "projects/ledger/runbook.md"
    assert governed[0]["doc_path"] == "projects/ledger/runbook.md"


def test_search_paths_bring_governing_documents_the_query_missed(client: TestClient) -> None:
    params = {"q": "fix a rounding bug", "scopes": "all", "max_tokens": 20000}
    plain = client.get("/api/search", params=params).json()["hits"]
    path = "services/ledger-writer/internal/balance/x.go"
    hits = client.get("/api/search", params={**params, "paths": path}).json()["hits"]
    governed = {
        "domain/adr/0001-event-sourced-ledger.md",
        "conventions/go-services.md",
        "projects/ledger/balance-snapshots.md",
        "projects/ledger/overview.md",
    }
    assert not governed & {h["doc_path"] for h in plain}
    assert {h["doc_path"] for h in hits[:4]} == governed
    direct = [h for h in plain if h["related_to"] is None]
    led = [h for h in hits[4:] if h["related_to"] is None]
    assert [h["chunk_id"] for h in led] == [h["chunk_id"] for h in direct][:4]
    assert len(led) == 4 and len({h["chunk_id"] for h in hits}) == len(hits)
    small = {"q": "fix a rounding bug", "top_k": 3, "max_tokens": 20000}  # default scopes
    top = client.get("/api/search", params=small).json()["hits"][0]
    default = client.get("/api/search", params={**small, "paths": path}).json()["hits"]
    assert [h["doc_path"] for h in default if h["related_to"] is None] == [
        "domain/adr/0001-event-sourced-ledger.md",
        "conventions/go-services.md",
        top["doc_path"],
    ]
    assert default[2]["chunk_id"] == top["chunk_id"]
    kept = {h["chunk_id"] for h in default}
    assert all(h["related_to"] in kept for h in default if h["related_to"])


def test_search_errors_are_json_with_the_fix(client: TestClient) -> None:
    response = client.get("/api/search", params={"q": "retry", "scopes": "projects/nope"})
    assert response.status_code == 400
    assert response.json() == {
        "error": "scope",
        "detail": "scope 'projects/nope' does not exist; known scopes: conventions, domain, "
        "projects/checkout, projects/ledger (or 'all')",
    }
    typo = client.get("/api/search", params={"q": "retry", "scopes": "all,projets/ledger"})
    assert typo.status_code == 400  # 'all' beside a typo does not hide it
    assert typo.json()["detail"].startswith("scope 'projets/ledger' does not exist")
    everything = client.get("/api/search", params={"q": "retry", "scopes": "all,domain"})
    assert everything.status_code == 200
    missing = client.get("/api/search")
    assert missing.status_code == 422
    assert missing.json() == {"error": "invalid_request", "detail": "query.q: Field required"}


def test_bundle_is_deterministic_and_cached(client: TestClient) -> None:
    request = {"task": "add retries to declined card payments", "max_tokens": 800}
    first = client.post("/api/bundle", json=request).json()
    again = client.post("/api/bundle", json=request).json()
    assert re.fullmatch(r"[0-9a-f]{16}", first["bundle_id"])
    assert first["text"] == again["text"] and first["bundle_id"] == again["bundle_id"]
    assert (first["cached"], again["cached"]) == (False, True)
    assert 0 < first["tokens"] <= 800
    assert "domain/retry-policy.md" in first["text"]
    cache = client.get("/api/stats").json()["cache"]
    assert cache == {"hits": 1.0, "misses": 1.0, "hit_rate": 0.5}


def test_bundle_hits_reach_the_bundles_table(client: TestClient, service_api: Briefd) -> None:
    request = {"task": "add retries to declined card payments", "max_tokens": 900}
    bundle_id = client.post("/api/bundle", json=request).json()["bundle_id"]
    for _ in range(3):
        client.post("/api/bundle", json=request)
    deadline = time.monotonic() + 10
    while True:  # the service's periodic flush writes them (every 0.2 s here)
        with service_api.store.read() as conn:
            row = conn.execute("SELECT hits FROM bundles WHERE id = ?", (bundle_id,)).fetchone()
        if row is not None and row["hits"] == 3:
            break
        assert time.monotonic() < deadline, f"hits not flushed: {row and row['hits']}"
        time.sleep(0.05)


def test_bundle_rejects_a_bad_format(client: TestClient) -> None:
    response = client.post("/api/bundle", json={"task": "x", "format": "pdf"})
    assert response.status_code == 422
    assert response.json()["error"] == "invalid_request"
    assert response.json()["detail"] == (
        "format: Input should be 'markdown', 'package' or 'manifest'"
    )


def test_a_field_a_request_does_not_have_is_named_not_ignored(client: TestClient) -> None:
    typo = client.post("/api/bundle", json={"task": "refund a partial payment", "max_token": 300})
    assert typo.status_code == 422
    takes = (
        "it takes task, max_tokens, hard_limit, scopes, paths, tags, mode, format, base, issue, "
        "verbose, client"
    )
    assert typo.json() == {  # the one meant and the fields, as an unknown query parameter is
        "error": "invalid_request",
        "detail": f"max_token: not a field of this request (did you mean max_tokens?); {takes}",
    }
    scope = client.post("/api/bundle", json={"task": "refund", "scope": ["domain"]})
    assert scope.json()["detail"] == (
        f"scope: not a field of this request (did you mean scopes?); {takes}"
    )
    mcp_name = client.post("/api/bundle", json={"task_description": "refund"})
    assert mcp_name.json()["detail"] == f"task_description: not a field of this request; {takes}"
    both = client.post(
        "/api/bundle", json={"task": "refund", "format": "manifest", "mode": "package"}
    )
    assert both.status_code == 422
    assert both.json()["detail"] == (
        "mode 'package' and format 'manifest' (its old name) disagree; send mode only"
    )
    agree = client.post("/api/bundle", json={"task": "refund", "format": "json", "mode": "package"})
    assert agree.status_code == 200 and agree.json()["mode"] == "package"


def test_usage_is_stored(client: TestClient, service_api: Briefd) -> None:
    bundle = client.post("/api/bundle", json={"task": "refund a captured payment"}).json()
    first, second = (i["chunk_id"] for i in bundle["items"][:2])
    body = {"bundle_id": bundle["bundle_id"], "useful_chunk_ids": [first, second], "client": "t"}
    response = client.post("/api/usage", json=body)
    assert response.json() == {
        "bundle_id": bundle["bundle_id"],
        "stored": 2,
        "useful_chunk_ids": [first, second],
        "unknown_chunk_ids": [],
    }
    none_helped = client.post("/api/usage", json={"bundle_id": bundle["bundle_id"]}).json()
    assert none_helped["stored"] == 1  # left out: none helped, as the API's schema says
    schema = client.get("/openapi.json").json()["components"]["schemas"]["UsageIn"]
    assert "[] or left out: none did" in schema["properties"]["useful_chunk_ids"]["description"]
    rows = service_api.store.conn.execute(
        "SELECT bundle_id, chunk_id, useful, client FROM usage_events ORDER BY id"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        (bundle["bundle_id"], first, 1, "t"),
        (bundle["bundle_id"], second, 1, "t"),
        (bundle["bundle_id"], None, 0, None),
    ]


def test_usage_for_an_unknown_bundle_or_section_is_refused(
    client: TestClient, service_api: Briefd
) -> None:
    unknown = client.post("/api/usage", json={"bundle_id": "nonexistent", "useful_chunk_ids": []})
    assert unknown.status_code == 404
    assert unknown.json() == {
        "error": "not_found",
        "detail": "no bundle 'nonexistent' was issued by this index (bundles are remembered for "
        "30 days); pass the bundle_id that compile_bundle or document_context (POST /api/bundle "
        "or /api/context, `briefd bundle` or `briefd context`) returned",
    }
    bundle = client.post("/api/bundle", json={"task": "refund a captured payment"}).json()
    ids = [i["chunk_id"] for i in bundle["items"]]
    stranger = client.post(
        "/api/usage", json={"bundle_id": bundle["bundle_id"], "useful_chunk_ids": [ids[0], "zzz"]}
    )
    assert stranger.status_code == 400
    assert stranger.json() == {
        "error": "query",
        "detail": f"not sections of bundle {bundle['bundle_id']}: zzz; nothing was stored. "
        f"Report chunk ids of its sections: {', '.join(ids)}",
    }
    assert service_api.store.conn.execute("SELECT count(*) FROM usage_events").fetchone()[0] == 0


def test_document_with_sections_and_links(client: TestClient) -> None:
    body = client.get("/api/docs/domain/retry-policy.md").json()
    assert body["title"] == "Retry policy for card payments"
    assert body["scope"] == "domain"
    assert body["sections"] and all(s["chunk_id"] for s in body["sections"])
    assert any(link["status"] == "ok" for link in body["links"])
    scoped = client.get("/api/docs/domain/retry-policy.md", params={"scopes": "conventions"})
    assert scoped.status_code == 404


def test_links_and_backlinks_name_the_section_they_point_to(client: TestClient) -> None:
    """[[currency-and-rounding#FX conversion]]: the heading is part of the link, as
    `briefd doc --json` shows it; REST and MCP (one shape) used to drop it."""
    body = client.get("/api/docs/domain/currency-and-rounding.md").json()
    (backlink,) = [b for b in body["backlinks"] if b["source_path"] == "domain/settlement.md"]
    assert backlink == {
        "source_path": "domain/settlement.md",
        "section": "Payout currencies",
        "line": 94,
        "target": "currency-and-rounding",
        "fragment": "FX conversion",
        "target_path": "domain/currency-and-rounding.md",
        "status": "ok",
        "detail": "",
    }
    links = client.get("/api/docs/domain/settlement.md").json()["links"]
    assert (94, "FX conversion") in [(link["line"], link["fragment"]) for link in links]


def test_documents_are_read_within_the_default_scopes(client: TestClient) -> None:
    hidden = client.get("/api/docs/projects/ledger/overview.md")
    assert hidden.status_code == 404
    assert hidden.json() == {
        "error": "not_found",
        "detail": "no document 'projects/ledger/overview.md' in scopes domain, conventions; "
        "scope 'projects/ledger' is not requested: add it to scopes (--scopes on the CLI) or use "
        "'all' to read it",
    }
    for scopes in ("projects/ledger", "all", "domain,projects/ledger"):
        shown = client.get("/api/docs/projects/ledger/overview.md", params={"scopes": scopes})
        assert shown.status_code == 200, scopes
        assert shown.json()["title"] == "Ledger overview"
    typo = client.get("/api/docs/projects/ledger/overviw.md", params={"scopes": "domain"})
    assert "projects/ledger/overview.md" not in typo.json()["detail"]
    near = client.get("/api/docs/domain/retry-polcy.md").json()["detail"]
    assert near == (
        "no document 'domain/retry-polcy.md' in scopes domain, conventions; "
        "did you mean domain/retry-policy.md?"
    )


def test_backlinks_name_only_documents_in_scope(client: TestClient) -> None:
    adr = "/api/docs/domain/adr/0001-event-sourced-ledger.md"
    every = {
        b["source_path"] for b in client.get(adr, params={"scopes": "all"}).json()["backlinks"]
    }
    default = {b["source_path"] for b in client.get(adr).json()["backlinks"]}
    assert "projects/ledger/overview.md" in every
    assert default == {p for p in every if not p.startswith("projects/")} and default


def test_paths_outside_the_repository_are_404(client: TestClient) -> None:
    for path in (
        "/api/docs/%2e%2e/%2e%2e/etc/passwd",
        "/api/docs/..%2f..%2fetc%2fpasswd",
        "/api/docs//etc/passwd",
        "/api/docs/domain/%2e%2e/%2e%2e/etc/passwd",
        "/api/docs/C:%5cwindows%5cwin.ini",
        "/api/docs/domain%00.md",
    ):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.json()["error"] == "not_found", path
        assert "root:x:0" not in response.text


def test_a_path_outside_the_repository_names_where_documents_are_listed(
    client: TestClient,
) -> None:
    """The hint said "list them with list_scopes / GET /api/scopes", which list scopes, not
    documents; GET /api/docs (and `briefd docs`) list the documents' paths."""
    refused = client.get("/api/docs/..%2f..%2fetc%2fpasswd").json()["detail"]
    assert refused == (
        "no document '../../etc/passwd' in the knowledge repository; paths are relative to the "
        "repository root, e.g. domain/glossary.md (GET /api/docs and `briefd docs` list them)"
    )
    listed = client.get("/api/docs").json()["documents"]
    assert "domain/glossary.md" in {d["path"] for d in listed}


def test_a_symlink_out_of_the_repository_is_404(tmp_path: Path, write_files: WriteFiles) -> None:
    root = write_files({"domain/inside.md": "# Inside\n\nKept here.\n"})
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nprivate key material\n", encoding="utf-8")
    (root / "domain" / "leak.md").symlink_to(secret)
    with Briefd(service_settings_for(root, tmp_path / "db.sqlite"), embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config(token=None))) as http:
            assert http.get("/api/docs/domain/inside.md").status_code == 200
            leak = http.get("/api/docs/domain/leak.md")
            assert leak.status_code == 404
            assert "private key" not in leak.text


def test_stats_name_every_kind_of_link_finding(tmp_path: Path, write_files: WriteFiles) -> None:
    """/api/stats lists what `briefd links` lists: duplicate anchors too, not only their count,
    and links to a superseded document (the dashboard's table shows every count)."""
    root = write_files(
        {
            "domain/a.md": "# A\n\n## One {#same}\n\nx\n\n## Two {#same}\n\ny [[b#nope]] [[gone]]\n",
            "domain/b.md": "# B\n\nSee [[a#same]].\n",
            "domain/c.md": "---\nsupersedes: b.md\n---\n# C\n\nSee [[a]].\n",
        }
    )
    with Briefd(service_settings_for(root, tmp_path / "db.sqlite"), embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config(token=None))) as http:
            links = http.get("/api/stats").json()["links"]
    assert links["counts"] == {
        "broken": 1,
        "ambiguous": 0,
        "unknown_anchors": 1,
        "duplicate_anchors": 1,
        "orphans": 1,
        "to_superseded": 1,
    }
    assert links["to_superseded"] == [
        {
            "source_path": "domain/a.md",
            "line": 9,
            "target": "b",
            "detail": "links to domain/b.md, superseded by domain/c.md",
        }
    ]
    assert links["duplicate_anchors"] == [
        {"path": "domain/a.md", "anchor": "same", "lines": [3, 7]}
    ]
    assert [(f["source_path"], f["target"]) for f in links["broken"]] == [("domain/a.md", "gone")]
    assert links["unknown_anchors"][0]["detail"] == "domain/b.md has no heading or anchor '#nope'"


def test_scopes(client: TestClient) -> None:
    body = client.get("/api/scopes").json()
    assert body["default_scopes"] == ["domain", "conventions"]
    by_name = {s["name"]: s for s in body["scopes"]}
    assert by_name["domain"]["documents"] == 18
    assert sum(s["documents"] for s in body["scopes"]) == 45


def test_link_suggestions(client: TestClient) -> None:
    body = client.get("/api/links/suggestions", params={"limit": 500, "scopes": "all"}).json()
    kinds = {s["kind"] for s in body["suggestions"]}
    assert kinds == {"broken-link", "unlinked-mention"}
    one = client.get(
        "/api/links/suggestions", params={"doc_path": "conventions/feature-flags.md"}
    ).json()["suggestions"]
    assert {s["doc_path"] for s in one} == {"conventions/feature-flags.md"}
    assert any(s["target"] == "domain/fees.md" for s in one)
    missing = client.get("/api/links/suggestions", params={"doc_path": "nope.md"})
    assert missing.status_code == 404


def test_link_suggestions_name_only_documents_in_scope(client: TestClient) -> None:
    def named(params: dict[str, object]) -> set[str]:
        """The documents the suggestions name: where they are, and what a mention links to."""
        found = client.get("/api/links/suggestions", params={**params, "limit": 1000}).json()
        where = {s["doc_path"] for s in found["suggestions"]}
        mentioned = {s["target"] for s in found["suggestions"] if s["kind"] == "unlinked-mention"}
        return where | mentioned

    default = named({})
    assert default and all(p.startswith(("domain/", "conventions/")) for p in default)
    assert any(p.startswith("projects/ledger/") for p in named({"scopes": "all"}))
    ledger = named({"scopes": "projects/ledger"})
    assert ledger and all(p.startswith("projects/ledger/") for p in ledger)
    hidden = client.get(
        "/api/links/suggestions", params={"doc_path": "projects/ledger/overview.md"}
    )
    assert hidden.status_code == 404
    assert "scope 'projects/ledger' is not requested" in hidden.json()["detail"]


def test_stats_lists_the_first_fifty_skipped_files_and_counts_them_all(
    write_files: WriteFiles, api: Briefd
) -> None:
    """300 notes in a folder no scope takes: /api/stats, which the dashboard reads every 10 s,
    listed every one (3,000 made each answer 540 KB) though the dashboard shows 50. It lists
    the first 50 and counts them all."""
    notes = {f"notes/n{n:03d}.md": f"# Note {n}\n\nText.\n" for n in range(300)}
    write_files({**notes, "domain/refunds.md": "# Refunds\n\nWithin 30 days.\n"})
    api.index()
    with TestClient(create_app(api, service_config(token=None))) as http:
        index = http.get("/api/stats").json()["index"]
    assert len(index["skipped"]) == 50
    assert index["skipped_count"] == 300
    assert index["skipped"][0]["path"] == "notes/n000.md"
    assert (index["problems"], index["problems_count"]) == ([], 0)


def test_stats(client: TestClient) -> None:
    client.get("/api/search", params={"q": "chargeback"})
    body = client.get("/api/stats").json()
    assert body["index"]["documents"] == 45
    assert body["index"]["chunks"] == sum(s["chunks"] for s in body["index"]["scopes"])
    assert body["index"]["last_indexed_at"]
    assert {"path": "README.md", "reason": body["index"]["skipped"][0]["reason"]} in body["index"][
        "skipped"
    ]
    assert body["proposals"] == {"open": 0, "merged": 0, "closed": 0}
    assert body["links"]["counts"]["broken"] >= 1
    search = next(r for r in body["requests"] if r["name"] == "search")
    assert search["count"] == 1 and search["tokens"] > 0 and search["p50_ms"] is not None
    assert body["tokens_served"] >= search["tokens"]


def test_reset_counters(client: TestClient) -> None:
    client.get("/api/search", params={"q": "chargeback"})
    assert client.post("/api/admin/reset-counters").json()["reset"] is True
    body = client.get("/api/stats").json()
    assert [r["name"] for r in body["requests"]] == []  # the stats call is counted after it
    assert body["tokens_served"] == 0
    assert body["counters_reset_at"]


def test_rebuild_runs_in_the_background(client: TestClient) -> None:
    response = client.post("/api/admin/rebuild")
    assert response.status_code == 202
    assert response.json()["job"]["name"] == "rebuild"
    deadline = time.monotonic() + 30
    while True:
        job = client.get("/api/stats").json()["jobs"]["rebuild"]
        if job["finished_at"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert job["error"] is None
    assert job["summary"]["documents"] == 45
    assert client.get("/api/search", params={"q": "retry policy"}).json()["hits"]


def test_unknown_routes_and_methods_answer_json(client: TestClient) -> None:
    assert client.get("/api/nope").json() == {
        "error": "not_found",
        "detail": "no route GET /api/nope; the API's routes are listed at /docs "
        "(OpenAPI: /openapi.json)",
    }
    wrong = client.delete("/api/scopes")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "GET"
    assert wrong.json() == {
        "error": "method_not_allowed",
        "detail": "DELETE is not allowed on /api/scopes; it takes GET",
    }


def test_openapi_schema_lists_the_api(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/api/search",
        "/api/bundle",
        "/api/usage",
        "/api/docs/{path}",
        "/api/scopes",
        "/api/health",
        "/api/stats",
        "/api/admin/rebuild",
        "/api/admin/reset-counters",
    ):
        assert path in paths, path


def test_openapi_documents_the_refusals_the_routes_answer(client: TestClient) -> None:
    """A rebuild while one runs is 409; the webhook answers 401 (signature) and 409 (replay)."""
    paths = client.get("/openapi.json").json()["paths"]
    assert {"409", "503"} <= set(paths["/api/admin/rebuild"]["post"]["responses"])
    assert {"401", "409"} <= set(paths["/webhook/git"]["post"]["responses"])


def test_a_flush_waits_for_the_one_in_flight(client: TestClient, service_api: Briefd) -> None:
    """The periodic flush may have taken the queue and be waiting for the lock when a request
    flushes: the second flush returns only once both batches are written."""
    state = client.app.state.briefd  # type: ignore[attr-defined]
    client.get("/api/search", params={"q": "retry policy"})
    with state.lock:  # a request holds the lock
        first = threading.Thread(target=state.flush)  # the periodic flush, in flight
        first.start()
        deadline = time.monotonic() + 5
        while state._pending and time.monotonic() < deadline:
            time.sleep(0.001)
        assert not state._pending  # it took the search's entry, and waits for the lock
        state.log_query("bundle", "refund a captured payment", ("all",), 3, 1.0, 2.0, None)
        second = threading.Thread(target=state.flush)
        second.start()
        time.sleep(0.05)
        # it waits for the first flush before it takes anything from the queue
        assert second.is_alive() and len(state._pending) == 1
    second.join(5)
    logged = [(e.kind, e.query) for e in service_api.state.recent_queries()]
    first.join(5)
    assert sorted(logged) == [("bundle", "refund a captured payment"), ("search", "retry policy")]


def test_query_log_records_searches_and_bundles(client: TestClient, service_api: Briefd) -> None:
    client.get("/api/search", params={"q": "retry policy", "client": "cli-test"})
    client.post("/api/bundle", json={"task": "refund a captured payment"})
    client.app.state.briefd.flush()  # type: ignore[attr-defined]
    entries = service_api.state.recent_queries()
    assert [(e.kind, e.query) for e in entries] == [
        ("bundle", "refund a captured payment"),
        ("search", "retry policy"),
    ]
    assert entries[1].client == "cli-test" and entries[1].results > 0
    assert entries[1].top_score is not None and entries[1].latency_ms > 0
    assert TOKEN not in repr(entries)


def test_a_bundle_by_code_paths_alone_is_logged_by_its_paths(
    client: TestClient, service_api: Briefd
) -> None:
    """A bundle asked for by code paths alone (no task, no issue) was logged as the query '',
    a group of its own in gaps and usage: now by its paths (as a context is by its
    document), and, no question, with no score for gaps to weigh."""
    paths = ["tools/ledger-close/run.go", "/services/ledger-writer/internal/period/close.go"]
    answer = client.post("/api/bundle", json={"paths": paths, "scopes": ["all"]})
    assert answer.status_code == 200 and answer.json()["items"], answer.text
    client.app.state.briefd.flush()  # type: ignore[attr-defined]
    entries = [e for e in service_api.state.recent_queries() if e.kind == "bundle"]
    assert "" not in [e.query for e in entries]
    logged = entries[0]
    assert (
        logged.query == "services/ledger-writer/internal/period/close.go, tools/ledger-close/run.go"
    )
    assert logged.top_score is None and logged.results == len(answer.json()["items"])


def test_startup_warms_the_vector_index_before_the_first_query(
    service_settings: Settings,
) -> None:
    with Briefd(service_settings, embedder=FakeEmbedder()) as api:
        api.index()
        with TestClient(create_app(api, service_config())):
            deadline = time.monotonic() + 10
            while api.semantic is None or api.semantic._index is None:
                assert time.monotonic() < deadline, "the vectors were not loaded at startup"
                time.sleep(0.05)


def test_docs_page_and_its_assets_come_from_this_server(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert '"docs/assets/swagger-ui-bundle.js"' in page.text  # relative: see the proxy test
    assert "'docs/openapi.json'" in page.text
    schema = client.get("/docs/openapi.json").json()
    assert schema["servers"] == [THIS_SERVER]
    assert "servers" not in client.get("/openapi.json").json()  # for generated clients
    assert schema["paths"] == client.get("/openapi.json").json()["paths"]
    assert "//cdn" not in page.text and "https://" not in page.text
    script = client.get("/docs/assets/swagger-ui-bundle.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith(
        "text/javascript"
    )
    assert "SwaggerUIBundle" in script.text
    assert client.get("/docs/assets/swagger-ui.css").headers["content-type"].startswith("text/css")
    missing = client.get("/docs/assets/index.html")
    assert missing.status_code == 404
    assert "swagger-ui-bundle.js" in missing.json()["detail"]


def test_documents_are_listed_like_briefd_docs(client: TestClient) -> None:
    listed = client.get("/api/docs")
    assert listed.status_code == 200
    documents = listed.json()["documents"]
    assert len(documents) == 45
    assert documents[0] == {
        "scope": "conventions",
        "path": "conventions/api-design.md",
        "title": "REST API Conventions",
        "sections": 8,
        "tokens": documents[0]["tokens"],
        "updated_at": documents[0]["updated_at"],
    }
    assert documents[0]["tokens"] > 1000 and documents[0]["updated_at"][:2] == "20"
    ledger = client.get("/api/docs", params={"scopes": "projects/ledger"}).json()["documents"]
    assert ledger and {d["scope"] for d in ledger} == {"projects/ledger"}
    bad = client.get("/api/docs", params={"scopes": "nope"})
    assert bad.status_code == 400 and "scope 'nope' does not exist" in bad.json()["detail"]


def test_a_pasted_page_is_searched_not_refused(client: TestClient) -> None:
    """Up to what a URL holds (8 KiB): the engine reads its first 256 distinct words."""
    page = "refund window for partial refunds " + "log line " * 700
    assert 6000 < len(page) < 8000
    answered = client.get("/api/search", params={"q": page})
    assert answered.status_code == 200
    assert answered.json()["hits"][0]["doc_path"] == "domain/refunds.md"


def test_rebuild_builds_the_first_index_of_a_server_without_one(
    tmp_path: Path, example_copy: tuple[Path, Path]
) -> None:
    """The dashboard's "Rebuild index" on a server started without an index (``--no-index``,
    or a first index that failed) builds it from the configured source, instead of a 503
    telling the user to run ``briefd index`` by hand."""
    source, _ = example_copy
    settings = service_settings_for(source, tmp_path / "fresh.db")
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        response = http.post("/api/admin/rebuild")
        assert response.status_code == 202, response.text
        assert response.json()["job"]["name"] == "rebuild"
        deadline = time.monotonic() + 30
        while http.get("/api/health").json()["status"] != "ok" and time.monotonic() < deadline:
            time.sleep(0.05)
        job = http.get("/api/stats").json()["jobs"]["rebuild"]
        while job["finished_at"] is None and time.monotonic() < deadline:
            time.sleep(0.05)
            job = http.get("/api/stats").json()["jobs"]["rebuild"]
        assert job["error"] is None
        assert job["summary"]["documents"] == 45
        assert http.get("/api/search", params={"q": "retry policy"}).json()["hits"]


def test_a_reset_the_index_cannot_take_changes_nothing(
    client: TestClient, service_api: Briefd
) -> None:
    """Reset counters while another process writes the index (a sync's reindex): after a few
    seconds a 503 that says so, and the counters are all still there, here and in SQLite. (It
    used to wait 30 s holding the service lock, then zero them here only: the stored values
    came back at the next start.)"""
    client.get("/api/search", params={"q": "chargeback"})
    writer = sqlite3.connect(service_api.settings.db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        response = client.post("/api/admin/reset-counters")
        waited = time.monotonic() - started
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert response.status_code == 503
    assert response.json()["error"] == "store"
    assert "is busy" in response.json()["detail"] and "try again" in response.json()["detail"]
    assert waited < 10
    body = client.get("/api/stats").json()
    assert [r["count"] for r in body["requests"] if r["name"] == "search"] == [1]
    assert body["tokens_served"] > 0 and body["counters_reset_at"] is None


def test_stats_resolve_the_links_again_only_when_the_index_changed(
    tmp_path: Path, write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard asks /api/stats every 10 s; resolving every link of a big knowledge base
    took most of a second under the lock searches wait for. Polls of an unchanged index reuse
    the findings; an index run that adds a broken link shows it at the next poll."""
    files = {f"domain/d{i}.md": f"# D{i}\n\nSee [[d{(i + 1) % 200}]].\n" for i in range(200)}
    root = write_files(files)
    resolved = []
    real = views.link_catalog
    monkeypatch.setattr(views, "link_catalog", lambda conn: resolved.append(1) or real(conn))
    with Briefd(service_settings_for(root, tmp_path / "db.sqlite"), embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config(token=None))) as http:
            polls = [http.get("/api/stats").json()["links"] for _ in range(5)]
            assert len(resolved) == 1 and polls[0]["counts"]["broken"] == 0
            write_files({"domain/d7.md": "# D7\n\nSee [[d8]] and [[nowhere]].\n"})
            api.index()
            links = http.get("/api/stats").json()["links"]
    assert len(resolved) == 2
    assert [(f["source_path"], f["target"]) for f in links["broken"]] == [
        ("domain/d7.md", "nowhere")
    ]


def test_a_hit_cut_to_max_tokens_keeps_its_flags_and_emoji_whole(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """A flag is two code points (🇹🇷: T, R) and a family five (👨‍👩‍👧, joined by U+200D), each
    in tokens of their own: the head of a hit cut to max_tokens could end on 🇹 alone (a boxed
    T) or on a joiner. Every budget that cuts it (the answer's JSON counted) ends on whole ones."""
    root = write_files({"domain/ekipler.md": "# Ekipler\n\n" + "🇹🇷🇩🇪🇯🇵 👨‍👩‍👧 ekip " * 60})
    settings = service_settings_for(root, tmp_path / "emoji.db")
    marker = "\n[… truncated to fit max_tokens]"
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        api.index()
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        heads = set()
        for budget in range(180, 260):
            answer = http.get("/api/search", params={"q": "ekip", "max_tokens": budget}).json()
            content = answer["hits"][0]["content"] if answer["hits"] else ""
            if content.endswith(marker):
                heads.add(content.removesuffix(marker))
    cut = {re.sub(r"(🇹🇷|🇩🇪|🇯🇵|👨‍👩‍👧|[a-z ])+", "", head) for head in heads}  # a word may be cut
    assert len(heads) > 10 and cut == {""}, cut


def test_a_long_query_is_repeated_without_half_an_emoji_or_flag(client: TestClient) -> None:
    """The query a search answer repeats was cut at 200 code points: a flag (🇹🇷) there came
    back as 🇹, a family (👨‍👩‍👧) as 👨 and a dangling joiner. It stops before such a character."""
    flag, family = "\U0001f1f9\U0001f1f7", "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    for emoji in (flag, family):
        query = "r" * 199 + emoji + " retry policy"
        answer = client.get("/api/search", params={"q": query})
        assert answer.status_code == 200, answer.text
        left = len(query) - 199
        assert answer.json()["query"] == "r" * 199 + f" […{left} more characters]"
