"""What the model reads from the MCP tools (B6, issue 14): several clients (Claude Code, VS
Code) hand ``JSON.stringify(structuredContent)`` to the model whenever it is present, so a
bundle's structured content must stay near its budget and carry each section once. Through
the SDK's own client, which validates every result against the tool's output schema."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.tokens import count_tokens
from tests.conftest import EXAMPLE, EXAMPLE_TR, REPO
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run

BUDGETS = (300, 500, 800, 1200, 1500, 2500, 4000, 6000, 8000)
CORPORA = {"en": (EXAMPLE, "queries.yaml"), "tr": (EXAMPLE_TR, "queries-tr.yaml")}


def stringify(value: object) -> str:
    """``JSON.stringify``: no spaces, non-ASCII characters as they are, keys in order."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.fixture(scope="module", params=sorted(CORPORA))
def corpus(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, list[str]]]:
    source_dir, queries = CORPORA[request.param]
    base = tmp_path_factory.mktemp(f"payload-{request.param}")
    shutil.copytree(source_dir, base / "knowledge")
    data = yaml.safe_load((REPO / "eval" / "golden" / queries).read_text(encoding="utf-8"))
    settings = service_settings_for(base / "knowledge", base / "index.db")
    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as url:
            yield url + "/mcp", [q["query"] for q in data["queries"]]


def test_compile_bundle_structured_content_stays_near_the_budget(
    corpus: tuple[str, list[str]],
) -> None:
    url, tasks = corpus
    calls = [  # every task twice: default scopes, and every scope at another budget
        (task, BUDGETS[(i + shift) % len(BUDGETS)], ["all"] if shift else None)
        for i, task in enumerate(tasks)
        for shift in (0, 4)
    ]

    async def body(client: Client) -> list[tuple[str, int, Any, str]]:
        found = []
        for task, budget, scopes in calls:
            arguments = {"task_description": task, "max_tokens": budget, "scopes": scopes}
            result = await client.call_tool("compile_bundle", arguments)
            assert not result.is_error, result.content
            text = result.content[0].text  # type: ignore[union-attr]
            found.append((task, budget, result.structured_content, text))
        return found

    assert {budget for _, budget, _ in calls} == set(BUDGETS)
    for task, budget, structured, text in run(url, "auto", body):
        size = count_tokens(stringify(structured))
        assert size <= budget * 1.10 + 150, (task, budget, size)
        assert structured["schema_version"] == 2 and structured["mode"] == "markdown"
        assert text.startswith(structured["text"].rstrip()) or not structured["text"]
        assert "diagnostics" in structured and set(structured["diagnostics"]) == {"estimator"}
        for item in structured["items"]:  # each section once: its content is in the text
            assert set(item) <= {"chunk_id", "tier", "reasons", "truncated"}
            assert f"chunk {item['chunk_id']}" in structured["text"]


def test_package_and_manifest_structured_content_stays_near_the_budget(
    corpus: tuple[str, list[str]],
) -> None:
    """A package is packed as the JSON the client receives, escaping, metadata and envelope
    included (before: 5,226 tokens of structured content at max_tokens=4000, 1,413 at 1000);
    a manifest lists the same sections without their content."""
    url, tasks = corpus
    calls = [(task, BUDGETS[i % len(BUDGETS)]) for i, task in enumerate(tasks)]

    async def body(client: Client) -> list[tuple[str, int, Any, Any]]:
        found = []
        for task, budget in calls:
            answers = []
            for mode in ("package", "manifest"):
                arguments = {"task_description": task, "max_tokens": budget, "mode": mode}
                result = await client.call_tool("compile_bundle", {**arguments, "scopes": ["all"]})
                assert not result.is_error, result.content
                answers.append(result.structured_content)
            found.append((task, budget, *answers))
        return found

    assert {budget for _, budget in calls} == set(BUDGETS)
    for task, budget, package, manifest in run(url, "auto", body):
        for structured in (package, manifest):
            size = count_tokens(stringify(structured))  # the envelope included
            assert size <= structured["tokens"] <= budget * 0.95, (task, budget, size)
        size = count_tokens(stringify(package))
        assert package["tokens"] - size <= 24, task  # the envelope's figures at their widest
        assert manifest["tokens"] == package["tokens"]  # packed and counted as its package
        assert [i["chunk_id"] for i in manifest["items"]] == [
            i["chunk_id"] for i in package["items"]
        ]
        assert all("content" not in i for i in manifest["items"])


