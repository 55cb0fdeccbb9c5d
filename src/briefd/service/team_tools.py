"""The knowledge-health MCP tools (T3, T4, T6): ``knowledge_gaps``, ``knowledge_drift`` and
``knowledge_usage``, read-only, over :class:`ServiceState` like the others in
:mod:`briefd.service.tools` (which registers them). Their ``structuredContent`` is the report
dataclass as JSON, validated against the ``outputSchema`` pydantic derives from it; the text
block is what the model reads."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Annotated, TypeVar

import anyio.to_thread
from mcp_types import CallToolResult, TextContent
from pydantic import Field, TypeAdapter

from briefd.service.render import page_lines
from briefd.service.state import ServiceState
from briefd.team.activity import nothing_logged
from briefd.team.drift import DRIFT_FIX, DriftReport, page
from briefd.team.gaps import (
    GENERIC_LEFT_OUT,
    UNLOGGED_BY,
    Gap,
    GapsReport,
    GapsRequest,
    listed_some,
)
from briefd.team.period import shown_since
from briefd.team.usage import UsageReport, gone_note
from briefd.text import counted, shown

T = TypeVar("T")
Since = Annotated[
    str,
    Field(
        max_length=40,
        description="Window: a span back from now (12h, 30d, 2w) or a date (2026-01-31).",
    ),
]

DRIFT_COMMITS_SHOWN = 5  # per document in the text (the JSON lists more)
MAX_DRIFT_LISTED = 100  # the largest limit knowledge_drift takes: ~4 KB of JSON a document
# the largest limit knowledge_gaps and knowledge_usage take: a gap is ~0.5 KB of text and JSON,
# a usage page three lists (served documents, sections, never served) of this many
MAX_REPORT_LISTED = 100
# a gap's phrasings as the tool gives them: a bundle's task is logged whole (20,000 characters
# at most), and 20 gaps asked with pasted tasks of ~4,000 were 80 KB of text and 86 KB of JSON
PHRASING_CHARS = 300


def report_result(text: str, report: object) -> CallToolResult:
    structured = TypeAdapter(type(report)).dump_python(report, mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


class TeamTools:
    """The tool implementations, bound to the service state."""

    def __init__(self, state: ServiceState) -> None:
        self.state = state

    def all(self) -> list[Callable[..., Awaitable[CallToolResult]]]:
        return [self.knowledge_gaps, self.knowledge_drift, self.knowledge_usage]

    async def _call(self, name: str, fn: Callable[[], T], exclusive: bool = True) -> T:
        """``fn`` on a worker thread, counted as the tool ``name``; ``exclusive=False`` for the
        reports that read on a connection of their own (they never hold up searches)."""
        return await anyio.to_thread.run_sync(lambda: self.state.call("mcp", name, fn, exclusive))

    async def knowledge_gaps(
        self,
        since: Since = "30d",
        min_count: Annotated[int, Field(ge=1, le=100_000)] = 1,
        limit: Annotated[int, Field(ge=1, le=MAX_REPORT_LISTED)] = 20,
        offset: Annotated[int, Field(ge=0, description="Skip this many gaps (the next page).")] = 0,
    ) -> Annotated[CallToolResult, GapsReport]:
        """What agents ask that the team's knowledge base does not answer well: similar
        queries grouped, with how often they were asked, by which surface, the best score they
        got, whether the relevance gate emptied them and the sections they got, ranked by
        frequency x weakness (limit of them from offset; gaps_count counts all; each phrasing
        up to 300 characters). Queries whose bundle was reported useful are left out.
        Read-only."""
        request = GapsRequest(since, min_count, limit, offset)
        await anyio.to_thread.run_sync(self.state.saved_log)  # never under the service lock
        # read and grouped on a connection of its own: the lock only while phrasings are embedded
        found = await anyio.to_thread.run_sync(
            lambda: self.state.apart(
                "mcp", "knowledge_gaps", lambda: self.state.api.gaps(request, self.state.lock)
            )
        )
        report = clipped(found)
        return report_result(gaps_text(report, repeated(since, min_count)), report)

    async def knowledge_drift(
        self,
        limit: Annotated[int, Field(ge=1, le=MAX_DRIFT_LISTED)] = 20,
        offset: Annotated[
            int, Field(ge=0, description="Skip this many drifting documents (the next page).")
        ] = 0,
    ) -> Annotated[CallToolResult, DriftReport]:
        """Knowledge documents that may be stale: commits in the configured code repositories
        touched the paths a document's refs govern after the document last changed. Lists
        such documents, longest drifting first (limit of them from offset; drifting counts
        all), with the commits (hash, date, author, subject, paths) and how long each has
        drifted. Read-only (refreshed on every sync)."""
        report = await self._call("knowledge_drift", self.state.api.drift, exclusive=False)
        paged = page(report, limit, offset)
        shown = replace(paged, uncovered=paged.uncovered[:MAX_DRIFT_LISTED])
        return report_result(drift_text(shown), shown)

    async def knowledge_usage(
        self,
        since: Since = "30d",
        limit: Annotated[int, Field(ge=1, le=MAX_REPORT_LISTED)] = 20,
        offset: Annotated[
            int,
            Field(
                ge=0,
                description="Skip this many served documents, sections and never-served "
                "documents (the next page).",
            ),
        ] = 0,
    ) -> Annotated[CallToolResult, UsageReport]:
        """Which knowledge documents and sections are served to agents, how often, by which
        surface (MCP, REST, hook), how often they were reported useful, which documents are
        never served (limit of each list from offset; the *_count fields count all), and
        requests per day. Read-only."""
        await anyio.to_thread.run_sync(self.state.saved_log)
        report = await self._call(
            "knowledge_usage",
            lambda: self.state.api.usage(since, limit, offset),
            exclusive=False,
        )
        return report_result(usage_text(report, repeated(since)), report)


def clipped(report: GapsReport) -> GapsReport:
    """The report with each gap's phrasings cut to their first ``PHRASING_CHARS`` characters
    and "…" (GET /api/gaps and the CLI keep them whole)."""

    def cut(gap: Gap) -> Gap:
        query = None if gap.query is None else shown(gap.query, PHRASING_CHARS)
        variants = tuple(shown(v, PHRASING_CHARS) for v in gap.variants)
        return replace(gap, query=query, variants=variants)

    return replace(report, gaps=tuple(cut(gap) for gap in report.gaps))


def repeated(since: str, min_count: int = 1) -> str:
    """The arguments a call for the next page repeats (those not left at their default), so
    that it reads the same window: 'since="7d", '."""
    given = [f"since={json.dumps(since)}"] if since != "30d" else []
    given += [f"min_count={min_count}"] if min_count != 1 else []
    return "".join(f"{arg}, " for arg in given)


def gaps_text(report: GapsReport, repeat: str = "") -> str:
    """The gaps listed, numbered by their rank among all, and the call for the next page
    (``repeat``: the arguments it repeats, see :func:`repeated`)."""
    since = shown_since(report.since)
    listed, total = len(report.gaps), report.gaps_count
    pages = page_lines(
        "knowledge_gaps", "gaps", report.offset, listed, total, MAX_REPORT_LISTED, repeat
    )
    if report.gaps:
        end = report.offset + len(report.gaps)
        some = f"the first {end}" if not report.offset else f"{report.offset + 1}-{end}"
        lines = [
            f"Knowledge gaps since {since}, most asked x weakest first"
            f"{f' ({some} of {report.gaps_count})' if listed_some(report) else ''}:"
        ]
    elif report.gaps_count:  # an offset past the last of them
        lines = pages
    else:
        lines = [f"No knowledge gaps since {since}: {report.groups} query group(s)."]
    for rank, gap in enumerate(report.gaps, report.offset + 1):
        asked = repr(gap.query) if gap.query else f"(hashed {gap.key[:8]})"  # as the CLI says
        surfaces = ", ".join(f"{n} {s}" for s, n in gap.surfaces.items())
        best = "none" if gap.best_score is None else f"{gap.best_score:.3f}"
        unhelped = f", reported no help {gap.unhelped}" if gap.unhelped else ""
        lines.append(
            f"{rank}. {asked}: asked {gap.asked}x ({surfaces}), empty {gap.empty}, "
            f"gate emptied {gap.gated}{unhelped}, best score {best}, "
            f"weakness {gap.weakness:.2f}"
        )
        lines += [f"   also asked as {v!r}" for v in gap.variants[:3]]
        got = ", ".join(f"{name} ({served}x)" for name, served in gap.documents())
        if got:
            lines.append(f"   got: {got}")
    lines += pages if report.gaps else []
    if report.generic:
        lines.append(f"({report.generic} group(s) left out: {GENERIC_LEFT_OUT})")
    if report.unlogged:
        lines.append(f"({report.unlogged} request(s) logged without text: {UNLOGGED_BY})")
    elif not report.groups:
        lines.append(nothing_logged(report.since))
    return "\n".join(lines)


def drift_text(report: DriftReport) -> str:
    repos = ", ".join(
        f"{r.name} ({r.branch or '?'} at {(r.head or 'none')[:10]}"
        + (f", error: {r.error})" if r.error else ")")
        for r in report.repos
    )
    if not report.repos:
        return "No code repositories are configured (code.repos), so nothing is checked."
    if not report.governed:
        return (
            f"No indexed document has refs, so nothing is checked against {repos}: give a "
            'document the code paths it governs in its front matter (refs: ["src/payments/**"]).'
        )
    governed = counted(report.governed, "document")
    lines = [f"{report.drifting} of {governed} with refs drift ({repos})."]
    for doc in report.documents:
        lines.append(
            f"- {doc.doc_path}: {doc.commit_count} commit(s) since its last change "
            f"{doc.updated_at[:10]}, drifting for {doc.days} day(s)"
        )
        for c in doc.commits[:DRIFT_COMMITS_SHOWN]:
            paths = ", ".join(c.paths[:3]) + (", …" if len(c.paths) > 3 else "")
            where = f"{c.repo} " if len(report.repos) > 1 else ""  # whose commit it is
            lines.append(f"  {where}{c.hash[:10]} {c.at[:10]} {c.author}: {c.subject} [{paths}]")
        if doc.commit_count > DRIFT_COMMITS_SHOWN:
            lines.append(f"  … and {doc.commit_count - DRIFT_COMMITS_SHOWN} older commit(s)")
    lines += [DRIFT_FIX] if report.drifting else []
    lines += drift_pages(report)
    lines += uncovered_lines(report)
    lines += [f"warning: {w}" for w in report.warnings]
    return "\n".join(lines)


def drift_pages(report: DriftReport) -> list[str]:
    """Where the listed documents sit among all drifting ones, and the call for the next."""
    end = report.offset + len(report.documents)
    if not report.offset and end >= report.drifting:
        return []  # every drifting document is listed
    if not report.documents:
        return [
            f"No drifting documents from offset={report.offset}: {report.drifting} drift; call "
            "knowledge_drift with offset=0 (or a smaller offset) to read them."
        ]
    shown = f"{report.offset + 1}-{end}" if report.offset else f"{end}"
    if end >= report.drifting:
        return [f"[{shown} of {report.drifting} drifting documents shown: the last of them]"]
    size = min(report.drifting - end, MAX_DRIFT_LISTED)
    return [
        f"[{shown} of {report.drifting} drifting documents shown: call knowledge_drift with "
        f"offset={end}, limit={size} for the next]"
    ]


UNCOVERED_SHOWN = 20  # documents whose refs cover no file, in the text (MCP JSON: 100)


def uncovered_lines(report: DriftReport) -> list[str]:
    """The documents whose refs cover no file of the code repositories: they never drift, so
    "0 of N drift" would read as all current."""
    if not report.uncovered:
        return []
    count = max(report.uncovered_count, len(report.uncovered))
    lines = [
        f"{counted(count, 'document')} with refs globs that cover no file of the "
        "code repositories (a typo, or code moved or deleted), so no change is ever drift for "
        "them; correct these globs or drop them from refs:"
    ]
    for doc in report.uncovered[:UNCOVERED_SHOWN]:
        lines.append(f"- {doc.doc_path}: {', '.join(doc.globs)}")
    if count > UNCOVERED_SHOWN:
        more = count - UNCOVERED_SHOWN
        some = "" if count == len(report.uncovered) else f", the first {len(report.uncovered)}"
        lines.append(f"  … and {more} more (JSON: uncovered{some})")
    return lines


def usage_text(report: UsageReport, repeat: str = "") -> str:
    """The report's counts, the served documents listed, the never-served ones listed, and
    the call for the next page (``repeat``: the arguments it repeats)."""
    surfaces = ", ".join(f"{n} {s}" for s, n in report.surfaces.items()) or "none"
    lines = [
        f"Since {shown_since(report.since)}: {report.requests} request(s) ({surfaces}); "
        f"{report.feedback_reports} usage report(s), {report.nothing_helped} said nothing helped."
    ]
    if not report.requests:
        lines.append(nothing_logged(report.since))
    lines += [
        f"- {d.doc_path}: served {d.served}x, {d.sections_served} section(s), useful {d.useful}"
        for d in report.documents
    ]
    if gone := gone_note(report):
        lines.append(gone + ".")
    if report.never_served:
        lines.append(
            f"Never served ({report.never_served_count}): " + ", ".join(report.never_served)
        )
    return "\n".join([*lines, *usage_pages(report, repeat)])


def usage_pages(report: UsageReport, repeat: str) -> list[str]:
    """Where the page of each list sits, and the call for the next (none when every row of
    each is listed)."""
    lists = (
        (len(report.documents), report.documents_count, "served documents"),
        (len(report.sections), report.sections_count, "sections (JSON: sections)"),
        (len(report.never_served), report.never_served_count, "never-served documents"),
    )
    most = max(total for _, total, _ in lists)
    if not report.offset and all(listed == total for listed, total, _ in lists):
        return []
    if report.offset >= most:
        return [
            f"No usage rows from offset={report.offset}: the longest list has {most}; call "
            f"knowledge_usage with {repeat}offset=0 (or a smaller offset) to read them."
        ]
    shown = ", ".join(f"{listed} of {total} {noun}" for listed, total, noun in lists)
    end = report.offset + max(listed for listed, _, _ in lists)
    if end >= most:
        return [f"[{shown} shown from offset={report.offset}: the last of them]"]
    size = min(most - end, MAX_REPORT_LISTED)
    return [
        f"[{shown} shown from offset={report.offset}: call knowledge_usage with "
        f"{repeat}offset={end}, limit={size} for the next]"
    ]
