"""Where the hook finds its settings, index and server, so the hook line needs no flags.

Config file: ``$BRIEFD_CONFIG``, ``./briefd.yaml``, ``./.briefd/briefd.yaml``, then the user's
``$XDG_CONFIG_HOME/briefd/briefd.yaml`` (``~/.config``). Index: ``$BRIEFD_DB``, the config
file's ``db``, ``./.briefd/briefd.db`` when it exists, then the user's default
``$XDG_DATA_HOME/briefd/briefd.db`` (``~/.local/share``). ``.`` is the project's folder the
hook moved to (:func:`briefd.hook.main._up`): the project found from a subfolder of its git
work tree, a settings file or an index named or not. Server: ``$BRIEFD_RECALL__SERVER``,
the config file's ``recall.server``, then the project's own ``briefd serve`` where its
``serve.host``/``serve.port`` put it (``http://127.0.0.1:8484`` by default); ``off`` or empty:
none; its timeout likewise (``recall.server_timeout``, default 2 s). Local daemon: on unless
``$BRIEFD_RECALL__DAEMON`` or the config file's ``recall.daemon`` is false.

Standard library only (``yaml`` is imported only when a config file that mentions ``recall``,
``serve`` or ``db`` is new or changed: :mod:`briefd.hook.remembered`).
"""

from __future__ import annotations

import os

from briefd.hook import HookError, need_site
from briefd.project import CONFIG_NAME, DB_NAME, LOCAL_DIR, is_any_interface

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook start-up
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

DEFAULT_PORT = 8484
DEFAULT_SERVER = f"http://127.0.0.1:{DEFAULT_PORT}"
DEFAULT_TIMEOUT = 2.0
READ_KEYS = ("recall", "serve", "db")  # the top-level keys the hook reads of a config file


def user_config(env: Mapping[str, str]) -> str:
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "briefd", CONFIG_NAME)


def user_db(env: Mapping[str, str]) -> str:
    base = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "briefd", DB_NAME)


def config_file(env: Mapping[str, str]) -> str | None:
    """The settings file: ``$BRIEFD_CONFIG`` as given, else the first found, as an absolute
    path — the hook may have climbed from a subfolder (:func:`briefd.project.project_dir`),
    so a message naming ``briefd.yaml`` alone would not say which one."""
    if env.get("BRIEFD_CONFIG"):  # ~ as the CLI reads it (an agent's env block expands none)
        return os.path.expanduser(env["BRIEFD_CONFIG"])
    for path in (CONFIG_NAME, os.path.join(LOCAL_DIR, CONFIG_NAME), user_config(env)):
        if os.path.isfile(path):
            return os.path.abspath(path)
    return None


def local_db(env: Mapping[str, str]) -> str:
    """The index to use when neither ``$BRIEFD_DB`` nor the config file names one: the
    project's, else the user's default one, else — neither built — the project's, where
    ``briefd index`` builds it: a prompt before the first index run said "no index at
    ~/.local/share/briefd/briefd.db; build one with `briefd index`", a path that command never
    writes."""
    here = os.path.join(LOCAL_DIR, DB_NAME)
    if os.path.exists(here):
        return here
    user = user_db(env)
    return user if os.path.exists(user) else os.path.abspath(here)


