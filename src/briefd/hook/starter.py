"""The hook's side of the local recall daemon (I10): ask it, start it, show it, stop it.

One daemon per index: the daemon holds an exclusive ``flock`` on the index's lock file (see
:mod:`briefd.hook.place`) for as long as it runs. A hook that finds no daemon answering takes
that lock without waiting; when it gets it, it spawns the daemon and hands it the locked file
descriptor, so the lock passes from hook to daemon without a gap in which a second hook could
start another. A hook that cannot take the lock knows a daemon runs or is starting, and answers
in-process. The kernel drops the lock when the daemon dies however it dies, so a killed daemon
is restarted by the next prompt.

The daemon is spawned in a session of its own with stdin on ``/dev/null`` and stdout/stderr on
its log file: it never holds the agent's pipes (an agent waits for the hook's stdout to close).
Standard library only, like the rest of the fast path.
"""

from __future__ import annotations

import os
import sys
import time

from briefd.hook.client import PATH, OlderDaemon, ServerTimeout, ServerUnavailable, post_unix
from briefd.hook.place import DaemonFiles, config_key, config_signature

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook start-up
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

ASK_TIMEOUT = 1.0  # seconds a warm daemon gets to answer; then the hook fails open
STALLS_TO_REPLACE = 3  # prompts in a row a daemon answered none of before a hook ends it
RETRY_AFTER = 300.0  # seconds after a daemon failed before a prompt starts another
DAEMON_MODULE = "briefd.hook.daemon"


def ask(
    files: DaemonFiles, body: bytes, fmt: str, config: str | None, variables: str = ""
) -> bytes | None:
    """The daemon's answer, or None when no daemon of this index, settings file (``config``)
    and ``BRIEFD_*`` variables (``variables``: :func:`variables_key`) answers. A daemon that
    accepts the prompt and does not answer within ``ASK_TIMEOUT`` raises ``ServerTimeout``;
    after ``STALLS_TO_REPLACE`` such prompts in a row with no answer meanwhile, even a late
    one (stopped, deadlocked, stuck on I/O: the daemon clears the count as it answers) the
    hook ends it, so the next prompt starts a new one instead of waiting a second for nothing.
    A daemon an earlier briefd left running (another protocol, or none) is ended, not used:
    its answers come from the old code, or are thrown away while it never goes idle."""
    try:
        where = (files.socket, files.index, body, ASK_TIMEOUT, PATH + fmt)
        reply = post_unix(*where, config_key(config), variables)
    except OlderDaemon:
        _signal(files)  # the prompt after its exit starts this briefd's
        return None
    except ServerUnavailable:
        return None
    except ServerTimeout as exc:
        raise ServerTimeout(f"{exc}{_stalled(files)}") from None
    if os.path.exists(files.stalls):
        _unlink(files.stalls)
    return reply


def _stalled(files: DaemonFiles) -> str:
    """Count one more prompt the daemon did not answer; at ``STALLS_TO_REPLACE`` end it. What
    to add to the timeout's message."""
    try:
        with open(files.stalls, encoding="ascii") as stream:
            count = int(stream.read().strip() or 0) + 1
    except (OSError, ValueError):
        count = 1
    if count < STALLS_TO_REPLACE:
        try:  # private, as the daemon's other files are, whatever the agent's umask
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
            with open(os.open(files.stalls, flags, 0o600), "w", encoding="ascii") as stream:
                stream.write(str(count))
        except OSError:
            pass
        return f" ({count} prompt{'s' if count > 1 else ''} in a row; at {STALLS_TO_REPLACE} it is ended)"
    _unlink(files.stalls)
    pid = daemon_pid(files)
    if pid is None:
        return f" ({count} prompts in a row; `briefd recall --stop` ends it)"
    _signal(files, kill=True)
    return f" ({count} prompts in a row): ended it (pid {pid}); the next prompt starts another"


def _unlink(path: str) -> None:
    try:  # noqa: SIM105 (contextlib is one more import on every prompt)
        os.unlink(path)
    except OSError:
        pass


