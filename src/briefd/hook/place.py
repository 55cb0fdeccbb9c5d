"""Where the local recall daemon of an index keeps its files (I10): next to the index, so one
index has one daemon whichever project, shell or agent asks.

For ``/p/.briefd/briefd.db``: ``briefd.db.recall.lock`` (held by the running daemon; whoever
takes it starts one), ``briefd.db.recall.sock`` (the Unix socket it listens on),
``briefd.db.recall.json`` (its pid, socket and start time, for ``briefd recall --status``) and
``briefd.db.recall.log``, and ``briefd.db.recall.stalls`` while prompts find it not answering. A socket path longer than the kernel takes (~104 bytes) goes to a
private runtime directory under a name derived from the index path instead; the state file says
where. Pure and standard library only: the hook computes this on every prompt.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook start-up
if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS (with the NUL)
SUFFIX = ".recall"


class DaemonFiles:
    """The files of the daemon serving ``index`` (an absolute path)."""

    __slots__ = ("index", "lock", "log", "socket", "stalls", "state")

    def __init__(self, index: str, socket: str) -> None:
        self.index = index
        self.socket = socket
        self.lock = index + SUFFIX + ".lock"
        self.state = index + SUFFIX + ".json"
        self.log = index + SUFFIX + ".log"
        self.stalls = index + SUFFIX + ".stalls"  # prompts in a row it did not answer


def daemon_files(index: str, env: Mapping[str, str]) -> DaemonFiles:
    beside = index + SUFFIX + ".sock"
    if len(os.fsencode(beside)) <= MAX_SOCKET_PATH:  # the bytes the kernel takes
        return DaemonFiles(index, beside)
    return DaemonFiles(index, os.path.join(runtime_dir(env), _digest(index) + ".sock"))


def runtime_dir(env: Mapping[str, str]) -> str:
    """``$XDG_RUNTIME_DIR/briefd``, else ``/tmp/briefd-<uid>`` (created private by the daemon)."""
    if env.get("XDG_RUNTIME_DIR"):
        return os.path.join(env["XDG_RUNTIME_DIR"], "briefd")
    return os.path.join("/tmp", f"briefd-{os.getuid()}")


def socket_dir_problem(files: DaemonFiles) -> str | None:
    """Why the daemon may not listen where ``files`` puts its socket, or None. Beside the index
    it may; in the runtime directory only when that folder is this user's and closed to others
    (or not there yet: the daemon creates it so). In a folder another user owns or may write
    (``/tmp/briefd-<uid>`` made by someone else), that user could put a socket of their own
    in its place, read every prompt and answer it."""
    if files.socket == files.index + SUFFIX + ".sock":
        return None
    folder = os.path.dirname(files.socket)
    try:
        found = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{folder} cannot be checked ({exc.strerror or exc})"
    if (found.st_mode & 0o170000) != 0o040000:  # S_IFMT, S_IFDIR: a link or a file
        return f"{folder} is not a folder"
    if found.st_uid != os.getuid():
        return f"{folder} belongs to another user (uid {found.st_uid})"
    if found.st_mode & 0o077:
        return f"{folder} is open to other users (mode {found.st_mode & 0o777:o})"
    return None


def _digest(index: str) -> str:
    import hashlib

    return hashlib.sha256(os.fsencode(index)).hexdigest()[:24]


def config_key(config: str | None) -> str:
    """The settings file a daemon answers with, as the hook and the daemon compare it: its
    real path, "" for none. One index may be read by projects whose settings differ (the
    user's default index, each project's ``default_scopes``): a daemon answers only prompts
    that found its file."""
    return os.path.realpath(config) if config else ""


# BRIEFD_* variables no daemon answers by: its index and settings file are compared apart, and
# the server, its wait, the daemon switch and the API token are the hook's own
NOT_THE_DAEMONS = frozenset(
    {
        "BRIEFD_CONFIG",
        "BRIEFD_DB",
        "BRIEFD_API_TOKEN",
        "BRIEFD_RECALL__SERVER",
        "BRIEFD_RECALL__SERVER_TIMEOUT",
        "BRIEFD_RECALL__DAEMON",
    }
)


def variables_key(env: Mapping[str, str]) -> str:
    """The ``BRIEFD_*`` settings variables of ``env`` (``BRIEFD_RECALL__MAX_TOKENS``…) as the
    hook and the daemon compare them: a digest of their names and values, "" for none. The
    daemon's settings are those of the hook that started it; a prompt whose variables differ
    (set since, or another agent's) got those, its own ignored, until the daemon idled out."""
    found = sorted(
        (name, value)
        for name, value in env.items()
        if name.startswith("BRIEFD_") and name not in NOT_THE_DAEMONS
    )
    if not found:
        return ""
    import hashlib

    return hashlib.sha256(repr(found).encode("utf-8")).hexdigest()[:24]


def config_signature(config: str | None) -> list[int]:
    """The config file's (mtime ns, size), [] without one or when it is unreadable: a daemon
    that failed is started again at once when this changed (the user fixed the config)."""
    if not config:
        return []
    try:
        found = os.stat(config)
    except OSError:
        return []
    return [found.st_mtime_ns, found.st_size]
