"""``briefd init``: write the recall hook and the MCP server entry into a project's coding-agent
config files (see :mod:`briefd.hook.clients`), showing the diff first. The MCP entry is either
the server's URL (``--transport http``, ``--url`` for a shared team server) or the ``briefd
mcp`` command the client spawns (``--transport stdio``); without ``--transport`` an existing
entry keeps its own. A recall hook the team's ``.claude/settings.json`` already registers is
not written a second time."""

from __future__ import annotations

import dataclasses
import difflib
import os
import shlex
import socket
import sys
import urllib.parse
from dataclasses import dataclass, replace
from pathlib import Path

import typer
from typer._click.exceptions import BadParameter, UsageError  # typer's own click (pinned)

from briefd.cli.init_git import report_not_ignored, report_stdio_shared
from briefd.cli.installation import uv_cache_prefix
from briefd.cli.output import completes, console, fail, http_url, one_of, reported_errors
from briefd.cli.project_files import check_writable, read_text, write_all
from briefd.errors import ConfigError
from briefd.hook import discover
from briefd.hook.client import in_the_clear, loopback, split_url
from briefd.hook.clients import (
    CLAUDE_LOCAL,
    CLAUDE_SHARED,
    CLIENTS,
    CODEX_HOOKS,
    CODEX_STARTUP_S,
    LOOPBACK,
    TOKEN_ENV,
    Kept,
    Server,
    codex_keys,
    codex_startup,
    finds_project,
    registered_recall,
    runs_here,
    targets,
    user_claude_settings,
)
from briefd.project import project_dir
from briefd.settings import (
    CONFIG_FILE,
    LOCAL_CONFIG,
    Settings,
    config_candidates,
    load_settings,
)

CODEX_NO_TOKEN = (
    "Codex: .codex/config.toml sends no token (no BRIEFD_API_TOKEN is set here, and Codex "
    "refuses to start a server whose bearer_token_env_var is unset); once this machine's "
    "server has one, rerun init with it set."
)
NOTES = {
    "codex": "Codex: hooks are on by default in current releases (`[features] hooks`; older "
    "ones need `codex_hooks = true` in config.toml); Codex reads .codex/ only in trusted "
    "projects.",
    "cursor": "Cursor: MCP server only — its beforeSubmitPrompt hook can allow or block a prompt "
    "but cannot add context. With third-party hooks on, Cursor also runs the Claude Code hook; "
    "briefd recall answers it with nothing.",
    "vscode": "VS Code: MCP server only — its UserPromptSubmit hook takes the common output "
    "format only and cannot add context. VS Code also runs the Claude Code hooks in "
    ".claude/settings*.json; briefd recall answers those calls with nothing, so nothing "
    "runs twice.",
}


def _each_client(values: list[str]) -> list[str]:
    """``--client``'s callback: each value one of the clients or ``all`` (a usage error,
    exit 2, otherwise), repeated or comma-separated (``cursor,codex``) as list options are."""
    check = one_of((*CLIENTS, "all"))
    names = [name.strip() for value in values for name in value.split(",")]
    return [name for value in names if (name := check(value)) is not None]


def _a_directory(project: Path) -> Path:
    """``--project``'s callback: a path that is no directory is a usage error, exit 2, before
    anything is read or written (a typo would otherwise create a stray tree)."""
    if not project.is_dir():
        raise BadParameter(f"{project} is not a directory; pass the project's checkout")
    return project


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)


def hook_command(
    db: Path | None = None, server: str | None = None, config: Path | None = None
) -> str:
    """The recall command line for this installation. On POSIX systems this Python without
    ``site`` running the hook's script file (:mod:`briefd.hook.script`: ~2 ms less per prompt
    than the console script); elsewhere the console script next to this Python (no shell shim
    in between), or ``python -m briefd recall`` when there is none. ``db`` and ``config``: the
    index and settings file named to init (``--db``, ``--config``), which the hook reads too,
    as the stdio entry beside it does (:func:`stdio_command`)."""
    if os.name == "posix":
        from briefd.hook import script

        parts = [sys.executable, "-S", "-P", str(Path(script.__file__).resolve())]
    else:
        console = Path(sys.executable).with_name("briefd")
        launch = [str(console)] if console.is_file() else [sys.executable, "-m", "briefd"]
        parts = [*launch, "recall"]
    if db is not None:
        parts += ["--db", str(db.resolve())]
    if config is not None:
        parts += ["--config", str(config.resolve())]
    if server is not None:
        parts += ["--server", server]
    return shlex.join(parts)


