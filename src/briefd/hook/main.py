"""``briefd recall``: the prompt-time hook (I8), the fast path a coding agent spawns per prompt.

Contract (Claude Code ``UserPromptSubmit``): hook JSON on stdin (``prompt``, ``session_id``,
``cwd``, …), or the prompt as arguments. On exit 0 stdout carries the answer: a
``<knowledge>`` block when stdout is a pipe, a ranked list in a terminal, ``--json`` for
scripts, ``--format claude-json`` for the ``hookSpecificOutput`` JSON. It fails open: any
error prints nothing on stdout, one line on stderr, and exits 0 — a hook must never break
the agent.

Who answers (I8, I10): a configured or running ``briefd serve`` first (``recall.server``, a
raw socket, see :mod:`briefd.hook.client`); else the index's local daemon over its Unix socket
(:mod:`briefd.hook.starter`) — and when none runs yet, the hook starts one in the background
and answers this prompt itself with what is fast (BM25 behind the lexical evidence gate, no
model). ``--no-server`` or ``recall.daemon: false``: always in-process, the model loaded when
the answer is hybrid. ``--status`` / ``--stop`` show and stop the daemon.

Speed: this module imports only the standard library until it must answer in-process
(:mod:`briefd.hook.local`). With a server, the hook JSON goes out as it came and the answer is
printed as it came back, so not even ``json`` is imported; with the daemon, ``json`` only to
read the hook's ``cwd``.
"""

from __future__ import annotations

import os
import sys
import time

from briefd.hook import HookError

# About when the agent spawned the hook (its imports before this are few): the hook's budget
# (recall.budget_seconds, inside the 10 s `briefd init` gives it in each client's config, past
# which the client ends it and the prompt gets nothing) counts from here. The waits for a server
# and the daemon come out of it; answering in-process, no embedding request waits past it.
STARTED = time.monotonic()

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook start-up
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, TextIO

FORMATS = ("markdown", "text", "json", "claude-json")
VALUE_OPTIONS = {
    "--format": "format",
    "--session": "session_id",
    "--max-tokens": "max_tokens",
    "--top-k": "top_k",
    "--scopes": "scopes",
    "--scope": "scopes",  # as search, bundle, docs take it
    "--mode": "mode",
    "--server": "server",
    "--db": "db",
    "--config": "config",
}
FLAG_OPTIONS = {
    "--json": ("format", "json"),
    "--no-server": ("local", True),
    "--status": ("action", "status"),
    "--stop": ("action", "stop"),
}
INT_OPTIONS = ("max_tokens", "top_k")
BODY_OPTIONS = ("session_id", "max_tokens", "top_k", "scopes", "mode")
PASS_THROUGH = {"markdown": "markdown", "claude-json": "hook"}  # --format → server format
# Payloads of clients whose prompt hook cannot add context (see briefd.hook.clients): VS Code's
# own UserPromptSubmit (camelCase fields, "common output format only") and Cursor's
# beforeSubmitPrompt (continue / user_message only). Both also run the Claude Code hooks found
# in .claude/settings*.json; the hook answers them with nothing, at once.
SILENT_CLIENTS = (b'"hookEventName"', b'"beforeSubmitPrompt"')


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
            key = VALUE_OPTIONS[name]
            if key == "scopes" and key in options:  # repeated, as every other command takes it
                given = f"{options[key]},{given}"
            options[key] = given
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
    raw = buffer.read() if buffer is not None else stdin.read().encode("utf-8", "surrogateescape")
    return utf8(raw)