def test_a_delta_says_what_changed_over_mcp(tmp_path: Path) -> None:
    """Against its own bundle_id nothing is new, and the text says so (it said "No knowledge
    section matched."); after an edit the note counts the replaced section as the CLI does."""
    source = tmp_path / "knowledge"
    shutil.copytree(EXAMPLE, source)
    settings = service_settings_for(source, tmp_path / "index.db")
    task = {"task_description": "partial refunds pending refundable amount", "max_tokens": 3000}

    async def compiled(client: Client) -> tuple[str, int]:
        result = await client.call_tool("compile_bundle", task)
        return result.structured_content["bundle_id"], len(result.structured_content["items"])  # type: ignore[index]

    def against(base: str) -> Any:
        async def body(client: Client) -> Any:
            return await client.call_tool("compile_bundle", {**task, "base": base})

        return run(url, "auto", body)

    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as served:
            url = served + "/mcp"
            base, sections = run(url, "auto", compiled)
            same = against(base)
            text = same.content[0].text
            assert text.startswith(
                f"Nothing changed since bundle {base}: {sections} section(s) reused.\n\n("
            )
            assert f"delta from {base}: {sections} reused, 0 replaced, 0 removed, " in text
            assert "No knowledge section matched" not in text

            refunds = source / "domain" / "refunds.md"
            edited = refunds.read_text("utf-8").replace(
                "Pending refunds count", "Pending ones count"
            )
            refunds.write_text(edited, "utf-8")
            api.index()
            changed = against(base)
    text = changed.content[0].text
    entries = changed.structured_content["delta"]["entries"]  # type: ignore[index]
    assert [e["op"] for e in entries].count("replace") == 1
    assert "Pending ones count" in text
    assert f"delta from {base}: {sections - 1} reused, 1 replaced, 0 removed, " in text


def test_a_cut_sections_advice_reads_it_over_mcp(service_api: Briefd) -> None:
    """The truncation marker names the scope: its get_document call works as written for a
    project's section, which the default scopes leave out."""
    scopes = ["projects/ledger"]
    task = {"task_description": "ledger event flow", "max_tokens": 300, "scopes": scopes}

    async def body(client: Client) -> tuple[Any, Any]:
        bundle = await client.call_tool("compile_bundle", task)
        text = bundle.content[0].text  # type: ignore[union-attr]
        advice = re.search(
            r'get_document\("([^"]+)", start_line=(\d+), scopes=\["([^"]+)"\]\)', text
        )
        assert advice is not None, text
        path, line, scope = advice.groups()
        call = {"doc_path": path, "start_line": int(line), "scopes": [scope]}
        return bundle, await client.call_tool("get_document", call)

    with serving(create_app(service_api, service_config())) as base:
        bundle, document = run(base + "/mcp", "auto", body)
    assert bundle.structured_content["items"][0]["truncated"] is True
    assert not document.is_error, document.content
    assert document.structured_content["path"].startswith("projects/ledger/")
    part = document.structured_content["part"]  # read from the cut section's heading
    assert document.structured_content["body"].startswith("#"), document.content
    assert part["start_line"] == document.structured_content["sections"][0]["start_line"]


def test_a_budget_too_small_says_so_in_the_mcp_text(service_api: Briefd) -> None:
    task = {"task_description": "partial refunds pending refundable amount", "max_tokens": 150}

    async def body(client: Client) -> Any:
        return await client.call_tool("compile_bundle", task)

    with serving(create_app(service_api, service_config())) as base:
        result = run(base + "/mcp", "auto", body)
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("max_tokens 150 fits no section (the best needs ") and "raise" in text
    assert "No knowledge section matched" not in text
    assert result.structured_content["warnings"] == [text.split("\n\n")[0]]
    assert count_tokens(stringify(result.structured_content)) <= 150


