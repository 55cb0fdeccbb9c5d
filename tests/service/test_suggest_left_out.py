"""What suggest_links leaves out (T5): dismissed suggestions and broken links in scopes not
requested are counted, so "no suggestions" never reads as "no broken link" while
``briefd links --check`` fails."""

from __future__ import annotations

import anyio
import httpx2
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from briefd.api import Briefd
from briefd.service import create_app
from tests.conftest import WriteFiles
from tests.service.conftest import service_config
from tests.service.live import serving

GLOSSARY = "domain/glossary.md"


def _mcp_texts(api: Briefd, calls: list[dict[str, object]]) -> list[tuple[str, object]]:
    async def main(url: str) -> list[tuple[str, object]]:
        async with (
            httpx2.AsyncClient(timeout=30) as client,
            Client(streamable_http_client(url, http_client=client)) as mcp,
        ):
            out = []
            for args in calls:
                result = await mcp.call_tool("suggest_links", args)
                text = result.content[0].text  # type: ignore[union-attr]
                out.append((text, result.structured_content))
            return out

    with serving(create_app(api, service_config(token=None))) as base:
        return anyio.run(main, base + "/mcp")


def test_no_suggestions_says_what_was_dismissed_and_what_other_scopes_hold(
    write_files: WriteFiles, api: Briefd
) -> None:
    write_files(
        {
            GLOSSARY: "# Glossary\n\nSoft declines follow [[retry-policy]].\n",
            "domain/fees.md": "# Fees\n\nSee [[glossary]].\n",
            "projects/ledger/close.md": "# Close\n\nSee [[legacy-batch]] and [[glossary]].\n",
        }
    )
    api.index()
    with TestClient(create_app(api, service_config(token=None))) as http:
        dismissed = http.post(
            "/api/links/suggestions/dismiss", json={"doc_path": GLOSSARY, "target": "retry-policy"}
        ).json()
        every = http.get("/api/links/suggestions").json()
    assert dismissed == {"suggestions": [], "total": 0, "dismissed": 1, "dismissed_broken": 1}
    assert every == {
        "suggestions": [],
        "total": 0,
        "dismissed": 1,
        "dismissed_broken": 1,
        "other_scopes": 1,
    }
    (one, _), (default, out), (ledger, _) = _mcp_texts(
        api, [{"doc_path": GLOSSARY}, {}, {"scopes": ["projects/ledger"]}]
    )
    assert one == (
        "No link suggestions listed; left out: 1 dismissed suggestion (a broken link, which "
        "`briefd links --check` still fails on)."
    )
    assert default == (
        "No link suggestions listed; left out: 1 dismissed suggestion (a broken link, which "
        "`briefd links --check` still fails on); 1 broken link in or into scopes not requested "
        '(call suggest_links with scopes=["all"] to list them).'
    )
    assert out == every
    # the ledger's own broken link is listed; the glossary's is in a scope not requested
    assert ledger.splitlines() == [
        "- projects/ledger/close.md:3 broken-link: no document matches 'legacy-batch'; fix the "
        "target or remove the link",
        "[left out: 1 broken link in or into scopes not requested (call suggest_links with "
        'scopes=["all"] to list them)]',
    ]


def test_nothing_left_out_still_says_every_mention_is_linked(
    write_files: WriteFiles, api: Briefd
) -> None:
    write_files(
        {
            GLOSSARY: "# Glossary\n\nSee [[fees]].\n",
            "domain/fees.md": "# Fees\n\nSee [[glossary]].\n",
        }
    )
    api.index()
    [(text, out)] = _mcp_texts(api, [{"scopes": ["all"]}])
    assert text == "No link suggestions: every mention is linked and no link is broken."
    assert out == {"suggestions": [], "total": 0}