def utf8(raw: bytes) -> bytes:
    """``raw`` with each byte that is not UTF-8 made U+FFFD: hook JSON from a script that
    wrote a Latin-1 or cp1252 file's text into its prompt ("café" as ``caf\\xe9``) was refused
    whole as "not valid hook JSON", and the prompt got nothing, where one broken character
    costs only itself (as a lone surrogate does, :func:`briefd.recall.engine._unicode`).
    UTF-16 and UTF-32 (a byte order mark, or a zero byte in the first four) stay as sent: JSON
    reads them."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        if raw[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in raw[:4]:
            return raw
        return raw.decode("utf-8", "replace").encode("utf-8")
    return raw


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
    keys = ("prompt", "session_id", "sessionId", "cwd", "hook_event_name")
    body = {k: data[k] for k in keys if k in data}
    for key in BODY_OPTIONS:
        if key in options:
            body[key] = options[key]
    return body


def server(
    options: Mapping[str, Any], env: Mapping[str, str]
) -> tuple[str | None, float, str | None, str | None]:
    """The server to ask (None: none), how long to wait for it, and — when it is only the
    default one (nobody configured a server) — this project's index, which that server must be
    serving to answer: a `briefd serve` of another project on 127.0.0.1:8484 is not asked.
    Last, why a server the project's settings file names is not asked (:func:`untrusted`)."""
    from briefd.hook import discover

    path = options.get("config") or discover.config_file(env)
    config = discover.read_config(path, env)
    timeout = discover.server_timeout(env, config)
    if options.get("local"):
        return None, timeout, None, None
    if "server" in options:
        url = discover.server_url({"BRIEFD_RECALL__SERVER": options["server"]}, {})
        return url, timeout, None, None
    url = discover.server_url(env, config)
    recall = config.get("recall")
    named = isinstance(recall, dict) and "server" in recall
    chosen = "BRIEFD_RECALL__SERVER" in env or named
    refused = untrusted(url, options, env, path, "recall.server" if named else "serve.host")
    if refused is not None:
        return None, timeout, None, refused
    if url is None or chosen:
        return url, timeout, None, None
    index = discover.index_path(env, options.get("db"), path, config)
    return url, timeout, index if os.path.exists(index) else None, None


def untrusted(
    url: str | None, options: Mapping[str, Any], env: Mapping[str, str], path: str | None, key: str
) -> str | None:
    """Why ``url`` is not asked (None: it is): a server on another machine that only a
    project's own settings file names (its ``key``: ``recall.server``, or ``serve.host`` for
    the project's own server) — a repository the user cloned would otherwise receive every
    prompt and BRIEFD_API_TOKEN. The user's word trusts it: ``--server``,
    ``$BRIEFD_RECALL__SERVER`` (``$BRIEFD_SERVE__HOST``), a settings file they named
    (``--config``, ``$BRIEFD_CONFIG``) or their own (``~/.config/briefd/briefd.yaml``)."""
    from briefd.hook import client, discover

    if url is None or "BRIEFD_RECALL__SERVER" in env or path is None:
        return None
    if key == "serve.host" and env.get("BRIEFD_SERVE__HOST"):
        return None
    if options.get("config") or env.get("BRIEFD_CONFIG"):
        return None
    if os.path.abspath(path) == os.path.abspath(discover.user_config(env)):
        return None
    try:
        host = client.split_url(url)[1]
    except client.ServerUnavailable:
        return None  # not a URL: asking it fails as before
    if client.loopback(host):
        return None
    return (
        f"{url} is not asked: {key} in {path} names it, and a project's settings file may not "
        f"send prompts and BRIEFD_API_TOKEN off this machine; to trust it, set "
        f"BRIEFD_RECALL__SERVER={url} in your environment or run `briefd init --url {url}`"
    )


def post(
    url: str, body: bytes, env: Mapping[str, str], timeout: float, fmt: str, index: str | None
) -> bytes | None:
    """The server's answer, or None when no usable server answered."""
    from briefd.hook import client

    try:
        token = env.get("BRIEFD_API_TOKEN", "").strip() or None  # as `briefd serve` reads it
        return client.post(url, body, token, timeout, fmt, index)
    except client.NotSent as exc:
        sys.stderr.write(f"briefd recall: {exc} (answered from the local index meanwhile)\n")
        return None
    except client.ServerRefused as exc:  # answered here, but the user should know why
        sys.stderr.write(
            f"briefd recall: {exc}; set BRIEFD_API_TOKEN to the server's token (answered from "
            "the local index meanwhile)\n"
        )
        return None
    except client.ServerUnavailable:
        return None