def recall_server(
    server: Server, project: Path, given: bool = False, named: Path | None = None
) -> str | None:
    """The server the hook should name: the one the MCP entry points at, unless the hook
    finds it by itself — the one the settings file it reads places (``named``, the one
    ``--config`` names, else the project's; ``recall.server``, else
    ``serve.host``/``serve.port``, as :func:`briefd.hook.discover.server_url` reads them; the
    default one when it places none), so that a new port there moves both. The default one
    kept while the file places another port is named: the hook would ask that port. With
    ``recall.server`` off the default one is not named (the user said to ask none). A spawned
    ``briefd mcp`` leaves the hook to find its own. A server on another machine the user
    ``given`` (``--url``) is named even when the project's file places it: the hook does not
    trust a project's file with a server off this machine (:func:`briefd.hook.main.untrusted`)."""
    if isinstance(server, tuple):
        return None
    root = server.removesuffix("/mcp")
    if given and not loopback(split_url(root)[1]):
        return root
    config = named or project_config(project)
    found = discover.server_url({}, discover.read_config(str(config) if config else None))
    if root == found or (found is None and root == discover.DEFAULT_SERVER):
        return None
    return root


def project_home(project: Path) -> Path:
    """The folder with the project's briefd files that the hook and the CLI find from
    ``project`` (:func:`briefd.project.project_dir`): ``project`` itself, or from a subfolder
    of a git work tree the nearest folder above with a ``briefd.yaml``, ``.briefd/briefd.yaml``
    or ``.briefd/briefd.db`` — so the MCP entry init writes there reaches the server and index
    the hook it writes beside it asks."""
    if os.environ.get("BRIEFD_CONFIG"):  # read as named (project_settings), as before
        return project
    found = project_dir(os.environ, str(project), main_tree=False)
    return Path(found) if found is not None else project


def project_config(project: Path) -> Path | None:
    """The project's own settings file: ``briefd.yaml``, else ``.briefd/briefd.yaml`` (as
    ``briefd.settings.config_candidates`` looks in a working directory), in the project's
    folder (:func:`project_home`)."""
    home = project_home(project)
    for name in (CONFIG_FILE, LOCAL_CONFIG):
        if (home / name).is_file():
            return home / name
    return None


PROJECT_INDEX = Path(".briefd") / "briefd.db"  # a project's own index, without a settings file


def project_settings(ctx: typer.Context, project: Path) -> Settings:
    """The settings ``--config`` or ``$BRIEFD_CONFIG`` name, else the project's own
    (:func:`project_config`; not the one of the directory init runs from), else those of the
    directory init runs from — with the project's index: its own ``.briefd/briefd.db`` when
    it has one, the default index in the project when no file sets one. The project is the
    folder the hook finds from ``project`` (:func:`project_home`)."""
    named = ctx.obj.config is not None or bool(os.environ.get("BRIEFD_CONFIG"))
    own = None if named else project_config(project)
    project = project_home(project)
    if own is not None:
        return load_settings(own, overrides={"db": ctx.obj.db}, project=project, found=True)
    # no settings file in the project: this folder's (or the user's), as before
    settings = load_settings(ctx.obj.config, overrides={"db": ctx.obj.db}, project=Path())
    found = any(path.is_file() for path in config_candidates(os.environ))
    if not (named or found or ctx.obj.db or settings.db.is_absolute()):  # the default index,
        settings = dataclasses.replace(settings, db=project / settings.db)  # the project's
    elif not (named or ctx.obj.db) and (project / PROJECT_INDEX).is_file():
        # run from another repository: the project's own index, not that repository's
        settings = dataclasses.replace(settings, db=(project / PROJECT_INDEX).resolve())
    return settings


