"""A warm ``python -m briefd`` for the suite: one process per pytest worker imports the command
line once, then forks a child for each command a test runs.

Each child is a real process: it gets the test's pipes as its stdin, stdout and stderr, the
test's working folder, environment and arguments, runs ``briefd/__main__.py`` as ``python -m``
does, and ends as the interpreter ends (non-daemon threads joined, ``atexit`` run, streams
flushed, 120 when the last flush fails). What it skips is the ~0.6 s of imports every command
pays first (numpy, typer, rich, the API), which made up most of the suite's hundreds of CLI
runs. Tests about imports, interpreter start-up or a process's command line spawn for real.

:func:`run` spawns for real when no warm process has the environment asked for: each set of
variables read at start-up (anything but briefd's own settings, ``HOME``, ``XDG_*``, ``GIT_*``)
has a warm process of its own, from the second time a test asks for it.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import json
import locale
import os
import runpy
import select
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parent.parent

# What a command reads at run time: a warm child takes these from the test. Any other variable
# may have been read at start-up (PYTHON*, the locale, rich's Console made at import reads
# COLUMNS, TERM, NO_COLOR…): each such environment has a warm process of its own, started the
# second time a test asks for it (a one-off is spawned), at most MAX_WARM of them per worker
# besides the worker's own.
RUNTIME_KEYS = ("BRIEFD_", "HOME", "XDG_", "GIT_", "PYTEST_")
MAX_WARM = 3
# What the warm process imports: the command line, and the service stack serve and mcp load
PRELOADED = ("briefd.cli.launch", "briefd.cli.main", "briefd.cli.serve", "briefd.service.app")

Stream = int | IO[Any] | None

_lock = threading.Lock()
_warm: dict[tuple[tuple[str, str], ...], Zygote] = {}
_asked: dict[tuple[tuple[str, str], ...], int] = {}


def key_of(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Which warm process serves ``env``: its start-up variables."""
    return tuple(sorted(startup_env(env).items()))


def startup_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.startswith(RUNTIME_KEYS)}


