"""Where this briefd is installed, for the commands it prints and writes: the environment in
uv's cache that ``uvx --from …`` runs it from (``uv cache clean`` deletes it), and the command
another terminal runs this briefd with."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import sysconfig
from pathlib import Path


def uv_cache_prefix() -> Path | None:
    """This environment's prefix when it lives in uv's cache (``uvx``), else ``None``."""
    home = os.environ.get("XDG_CACHE_HOME") or Path("~/.cache").expanduser()
    cache = Path(os.environ.get("UV_CACHE_DIR") or Path(home) / "uv").resolve()
    prefix = Path(sys.prefix).resolve()
    return prefix if prefix.is_relative_to(cache) else None


def this_briefd() -> str:
    """The command another terminal runs this briefd with: ``briefd`` when that is the one on
    PATH (pipx, uv tool, an activated venv), else this installation's script by its path (a
    venv's ``bin/briefd`` run by its path, where ``briefd`` alone is not found or is another
    installation; ``uvx``, which puts its environment on the PATH of briefd's process only),
    else this Python's ``-m briefd``."""
    script = shutil.which("briefd", path=sysconfig.get_path("scripts"))
    if script is None:
        return f"{shlex.quote(sys.executable)} -m briefd"
    on_path = shutil.which("briefd")
    if on_path is None or uv_cache_prefix() is not None:
        return shlex.quote(script)
    return "briefd" if Path(on_path).resolve() == Path(script).resolve() else shlex.quote(script)


def client_briefd() -> str:
    """The command an MCP client's configuration runs this briefd with: this installation's
    script by its absolute path (else this Python's ``-m briefd``), even when ``briefd`` on
    PATH is this one: a desktop client (Claude Desktop, Cursor) started from the dock or the
    start menu does not get the PATH of the user's shell, and fails to spawn ``briefd``."""
    script = shutil.which("briefd", path=sysconfig.get_path("scripts"))
    if script is None:
        return f"{shlex.quote(sys.executable)} -m briefd"
    return shlex.quote(str(Path(script).absolute()))
