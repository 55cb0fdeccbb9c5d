"""The ``briefd`` console script. ``briefd recall`` — spawned by coding agents on every
prompt — goes straight to the hook's fast path (standard library only); ``briefd index`` with
nothing to do is answered by :mod:`briefd.cli.index_fast`, ``briefd --version`` here; every
other command, and ``recall --help``, loads the full command line (typer, rich). Before either
index path, the stamp the last run left (:mod:`briefd.cli.stamp`, standard library only)
answers a run whose files, settings, commit and code all still have the stat it recorded."""

from __future__ import annotations

import os
import sys

from briefd.cli.streams import guard_stdout, stdout_failure, write_anything

GLOBAL_OPTIONS = ("--db", "--config")


def recall_args(argv: list[str]) -> list[str] | None:
    """The hook's arguments when ``argv`` is ``[--db X] [--config Y] recall …`` without help,
    global options passed on; None for anything else."""
    passed: list[str] = []
    rest = list(argv)
    while rest and rest[0] != "recall":
        name, eq, _ = rest[0].partition("=")
        if name not in GLOBAL_OPTIONS:
            return None
        take = 1 if eq else 2
        if len(rest) < take:
            return None
        passed += rest[:take]
        rest = rest[take:]
    if not rest or any(a in ("--help", "-h") for a in rest[1:]):
        return None
    return [*passed, *rest[1:]]


def version_asked(argv: list[str]) -> bool:
    """Whether ``argv`` is ``--version`` among the global options only (``[--db X] [--config
    Y] --version``, in any order, as the command line reads them): then the version is all it
    prints, and nothing else need load (the full command line imports the whole API, numpy)."""
    rest, asked = list(argv), False
    while rest:
        if rest[0] == "--version":
            asked, rest = True, rest[1:]
            continue
        name, eq, _ = rest[0].partition("=")
        take = 1 if eq else 2
        if name not in GLOBAL_OPTIONS or len(rest) < take:
            return False
        rest = rest[take:]
    return asked


def run() -> None:
    args = recall_args(sys.argv[1:])
    if args is not None:
        from briefd.hook.main import leave, main

        leave(main(args))
    write_anything()  # PYTHONIOENCODING=ascii, a Latin-1 locale: "?", not a traceback
    guard_stdout()  # a write that fails (a full disk): one line, not a traceback
    try:
        try:
            _commands()
        finally:  # what is still buffered fails here, not in the interpreter's last flush
            if sys.stdout is not None:  # None: started with stdout closed (`>&-`)
                sys.stdout.flush()
    except KeyboardInterrupt:  # before the command line catches it (its imports) or after
        from briefd.cli import interrupt

        interrupt.say()
        sys.exit(130)
    except BrokenPipeError:
        if not reader_gone():
            raise
        _quiet_exit()
    except OSError as error:
        failure = stdout_failure(error)
        if failure is None:
            raise
        sys.stderr.write(f"error: could not write the output: {failure.strerror}\n")
        _quiet_exit()
    except Exception:  # Ctrl-C turned into another error by what it landed in (an import)
        from briefd.cli import interrupt

        if not interrupt.interrupted():
            raise
        interrupt.say()
        sys.exit(130)


def reader_gone() -> bool:
    """Whether stdout is a pipe nobody reads any more (``briefd index | head -1``, a ``jq``
    that failed): the pipe reports an error to its writer once its last reader closed it."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _quiet_exit() -> None:
    """Exit 1 without a further word, as the full command line does when its reader goes
    away (click's and rich's handling): stdout points at /dev/null so that the interpreter's
    last flush has nowhere to fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(1)


def _commands() -> None:
    if version_asked(sys.argv[1:]):  # as the full command line prints it, without loading it
        from briefd.__about__ import __version__

        sys.stdout.write(f"briefd {__version__}\n")
        sys.exit(0)
    if "index" in sys.argv[1:4]:  # nothing changed: answered without the full command line
        from briefd.cli.stamp import answer

        stamped = answer(sys.argv[1:])  # every stat as the last run left it: its report
        if stamped is not None:
            sys.stdout.write(stamped)
            sys.exit(0)
        from briefd.cli import interrupt
        from briefd.cli.index_fast import main as index_fast

        interrupt.watch()
        status = index_fast(sys.argv[1:])
        if status is not None:
            sys.exit(status)
        if interrupt.interrupted():  # its failure was the interruption: not run again
            raise KeyboardInterrupt
    from briefd.cli import interrupt

    interrupt.watch()
    from briefd.cli.main import run as full

    full()