def run(
    args: list[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([sys.executable, "-m", "briefd", *args], capture_output=True,
    text=True, …)``, answered by a warm child when there is one for ``env``."""
    zygote = warm(env)
    if zygote is None:
        return subprocess.run(
            [sys.executable, "-m", "briefd", *args],
            cwd=cwd,
            env=dict(env),
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    return zygote.run(args, cwd=str(cwd), env=dict(env), input=input, timeout=timeout)


def command(args: list[str], env: Mapping[str, str]) -> tuple[str, list[str]]:
    """The command and arguments that run ``briefd ARGS`` in ``env`` for a third party that
    spawns it itself (the MCP SDK's stdio client): :mod:`tests.warm_exec` with a warm process
    for ``env``, or ``python -m briefd``."""
    zygote = warm(env)
    if zygote is None:
        return sys.executable, ["-m", "briefd", *args]
    return sys.executable, ["-S", str(REPO / "tests" / "warm_exec.py"), zygote.address, *args]


def warm(env: Mapping[str, str]) -> Zygote | None:
    """The warm process for ``env``'s start-up variables; None where there is none (yet)."""
    if os.environ.get("TEST_BRIEFD_COLD") or not hasattr(os, "fork"):
        return None
    key, usual = key_of(env), key_of(os.environ)  # the worker's own: always warm, not counted
    with _lock:
        zygote = _warm.get(key)
        if zygote is not None and zygote.process.poll() is None:
            return zygote
        _asked[key] = _asked.get(key, 0) + 1
        others = sum(1 for known in _warm if known != usual)
        if zygote is None and key != usual and (others >= MAX_WARM or _asked[key] < 2):
            return None
        _warm[key] = Zygote({k: v for k, v in env.items() if not k.startswith("BRIEFD_")})
        return _warm[key]


class Zygote:
    def __init__(self, env: dict[str, str]) -> None:
        self.address = str(Path(tempfile.mkdtemp(prefix="briefd-zygote-")) / "socket")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.zygote", self.address],
            cwd=REPO,
            env=env,
            # pipes, as a spawned command's usually are: the interpreter makes its std streams
            # at start, and one made over /dev/null thinks it can seek (reconfigure then fails
            # with "Illegal seek" on the test's pipe); nothing is written to them
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while not Path(self.address).exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the warm briefd did not start ({self.process.returncode})")
            time.sleep(0.01)
        atexit.register(self.close)

    def close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(Path(self.address).parent, ignore_errors=True)

    def spawn(
        self, args: list[str], cwd: str, env: dict[str, str], fds: list[int], session: bool = False
    ) -> tuple[int, socket.socket]:
        """A child on ``fds`` (its stdin, stdout, stderr): its pid, and the connection that
        says its return code once it ended."""
        request = json.dumps({"args": args, "cwd": cwd, "env": env, "session": session}).encode()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(self.address)
        socket.send_fds(conn, [len(request).to_bytes(4, "big") + request], fds)
        return int(_line(conn)), conn

    def run(
        self, args: list[str], *, cwd: str, env: dict[str, str], input: str | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        encoding = locale.getpreferredencoding(False)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if input is not None else (os.open(os.devnull, os.O_RDONLY), -1)
        pid, conn = self.spawn(args, cwd, env, [in_r, out_w, err_w])
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        with conn:
            if in_w >= 0:
                writer = threading.Thread(target=_feed, args=(in_w, input or "", encoding))
                writer.start()
            try:
                out, err = _collect(out_r, err_r, time.monotonic() + timeout)
            except subprocess.TimeoutExpired:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(["briefd", *args], timeout) from None
            finally:
                os.close(out_r)
                os.close(err_r)
            returncode = int(_line(conn))
        return subprocess.CompletedProcess(
            [sys.executable, "-m", "briefd", *args],
            returncode,
            _text(out, encoding),
            _text(err, encoding),
        )


def popen(
    args: list[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    stdin: Stream = None,
    stdout: Stream = None,
    stderr: Stream = None,
    start_new_session: bool = False,
) -> subprocess.Popen[str] | WarmProcess:
    """``subprocess.Popen([sys.executable, "-m", "briefd", *args], text=True, …)`` for a
    server a test starts, signals and waits for: a warm child when ``env`` allows it. Each
    stream is ``subprocess.PIPE``, ``DEVNULL``, ``STDOUT`` (stderr), a file or descriptor, or
    None (the test's own)."""
    zygote = warm(env)
    if zygote is None:
        return subprocess.Popen(
            [sys.executable, "-m", "briefd", *args],
            cwd=cwd,
            env=dict(env),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            text=True,
            start_new_session=start_new_session,
        )
    return WarmProcess(
        zygote, args, str(cwd), dict(env), (stdin, stdout, stderr), start_new_session
    )


class WarmProcess:
    """The part of :class:`subprocess.Popen` the suite's server tests use, over a warm child."""

    def __init__(
        self,
        zygote: Zygote,
        args: list[str],
        cwd: str,
        env: dict[str, str],
        streams: tuple[Stream, Stream, Stream],
        session: bool,
    ) -> None:
        encoding = locale.getpreferredencoding(False)
        self.args = [sys.executable, "-m", "briefd", *args]
        self.returncode: int | None = None
        given, ours, kept = [], [], []
        for target, how in enumerate(streams):
            mine = -1
            if how == subprocess.PIPE:
                read, write = os.pipe()
                child, mine = (read, write) if target == 0 else (write, read)
                kept.append(child)
            elif how == subprocess.DEVNULL:
                child = os.open(os.devnull, os.O_RDWR)
                kept.append(child)
            elif how == subprocess.STDOUT:
                child = given[1]
            elif how is None:
                child = target
            else:
                child = how if isinstance(how, int) else how.fileno()
            given.append(child)
            ours.append(mine)
        self.pid, self._conn = zygote.spawn(args, cwd, env, given, session)
        for fd in kept:
            os.close(fd)
        self.stdin: Any = _stream(ours[0], "w", encoding)
        self.stdout: Any = _stream(ours[1], "r", encoding)
        self.stderr: Any = _stream(ours[2], "r", encoding)

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._conn], [], [], 0)[0]:
            self.returncode = int(_line(self._conn))
            self._conn.close()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._conn], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self.returncode = int(_line(self._conn))
            self._conn.close()
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(
        self, input: str | None = None, timeout: float | None = None
    ) -> tuple[str | None, str | None]:
        if self.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                if input:
                    self.stdin.write(input)
                self.stdin.close()
        said: dict[str, str] = {}
        readers = [
            threading.Thread(target=_read_all, args=(stream, name, said))
            for name, stream in (("out", self.stdout), ("err", self.stderr))
            if stream is not None
        ]
        for reader in readers:
            reader.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        for reader in readers:
            reader.join(None if deadline is None else max(0, deadline - time.monotonic()))
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(None if deadline is None else max(0, deadline - time.monotonic()))
        return said.get("out"), said.get("err")

    def __enter__(self) -> WarmProcess:
        return self

    def __exit__(self, *_: object) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        self.wait()


def _read_all(stream: io.TextIOWrapper, name: str, said: dict[str, str]) -> None:
    """Read ``stream`` to its end and close it, as ``Popen.communicate`` does."""
    with stream:
        said[name] = stream.read()


def _stream(fd: int, mode: str, encoding: str) -> io.TextIOWrapper | None:
    """A text stream over our end of a pipe, as ``Popen(text=True)`` makes it."""
    if fd < 0:
        return None
    if mode == "w":
        return io.TextIOWrapper(io.FileIO(fd, "w"), encoding=encoding, write_through=True)
    return io.TextIOWrapper(io.BufferedReader(io.FileIO(fd, "r")), encoding=encoding)


def _feed(fd: int, text: str, encoding: str) -> None:
    try:
        with open(fd, "wb") as stream:
            stream.write(text.encode(encoding))
    except BrokenPipeError:
        pass


def _collect(out_r: int, err_r: int, deadline: float) -> tuple[bytes, bytes]:
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired("briefd", 0)
            for key, _ in selector.select(left):
                data = os.read(key.fd, 65536)
                if data:
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r])


