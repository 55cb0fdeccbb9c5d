"""The few settings the hook reads from a YAML config file, remembered between prompts.

``import yaml`` costs a hook process ~16 ms — more than Python's own start-up — on every
prompt in a project whose ``briefd.yaml`` names ``db`` or ``recall``. The values the fast path
reads (``db``; ``recall.server``, ``recall.server_timeout``, ``recall.daemon``; ``serve.host``,
``serve.port``, where the project's own server listens) are kept in the
user's cache directory (``$XDG_CACHE_HOME/briefd/hook``, else ``~/.cache``), one ``marshal``
file per config file (``marshal`` is built in: nothing to import), and trusted while the file
keeps the stat it had when it was read: device, inode, size, mtime and ctime. As in git's rule
for racy entries, a file changed in the last 2 s is read but not remembered: an edit within the
same clock tick could leave its stat unchanged.

A value YAML gives in a type ``marshal`` cannot hold (a date, say) is kept as ``None``, which
every reader in :mod:`briefd.hook.discover` treats as it treats such a value (not a string,
not a number, not false). Standard library only, but for the credential keys of
:mod:`briefd.settings.names`, read only as a whole file is kept (see below).

A prompt the hook answers in its own process (the first one, before the daemon serves) reads
the whole file as the settings read it (:func:`briefd.settings.raw.read_file`, ~9 ms with
``import yaml``); that mapping is kept too, beside the essentials (:func:`settings_file`), by
the same rule, and only while the same briefd reads it (another release, or another
``raw.py``, may check more). A file with a value ``marshal`` cannot hold, or with a secret in
it (a webhook secret, a database URL with its password), is read again each time.
"""

from __future__ import annotations

import marshal
import os

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook start-up
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

RECALL_KEYS = ("server", "server_timeout", "daemon")
SERVE_KEYS = ("host", "port")
RACY_SECONDS = 2.0
FORMAT = 2  # 2: serve.host and serve.port kept too (an entry of 1 lacks them: read again)
MAX_NAME = 200  # bytes of an entry's file name before it is a digest of the path instead
PLAIN = (str, int, float, bool, type(None))
SETTINGS_SUFFIX = ".settings"  # the entry of a file's whole mapping (:func:`settings_file`)


