"""``briefd serve``: index the configured source (incrementally), then serve REST, MCP, metrics,
the dashboard and the setup page with uvicorn."""

from __future__ import annotations

from pathlib import Path

import typer

from briefd.cli.output import console, errors, reported_errors
from briefd.settings import apply_tuned


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)


def serve_command(
    ctx: typer.Context,
    host: str | None = typer.Option(
        None, "--host", help="Address to bind (default 127.0.0.1; others need BRIEFD_API_TOKEN)."
    ),
    port: int | None = typer.Option(None, "--port", help="Port (default 8484)."),
    source: Path | None = typer.Option(
        None, "--source", help="Knowledge directory (default: the configured source)."
    ),
    no_index: bool = typer.Option(
        False, "--no-index", help="Serve the index as it is, without updating it first."
    ),
    tuned: Path | None = typer.Option(
        None, "--config", help="Tuned recall settings from `briefd tune` laid over the settings."
    ),
) -> None:
    """Serve MCP at /mcp, REST at /api, /metrics, the dashboard at / and /setup."""
    import uvicorn

    from briefd.api import Briefd
    from briefd.embeddings.registry import create_embedder
    from briefd.service import ServiceConfig, create_app
    from briefd.service.config import check_bind
    from briefd.service.listener import BoundedH11Protocol
    from briefd.service.metrics import CountingEmbedder, Metrics
    from briefd.sources.layout import nothing_indexed

    with reported_errors():
        settings = apply_tuned(ctx.obj.settings(source=source), tuned)
        config = ServiceConfig.from_settings(settings.serve, host=host, port=port)
        check_bind(config)
        metrics = Metrics()
        embedder = create_embedder(settings)
        counted = CountingEmbedder(embedder, metrics) if embedder is not None else None
        api = Briefd(settings, embedder=counted)
        if settings.sync.remote and not no_index:  # a git URL: clone or fetch, then reindex
            from briefd.cli.sync import startup_sync

            startup_sync(api)
        elif settings.source is not None and not no_index:
            report = api.index()
            errors.print(
                f"indexed {report.source}: {report.documents} documents, {report.chunks} "
                f"sections ({len(report.added) + len(report.changed)} changed) "
                f"in {report.seconds:.1f}s",
                markup=False,
                soft_wrap=True,
            )
            if report.documents == 0:
                errors.print(f"warning: {nothing_indexed(report, settings)}", markup=False)
        app = create_app(api, config, metrics)
    url = f"http://{config.host if ':' not in config.host else f'[{config.host}]'}:{config.port}"
    console.print(
        f"briefd serving on {url}  (dashboard {url}/, MCP {url}/mcp, setup {url}/setup)",
        markup=False,
    )
    if config.token is None:
        console.print("  no BRIEFD_API_TOKEN set: open to this machine only", markup=False)
    try:
        uvicorn.run(
            app,
            host=config.host,
            port=config.port,
            log_level="warning",
            timeout_graceful_shutdown=5,
            http=BoundedH11Protocol,
        )
    finally:
        api.close()
