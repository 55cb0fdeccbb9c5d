"""``briefd recall``: the prompt-time hook (I8), the fast path a coding agent spawns per prompt.

Contract (Claude Code ``UserPromptSubmit``): hook JSON on stdin (``prompt``, ``session_id``,
``cwd``, …), or the prompt as arguments. On exit 0 stdout carries the answer: a
``<knowledge>`` block when stdout is a pipe, a ranked list in a terminal, ``--json`` for
scripts, ``--format claude-json`` for the ``hookSpecificOutput`` JSON. It fails open: any
error prints nothing on stdout, one line on stderr, and exits 0 — a hook must never break
the agent.

Speed: this module imports only the standard library. It asks a running ``briefd serve``
first (a raw socket, see :mod:`briefd.hook.client`) and only when none answers imports the
index code (:mod:`briefd.hook.local`), and the embedding model only for a hybrid answer.
In the common case — hook JSON on stdin, a block or hook JSON wanted, no overrides — the
stdin bytes go to the server as they are and its answer is printed as it is, so not even the
``json`` module is imported.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook start-up
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, TextIO

FORMATS = ("markdown", "text", "json", "claude-json")
VALUE_OPTIONS = {
    "--format": "format",
    "--session": "session_id",
    "--max-tokens": "max_tokens",
    "--top-k": "top_k",
    "--scopes": "scopes",
    "--mode": "mode",
    "--server": "server",
    "--db": "db",
    "--config": "config",
}
FLAG_OPTIONS = {"--json": ("format", "json"), "--no-server": ("server", "off")}
INT_OPTIONS = ("max_tokens", "top_k")
BODY_OPTIONS = ("session_id", "max_tokens", "top_k", "scopes", "mode")
PASS_THROUGH = {"markdown": "markdown", "claude-json": "hook"}  # --format → server format


class HookError(Exception):
    """Bad input to the hook (reported on stderr; the hook still exits 0)."""


def parse_args(argv: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """(options, prompt words). Hand-rolled: argparse would cost the hook start-up."""
    options: dict[str, Any] = {}
    words: list[str] = []
    items = iter(argv)
    for arg in items:
        name, eq, inline = arg.partition("=")
        if arg in FLAG_OPTIONS:
            key, value = FLAG_OPTIONS[arg]
            options[key] = value
        elif name in VALUE_OPTIONS:
            given = inline if eq else next(items, None)
            if given is None:
                raise HookError(f"option {name} needs a value")
            options[VALUE_OPTIONS[name]] = given
        elif arg == "--":
            words.extend(items)
        elif arg.startswith("--"):
            raise HookError(f"unknown option {arg}; see `briefd recall --help`")
        else:
            words.append(arg)
    for key in INT_OPTIONS:
        if key in options:
            if not str(options[key]).isdigit() or int(options[key]) < 1:
                raise HookError(f"--{key.replace('_', '-')} must be a whole number ≥ 1")
            options[key] = int(options[key])
    if options.get("format", "markdown") not in FORMATS:
        raise HookError(f"--format must be one of {', '.join(FORMATS)}")
    return options, words


def read_stdin(stdin: TextIO | None) -> bytes:
    if stdin is None or stdin.isatty():
        raise HookError("no prompt: pass it as an argument or hook JSON on stdin")
    buffer = getattr(stdin, "buffer", None)
    return buffer.read() if buffer is not None else stdin.read().encode("utf-8")


def hook_input(words: Sequence[str], raw: bytes | None) -> dict[str, Any]:
    """The hook JSON: from stdin, or built from the prompt given as arguments."""
    if words or raw is None:
        return {"prompt": " ".join(words)}
    import json

    try:
        data = json.loads(raw)
    except ValueError:
        raise HookError(
            "stdin is not valid hook JSON (expected an object with a 'prompt' string)"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
        raise HookError("hook JSON has no 'prompt' string")
    return data


def request_body(data: Mapping[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    body = {k: data[k] for k in ("prompt", "session_id", "cwd", "hook_event_name") if k in data}
    for key in ("session_id", "max_tokens", "top_k", "scopes", "mode"):
        if key in options:
            body[key] = options[key]
    return body


def server(options: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str | None, float]:
    """The server to ask (None: none) and how long to wait for it."""
    from briefd.hook import discover

    config = discover.read_config(discover.config_file(env))
    timeout = discover.server_timeout(env, config)
    if "server" in options:
        return discover.server_url({"BRIEFD_RECALL__SERVER": options["server"]}, {}), timeout
    return discover.server_url(env, config), timeout


def post(url: str, body: bytes, env: Mapping[str, str], timeout: float, fmt: str) -> bytes | None:
    """The server's answer, or None when no usable server answered."""
    from briefd.hook import client

    try:
        return client.post(url, body, env.get("BRIEFD_API_TOKEN"), timeout, fmt)
    except client.ServerUnavailable:
        return None