def test_a_hard_limit_that_fits_no_section_is_named_not_max_tokens(service_api: Briefd) -> None:
    """A hard_limit below max_tokens caps optional content too: when that cap leaves every
    section out, the warning names it (raising max_tokens changes nothing), and the answer
    stays within it."""
    task = {"task_description": "partial refunds pending refundable amount", "max_tokens": 2000}

    async def body(client: Client) -> Any:
        return [
            await client.call_tool("compile_bundle", {**task, "hard_limit": limit})
            for limit in (100, 120)
        ]

    with serving(create_app(service_api, service_config())) as base:
        results = run(base + "/mcp", "auto", body)
    said = [r.structured_content["warnings"] for r in results]
    assert said == [
        ["hard_limit 100 fits no section; raise it"],
        ["hard_limit 120 fits no section (the best needs 433 tokens, 28 left); raise it"],
    ]
    for limit, result in zip((100, 120), results, strict=True):
        structured = result.structured_content
        assert structured["items"] == [] and structured["budget_exceeded"] is False
        assert count_tokens(stringify(structured)) <= limit


def test_the_smallest_budgets_bound_the_answer_warning_included(service_api: Briefd) -> None:
    """From the least max_tokens accepted up, an answer that fits no section stays within its
    budget and its ``tokens``, the warning that says so included."""
    tasks = ("how do we retry declined card payments", "partial refunds pending refundable")
    calls = [(task, budget) for task in tasks for budget in range(100, 210, 10)]

    async def body(client: Client) -> list[tuple[str, int, Any]]:
        found = []
        for task, budget in calls:
            arguments = {"task_description": task, "max_tokens": budget}
            found.append((task, budget, await client.call_tool("compile_bundle", arguments)))
        return found

    with serving(create_app(service_api, service_config())) as base:
        answers = run(base + "/mcp", "auto", body)
    warned = 0
    for task, budget, result in answers:
        structured = result.structured_content
        size = count_tokens(stringify(structured))
        assert size <= min(budget, structured["tokens"]), (task, budget, size, structured)
        if not structured["items"]:
            warned += 1
            assert structured["warnings"][0].startswith(f"max_tokens {budget} fits no section")
    assert warned >= len(tasks) * 5


def test_a_hard_limit_below_the_budget_that_fits_no_section_is_no_overage(
    service_api: Briefd,
) -> None:
    """``hard_limit`` under ``max_tokens`` caps optional content: an answer it leaves without
    a section names that limit and stays within it, never ``budget_exceeded`` (B7)."""
    task = "partial refunds pending refundable amount"
    calls = [(mode, limit) for mode in ("markdown", "package") for limit in (100, 105, 110)]

    async def body(client: Client) -> list[Any]:
        found = []
        for mode, limit in calls:
            arguments = {"task_description": task, "max_tokens": 2000, "hard_limit": limit}
            found.append(await client.call_tool("compile_bundle", {**arguments, "mode": mode}))
        return found

    with serving(create_app(service_api, service_config())) as base:
        answers = run(base + "/mcp", "auto", body)
    for (mode, limit), result in zip(calls, answers, strict=True):
        structured = result.structured_content
        assert structured["items"] == [], (mode, limit)
        assert structured["warnings"][0].startswith(f"hard_limit {limit} fits no section")
        assert not structured["budget_exceeded"] and structured["overage"] == 0, structured
        assert count_tokens(stringify(structured)) <= min(limit, structured["tokens"])


def test_a_recovered_bundle_counts_its_mark(service_api: Briefd) -> None:
    """Against a base it cannot compare with, the full bundle comes marked ``recovered``; its
    ``tokens`` counts the mark, so the structured content stays within them (B5, B7)."""
    tasks = ("how do partial refunds work", "chargeback evidence deadline", "webhook retries")
    modes = ("markdown", "package")
    budgets = range(300, 3000, 53)
    calls = [(task, mode, budget) for task in tasks for mode in modes for budget in budgets]

    async def body(client: Client) -> list[Any]:
        found = []
        for task, mode, budget in calls:
            arguments = {"task_description": task, "max_tokens": budget, "mode": mode}
            found.append(await client.call_tool("compile_bundle", {**arguments, "base": "f" * 16}))
        return found

    with serving(create_app(service_api, service_config())) as base:
        answers = run(base + "/mcp", "auto", body)
    for call, result in zip(calls, answers, strict=True):
        structured = result.structured_content
        assert structured["recovered"] is True
        size = count_tokens(stringify(structured))
        assert size <= min(call[2], structured["tokens"]), (call, size, structured["tokens"])


