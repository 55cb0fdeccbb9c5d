"""Code paths an agent sends that no file system takes (R5, I1): a NUL byte, a name longer
than the system allows. Each is a clear answer on every surface, never an internal error."""

from __future__ import annotations

from typing import Any

import httpx
from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from tests.service.conftest import service_config
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run

LONG = "/" + "/".join(["abcdefgh"] * 600) + "/refund.py"  # over PATH_MAX, in no work tree
NUL = "/srv/shop/src/\x00refund.py"
SAID = (
    "path '/srv/shop/src/\\x00refund.py' holds a NUL character, which no file name has; name "
    "code paths from the repository's root, e.g. src/app.py"
)


def test_a_nul_or_an_overlong_absolute_path_is_answered(service_api: Briefd) -> None:
    """An absolute path is looked up on disk for the work tree holding it: a NUL made that a
    ValueError and a 5,000-character path an OSError (File name too long), so the MCP tools
    answered 'Error executing tool search_context' and REST a bare 500."""

    async def body(client: Client) -> Any:
        search = {"query": "partial refunds"}
        return [
            await client.call_tool("search_context", {**search, "paths": [NUL]}),
            await client.call_tool("compile_bundle", {"task_description": "x", "paths": [NUL]}),
            await client.call_tool("search_context", {**search, "paths": [LONG]}),
        ]

    with serving(create_app(service_api, service_config())) as base:
        nul, bundled, long = run(base + "/mcp", "auto", body)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        rest = httpx.get(
            base + "/api/search", params={"q": "refund", "paths": NUL}, headers=headers
        )
        posted = httpx.post(
            base + "/api/bundle", json={"task": "refund", "paths": [LONG]}, headers=headers
        )
    assert [r.is_error for r in (nul, bundled, long)] == [True, True, False]
    assert nul.content[0].text == bundled.content[0].text == SAID  # type: ignore[union-attr]
    assert long.structured_content["hits"][0]["doc_path"] == "domain/refunds.md"
    assert (rest.status_code, rest.json()) == (400, {"error": "query", "detail": SAID})
    assert posted.status_code == 200 and posted.json()["items"]


SPELLINGS = ("domain\\refunds.md", "domain//refunds.md", "domain/./refunds.md")


def test_a_document_path_spelt_with_backslashes_or_doubled_slashes_is_read_by_every_tool(
    service_api: Briefd,
) -> None:
    """A Windows agent joins ``domain\\refunds.md``: get_document answered "no document ... in
    the knowledge repository ..., e.g. domain/glossary.md" (as a path leaving the repository),
    document_context "did you mean domain/refunds.md?"; and ``domain//refunds.md`` was read by
    get_document and not found by document_context. Both tools now read all three spellings as
    domain/refunds.md, and a path out of the repository in backslashes is still refused."""

    async def body(client: Client) -> Any:
        found = []
        for path in SPELLINGS:
            found.append(await client.call_tool("get_document", {"doc_path": path}))
            found.append(await client.call_tool("document_context", {"doc_path": path}))
        found.append(await client.call_tool("get_document", {"doc_path": "..\\..\\etc\\passwd"}))
        return found

    with serving(create_app(service_api, service_config())) as base:
        *answers, out = run(base + "/mcp", "auto", body)
    said = [(a.is_error, a.content[0].text[:120]) for a in answers]  # type: ignore[union-attr]
    assert not any(a.is_error for a in answers), said
    documents, contexts = answers[0::2], answers[1::2]
    assert {a.structured_content["path"] for a in documents} == {"domain/refunds.md"}  # type: ignore[index]
    assert {a.structured_content["target"] for a in contexts} == {"domain/refunds.md"}  # type: ignore[index]
    assert len({a.structured_content["body"] for a in documents}) == 1  # type: ignore[index]
    assert out.is_error and out.content[0].text.startswith(  # type: ignore[union-attr]
        "no document '..\\..\\etc\\passwd' in the knowledge repository"
    )