def read_config(path: str | None, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What the hook reads of a config file (``{}`` when there is none or it is not a
    mapping): the keys :func:`briefd.hook.remembered.essentials` keeps, remembered between
    prompts so that ``yaml`` is imported only when the file changed."""
    if path is None:
        return {}
    from briefd.hook import remembered

    env = os.environ if env is None else env
    path = os.path.abspath(path)
    kept, key = remembered.recalled(path, env)
    if kept is not None:
        return kept
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
    except UnicodeDecodeError:
        raise HookError(_not_text(path)) from None
    except OSError as exc:
        raise HookError(_unreadable(path, exc, env)) from None
    if "\x00" in text:  # a binary file that happens to decode
        raise HookError(_not_text(path))
    if not any(key in text for key in READ_KEYS):  # nothing the fast path reads: no YAML
        return {}
    need_site()
    import yaml

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        from briefd.settings.raw import yaml_fix  # a broken file: the cost no longer counts

        raise HookError(
            f"{path} is not valid YAML{where}{yaml_fix(exc, text, '; fix it')}"
        ) from None
    kept = remembered.essentials(data) if isinstance(data, dict) else {}
    remembered.remember(path, key, kept, env)
    return kept


def settings_mapping(path: str, env: Mapping[str, str]) -> dict[str, Any]:
    """The whole settings file at ``path`` as :func:`briefd.settings.raw.read_file` reads it
    (a file that does not read raises its ``ConfigError``): remembered between prompts, so a
    prompt answered in-process imports ``yaml`` only when the file changed."""
    from briefd.hook import remembered

    given = os.path.expanduser(path)  # as the settings read it, and name it when it fails
    where = os.path.abspath(given)
    kept, key = remembered.settings_file(where, env)
    if kept is not None:
        return kept
    need_site()
    from pathlib import Path

    from briefd.settings.raw import read_file

    mapping = read_file(Path(given))
    remembered.remember_settings_file(where, key, mapping, env)
    return mapping


def _not_text(path: str) -> str:
    """Why the config file is no YAML text, as the CLI says it: the index named where the
    settings go (``BRIEFD_CONFIG=.briefd/briefd.db``) was told "save it as UTF-8"."""
    from briefd.settings.raw import not_a_text_file  # a broken file: the cost no longer counts

    try:
        with open(path, "rb") as stream:
            problem = not_a_text_file(stream.read())
    except OSError:
        problem = None
    return f"{path}: {problem}" if problem else f"{path} is not UTF-8 text; save it as UTF-8"


def _unreadable(path: str, exc: OSError, env: Mapping[str, str]) -> str:
    """Why the config file cannot be read, as the CLI says it: a ``BRIEFD_CONFIG`` set in a
    shell long ago is named, with what to do."""
    reason = exc.strerror or type(exc).__name__
    named = env.get("BRIEFD_CONFIG")
    if named and os.path.abspath(os.path.expanduser(named)) == path:
        return (
            f"cannot read config file {path}, which BRIEFD_CONFIG names: {reason}; fix "
            "BRIEFD_CONFIG or unset it"
        )
    return f"cannot read config file {path}: {reason}"


def server_url(env: Mapping[str, str], config: Mapping[str, Any]) -> str | None:
    """The server to ask first, or None when recall must not ask one: ``recall.server`` when
    it is set, else the project's own ``briefd serve`` (:func:`local_server`)."""
    if "BRIEFD_RECALL__SERVER" in env:
        value: object = env["BRIEFD_RECALL__SERVER"]
    else:
        recall = config.get("recall")
        if isinstance(recall, dict) and "server" in recall:
            value = recall["server"]
        else:
            value = local_server(env, config)
    if not isinstance(value, str) or value.strip().lower() in ("", "off", "none", "false"):
        return None
    return value.strip().rstrip("/")


def local_server(env: Mapping[str, str], config: Mapping[str, Any]) -> str:
    """Where ``briefd serve`` listens by these settings (``$BRIEFD_SERVE__HOST``/``PORT``, the
    config file's ``serve.host``/``serve.port``; ``http://127.0.0.1:8484`` by default), as a
    client reaches it: a bind to every interface on 127.0.0.1, an IPv6 address in brackets —
    the URL ``briefd init`` gives the MCP entry too (:func:`briefd.cli.init.mcp_url`)."""
    serve = config.get("serve")
    serve = serve if isinstance(serve, dict) else {}
    host: object = env.get("BRIEFD_SERVE__HOST") or serve.get("host")
    port: object = env.get("BRIEFD_SERVE__PORT") or serve.get("port")
    host = host.strip() if isinstance(host, str) else ""
    if not host or is_any_interface(host):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    port = str(port).strip() if isinstance(port, str | int) and port is not True else ""
    return f"http://{host}:{port if port.isdigit() else DEFAULT_PORT}"


def server_timeout(env: Mapping[str, str], config: Mapping[str, Any]) -> float:
    """Seconds to wait for the server's answer: ``$BRIEFD_RECALL__SERVER_TIMEOUT``, the config
    file's ``recall.server_timeout``, or 2."""
    recall = config.get("recall")
    value: object = env.get("BRIEFD_RECALL__SERVER_TIMEOUT") or (
        recall.get("server_timeout") if isinstance(recall, dict) else None
    )
    try:
        seconds = float(value) if isinstance(value, str | int | float) else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT
    return seconds if seconds > 0 else DEFAULT_TIMEOUT


def index_path(
    env: Mapping[str, str], db: str | None, config_path: str | None, config: Mapping[str, Any]
) -> str:
    """The index the hook answers from, as an absolute real path: ``--db``, ``$BRIEFD_DB``, the
    config file's ``db`` (relative to the file), then :func:`local_db` — as the settings would
    have it (see :func:`briefd.hook.local.hook_settings`)."""
    value = config.get("db")
    if db:
        path = os.path.expanduser(db)
    elif env.get("BRIEFD_DB"):  # ~ as the settings read it (an agent's env block expands none)
        path = os.path.expanduser(env["BRIEFD_DB"])
    elif isinstance(value, str) and value:
        path = os.path.join(os.path.dirname(config_path or ""), os.path.expanduser(value))
    else:
        path = local_db(env)
    return os.path.realpath(path)


def daemon_on(env: Mapping[str, str], config: Mapping[str, Any]) -> bool:
    """Whether a local daemon may answer (``recall.daemon``, default true; POSIX only: it
    listens on a Unix socket and is kept single by ``flock``)."""
    if os.name != "posix":
        return False
    if "BRIEFD_RECALL__DAEMON" in env:
        return env["BRIEFD_RECALL__DAEMON"].strip().lower() not in FALSE
    recall = config.get("recall")
    value = recall.get("daemon", True) if isinstance(recall, dict) else True
    return value is not False and str(value).lower() not in FALSE


FALSE = ("false", "no", "off", "0", "")
