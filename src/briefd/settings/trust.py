"""Whether a secret may go where the settings send it (O1: nothing leaves the machine unless
the user configured it). A repository's own settings file — ``briefd.yaml`` or
``.briefd/briefd.yaml``, found in the project, not named by the user — is the cloned
repository's word, not the user's: a URL only it names (``embeddings.base_url``,
``forge.api_url``, ``confluence.url``, ``jira.url``) gets no secret from a variable a ``…_env``
key names, unless the host is this machine's (loopback, by its text alone) or the URL's own
default (``api.openai.com``, ``api.github.com``). The user's word trusts it: the URL in a
``BRIEFD_*`` variable or on the command line, or a settings file the user named
(``--config``, ``$BRIEFD_CONFIG``) or keeps (``~/.config/briefd/briefd.yaml``) — the rule the
prompt hook follows for ``recall.server`` (:func:`briefd.hook.main`'s ``untrusted``). The
shared state (``state.url``) is kept only on this machine's PostgreSQL unless the user gave
it: the query log, sessions and proposals go there, and libpq adds ``$PGPASSWORD``.

:class:`ProjectNamed` says where each value came from (filled by
:func:`briefd.settings.load_settings`); :func:`unsent_problem` is the rule, a pure function
asked by each place that sends such a secret, before it connects (:func:`shared_state_problem`
for the state's PostgreSQL, :func:`read_outside_problem` for the knowledge ``source`` read,
:func:`code_read_problem` for the history of a ``code.repos`` folder)."""

from __future__ import annotations

import functools
import os
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from briefd.hosts import loopback
from briefd.project import LOCAL_DIR
from briefd.settings.locate import config_candidates
from briefd.settings.names import without_account
from briefd.settings.raw import env_items, env_name, is_git_url


class ProjectNamed(NamedTuple):
    """The settings a project's own settings file gave and the user's word did not replace:
    ``file`` (None: there was none, or the user named or keeps it) and the dotted ``keys``."""

    file: str | None = None
    keys: frozenset[str] = frozenset()

    def without(self, dotted: Iterable[str]) -> ProjectNamed:
        """These settings with ``dotted`` (and the keys under them) given by the user."""
        gone = tuple(dotted)
        keys = frozenset(
            k for k in self.keys if not any(k == g or k.startswith(g + ".") for g in gone)
        )
        return ProjectNamed(self.file if keys else None, keys)


USERS_WORD = ProjectNamed()  # every setting is the user's: none from a project's own file


def project_named(data: Mapping[str, Any], file: Path) -> ProjectNamed:
    """Every setting (dotted) the raw mapping ``data`` of the project's file ``file`` holds."""
    keys: set[str] = set()

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        for key, value in node.items():
            if isinstance(value, Mapping):
                walk(value, f"{prefix}{key}.")
            else:
                keys.add(f"{prefix}{key}")

    walk(data, "")
    return ProjectNamed(str(file), frozenset(keys)) if keys else ProjectNamed()


def of_file(
    data: Mapping[str, Any], path: Path | None, found: bool, env: Mapping[str, str]
) -> ProjectNamed:
    """What the settings file ``path`` (None: none) with the raw mapping ``data`` gives as a
    project's own: all of it when it was ``found`` in the project, not the user's own file
    (``~/.config/briefd/briefd.yaml``) nor ``$BRIEFD_CONFIG``'s (which the hook finds first),
    but for the settings ``BRIEFD_*`` variables give; else nothing. Never read from a file."""
    if path is None or not found:
        return USERS_WORD
    users = config_candidates(env)[2:]
    named = (Path(env["BRIEFD_CONFIG"]),) if env.get("BRIEFD_CONFIG") else ()
    try:
        here = path.expanduser().resolve()
        if any(here == c.expanduser().resolve() for c in (*users, *named)):
            return USERS_WORD
    except (OSError, RuntimeError):
        pass
    return project_named(data, path).without(key for key, _ in env_items(env))


