"""``briefd bundle``: compile the context for a task, exactly as MCP and REST return it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from briefd.api import Briefd
from briefd.bundles import Bundle, BundleRequest
from briefd.bundles.model import FORMATS
from briefd.cli.output import errors, reported_errors
from briefd.cli.search import split_scopes
from briefd.errors import QueryError
from briefd.settings import apply_tuned


def register(app: typer.Typer) -> None:
    app.command("bundle")(bundle_command)


def bundle_command(
    ctx: typer.Context,
    task: str = typer.Argument("", help="The task, in your own words (optional with --issue)."),
    max_tokens: int = typer.Option(2000, "--max-tokens", help="Token budget (cl100k_base)."),
    scopes: list[str] | None = typer.Option(
        None, "--scopes", "--scope", help="Scopes to draw from (repeat or comma-separate; 'all')."
    ),
    paths: list[str] | None = typer.Option(
        None,
        "--paths",
        "--path",
        help="Code paths the task touches; documents whose refs cover "
        "them lead (repeat or comma-separate).",
    ),
    output_format: str = typer.Option(
        "markdown", "--format", help="markdown (default), json or manifest."
    ),
    base: str | None = typer.Option(
        None, "--base", help="bundle_id you already hold: print only what changed since."
    ),
    issue: str | None = typer.Option(
        None,
        "--issue",
        help="A Jira key (fetched live when Jira is configured) or the issue's text: heads the "
        "bundle and joins the query.",
    ),
    json_output: bool = typer.Option(
        False, "--json", help="Print the whole response (items, diagnostics) as JSON."
    ),
    tuned: Path | None = typer.Option(
        None, "--config", help="Tuned recall settings from `briefd tune` laid over the settings."
    ),
) -> None:
    """Compile a token-budgeted context bundle for a task (B1–B5).

    The bundle goes to stdout byte for byte; a one-line summary goes to stderr."""
    with reported_errors():
        if output_format not in FORMATS:
            raise QueryError(f"unknown --format '{output_format}'; use {', '.join(FORMATS)}")
        request = BundleRequest(
            task=task,
            max_tokens=max_tokens,
            scopes=split_scopes(scopes),
            paths=split_scopes(paths) or (),
            format=output_format,
            base=base,
            issue=issue,
        )
        with Briefd(apply_tuned(ctx.obj.settings(), tuned)) as api:
            bundle = api.compile_bundle(request)
    if json_output:
        sys.stdout.write(json.dumps(bundle.to_dict(), ensure_ascii=False, indent=2) + "\n")
        return
    sys.stdout.write(bundle.text)
    if bundle.text and not bundle.text.endswith("\n"):
        sys.stdout.write("\n")
    errors.print(summary(bundle), markup=False, soft_wrap=True)


def summary(bundle: Bundle) -> str:
    d = bundle.diagnostics
    parts = [
        f"bundle {bundle.bundle_id}",
        f"{len(bundle.items)} sections",
        f"{d.tokens}/{d.budget} tokens ({d.estimator})",
        f"{len(d.exclusions)} excluded",
        "cached" if bundle.cached else "compiled",
    ]
    if d.truncated:
        parts.append("truncated")
    if bundle.recovered:
        parts.append("base unknown: full bundle (recovered)")
    elif bundle.delta is not None:
        replaced = sum(1 for e in bundle.delta.entries if e.item is not None)
        parts.append(
            f"delta from {bundle.delta.base}: {len(bundle.delta.entries) - replaced} reused, "
            f"{replaced} replaced, {len(bundle.delta.removed)} removed, "
            f"{bundle.delta.tokens_saved} tokens saved"
        )
    if d.gate == "empty":
        parts.append("task looks unrelated to this knowledge (relevance gate)")
    return " · ".join(parts)
