"""A warm ``python -m briefd`` for the suite: one process per pytest worker imports the command
line once, then forks a child for each command a test runs.

Each child is a real process: it gets the test's pipes as its stdin, stdout and stderr, the
test's working folder, environment and arguments, runs ``briefd/__main__.py`` as ``python -m``
does, and ends as the interpreter ends (non-daemon threads joined, ``atexit`` run, streams
flushed, 120 when the last flush fails). What it skips is the ~0.6 s of imports every command
pays first (numpy, typer, rich, the API), which made up most of the suite's hundreds of CLI
runs. Tests about imports, interpreter start-up or a process's command line spawn for real.

:func:`run` falls back to a real spawn when the environment asked for differs from the warm
process's in anything read at start-up: anything but briefd's own settings, ``HOME``, ``XDG_*``, ``GIT_*``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import runpy
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# What a command reads at run time: a warm child takes these from the test. Any other variable
# may have been read at start-up (PYTHON*, the locale, rich's Console made at import reads
# COLUMNS, TERM, NO_COLOR…): a test that sets one differently gets a real spawn.
RUNTIME_KEYS = ("BRIEFD_", "HOME", "XDG_", "GIT_", "PYTEST_")

_lock = threading.Lock()
_warm: Zygote | None = None


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
    text=True, …)``, answered by a warm child when ``env`` allows it."""
    zygote = warm()
    if zygote is None or startup_env(env) != zygote.startup:
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


def warm() -> Zygote | None:
    """This worker's warm process, started on first use; None where fork is not the way."""
    global _warm
    if os.environ.get("BRIEFD_TEST_COLD") or not hasattr(os, "fork"):
        return None
    with _lock:
        if _warm is None or _warm.process.poll() is not None:
            _warm = Zygote()
        return _warm


class Zygote:
    def __init__(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
        self.startup = startup_env(env)
        self.address = str(Path(tempfile.mkdtemp(prefix="briefd-zygote-")) / "socket")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.zygote", self.address],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not Path(self.address).exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the warm briefd did not start ({self.process.returncode})")
            time.sleep(0.01)
        atexit.register(self.close)

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(Path(self.address).parent, ignore_errors=True)

    def run(
        self, args: list[str], *, cwd: str, env: dict[str, str], input: str | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        encoding = locale.getpreferredencoding(False)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if input is not None else (os.open(os.devnull, os.O_RDONLY), -1)
        request = json.dumps({"args": args, "cwd": cwd, "env": env}).encode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(self.address)
            socket.send_fds(conn, [len(request).to_bytes(4, "big") + request], [in_r, out_w, err_w])
            for fd in (in_r, out_w, err_w):
                os.close(fd)
            pid = int(_line(conn))
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
    import briefd.cli.launch
    import briefd.cli.main  # noqa: F401

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
    with selectors.DefaultSelector() as selector:
        selector.register(listener, selectors.EVENT_READ)
        selector.register(waker_r, selectors.EVENT_READ)
        while True:
            for key, _ in selector.select():
                if key.fileobj is waker_r:
                    waker_r.recv(4096)
                    continue
                conn, _ = listener.accept()
                pid = _start(conn, [listener, waker_r, waker_w])
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
    signal.set_wakeup_fd(-1)
    for signum in (signal.SIGCHLD, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = request["cwd"]
    sys.argv = ["-m", *request["args"]]
    code = 0
    try:
        runpy.run_module("briefd", run_name="__main__", alter_sys=True)
    except SystemExit as done:
        code = _exit_code(done.code)
    except KeyboardInterrupt:  # as the interpreter ends on one: killed by SIGINT
        sys.excepthook(*sys.exc_info())
        _finish(1)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    os._exit(_finish(code))


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