def stdio_command(settings: Settings, config: Path | None, project: Path) -> tuple[str, ...]:
    """``briefd mcp`` for this installation, with absolute paths to the settings file (given,
    or the project's own) or else to the index, so it works from any directory. The project's
    own settings file comes with the index it places: ``--config`` alone leaves the default
    index (``.briefd/briefd.db``) in the folder the client spawns ``briefd mcp`` in, which is
    the project for some clients, a subfolder, the home folder or ``/`` for others — a second
    index built there from the source, or none at all. A file named with ``--config`` is
    named as it is (a shared one places the index where each client runs it)."""
    script = Path(sys.executable).with_name("briefd")
    parts = [str(script)] if script.is_file() else [sys.executable, "-m", "briefd"]
    above = config is None and project_home(project).resolve() != project.resolve()
    own = config is None and not os.environ.get("BRIEFD_CONFIG")  # the settings init read
    config = config or project_config(project)
    if config is not None:
        if own or above:
            parts += ["--db", str(settings.db.resolve())]
        parts += ["--config", str(config.resolve())]
    else:
        parts += ["--db", str(settings.db.resolve())]
    return (*parts, "mcp")


def server_url(url: str) -> str:
    """A shared server's MCP endpoint: ``https://briefd.example.com`` gains its ``/mcp``."""
    url = url.rstrip("/")
    return url if url.endswith("/mcp") else url + "/mcp"


def mcp_url(settings: Settings) -> str:
    """The local server's MCP endpoint from ``serve.host``/``port``: any-interface binds are
    reached on 127.0.0.1, and an IPv6 address goes in brackets (``http://[::1]:8484/mcp``)."""
    serve = {"host": settings.serve.host, "port": settings.serve.port}
    return discover.local_server({}, {"serve": serve}) + "/mcp"  # where the hook looks too