class Local:
    """Where this prompt's index and daemon are (found after entering the agent's ``cwd``)."""

    def __init__(self, options: Mapping[str, Any], env: Mapping[str, str]) -> None:
        from briefd.hook import discover
        from briefd.hook.place import daemon_files, socket_dir_problem

        self.config = options.get("config") or discover.config_file(env)
        mapping = discover.read_config(self.config, env)
        index = discover.index_path(env, options.get("db"), self.config, mapping)
        self.files = daemon_files(index, env)
        self.daemon = not options.get("local") and discover.daemon_on(env, mapping)
        self.unsafe = socket_dir_problem(self.files) if self.daemon else None


def ask_daemon(local: Local, body: bytes, fmt: str, env: Mapping[str, str]) -> bytes | bool | str:
    """The daemon's answer; else whether one runs or was started now (the prompt is then
    answered here with what is fast), or why none can run here (answered so too)."""
    from briefd.hook import starter
    from briefd.hook.place import variables_key

    reply = starter.ask(local.files, body, fmt, local.config, variables_key(env))
    if reply is not None:
        return reply
    if not os.path.exists(local.files.index):  # no index yet: a daemon could only fail
        return False  # (answered here, with the error that says how to build one)
    try:
        cwd = os.getcwd()
    except OSError:  # the hook's folder was removed: no daemon is started in it
        return False
    return starter.start(local.files, local.config, cwd, env)


def respond(
    words: Sequence[str],
    raw: bytes | None,
    fmt: str,
    options: dict[str, Any],
    env: Mapping[str, str],
    stderr: TextIO,
) -> str:
    """Ask the server, else the index's daemon (starting one), else answer in-process. In the
    common case — hook JSON on stdin, a block or hook JSON wanted, no overrides — the stdin
    bytes go out as they came and the answer is printed as it came back."""
    if raw is not None and any(client in raw for client in SILENT_CLIENTS):
        return ""
    through = (
        raw is not None and fmt in PASS_THROUGH and not any(k in options for k in BODY_OPTIONS)
    )
    data = None if through else hook_input(words, raw)
    ask = PASS_THROUGH[fmt] if through else "json"
    body = raw if through and raw is not None else _dumps(request_body(data or {}, options))
    if raw is not None and b'"cwd"' in raw and not _here(raw):  # spawned outside the project:
        # the server to ask (and the index it must serve) is the project's, as the index is
        data = data or hook_input(words, raw)
        _enter((data or {}).get("cwd"), options, env)
    url, timeout, index, refused = server(options, env)
    if refused is not None:
        stderr.write(f"briefd recall: {refused} (answered from the local index)\n")
    reply = None if url is None else post(url, body, env, timeout, ask, index)
    starting: bytes | bool | str = False
    if reply is None:
        if data is None and not (raw is not None and _here(raw)):
            data = hook_input(words, raw)
        _enter((data or {}).get("cwd"), options, env)
        local = Local(options, env)
        if local.unsafe:  # never ask or start a daemon there
            stderr.write(
                f"briefd recall: no recall daemon: {local.unsafe}; remove it or set "
                "XDG_RUNTIME_DIR (answered in-process)\n"
            )
        starting = ask_daemon(local, body, ask, env) if local.daemon and not local.unsafe else False
    if isinstance(starting, bytes):
        reply = starting
    if reply is not None:
        text = present(reply, fmt, through)
        if text is not None:
            return text
    data = data or hook_input(words, raw)
    request = request_body(data, options)
    if isinstance(starting, str):  # every prompt would load the model (seconds): keywords
        stderr.write(
            f"briefd recall: no recall daemon: {starting}; answered by keywords "
            "(recall.daemon: false answers with the model, loaded for every prompt)\n"
        )
    stand_in = (starting is True or isinstance(starting, str)) and "mode" not in options
    if stand_in:
        request["mode"] = "bm25"  # the daemon loads the model; this prompt needs none
    result = answer_here(request, options, env, stand_in)
    for note in result.get("notes") or ():
        stderr.write(f"briefd recall: {note}\n")
    return render(result, fmt)


