"""The service's layering (issue 12): routers are leaves that share only ``service/deps.py``, the
MCP adapter imports no router, and a proposal has one wire shape with every field of the domain's
:class:`Proposal`."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

from briefd.proposals.model import Proposal
from briefd.service.schemas import ProposalOut, proposal_out

SERVICE = Path(__file__).parents[2] / "src" / "briefd" / "service"


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports (``from a import b`` counts as a and a.b)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_no_router_imports_another_router() -> None:
    routers = sorted((SERVICE / "routes").glob("*.py"))
    assert len(routers) > 5
    for path in routers:
        others = {
            name
            for name in imported(path)
            if name.startswith("briefd.service.routes") and name != "briefd.service.routes"
        }
        assert not others, f"{path.name} imports {others}"


def test_the_mcp_adapter_and_the_state_import_no_router() -> None:
    for name in ("tools.py", "state.py", "schemas.py", "render.py", "deps.py"):
        routes = {m for m in imported(SERVICE / name) if m.startswith("briefd.service.routes")}
        assert not routes, f"{name} imports {routes}"


def test_a_proposal_has_every_field_of_the_domain_proposal() -> None:
    answer_only = {"superseded_by", "where"}  # told with a new proposal, never stored
    assert set(ProposalOut.model_fields) - answer_only == {f.name for f in fields(Proposal)}
    made = Proposal(
        id="abc123",
        branch="briefd/proposal-abc123",
        doc_path="domain/retry.md",
        description="Four",
        commit_hash="c0ffee",
        pr_url="https://example.com/pull/7",
        status="open",
        client="mcp",
        created_at="2025-01-01T00:00:00Z",
        pr_number=7,
        base_branch="main",
        base_commit="beef",
        forge_error=None,
        status_checked_at="2025-01-02T00:00:00Z",
    )
    dumped = proposal_out(made).model_dump()
    assert dumped == {f.name: getattr(made, f.name) for f in fields(Proposal)}