def init_command(
    ctx: typer.Context,
    client: list[str] = typer.Option(
        ["claude-code"],
        "--client",
        help="claude-code, cursor, codex, vscode or all; repeat it or comma-separate for several.",
        callback=_each_client,
        autocompletion=completes((*CLIENTS, "all")),
    ),
    project: Path = typer.Option(
        Path(), "--project", help="The project directory.", callback=_a_directory
    ),
    transport: str | None = typer.Option(
        None,
        "--transport",
        help="http: the client connects to a running server; stdio: it spawns `briefd mcp`. "
        "Default: an existing briefd entry keeps its transport, a new one is http.",
        callback=one_of(("http", "stdio")),
        autocompletion=completes(("http", "stdio")),
    ),
    url: str | None = typer.Option(
        None,
        "--url",
        help="The server's URL with --transport http (default: serve.host/port).",
        callback=http_url,
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Write without asking."),
) -> None:
    """Write the recall hook and the MCP server entry into a project's agent config files."""
    if transport == "stdio" and url is not None:
        raise UsageError("--url names a server for --transport http; stdio spawns briefd", ctx)
    with reported_errors():
        chosen = _chosen(client)
        settings = project_settings(ctx, project)
        server = _server(settings, ctx, project, transport or "http", url)
        shared = _shared_hook(project) if "claude-code" in chosen else None
        wiring = Wiring(
            _hook(ctx, recall_server(server, project, url is not None, ctx.obj.config)),
            server,
            replace=url is not None or transport == "stdio",
            keep_stdio=transport is None and url is None,
            shared_hook=shared is not None,
            token=bool(os.environ.get(TOKEN_ENV, "").strip()),
            startup=codex_startup(settings.serve.index_wait_seconds),
        )
        wiring, changes, kept = _settled(ctx, settings, project, chosen, wiring)
    _report_kept(project, kept, server)
    if shared is not None:
        _report_shared_hook(project, changes, shared)
    if not changes:
        console.print("Everything is already configured; nothing to change.", markup=False)
    else:
        for path, old, new in changes:
            _show_diff(project, path, old, new)
        _ask(yes)
        with reported_errors():
            write_all([(project / path, new) for path, _, new in changes])
        for path, _, new in changes:
            verb = "removed" if new is None else "wrote"
            console.print(f"{verb} {project / path}", markup=False)
    rerun = _stdio_rerun(ctx, client, project)
    _report_after(project, settings, chosen, wiring, kept, (url, rerun))


def _ask(yes: bool) -> None:
    """Go on when --yes was given or the user answers yes; with no terminal to ask on (a CI
    job, a script, an agent's shell) the refusal is an error on stderr, not a line of stdout."""
    if yes:
        return
    if not sys.stdin.isatty():
        fail(
            "nothing written: init asks before it writes, and stdin is not a terminal to ask "
            "on; pass --yes to write without asking"
        )
    if not typer.confirm("Write these changes?"):
        console.print("Nothing written (pass --yes to write without asking).", markup=False)
        raise typer.Exit(1)


def _stdio_rerun(ctx: typer.Context, client: list[str], project: Path) -> str:
    """`briefd init --transport stdio` for this run's clients, project and global options, to
    paste where it ran (a plain one there would write Claude Code's files in that folder)."""
    words = ["briefd"]
    for name, value in (("--config", ctx.obj.config), ("--db", ctx.obj.db)):
        if value is not None:
            words += [name, str(value)]
    words += ["init", "--transport", "stdio"]
    if client not in ([], ["claude-code"]):  # the default: no --client
        for name in client:
            words += ["--client", name]
    if project.resolve() != Path.cwd().resolve():
        words += ["--project", str(project)]
    return shlex.join(words)


def _report_after(
    project: Path,
    settings: Settings,
    chosen: tuple[str, ...],
    wiring: Wiring,
    kept: list[tuple[str, Kept]],
    asked: tuple[str | None, str],
) -> None:
    """What the user should know about what init wrote (or left): notes, then each client's.
    ``asked``: the --url given, and the command line that writes stdio entries instead."""
    url, rerun = asked
    if "claude-code" in chosen and not wiring.shared_hook:
        report_not_ignored(project, CLAUDE_LOCAL)
    if "codex" in chosen:
        report_not_ignored(project, CODEX_HOOKS)
    _report_ephemeral(chosen, wiring)
    if isinstance(wiring.server, tuple):  # stdio: the client spawns `briefd mcp`
        report_stdio_shared(project, chosen, wiring.server, kept)
        _report_nothing_to_serve(settings)
    elif url is None and len(kept) < len(chosen):  # a client names this machine's server
        _report_no_server(wiring.server, rerun)
    elif url is not None:
        _report_in_the_clear(wiring.server)
    for name in chosen:
        if name in NOTES:
            console.print(NOTES[name], markup=False)
    if "codex" in chosen and _codex_tokenless(wiring, kept):
        console.print(CODEX_NO_TOKEN, markup=False)


def _codex_tokenless(wiring: Wiring, kept: list[tuple[str, Kept]]) -> bool:
    """Whether the Codex entry init wrote for this machine's server names no token."""
    if not isinstance(wiring.server, str) or any(p == ".codex/config.toml" for p, _ in kept):
        return False
    return "bearer_token_env_var" not in codex_keys(wiring.server, wiring.token)[0]


def _report_ephemeral(chosen: tuple[str, ...], wiring: Wiring) -> None:
    """``uvx --from … briefd init`` (as README's ``uvx … briefd demo``) runs from an environment
    in uv's cache, which ``uv cache clean`` (or ``prune``) deletes: every hook and spawned
    ``briefd mcp`` init writes names its Python, and each prompt then fails."""
    writes_path = any(c in ("claude-code", "codex") for c in chosen) or isinstance(
        wiring.server, tuple
    )
    prefix = uv_cache_prefix()
    if not writes_path or prefix is None:
        return
    console.print(
        f"note: this briefd runs from uv's cache ({prefix}), which `uv cache clean` deletes, and "
        "the hook and any stdio entry name its Python; install briefd to keep it (`uv tool "
        "install` or `pipx install`), then rerun init from there",
        markup=False,
        soft_wrap=True,
    )


def _report_nothing_to_serve(settings: Settings) -> None:
    """The spawned `briefd mcp` reads the project's index: with none there yet and no source
    to build it from, it stops at start, and only the client's MCP log says why."""
    if settings.source is not None or settings.sync.remote or settings.db.is_file():
        return
    console.print(
        f"note: {settings.db} holds no index yet and no source is configured, so the client's "
        f"`briefd mcp` stops at start; build it with `briefd --db {settings.db} index --source "
        "DIR`, or set `source:` in briefd.yaml",
        markup=False,
        soft_wrap=True,
    )


def _report_in_the_clear(url: str) -> None:
    """A team server named by a plain ``http://`` URL on another machine: the hook never sends
    the token there (:func:`briefd.hook.client.in_the_clear`), so its prompts would get nothing
    from it, with only the hook's stderr saying why."""
    scheme, host, port, _ = split_url(url.removesuffix("/mcp"))
    if scheme != "http" or loopback(host):
        return
    said = in_the_clear(url.removesuffix("/mcp"), host, port)
    console.print(f"note: the prompt hook gets nothing from this server: {said}", markup=False)


def _report_no_server(url: str, rerun: str) -> None:
    """An http entry for this machine's own server: with nothing listening there now, the
    client only says it failed to connect, so init says what to run (a team server named with
    ``--url`` is not asked: it may be out of reach from here and still be right)."""
    where = urllib.parse.urlsplit(url)
    if where.hostname not in LOOPBACK or where.port is None:
        return
    try:
        with socket.create_connection((where.hostname, where.port), timeout=0.5):
            return
    except OSError:
        pass
    console.print(
        f"note: nothing answers at {url} now; the client connects once `briefd serve` runs "
        f"(in another terminal, or as a service), or run `{rerun}` and the client starts "
        "`briefd mcp` itself",
        markup=False,
        soft_wrap=True,
    )


_HTTP_FOLLOWED = (
    "a client without a briefd entry gets one at {server} too, like the kept one (the hook "
    "asks it too); pass --url to choose the server"
)
_STDIO_FOLLOWED = (
    "a client without a briefd entry gets one over stdio too, like the kept ones (no server "
    "needs to run); pass --transport http for the server's URL"
)


@dataclass(frozen=True, slots=True)
class Wiring:
    """What init writes and what of the user's it keeps (see
    :func:`briefd.hook.clients.targets`): the recall hook's command line, the MCP server;
    ``replace``: the user named the server (``--url``, ``--transport stdio``); ``keep_stdio``:
    they chose no transport, so an entry the client spawns stays; ``shared_hook``: the team's
    ``.claude/settings.json`` registers briefd's recall hook."""

    hook: str
    server: Server
    replace: bool
    keep_stdio: bool
    shared_hook: bool
    token: bool = True
    startup: int = CODEX_STARTUP_S  # a new Codex stdio entry's startup_timeout_sec


def _settled(
    ctx: typer.Context,
    settings: Settings,
    project: Path,
    chosen: tuple[str, ...],
    wiring: Wiring,
) -> tuple[Wiring, list[Change], list[tuple[str, Kept]]]:
    """The changes once the user's kept entries are followed: MCP on the user's own server
    (a team's, in a committed ``.mcp.json``) means the hook asks it too, and so do the other
    clients' new entries — one on this machine's default port would point at a server
    nobody runs; kept stdio entries (no transport asked) mean new ones are stdio as well —
    an http entry would point at a server nobody runs."""
    changes, kept = _changes(project, chosen, wiring)
    theirs = {entry.server for _, entry in kept if entry.transport == "http"}
    if len(theirs) == 1:
        url = theirs.pop()
        hook = _hook(ctx, recall_server(url, project, named=ctx.obj.config))
        wiring = replace(wiring, server=url, hook=hook)
        followed, other = _changes(project, chosen, wiring)
        mine = {path for path, _ in kept}  # the kept files stay byte for byte as they are
        changes = [change for change in followed if change[0] not in mine]
        if len(kept) + len(other) < len(chosen):  # a client's entry follows the kept one
            console.print(_HTTP_FOLLOWED.format(server=url), markup=False)
    elif wiring.keep_stdio and any(entry.transport == "stdio" for _, entry in kept):
        had = len(kept)
        server = _server(settings, ctx, project, "stdio", None)
        wiring = replace(wiring, server=server, hook=_hook(ctx, None))
        changes, kept = _changes(project, chosen, wiring)  # gone commands are rewritten
        if had < len(chosen):  # a client had no entry
            console.print(_STDIO_FOLLOWED, markup=False)
    return wiring, changes, kept


def _hook(ctx: typer.Context, server: str | None) -> str:
    """The hook line naming the index and settings file named to init, and ``server``."""
    return hook_command(ctx.obj.db, server, ctx.obj.config)


def _chosen(client: list[str]) -> tuple[str, ...]:
    """The clients named (``--client`` given several times: each of them, in
    :data:`CLIENTS`' order; ``all``: every one)."""
    return CLIENTS if "all" in client else tuple(c for c in CLIENTS if c in client)


def _shared_hook(project: Path) -> Path | None:
    """The settings file that registers briefd's recall hook for this project already (read,
    never written): the team's ``.claude/settings.json``, or the user's own
    ``~/.claude/settings.json`` when its hook finds each project's index (no ``--db`` or
    ``--config``: Claude Code runs it in every project, and a second one would inject twice)."""
    for path, everywhere in ((project / CLAUDE_SHARED, False), (user_claude_settings(), True)):
        try:
            command = registered_recall(read_text(path))
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
        if command is None or (everywhere and not finds_project(command)):
            continue
        if not runs_here(command):  # a teammate's paths: it fails here on every prompt
            console.print(
                f"{path}: registers briefd's recall hook as `{command}`, whose program this "
                f"machine does not have; init writes this machine's own into "
                f"{project / CLAUDE_LOCAL} (the shared one fails here until the team registers "
                "one every machine can run)",
                markup=False,
            )
            continue
        return path
    return None


def _server(
    settings: Settings, ctx: typer.Context, project: Path, transport: str, url: str | None
) -> Server:
    if transport == "stdio":
        return stdio_command(settings, ctx.obj.config, project)
    return server_url(url) if url is not None else mcp_url(settings)


Change = tuple[str, str | None, str | None]  # path in the project, old text, new text


def _changes(
    project: Path, clients: tuple[str, ...], wiring: Wiring
) -> tuple[list[Change], list[tuple[str, Kept]]]:
    """The files to change, and the user's own server entries kept (path, entry)."""
    out, kept = [], []
    for name in clients:
        w = wiring
        found = targets(
            name, w.hook, w.server, w.replace, w.keep_stdio, w.shared_hook, w.token, w.startup
        )
        for target in found:
            path = project / target.path
            old = read_text(path)
            try:
                new = target.update(old)
                theirs = target.kept(old)
            except ConfigError as exc:
                raise ConfigError(f"{path}: {exc}") from None
            if new != old:
                check_writable(path)
                out.append((target.path, old, new))
            if theirs is not None:
                kept.append((target.path, theirs))
    return out, kept


def _report_kept(project: Path, kept: list[tuple[str, Kept]], server: Server) -> None:
    for path, entry in kept:
        if entry.transport == "stdio":
            line = (
                f"{project / path}: kept its briefd entry over stdio ({entry.server}); pass "
                "--transport http to switch it to the server's URL, --transport stdio to "
                "rewrite it"
            )
        else:
            line = (
                f"{project / path}: kept its briefd server {entry.server} (init would write "
                f"{server}); pass --url to choose the server"
            )
        console.print(line, markup=False)


def _report_shared_hook(project: Path, changes: list[Change], shared: Path) -> None:
    local = project / CLAUDE_LOCAL
    removal = [new for path, _, new in changes if path == CLAUDE_LOCAL]
    if not removal:
        what = f"writes none into {local}"
    elif removal[0] is None:
        what = f"removes {local}, which held only the one an earlier init wrote"
    else:
        what = f"removes the one an earlier init wrote into {local} (your other hooks stay)"
    console.print(
        f"{shared}: already registers briefd's recall hook; init leaves it "
        f"as it is and {what}, so Claude Code runs it once",
        markup=False,
    )


def _show_diff(project: Path, path: str, old: str | None, new: str | None) -> None:
    diff = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        (new or "").splitlines(keepends=True),
        fromfile=f"{project / path}" if old is not None else "/dev/null",
        tofile=f"{project / path}" if new is not None else "/dev/null",
    )
    console.print("".join(diff), markup=False, end="")
