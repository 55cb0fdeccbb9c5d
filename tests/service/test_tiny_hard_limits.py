"""B1, B7: an answer never goes over the hard limit the user set, whatever it has to say. At
``hard_limit`` 100 a target cut at the limit answered 185 tokens (its "read on with
get_document" warning alone), a request whose paths are governed outside its scopes 148.
Measured as the client receives it: REST's body, MCP's structured content and the text it
hands the model, counted with
briefd's own counter, in markdown and package modes, for hard limits 20 to 600."""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi.testclient import TestClient
from mcp import Client
from mcp_types import TextContent

from briefd.api import Briefd
from briefd.service import create_app
from briefd.tokens import count_tokens
from tests.service.conftest import service_config
from tests.service.live import serving
from tests.service.test_mcp import run

HANDLER = "services/payment-gateway/internal/refunds/handler.go"
LIMITS = (20, 60, *range(100, 260, 20), 300, 450, 600)
CASES: dict[str, tuple[str, dict[str, object]]] = {  # (route, body) of REST
    "cut target": ("context", {"doc_path": "domain/refunds.md", "task": "refund"}),
    "paths elsewhere": ("bundle", {"task": "", "paths": [HANDLER]}),
    "issue and target": (
        "context",
        {"doc_path": "domain/glossary.md", "task": "refund"},
    ),
    "long issue": ("bundle", {"task": "refund", "issue": "PAY-1 broken\n\n" + "refund " * 300}),
    "paths and task": ("bundle", {"task": "refund", "paths": [HANDLER], "scopes": ["all"]}),
}
NEEDS = re.compile(r"raise it to (\d+)")
TOO_SMALL = re.compile(r"hard_limit (\d+) is too small for any answer .* raise it to (\d+) or more")


def refused_as_too_small(detail: str, limit: int) -> bool:
    """Whether ``detail`` is the refusal of a limit its answer's envelope alone exceeds (at
    100 some requests' answers do not fit, whatever their bundle id), naming a larger limit:
    allowed, since nothing goes over the limit."""
    found = TOO_SMALL.search(detail)
    return found is not None and int(found.group(1)) == limit < int(found.group(2))


