"""The HTTP service (I1–I6): one ASGI app with REST, MCP, metrics, the dashboard and the setup
page over one in-process :class:`briefd.api.Briefd`."""

from briefd.service.app import create_app
from briefd.service.config import ServiceConfig

__all__ = ["ServiceConfig", "create_app"]
