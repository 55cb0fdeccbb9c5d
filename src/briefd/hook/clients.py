"""The project config files ``briefd init`` writes for each coding agent (pure: old text in,
new text out, so running init twice leaves the files byte-identical).

Each client's prompt-hook contract, as its own documentation states it (checked 2026-12):

| client | event | payload | how context gets in | hook files it loads |
|---|---|---|---|---|
| Claude Code | ``UserPromptSubmit`` | ``session_id``, ``prompt``, ``cwd``, ``transcript_path``, ``permission_mode``, ``hook_event_name`` | stdout on exit 0, or ``hookSpecificOutput.additionalContext`` | ``.claude/settings.json``, ``.claude/settings.local.json`` |
| Codex | ``UserPromptSubmit`` | the same plus ``turn_id``, ``model`` | ``hookSpecificOutput.additionalContext`` | ``.codex/hooks.json`` (hooks are on by default) |
| VS Code | ``UserPromptSubmit`` | ``sessionId``, ``hookEventName``, ``prompt``, ``cwd``, ``timestamp`` | none: "uses the common output format only" | ``.github/hooks/*.json`` **and** ``.claude/settings*.json`` |
| Cursor | ``beforeSubmitPrompt`` | ``conversation_id``, ``prompt``, ``workspace_roots`` | none: ``continue`` / ``user_message`` only | ``.cursor/hooks.json``, and ``.claude/settings*.json`` with third-party hooks on |

Sources: code.claude.com/docs/en/hooks (UserPromptSubmit input and decision control);
openai/codex ``codex-rs/hooks/schema/generated/user-prompt-submit.command.{input,output}.schema.json``
and developers.openai.com/codex/hooks; code.visualstudio.com/docs/agent-customization/hooks
("Hook file locations", "UserPromptSubmit"); cursor.com/docs/hooks and
cursor.com/docs/reference/third-party-hooks.

So ``init`` writes one recall hook per client that can take context — Claude Code's in
``.claude/settings.local.json`` (it names this machine's Python, so it stays out of the shared
``settings.json``) and Codex's in ``.codex/hooks.json`` — and none for VS Code or Cursor, which
only get the MCP server. When the team's shared ``.claude/settings.json`` already registers
briefd's recall hook (the entry the dashboard's /setup page shows), ``init`` leaves that file
alone and writes none into ``settings.local.json`` — removing the one an earlier ``init`` put
there — so Claude Code runs one. VS Code (and Cursor, when asked to) still run the Claude Code hook;
``briefd recall`` recognises their payloads and answers nothing at once (see
:data:`briefd.hook.main.SILENT_CLIENTS`), so no client runs a recall twice or for nothing. The
``.github/hooks/briefd.json`` an earlier ``init`` wrote for VS Code is removed.

The MCP entry reaches briefd either at a URL (streamable HTTP, the bearer token from
``BRIEFD_API_TOKEN``) or as a command the client spawns (``briefd mcp``, stdio).
"""

from __future__ import annotations

import itertools
import json
import math
import re
import shlex
import tomllib
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from briefd.errors import ConfigError
from briefd.hook import jsonc

CLIENTS = ("claude-code", "cursor", "codex", "vscode")
SERVER_NAME = "briefd"
TOKEN_ENV = "BRIEFD_API_TOKEN"
# Codex gives a spawned server 10 s to answer its handshake and tool list, and names it failed
# for the session after that; `briefd mcp` first gives its index update up to 20 s
# (serve.index_wait_seconds) plus its own start-up. A stdio entry without a wait of its own gets
# this one (`startup_timeout_sec`); a value the user set is theirs.
CODEX_STARTUP_S = 40
CODEX_STARTUP_MARGIN_S = 20  # past the index wait: the process's own start, the handshake
HOOK_TIMEOUT_S = 10
CLAUDE_LOCAL = ".claude/settings.local.json"  # init's: names this machine's Python
CLAUDE_SHARED = ".claude/settings.json"  # the team's: init reads it, never writes it
CODEX_HOOKS = ".codex/hooks.json"  # init's Codex hook: names this machine's Python too
MCP_FILES = {  # each client's MCP server entry, in the file a team commits to share it
    "claude-code": ".mcp.json",
    "cursor": ".cursor/mcp.json",
    "codex": ".codex/config.toml",
    "vscode": ".vscode/mcp.json",
}