def _place(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of ``url``, or None when it names no host."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.scheme.lower(), parts.hostname.lower(), port


def unsent_problem(
    named: ProjectNamed, key: str, url: str, default: str | None, secret: str | None
) -> str | None:
    """Why the secret of ``secret`` (its variables: ``$OPENAI_API_KEY``; None: no secret, but
    the passages, queries and prompts an embedding service is sent) is not sent to ``url``,
    the setting ``key`` (whose default is ``default``), or None when it may be."""
    if key not in named.keys or named.file is None:
        return None  # its default, or the user's word
    place = _place(url)
    if place is None or loopback(place[1]):
        return None  # not a URL: sending to it fails as before; this machine's
    if default is not None and place == _place(default):
        return None  # the service's own host, written out
    shown = without_account(url)
    sent, what = (f"{secret} is", "a secret") if secret else (_TEXT, "your text")
    return (
        f"{sent} not sent to {shown}: {key} in {named.file} names it, and a project's "
        f"settings file may not send {what} to a host only it names; to trust it, set "
        f"{env_name(key)}={shown} in your environment, {_or_named(named)}"
    )


_TEXT = "passages, queries and the prompts recalled for are"


def _or_named(named: ProjectNamed) -> str:
    return (
        f"or name that settings file yourself (`briefd --config {named.file} …`, or $BRIEFD_CONFIG)"
    )


def shared_state_problem(named: ProjectNamed, url: str) -> str | None:
    """Why the shared state (``state.url``: the query log, recall sessions, proposals, and
    the password libpq adds from ``$PGPASSWORD`` or ``~/.pgpass``) is not kept at ``url``, or
    None when it may be: every host it names (``h1,h2``, ``?host=``, ``?hostaddr=``) must be
    this machine's (a socket folder is) unless the user gave it."""
    if "state.url" not in named.keys or named.file is None:
        return None
    if all(loopback(host) for host in _database_hosts(url)):
        return None
    return (
        f"the shared state is not kept at {without_account(url)}: state.url in {named.file} "
        "names it, and a project's settings file may not send the query log, recall sessions, "
        "proposals or $PGPASSWORD to a host only it names; to trust it, set "
        f"{env_name('state.url')} to that URL in your environment, {_or_named(named)}"
    )


def _database_hosts(url: str) -> list[str]:
    """The hosts a libpq URL names, before its path and in its ``host`` / ``hostaddr``
    parameters (which win), but for socket folders (``/run/postgresql``: this machine)."""
    parts = urllib.parse.urlsplit(url.strip())
    hosts = []
    for entry in parts.netloc.rpartition("@")[2].split(","):
        host = entry[1 : entry.find("]")] if entry.startswith("[") else entry.partition(":")[0]
        hosts.append(urllib.parse.unquote(host))
    for key, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if key in ("host", "hostaddr"):
            hosts.extend(value.split(","))
    return [host for host in hosts if host.strip() and not host.startswith("/")]


# where briefd writes: a file of its own at ``db`` (and beside it), or folders it fills
PLACES = ("db", "embeddings.model_dir", "eval.cache_dir", "code.checkout_dir", "sync.checkout_dir")


def placed_outside_problem(named: ProjectNamed, settings: object) -> str | None:
    """Why ``settings`` (a :class:`briefd.settings.Settings`) may not be used: a place briefd
    writes (:data:`PLACES`) that only a project's own settings file gives and that is outside
    that project's folder (links followed), or None. ``db: ~/.ssh/authorized_keys2`` made an
    index there, whose pages hold the documents' lines as they are, a key line among them."""
    if named.file is None:
        return None
    file, top = _project_top(named.file)
    for key in PLACES:
        value = functools.reduce(getattr, key.split("."), settings)
        if key not in named.keys or not isinstance(value, Path):
            continue
        if value.expanduser().resolve().is_relative_to(top):
            continue
        return (
            f"{key}: {value} (in {file}) is outside that project's folder ({top}): a "
            "project's settings file places briefd's files only inside it, or a repository "
            "you cloned could write over files of yours (~/.ssh/authorized_keys2, …); to use "
            f"it, set {env_name(key)}={value} in your environment, {_or_named(named)}"
        )
    return None


def _project_top(named_file: str) -> tuple[Path, Path]:
    """The project's settings file and its project's folder (links followed): the file's
    folder, or the one above ``.briefd`` for ``.briefd/briefd.yaml``."""
    file = Path(named_file)
    home = file.parent.parent if file.parent.name == LOCAL_DIR else file.parent
    return file, home.expanduser().resolve()


def read_outside_problem(
    named: ProjectNamed, source: Path | None, remote: str | None
) -> str | None:
    """Why briefd may not read the knowledge of ``source`` (a folder: ``settings.source``) or
    ``remote`` (``sync.remote``: a ``file://`` URL is a folder here too), or None. Only a
    project's own settings file is held to it, and only for a folder outside that project
    (links followed) that is no knowledge repository beside it: one that holds the project
    itself (``..``, ``~``, ``/``) or the home folder, or a hidden one (``~/.ssh``, ``~/.aws``,
    ``~/.config/…``: where programs keep keys). ``source: ~/.ssh`` with ``index.include:
    ["**/*"]`` indexed a private key, which search, the MCP tools and every prompt's recall
    then handed to the agent. A checkout beside the project (``../knowledge``) is read."""
    if named.file is None:
        return None
    if "source" in named.keys and source is not None:
        key, place = "source", source
        shown = os.path.normpath(source.expanduser().absolute())  # read so from anywhere
    elif {"source", "sync.remote"} & named.keys and remote and _is_file_url(remote):
        key = "source" if "source" in named.keys else "sync.remote"
        place, shown = Path(urllib.parse.unquote(urllib.parse.urlsplit(remote).path)), remote
    else:
        return None
    file, top = _project_top(named.file)
    why = _not_knowledge(place, top)
    if why is None:
        return None
    return (
        f"{key}: {shown} (in {file}) {why}: a project's settings file may not have briefd "
        "read it, or a repository you cloned could have briefd index files of yours (keys, "
        "tokens) and hand them to your agents and prompts; to read it, set "
        f"{env_name(key)}={shown} in your environment, {_or_named(named)}"
    )


def _not_knowledge(place: Path, top: Path) -> str | None:
    """Why the folder ``place`` is no knowledge repository a project at ``top`` may name."""
    try:
        real = place.expanduser().resolve()
        home = Path.home().resolve()
    except (OSError, RuntimeError):
        return None  # not there: reading it fails, saying so
    if real.is_relative_to(top):
        return None
    if top.is_relative_to(real):
        return f"holds that project's folder ({top}) and every file beside it"
    if real == home:
        return "is your home folder"
    beside = real.relative_to(os.path.commonpath((real, top)))  # a folder both are in: theirs
    hidden = next((part for part in beside.parts if part.startswith(".")), None)
    if hidden is not None:
        return f"is in the hidden folder {hidden}, outside that project's folder ({top})"
    system = Path(*real.parts[:2])
    if real.parts[1:2] and real.parts[1] in _SYSTEM and not top.is_relative_to(system):
        return f"is in the system folder {system}, outside that project's folder ({top})"
    return None


# the machine's own folders (Linux, macOS): its settings, logs, processes, other users' homes'
# root; a project's file may name a folder in one only when the project is in it too
_SYSTEM = frozenset(
    {"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "root", "run"}
    | {"sbin", "snap", "sys", "usr", "var", "Library", "System", "private"}
)


def code_read_problem(named: ProjectNamed, entry: str) -> str | None:
    """Why briefd may not read the history (commit subjects, authors, paths) of the
    ``code.repos`` entry ``entry`` (a folder, or a ``file://`` URL), or None: the rule of
    :func:`read_outside_problem`, but for the git work tree that holds the project, whose
    history is the project's own (``code.repos: [".."]`` from a ``docs/briefd.yaml``).
    ``code.repos: [~/.password-store]`` with a document whose ``refs`` are ``**`` handed every
    commit there ("Add given password for bank.com") to drift reports, bundles and agents."""
    if named.file is None or "code.repos" not in named.keys:
        return None
    if _is_file_url(entry):
        place = Path(urllib.parse.unquote(urllib.parse.urlsplit(entry).path))
    elif is_git_url(entry):
        return None  # a repository on the network: git sends it nothing of this machine's
    else:
        place = Path(entry)
    file, top = _project_top(named.file)
    try:
        if place.expanduser().resolve() == _work_tree(top):
            return None
    except (OSError, RuntimeError):
        return None
    why = _not_knowledge(place, top)
    if why is None:
        return None
    return (
        f"code.repos: {entry} (in {file}) {why}: a project's settings file may not have briefd "
        "read its history, or a repository you cloned could have briefd hand the commits of "
        "yours (subjects, authors, paths) to your agents in drift reports; to read it, list "
        f"it in {env_name('code.repos')} (comma-separated, with the others) in your "
        f"environment, {_or_named(named)}"
    )


def _work_tree(top: Path) -> Path | None:
    """The top of the git work tree ``top`` is in (a ``.git`` found on the way up), or None."""
    return next((f for f in (top, *top.parents) if (f / ".git").exists()), None)


def _is_file_url(url: str) -> bool:
    return url.strip().lower().startswith("file:")


def opened_to_problem(
    named: ProjectNamed, hosts: Iterable[str], origins: Iterable[str]
) -> str | None:
    """Why the server may not answer the Host names ``hosts`` or the browser pages of
    ``origins`` (``serve.allowed_hosts`` / ``allowed_origins``), or None: one that is not this
    machine's and only a project's own settings file gives would let pages on another site
    (DNS rebinding, or CORS) read the knowledge and the query log and propose changes."""
    for key, values in (("serve.allowed_hosts", hosts), ("serve.allowed_origins", origins)):
        if key not in named.keys or named.file is None:
            continue
        for value in values:
            if key.endswith("hosts"):
                name = value.strip()
                host = name if name.startswith("[") else name.partition(":")[0]
            else:
                place = _place(value)
                host = place[1] if place is not None else ""
            if host and loopback(host):
                continue
            return (
                f"{key}: {value!r} (in {named.file}) would let pages there call this machine's "
                "server (read the knowledge and the query log, propose changes), and a "
                "project's settings file may not open it to them; to allow it, set "
                f"{env_name(key)}={value} in your environment, {_or_named(named)}"
            )
    return None