def test_modes_verbose_and_document_context_over_mcp(service_api: Briefd) -> None:
    task = "how do partial refunds work"

    async def body(client: Client) -> dict[str, Any]:
        out = {}
        for name, tool, arguments in (
            ("package", "compile_bundle", {"task_description": task, "mode": "package"}),
            ("manifest", "compile_bundle", {"task_description": task, "mode": "manifest"}),
            ("verbose", "compile_bundle", {"task_description": task, "verbose": True}),
            (
                "context",
                "document_context",
                {"doc_path": "domain/currency-and-rounding.md", "max_tokens": 4000},
            ),
            ("missing", "document_context", {"doc_path": "domain/nope.md"}),
        ):
            out[name] = await client.call_tool(tool, arguments)
        return out

    with serving(create_app(service_api, service_config())) as base:
        out = run(base + "/mcp", "auto", body)
    package = out["package"].structured_content
    assert "text" not in package and package["items"][0]["content"]
    assert out["package"].content[0].text == stringify(package)
    assert all(i["fingerprint"].startswith("sha256:") for i in package["items"])
    manifest = out["manifest"].structured_content
    assert all("content" not in i for i in manifest["items"])
    assert [i["fingerprint"] for i in manifest["items"]] == [
        i["fingerprint"] for i in package["items"]
    ]
    verbose = out["verbose"].structured_content["diagnostics"]
    assert {"exclusions", "ranking_version", "index_fingerprint", "gate"} <= set(verbose)
    context = out["context"].structured_content
    assert context["target"] == "domain/currency-and-rounding.md"
    assert [i["tier"] for i in context["items"]][:1] == ["mandatory"]
    assert "structural" in {i["tier"] for i in context["items"]}
    assert out["missing"].is_error
    assert "no document 'domain/nope.md'" in out["missing"].content[0].text  # type: ignore[union-attr]


def big_document(sections: int) -> str:
    """A spec of ``sections`` sections of ~560 tokens each, every line its own words."""
    body = ["# Ledger spec", ""]
    for s in range(sections):
        body += [f"## Rule {s}", ""]
        body += [
            f"Rule {s} line {n}: payouts settle {n} ledger batches nightly." for n in range(40)
        ]
        body.append("")
    return "\n".join(body)


