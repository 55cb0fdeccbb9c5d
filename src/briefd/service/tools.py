"""MCP tools (I1) on the official SDK's ``MCPServer``: thin adapters over :class:`ServiceState`.

Each tool runs on a worker thread (the state takes the service lock, counts and logs), returns a
text block for the model plus ``structuredContent`` matching its ``outputSchema``, and a briefd
error becomes an ``isError`` result whose text says what to do (see
:func:`briefd.service.mcpserver.add_tool`); the arguments they share are in
:mod:`briefd.service.toolargs`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from briefd.__about__ import __version__
from briefd.atlassian import Account
from briefd.bundles import BundleRequest
from briefd.proposals.model import Proposal, ProposalRequest
from briefd.proposals.policy import reaches_out
from briefd.proposals.service import where_kept
from briefd.retrieval.search import SearchRequest
from briefd.service import documents, render, schemas
from briefd.service.mcpserver import BriefdMCP, account_of, add_tool, ok_result
from briefd.service.schemas import split_list
from briefd.service.state import Caller, ServiceState
from briefd.service.team_tools import TeamTools
from briefd.service.toolargs import (
    DOCUMENT_PART_TOKENS,
    Base,
    Budget,
    HardLimit,
    Mode,
    Paths,
    Scopes,
    Tags,
    Verbose,
    scope_tuple,
)
from briefd.settings import Settings

T = TypeVar("T")
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def bundle_result(out: schemas.BundleOut) -> CallToolResult:
    """A bundle: ``structuredContent`` without empty fields; the text is the Markdown block
    (markdown mode) or the same JSON (package, manifest)."""
    structured = out.model_dump(mode="json", exclude_none=True)
    return CallToolResult(
        content=[TextContent(type="text", text=render.bundle_text(out, structured))],
        structured_content=structured,
    )


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
            lambda: self.state.suggest_links("mcp", "suggest_links", doc_path, scope_tuple(scopes))
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
            # an absolute path inside the knowledge folder, as get_document takes one
            known = replace(request, doc_path=self.state.doc_path(request.doc_path))
            proposal = self.state.api.propose_update(known)
            return proposal, where_kept(self.state.api.settings, proposal)

        proposal, kept = await self._call("propose_update", made, exclusive=False)
        out = self.state.proposed(proposal, request.scopes, kept)
        return ok_result(render.proposal_text(out), out)


TOOLS: tuple[tuple[str, ToolAnnotations], ...] = (
    ("search_context", READ_ONLY),
    ("compile_bundle", READ_ONLY),
    ("document_context", READ_ONLY),
    ("get_document", READ_ONLY),
    ("list_scopes", READ_ONLY),
    ("suggest_links", READ_ONLY),
    ("report_usage", WRITES),
)  # and propose_update when proposals are on (see offered)


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