def forward(raw: bytes, fmt: str, options: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """The server's answer to the hook JSON as it came, in ``fmt``; None without a server."""
    url, timeout = server(options, env)
    answer = None if url is None else post(url, raw, env, timeout, PASS_THROUGH[fmt])
    if answer is None:
        return None
    text = answer.decode("utf-8")
    if fmt == "claude-json":
        return "" if text.strip() in ("", "{}") else text.strip() + "\n"
    return text


def ask_server(
    body: dict[str, Any], options: Mapping[str, Any], env: Mapping[str, str]
) -> dict[str, Any] | None:
    """The server's whole result, or None when no server is configured or reachable."""
    import json

    url, timeout = server(options, env)
    payload = json.dumps(body).encode("utf-8")
    raw = None if url is None else post(url, payload, env, timeout, "json")
    if raw is None:
        return None
    answer = json.loads(raw)
    if not isinstance(answer, dict) or "sections" not in answer:
        return None
    answer["via"] = "server"
    return answer


def answer_here(
    body: dict[str, Any], options: Mapping[str, Any], env: Mapping[str, str]
) -> dict[str, Any]:
    from briefd.hook.local import hook_settings, recall_here
    from briefd.recall.engine import RecallRequest

    settings = hook_settings(env, options.get("config"), options.get("db"))
    return recall_here(RecallRequest.from_json(body), settings)


def render(result: Mapping[str, Any], fmt: str) -> str:
    import json

    from briefd.hook import render as out

    if fmt == "json":
        return out.to_json(result)
    if fmt == "text":
        return out.terminal(result)
    if fmt == "claude-json":
        hook = out.hook_output(result)
        return json.dumps(hook, ensure_ascii=False) + "\n" if hook else ""
    return str(result.get("knowledge") or "")


def answer(
    data: dict[str, Any],
    fmt: str,
    options: Mapping[str, Any],
    env: Mapping[str, str],
    stderr: TextIO,
) -> str:
    """Everything but the pass-through: the whole result from the server or this process."""
    _enter(data.get("cwd"))
    body = request_body(data, options)
    result = ask_server(body, options, env) or answer_here(body, options, env)
    for note in result.get("notes") or ():
        stderr.write(f"briefd recall: {note}\n")
    return render(result, fmt)


def _absolute(options: dict[str, Any]) -> None:
    for key in ("db", "config"):
        if key in options:
            options[key] = os.path.abspath(options[key])


def _enter(cwd: object) -> None:
    """Discovery is relative to the agent's project directory (the hook JSON's ``cwd``)."""
    if isinstance(cwd, str) and cwd and os.path.isdir(cwd):
        os.chdir(cwd)


def main(
    argv: Sequence[str],
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Run the hook; always returns 0 (fail open)."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    env = os.environ if env is None else env
    try:
        options, words = parse_args(argv)
        _absolute(options)
        fmt = options.get("format") or ("text" if stdout.isatty() else "markdown")
        raw = None if words else read_stdin(stdin)
        text = None
        if raw is not None and fmt in PASS_THROUGH and not any(k in options for k in BODY_OPTIONS):
            text = forward(raw, fmt, options, env)
        if text is None:
            text = answer(hook_input(words, raw), fmt, options, env, stderr)
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # fail open: the agent must never see the hook break
        stderr.write(f"briefd recall: {_reason(exc)}\n")
        return 0
    try:
        stdout.write(text)
        stdout.flush()
    except OSError:  # the agent closed the pipe
        pass
    return 0


def _reason(exc: Exception) -> str:
    message = " ".join(str(exc).split()) or type(exc).__name__
    return message if _ours(exc) else f"{type(exc).__name__}: {message}"


def _ours(exc: Exception) -> bool:
    if isinstance(exc, HookError):
        return True
    errors = sys.modules.get("briefd.errors")
    return errors is not None and isinstance(exc, errors.BriefdError)
