"""MCP over stdio (I9): the tools of ``/mcp`` for clients that spawn their servers (Claude
Desktop, Cursor, Codex and most IDE agents in their default setup), on the SDK's stdio
transport. Same :class:`ServiceState`, same tool registrations, same bookkeeping as the HTTP
app; stdout carries the protocol and nothing else (messages go to stderr)."""

from __future__ import annotations

import json
import logging
import os
import signal
import time
from collections.abc import AsyncIterable, Callable
from typing import Any

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

from briefd.api import Briefd
from briefd.service.app import (
    SHUTDOWN_WAIT_S,
    beside_the_server,
    last_flush,
    mcp_server,
    say_unsaved_at_shutdown,
)
from briefd.service.config import ServiceConfig
from briefd.service.limits import invalid_text
from briefd.service.metrics import Metrics
from briefd.service.state import ServiceState
from briefd.text import shown

log = logging.getLogger("briefd.service")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)  # how clients (and Ctrl-C) stop a spawned server
CANCELLED = "notifications/cancelled"
ANSWER_WAIT_S = 10.0  # after stdin closes, for the answers to the requests read before


async def serve_stdio(
    api: Briefd,
    metrics: Metrics | None = None,
    building: Callable[[], bool] | None = None,
    left: Callable[[], float | None] | None = None,
) -> None:
    """Answer MCP on stdin/stdout until the client closes stdin, or stops the process with
    SIGTERM or SIGINT (see :func:`_stop_on_signal`). ``building``: whether the first index,
    started before the protocol, still runs (the tools that read it say so meanwhile);
    ``left``: the seconds it says it has left (a stop does not wait for far more)."""
    state = ServiceState(api, ServiceConfig.from_settings(api.settings.serve), metrics or Metrics())
    if building is not None:
        state.first_build = building
    if left is not None:
        state.first_left = left
    mcp = mcp_server(state, setup_page=False)
    async with beside_the_server(state, mcp), anyio.create_task_group() as tasks:
        tasks.start_soon(_stop_on_signal, state)
        await _run_stdio(mcp)
        tasks.cancel_scope.cancel()


async def _run_stdio(mcp: MCPServer[Any]) -> None:
    """The SDK's ``run_stdio_async``, but a line it cannot read as a message is answered
    (:func:`unreadable`) rather than dropped without a word, which left the client waiting;
    and when stdin closes, the requests read before it are answered before the server stops
    (the SDK cancels them: ``printf '…' | briefd mcp`` got the handshake's answer alone)."""
    server = mcp._lowlevel_server
    inbox, read_inbox = anyio.create_memory_object_stream[SessionMessage](0)
    outbox, read_outbox = anyio.create_memory_object_stream[SessionMessage](0)
    asked: set[str | int] = set()  # ids of the requests read and not answered yet
    async with stdio_server() as (read, write), anyio.create_task_group() as tasks:
        tasks.start_soon(_pass_on, read, inbox, write, asked)
        tasks.start_soon(_pass_out, read_outbox, write, asked)
        await server.run(read_inbox, outbox, server.create_initialization_options())


async def _pass_on(
    read: AsyncIterable[SessionMessage | Exception],
    inbox: MemoryObjectSendStream[SessionMessage],
    write: Any,
    asked: set[str | int],
) -> None:
    """The messages read from stdin go on to the server; what could not be read is answered.
    At the end of stdin, the server gets up to :data:`ANSWER_WAIT_S` to answer what it was
    asked before it is told the input ended (which cancels what it still works on)."""
    async with inbox:
        async for item in read:
            if not isinstance(item, Exception):
                _note(item.message, asked)
                await inbox.send(item)
                continue
            answer = unreadable(item)
            if answer is not None:
                await write.send(SessionMessage(answer))
        with anyio.move_on_after(ANSWER_WAIT_S):
            while asked:
                await anyio.sleep(0.01)


def _note(message: object, asked: set[str | int]) -> None:
    """A request read is asked; one the client cancels is no longer (it gets no answer)."""
    if isinstance(message, JSONRPCRequest):
        asked.add(message.id)
    elif isinstance(message, JSONRPCNotification) and message.method == CANCELLED:
        asked.discard((message.params or {}).get("requestId"))


async def _pass_out(
    outbox: AsyncIterable[SessionMessage], write: Any, asked: set[str | int]
) -> None:
    """The server's messages go on to stdout; an answer takes its request off ``asked``."""
    async for item in outbox:
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            asked.discard(item.message.id)
        await write.send(item)
    await write.aclose()


def unreadable(exc: Exception) -> JSONRPCError | None:
    """The answer to a line the SDK could not read as a JSON-RPC message: a request's, with
    its id, so the client is not left waiting — a string that is not valid Unicode (a lone
    surrogate escape, which the SDK's parser refuses) is named as over HTTP. A line that
    names no request is logged on stderr (None: nobody to answer)."""
    line, data = _message_of(exc)
    rid = data.get("id") if isinstance(data, dict) else None
    if not isinstance(rid, str | int) or isinstance(rid, bool):
        log.warning("ignored a line on stdin that is not a JSON-RPC request: %s", shown(line))
        return None
    problem = invalid_text(line.encode("utf-8", "replace"), "application/json", "message")
    said = problem or f"not a JSON-RPC request this server reads ({_first_problem(exc)})"
    code = INVALID_PARAMS if problem else INVALID_REQUEST
    return JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=said))


def _message_of(exc: Exception) -> tuple[str, object]:
    """The line the SDK failed to read and its JSON (None: not JSON), as far as its validation
    error carries them: the whole line when it did not parse, else the parsed message."""
    for error in exc.errors() if isinstance(exc, ValidationError) else ():
        found = error.get("input")
        if isinstance(found, str):
            try:
                return found, json.loads(found)
            except ValueError:  # JSON that Python cannot read either
                return found, None
        if isinstance(found, dict) and "id" in found:
            return json.dumps(found, ensure_ascii=False), found
    return str(exc), None


def _first_problem(exc: Exception) -> str:
    """What is wrong with a request, as its first validation error says it."""
    for error in exc.errors() if isinstance(exc, ValidationError) else ():
        where = ".".join(str(part) for part in error["loc"][1:])
        return f"{where}: {error['msg']}" if where else str(error["msg"])
    return shown(str(exc))


async def _stop_on_signal(state: ServiceState) -> None:
    """On SIGTERM or SIGINT: save the counters and the query log, then exit. At once: the
    SDK reads stdin on a worker thread that no cancellation reaches, so waiting for the server
    to wind down would wait for the client's next line (and a signal unhandled loses the calls
    since the last periodic flush)."""
    with anyio.open_signal_receiver(*STOP_SIGNALS) as received:
        async for _ in received:
            try:
                await last_flush(state, time.monotonic() + SHUTDOWN_WAIT_S)
            except Exception as exc:  # still stop: the client asked for it
                say_unsaved_at_shutdown(state, exc)
            os._exit(0)