def start(files: DaemonFiles, config: str | None, cwd: str, env: Mapping[str, str]) -> bool | str:
    """Start the daemon unless one runs or is starting. True when a daemon runs, starts, or
    is being started by another hook; else why none can run here (no lock file possible: a
    read-only index directory, say)."""
    import fcntl

    if _failed_recently(files, config):
        return True
    try:
        lock = os.open(files.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        return no_lock(files, exc)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        return True
    except OSError as exc:
        os.close(lock)
        return no_lock(files, exc)
    try:
        _spawn(files, lock, config, cwd, env)
    finally:
        os.close(lock)  # the daemon holds the lock through its own copy of the descriptor
    return True


def no_lock(files: DaemonFiles, exc: OSError) -> str:
    """Why no daemon can run for this index: its lock file cannot be made or taken."""
    return f"cannot lock {files.lock} ({exc.strerror or type(exc).__name__})"


def lock_problem(files: DaemonFiles) -> str | None:
    """What keeps a daemon from running for this index (None: nothing): the lock file cannot
    be opened or made (a read-only index folder). ``--status`` asks, as a prompt would find,
    and leaves no lock file behind when there was none."""
    import errno

    try:
        os.close(os.open(files.lock, os.O_RDWR | os.O_CLOEXEC))
    except FileNotFoundError:
        folder = os.path.dirname(files.lock) or "."
        if not os.access(folder, os.W_OK | os.X_OK):
            return no_lock(files, PermissionError(errno.EACCES, os.strerror(errno.EACCES)))
    except OSError as exc:
        return no_lock(files, exc)
    return None


def _spawn(
    files: DaemonFiles, lock: int, config: str | None, cwd: str, env: Mapping[str, str]
) -> None:
    argv = [sys.executable, "-m", DAEMON_MODULE, "--db", files.index, "--lock-fd", str(lock)]
    argv += ["--cwd", cwd] + (["--config", os.path.abspath(config)] if config else [])
    log = os.open(files.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    os.set_inheritable(lock, True)
    actions: list[tuple[Any, ...]] = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, log, 1),
        (os.POSIX_SPAWN_DUP2, log, 2),
    ]
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited(lock)]
    try:
        pid = os.posix_spawn(sys.executable, argv, dict(env), file_actions=actions, setsid=True)
    except NotImplementedError:  # no POSIX_SPAWN_SETSID: the daemon calls setsid() itself
        pid = os.posix_spawn(sys.executable, argv, dict(env), file_actions=actions)
    finally:
        os.close(log)
    _record_starting(files, pid)


def _record_starting(files: DaemonFiles, pid: int) -> None:
    """The daemon's pid in the state file as soon as it is spawned (the daemon writes it again
    once its imports are done): ``briefd recall --stop`` or ``--status`` in the ~0.3 s before
    found no pid, waited 5 s and ended it with SIGKILL, or said "starting" without a pid.
    Written whole (a file of its own, moved over the state file)."""
    import json

    since = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())  # as the daemon's iso()
    state = json.dumps({"pid": pid, "index": files.index, "starting": since})
    temporary = f"{files.state}.{os.getpid()}"
    try:
        with open(temporary, "w", encoding="utf-8") as stream:
            stream.write(state)
        os.replace(temporary, files.state)
    except OSError:  # the daemon writes it too
        _unlink(temporary)


def _failed_recently(files: DaemonFiles, config: str | None) -> bool:
    """A daemon of this index failed less than ``RETRY_AFTER`` ago, and the config file it
    read has not changed since (an edit may be the fix: the next prompt tries again)."""
    state = _state(files)
    failed = state.get("failed")
    if not isinstance(failed, int | float) or not 0 <= time.time() - failed < RETRY_AFTER:
        return False
    return state.get("config") == config_signature(config)


def forget_failure(files: DaemonFiles) -> bool:
    """Drop a failed daemon's record, so the next prompt starts one (``briefd recall --stop``,
    and a completed ``briefd index``: either may be the fix). True when there was one."""
    if "failed" not in _state(files):
        return False
    try:
        os.unlink(files.state)
    except OSError:
        return False
    return True


def _state(files: DaemonFiles) -> dict[str, Any]:
    """The state file's record ({} when there is none or it is unreadable)."""
    if not os.path.exists(files.state):
        return {}
    import json

    try:
        with open(files.state, encoding="utf-8") as stream:
            state = json.load(stream)
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _inherited(keep: int) -> list[int]:
    """Descriptors beyond stdio this process would pass on (an agent may have left some open
    for the hook): the daemon must not hold any of them."""
    try:
        candidates = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        candidates = list(range(3, 256))
    found = []
    for fd in candidates:
        try:
            if fd > 2 and fd != keep and os.get_inheritable(fd):
                found.append(fd)
        except OSError:
            continue
    return found


