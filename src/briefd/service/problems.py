"""Arguments that fail validation (REST bodies, MCP tool arguments), said for the caller to fix:
one clause per field, without pydantic's report (its input echo and documentation links)."""

from __future__ import annotations

import json
import types
from collections.abc import Iterable, Mapping
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

__all__ = ["flags_for_counts", "problems", "validation_problem"]


def problems(errors: Iterable[Mapping[str, Any]]) -> str:
    """Every problem, joined into one line."""
    return "; ".join(validation_problem(e) for e in errors)


def validation_problem(error: Mapping[str, Any]) -> str:
    """One problem of a request FastAPI could not validate, said for the caller to fix."""
    loc = error.get("loc", ())
    if error.get("type") == "json_invalid":
        at = next((p for p in loc if isinstance(p, int)), None)
        why = (error.get("ctx") or {}).get("error", "malformed")
        where = f" at character {at}" if at is not None else ""
        return f"the body is not valid JSON{where} ({why}); send one JSON object"
    field = ".".join(str(p) for p in loc if p != "body") or "body"
    if field == "body" and error.get("type") in ("model_attributes_type", "dict_type"):
        return "the body must be one JSON object of the route's fields (see /docs)"
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