def _text(data: bytes, encoding: str) -> str:
    return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")


def _line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(64)
        if not chunk:
            raise RuntimeError("the warm briefd went away")
        data += chunk
    return data


# -- the warm process ------------------------------------------------------------------------


def serve(address: str) -> None:
    """Import what a command loads, then fork a child per connection; report each child's pid
    and, once it ended, its return code (as ``subprocess`` gives it) on the connection."""
    # as the interpreter started it (PEP 538 may have set LC_CTYPE), before an import sets any
    # (KMP_DUPLICATE_LIB_OK): what tests.warm_exec compares its own environment with
    Path(address + ".env").write_text(json.dumps(startup_env(os.environ)), encoding="utf-8")
    for module in PRELOADED:
        importlib.import_module(module)

    waker_r, waker_w = socket.socketpair()
    waker_w.setblocking(False)
    signal.set_wakeup_fd(waker_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address + ".new")
    listener.listen(64)
    Path(address + ".new").rename(address)
    waiting: dict[int, socket.socket] = {}
    parent = os.getppid()
    with selectors.DefaultSelector() as selector:
        selector.register(listener, selectors.EVENT_READ)
        selector.register(waker_r, selectors.EVENT_READ)
        while True:
            if os.getppid() != parent:  # the worker is gone (killed): so is this
                return
            for key, _ in selector.select(1.0):
                if key.fileobj is waker_r:
                    waker_r.recv(4096)
                    continue
                conn, _ = listener.accept()
                pid = _start(conn, [listener, waker_r, waker_w, *waiting.values()])
                if pid is not None:
                    waiting[pid] = conn
            _reap(waiting)


def _start(conn: socket.socket, inherited: list[socket.socket]) -> int | None:
    head, fds, _, _ = socket.recv_fds(conn, 4, 3)
    size = int.from_bytes(head, "big")
    body = b""
    while len(body) < size:
        body += conn.recv(size - len(body))
    request = json.loads(body)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for sock in [conn, *inherited]:
            sock.close()
        _child(request, fds)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    return pid


def _reap(waiting: dict[int, socket.socket]) -> None:
    while waiting:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is not None:
            with contextlib.suppress(OSError):  # the test gave up on it (a timeout)
                conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            conn.close()


def _child(request: dict[str, Any], fds: list[int]) -> None:
    """The forked child: never returns into the warm process's loop."""
    code = 1
    try:
        code = _command(request, fds)
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def _command(request: dict[str, Any], fds: list[int]) -> int:
    signal.set_wakeup_fd(-1)
    for signum in (signal.SIGCHLD, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    sys.stdin = sys.__stdin__ = _reopened(sys.stdin, 0, "r")
    sys.stdout = sys.__stdout__ = _reopened(sys.stdout, 1, "w")
    sys.stderr = sys.__stderr__ = _reopened(sys.stderr, 2, "w")
    if request.get("session"):
        os.setsid()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = request["cwd"]
    sys.argv = ["-m", *request["args"]]
    try:
        runpy.run_module("briefd", run_name="__main__", alter_sys=True)
    except SystemExit as done:
        return _finish(_exit_code(done.code))
    except KeyboardInterrupt:  # as the interpreter ends on one: killed by SIGINT
        sys.excepthook(*sys.exc_info())
        _finish(1)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        return _finish(1)
    return _finish(0)


def _reopened(old: Any, fd: int, mode: str) -> io.TextIOWrapper:
    """A std stream over the test's ``fd`` made as the interpreter makes it at start-up, with
    the warm process's encoding and buffering: one made over another file would keep what it
    learnt of that one (a /dev/null or a log file can seek; reconfiguring a stream that thinks
    so fails with "Illegal seek" on a pipe)."""
    raw = not isinstance(old.buffer, io.BufferedIOBase)  # PYTHONUNBUFFERED: stdout, stderr raw
    binary = open(fd, mode + "b", buffering=0 if raw else -1, closefd=False)  # noqa: SIM115
    line = old.line_buffering if fd == 2 else (not raw and fd == 1 and os.isatty(fd))
    return io.TextIOWrapper(
        binary,
        encoding=old.encoding,
        errors=old.errors,
        newline="\n",
        line_buffering=line,
        write_through=old.write_through,
    )


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish(code: int) -> int:
    """What the interpreter does after ``__main__``: join threads, run ``atexit``, flush."""
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            if stream is sys.stdout:
                code = 120
    return code


if __name__ == "__main__":
    serve(sys.argv[1])
