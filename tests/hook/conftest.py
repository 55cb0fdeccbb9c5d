from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from briefd.cli.init import hook_command
from briefd.settings import Settings
from tests.ports import free_port


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str


@pytest.fixture
def hook_env(tmp_path: Path, settings: Settings) -> dict[str, str]:
    """A clean environment for the real command: the test index, embeddings off, a server URL
    nobody listens on, no local daemon (tests/hook/test_daemon.py turns it on and stops it),
    and a HOME without user config."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    return {
        **keep,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "BRIEFD_DB": str(settings.db),
        "BRIEFD_EMBEDDINGS__ENABLED": "false",
        "BRIEFD_RECALL__SERVER": f"http://127.0.0.1:{free_port()}",
        "BRIEFD_RECALL__DAEMON": "false",
    }


RunHook = Callable[..., Run]


@pytest.fixture
def run_hook(tmp_path: Path, hook_env: dict[str, str]) -> RunHook:
    """Run the hook line ``briefd init`` writes (``python -S -P …/briefd/hook/script.py``)
    with ARGS as an agent would, with ``payload`` (a dict is sent as JSON) on stdin; ``env``
    entries override the environment (None: unset); ``cwd``: the folder it is spawned in
    (default: ``tmp_path``)."""
    command = shlex.split(hook_command())

    def run(
        *args: str,
        payload: object = None,
        env: dict[str, str | None] | None = None,
        cwd: str | Path | None = None,
    ) -> Run:
        text = json.dumps(payload) if isinstance(payload, dict) else payload
        done = subprocess.run(
            [*command, *args],
            input=text if text is not None else "",
            capture_output=True,
            text=True,
            cwd=cwd or tmp_path,
            env={k: v for k, v in {**hook_env, **(env or {})}.items() if v is not None},
            timeout=60,
            check=False,
        )
        return Run(done.returncode, done.stdout, done.stderr)

    return run


def hook_json(prompt: str, session: str = "session-1", cwd: str | None = None) -> dict[str, str]:
    payload = {
        "session_id": session,
        "transcript_path": "/tmp/transcript.jsonl",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    if cwd is not None:
        payload["cwd"] = cwd
    return payload


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A TCP server that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()
