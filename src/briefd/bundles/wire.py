"""The wire shape of a bundle (B4, B6, B7): what REST and MCP return, and the JSON document the
``package`` and ``manifest`` modes print. Pure.

Every response names its ``schema_version`` and carries each selected section once: as the
Markdown block (``markdown``), as items with their content (``package``), or not at all
(``manifest``, metadata only). Items carry compact metadata (id, tier, reasons; in the block
each section's attribution line names its path and line range; package and manifest add the
tokens, location, title, heading path, score and the ``sha256:`` fingerprint).
Diagnostics beyond the estimator, exclusions included, only when verbose.
"""

from __future__ import annotations

import json

from briefd.bundles.model import (
    SCHEMA_VERSION,
    Bundle,
    BundleDelta,
    BundleItem,
    BundleMode,
    Diagnostics,
)


def response(bundle: Bundle, verbose: bool = False) -> dict[str, object]:
    """The JSON-ready envelope REST and MCP return (the CLI's ``--json`` is verbose)."""
    out = head(bundle.bundle_id, bundle.mode, bundle.target, bundle.diagnostics)
    out["cached"] = bundle.cached
    if bundle.recovered:  # a base was given and is unknown: this is the full bundle
        out["recovered"] = True
    if bundle.state_error:  # replicas: the shared state was unreachable (still served)
        out["state_error"] = bundle.state_error
    if bundle.warnings:  # a default scope the index lacks; a budget that fits no section
        out["warnings"] = list(bundle.warnings)
    if bundle.mode == "markdown":
        out["text"] = bundle.text
    out.update(body(bundle.mode, bundle.items, bundle.delta))
    out["diagnostics"] = diagnostics_out(bundle.diagnostics, verbose)
    return out


def head(
    bundle_id: str, mode: BundleMode, target: str | None, diag: Diagnostics
) -> dict[str, object]:
    figures = (diag.tokens, diag.budget, diag.hard_limit, diag.budget_exceeded, diag.overage)
    return opening(bundle_id, mode, target, *figures)


def opening(
    bundle_id: str,
    mode: BundleMode,
    target: str | None,
    tokens: int,
    budget: int,
    hard_limit: int,
    exceeded: bool,
    overage: int,
) -> dict[str, object]:
    """The fields every answer starts with: ids, then the budget figures."""
    out: dict[str, object] = {
        "schema_version": SCHEMA_VERSION,
        "bundle_id": bundle_id,
        "mode": mode,
    }
    if target is not None:
        out["target"] = target
    out.update(
        tokens=tokens,
        budget=budget,
        hard_limit=hard_limit,
        budget_exceeded=exceeded,
        overage=overage,
    )
    return out


def body(
    mode: BundleMode, items: tuple[BundleItem, ...], delta: BundleDelta | None
) -> dict[str, object]:
    """``items``, or for an answer against a base only the ``delta``."""
    if delta is None:
        return {"items": [item_out(i, mode) for i in items]}
    entries = [
        {"op": "reuse", "chunk_id": e.chunk_id}
        if e.item is None
        else {"op": "replace", "chunk_id": e.chunk_id, "item": item_out(e.item, mode)}
        for e in delta.entries
    ]
    return {
        "delta": {
            "base": delta.base,
            "entries": entries,
            "removed": list(delta.removed),
            "tokens_saved": delta.tokens_saved,
        }
    }


def document(bundle: Bundle) -> str:
    """The ``package`` / ``manifest`` output (what ``text`` holds, what the CLI prints): the
    answer as compact JSON, as REST and MCP send it (its figures, warnings and marks
    included, which its ``tokens`` count) but for ``cached``, which the CLI's summary says."""
    out = response(bundle)
    del out["cached"]
    return json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n"


def item_out(item: BundleItem, mode: BundleMode) -> dict[str, object]:
    """Markdown mode: id, tier and reasons (the block's attribution line has the path and
    line range); package and manifest add the tokens, location, title, heading path, score and
    fingerprint, package the content."""
    out: dict[str, object] = {
        "chunk_id": item.chunk_id,
        "tier": item.tier,
        "reasons": list(item.reasons),
    }
    if mode != "markdown":
        out.update(
            tokens=item.tokens,
            location={
                "path": item.doc_path,
                "start_line": item.start_line,
                "end_line": item.end_line,
            },
            title=item.title,
            heading_path=list(item.heading_path),
            score=item.score,
            fingerprint=item.fingerprint,
        )
    if item.truncated:
        out["truncated"] = True
    if item.superseded_by:
        out["superseded_by"] = list(item.superseded_by)
    if item.drift is not None:
        drift = item.drift
        out["drift"] = {"doc_path": item.doc_path, "commits": drift.commits, "since": drift.since}
    if mode == "package":
        out["content"] = item.content
    return out


def diagnostics_out(diag: Diagnostics, verbose: bool) -> dict[str, object]:
    """The estimator always; verbose adds the rest (budget, tokens and the limits are in the
    envelope already)."""
    if not verbose:
        return {"estimator": diag.estimator}
    return {
        "estimator": diag.estimator,
        "effective_budget": diag.effective_budget,
        "truncated": diag.truncated,
        "exclusions": [
            {
                "chunk_id": e.chunk_id,
                "doc_path": e.doc_path,
                "tier": e.tier,
                "reason": e.reason,
                "tokens": e.tokens,
            }
            for e in diag.exclusions
        ],
        "ranking_version": diag.ranking_version,
        "index_fingerprint": diag.index_fingerprint,
        "embedding_model": diag.embedding_model,
        "search_mode": diag.search_mode,
        "gate": diag.gate,
        "scopes": list(diag.scopes),
    }