# How a client reaches the MCP tools: a URL (streamable HTTP) or the command it spawns (stdio).
Server = str | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Kept:
    """The user's own ``briefd`` server entry that ``init`` left as it is: one at another URL
    (``transport`` "http", ``server`` that URL) or one the client spawns (``transport``
    "stdio", ``server`` its command line)."""

    transport: str
    server: str


def _nothing_kept(text: str | None) -> Kept | None:
    return None


@dataclass(frozen=True, slots=True)
class Target:
    """One file to write: its path in the project, how to update its text (None: the file
    should not exist), and the user's own entry that ``update`` keeps instead of writing
    init's (None: none kept)."""

    client: str
    path: str
    update: Callable[[str | None], str | None]
    kept: Callable[[str | None], Kept | None] = _nothing_kept


def codex_startup(index_wait: float) -> int:
    """The ``startup_timeout_sec`` a Codex stdio entry gets: ``briefd mcp``'s index wait
    (``serve.index_wait_seconds``) and its own start-up, :data:`CODEX_STARTUP_S` at least."""
    return max(CODEX_STARTUP_S, math.ceil(index_wait) + CODEX_STARTUP_MARGIN_S)


def targets(
    client: str,
    hook: str,
    mcp_url: Server,
    replace: bool = False,
    keep_stdio: bool = False,
    shared_hook: bool = False,
    token: bool = True,
    startup: int = CODEX_STARTUP_S,
) -> list[Target]:
    """The files ``client`` needs; ``hook`` is the recall command line, ``mcp_url`` the
    server's ``/mcp`` endpoint or the ``briefd mcp`` command line. An existing ``briefd``
    entry at another URL is kept unless ``replace`` (the user named the server), one the
    client spawns when ``keep_stdio`` (the user chose no transport). ``shared_hook``: the
    team's ``.claude/settings.json`` registers briefd's recall hook, so Claude Code's local
    settings get none (and lose the one an earlier ``init`` wrote). ``token``: a
    ``BRIEFD_API_TOKEN`` is set where init runs (see :func:`codex_keys`). ``startup``: a new
    Codex stdio entry's ``startup_timeout_sec`` (:func:`codex_startup`)."""
    json_hook = f"{hook} --format claude-json"

    def json_mcp(path: str, key: str, entry: dict[str, object]) -> Target:
        return Target(
            client,
            path,
            lambda t: mcp_servers(t, key, entry, replace, keep_stdio),
            lambda t: kept_entry(_entry(_load(t, MCP_FILE), key), entry, replace, keep_stdio),
        )

    def local_hook(text: str | None) -> str | None:
        return without_claude_hook(text) if shared_hook else claude_hook(text, hook)

    table = {
        "claude-code": [
            Target(client, CLAUDE_LOCAL, local_hook),
            json_mcp(MCP_FILES["claude-code"], "mcpServers", claude_mcp(mcp_url)),
        ],
        "cursor": [json_mcp(MCP_FILES["cursor"], "mcpServers", cursor_mcp(mcp_url))],
        "codex": [
            Target(
                client,
                MCP_FILES["codex"],
                lambda t: codex_mcp(t, mcp_url, replace, keep_stdio, token, startup),
                lambda t: kept_entry(
                    codex_entry(t), codex_keys(mcp_url, token)[0], replace, keep_stdio
                ),
            ),
            Target(client, CODEX_HOOKS, lambda t: claude_hook(t, json_hook)),
        ],
        "vscode": [
            json_mcp(MCP_FILES["vscode"], "servers", vscode_mcp(mcp_url)),
            Target(client, ".github/hooks/briefd.json", without_recall_hook),
        ],
    }
    return table[client]


