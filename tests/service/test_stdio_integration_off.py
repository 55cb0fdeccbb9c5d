"""Over stdio (``briefd mcp``, I9) no server may run, so a Confluence or Jira tool called while
that product is off names the settings that turn it on, not a ``/setup`` page (A1, A2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import Settings
from tests.service.conftest import service_config
from tests.service.live import serving
from tests.service.test_mcp import run
from tests.service.test_stdio import session, stdio

JIRA_OFF = (
    "Jira is not configured: set jira.url in briefd.yaml or BRIEFD_JIRA__URL, and the account "
    "in JIRA_EMAIL / JIRA_TOKEN (README: Confluence and Jira)"
)


def test_stdio_names_the_settings_of_a_product_that_is_off(
    service_settings: Settings, tmp_path: Path
) -> None:
    async def body(client: Client) -> Any:
        return [
            await client.call_tool(name, args)
            for name, args in [
                ("jira_issue", {"key": "SHOP-42"}),
                ("confluence_search", {"query": "refund"}),
                ("compile_bundle", {"task_description": "refunds", "issue": "SHOP-42"}),
            ]
        ]

    issue, pages, bundle = session(stdio(service_settings, tmp_path, "--no-index"), "auto", body)
    assert issue.is_error and issue.content[0].text == JIRA_OFF
    assert pages.is_error and pages.content[0].text == (
        "Confluence is not configured: set confluence.url in briefd.yaml or "
        "BRIEFD_CONFLUENCE__URL, and the account in CONFLUENCE_EMAIL / CONFLUENCE_TOKEN "
        "(README: Confluence and Jira)"
    )
    assert bundle.is_error and bundle.content[0].text == (
        "issue 'SHOP-42' is a Jira key, but Jira is not configured: set jira.url in briefd.yaml "
        "or BRIEFD_JIRA__URL, and the account in JIRA_EMAIL / JIRA_TOKEN (README: Confluence "
        "and Jira), or pass the issue's text instead of its key"
    )


def test_http_mcp_also_points_at_its_setup_page(service_api: Briefd) -> None:
    async def body(client: Client) -> Any:
        return await client.call_tool("jira_issue", {"key": "SHOP-42"})

    with serving(create_app(service_api, service_config())) as base:
        issue = run(base + "/mcp", "auto", body)
    assert issue.is_error
    assert issue.content[0].text == JIRA_OFF + " (this server's /setup page shows the settings)"
