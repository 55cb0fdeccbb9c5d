"""Drift counts within the budget (B7, T4): a bundle whose items come from a document that
drifted from the code carries that drift (a ``drift`` field on each item, a note after the
Markdown block), and what the client receives still fits ``max_tokens`` — over the real HTTP
app and through the SDK's MCP client, against a real knowledge checkout and a real code
repository committed to after the document."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.cli.bundle import _print as printed
from briefd.service import create_app
from briefd.tokens import count_tokens
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run
from tests.team.coderepo import Repo, settings_for

TASK = "how are soft declines retried"
PATHS = ["services/payment/retry.py"]
BUDGETS = range(340, 1400, 37)
HEADROOM = 0.95  # bundles.headroom: the soft budget packed is 95 % of max_tokens
ENVELOPE_SLACK = 24  # tokens counts the envelope's figures at their widest


def retry_doc() -> str:
    """A governed document long enough that every budget above cuts into it."""
    rules = "\n".join(
        f"- Attempt {n}: wait {2**n} seconds, then retry the soft decline with the same "
        f"idempotency key; a hard decline on attempt {n} stops the retries at once."
        for n in range(1, 40)
    )
    return (
        '---\ntitle: Retry policy\nrefs: ["services/payment/**"]\n---\n# Retry policy\n\n'
        f"## Soft declines\nA soft decline is retried with exponential backoff.\n\n{rules}\n"
    )


@pytest.fixture
def project(world: tuple[Briefd, Repo, Repo]) -> tuple[Briefd, Repo]:
    """The index and the code repository that drifted from its knowledge."""
    return world[0], world[2]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Briefd, Repo, Repo]]:
    """The index, its knowledge checkout, and the code repository that drifted from it."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"domain/retry.md": retry_doc()}, "Knowledge", "2026-03-10T09:00:00+00:00")
    app = Repo(tmp_path / "app")
    app.commit(
        {"services/payment/retry.py": "LIMIT = 5\n"},
        "Raise the soft decline retry limit to 5",
        "2026-03-15T12:00:00+00:00",
    )
    settings = settings_for(tmp_path, knowledge, {"source": str(app.path), "name": "payments"})
    with Briefd(settings, embedder=None) as api:
        api.index()
        yield api, knowledge, app


@pytest.fixture
def drifting(project: tuple[Briefd, Repo]) -> Briefd:
    return project[0]