def essentials(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a config mapping the hook reads, in types ``marshal`` holds."""
    kept: dict[str, Any] = {}
    if "db" in mapping:
        kept["db"] = _plain(mapping["db"])
    for section, keys in (("recall", RECALL_KEYS), ("serve", SERVE_KEYS)):
        values = mapping.get(section)
        if isinstance(values, dict):
            kept[section] = {key: _plain(values[key]) for key in keys if key in values}
    return kept


def recalled(path: str, env: Mapping[str, str]) -> tuple[dict[str, Any] | None, object]:
    """(the remembered essentials of the config file at ``path`` or None, the file's stat
    key to remember a fresh reading under)."""
    key = _stat_key(path)
    if key is None:
        return None, None
    try:
        with open(entry(path, env), "rb") as stream:
            data = marshal.load(stream)
    except (OSError, EOFError, ValueError, TypeError):
        return None, key
    if not (isinstance(data, tuple) and len(data) == 4 and data[:3] == (FORMAT, path, key)):
        return None, key
    return (data[3] if isinstance(data[3], dict) else None), key


def remember(path: str, key: object, kept: dict[str, Any], env: Mapping[str, str]) -> None:
    """Keep ``kept`` for the file at ``path`` (whose stat was ``key``); silently nothing when
    the file is too young to trust its stat or the cache cannot be written."""
    _keep(entry(path, env), (FORMAT, path, key, kept))


def settings_file(path: str, env: Mapping[str, str]) -> tuple[dict[str, Any] | None, object]:
    """(the whole mapping of the settings file at ``path`` as this release read it, or None;
    the file's stat key to remember a fresh reading under)."""
    key = _stat_key(path)
    if key is None:
        return None, None
    try:
        with open(entry(path, env, SETTINGS_SUFFIX), "rb") as stream:
            data = marshal.load(stream)
    except (OSError, EOFError, ValueError, TypeError):
        return None, key
    if not (isinstance(data, tuple) and len(data) == 4):
        return None, key
    if data[:3] != (FORMAT, path, key) or not isinstance(data[3], tuple) or len(data[3]) != 2:
        return None, key
    reader, mapping = data[3]
    return (mapping if reader == _reader() and isinstance(mapping, dict) else None), key


def remember_settings_file(
    path: str, key: object, mapping: Mapping[str, Any], env: Mapping[str, str]
) -> None:
    """Keep the whole ``mapping`` read from the settings file at ``path`` (whose stat was
    ``key``) when ``marshal`` holds every value of it as it is, and it holds no secret (the
    cache is no place to copy one to); else nothing."""
    if _marshalled(mapping) and not _secret(mapping):
        _keep(entry(path, env, SETTINGS_SUFFIX), (FORMAT, path, key, (_reader(), mapping)))


def _reader() -> tuple[object, ...]:
    """What read a settings file: this release, and the module that reads it as installed (a
    reinstall or an edit of it reads every file again)."""
    from briefd.__about__ import __version__

    module = os.path.join(os.path.dirname(os.path.dirname(__file__)), "settings", "raw.py")
    return (__version__, *(_stat_key(module) or ()))


def _marshalled(value: object) -> bool:
    """Whether ``marshal`` gives ``value`` back as it is: plain values, in lists and dicts."""
    if isinstance(value, dict):
        return all(_marshalled(k) and _marshalled(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_marshalled(v) for v in value)
    return type(value) in PLAIN


def _secret(value: object, key: object = None) -> bool:
    """Whether a settings value may hold a secret: under a credential key (``token``,
    ``password``, ``webhook_secret``…: :data:`briefd.settings.names.CREDENTIAL_KEYS`, or a
    key ending in ``secret``), or a URL with an account in it (``postgresql://u:pw@host``,
    ``https://token@host``)."""
    from briefd.settings.names import CREDENTIAL_KEYS

    if isinstance(value, dict):
        return any(_secret(v, k) for k, v in value.items())
    if isinstance(value, list):
        return any(_secret(v, key) for v in value)
    named = str(key).lower() if isinstance(key, str) else ""
    if value is not None and (named in CREDENTIAL_KEYS or named.endswith("secret")):
        return True
    if isinstance(value, str) and "://" in value:
        return "@" in value.split("://", 1)[1].split("/", 1)[0]
    return False


def _stat_key(path: str) -> tuple[int, ...] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _keep(target: str, record: tuple[Any, ...]) -> None:
    """Write ``record`` (format, path, stat key, …) to ``target``, unless the file's stat is
    too young to trust or the cache cannot be written."""
    import time

    key = record[2]
    if not isinstance(key, tuple) or time.time() - key[3] / 1e9 < RACY_SECONDS:
        return
    partial = f"{target}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with open(descriptor, "wb") as stream:
            stream.write(marshal.dumps(record))
        os.replace(partial, target)
    except (OSError, ValueError):
        try:  # noqa: SIM105 (contextlib is one more import on the hook's path)
            os.unlink(partial)
        except OSError:
            pass


def entry(path: str, env: Mapping[str, str], suffix: str = "") -> str:
    """The cache file for the config file at ``path`` (an absolute path): its essentials, or
    with ``suffix`` :data:`SETTINGS_SUFFIX` its whole mapping."""
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    name = path.replace("%", "%25").replace(os.sep, "%2F")
    if len(name.encode()) > MAX_NAME:
        import hashlib

        name = hashlib.sha256(path.encode()).hexdigest()
    return os.path.join(base, "briefd", "hook", name + suffix + ".marshal")


def _plain(value: object) -> object:
    return value if isinstance(value, PLAIN) else None