def status(files: DaemonFiles, config: str | None = None, variables: str = "") -> dict[str, Any]:
    """What ``briefd recall --status`` shows: the daemon's own report when it answers (and
    ``yours``, the settings file found here, when the daemon answers with another;
    ``other_variables`` when its ``BRIEFD_*`` variables are not ``variables``), else whether
    one is starting (the lock is held) or none runs."""
    import json

    where = (files.socket, files.index, b"{}", ASK_TIMEOUT, "/status")
    try:
        report = json.loads(post_unix(*where, variables=variables))
    except ServerTimeout:  # it accepts but does not answer: stopped (SIGSTOP) or wedged
        pid = _state(files).get("pid")
        return {"state": "wedged", "pid": pid, "index": files.index, "log": files.log}
    except OlderDaemon:  # an earlier briefd's, which the next prompt ends
        pid = daemon_pid(files)
        return {"state": "older", "pid": pid, "index": files.index, "log": files.log}
    except ServerUnavailable:
        state = "starting" if _locked(files) else "stopped"
        report = {"state": state, "index": files.index, "socket": files.socket, "log": files.log}
        failed = _state(files)
        pid = daemon_pid(files) if state == "starting" else None
        if pid is not None:  # loading its index and model (a slow embedding service: longer)
            report |= {"pid": pid, "since": failed.get("starting", "")}
        if state == "stopped" and "failed" in failed:
            report |= {"state": "failed", "error": failed.get("error", "")}
            report["retry_in_s"] = max(0, round(RETRY_AFTER - (time.time() - failed["failed"])))
        return report
    if report.get("settings", "") != config_key(config):  # its prompts are answered here
        report["yours"] = config_key(config)
    return {"state": "running", **report}


def stop(files: DaemonFiles) -> str:
    """Stop the daemon of this index: asked over its socket, or — when it does not answer —
    signalled by the pid its state file names (a wedged daemon cannot refuse SIGKILL)."""
    try:
        post_unix(files.socket, files.index, b"{}", ASK_TIMEOUT, "/stop")
    except ServerUnavailable:
        pass
    except Exception:  # a wedged daemon: fall through to signals
        _signal(files)
    else:
        return _await_exit(files)
    if not _locked(files):
        left = _clear_leftovers(files)
        return f"no recall daemon runs for {files.index}{left}" + _forgotten(files)
    _signal(files)
    return _await_exit(files)


def _clear_leftovers(files: DaemonFiles) -> str:
    """Remove the socket and state file a daemon ended by SIGKILL (by hand, by the third
    unanswered prompt, by ``--stop`` itself) or a crash left beside its index, and say so.
    Only while holding the lock: no daemon runs or starts meanwhile, so none of them is a
    live daemon's. A failure record stays (:func:`_forgotten` drops it, saying so)."""
    import fcntl
    import stat

    try:
        fd = os.open(files.lock, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return ""
    removed = []
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            if stat.S_ISSOCK(os.lstat(files.socket).st_mode):
                os.unlink(files.socket)
                removed.append("socket")
        except OSError:
            pass
        if _state(files) and "failed" not in _state(files):
            _unlink(files.state)
            removed.append("state file")
    except OSError:  # a daemon took the lock meanwhile: its files are live
        return ""
    finally:
        os.close(fd)
    return f" (removed the {' and '.join(removed)} a killed one left)" if removed else ""


def _forgotten(files: DaemonFiles) -> str:
    """Forget a recorded failure (the one a daemon may write as it dies) and say so."""
    forgot = forget_failure(files)
    return " (its failure is forgotten: the next prompt starts one)" if forgot else ""


def _await_exit(files: DaemonFiles, seconds: float = 5.0) -> str:
    deadline = time.monotonic() + seconds
    while _locked(files) and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = daemon_pid(files) if _locked(files) else None
    if pid is not None:
        _signal(files, kill=True)
        while _locked(files) and time.monotonic() < deadline + seconds:
            time.sleep(0.05)
    _unlink(files.stalls)
    if _locked(files):  # no pid to signal, or one SIGKILL does not end (stuck in the kernel)
        which = f"pid {pid}" if pid else f"no pid known: the process holding {files.lock}"
        return f"the recall daemon of {files.index} did not stop ({which}); see {files.log}"
    _clear_leftovers(files)  # one stopped before its handlers were set leaves its state file
    left = ""
    if pid is not None:
        left = f" (it did not stop within {seconds:g} s: ended it with SIGKILL, pid {pid})"
    return f"stopped the recall daemon of {files.index}{left}" + _forgotten(files)


def _signal(files: DaemonFiles, kill: bool = False) -> None:
    import signal

    pid = daemon_pid(files)
    if pid is None:
        return
    try:
        if kill:
            os.kill(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGCONT)  # a stopped process takes SIGTERM only once resumed
            os.kill(pid, signal.SIGTERM)
    except OSError:
        pass


def daemon_pid(files: DaemonFiles) -> int | None:
    """The pid in the state file, if that process is still this index's daemon."""
    pid = _state(files).get("pid")
    if not isinstance(pid, int):
        return None
    if not os.path.isdir("/proc"):  # no cmdline to check: trust the pid while the lock is held
        return pid if _locked(files) else None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as stream:
            cmdline = stream.read()
    except OSError:
        return None
    found = DAEMON_MODULE.encode() in cmdline and os.fsencode(files.index) in cmdline
    return pid if found else None


def _locked(files: DaemonFiles) -> bool:
    """Whether a daemon holds the lock (running, or starting)."""
    import fcntl

    try:
        fd = os.open(files.lock, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False
