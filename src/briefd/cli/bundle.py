"""``briefd bundle`` and ``briefd context``: compile the context for a task, or around one
document, exactly as MCP and REST return it."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import typer
from typer._click.exceptions import BadParameter, UsageError  # typer's own click (pinned)

from briefd.api import Briefd
from briefd.bundles import Bundle, BundleRequest
from briefd.bundles.model import (
    MAX_HARD_LIMIT,
    MAX_TOKENS,
    MIN_TOKENS,
    MODE_ALIASES,
    MODES,
    BundleMode,
)
from briefd.bundles.wire import response
from briefd.cli.output import (
    completes,
    errors,
    fail,
    print_json,
    printable,
    reported_errors,
    utf8_text,
)
from briefd.cli.search import BUILDING, code_paths, knowledge_path, split_scopes
from briefd.cli.tuned import tuned_settings
from briefd.errors import IndexNotFoundError
from briefd.store.runlock import index_run_held
from briefd.text import counted

BUDGET = typer.Option(
    2000,
    "--max-tokens",
    min=MIN_TOKENS,
    max=MAX_TOKENS,
    help="Soft token budget (cl100k_base).",
)
HARD_LIMIT = typer.Option(
    None,
    "--hard-limit",
    min=MIN_TOKENS,
    max=MAX_HARD_LIMIT,
    help="Ceiling for mandatory content (default: 4 × --max-tokens).",
)
SCOPES = typer.Option(
    None, "--scopes", "--scope", help="Scopes to draw from (repeat or comma-separate; 'all')."
)
TAGS = typer.Option(
    None, "--tags", "--tag", help="Only documents with any of these tags for ranked content."
)
MODE = typer.Option(
    "markdown",
    "--mode",
    "--format",
    help="markdown (one attributed block), package (JSON: each section's content, location, "
    "sha256 fingerprint) or manifest (JSON metadata).",
    autocompletion=completes(MODES),
)
BASE = typer.Option(
    None, "--base", help="bundle_id you already hold: print only what changed since."
)
JSON_OUTPUT = typer.Option(
    False, "--json", help="Print the whole response (items, diagnostics, exclusions) as JSON."
)
TUNED = typer.Option(
    None, "--config", help="Tuned recall settings from `briefd tune` laid over the settings."
)


def register(app: typer.Typer) -> None:
    app.command("bundle")(bundle_command)
    app.command("context")(context_command)


def bundle_command(
    ctx: typer.Context,
    task: str | None = typer.Argument(
        None, help="The task, in your own words (optional with --issue).", callback=utf8_text
    ),
    max_tokens: int = BUDGET,
    hard_limit: int | None = HARD_LIMIT,
    scopes: list[str] | None = SCOPES,
    paths: list[str] | None = typer.Option(
        None,
        "--paths",
        "--path",
        help="Code paths the task touches, from the repository's root (an absolute path in "
        "this repository is made relative); documents whose refs cover them lead (repeat or "
        "comma-separate).",
    ),
    tags: list[str] | None = TAGS,
    mode: str = MODE,
    base: str | None = BASE,
    issue: str | None = typer.Option(
        None,
        "--issue",
        help="A Jira key or its browse URL (fetched live when Jira is configured) or the "
        "issue's text: heads the bundle and joins the query.",
        callback=utf8_text,
    ),
    json_output: bool = JSON_OUTPUT,
    tuned: Path | None = TUNED,
) -> None:
    """Compile a token-budgeted context bundle for a task (B1–B8).

    The bundle goes to stdout byte for byte; a one-line summary goes to stderr."""
    if task is None and issue is None and paths is None:  # as a missing argument: exit 2
        raise UsageError(
            "Missing argument 'task': describe the task, or pass --issue or --paths", ctx
        )
    with reported_errors():  # a blank task is the bundle's own error, exit 1 (as search's)
        request = _request(task or "", max_tokens, hard_limit, scopes, tags, mode, base)
        request = replace(request, paths=code_paths(paths), issue=issue)
        bundle = _compile(ctx, request, tuned)
    _print(bundle, json_output)


def context_command(
    ctx: typer.Context,
    doc_path: str = typer.Argument(
        ...,
        help="The document, e.g. domain/refunds.md (or the file's own path).",
        callback=utf8_text,
    ),
    task: str = typer.Option(
        "", "--task", help="What you do with it (default: its title).", callback=utf8_text
    ),
    max_tokens: int = BUDGET,
    hard_limit: int | None = HARD_LIMIT,
    scopes: list[str] | None = SCOPES,
    tags: list[str] | None = TAGS,
    mode: str = MODE,
    base: str | None = BASE,
    json_output: bool = JSON_OUTPUT,
    tuned: Path | None = TUNED,
) -> None:
    """The context around one document (B8): the document whole (up to --hard-limit), its
    front-matter relations (depends_on, parent…), its links and backlinks and one more hop,
    then text matches.

    Scopes as for bundles: a project document needs its scope (or 'all')."""
    with reported_errors():
        request = _request(task, max_tokens, hard_limit, scopes, tags, mode, base)
        target = knowledge_path(doc_path, ctx.obj.settings().source)
        bundle = _compile(ctx, replace(request, target=target), tuned)
    _print(bundle, json_output)


def _request(
    task: str,
    max_tokens: int,
    hard_limit: int | None,
    scopes: list[str] | None,
    tags: list[str] | None,
    mode: str,
    base: str | None,
) -> BundleRequest:
    """The options both commands share, parsed."""
    return BundleRequest(
        task=task,
        max_tokens=max_tokens,
        scopes=split_scopes(scopes),
        mode=_mode(mode),
        base=base,
        hard_limit=hard_limit,
        tags=split_scopes(tags) or (),
    )


def _mode(value: str) -> BundleMode:
    mode = MODE_ALIASES.get(value, value)
    for known in MODES:
        if mode == known:
            return known
    raise BadParameter(f"'{value}'; use {', '.join(MODES)}", param_hint="'--mode'")


def _compile(ctx: typer.Context, request: BundleRequest, tuned: Path | None) -> Bundle:
    """The bundle; an index still being built (`briefd demo` prints its bundle command before
    its first index is done) is said to be, not to be built with `briefd index`."""
    with Briefd(tuned_settings(ctx.obj.settings(), tuned, ctx.info_name)) as api:
        try:
            return api.compile_bundle(request)
        except IndexNotFoundError:
            if index_run_held(api.settings.db):
                fail(BUILDING)
            raise


def _print(bundle: Bundle, json_output: bool) -> None:
    from briefd.bundles.render import drift_notes  # Markdown parsing: once there is a bundle

    if json_output:
        print_json(response(bundle, verbose=True))
        return
    sys.stdout.write(bundle.text)
    if bundle.text and not bundle.text.endswith("\n"):
        sys.stdout.write("\n")
    errors.print(summary(bundle), markup=False, soft_wrap=True)
    if bundle.mode == "markdown":  # package and manifest items carry their drift
        for note in drift_notes(bundle.items):
            errors.print(note, markup=False, soft_wrap=True)
    for warning in bundle.warnings:
        errors.print(f"warning: {printable(warning)}", markup=False, soft_wrap=True)


def _sections(bundle: Bundle) -> str:
    """The knowledge's sections counted, after the tracker issue when one heads the bundle
    ("the issue and 0 sections": its one item is not a section found)."""
    sections = len(bundle.knowledge)
    said = counted(sections, "section")
    return f"the issue and {said}" if sections < len(bundle.items) else said


def summary(bundle: Bundle) -> str:
    d = bundle.diagnostics
    parts = [
        f"bundle {bundle.bundle_id}",
        _sections(bundle),
        f"{d.tokens}/{d.budget} tokens ({d.estimator})",
        f"{len(d.exclusions)} excluded",
        "cached" if bundle.cached else "compiled",
    ]
    if d.budget_exceeded:
        parts.append(f"budget exceeded: {d.overage} tokens over the hard limit {d.hard_limit}")
    if d.truncated:
        parts.append("truncated")
    if bundle.recovered:
        parts.append("base unknown or compiled for another request: full bundle (recovered)")
    elif bundle.delta is not None:
        replaced = sum(1 for e in bundle.delta.entries if e.item is not None)
        parts.append(
            f"delta from {bundle.delta.base}: {len(bundle.delta.entries) - replaced} reused, "
            f"{replaced} replaced, {len(bundle.delta.removed)} removed, "
            f"{counted(bundle.delta.tokens_saved, 'token')} saved"
        )
    if d.gate == "empty":
        scopes = ", ".join(d.scopes)
        parts.append(f"task looks unrelated to the knowledge in scopes {scopes} (relevance gate)")
    return " · ".join(parts)