def stringify(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def received_markdown(text: str) -> str:
    """The MCP text of a Markdown bundle without its last line (bundle id, tokens)."""
    block, _, status = text.rpartition("\n\n")
    assert status.startswith("(bundle_id "), text
    return block


def test_package_items_with_drift_stay_within_the_budget_over_rest(drifting: Briefd) -> None:
    with TestClient(create_app(drifting, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        for budget in BUDGETS:
            for mode in ("package", "manifest"):
                ask = {"task": TASK, "paths": PATHS, "max_tokens": budget, "mode": mode}
                body = http.post("/api/bundle", json=ask).json()
                assert body["items"] and all("drift" in i for i in body["items"]), (budget, body)
                size = count_tokens(stringify(body))  # the whole answer, envelope included
                assert size <= body["tokens"] <= budget * HEADROOM, (budget, mode, size)
                if mode == "package":  # a manifest is packed as its package, content and all
                    assert body["tokens"] - size <= ENVELOPE_SLACK, (budget, size)
                assert not body["budget_exceeded"]


@pytest.mark.parametrize("mode", ["markdown", "package"])
def test_what_an_mcp_client_receives_with_drift_stays_within_the_budget(
    drifting: Briefd, mode: str
) -> None:
    budgets = (360, 520, 800, 1200)

    async def body(client: Client) -> list[tuple[int, Any, str]]:
        found = []
        for budget in budgets:
            arguments = {
                "task_description": TASK,
                "paths": PATHS,
                "max_tokens": budget,
                "mode": mode,
            }
            result = await client.call_tool("compile_bundle", arguments)
            assert not result.is_error, result.content
            found.append((budget, result.structured_content, result.content[0].text))  # type: ignore[union-attr]
        return found

    with serving(create_app(drifting, service_config())) as base:
        answers = run(base + "/mcp", "auto", body)
    for budget, structured, text in answers:
        assert structured["items"] and all("drift" in i for i in structured["items"])
        size = count_tokens(stringify(structured))  # what Claude Code hands the model
        assert size <= structured["tokens"] <= budget * HEADROOM, (budget, size)
        assert count_tokens(text) <= budget, budget  # the text channel too, with its notes
        notes = ""  # a Markdown bundle's tokens count the drift notes its MCP text adds
        if mode == "markdown":
            notes = received_markdown(text).removeprefix(structured["text"])
            assert "(drift: code under the refs of domain/retry.md changed in 1 commit(s)" in notes
        slack = ENVELOPE_SLACK + count_tokens(notes)
        assert structured["tokens"] - size <= slack, (budget, size)


def test_a_delta_tells_an_mcp_client_which_replaced_sections_drift(
    world: tuple[Briefd, Repo, Repo],
) -> None:
    """Against a base the replaced sections are the ones sent, and the MCP text says that their
    document drifts, as it does for a whole bundle."""
    api, knowledge, app = world
    ask = {"task_description": TASK, "paths": PATHS, "max_tokens": 800}

    async def first(client: Client) -> str:
        result = await client.call_tool("compile_bundle", ask)
        return str(result.structured_content["bundle_id"])  # type: ignore[index]

    async def again(client: Client) -> tuple[Any, str]:
        result = await client.call_tool("compile_bundle", {**ask, "base": held})
        assert not result.is_error, result.content
        return result.structured_content, result.content[0].text  # type: ignore[union-attr]

    with serving(create_app(api, service_config())) as base:
        held = run(base + "/mcp", "auto", first)
        edited = retry_doc().replace("exponential backoff", "exponential backoff and jitter")
        knowledge.commit({"domain/retry.md": edited}, "Jitter", "2026-03-20T09:00:00+00:00")
        app.commit({"services/payment/retry.py": "LIMIT = 6\n"}, "Six", "2026-03-25T12:00:00+00:00")
        api.index()
        structured, text = run(base + "/mcp", "auto", again)
    replaced = [e for e in structured["delta"]["entries"] if e["op"] == "replace"]
    assert replaced and all(e["item"]["drift"] for e in replaced), structured["delta"]
    assert "(drift: code under the refs of domain/retry.md changed in 1 commit(s)" in text


def test_a_change_of_drift_is_a_new_bundle_packed_with_it(project: tuple[Briefd, Repo]) -> None:
    """Drift is packed with the items, so a cached bundle is not served once drift moved: the
    next answer is compiled again (a new bundle_id) with the new count, within the budget."""
    api, app = project
    ask = {"task": TASK, "paths": PATHS, "max_tokens": 500, "mode": "package"}
    with TestClient(create_app(api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        first = http.post("/api/bundle", json=ask).json()
        assert http.post("/api/bundle", json=ask).json()["cached"]
        app.commit(
            {"services/payment/retry.py": "LIMIT = 6\n"},
            "Raise it again",
            "2026-03-20T12:00:00+00:00",
        )
        api.drift(refresh=True)
        again = http.post("/api/bundle", json=ask).json()
    assert not again["cached"] and again["bundle_id"] != first["bundle_id"]
    assert [i["drift"]["commits"] for i in first["items"]] == [1]
    assert [i["drift"]["commits"] for i in again["items"]] == [2]
    size = count_tokens(stringify(again))
    assert size <= again["tokens"] <= 500 * HEADROOM


def test_the_cli_says_which_documents_drift_beside_a_markdown_bundle(
    drifting: Briefd, capsys: pytest.CaptureFixture[str]
) -> None:
    """``briefd bundle`` prints the block on stdout and, like the MCP text, the drift notes
    (on stderr, with its summary, so a piped block stays the block)."""
    bundle = drifting.compile_bundle(BundleRequest(TASK, max_tokens=600, paths=tuple(PATHS)))
    printed(bundle, json_output=False)
    out, err = capsys.readouterr()
    assert out.rstrip("\n") == bundle.text and "(drift:" not in out
    assert "(drift: code under the refs of domain/retry.md changed in 1 commit(s)" in err


@pytest.mark.parametrize("mode", ["markdown", "package"])
def test_a_base_held_before_the_drift_gets_its_sections_again_with_it(
    tmp_path: Path, mode: str
) -> None:
    """B5/T4: a caller holding a bundle from before the code moved holds its sections without
    drift; against that base the sections come again, with the drift (package: the items'
    ``drift``; markdown: the note after the block), not as "reuse" of what it holds."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"domain/retry.md": retry_doc()}, "Knowledge", "2026-03-10T09:00:00+00:00")
    app = Repo(tmp_path / "app")
    app.commit({"services/payment/retry.py": "LIMIT = 4\n"}, "Four", "2026-03-01T12:00:00+00:00")
    settings = settings_for(tmp_path, knowledge, {"source": str(app.path), "name": "payments"})
    ask = {"task": TASK, "paths": PATHS, "max_tokens": 800, "mode": mode}
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        api.index()
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        held = http.post("/api/bundle", json=ask).json()
        assert held["items"] and "(drift:" not in json.dumps(held)
        app.commit(
            {"services/payment/retry.py": "LIMIT = 5\n"}, "Five", "2026-03-15T12:00:00+00:00"
        )
        api.drift(refresh=True)
        delta = http.post("/api/bundle", json={**ask, "base": held["bundle_id"]}).json()
    entries = delta["delta"]["entries"]
    assert [e["op"] for e in entries] == ["replace"] * len(entries), entries
    if mode == "package":
        assert all(e["item"]["drift"]["commits"] == 1 for e in entries)
    else:
        assert delta["text"] and all(e["item"]["drift"] for e in entries)
