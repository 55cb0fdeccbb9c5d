"""Markdown of what Confluence and Jira answered, cut from the end to ``max_tokens`` (pure).

An issue reads: title, metadata, related issues, linked pages, description, ``jira.fields``,
comments newest first — so a tight budget loses the oldest comments first and the title and
metadata last. A page reads: title, metadata, body. Search results are lists whose tail goes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from briefd.atlassian.model import (
    Fitted,
    Issue,
    IssueAnswer,
    IssueRow,
    IssueSearchAnswer,
    LinkedPage,
    Page,
    PageAnswer,
    PageHit,
    PageSearchAnswer,
    RelatedIssue,
)
from briefd.text import whole_characters
from briefd.tokens import count_tokens, head_tokens

SEPARATOR = "\n\n"
MIN_HEAD = 16
QUERY_WORDS = 60
QUERY_HTML = 20_000  # characters of a description's HTML read for its first words
ASK_PAGE = "ask with a larger max_tokens"
ASK_ISSUE = "ask jira_issue with a larger max_tokens"
LARGEST = 50_000  # the largest max_tokens MCP and REST take for a page or an issue
Answer = TypeVar("Answer", PageSearchAnswer, PageAnswer, IssueSearchAnswer, IssueAnswer)
_FENCE = re.compile(r"^ {0,3}(`{3,})")
_TARGET = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"(?:[^\"\\]|\\.)*\")?\)")
_MARK = re.compile(r"^(?:#{1,6}|[-*+>|]|\d{1,9}[.)]|[`~]{3,}\S*|-{3,}|\*{3,}|_{3,})$")


def fit(blocks: Sequence[str], max_tokens: int, ask: str, whole: int | None = None) -> Fitted:
    """``blocks`` joined, cut from the end to ``max_tokens``; the cut is marked and says how to
    get the rest (``ask``). ``whole``: the tokens of ``blocks`` joined, when a cut before
    counted them (a refit: counting a page of megabytes again costs seconds)."""
    full = SEPARATOR.join(b for b in blocks if b)
    total = count_tokens(full) if whole is None else whole
    if total <= max_tokens:
        return Fitted(full, total, False, total, ask)
    marker = f"{SEPARATOR}[… cut to max_tokens: {{}} of {total} tokens shown; {ask}]"
    room = max_tokens - count_tokens(marker.format(total))
    kept: list[str] = []
    used = 0
    for block in (b for b in blocks if b):
        size = count_tokens(block) + (2 if kept else 0)
        if used + size <= room:
            kept.append(block)
            used += size
            continue
        if room - used - 2 >= MIN_HEAD:
            kept.append(_head(block, room - used - 2))
        break
    while kept:
        text = SEPARATOR.join(kept)
        result = text + marker.format(count_tokens(text))
        tokens = count_tokens(result)
        if tokens <= max_tokens:
            return Fitted(result, tokens, True, total, ask)
        kept.pop()
    text = marker.format(0).lstrip()
    return Fitted(text, count_tokens(text), True, total, ask)


def ask_for_more(ask: str, max_tokens: int, url: str) -> str:
    """``ask`` (a larger max_tokens), or where the rest is when ``max_tokens`` is already the
    largest a lookup takes: an agent told to ask for more there asks in vain."""
    if max_tokens < LARGEST:
        return ask
    return f"{LARGEST} is the largest max_tokens: read the rest at {url}"


def _head(block: str, limit: int) -> str:
    head = block[: whole_characters(block, len(head_tokens(block, limit)))]
    cut = head.rfind("\n")
    if cut > len(head) // 2:
        head = head[:cut]
    head = head.rstrip()
    fence = open_fence(head)
    return f"{head}\n{fence}" if fence else head  # close the code block the cut opened


def open_fence(text: str, fence: str = "") -> str:
    """The fence of a code block ``text`` leaves open ("" when none); ``fence``: the one open
    before ``text`` (text read in parts). A block opened by four backticks holds lines of
    three (convert.fence): only a bare run as long closes it."""
    for line in text.splitlines():
        found = _FENCE.match(line)
        if found is None:
            continue
        ticks = found.group(1)
        if not fence:
            fence = ticks
        elif len(ticks) >= len(fence) and line.strip() == ticks:
            fence = ""
    return fence


def issue_blocks(issue: Issue) -> list[str]:
    meta = [issue.type, issue.status, f"priority {issue.priority}" if issue.priority else ""]
    meta += [f"assignee {issue.assignee}", f"reporter {issue.reporter}" if issue.reporter else ""]
    meta += [f"resolution {issue.resolution}" if issue.resolution else ""]
    meta += [f"created {issue.created}", f"updated {issue.updated}", issue.url]
    lists = [
        ("labels", issue.labels),
        ("components", issue.components),
        ("fix versions", issue.fix_versions),
    ]
    extra = " · ".join(f"{name}: {', '.join(values)}" for name, values in lists if values)
    blocks = [f"# {issue.key}: {issue.summary}", " · ".join(m for m in meta if m)]
    blocks.append(extra)
    if issue.related:
        rows = [related_row(r) for r in issue.related]
        blocks.append("## Related issues\n\n" + "\n".join(rows))
    if issue.pages:
        rows = [page_row(p) for p in issue.pages]
        blocks.append("## Linked pages\n\n" + "\n".join(rows))
    description = html_to_markdown(issue.description_html, issue.url)
    blocks.append("## Description\n\n" + (description or "(no description)"))
    blocks += [f"## {name}\n\n{html_to_markdown(v, issue.url)}" for name, v in issue.fields]
    if issue.comments:
        shown = len(issue.comments)
        older = issue.comments_total - shown
        more = f"; {older} older not read" if older > 0 else ""
        blocks.append(f"## Comments ({shown}, newest first{more})")
        for c in issue.comments:
            when = c.created[:16].replace("T", " ")
            blocks.append(f"### {c.author} · {when}\n\n{html_to_markdown(c.html, issue.url)}")
    return blocks


def related_row(link: RelatedIssue) -> str:
    if link.outside:
        return f"- {link.relation} {link.key} (outside jira.projects)"
    return f"- {link.relation} {link.key} ({link.status}): {link.summary}"


def page_row(page: LinkedPage) -> str:
    call = f' · confluence_page("{page.page_id}")' if page.page_id else ""
    return f"- [{page.title}]({page.url}){call}"


def shown(answer: IssueAnswer) -> tuple[tuple[RelatedIssue, ...], tuple[LinkedPage, ...]]:
    """The related issues and linked pages whose whole line the answer's Markdown kept: what
    the structured answer lists beside it, so that a cut leaves neither over the budget."""
    lines = set(answer.text.markdown.splitlines())
    related = tuple(r for r in answer.issue.related if related_row(r) in lines)
    return related, tuple(p for p in answer.issue.pages if page_row(p) in lines)


def issue_query(issue: Issue) -> str:
    """The summary and the first words of the description: what a bundle searches with. The
    words are read from the description's start (converting a 1 MB description whole for 60
    words took seconds); the whole of it only when its start holds too few."""
    html = issue.description_html
    words = description_words(html_to_markdown(html[:QUERY_HTML]))
    if len(html) > QUERY_HTML and len(words) <= QUERY_WORDS:  # (the last may be cut short)
        words = description_words(html_to_markdown(html))
    return " ".join([issue.summary, *words[:QUERY_WORDS]]).strip()


def description_words(markdown: str) -> list[str]:
    """The words of ``markdown``, without its markup: link and image targets (an attachment's
    ``/rest/api/3/attachment/content/10001`` searched the knowledge for REST APIs), bare
    URLs, heading and list marks, fences, table pipes; a link's or image's text stays."""
    words = []
    for word in _TARGET.sub("]", markdown).split():
        if _MARK.match(word) or word.startswith(("http://", "https://", "data:")):
            continue
        word = word.strip("[]!`*")
        if word:
            words.append(word)
    return words


def page_blocks(page: Page) -> list[str]:
    info = page.info
    meta = [f"page {info.id}", f"space {info.space}", f"version {info.version}"]
    meta += [f"updated {info.updated}" if info.updated else "", info.url]
    body = html_to_markdown(page.html, info.url) or "(empty page)"
    return [f"# {info.title}", " · ".join(m for m in meta if m), *paragraphs(body)]


def paragraphs(markdown: str) -> list[str]:
    """``markdown`` split at blank lines, except inside a code block: a block with blank
    lines stays one, so a cut between blocks never leaves its fence open."""
    found: list[list[str]] = []
    fence = ""  # the fence the parts so far leave open: each part is read once, not each block
    for part in markdown.split(SEPARATOR):
        if fence:
            found[-1].append(part)
        else:
            found.append([part])
        fence = open_fence(part, fence)
    return [SEPARATOR.join(parts) for parts in found]


def page_hit_block(hit: PageHit) -> str:
    meta = f"[{hit.title}]({hit.url}) · {hit.type} {hit.id} · space {hit.space}"
    updated = f" · updated {hit.updated}" if hit.updated else ""
    excerpt = f"\n  {hit.excerpt}" if hit.excerpt else ""
    return f"- {meta}{updated}{excerpt}"


def issue_row_block(row: IssueRow) -> str:
    parts = [row.key, row.type, row.status, row.summary, f"assignee {row.assignee}"]
    return "- " + " · ".join(p for p in parts if p) + f" · updated {row.updated} · {row.url}"


def listing(head: str, rows: Sequence[str], max_tokens: int, more: int = 0) -> tuple[Fitted, int]:
    """``head`` and as many whole ``rows`` as fit with the note that counts the rest; (text,
    how many of ``rows`` were left out). ``more``: rows already left out before these."""
    kept, text = 0, _listed(head, (), len(rows) + more)
    while kept < len(rows):
        candidate = _listed(head, rows[: kept + 1], len(rows) - kept - 1 + more)
        if count_tokens(candidate) > max_tokens:
            break
        kept, text = kept + 1, candidate
    omitted = len(rows) - kept
    return Fitted(text, count_tokens(text), omitted + more > 0), omitted


def _listed(head: str, rows: Sequence[str], left_out: int) -> str:
    note = f"\n\n({left_out} more left out to stay within max_tokens)" if left_out else ""
    return head + ("\n\n" + "\n".join(rows) if rows else "") + note


def more_matching(more: bool, limit: int, largest: int) -> str:
    """What a list says when the site has more matches than the ``limit`` it was asked for
    ("": none): its count read as all there are."""
    if not more:
        return ""
    if limit < largest:
        return f"more match: ask with a larger limit, up to {largest}, or narrow the search"
    return "more match: narrow the search"


def page_search_answer(
    cql: str, hits: Sequence[PageHit], max_tokens: int, found: int | None = None, more: str = ""
) -> PageSearchAnswer:
    """``hits`` listed within ``max_tokens``; ``found``: how many the search found (default
    all of ``hits``; more when some were left out already); ``more``: :func:`more_matching`."""
    found = len(hits) if found is None else found
    said = f" ({more})" if more else ""
    head = f"{found} Confluence page(s){said} for: {cql}"
    rows = [page_hit_block(h) for h in hits]
    fitted, omitted = listing(head, rows, max_tokens, found - len(hits))
    kept = tuple(hits[: len(hits) - omitted])
    return PageSearchAnswer(cql, kept, found - len(kept), fitted, more)


def issue_search_answer(
    jql: str,
    rows: Sequence[IssueRow],
    max_tokens: int,
    found: int | None = None,
    unseen: Sequence[str] = (),
    more: str = "",
) -> IssueSearchAnswer:
    """As :func:`page_search_answer`, for Jira issues; ``unseen``: projects of jira.projects
    left out of the search, as Jira knows no such project for the account."""
    found = len(rows) if found is None else found
    said = f" ({more})" if more else ""
    head = f"{found} Jira issue(s), newest first{said}, for: {jql}"
    if unseen:
        head += (
            f"\n\n(not searched: {', '.join(unseen)} of jira.projects, which Jira knows no "
            "project by for this account: no permission to browse it, or no such key)"
        )
    blocks = [issue_row_block(r) for r in rows]
    fitted, omitted = listing(head, blocks, max_tokens, found - len(rows))
    kept = tuple(rows[: len(rows) - omitted])
    return IssueSearchAnswer(jql, kept, found - len(kept), fitted, tuple(unseen), more)


def refit(answer: Answer, max_tokens: int) -> Answer:
    """``answer`` cut again, to a smaller ``max_tokens`` (front ends whose envelope costs
    tokens too); an answer already within it is returned as it is."""
    if answer.text.tokens <= max_tokens:
        return answer
    if isinstance(answer, PageSearchAnswer):
        found = len(answer.hits) + answer.omitted
        return page_search_answer(answer.cql, answer.hits, max_tokens, found, answer.more)
    if isinstance(answer, IssueSearchAnswer):
        found = len(answer.issues) + answer.omitted
        unseen, more = answer.unseen, answer.more
        return issue_search_answer(answer.jql, answer.issues, max_tokens, found, unseen, more)
    whole = answer.text.whole or None
    if isinstance(answer, PageAnswer):
        cut = fit(answer.blocks, max_tokens, answer.text.ask or ASK_PAGE, whole)
        return PageAnswer(answer.page, cut, answer.blocks)
    cut = fit(answer.blocks, max_tokens, answer.text.ask or ASK_ISSUE, whole)
    return IssueAnswer(answer.issue, cut, answer.query, answer.blocks)


def html_to_markdown(html: str, base: str = "") -> str:
    """:func:`briefd.atlassian.convert.html_to_markdown`, loaded on first use (bs4 and
    markdownify cost an index run time and memory it never needs, O4). ``base``: the page's or
    issue's URL (on the site ``_links.base`` names), which links from the site's root join."""
    from briefd.atlassian.convert import html_to_markdown as convert

    return convert(html, base)