def present(reply: bytes, fmt: str, through: bool) -> str | None:
    """What to print for a server's or daemon's answer (None: not a recall result)."""
    try:
        text = reply.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if through:
        if fmt == "claude-json":
            return "" if text.strip() in ("", "{}") else text.strip() + "\n"
        return text
    import json

    answer = json.loads(text)
    if not isinstance(answer, dict) or "sections" not in answer:
        return None
    answer.setdefault("via", "server")
    return render(answer, fmt)


def _dumps(body: Mapping[str, Any]) -> bytes:
    import json

    return json.dumps(body).encode("utf-8")


def answer_here(
    body: dict[str, Any], options: Mapping[str, Any], env: Mapping[str, str], stand_in: bool = False
) -> dict[str, Any]:
    from briefd.hook import need_site

    need_site()
    from briefd.hook.local import hook_settings, recall_here
    from briefd.recall.engine import RecallRequest

    settings = hook_settings(env, options.get("config"), options.get("db"))
    deadline = STARTED + settings.recall.budget_seconds
    return recall_here(RecallRequest.from_json(body), settings, deadline, stand_in)


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


def daemon_action(options: Mapping[str, Any], env: Mapping[str, str], fmt: str) -> str:
    """``--status`` / ``--stop``: the daemon of the index found from this directory."""
    from briefd.hook import render as out
    from briefd.hook import starter

    local = Local(options, env)
    if options["action"] == "stop":
        return starter.stop(local.files) + "\n"
    from briefd.hook.place import variables_key

    report = starter.status(local.files, local.config, variables_key(env))
    if report["state"] == "stopped":  # and none the next prompt would start?
        report |= _no_start(local, options)
    answering, refused = _answering_server(options, env)
    if answering is not None:  # asked first: the daemon only when it does not answer
        report["server"] = answering
    if refused is not None:  # a server it will not ask, and how to trust it
        report["server_refused"] = refused
    return out.to_json(report) if fmt == "json" else out.daemon_status(report)


def _answering_server(
    options: Mapping[str, Any], env: Mapping[str, str]
) -> tuple[str | None, str | None]:
    """The URL of the ``briefd serve`` a prompt from here goes to, when it answers now: asked
    as a prompt asks it (the same timeout, token and index), with an empty prompt; and why a
    server is not asked, when one is not (an untrusted or clear-text one)."""
    from briefd.hook import client

    url, timeout, index, refused = server(options, env)
    if url is None:
        return None, refused
    token = env.get("BRIEFD_API_TOKEN", "").strip() or None
    try:
        client.post(url, b'{"prompt": ""}', token, timeout, "json", index)
    except client.NotSent as exc:
        return None, str(exc)
    except (client.ServerUnavailable, client.ServerTimeout):
        return None, None
    return url, None


def _no_start(local: Local, options: Mapping[str, Any]) -> dict[str, str]:
    """Why the next prompt will not start a daemon ({} when it will): ``--status`` said "the
    next prompt starts it" with no index to serve, with ``recall.daemon: false``, in a
    runtime folder another user may write, or with no lock file possible beside the index (a
    read-only folder) — where the hook never starts one."""
    if not os.path.exists(local.files.index):
        return {"state": "no-index"}
    if not local.daemon and not options.get("local"):  # off by setting, not by --no-server
        return {"state": "off"}
    if local.unsafe:
        return {"state": "unsafe", "error": local.unsafe}
    if local.daemon:
        from briefd.hook import starter

        problem = starter.lock_problem(local.files)
        if problem is not None:
            return {"state": "no-lock", "error": problem}
    return {}


def _absolute(options: dict[str, Any]) -> None:
    for key in ("db", "config"):
        if key in options:
            options[key] = os.path.abspath(options[key])


def _here(raw: bytes) -> bool:
    """Whether the hook JSON's ``cwd`` is this process's directory, read without ``json``
    (and ``re``, which it imports): agents run hooks in the project directory. A path JSON
    escapes (non-ASCII from some encoders) is not found, and the JSON is then parsed."""
    try:
        cwd = os.getcwd().encode()
    except OSError:  # the folder the agent spawned the hook in was removed: the JSON's counts
        return False
    return b'"cwd":"' + cwd + b'"' in raw or b'"cwd": "' + cwd + b'"' in raw


