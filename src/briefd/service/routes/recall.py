"""``POST /api/hook/recall`` (I8): the prompt-time hook over HTTP, for agents with HTTP hooks
and for the ``briefd recall`` command when a server is running (it saves the command the
index and model loading). Takes the hook JSON the agent sends (``prompt``, ``session_id``, …)
and answers with Claude Code's ``hookSpecificOutput`` JSON (``{}``: nothing to add), with
``?format=markdown`` the ``<knowledge>`` block as text (empty: nothing to add), or with
``?format=json`` the whole recall result."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Header, HTTPException, Query, Request, Response
from fastapi.responses import PlainTextResponse
from starlette.concurrency import run_in_threadpool

from briefd.__about__ import __version__
from briefd.errors import BriefdError
from briefd.hook.client import ANSWER_HEADER, INDEX_HEADER
from briefd.hook.render import hook_output
from briefd.recall.engine import RecallRequest, RecallResult, client_command
from briefd.service.deps import ERRORS, State
from briefd.service.schemas import ErrorBody
from briefd.service.state import ServiceState
from briefd.state.sessions import Unsent

router = APIRouter(prefix="/api")


OK: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "hookSpecificOutput JSON ({} when there is nothing to add), the whole "
        "result (format=json), or the <knowledge> block as text (format=markdown)",
        "content": {"application/json": {}, "text/plain": {}},
    }
}


@router.post(
    "/hook/recall",
    name="recall",
    responses={**OK, **ERRORS, 421: {"model": ErrorBody}},  # another index than this server's
    response_model=None,
    tags=["hooks"],
)
async def hook_recall(
    state: State,
    body: Annotated[dict[str, Any], Body(description="UserPromptSubmit hook JSON.")],
    response: Response,
    http: Request,
    format: Annotated[Literal["hook", "json", "markdown"], Query()] = "hook",
    index: Annotated[
        str | None,
        Header(
            alias=INDEX_HEADER,
            description="The index the hook would answer from; another one than this server's "
            "is 421 (the hook then answers from its own).",
        ),
    ] = None,
) -> dict[str, Any] | PlainTextResponse:
    """The knowledge sections for one prompt, none the session already received. Every
    answer carries ``X-Briefd-Recall``: the hook takes no other 200 for one."""
    served = os.path.realpath(state.api.settings.db)
    if index is not None and os.path.realpath(index) != served:
        raise HTTPException(421, f"this server serves {served}, not {index}")
    response.headers[ANSWER_HEADER] = __version__
    request = RecallRequest.from_json(body)
    result, unsent = await run_in_threadpool(_answer, state, request)
    if not await http.is_disconnected():  # a hook that stopped waiting got nothing: not given
        result = await run_in_threadpool(_given, result, unsent)
    state.served("rest", "recall", result.tokens)
    if result.asked:  # not an empty one (`briefd recall --status` probes with it), nor /clear
        state.queue(result.log_entry())
    if format == "json":
        return {**result.to_dict(), "via": "server"}
    if format == "markdown":
        return PlainTextResponse(result.knowledge, headers={ANSWER_HEADER: __version__})
    return hook_output(result.to_dict())


def _answer(state: ServiceState, request: RecallRequest) -> tuple[RecallResult, Unsent]:
    """The recall, and what it gives its session, kept until the hook is known to be there."""
    started = time.perf_counter()  # a long prompt is embedded first: its latency counts that
    _, asked = client_command(request.prompt.strip())  # what is recalled for: /clear asks nothing
    if asked:
        state.embed_first(asked, request.mode or state.api.settings.recall.mode)

    def recall() -> tuple[RecallResult, Unsent]:
        unsent = Unsent(state.api.state)
        return state.api.recall(request, unsent), unsent

    return state.call("rest", "recall", recall, started=started)


def _given(result: RecallResult, unsent: Unsent) -> RecallResult:
    """Remember what ``result`` gave its session (the store serializes its own writes); a busy
    index costs this turn's memory, said in the answer's notes as before."""
    try:
        unsent.delivered()
    except (BriefdError, sqlite3.Error) as exc:
        said = f"could not remember this injection: {exc}"
        return dataclasses.replace(result, notes=(*result.notes, said))
    return result