def stringify(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _mcp(route: str, body: dict[str, object], mode: str, limit: int) -> tuple[str, dict[str, Any]]:
    arguments = {k: v for k, v in body.items() if k not in ("task", "doc_path")}
    arguments.update(task_description=body["task"], mode=mode, hard_limit=limit, max_tokens=2000)
    if route == "context":
        return "document_context", {**arguments, "doc_path": body["doc_path"]}
    return "compile_bundle", arguments


def test_no_answer_goes_over_a_small_hard_limit_on_rest(service_api: Briefd) -> None:
    minimal = 0
    with TestClient(create_app(service_api, service_config())) as http:
        http.headers["Authorization"] = "Bearer " + service_config().token  # type: ignore[operator]
        for name, (route, body) in CASES.items():
            for mode in ("markdown", "package"):
                for limit in LIMITS:
                    sent = {**body, "mode": mode, "hard_limit": limit, "max_tokens": 2000}
                    answer = http.post(f"/api/{route}", json=sent)
                    if limit < 100:  # under the least accepted: refused, never answered over it
                        assert answer.status_code == 422, (name, limit, answer.text)
                        continue
                    if answer.status_code == 400 and limit < 120:
                        assert refused_as_too_small(answer.json()["detail"], limit), answer.text
                        continue
                    assert answer.status_code == 200, (name, mode, limit, answer.text)
                    received = count_tokens(answer.text)
                    out = answer.json()
                    assert received <= out["tokens"] <= limit, (name, mode, limit, answer.text)
                    assert not out["budget_exceeded"] and out["overage"] == 0
                    needs = NEEDS.search(" ".join(out.get("warnings", [])))
                    if not out["items"] and needs and "holds nothing" in out["warnings"][0]:
                        minimal += 1
                        assert int(needs.group(1)) > limit
    assert minimal >= 2  # the smallest limits hold nothing of a cut target: said so


def test_no_answer_goes_over_a_small_hard_limit_on_mcp(service_api: Briefd) -> None:
    calls = [
        (name, mode, limit)
        for name in CASES
        for mode in ("markdown", "package")
        for limit in LIMITS
        if limit >= 100
    ]

    async def body(client: Client) -> list[Any]:
        found = []
        for name, mode, limit in calls:
            tool, arguments = _mcp(*CASES[name], mode, limit)
            found.append(await client.call_tool(tool, arguments))
        return found

    with serving(create_app(service_api, service_config())) as base:
        answers = run(base + "/mcp", "auto", body)
    for call, result in zip(calls, answers, strict=True):
        if result.is_error and call[2] < 120:
            said = "".join(part.text for part in result.content if isinstance(part, TextContent))
            assert refused_as_too_small(said, call[2]), (call, said)
            continue
        assert not result.is_error, (call, result.content)
        structured = result.structured_content
        received = count_tokens(stringify(structured))
        assert received <= structured["tokens"] <= call[2], (call, structured)
        text = "".join(part.text for part in result.content if isinstance(part, TextContent))
        assert text and count_tokens(text) <= call[2], (call, text)  # what the model is handed


def test_a_cut_target_at_a_small_limit_keeps_the_call_that_reads_on(service_api: Briefd) -> None:
    """Where the long warning does not fit and a compact one does, the compact one names the
    get_document call that reads on; where nothing fits, the answer says which limit would."""
    with TestClient(create_app(service_api, service_config())) as http:
        http.headers["Authorization"] = "Bearer " + service_config().token  # type: ignore[operator]
        said = {}
        for limit in range(100, 260, 10):
            body = {"doc_path": "domain/refunds.md", "task": "refund", "hard_limit": limit}
            out = http.post("/api/context", json={**body, "max_tokens": 2000}).json()
            if "detail" in out and limit < 120:
                assert refused_as_too_small(out["detail"], limit), out
                continue
            assert out["tokens"] <= limit
            said[limit] = out["warnings"][0]
    least = min(said)
    first = said[least]
    assert first.startswith(f"hard_limit {least} holds nothing") and NEEDS.search(first)
    compact = [w for w in said.values() if "(REST: GET" not in w and "get_document(" in w]
    assert compact, said
    assert compact[0].startswith("the target domain/refunds.md is over hard_limit ")
    assert (
        'Read on with get_document("domain/refunds.md", scopes=["domain"], start_line='
        in (compact[0])
    )


def test_a_small_hard_limit_answers_or_refuses_whatever_the_bundle_id(service_api: Briefd) -> None:
    """The same request in other words (another bundle id) gets the same outcome at the same
    hard limit: at 100 a document_context was answered or refused by its id's digits (26 of
    30 answered "holds nothing: raise it to 137", 4 refused). Through the MCP client, as the
    model receives it: the refusal's text, or the answer's figures and warnings."""
    calls = [
        (limit, mode, f"refund {i}")
        for limit in (100, 106)
        for mode in ("markdown", "package")
        for i in range(10)
    ]

    async def body(client: Client) -> list[Any]:
        found = []
        for limit, mode, task in calls:
            arguments = {"doc_path": "domain/refunds.md", "task_description": task}
            arguments.update(hard_limit=limit, max_tokens=2000, mode=mode)
            found.append(await client.call_tool("document_context", arguments))
        return found

    with serving(create_app(service_api, service_config())) as base:
        answers = run(base + "/mcp", "auto", body)
    outcomes: dict[tuple[int, str], set[object]] = {}
    for (limit, mode, _), result in zip(calls, answers, strict=True):
        if result.is_error:
            said: object = "".join(p.text for p in result.content if isinstance(p, TextContent))
        else:
            out = result.structured_content
            said = (out["tokens"], tuple(out["warnings"]), len(out["items"]))
            assert count_tokens(stringify(out)) <= out["tokens"] <= limit, out
        outcomes.setdefault((limit, mode), set()).add(said)
    assert {key: len(said) for key, said in outcomes.items()} == dict.fromkeys(outcomes, 1)
    assert outcomes[(106, "markdown")] == {
        (105, ("hard_limit 106 holds nothing: raise it to 137",), 0)
    }


def test_the_hard_limit_is_described_as_the_model_finds_it(service_api: Briefd) -> None:
    """The hard_limit the model reads in tools/list said mandatory content over it "is reported
    as budget_exceeded" (content past it, flagged); a target over it comes cut to it, never
    flagged. What the description says is what a call gets: within it, the get_document call
    named."""

    async def body(client: Client) -> Any:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        arguments = {"doc_path": "domain/refunds.md", "hard_limit": 300, "max_tokens": 2000}
        return tools, await client.call_tool("document_context", arguments)

    with serving(create_app(service_api, service_config())) as base:
        tools, cut = run(base + "/mcp", "auto", body)
    for name in ("compile_bundle", "document_context"):
        said = tools[name].input_schema["properties"]["hard_limit"]["description"]
        assert "budget_exceeded" not in said
        assert said.startswith("Tokens the whole answer never goes over (default 4 x max_tokens)")
    out = cut.structured_content
    assert out["tokens"] <= 300 and not out["budget_exceeded"] and out["overage"] == 0
    assert 'get_document("domain/refunds.md"' in " ".join(out["warnings"])
