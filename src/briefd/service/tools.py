"""MCP tools (I1) on the official SDK's ``MCPServer``: thin adapters over :class:`ServiceState`.

Each tool runs on a worker thread (the state takes the service lock, counts and logs), returns a
text block for the model plus ``structuredContent`` matching its ``outputSchema``, and a briefd
error becomes an ``isError`` result whose text says what to do (see :func:`add_tool`).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from briefd.__about__ import __version__
from briefd.atlassian import Account, caller_account
from briefd.atlassian.service import not_configured
from briefd.bundles import BundleRequest
from briefd.bundles.model import MAX_HARD_LIMIT, MAX_TOKENS, MIN_TOKENS
from briefd.errors import BriefdError, IntegrationOffError
from briefd.proposals.model import Proposal, ProposalRequest
from briefd.proposals.policy import reaches_out, require_enabled
from briefd.proposals.service import where_kept
from briefd.retrieval.search import SearchRequest
from briefd.service import documents, render, schemas
from briefd.service.problems import flags_for_counts, problems
from briefd.service.schemas import split_list
from briefd.service.state import Caller, ServiceState
from briefd.service.team_tools import TeamTools
from briefd.settings import Settings
from briefd.team.suggestions import ALL_SUGGESTIONS as EVERY
from briefd.text import shown, visible

T = TypeVar("T")
RENAMED = {"format": ", send mode (format is its old name over REST and the CLI)"}
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def _listed(value: object) -> object:
    """One name sent as a string where a list is taken (``scopes: "all"``, as the parameter's
    description words it): that list of one, as ``?scopes=all`` is read over REST."""
    return [value] if isinstance(value, str) else value


OneOrMore = BeforeValidator(_listed)
Scopes = Annotated[
    list[str] | None,
    Field(
        description="Scopes to read, as list_scopes and the server's instructions name them, "
        "or 'all'. Default: the server's default scopes."
    ),
    OneOrMore,
]
Paths = Annotated[  # as many as POST /api/bundle takes: each one is matched against every refs
    list[str] | None,
    Field(
        max_length=schemas.MAX_PATHS,
        description="Code paths the task touches, from the code repository's root as refs "
        "name them (src/payments/refund.py, src/payments/), or absolute in a checkout on the "
        "server's machine; documents whose refs cover them lead.",
    ),
    OneOrMore,
]
Tags = Annotated[
    list[str] | None,
    Field(max_length=50, description="Only documents with any of these front-matter tags."),
    OneOrMore,
]
Budget = Annotated[
    int,
    Field(
        ge=MIN_TOKENS,
        le=MAX_TOKENS,
        description="Soft token budget of the whole answer as you receive it (cl100k); optional content fills it.",
    ),
]
HardLimit = Annotated[
    int | None,
    Field(
        ge=MIN_TOKENS,
        le=MAX_HARD_LIMIT,
        description="Ceiling above which mandatory content is reported as budget_exceeded "
        "(default 4 x max_tokens); a document_context target over it comes from its top as far "
        "as it holds, and the warnings name the get_document call that reads on.",
    ),
]
Mode = schemas.Mode
Base = Annotated[
    str | None,
    Field(
        max_length=64,
        description="bundle_id of a bundle you already hold: only the difference is returned.",
    ),
]
Verbose = Annotated[
    bool,
    Field(description="Add diagnostics and exclusions for a person (not counted in tokens)."),
]
# a document part's text: Claude Code refuses a tool answer over 25,000 tokens and moves one
# over 50,000 characters to a file; the structured content adds the part's sections and links
DOCUMENT_PART_TOKENS = 8_000


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


def bundle_result(out: schemas.BundleOut) -> CallToolResult:
    """A bundle: ``structuredContent`` without empty fields; the text is the Markdown block
    (markdown mode) or the same JSON (package, manifest)."""
    structured = out.model_dump(mode="json", exclude_none=True)
    return CallToolResult(
        content=[TextContent(type="text", text=render.bundle_text(out, structured))],
        structured_content=structured,
    )


def scope_tuple(scopes: list[str] | None) -> tuple[str, ...] | None:
    """As REST reads ``?scopes=``: comma lists split, names stripped, empty entries dropped;
    None (the default scopes) when none is left."""
    return split_list(scopes)


class Tools:
    """The tool implementations, bound to the service state."""

    def __init__(self, state: ServiceState) -> None:
        self.state = state

    async def _call(self, name: str, fn: Callable[[], T], exclusive: bool = True) -> T:
        """``fn`` against the API on a worker thread, counted as the tool ``name``."""
        return await anyio.to_thread.run_sync(lambda: self.state.call("mcp", name, fn, exclusive))

    async def search_context(
        self,
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=20_000,  # as a bundle's task; a pasted page is read by its first words
                description="What the task needs to know, in your own words.",
            ),
        ],
        max_tokens: Annotated[
            int,
            Field(
                ge=1,
                le=200_000,
                description="Token budget of the whole answer as you receive it (cl100k): the "
                "hits' content and their fields.",
            ),
        ] = 2000,
        scopes: Scopes = None,
        top_k: Annotated[
            int | None,
            Field(
                ge=1,
                le=100,
                description="At most this many ranked hits; sections they link to may come "
                "with them. Default: the server's search.top_k (8 unless set).",
            ),
        ] = None,
        paths: Paths = None,
        tags: Tags = None,
    ) -> Annotated[CallToolResult, schemas.SearchOut]:
        """Search the team's knowledge base (domain terminology, business rules, ADRs, coding
        conventions, project notes) and return the best-matching sections, ranked, with their
        source path and line range, within max_tokens. Use it before changing code in an
        unfamiliar area. An empty result says why: nothing matched, the relevance gate judged
        the query unrelated to this knowledge, or max_tokens fits no section."""
        request = SearchRequest(
            query=query, scopes=scope_tuple(scopes), top_k=top_k, tags=split_list(tags) or ()
        )
        caller = Caller("mcp", "search_context", "mcp")
        out = await anyio.to_thread.run_sync(
            lambda: self.state.search(request, tuple(paths or ()), max_tokens, caller)
        )
        return ok_result(render.search_text(out), out)

    async def compile_bundle(
        self,
        task_description: Annotated[
            str, Field(max_length=20_000, description="The task in a sentence or a paragraph.")
        ] = "",
        max_tokens: Budget = 2000,
        scopes: Scopes = None,
        paths: Paths = None,
        issue: Annotated[
            str | None,
            Field(
                max_length=20_000,
                description="The tracker issue the task comes from: a Jira key (e.g. SHOP-42, or its browse URL; fetched live when Jira is configured) or the issue's text; it heads the bundle and joins the query.",
            ),
        ] = None,
        base: Base = None,
        mode: Mode = "markdown",
        hard_limit: HardLimit = None,
        tags: Tags = None,
        verbose: Verbose = False,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[CallToolResult, schemas.BundleOut]:
        """Compile the smallest sufficient context for a coding task: one Markdown block of
        the relevant knowledge sections (deduplicated; governing documents of the paths first,
        then ranked hits), each with a source attribution line, inside max_tokens.
        Deterministic: the same request on the same knowledge gives the same bundle_id and
        the same sections, byte for byte; a repeat served from the cache says so and differs
        in nothing else: cached is true in the structured result, and in the text (markdown:
        "cached" in its closing line; package and manifest: the JSON's cached). Report which sections helped with report_usage(bundle_id,
        useful_chunk_ids)."""
        request = BundleRequest(
            task=task_description,
            max_tokens=max_tokens,
            scopes=scope_tuple(scopes),
            paths=tuple(paths or ()),
            mode=mode,
            base=base,
            issue=issue,
            hard_limit=hard_limit,
            tags=split_list(tags) or (),
        )
        return await self._bundle("compile_bundle", request, verbose, account_of(ctx))

    async def document_context(
        self,
        doc_path: Annotated[
            str,
            Field(
                min_length=1,
                max_length=1000,
                description="The document to work on, relative to the repository.",
            ),
        ],
        task_description: Annotated[
            str, Field(max_length=20_000, description="What you do with it (optional).")
        ] = "",
        max_tokens: Budget = 2000,
        scopes: Scopes = None,
        mode: Mode = "markdown",
        hard_limit: HardLimit = None,
        tags: Tags = None,
        base: Base = None,
        verbose: Verbose = False,
    ) -> Annotated[CallToolResult, schemas.BundleOut]:
        """The context around one knowledge document (a spec, ADR, rule): the document
        itself, what its front matter declares (depends_on, parent), its links and backlinks
        and one more hop, then sections matching task_description (default: its title), inside
        max_tokens; each section says its tier and why it is there. The document comes whole
        up to hard_limit; one longer comes from its top as far as hard_limit holds, with a
        warning naming the get_document call that reads on."""
        request = BundleRequest(
            task=task_description,
            max_tokens=max_tokens,
            scopes=scope_tuple(scopes),
            mode=mode,
            base=base,
            hard_limit=hard_limit,
            target=doc_path,
            tags=split_list(tags) or (),
        )
        return await self._bundle("document_context", request, verbose)

    async def _bundle(
        self, name: str, request: BundleRequest, verbose: bool, account: Account | None = None
    ) -> CallToolResult:
        caller = Caller("mcp", name, "mcp", account)
        out = await anyio.to_thread.run_sync(
            lambda: self.state.compile_bundle(request, caller, verbose)
        )
        return bundle_result(out)

    async def get_document(
        self,
        doc_path: Annotated[
            str,
            Field(
                min_length=1,
                max_length=1000,
                description="Path relative to the knowledge repository, e.g. domain/glossary.md.",
            ),
        ],
        scopes: Scopes = None,
        start_line: Annotated[
            int | None,
            Field(
                ge=1,
                description="Read from this file line (a section's start_line, or the "
                "next_start_line of the part before). Default: the top.",
            ),
        ] = None,
        start_char: Annotated[
            int,
            Field(
                ge=0,
                description="Read from this character of start_line: the next_start_char of "
                "the part before, set when a line alone over max_tokens was cut. Default: 0.",
            ),
        ] = 0,
        max_tokens: Annotated[
            int,
            Field(
                ge=500,
                le=200_000,
                description="Token budget of the text (cl100k): a longer document comes in "
                "parts of whole sections (a longer line in pieces), each saying where the "
                "next starts.",
            ),
        ] = DOCUMENT_PART_TOKENS,
    ) -> Annotated[CallToolResult, documents.DocumentOut]:
        """Read one knowledge document with its sections (chunk ids, line ranges), outgoing
        links and backlinks: whole, or a long one in parts within max_tokens. Use it when a
        search hit needs its full context. Like search, it reads the default scopes unless
        scopes says otherwise (a document in another scope needs that scope named, or
        ['all'])."""
        caller = Caller("mcp", "get_document")
        out = await anyio.to_thread.run_sync(
            lambda: self.state.document(
                doc_path, scope_tuple(scopes), caller, start_line, max_tokens, start_char
            )
        )
        return ok_result(render.document_text(out), out)

    async def list_scopes(
        self,
        limit: Annotated[int, Field(ge=1, le=render.MAX_SCOPES)] = render.MAX_SCOPES // 2,
        offset: Annotated[
            int, Field(ge=0, description="Skip this many scopes (the next page).")
        ] = 0,
    ) -> Annotated[CallToolResult, schemas.ScopesOut]:
        """List the knowledge scopes with their document and section counts (limit of them,
        by name, from offset; total counts all), and which scopes are searched by default."""
        found = await self._call("list_scopes", self.state.api.scopes)
        out = schemas.scopes_out(found, self.state.api.settings.default_scopes, limit, offset)
        return ok_result(render.scopes_text(out), out)

    async def report_usage(
        self,
        bundle_id: Annotated[
            str,
            Field(
                min_length=1,
                max_length=200,
                description="The bundle_id compile_bundle or document_context returned.",
            ),
        ],
        useful_chunk_ids: Annotated[
            list[str],
            Field(
                max_length=500,
                description="chunk_id of every section that actually helped (may be empty).",
            ),
        ],
    ) -> Annotated[CallToolResult, schemas.UsageOut]:
        """Tell the knowledge base which sections of a bundle were useful. Stored as a
        feedback signal; it does not change ranking yet. bundle_id must come from
        compile_bundle or document_context and every chunk id must be one of that bundle's
        sections, else nothing is stored and the error says why."""
        receipt = await self._call(
            "report_usage",
            lambda: self.state.api.report_usage(bundle_id, useful_chunk_ids, "mcp"),
        )
        out = schemas.usage_out(receipt)
        return ok_result(render.usage_text(out), out)

    async def suggest_links(
        self,
        doc_path: Annotated[
            str | None, Field(max_length=1000, description="Only this document (default: all).")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=render.MAX_SUGGESTIONS)] = 20,
        scopes: Scopes = None,
        offset: Annotated[
            int, Field(ge=0, description="Skip this many suggestions (the next page).")
        ] = 0,
    ) -> Annotated[CallToolResult, schemas.SuggestionsOut]:
        """Find missing and broken links in the knowledge base: documents that mention
        another document by its title or alias without linking it, and links whose target
        document or heading does not exist. Read-only; dismissed suggestions are left out."""
        found = await anyio.to_thread.run_sync(
            lambda: self.state.apart(
                "mcp",
                "suggest_links",
                lambda: self.state.api.suggest_links(doc_path, EVERY, scope_tuple(scopes)),
            )
        )
        out = schemas.suggestions_out(found, limit, offset)
        return ok_result(render.suggestions_text(out), out)

    async def propose_update(
        self,
        doc_path: Annotated[
            str,
            Field(
                min_length=1,
                max_length=1000,
                description="Document to change or create, relative to the repository.",
            ),
        ],
        change_description: Annotated[
            str,
            Field(max_length=10_000, description="Why; becomes the commit message."),
        ],
        new_content: Annotated[
            str,
            Field(
                max_length=2_000_000,
                description="The complete new Markdown of the document (its front matter is "
                "kept when this has none, as get_document's body).",
            ),
        ],
        scopes: Scopes = None,
    ) -> Annotated[CallToolResult, schemas.ProposalOut]:
        """Propose a change to the knowledge base: briefd commits new_content to a new branch
        (briefd/proposal-<id> by default, and opens a pull request when a forge is configured)
        for a human to review. It never changes the served knowledge directly."""
        request = ProposalRequest(
            doc_path, change_description, new_content, scope_tuple(scopes), "mcp"
        )

        def made() -> tuple[Proposal, str | None]:
            proposal = self.state.api.propose_update(request)
            return proposal, where_kept(self.state.api.settings, proposal)

        proposal, kept = await self._call("propose_update", made, exclusive=False)
        out = self.state.proposed(proposal, request.scopes, kept)
        return ok_result(render.proposal_text(out), out)


LIVE_TOOLS = {  # registered only while their product is configured (service/atlassian.py)
    "confluence_search": "Confluence",
    "confluence_page": "Confluence",
    "jira_search": "Jira",
    "jira_issue": "Jira",
}
TOOLS: tuple[tuple[str, ToolAnnotations], ...] = (
    ("search_context", READ_ONLY),
    ("compile_bundle", READ_ONLY),
    ("document_context", READ_ONLY),
    ("get_document", READ_ONLY),
    ("list_scopes", READ_ONLY),
    ("suggest_links", READ_ONLY),
    ("report_usage", WRITES),
)  # and propose_update when proposals are on (see offered)


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


def build_mcp(state: ServiceState, instructions: str, setup_page: bool = True) -> MCPServer[Any]:
    server: MCPServer[Any] = BriefdMCP(
        state,
        "briefd",
        setup_page,
        instructions=instructions,
        version=__version__,
        log_level="WARNING",
    )
    tools = Tools(state)
    for name, hints in offered(state.api.settings):
        add_tool(server, getattr(tools, name), hints)
    for team_tool in TeamTools(state).all():  # knowledge health (T3, T4, T6)
        add_tool(server, team_tool, READ_ONLY)
    return server


def offered(settings: Settings) -> list[tuple[str, ToolAnnotations]]:
    """The tools this server lists: ``propose_update`` only when proposals are on, marked
    ``openWorldHint`` when it pushes or calls a forge."""
    listed = list(TOOLS)
    if settings.proposals.enabled:
        world = WRITES.model_copy(update={"open_world_hint": reaches_out(settings)})
        listed.append(("propose_update", world))
    return listed
