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
not a number, not false). Standard library only.
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
    try:
        stat = os.stat(path)
    except OSError:
        return None, None
    key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
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
    import time

    if not isinstance(key, tuple) or time.time() - key[3] / 1e9 < RACY_SECONDS:
        return
    target = entry(path, env)
    partial = f"{target}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with open(descriptor, "wb") as stream:
            stream.write(marshal.dumps((FORMAT, path, key, kept)))
        os.replace(partial, target)
    except (OSError, ValueError):
        try:  # noqa: SIM105 (contextlib is one more import on the hook's path)
            os.unlink(partial)
        except OSError:
            pass


def entry(path: str, env: Mapping[str, str]) -> str:
    """The cache file for the config file at ``path`` (an absolute path)."""
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    name = path.replace("%", "%25").replace(os.sep, "%2F")
    if len(name.encode()) > MAX_NAME:
        import hashlib

        name = hashlib.sha256(path.encode()).hexdigest()
    return os.path.join(base, "briefd", "hook", name + ".marshal")


def _plain(value: object) -> object:
    return value if isinstance(value, PLAIN) else None
