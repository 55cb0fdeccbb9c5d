"""The recall engine's pieces on their own: gate, packing, session memory, request parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.errors import QueryError
from briefd.recall import engine, pack
from briefd.recall.block import (
    POINTER_NOTE,
    POINTER_NOTE_TOKENS,
    SEPARATOR_TOKENS,
    TRUNCATED,
    attribution,
    attribution_tokens,
    block_tokens,
    bound_tokens,
    cost,
    frame_tokens,
    knowledge_block,
)
from briefd.recall.engine import RecallRequest
from briefd.recall.generic import chatter
from briefd.state import LocalState
from briefd.tokens import count_tokens
from tests.conftest import EXAMPLE, EXAMPLE_TR, WriteFiles
from tests.recall.conftest import RELEVANT

OFF_TOPIC = (
    "what is the capital of australia",
    "how to train a puppy to sit",
    "lyrics of a famous love song",
    "best hiking trails in the alps",
    "how many moons does jupiter have",
    "recipe for lentil soup",
    "who painted the mona lisa",
    "tips for growing tomatoes on a balcony",
    "football match results from last weekend",
    "how to knit a scarf",
    "symptoms of the common cold",
    "cheap flights to lisbon in may",
    "history of the roman empire",
    "how to tune a guitar",
    "best movies of the eighties",
    "yoga poses for beginners",
    "how to make sourdough bread",
    "the rules of castling in chess",
    "weather forecast for tomorrow",
    "wedding speech ideas",
)


def test_bm25_gate_keeps_off_topic_prompts_out(indexed: Briefd) -> None:
    noisy = [p for p in OFF_TOPIC if indexed.recall(RecallRequest(p)).sections]
    assert noisy == []


def test_bm25_gate_lets_task_prompts_in(indexed: Briefd) -> None:
    prompts = {
        RELEVANT: "domain/chargebacks.md",
        "API returns 409 idempotency_key_reused, the key was reused with another body": (
            "domain/idempotency.md"
        ),
        "partial refunds: do pending refunds count against the refundable amount": (
            "domain/refunds.md"
        ),
        "idempotency": "domain/idempotency.md",
    }
    for prompt, path in prompts.items():  # the gate's verdict alone: no keyword tiers
        result = indexed.recall(RecallRequest(prompt, mode="bm25"))
        assert (result.mode, result.confidence) == ("bm25", "keyword")
        assert path in [s["doc_path"] for s in result.sections], prompt


def section(chunk: str, tokens: int, content: str = "text") -> dict[str, object]:
    return {
        "chunk_id": chunk,
        "content_hash": f"h-{chunk}",
        "doc_path": "domain/x.md",
        "title": "X",
        "heading_path": ["Y"],
        "content": content,
        "tokens": tokens,
        "updated_at": "2026-01-02T00:00:00+00:00",
    }


def test_fit_counts_the_whole_block_and_keeps_trying() -> None:
    line = attribution_tokens(section("a", 1))  # the attribution line and its separators
    assert line == 35
    sections = [section("a", 600), section("b", 900), section("c", 300)]
    # the frame, then a and c with their lines: 56 + 635 + 335 = 1026; b would need 935 more
    assert [s["chunk_id"] for s in pack.fit(sections, 1026, 10_000)] == ["a", "c"]
    assert [s["chunk_id"] for s in pack.fit(sections, 1025, 10_000)] == ["a"]


def test_fit_truncates_an_oversized_top_section_to_the_block_budget() -> None:
    text = "line of text\n" * 2000
    (head,) = pack.fit([section("a", count_tokens(text), text)], 300, 10_000)
    assert head["content"].endswith("[… section truncated to fit the recall budget]")
    assert block_tokens([head]) <= 300
    assert count_tokens(knowledge_block([head])) <= 300


@pytest.mark.parametrize("count", [None, count_tokens])
def test_a_truncated_section_never_ends_inside_a_character_a_reader_sees_as_one(
    count: pack.Count | None,
) -> None:
    """Cut by characters, the head could end between an emoji and its skin tone, inside a
    family joined by U+200D, between the halves of a flag or before a combining accent."""
    clusters = ["👍🏽", "👨\u200d👩\u200d👧", "🇹🇷", "e\u0301"]
    unit = "Onay {} için, aile {} ve bayrak {} ile cafe{} ve İstanbul. ".format(*clusters)
    text = unit * 80
    inside = {  # offsets of text that fall inside one of the clusters
        start + at + i
        for start in range(0, len(text), len(unit))
        for c in clusters
        for at in [unit.index(c)]
        for i in range(1, len(c))
    }
    heads = set()
    for max_chars in range(1000, 1300, 7):
        (cut,) = pack.fit([section("a", count_tokens(text), text)], 1500, max_chars, count)
        head = cut["content"].removesuffix(f"\n{TRUNCATED}")
        assert text.startswith(head), max_chars
        assert len(head) not in inside, (max_chars, head[-6:])
        heads.add(len(head))
    assert len(heads) > 10


def test_brief_is_one_short_section_and_pointers_to_the_others() -> None:
    text = "line of text\n" * 200
    sections = [section(c, count_tokens(text), text) for c in ("a", "b", "c", "d")]
    brief = pack.brief(sections, 300, 10_000)
    head, *pointers = brief
    assert head["chunk_id"] == "a" and head["content"].endswith(TRUNCATED)
    assert len(head["content"]) >= pack.MIN_HEAD_CHARS
    assert pointers and [p["chunk_id"] for p in pointers] == ["b", "c", "d"][: len(pointers)]
    assert all(p["pointer"] and p["content"] == "" and p["tokens"] == 0 for p in pointers)
    block = knowledge_block(brief)
    assert f"{POINTER_NOTE}\n" in block
    assert "[source: domain/x.md · Y · chunk b · not shown]\n" in block
    assert block_tokens(brief) <= 300
    assert count_tokens(block) <= block_tokens(brief)


def _padded(first: str, second: str) -> str:
    return f"| {first:<26} | {second:<256} |"


def test_a_weak_answers_head_takes_the_lines_that_still_fit() -> None:
    """The head was guessed from the section's mean characters per token and only ever cut
    shorter: over a table padded with spaces (as Docker's reference docs are) a weak answer
    showed the header and no row, a third of its budget unused."""
    rows = [
        ("no", "never"),
        ("on-failure", "when it exits with an error"),
        ("always", "whatever its exit status"),
        ("unless-stopped", "unless it was stopped by hand"),
    ]
    text = (
        "Use the `--restart` flag to choose a container's restart policy. A restart policy\n"
        "controls whether the daemon restarts a container after it exits. The policies:\n\n"
        + _padded("Policy", "Result")
        + "\n|:"
        + "-" * 27
        + "|:"
        + "-" * 257
        + "|\n"
        + "\n".join(_padded(f"**{p}**", f"Restart the container {w}.") for p, w in rows)
        + "\n\n"
        + "A restart policy takes effect once the container has run for ten seconds.\n" * 12
    )
    sections = [section(c, count_tokens(text), text) for c in ("a", "b", "c", "d")]
    for budget in range(240, 360, 10):
        head, *pointers = pack.brief(sections, budget, 10_000, count_tokens)
        assert len(pointers) == 3 and head["content"].endswith(TRUNCATED)
        assert head["content"].count("| **") >= 3, budget
        assert block_tokens([head, *pointers], count_tokens) <= budget
        assert count_tokens(knowledge_block([head, *pointers])) <= budget


def test_brief_gives_up_pointers_before_the_section() -> None:
    short = [section(c, 30) for c in ("a", "b")]
    assert [s.get("pointer", False) for s in pack.brief(short, 300, 10_000)] == [False, True]
    # no room for a pointer next to a head worth reading: the section alone, as fit has it
    alone = pack.brief(short, 125, 10_000)
    assert [s["chunk_id"] for s in alone] == ["a"] and not alone[0].get("pointer")
    assert pack.brief([], 300, 10_000) == []


def test_unseen_needs_the_same_content() -> None:
    fresh, repeated = pack.unseen(
        [section("a", 1), section("b", 1)], {"a": "h-a", "b": "changed since"}
    )
    assert ([s["chunk_id"] for s in fresh], repeated) == (["b"], 1)


def test_session_rows_expire(indexed: Briefd) -> None:
    memory = LocalState(lambda: indexed.store)
    memory.remember("s", [("c1", "h1")], now=1000.0, hours=1)
    assert memory.seen("s", now=1000.0 + 3599, hours=1) == {"c1": "h1"}
    assert memory.seen("s", now=1000.0 + 3601, hours=1) == {}
    memory.remember("t", [("c2", "h2")], now=1000.0 + 7200, hours=1)
    with indexed.store.read() as conn:
        rows = conn.execute("SELECT session_id FROM recall_injections").fetchall()
    assert [r[0] for r in rows] == ["t"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "hook input must be a JSON object with a 'prompt' string"),
        ({"prompt": 3}, "hook input has no 'prompt' string; send the prompt as 'prompt'"),
        ({"prompt": "x", "top_k": "9"}, "hook input 'top_k' must be a int, got '9'"),
        ({"prompt": "x", "mode": "fast"}, "recall mode must be auto, bm25 or hybrid, got 'fast'"),
    ],
)
def test_request_from_bad_json(data: object, message: str) -> None:
    with pytest.raises(QueryError) as caught:
        RecallRequest.from_json(data)
    assert str(caught.value) == message


SMALL = {
    "domain/refunds.md": "# Refunds\n\n## Partial refunds\n\nA partial refund returns part of a "
    "captured payment within 180 days.\n\n## Disputes\n\nA disputed payment cannot be refunded.\n",
    "domain/settlement.md": "# Settlement\n\n## Cutoff\n\nThe daily settlement cutoff is 22:00 CET.\n",
    "conventions/logging.md": "# Logging\n\nNever log card numbers.\n",
}


def test_hybrid_recall_uses_the_semantic_gate(hybrid_api: Briefd, write_files: WriteFiles) -> None:
    """With vectors (the fake embedder) recall is hybrid and the semantic gate decides."""
    write_files(SMALL)
    hybrid_api.index()
    on = hybrid_api.recall(RecallRequest("partial refund of a captured payment", session_id="h"))
    assert (on.mode, on.gate) == ("hybrid", "kept")
    assert on.sections[0]["heading_path"] == ["Partial refunds"]
    off = hybrid_api.recall(RecallRequest("knit me a warm scarf"))
    assert (off.mode, off.gate, off.sections) == ("hybrid", "empty", ())
    assert off.reason == "the prompt looks unrelated to the knowledge base"
    forced = hybrid_api.recall(RecallRequest("partial refund of a captured payment", mode="bm25"))
    assert forced.mode == "bm25" and forced.sections
    for mode in ("hybrid", "bm25"):
        idle = hybrid_api.recall(RecallRequest("What is it? Why not, then?", mode=mode))
        assert (idle.gate, idle.sections) == ("empty", ())
        assert idle.reason == "the prompt has only common words"


def test_a_pasted_log_is_cut_down_not_slow(indexed: Briefd) -> None:
    words = (EXAMPLE / "domain" / "chargebacks.md").read_text().split()
    prompt = " ".join(words[i % len(words)] + str(i % 97) for i in range(6000))
    result = indexed.recall(RecallRequest(prompt))
    assert len(result.prompt) == 20_000
    assert result.took_ms < 5000


def test_block_frame_is_pinned_to_the_tokenizer() -> None:
    from briefd.recall.block import CLOSE, FRAME_TOKENS, INTRO, OPEN, RELATED_NOTE

    frame = count_tokens(f"{OPEN}\n{INTRO}{RELATED_NOTE}\n\n\n{CLOSE}\n")
    assert frame <= FRAME_TOKENS <= frame + 4
    noted = count_tokens(f"{OPEN}\n{INTRO}{RELATED_NOTE}{POINTER_NOTE}\n\n\n{CLOSE}\n")
    assert noted <= FRAME_TOKENS + POINTER_NOTE_TOKENS <= noted + 4
    assert frame_tokens(True, count_tokens) == noted  # exact: what the largest frame costs


def test_the_intro_explains_only_what_the_block_holds() -> None:
    plain = knowledge_block([section("a", 5)])
    intro = "best match first. Each starts with its source: path · heading · last updated · "
    assert f"{intro}chunk id.\n" in plain
    assert "marked related" not in plain and "not shown" not in plain
    linked = knowledge_block([section("a", 5), {**section("b", 5), "related_to": "a"}])
    assert "chunk id. A section marked related is linked from one that matches.\n" in linked
    pointed = knowledge_block([section("a", 5), pack.pointer(section("b", 5))])
    assert f"chunk id.{POINTER_NOTE}\n" in pointed


def test_exact_counting_counts_the_rendered_block() -> None:
    """With the tokenizer (hybrid answers) the block's tokens are the rendered block's, not a
    sum of bounds; a cut head is counted, not prorated, and fills the budget to the token."""
    text = "line of text\n" * 2000
    sections = [section("a", count_tokens(text), text), section("b", 3, "short")]
    for budget in (150, 300, 1000):
        (head,) = pack.fit(sections[:1], budget, 10_000, count_tokens)
        block = knowledge_block([head])
        assert head["content"].endswith(TRUNCATED) and head["tokens"] == count_tokens(
            head["content"]
        )
        assert block_tokens([head], count_tokens) == count_tokens(block)
        assert budget - 5 <= count_tokens(block) <= budget


@pytest.mark.parametrize(("root", "fewest"), [(EXAMPLE, 4), (EXAMPLE_TR, 2)], ids=["en", "tr"])
def test_exact_counting_carries_the_pointers_that_fit(api: Briefd, root: Path, fewest: int) -> None:
    """On every run of five consecutive sections of both example knowledge bases, a weak block
    (300 tokens) holds its head and the pointers its real tokens leave room for: every one of
    the four in English (the bound held 1-3: it counts an English source line at ~1.5x), two
    to four in Turkish (the bound 0-2); never over the budget, never fewer than the bound."""
    api.index(root)
    with api.store.read() as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM chunks ORDER BY rowid")]
        groups = [engine._hydrate(conn, [(c, 1.0) for c in ids[i : i + 5]]) for i in range(40)]
    counts = []
    for sections in groups:
        exact = pack.brief(sections, 300, 10_000, count_tokens)
        bound = pack.brief(sections, 300, 10_000)
        pointers = [s["chunk_id"] for s in exact if s.get("pointer")]
        assert pointers == [s["chunk_id"] for s in sections[1 : 1 + len(pointers)]]
        assert len(pointers) >= sum(1 for s in bound if s.get("pointer"))
        block = knowledge_block(exact)
        assert count_tokens(block) == block_tokens(exact, count_tokens) <= 300
        assert len(exact[0]["content"]) >= len(TRUNCATED)  # the head is there, whole or cut
        counts.append(len(pointers))
    assert min(counts) >= fewest


@pytest.mark.parametrize("root", [EXAMPLE, EXAMPLE_TR], ids=["en", "tr"])
def test_attribution_bound_holds_for_every_section(api: Briefd, root: Path) -> None:
    """The hook counts attribution lines without the tokenizer; on every section of both
    example knowledge bases the bound is at least the real count, and not far above it (Turkish
    words take about one token per three bytes, so the bound cannot be tighter for English)."""
    api.index(root)
    with api.store.read() as conn:
        rows = conn.execute(
            "SELECT c.id, d.path, c.title, c.heading_path, coalesce(d.updated_at, d.indexed_at) "
            "FROM chunks c JOIN documents d ON d.id = c.doc_id"
        ).fetchall()
    assert len(rows) > 50
    ratios: list[float] = []
    for chunk, path, title, heading, updated in rows:
        item = {"doc_path": path, "title": title, "chunk_id": chunk, "updated_at": updated}
        item["heading_path"] = json.loads(heading)
        real = count_tokens(attribution(item)) + SEPARATOR_TOKENS
        ratios.append(attribution_tokens(item) / real)
        assert real <= attribution_tokens(item), attribution(item)
        item["related_to"] = chunk
        assert count_tokens(attribution(item)) + SEPARATOR_TOKENS <= attribution_tokens(item)
        item["pointer"] = True
        assert count_tokens(attribution(item)) + SEPARATOR_TOKENS <= attribution_tokens(item)
    assert max(ratios) <= 1.8  # English lines cost the bound ~1.5x, Turkish ~1.2x


@pytest.mark.parametrize(
    "line",
    [
        "[source: docs/支付/退款规则.md · 退款规则 › 部分退款 · updated 2026-11-29 · chunk 84ca51f62ca53455]",
        "[source: docs/決済.md · 決済の流れ › 返金ポリシー · updated 2026-11-29 · chunk 84ca51f62ca53455]",
        "[source: docs/платежи.md · Возвраты › Частичный возврат · updated 2026-11-29 · chunk 0809fc42]",
        "[source: docs/🚀.md · Émoji 🚀 › ℹ️ Notes · updated unknown · chunk 84ca51f62ca53455]",
    ],
)
def test_attribution_bound_holds_beyond_latin_script(line: str) -> None:
    assert count_tokens(line) <= bound_tokens(line)


@pytest.mark.parametrize(
    ("content", "written"),
    [
        ("Intro\n\n```json\n{", "Intro\n\n```json\n{\n```"),
        ("Intro\n\n~~~sh\nrun", "Intro\n\n~~~sh\nrun\n~~~"),
        ("Intro\n\n<!-- note", "Intro\n\n<!-- note\n-->"),
        ("Intro\n\n<pre>\nx", "Intro\n\n<pre>\nx\n</pre>"),
        ("Intro\n\n```json", "Intro"),  # a fence with nothing in it says nothing
        ("- step\n\n  ```sh\n  run", "- step\n\n  ```sh\n  run\n  ```"),
        ("> ```\n> code", "> ```\n> code\n> ```"),
        ("````\n```\nz", "````\n```\nz\n````"),
        ("a\n\n```\nx\n```\nb", "a\n\n```\nx\n```\nb"),  # closed: as it is
        ("a\n\n    ```\n    code", "a\n\n    ```\n    code"),  # indented code, no fence
        ("<!--\n```\n-->\nok", "<!--\n```\n-->\nok"),
        ("- ```sh\n  run\nafter", "- ```sh\n  run\nafter"),  # closed by its list item's end
        ("\n    GET /v1\n\nReads it.\n", "\n    GET /v1\n\nReads it."),  # apart from the line
        ("\n\n  - nested\n- item\n", "  - nested\n- item"),
    ],
)
def test_a_section_is_written_whole_and_closed(content: str, written: str) -> None:
    """What a section's document leaves open is closed in the block, as bundles close it (the
    closing tag and the next section's source line were read as code or hidden); its first
    line keeps its indentation, and indented code is set apart from the source line, or it
    would continue that line's paragraph."""
    item = section("a", count_tokens(content), content)
    assert knowledge_block([item]).split("]\n", 1)[1] == f"{written}\n</knowledge>\n"


def test_what_writing_a_section_adds_is_counted() -> None:
    """The closing lines and the blank line before indented code count against the budget,
    with the tokenizer and with the bound."""
    contents = ["x\n\n<!-- a note\n", "\n    GET /v1\n", "```\n" + "code line\n" * 5]
    items = [section(str(n), count_tokens(c), c) for n, c in enumerate(contents)]
    real = count_tokens(knowledge_block(items))
    assert frame_tokens(False) + sum(cost(s) for s in items) >= real
    exact = frame_tokens(False, count_tokens) + sum(cost(s, count_tokens) for s in items)
    assert exact >= real
    assert pack.fit(items, exact, 10_000, count_tokens) == items


@pytest.mark.parametrize("count", [None, count_tokens])
def test_a_head_cut_inside_a_fence_is_closed_before_the_mark(count: pack.Count | None) -> None:
    """The truncation mark (and the block's closing tag) were read as the code's last line."""
    text = "Setup steps.\n\n```sh\n" + "run --the-long-command with arguments\n" * 400 + "```\n"
    (head,) = pack.fit([section("a", count_tokens(text), text)], 300, 10_000, count)
    block = knowledge_block([head])
    assert block.endswith(f"with arguments\n```\n{TRUNCATED}\n</knowledge>\n")
    assert count_tokens(block) <= block_tokens([head], count) <= 300


@pytest.mark.parametrize(
    ("prompt", "said"),
    [
        ("continue", True),
        ("thanks, go on", True),
        ("run the tests again", True),
        ("sounds good, keep going", True),
        ("tamam, devam et", True),
        ("release workflow", False),  # probe words only: may be a question the knowledge misses
        ("retry policy", False),
        ("configure the release workflow again", False),  # past CHATTER_TERMS
        ("what is our kubernetes autoscaling policy", False),
    ],
)
def test_chatter_is_turn_taking_not_a_short_question(prompt: str, said: bool) -> None:
    """T3: what the gaps report leaves out of hook prompts nothing matched."""
    assert chatter(prompt) is said


TWO_DOCUMENTS = {
    "domain/refunds.md": """
        # Refunds

        A customer can ask for a refund within 30 days of the purchase. Partial refunds are
        allowed for orders with more than one item.

        ## Refund window

        The refund window is 30 days from delivery, 60 days for members of the loyalty programme.

        ## Approval

        Refunds above 500 EUR need approval from a finance lead before they are sent to the
        acquirer.
        """,
    "domain/retries.md": """
        # Payment retries

        ## Soft declines

        A soft decline (insufficient funds, issuer unavailable) is retried up to 3 times with
        exponential backoff: after 1 hour, 6 hours and 24 hours.

        ## Hard declines

        A hard decline (stolen card, closed account) is never retried. The order is cancelled
        and the customer is asked for another payment method.
        """,
}


def test_bm25_recall_on_a_two_document_knowledge_base_finds_its_sections(
    api: Briefd, write_files: WriteFiles
) -> None:
    """The hook's first prompt (BM25, before the daemon has the model): in a 5-chunk index a
    word held by 2 sections ("retry", "decline") is no common word, so a question naming them
    has the evidence of two or three specific words; a prompt sharing one word stays out."""
    api.index(write_files(TWO_DOCUMENTS))
    asked = {
        "how often do we retry a soft decline": ["Soft declines"],
        "what happens on a hard decline": ["Hard declines"],
        "is there a refund window": ["Refund window"],
    }
    for prompt, headings in asked.items():
        result = api.recall(RecallRequest(prompt))
        assert (result.mode, result.gate) == ("bm25", "kept"), (prompt, result.reason)
        assert [s["heading_path"] for s in result.sections][:1] == [headings], prompt
    for prompt in ("how do I retry a failed git push", "how to decline a meeting politely"):
        result = api.recall(RecallRequest(prompt))
        assert (result.gate, result.sections) == ("empty", ()), prompt


def test_a_hybrid_recall_searches_a_long_prompts_head_of_at_most_max_terms_words() -> None:
    """See tests/hook/test_daemon_long.py: the words a hybrid recall searches are bounded, as
    a BM25 recall's are; a prompt within the bound is searched as it is."""
    from briefd.recall.evidence import MAX_TERMS
    from briefd.text import query_terms

    assert engine.searched(RELEVANT) == RELEVANT
    pages = "\n".join(p.read_text() for p in sorted((EXAMPLE / "conventions").glob("*.md"))[:3])
    head = engine.searched(pages)
    assert pages.startswith(head) and len(head) < len(pages) // 10
    assert (
        len(set(query_terms(head))) <= MAX_TERMS < len(set(query_terms(pages[: len(head) + 300])))
    )
    blob = "".join(f"w{n}x" for n in range(5000))  # minified: no space at all
    assert 0 < len(engine.searched(blob)) < len(blob)
