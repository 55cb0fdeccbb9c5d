"""The text block a model reads of ``search_context`` and ``get_document`` (I1), through the
real MCP client: a section whose document leaves a code fence or an HTML comment open is
closed there, so the next hit is not read as code or hidden in a comment; a section's first
line keeps its indentation; a title over several lines stays on one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import load_settings
from tests.conftest import WriteFiles
from tests.hook.test_hook_contract import LEFT_OPEN
from tests.service.conftest import service_config
from tests.service.live import serving
from tests.service.test_mcp import run

OPEN_LEFT = {
    **LEFT_OPEN,
    "domain/wallet.md": "---\ntitle: Wallet balance\n---\n    GET /v1/balance\n\nReads it.\n",
    "domain/currency.md": "---\ntitle: |\n  Currency conversion\n  # not a heading\n---\n"
    "Currency conversion uses the daily rate snapshot.\n",
}


def _texts(
    tmp_path: Path, write_files: WriteFiles, calls: list[tuple[str, dict[str, Any]]]
) -> list[str]:
    root = write_files(OPEN_LEFT)
    overrides = {"db": str(tmp_path / "index.db"), "source": str(root)}
    settings = load_settings(None, {}, {**overrides, "embeddings.enabled": False})

    async def body(client: Client) -> list[str]:
        results = [await client.call_tool(name, args) for name, args in calls]
        return [r.content[0].text for r in results]  # type: ignore[union-attr]

    with Briefd(settings, embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            texts: list[str] = run(base + "/mcp", "auto", body)
    return texts


def test_a_search_hit_left_open_is_closed_before_the_next(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    query = "ledger posting refund reconciliation payout scheduling invoice numbering currency"
    (text,) = _texts(tmp_path, write_files, [("search_context", {"query": query})])
    hits = {part.split("\n", 1)[0]: part.rstrip() for part in text.split("\n## ")[1:]}
    by_title = {head.split(". ", 1)[1]: part for head, part in hits.items()}
    assert by_title["Ledger posting"].endswith("    return settle(batch)\n```")
    assert by_title["Refund nightly"].endswith("~~~sh\nreconcile --refunds\n~~~")
    assert by_title["Payout hold"].endswith("<!-- reviewer note: payout scheduling draft\n-->")
    assert "\n\n    INV-2024-000123\n    invoice numbering\n\n" in by_title["Invoice format"]
    assert "Currency conversion # not a heading" in by_title
    assert "\n# not a heading" not in text


def test_a_document_keeps_its_first_line_and_its_title_on_one_line(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    calls = [
        ("get_document", {"doc_path": "domain/currency.md"}),
        ("get_document", {"doc_path": "domain/wallet.md"}),
        ("get_document", {"doc_path": "domain/ledger.md"}),
    ]
    currency, wallet, ledger = _texts(tmp_path, write_files, calls)
    assert currency.startswith("# Currency conversion # not a heading\npath: domain/currency.md")
    assert wallet.endswith("\n\n    GET /v1/balance\n\nReads it.")
    assert ledger.endswith("\n```python\ndef post(batch):\n    return settle(batch)\n```")