def _load(text: str | None, what: str) -> dict[str, object]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(jsonc.strip(text))
    except ValueError as exc:
        raise ConfigError(
            f"{what} is not valid JSON ({exc}); fix or remove it, then rerun"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{what} must hold a JSON object; fix or remove it, then rerun")
    return data


def _dump(data: dict[str, object]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _uncommented(text: str | None, new: str, by_hand: str) -> str:
    """``new``, unless ``text`` has comments that writing ``new`` would drop: then ``text``
    when it already says the same, else a refusal that says what to add by hand."""
    if text is None or not jsonc.commented(text):
        return new
    if json.loads(new) == _load(text, "the file"):
        return text
    raise ConfigError(
        f"has comments, which init would not keep; {by_hand} by hand (or remove the comments), "
        "then rerun"
    )


# briefd's recall command in any form it has been written: the console script (a venv path,
# quoted, ``.exe``, an env prefix such as ``BRIEFD_RECALL__SERVER=… briefd recall`` from the
# /setup page), ``-m briefd recall``, or the hook's script file (any installation's path).
OURS = re.compile(
    r"""(?<![\w.-])briefd(?:\.exe)?['"]?\s+recall\b|briefd[/\\]hook[/\\]script\.py\b"""
)


def _ours(command: object) -> bool:
    """Whether a hook command is briefd's recall (replaced by ``init``, not doubled)."""
    return isinstance(command, str) and bool(OURS.search(command))


def claude_hook(text: str | None, command: str) -> str:
    """Claude Code / Codex ``hooks.UserPromptSubmit``: briefd's own entries replaced by one
    group holding ``command``; every other entry kept in its group, groups left empty dropped."""
    data = _load(text, "the hooks settings file")
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("'hooks' in the settings file must be an object; fix it, then rerun")
    groups = [g for g in map(_without_ours, _groups(hooks.get("UserPromptSubmit", []))) if g]
    entry = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}
    hooks["UserPromptSubmit"] = [*groups, {"hooks": [entry]}]
    group = json.dumps({"hooks": [entry]}, ensure_ascii=False)
    return _uncommented(
        text, _dump(data), f"replace briefd's entries in 'hooks.UserPromptSubmit' with {group}"
    )


def _groups(value: object) -> list[dict[str, object]]:
    """``hooks.UserPromptSubmit`` as the documented list of ``{"hooks": [{...}, ...]}``
    groups; anything else is refused (rewriting it would lose what the user meant)."""
    where = "'hooks.UserPromptSubmit'"
    shape = '[{"hooks": [{"type": "command", "command": "..."}]}]'
    if not isinstance(value, list):
        raise ConfigError(f"{where} must be a list like {shape}; fix it, then rerun")
    for i, group in enumerate(value):
        entries = group.get("hooks", []) if isinstance(group, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ConfigError(
                f"{where}[{i}] must be an object whose 'hooks' is a list of objects like "
                f"{shape[1:-1]}; fix it, then rerun"
            )
    return value


def _without_ours(group: dict[str, object]) -> dict[str, object] | None:
    """``group`` without briefd's entries; None when only briefd's were in it."""
    entries = group.get("hooks")
    if not isinstance(entries, list):
        return group
    kept = [e for e in entries if not _ours(e.get("command"))]
    if kept == entries:
        return group
    return {**group, "hooks": kept} if kept else None


def without_claude_hook(text: str | None) -> str | None:
    """Claude Code's local settings without briefd's recall hook, which the shared
    ``.claude/settings.json`` already registers (Claude Code runs the hooks of both files):
    the user's other hooks and settings kept, byte-identical when none was briefd's; None
    when nothing else is left."""
    if text is None:
        return None
    data = _load(text, "the hooks settings file")
    hooks = data.get("hooks")
    if not isinstance(hooks, dict) or "UserPromptSubmit" not in hooks:
        return text
    groups = _groups(hooks["UserPromptSubmit"])
    mine = [g for g in map(_without_ours, groups) if g]
    if mine == groups:
        return text
    if mine:
        hooks["UserPromptSubmit"] = mine
    else:
        del hooks["UserPromptSubmit"]
    if not hooks:
        del data["hooks"]
    if not data and not jsonc.commented(text):
        return None
    return _uncommented(
        text, _dump(data), "remove briefd's recall entries from 'hooks.UserPromptSubmit'"
    )


def registered_recall(text: str | None) -> str | None:
    """The briefd recall command a Claude Code settings file registers for
    ``UserPromptSubmit``, recognised as ``init`` recognises its own (:data:`OURS`); None when
    there is none. Read only: a shape ``init`` would refuse to edit is searched as far as it
    goes."""
    hooks = _load(text, "the settings file").get("hooks")
    groups = hooks.get("UserPromptSubmit") if isinstance(hooks, dict) else None
    for group in groups if isinstance(groups, list) else []:
        entries = group.get("hooks") if isinstance(group, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            command = entry.get("command") if isinstance(entry, dict) else None
            if isinstance(command, str) and _ours(command):
                return command
    return None


def user_claude_settings() -> Path:
    """The user's own Claude Code settings (``~/.claude/settings.json``): its hooks run in
    every project."""
    return Path.home() / ".claude" / "settings.json"


def finds_project(command: str) -> bool:
    """Whether a recall hook command finds the index of the project it runs in: it names no
    ``--db`` or ``--config`` of its own (one that does answers from that index everywhere)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return not any(w in ("--db", "--config") or w.startswith(("--db=", "--config=")) for w in words)


def without_recall_hook(text: str | None) -> str | None:
    """``.github/hooks/briefd.json`` without the recall hook an earlier ``init`` put there
    (VS Code also loads the Claude Code hook: two would run); None when nothing else is left."""
    if text is None:
        return None
    data = _load(text, ".github/hooks/briefd.json")
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return text
    listed = hooks.get("UserPromptSubmit", [])
    if not isinstance(listed, list):  # not a shape init writes: nothing of its own there
        return text
    kept = [h for h in listed if not (isinstance(h, dict) and _ours(h.get("command")))]
    hooks = {k: v for k, v in hooks.items() if k != "UserPromptSubmit"}
    hooks |= {"UserPromptSubmit": kept} if kept else {}
    rest = {k: v for k, v in data.items() if k != "hooks"}
    if not hooks and not rest:
        return None
    return _dump({**rest, "hooks": hooks})


def claude_mcp(server: Server) -> dict[str, object]:
    if isinstance(server, tuple):
        return {"type": "stdio", "command": server[0], "args": list(server[1:]), "env": {}}
    auth = {"Authorization": f"Bearer ${{{TOKEN_ENV}:-}}"}
    return {"type": "http", "url": server, "headers": auth}


def cursor_mcp(server: Server) -> dict[str, object]:
    if isinstance(server, tuple):
        return {"command": server[0], "args": list(server[1:])}
    return {"url": server, "headers": {"Authorization": f"Bearer ${{env:{TOKEN_ENV}}}"}}


def vscode_mcp(server: Server) -> dict[str, object]:
    if isinstance(server, tuple):
        return {"type": "stdio", "command": server[0], "args": list(server[1:])}
    return {
        "type": "http",
        "url": server,
        "headers": {"Authorization": f"Bearer ${{env:{TOKEN_ENV}}}"},
    }


MCP_FILE = "the MCP config file"
HTTP_KEYS = ("url", "headers", "bearer_token_env_var")
STDIO_KEYS = ("command", "args", "env", "cwd")


def mcp_servers(
    text: str | None,
    key: str,
    server: dict[str, object],
    replace: bool,
    keep_stdio: bool = False,
) -> str:
    """The file with ``key.briefd`` set to ``server``, merged into the user's entry (see
    :func:`merged_entry`); unchanged when :func:`kept_entry` keeps that entry."""
    data = _load(text, MCP_FILE)
    old = _entry(data, key)
    if text is not None and kept_entry(old, server, replace, keep_stdio):
        return text
    servers = data.setdefault(key, {})
    assert isinstance(servers, dict)  # checked by _entry
    servers[SERVER_NAME] = entry = merged_entry(old, server)
    wanted = json.dumps({SERVER_NAME: entry}, ensure_ascii=False)[1:-1]
    return _uncommented(text, _dump(data), f"set {wanted} in '{key}'")


def _entry(data: dict[str, object], key: str) -> object:
    servers = data.get(key, {})
    if not isinstance(servers, dict):
        raise ConfigError(f"'{key}' in {MCP_FILE} must be an object; fix it, then rerun")
    return servers.get(SERVER_NAME)


def kept_entry(
    old: object, new: Mapping[str, object], replace: bool, keep_stdio: bool
) -> Kept | None:
    """The user's entry when ``init`` leaves it as it is: one the client spawns (a
    ``command``) when ``keep_stdio``, one at another URL than ``new``'s unless ``replace``.
    A spawned entry whose command is a path that no longer exists (a moved or deleted venv) is
    kept as stdio but not as written: a stdio ``new`` replaces its command."""
    if keep_stdio and isinstance(old, Mapping) and isinstance(old.get("command"), str):
        args = old.get("args")
        words = [old["command"], *(args if isinstance(args, list) else [])]
        if "command" in new and (_gone(old["command"]) or _moved(words, new)):
            return None
        return Kept("stdio", shlex.join(str(word) for word in words))
    url = None if replace else foreign_url(old, new)
    return None if url is None else Kept("http", url)


def runs_here(command: str) -> bool:
    """Whether a hook command's programs exist on this machine: its absolute interpreter and
    script paths (``init`` writes ``/…/.venv/bin/python -S -P /…/hook/script.py``; a
    teammate's, committed in the shared settings, names their folders, not this machine's)."""
    try:
        words = shlex.split(command)
    except ValueError:  # an unbalanced quote: the shell's to judge
        return True
    paths = [w for i, w in enumerate(words) if w.startswith("/") and (i == 0 or w.endswith(".py"))]
    return all(Path(path).exists() for path in paths)


def _moved(words: Sequence[object], new: Mapping[str, object]) -> bool:
    """Whether an entry with init's own command names an index or settings file (``--db``,
    ``--config``) that no longer exists where init would now name another: the project moved,
    and ``briefd mcp`` would refuse ("holds no index"). A hand-written command, or the path
    init would write itself (an index still to be built), is left as it is."""
    args = new.get("args")
    if words[0] != new.get("command") or not isinstance(args, list):
        return False
    now = dict(itertools.pairwise(str(word) for word in [new["command"], *args]))
    for flag, value in itertools.pairwise(str(word) for word in words):
        if flag in ("--db", "--config") and now.get(flag) != value and not Path(value).exists():
            return True
    return False


def _gone(command: str) -> bool:
    """Whether a spawned server's command is a path that does not exist (a bare name is
    looked up on the client's own PATH, which init cannot see)."""
    path = Path(command)
    return path.is_absolute() and not path.exists()


