"""The note a search result carries when ``max_tokens`` shaped it (R6, I1): the top hit cut,
left out for smaller ones ranked below it, or everything left out; or when the index holds no
document, so there was nothing to search."""

from __future__ import annotations

from briefd.model import Hit, SearchResult
from briefd.store.scopes import SERVED_NONE
from briefd.tokens import count_tokens

EMPTY_INDEX = (
    "the knowledge base is empty (no document is indexed yet), so there is nothing to search; "
    "index the source: `briefd index`, or on a server POST /api/admin/rebuild (the "
    "dashboard's rebuild)"
)


def empty_index_note(result: SearchResult) -> str | None:
    """The note of a search of an index that holds no document (so no scope to search): without
    it ``{"hits": [], "scopes": []}`` reads as knowledge with nothing on the topic."""
    if result.hits or result.scopes or result.gate == "empty":
        return None
    # files found and none served (outside the scopes): another index run changes nothing
    return next((w for w in result.warnings if w.startswith(SERVED_NONE)), EMPTY_INDEX)


def budget_note(hits: tuple[Hit, ...], kept: list[Hit], max_tokens: int) -> str | None:
    """What an agent needs to know when ``max_tokens`` cut the top hit, left it out for
    smaller ones ranked below it, or left out everything."""
    if not hits:
        return None
    if not kept:
        return too_small(hits, max_tokens)
    if kept[0].chunk_id != hits[0].chunk_id:
        first = next(i for i, h in enumerate(hits) if h.chunk_id == kept[0].chunk_id)
        return passed_over(hits, sum(h.related_to is None for h in hits[:first]), max_tokens)
    if kept[0].content != hits[0].content:
        return cut(hits[0], max_tokens)
    return None


def too_small(hits: tuple[Hit, ...], max_tokens: int) -> str:
    return (
        f"max_tokens={max_tokens} is too small for any section ({len(hits)} matched; the top "
        f"one has {hits[0].tokens} tokens); ask again with a larger max_tokens"
    )


def passed_over(hits: tuple[Hit, ...], above: int, max_tokens: int) -> str:
    """The note when the ``above`` best hits did not fit and a smaller one below them leads:
    without it the first section shown reads as the best match."""
    top = hits[0]
    where = f"{top.doc_path}:{top.start_line}-{top.end_line}"
    said = (
        f"the best-ranked section, {where} ({top.tokens} tokens), did not fit "
        f"max_tokens={max_tokens} and is left out"
        if above == 1
        else f"the {above} best-ranked sections did not fit max_tokens={max_tokens} and are "
        f"left out; the best, {where}, has {top.tokens} tokens"
    )
    return (
        f"{said}: ask again with a larger max_tokens, or read it with get_document("
        f"'{top.doc_path}', start_line={top.start_line}, scopes=['{top.scope}'])"
    )


def cut(top: Hit, max_tokens: int) -> str:
    return (
        f"the top section ({top.tokens} tokens) was cut to fit max_tokens={max_tokens}; "
        f"read it whole with get_document('{top.doc_path}', start_line={top.start_line}, "
        f"scopes=['{top.scope}'])"
    )


def longest(hits: tuple[Hit, ...], passed: int, max_tokens: int) -> int:
    """The tokens of the longest note ``hits`` may get, kept back before they are packed:
    ``passed`` is how many best hits a smaller one may lead past (0: none fits whole)."""
    written = [too_small(hits, max_tokens), cut(hits[0], max_tokens)]
    if passed:
        written.append(passed_over(hits, passed, max_tokens))
    return max(map(count_tokens, written))
