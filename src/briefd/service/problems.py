"""Arguments that fail validation (REST bodies, MCP tool arguments), said for the caller to fix:
one clause per field, without pydantic's report (its input echo and documentation links)."""

from __future__ import annotations

import difflib
import json
import types
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

__all__ = [
    "body_fields",
    "body_problems",
    "did_you_mean",
    "flags_for_counts",
    "problems",
    "validation_problem",
]

_OBJECT_TYPES = ("model_attributes_type", "dict_type")  # a body that is not a JSON object


def problems(errors: Iterable[Mapping[str, Any]], fields: Sequence[str] = ()) -> str:
    """Every problem, joined into one line; ``fields``: the body's, for an unknown one."""
    return "; ".join(validation_problem(e, fields) for e in errors)


def did_you_mean(name: str, taken: Sequence[str]) -> str:
    """`` (did you mean scopes?)`` for a parameter or field ``name`` that is none of
    ``taken`` but close to one (``top-k`` for ``top_k``, ``Scope`` for ``scopes``); ""."""
    close = difflib.get_close_matches(name.replace("-", "_").lower(), taken, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def body_fields(model: Any) -> tuple[str, ...]:
    """The fields a request body of ``model`` takes, as they are sent (their aliases); none
    when it is no pydantic model."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return ()
    return tuple(field.alias or name for name, field in model.model_fields.items())


def body_problems(
    errors: Iterable[Mapping[str, Any]], content_type: str | None, fields: Sequence[str] = ()
) -> str:
    """:func:`problems` of a REST request, whose JSON body FastAPI reads only when its
    ``Content-Type`` says JSON (or says nothing): a JSON object sent as another type (``curl
    -d``, which sends ``application/x-www-form-urlencoded``; ``text/plain``) reached the route
    as bytes, where "the body must be one JSON object" would name what the caller sent: such a
    body is said to be of the wrong type, naming the type it came as."""
    found = list(errors)
    sent_as = (content_type or "").split(";")[0].strip().lower()
    if sent_as and not _is_json(sent_as) and any(_not_an_object(e) for e in found):
        return (
            f"the body was sent as {sent_as}, which is not read as JSON; send the JSON object "
            "with 'Content-Type: application/json' (curl: --json, or -H 'Content-Type: "
            "application/json' beside -d)"
        )
    return problems(found, fields)


def _is_json(media_type: str) -> bool:
    """What FastAPI reads as JSON: ``application/json`` and ``application/…+json``."""
    main, _, sub = media_type.partition("/")
    return main == "application" and (sub == "json" or sub.endswith("+json"))


def _not_an_object(error: Mapping[str, Any]) -> bool:
    return tuple(error.get("loc", ())) == ("body",) and error.get("type") in _OBJECT_TYPES


def validation_problem(error: Mapping[str, Any], fields: Sequence[str] = ()) -> str:
    """One problem of a request FastAPI could not validate, said for the caller to fix; an
    unknown body field with the one meant and the fields the body takes (``fields``), as an
    unknown query parameter is said (:func:`briefd.service.deps.known_query`)."""
    loc = error.get("loc", ())
    if error.get("type") == "json_invalid":
        at = next((p for p in loc if isinstance(p, int)), None)
        why = (error.get("ctx") or {}).get("error", "malformed")
        where = f" at character {at}" if at is not None else ""
        return f"the body is not valid JSON{where} ({why}); send one JSON object"
    field = ".".join(str(p) for p in loc if p != "body") or "body"
    if field == "body" and error.get("type") in _OBJECT_TYPES:
        return "the body must be one JSON object of the route's fields (see /docs)"
    if error.get("type") == "extra_forbidden" and loc[:1] == ("query",):  # deps.known_query
        return f"{field}: {error.get('msg')}"
    if error.get("type") == "extra_forbidden" and fields:
        meant = did_you_mean(str(loc[-1]) if loc else field, fields)
        return f"{field}: not a field of this request{meant}; it takes {', '.join(fields)}"
    if error.get("type") == "extra_forbidden":
        return f"{field}: not a field of this request (see /docs for its fields)"
    if error.get("type") == "value_error" and field == "body":
        return str((error.get("ctx") or {}).get("error") or error.get("msg", "invalid"))
    return f"{field}: {error.get('msg', 'invalid')}"


def flags_for_counts(model: type[BaseModel], arguments: Mapping[str, Any]) -> str:
    """The arguments of ``model`` that take a number but were sent a JSON boolean, one clause
    each ("" when none). pydantic's lax mode, which REST bodies and MCP tool arguments keep,
    reads ``true`` as 1: ``search_context(max_tokens=true)`` answered with a budget of 1 token
    and ``top_k=true`` with one hit. Its other conversions stay, ``"2000"`` or ``2000.0`` for
    2000 and ``"true"`` for a flag among them: agents' tool calls send numbers and flags as
    JSON text often enough (the MCP SDK unwraps lists sent that way for the same reason)."""
    wrong = []
    for name, value in arguments.items():
        field = model.model_fields.get(name)
        if isinstance(value, bool) and field is not None and _takes_a_number(field.annotation):
            wrong.append(f"{name}: Input should be a number, not {json.dumps(value)}")
    return "; ".join(wrong)


def _takes_a_number(annotation: Any) -> bool:
    """``int``, ``float`` or a union holding one of them and no ``bool``."""
    union = get_origin(annotation) in (Union, types.UnionType)
    options = get_args(annotation) if union else (annotation,)
    return bool not in options and any(option in (int, float) for option in options)