def test_a_target_over_the_hard_limit_comes_cut_to_it_with_the_call_that_reads_on(
    tmp_path: Path,
) -> None:
    """document_context kept its target whole whatever the limits: a 36,000-token spec came
    as 36,000 tokens for max_tokens 2000 (hard_limit 8000), over the 25,000 Claude Code
    refuses, so the model got an error, the warning in it too. The target now comes from its
    top as far as the hard limit holds, the warning first names the get_document call that
    reads on, and that call, as written, gives the rest of the document."""
    root = tmp_path / "knowledge"
    (root / "domain").mkdir(parents=True)
    spec = big_document(64)
    (root / "domain" / "ledger.md").write_text(spec, encoding="utf-8")
    call = re.compile(
        r'get_document\("([^"]+)", scopes=\["([^"]+)"\], start_line=(\d+), max_tokens=(\d+)\)'
    )

    async def body(client: Client) -> tuple[Any, list[Any]]:
        context = await client.call_tool("document_context", {"doc_path": "domain/ledger.md"})
        held = context.structured_content["bundle_id"]
        again = await client.call_tool(
            "document_context", {"doc_path": "domain/ledger.md", "base": held}
        )
        assert again.content[0].text.startswith(f"Nothing changed since bundle {held}: ")
        assert "Warning: the target domain/ledger.md is over " in again.content[0].text
        named = call.search(context.content[0].text)
        assert named is not None, context.content[0].text[:2000]
        path, scope, start, budget = named.groups()
        asked = {"doc_path": path, "scopes": [scope], "max_tokens": int(budget)}
        parts = [await client.call_tool("get_document", {**asked, "start_line": int(start)})]
        while (following := parts[-1].structured_content["part"]["next_start_line"]) is not None:
            parts.append(await client.call_tool("get_document", {**asked, "start_line": following}))
        return context, parts

    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            context, parts = run(base + "/mcp", "auto", body)
    assert count_tokens(spec) > 25_000
    structured = context.structured_content
    received = count_tokens(stringify(structured))
    assert received <= structured["tokens"] <= 8000 and not structured["budget_exceeded"]
    text = context.content[0].text
    assert count_tokens(text) <= 8000
    assert text.startswith("Warning: the target domain/ledger.md is over hard_limit 8000 ")
    assert all(i["tier"] == "mandatory" for i in structured["items"])
    assert structured["items"][-1]["truncated"] and structured["diagnostics"]["estimator"]
    assert not any(p.is_error for p in parts) and len(parts) >= 4
    shown = re.findall(r"Rule (\d+) line (\d+):", text)
    read = [re.findall(r"Rule (\d+) line (\d+):", p.content[0].text) for p in parts]
    every = re.findall(r"Rule (\d+) line (\d+):", spec)
    assert sorted(set(shown) | {line for part in read for line in part}) == sorted(every)


def test_an_always_document_over_the_hard_limit_comes_cut_to_it_on_mcp_and_rest(
    tmp_path: Path,
) -> None:
    """An ``always: true`` document of 30,000 tokens was never cut: every bundle in its scope
    came over hard_limit (and over the 25,000 Claude Code refuses), so the agent got an error
    in place of any context. It now comes from its top as far as the hard limit holds, with
    the warning first and the get_document call that reads on; MCP and REST alike."""
    root = tmp_path / "knowledge"
    (root / "domain").mkdir(parents=True)
    (root / "conventions").mkdir()
    rules = "---\nalways: true\n---\n" + big_document(56).replace("Ledger spec", "House rules")
    (root / "conventions" / "house-rules.md").write_text(rules, encoding="utf-8")
    (root / "domain" / "refunds.md").write_text(
        "# Refunds\n\n## Partial refunds\n\nA partial refund returns part of a capture.\n",
        encoding="utf-8",
    )
    ask = {"task": "partial refunds", "max_tokens": 2000}
    call = re.compile(
        r'get_document\("([^"]+)", scopes=\["([^"]+)"\], start_line=(\d+), max_tokens=(\d+)\)'
    )

    async def body(client: Client) -> tuple[Any, Any]:
        asked_for = {"task_description": ask["task"], "max_tokens": ask["max_tokens"]}
        bundle = await client.call_tool("compile_bundle", asked_for)
        named = call.search(bundle.content[0].text)
        assert named is not None, bundle.content[0].text[:2000]
        path, scope, start, budget = named.groups()
        asked = {"doc_path": path, "scopes": [scope], "max_tokens": int(budget)}
        return bundle, await client.call_tool("get_document", {**asked, "start_line": int(start)})

    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            bundle, read_on = run(base + "/mcp", "auto", body)
            auth = {"Authorization": f"Bearer {TOKEN}"}
            rest = httpx.post(base + "/api/bundle", json=ask, headers=auth, timeout=60).json()
            around = {"doc_path": "domain/refunds.md", "max_tokens": 2000}
            context = httpx.post(base + "/api/context", json=around, headers=auth, timeout=60)
    assert count_tokens(rules) > 25_000
    structured = bundle.structured_content
    assert count_tokens(stringify(structured)) <= structured["tokens"] <= 8000
    assert not structured["budget_exceeded"] and not rest["budget_exceeded"]
    text = bundle.content[0].text
    assert count_tokens(text) <= 8000
    said = "Warning: the always: true document conventions/house-rules.md is over hard_limit 8000 "
    assert text.startswith(said)
    assert rest["warnings"] == structured["warnings"] and rest["text"] == structured["text"]
    assert structured["items"][-1]["truncated"] and "Rule 0 line 0: payouts" in text
    shown = re.findall(r"Rule (\d+) line (\d+):", text)
    following = re.findall(r"Rule (\d+) line (\d+):", read_on.content[0].text)
    assert not read_on.is_error and following[0] == (shown[-1][0], "0")  # the cut section
    target = context.json()  # the target whole, the rules as far as the limit holds
    assert "A partial refund returns part of a capture." in target["text"]
    assert not target["budget_exceeded"] and target["tokens"] <= 8000
    assert target["warnings"][0].startswith(said.removeprefix("Warning: "))


