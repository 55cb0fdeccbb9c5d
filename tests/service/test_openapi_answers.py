"""What OpenAPI says the operator routes answer is what they answer: `/api/stats`, `/api/sync`
and `/api/admin/*` were typed only as "object" (a generated client got no field types), and
`/api/health` documented only its 200 though it answers 503 when the index cannot be read."""

from __future__ import annotations

from typing import Any

import jsonschema
from fastapi.testclient import TestClient

from tests.sync.test_routes import eventually


def documented(openapi: dict[str, Any], method: str, path: str, code: int) -> dict[str, Any]:
    """The schema OpenAPI gives ``method path``'s ``code`` answer, its references resolvable."""
    answer = openapi["paths"][path][method]["responses"][str(code)]
    schema = answer["content"]["application/json"]["schema"]
    return {**schema, "components": openapi["components"]}


def test_the_operator_routes_answer_what_openapi_says(client: TestClient) -> None:
    openapi = client.get("/openapi.json").json()
    assert client.get("/api/search", params={"q": "refund window"}).status_code == 200
    answered: list[tuple[str, str, Any]] = [
        ("get", "/api/sync", client.get("/api/sync")),
        ("post", "/api/admin/sync", client.post("/api/admin/sync")),
    ]
    assert eventually(lambda: not client.get("/api/sync").json()["running"], 30)
    answered.append(("post", "/api/admin/rebuild", client.post("/api/admin/rebuild")))
    assert eventually(lambda: client.get("/api/stats").json()["jobs"]["rebuild"]["finished_at"], 60)
    answered.append(("post", "/api/admin/reset-counters", client.post("/api/admin/reset-counters")))
    assert client.get("/api/search", params={"q": "refund window"}).status_code == 200
    stats = client.get("/api/stats")
    answered.append(("get", "/api/stats", stats))
    for method, path, response in answered:
        assert response.status_code in (200, 202), (path, response.text)
        schema = documented(openapi, method, path, response.status_code)
        assert schema.get("type") != "object" or schema.get("properties"), (path, schema)
        jsonschema.validate(response.json(), schema)
    body = stats.json()
    assert body["requests"] and body["jobs"]["rebuild"]["summary"]["documents"] > 0
    fields = openapi["components"]["schemas"]["StatsOut"]["properties"]
    assert {"index", "requests", "links", "jobs", "proposals_enabled"} <= set(fields)
    unhealthy = openapi["paths"]["/api/health"]["get"]["responses"]["503"]
    assert unhealthy["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"
    }
