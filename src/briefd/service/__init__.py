"""The HTTP service (I1–I6): one ASGI app with REST, MCP, metrics, the dashboard and the setup
page over one in-process :class:`briefd.api.Briefd`.

``create_app`` and ``ServiceConfig`` load on first use: the command line imports a few of this
package's modules (the Atlassian output models, the drift text) for commands that never serve,
and importing the app takes FastAPI and the MCP SDK with it (~1 s of every ``briefd`` command).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briefd.service.app import create_app
    from briefd.service.config import ServiceConfig

__all__ = ["ServiceConfig", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from briefd.service.app import create_app

        return create_app
    if name == "ServiceConfig":
        from briefd.service.config import ServiceConfig

        return ServiceConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
