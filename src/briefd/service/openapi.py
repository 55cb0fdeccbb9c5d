"""The OpenAPI schema says how to authenticate (I3): with a token configured, a bearer
``securityScheme`` and, on each operation the Guard asks the token for, a requirement of it —
so ``/docs`` offers its Authorize button and generated clients send the header. Which routes
need it is the Guard's own rule (:func:`~briefd.service.guard.needs_token`), never a second list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from briefd.service.config import ServiceConfig
from briefd.service.guard import needs_token

SCHEME = "bearerToken"
BEARER = {
    "type": "http",
    "scheme": "bearer",
    "description": "BRIEFD_API_TOKEN, sent as 'Authorization: Bearer <token>'",
}


def secured(schema: dict[str, Any], config: ServiceConfig) -> dict[str, Any]:
    """``schema`` with the bearer scheme and the operations that need it marked (a copy;
    unchanged when no token is configured: nothing needs one)."""
    if config.token is None:
        return schema
    paths = {
        path: {method: _marked(op, needs_token(config, path)) for method, op in ops.items()}
        for path, ops in schema.get("paths", {}).items()
    }
    components = dict(schema.get("components", {}))
    components["securitySchemes"] = {**components.get("securitySchemes", {}), SCHEME: BEARER}
    return {**schema, "paths": paths, "components": components}


def _marked(operation: Any, protected: bool) -> Any:
    if not protected or not isinstance(operation, dict):  # "parameters" shared by a path
        return operation
    return {**operation, "security": [{SCHEME: []}]}


def with_security(
    plain: Callable[[], dict[str, Any]], config: ServiceConfig
) -> Callable[[], dict[str, Any]]:
    """``app.openapi`` (FastAPI's, which builds the schema once) wrapped by :func:`secured`."""
    return lambda: secured(plain(), config)
