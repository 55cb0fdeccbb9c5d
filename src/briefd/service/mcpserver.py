"""The MCP server briefd's tools are registered on (I1): the official SDK's ``MCPServer``, with
a briefd error becoming an ``isError`` result whose text says what to do (:func:`add_tool`), and
tool arguments refused in one line naming each field (:class:`BriefdMCP`).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, ValidationError

from briefd.atlassian import Account, caller_account
from briefd.atlassian.service import not_configured
from briefd.errors import BriefdError, IntegrationOffError
from briefd.proposals.policy import require_enabled
from briefd.service.problems import flags_for_counts, problems
from briefd.service.state import ServiceState
from briefd.text import shown, visible

RENAMED = {"format": ", send mode (format is its old name over REST and the CLI)"}


def error_result(message: str) -> CallToolResult:
    """``message`` as :func:`visible` shows it: an error names what the request held (a path,
    a scope, a tag), a NUL or a terminal's escape in it as it came."""
    text = visible(message)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def said(exc: BriefdError, setup_page: bool) -> str:
    """An error's message, and for Confluence or Jira off, where a server shows its settings
    (``/setup``; not over stdio, where no server may run)."""
    if setup_page and isinstance(exc, IntegrationOffError):
        return f"{exc} (this server's /setup page shows the settings)"
    return str(exc)


def ok_result(text: str, structured: BaseModel) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured.model_dump(mode="json"),
    )


def account_of(ctx: Context[Any, Any] | None) -> Account | None:
    """The caller's own Atlassian account (A1, A2), from the MCP request's HTTP headers."""
    headers: Mapping[str, str] | None = None
    if ctx is not None:
        try:
            headers = ctx.headers
        except ValueError:  # outside a request (the tool called directly)
            headers = None
    return caller_account(headers)


LIVE_TOOLS = {  # registered only while their product is configured (service/atlassian.py)
    "confluence_search": "Confluence",
    "confluence_page": "Confluence",
    "jira_search": "Jira",
    "jira_issue": "Jira",
}


def add_tool(
    server: MCPServer[Any],
    fn: Callable[..., Awaitable[CallToolResult]],
    hints: ToolAnnotations,
) -> None:
    """Register ``fn`` as the tool of its name, with ``hints`` and its docstring as a one-line
    description. A :class:`BriefdError` it raises becomes an ``isError`` result carrying the
    error's message (which says what to do); anything else stays a failure of the server."""

    @functools.wraps(fn)  # the SDK reads the parameters and the output schema through it
    async def tool(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            return await fn(*args, **kwargs)
        except BriefdError as exc:
            return error_result(said(exc, isinstance(server, BriefdMCP) and server.setup_page))

    description = " ".join((fn.__doc__ or "").split())  # one paragraph, no indentation
    server.add_tool(tool, name=fn.__name__, description=description, annotations=hints)


class BriefdMCP(MCPServer[Any]):
    """The SDK's server, but tool arguments that fail validation come back as one line naming
    each field and what it takes (not pydantic's report with its input echo and links), and
    are counted as the tool's ``invalid`` requests (I4)."""

    def __init__(
        self, state: ServiceState, name: str, setup_page: bool = True, **options: Any
    ) -> None:
        super().__init__(name, **options)
        self.state = state
        self.setup_page = setup_page  # served over HTTP beside /setup (not over stdio)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if self._tool_manager.get_tool(name) is None:
            return self._unlisted(name)
        unknown = self._unknown_arguments(name, arguments) or self._loose_arguments(name, arguments)
        if unknown:
            return self._rejected(name, unknown)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return self._rejected(name, problems(exc.__cause__.errors()))
            raise

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Any = None
    ) -> GetPromptResult | InputRequiredResult:
        """A prompt this server does not list is the caller's invalid parameter (-32602),
        said with the ones it has: the SDK answered error code 0 and logged a traceback."""
        if self._prompt_manager.get_prompt(name) is None:
            names = [prompt.name for prompt in self._prompt_manager.list_prompts()]
            listed = f"its prompts: {', '.join(names)}" if names else "it has none"
            raise MCPError(INVALID_PARAMS, f"no prompt '{shown(name)}' on this server; {listed}")
        return await super().get_prompt(name, arguments, context)

    def _unlisted(self, name: str) -> CallToolResult:
        """A tool this server does not list. ``propose_update`` while proposals are off, and a
        Confluence or Jira tool while that product is not configured: said as REST says it
        (how to turn it on) and counted as the tool's error; any other name: the tools there
        are (not counted: the name is the caller's)."""
        settings = self.state.api.settings
        product = LIVE_TOOLS.get(name)
        if name != "propose_update" and product is None:
            listed = ", ".join(tool.name for tool in self._tool_manager.list_tools())
            return error_result(f"no tool '{shown(name)}' on this server; its tools: {listed}")

        def refuse() -> None:
            if product is not None:
                raise not_configured(product)
            require_enabled(settings)

        try:
            self.state.call("mcp", name, refuse, False)
        except BriefdError as exc:
            return error_result(said(exc, self.setup_page))
        raise AssertionError(f"{name} is registered whenever it is configured")

    def _rejected(self, name: str, problem: str) -> CallToolResult:
        """The tool ``name`` (one this server lists) refused its arguments: counted, said."""
        self.state.rejected("mcp", name)
        return error_result(f"{name}: {problem}")

    def _loose_arguments(self, name: str, arguments: dict[str, Any]) -> str:
        """Counts sent as a JSON boolean, said per field ("" when none), as REST bodies refuse
        them (``schemas.RequestIn``): the SDK took ``true`` as a budget of 1 token."""
        tool = self._tool_manager.get_tool(name)
        return "" if tool is None else flags_for_counts(tool.fn_metadata.arg_model, arguments)

    def _unknown_arguments(self, name: str, arguments: dict[str, Any]) -> str:
        """Arguments the tool does not take, said with the ones it does ("" when none): the
        SDK ignores them, so a misspelt ``max_token`` would quietly get the default budget."""
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            return ""
        accepted = list(tool.parameters.get("properties", {}))
        extra = [key for key in arguments if key not in accepted]
        if not extra:
            return ""
        listed = "; ".join(
            f"{key}: not an argument of this tool{RENAMED.get(key, '') if 'mode' in accepted else ''}"
            for key in extra
        )
        takes = ", ".join(accepted) or "no arguments"
        return f"{listed} (it takes {takes})"
