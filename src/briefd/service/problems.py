"""Arguments that fail validation (REST bodies, MCP tool arguments), said for the caller to fix:
one clause per field, without pydantic's report (its input echo and documentation links)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["problems", "validation_problem"]


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
