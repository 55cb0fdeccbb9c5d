"""``max_tokens`` on search (R6/I1): direct hits first, a related hit only with the hit it is
linked from, the head of the top hit when nothing fits whole, and nothing at all (with a note)
when not even a useful head fits."""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from briefd.model import Hit, SearchResult
from briefd.retrieval.budget import MIN_HEAD_TOKENS, TRUNCATED, within_budget
from briefd.service import render
from briefd.service.schemas import SearchOut, search_out
from briefd.tokens import count_tokens


def hit(chunk_id: str, words: int, related_to: str | None = None) -> Hit:
    content = " ".join(f"word{i}" for i in range(words))
    return Hit(
        chunk_id=chunk_id,
        doc_path=f"domain/{chunk_id}.md",
        scope="domain",
        title=chunk_id,
        heading=chunk_id,
        heading_path=(chunk_id,),
        content=content,
        score=1.0,
        tokens=count_tokens(content),
        start_line=1,
        end_line=2,
        related_to=related_to,
    )


def ids(kept: list[Hit]) -> list[str]:
    return [h.chunk_id for h in kept]


def test_a_related_hit_needs_the_hit_it_is_linked_from() -> None:
    top, small, linked = hit("top", 40), hit("small", 5), hit("linked", 3, related_to="top")
    assert ids(within_budget((top, small, linked), 1000)[0]) == ["top", "small", "linked"]
    kept, omitted = within_budget((top, small, linked), 30)
    assert ids(kept) == ["small"] and omitted == 2


def test_direct_hits_are_packed_before_related_ones() -> None:
    a, b = hit("a", 10), hit("b", 10)
    linked = hit("linked", 10, related_to="a")
    total = a.tokens + b.tokens
    assert ids(within_budget((a, linked, b), total)[0]) == ["a", "b"]


def test_the_head_of_the_top_hit_when_nothing_fits_whole() -> None:
    top = hit("top", 200)
    (head,), omitted = within_budget((top, hit("linked", 3, related_to="top")), 40)
    assert head.chunk_id == "top" and head.content.endswith(TRUNCATED)
    assert head.tokens == count_tokens(head.content) <= 40 and omitted == 1
    out = search_out(_result((top,)), 250)
    assert out.note == (
        f"the top section ({top.tokens} tokens) was cut to fit max_tokens=250; "
        f"read it whole with get_document('domain/top.md', start_line={top.start_line}, "
        "scopes=['domain'])"
    )
    assert out.hits[0].content.endswith(TRUNCATED) and received(out) <= 250


def test_nothing_but_a_note_when_no_useful_head_fits() -> None:
    top = hit("top", 200)
    smallest = count_tokens(TRUNCATED) + MIN_HEAD_TOKENS
    assert ids(within_budget((top,), smallest)[0]) == ["top"]
    assert within_budget((top,), smallest - 1) == ([], 1)
    out = search_out(_result((top, hit("other", 100))), 5)
    assert out.hits == [] and out.tokens == 0 and out.omitted == 2
    assert out.note == (
        f"max_tokens=5 is too small for any section (2 matched; the top one has {top.tokens} "
        "tokens); ask again with a larger max_tokens"
    )


def test_no_note_when_everything_fits_or_nothing_matched() -> None:
    assert search_out(_result((hit("a", 5),)), 300).note is None
    assert search_out(_result(()), 5).note is None


@st.composite
def ranked(draw: st.DrawFn) -> tuple[Hit, ...]:
    direct = [hit(f"d{i}", draw(st.integers(1, 120))) for i in range(draw(st.integers(1, 6)))]
    related = [
        hit(f"r{i}", draw(st.integers(1, 60)), related_to=draw(st.sampled_from(direct)).chunk_id)
        for i in range(draw(st.integers(0, 3)))
    ]
    return (*direct, *related)


@settings(deadline=None)
@given(ranked(), st.integers(1, 400))
def test_any_budget_is_kept_and_no_related_hit_is_alone(
    hits: tuple[Hit, ...], max_tokens: int
) -> None:
    kept, omitted = within_budget(hits, max_tokens)
    assert sum(h.tokens for h in kept) <= max_tokens
    assert omitted == len(hits) - len(kept)
    direct = [h.chunk_id for h in kept if h.related_to is None]
    assert ids(kept)[: len(direct)] == direct
    assert all(h.related_to in direct for h in kept if h.related_to is not None)
    if not kept:
        assert max_tokens < min(h.tokens for h in hits if h.related_to is None)


@settings(deadline=None)
@given(ranked(), st.integers(150, 1500))
def test_a_search_result_is_within_max_tokens_as_a_client_receives_it(
    hits: tuple[Hit, ...], max_tokens: int
) -> None:
    out = search_out(_result(hits), max_tokens)
    assert received(out) <= max_tokens
    assert out.hits or out.note  # nothing kept is always said


def test_a_pasted_query_is_not_repeated_whole() -> None:
    pasted = "refund rules " * 1500
    out = search_out(_result((hit("a", 5),), pasted), 300)
    assert out.query.startswith("refund rules refund") and len(out.query) < 250
    assert out.query.endswith(f" […{len(pasted) - len(out.query.split(' [')[0])} more characters]")
    assert [h.chunk_id for h in out.hits] == ["a"] and received(out) <= 300


def received(out: SearchOut) -> int:
    """The tokens of the result as an MCP client hands it to the model: its compact JSON."""
    data = out.model_dump(mode="json")
    return count_tokens(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def _result(hits: tuple[Hit, ...], query: str = "q") -> SearchResult:
    return SearchResult(query, "bm25", ("domain",), hits, "r4", 0.1)


def test_an_answer_the_gate_emptied_says_why() -> None:
    why = ("lexical: weak: not in the index: garlic", "semantic: margin -0.013")
    result = SearchResult("plant garlic", "hybrid", ("domain",), (), "r7", 0.1, gate="empty")
    out = search_out(replace(result, gate_reasons=why), 300)
    assert out.gate == "empty" and out.gate_reasons == list(why)
    assert render.search_text(out) == (
        "Nothing returned for 'plant garlic': the relevance gate judged it unrelated to this "
        "knowledge base (lexical: weak: not in the index: garlic; semantic: margin -0.013). If "
        "it is about this team's domain, ask again in the words its documents use."
    )
    kept = search_out(replace(result, gate="kept", hits=(hit("a", 5),), gate_reasons=why), 300)
    assert kept.gate_reasons is None  # said only when they explain an empty answer