def _enter(cwd: object, options: dict[str, Any], env: Mapping[str, str]) -> None:
    """Discovery is relative to the agent's project directory (the hook JSON's ``cwd``), or
    the folder above it with the project's briefd files (:func:`_up`)."""
    if isinstance(cwd, str) and cwd and os.path.isdir(cwd):
        os.chdir(cwd)
        _up(options, env)


def _up(options: dict[str, Any], env: Mapping[str, str]) -> None:
    """Move to the project's folder, as the CLI finds it (:func:`briefd.project.project_dir`):
    the folder above with the project's briefd files when this is a subfolder of its git work
    tree, a settings file or an index named or not (``--config``, ``--db``,
    ``$BRIEFD_CONFIG``, ``$BRIEFD_DB``). A relative one is relative to this folder: made
    absolute, as an option, before moving."""
    from briefd.project import project_dir

    project = project_dir(env, own_index=_own_index(env)) or _session_project(options, env)
    if project is None:
        return
    for key, name in (("config", "BRIEFD_CONFIG"), ("db", "BRIEFD_DB")):
        named = options.get(key) or env.get(name)
        if named:  # ~ as the settings read it: no shell expands an agent config's env block
            options[key] = os.path.abspath(os.path.expanduser(named))
    os.chdir(project)


def _own_index(env: Mapping[str, str]) -> Callable[[str], bool]:
    """Whether a folder of a linked work tree has its own index, which it keeps (else the same
    folder of the main work tree is the project): ``.briefd/briefd.db``, or the index its
    settings file names (``db: .briefd/team.db``, relative to the file). Only the default name
    was looked for: a work tree indexed on its branch under ``db:`` was answered from the main
    work tree's index, whatever its own said."""
    from briefd.hook import discover
    from briefd.project import CONFIG_NAME, DB_NAME, LOCAL_DIR

    def own(folder: str) -> bool:
        if os.path.exists(os.path.join(folder, LOCAL_DIR, DB_NAME)):
            return True
        for config in (
            os.path.join(folder, CONFIG_NAME),
            os.path.join(folder, LOCAL_DIR, CONFIG_NAME),
        ):
            if os.path.isfile(config):
                named = discover.read_config(config, env).get("db")
                return bool(named) and os.path.exists(
                    discover.index_path({}, None, config, {"db": named})
                )
        return False

    return own


def _session_project(options: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """The agent session's project folder (Claude Code's ``$CLAUDE_PROJECT_DIR``) when this
    folder is in no briefd project and nothing names a settings file or index: an agent that
    ran ``cd`` out of the project (a sibling repository, a dependency's checkout, a project
    outside git) sends that folder as ``cwd``, where the hook found neither, and every later
    prompt of the session got nothing ("no index at ~/.local/share/briefd/briefd.db")."""
    home = env.get("CLAUDE_PROJECT_DIR")
    named = options.get("config") or options.get("db")
    if not home or named or env.get("BRIEFD_CONFIG") or env.get("BRIEFD_DB"):
        return None
    from briefd.project import has_project_files, project_dir

    try:
        here = os.getcwd()
    except OSError:
        here = None
    if here is not None and has_project_files(here):  # this folder is a project of its own
        return None
    home = os.path.abspath(home)
    found = project_dir(env, home, own_index=_own_index(env)) or home
    return found if found != here and has_project_files(found) else None


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
        _up(options, env)
        fmt = options.get("format") or ("text" if stdout.isatty() else "markdown")
        if "action" in options:
            text = daemon_action(options, env, fmt)
        else:
            text = respond(words, None if words else read_stdin(stdin), fmt, options, env, stderr)
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


def leave(status: int) -> None:
    """End the hook process once its answer is out: stdout and stderr flushed, then
    ``os._exit``, without the interpreter's finalisation (module teardown, garbage collection,
    atexit) — ~2 ms of CPU a hook pays on every prompt for nothing it needs. The hook closes
    what it opens (sockets, the index) before it returns."""
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 (contextlib is one more import on every prompt)
            stream.flush()
        except (OSError, ValueError):  # the agent closed the pipe, or the stream is closed
            pass
    os._exit(status)
