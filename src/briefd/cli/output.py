"""Printing for the CLI: JSON for scripts, rich for people, one-line errors."""

from __future__ import annotations

import dataclasses
import json
import shlex
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from typer._click.exceptions import BadParameter  # typer's own click (pinned)

from briefd.cli.interrupt import interrupted, say
from briefd.cli.streams import utf8
from briefd.errors import BriefdError, IndexNotFoundError
from briefd.text import visible

console = Console(highlight=False, soft_wrap=True, emoji=False)  # ":train:" is text
errors = Console(stderr=True, highlight=False, emoji=False)


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


def printable(text: str) -> str:
    """``text`` that others wrote (a logged query, a file's name), safe to print on a terminal:
    control characters (an ESC sequence would retitle it, recolour it, write its clipboard)
    shown as ``\\xNN``, bidirectional overrides (which would show the rest of the line, and the
    next cells, reordered) and characters that show as nothing as ``\\uNNNN``
    (:func:`briefd.text.visible`)."""
    return visible(text)


def print_json(value: Any) -> None:
    """``value`` as JSON on stdout; escaped to ASCII where stdout cannot write every character
    (the text stays whole, where a replaced character would not)."""
    escaped = not utf8(sys.stdout)
    sys.stdout.write(json.dumps(to_jsonable(value), ensure_ascii=escaped, indent=2) + "\n")


def utf8_text(value: str | None) -> str | None:
    """A text argument (``callback=``): bytes that are not UTF-8 (a terminal in another
    encoding) reach Python as lone surrogates, which no index can hold or compare."""
    try:
        (value or "").encode("utf-8")
    except UnicodeEncodeError as exc:
        byte = (value or "")[exc.start].encode("utf-8", "surrogateescape")[0]
        raise BadParameter(
            f"not UTF-8 text (byte {byte:#04x} at character {exc.start + 1}); set the "
            "terminal's encoding to UTF-8"
        ) from None
    return value


def one_of(choices: Sequence[str]) -> Callable[[str | None], str | None]:
    """A ``callback=`` that refuses a value outside ``choices`` as click refuses a mistyped
    one: a usage error, exit 2, before anything is read."""

    def check(value: str | None) -> str | None:
        if value is not None and value not in choices:
            *first, last = choices
            listed = f"{', '.join(first)} or {last}" if first else last
            raise BadParameter(f"'{value}'; use {listed}")
        return value

    return check


def completes(choices: Sequence[str]) -> Callable[[str], list[str]]:
    """An ``autocompletion=`` for an option that takes one of ``choices``: what the shell's
    completion (`briefd --install-completion`) offers after the option, as it offers commands
    and option names (with a ``callback=`` check alone it offered nothing, or file names)."""

    def complete(incomplete: str) -> list[str]:
        return [choice for choice in choices if choice.startswith(incomplete)]

    return complete


def http_url(url: str | None) -> str | None:
    """A ``callback=`` for a URL option: one that is no http(s) URL is a usage error, exit 2,
    before anything is read."""
    if url is not None and not url.startswith(("http://", "https://")):
        raise BadParameter(f"expected an http:// or https:// URL, got '{url}'")
    return url


named_db: list[Path] = []  # the global --db of this run, set by the command line's callback
named_config: list[Path] = []  # the global --config of this run, set there too


def index_advice(message: str) -> str:
    """A missing index's advice (`briefd index`) with the --db this run was given: pasted
    without it, `briefd index` builds the default index, and the command fails again."""
    if not named_db:
        return message
    return message.replace("`briefd index", f"`briefd --db {shlex.quote(str(named_db[0]))} index")


def fail(message: str, code: int = 1) -> NoReturn:
    """``message`` on stderr, one line; a file's name in it as :func:`printable` shows it."""
    errors.print(f"error: {printable(message)}", markup=False, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn a briefd error into one line on stderr and a non-zero exit, never a traceback."""
    try:
        yield
    except KeyboardInterrupt:
        say()
        raise typer.Exit(130) from None
    except (BriefdError, sqlite3.DatabaseError) as exc:
        if interrupted():  # Ctrl-C inside a function SQLite called: the statement failed
            say()
            raise typer.Exit(130) from None
        if isinstance(exc, IndexNotFoundError):
            fail(index_advice(str(exc)))
        if isinstance(exc, BriefdError):
            fail(str(exc))
        fail(f"the index is damaged ({exc}); rebuild it with `briefd index --rebuild`")
