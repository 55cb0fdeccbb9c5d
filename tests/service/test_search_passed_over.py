"""A search whose best hits do not fit ``max_tokens`` while smaller ones below them do (R6,
I1): what the model reads says so, so the first section shown is not taken for the best."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client

from briefd.api import Briefd
from briefd.service import create_app
from briefd.tokens import count_tokens
from tests.service.conftest import service_config
from tests.service.live import serving
from tests.service.test_mcp import run


def test_best_hits_left_out_for_smaller_ones_are_named(service_api: Briefd) -> None:
    """'partial refunds validation' at max_tokens 400 answered '## 1. Failed refunds' and
    only '(N more section(s), ranked or linked to them, left out …)': Partial refunds, the
    section that answers it, was nowhere named, and the model read a lower one as the best."""
    query = "partial refunds validation"

    async def body(client: Client) -> Any:
        return [
            await client.call_tool("search_context", {"query": query, "max_tokens": budget})
            for budget in (2000, 400)
        ]

    with serving(create_app(service_api, service_config())) as base:
        whole, small = run(base + "/mcp", "auto", body)
    ranked = [h["doc_path"] + ":" + str(h["start_line"]) for h in whole.structured_content["hits"]]
    assert ranked[:2] == ["domain/refunds.md:30", "domain/refunds.md:77"]
    shown = small.structured_content
    assert [h["heading"] for h in shown["hits"]][:1] == ["Failed refunds"]
    assert shown["note"] == (
        "the 2 best-ranked sections did not fit max_tokens=400 and are left out; the best, "
        "domain/refunds.md:30-60, has 347 tokens: ask again with a larger max_tokens, or read "
        "it with get_document('domain/refunds.md', start_line=30, scopes=['domain'])"
    )
    text = small.content[0].text  # type: ignore[union-attr]
    assert text.endswith(f"(note: {shown['note']})")
    compact = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
    assert count_tokens(compact) <= 400 and count_tokens(text) <= 400