def test_every_tool_and_mode_validates_against_its_output_schema(
    corpus: tuple[str, list[str]],
) -> None:
    """Each tool's structuredContent checked with jsonschema against the outputSchema it
    lists (not only by the SDK client), in both corpora, with ordinary and awkward
    arguments: every bundle mode, a tiny and a huge budget, 'all' as a string, a 10,000
    character task; an error is an isError result with its message and no structured content."""
    url, tasks = corpus
    long_task = (tasks[0] + " ") * (10_000 // (len(tasks[0]) + 1))

    async def body(client: Client) -> list[tuple[str, Any, Any]]:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        first = await client.call_tool("search_context", {"query": tasks[0], "max_tokens": 500})
        doc = first.structured_content["hits"][0]["doc_path"]  # type: ignore[index]
        calls: list[tuple[str, dict[str, Any]]] = [
            ("list_scopes", {}),
            ("search_context", {"query": tasks[1], "max_tokens": 1}),
            ("search_context", {"query": long_task, "max_tokens": 200_000, "scopes": "all"}),
            *[
                ("compile_bundle", {"task_description": task, "max_tokens": size, "mode": mode})
                for mode in ("markdown", "package", "manifest")
                for task, size in ((tasks[2], 100), (long_task, 500), (tasks[3], 200_000))
            ],
            ("document_context", {"doc_path": doc, "max_tokens": 500, "verbose": True}),
            ("get_document", {"doc_path": doc, "max_tokens": 500}),
            ("get_document", {"doc_path": doc, "scopes": ["all"]}),
            ("suggest_links", {"limit": 2, "offset": 1}),
            ("knowledge_gaps", {}),
            ("knowledge_drift", {}),
            ("knowledge_usage", {}),
        ]
        found = [(name, await client.call_tool(name, args), schemas[name]) for name, args in calls]
        bundle = found[4][1].structured_content
        chunks = [i["chunk_id"] for i in bundle["items"]]  # type: ignore[index]
        usage = {"bundle_id": bundle["bundle_id"], "useful_chunk_ids": chunks[:1]}  # type: ignore[index]
        reported = await client.call_tool("report_usage", usage)
        found.append(("report_usage", reported, schemas["report_usage"]))
        for name, args in [
            ("compile_bundle", {"task_description": "x", "issue": "SHOP-42"}),
            ("search_context", {"query": "x", "scopes": ["nope"]}),
            ("get_document", {"doc_path": "nowhere/at-all.md"}),
            ("report_usage", {"bundle_id": "0000000000000000", "useful_chunk_ids": []}),
        ]:
            found.append((name, await client.call_tool(name, args), None))
        return found

    answers = run(url, "auto", body)
    assert len(answers) == 24
    fixes = iter(
        ["or pass the issue's text", "known scopes:", "paths are relative", "pass the bundle_id"]
    )
    for name, result, schema in answers:
        text = result.content[0].text
        if schema is None:  # an error, and what to do about it
            assert result.is_error and result.structured_content is None, (name, text)
            assert next(fixes) in text, (name, text)
            continue
        assert not result.is_error and text.strip(), (name, text)
        jsonschema.validate(result.structured_content, schema)
        mode = result.structured_content.get("mode")
        if mode in ("package", "manifest"):  # the text is the same JSON, not a second rendering
            assert text == stringify(result.structured_content), name
            assert "text" not in result.structured_content