def foreign_url(old: object, new: Mapping[str, object]) -> str | None:
    """The URL of the user's entry when it points elsewhere than the one init would write."""
    url = old.get("url") if isinstance(old, Mapping) else None
    return url if isinstance(url, str) and "url" in new and url != new["url"] else None


def merged_entry(old: object, new: dict[str, object]) -> dict[str, object]:
    """``new`` over the user's entry: its other fields kept (``headers``, ``env``… merged, the
    user's values winning), those of the other transport dropped (a ``url`` or a
    ``command``, never both)."""
    if not isinstance(old, dict):
        return new
    other = STDIO_KEYS if "url" in new else HTTP_KEYS
    switched = any(k in old for k in other)
    drop = (*other, "type") if switched else other
    out = {k: v for k, v in old.items() if k not in drop}
    for k, v in new.items():
        mine = out.get(k)
        out[k] = {**v, **mine} if isinstance(v, dict) and isinstance(mine, dict) else v
    return out


def codex_mcp(
    text: str | None,
    server: Server,
    replace: bool = True,
    keep_stdio: bool = False,
    token: bool = True,
    startup: int = CODEX_STARTUP_S,
) -> str:
    """``mcp_servers.briefd`` in Codex's TOML, edited in place (tomlkit: comments, the entry's
    own form — table, inline table or dotted keys — and its other keys such as its ``env``
    table kept, but for those of the transport it no longer uses, :func:`codex_keys`); only
    the keys that say how to reach briefd are set. Unchanged when
    :func:`kept_entry` keeps the user's entry."""
    import tomlkit  # only `init` for Codex edits TOML: not at every command's start
    import tomlkit.exceptions

    try:
        tomllib.loads(text or "")
        doc = tomlkit.parse(text or "")
    except (tomllib.TOMLDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise ConfigError(f"not valid TOML ({exc}); fix it, then rerun") from None
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = doc["mcp_servers"] = tomlkit.table(is_super_table=True)
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if entry is None and isinstance(servers, dict):
        inline = isinstance(servers, tomlkit.items.InlineTable)  # mcp_servers = { a = {…} }
        entry = servers[SERVER_NAME] = tomlkit.inline_table() if inline else tomlkit.table()
    if not isinstance(entry, dict):
        raise ConfigError(f"'mcp_servers.{SERVER_NAME}' must be a table; fix it, then rerun")
    wanted, other = codex_keys(server, token)
    if text is not None and kept_entry(entry, wanted, replace, keep_stdio):
        return text
    tokenless = "url" in wanted and "bearer_token_env_var" not in wanted
    if tokenless and entry.get("bearer_token_env_var") == TOKEN_ENV:  # an earlier init's
        other = (*other, "bearer_token_env_var")
    try:
        for key in other:
            entry.pop(key, None)
        for key, value in wanted.items():
            if entry.get(key) != value:
                entry[key] = value
        if "command" in wanted and "startup_timeout_sec" not in entry:
            entry["startup_timeout_sec"] = startup
    except ValueError as exc:  # tomlkit: a table cannot go inside an inline table
        raise ConfigError(
            f"cannot write 'mcp_servers.{SERVER_NAME}' where the file has it ({exc}); write "
            "'mcp_servers' as tables ([mcp_servers.name]), then rerun"
        ) from None
    return tomlkit.dumps(doc)


def codex_entry(text: str | None) -> object:
    """The user's ``mcp_servers.briefd`` in Codex's TOML (None when there is none)."""
    servers = tomllib.loads(text or "").get("mcp_servers")
    return servers.get(SERVER_NAME) if isinstance(servers, dict) else None


LOOPBACK = ("127.0.0.1", "localhost", "::1")  # this machine's own server
# The keys of a Codex server entry that belong to one transport: Codex refuses to load a
# config.toml whose entry has a key of the other ("env is not supported for streamable_http",
# "http_headers is not supported for stdio": openai/codex codex-rs/config/src/mcp_types.rs), so
# an entry init switches loses them, as merged_entry drops them from the JSON clients' entries.
CODEX_STDIO_KEYS = ("command", "args", "env", "env_vars", "cwd")
CODEX_HTTP_KEYS = (
    "url",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
    "oauth",
    "oauth_resource",
)


def codex_keys(server: Server, token: bool = True) -> tuple[dict[str, object], tuple[str, ...]]:
    """The keys of Codex's server entry that ``init`` sets, and those of the other transport
    (removed: an entry has a ``url`` or a ``command``, not both, and Codex refuses to load
    an entry with a key of the other, :data:`CODEX_STDIO_KEYS`). ``bearer_token_env_var``
    only when a token is to be sent: Codex refuses to start a server whose variable is unset
    or empty ("Environment variable BRIEFD_API_TOKEN for MCP server 'briefd' is not set"),
    and this machine's ``briefd serve`` runs without one unless ``BRIEFD_API_TOKEN`` is set
    (``token``); a server elsewhere (``--url``) always has one."""
    if isinstance(server, tuple):
        return {"command": server[0], "args": list(server[1:])}, CODEX_HTTP_KEYS
    if token or urllib.parse.urlsplit(server).hostname not in LOOPBACK:
        return {"url": server, "bearer_token_env_var": TOKEN_ENV}, CODEX_STDIO_KEYS
    return {"url": server}, CODEX_STDIO_KEYS
