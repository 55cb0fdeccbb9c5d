"""``briefd recall``: the help text and the typer entry of the prompt-time hook. The console
script normally bypasses typer for speed (see :mod:`briefd.cli.launch`); both end in
:func:`briefd.hook.main.main`, so they behave the same."""

from __future__ import annotations

import typer

from briefd.hook.main import main as hook_main


def register(app: typer.Typer) -> None:
    app.command("recall")(recall_command)


def recall_command(
    ctx: typer.Context,
    prompt: list[str] | None = typer.Argument(
        None, help="The prompt (default: Claude Code hook JSON on stdin)."
    ),
    output: str | None = typer.Option(
        None,
        "--format",
        help="markdown (<knowledge> block; default when piped), text (default in a terminal), "
        "json, or claude-json (hookSpecificOutput).",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    session: str | None = typer.Option(
        None, "--session", help="Session id (default: the hook JSON's session_id)."
    ),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", help="Token budget (default recall.max_tokens, 1500)."
    ),
    top_k: int | None = typer.Option(
        None, "--top-k", help="Most sections (default recall.top_k, 4)."
    ),
    scopes: list[str] | None = typer.Option(
        None,
        "--scopes",
        "--scope",
        help="Scopes (repeat or comma-separate; 'all') (default recall.scopes, else the "
        "default scopes).",
    ),
    mode: str | None = typer.Option(
        None, "--mode", help="auto, bm25 or hybrid (default recall.mode, auto)."
    ),
    server: str | None = typer.Option(
        None, "--server", help="Server URL to ask first (default recall.server); off: none."
    ),
    no_server: bool = typer.Option(
        False, "--no-server", help="Answer in-process only (no server, no daemon)."
    ),
    status: bool = typer.Option(
        False, "--status", help="Show this index's recall daemon (--json for JSON)."
    ),
    stop: bool = typer.Option(False, "--stop", help="Stop this index's recall daemon."),
) -> None:
    """Prompt-time recall for agent hooks: the knowledge sections relevant to a prompt.

    Asks a running server (recall.server), else this index's local daemon, which the first
    prompt starts in the background. Fails open: on any error it prints nothing, one line on
    stderr, and exits 0.
    """
    argv: list[str] = []
    values = {
        "--format": output,
        "--session": session,
        "--max-tokens": max_tokens,
        "--top-k": top_k,
        "--scopes": ",".join(scopes) if scopes else None,
        "--mode": mode,
        "--server": server,
        "--db": ctx.obj.db,
        "--config": ctx.obj.config,
    }
    for name, value in values.items():
        if value is not None:
            argv += [name, str(value)]
    argv += ["--json"] if json_output else []
    argv += ["--no-server"] if no_server else []
    argv += ["--status"] if status else []
    argv += ["--stop"] if stop else []
    if prompt:
        argv += ["--", *prompt]
    raise typer.Exit(hook_main(argv))
