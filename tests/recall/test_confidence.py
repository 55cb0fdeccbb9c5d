"""Confidence-proportional injection and related context (I8): the tiers on their own, then the
engine on the real example index with the hybrid ranking handed in (its specificity chosen), and
the calibration data kept apart from the noise set the eval measures with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from briefd.api import Briefd
from briefd.recall import engine
from briefd.recall.block import RELATED_NOTE, TRUNCATED, knowledge_block
from briefd.recall.confidence import calibrate, leave_one_out, measure, specificity
from briefd.recall.engine import RecallRequest
from briefd.recall.generic import GENERIC_PROMPTS, mostly_in
from briefd.recall.ranking import HybridSearch, Ranking, lexical, tier
from briefd.retrieval.gate import MIN_PER_LANGUAGE
from briefd.settings import Settings
from briefd.team.gaps import GapsRequest
from briefd.tokens import count_tokens
from tests.conftest import REPO, WriteFiles
from tests.recall.conftest import RELEVANT


def best(probes: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Each probe's best cosine against the index's rows (what the calibration is given)."""
    found: np.ndarray = (probes @ index.T).max(axis=1)
    return found


def test_tiers_follow_the_specificity() -> None:
    assert tier(None, 1.645, 3.09) == "strong"  # no calibration: the ranking decides, as before
    assert tier(3.5, 1.645, 3.09) == "strong"
    assert tier(2.0, 1.645, 3.09) == "weak"
    assert tier(1.0, 1.645, 3.09) == "none"


def test_leave_one_out_margins_and_specificity_by_hand() -> None:
    probes = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    index = np.array([[0.8, 0.6]], dtype=np.float32)
    # best against the index minus the mean against the nearest other probes (both of them
    # here, fewer than NEAREST): 0.8-(0.6+0)/2, 0.96-(0.6+0.8)/2, 0.6-(0+0.8)/2
    assert leave_one_out(probes, best(probes, index)) == pytest.approx([0.5, 0.26, 0.2], abs=1e-6)
    generic = calibrate("f", probes, best(probes, index))
    assert generic.mean == pytest.approx(0.96 / 3, abs=1e-6)
    query = np.array([0.8, 0.6], dtype=np.float32)
    margin = 1.0 - (0.8 + 0.96 + 0.6) / 3  # the query is the index row; its three nearest probes
    assert specificity(1.0, query, generic) == pytest.approx(
        (margin - generic.mean) / generic.std, abs=1e-5
    )


def test_one_probe_phrased_like_the_prompt_does_not_decide_alone() -> None:
    probes = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, -1.0], [-1.0, 0.0]], dtype=np.float32)
    generic = calibrate("f", probes, best(probes, np.array([[0.6, 0.8]], dtype=np.float32)))
    near_one = np.array([0.96, 0.28], dtype=np.float32)  # close to the first probe only
    # best probe 0.96, but its three nearest average (0.96 + 0.28 - 0.28) / 3
    expected = (1.0 - 0.96 / 3 - generic.mean) / generic.std
    assert specificity(1.0, near_one, generic) == pytest.approx(expected, abs=1e-5)


def test_a_prompt_in_another_language_is_also_measured_against_its_own_languages_chatter() -> None:
    n = MIN_PER_LANGUAGE
    rng = np.random.default_rng(5)
    english = rng.normal([1.0, 0.0, 0.0], 0.05, (n, 3))  # close to the index's one row
    turkish = rng.normal([0.0, 0.7, 0.7], 0.05, (n, 3))  # another language: far from it
    probes = np.vstack([english, turkish]).astype(np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    index = np.array([[1.0, 0.0, 0.0]], dtype=np.float32)
    generic = calibrate("f", probes, best(probes, index), ("en",) * n + ("tr",) * n)
    assert generic.home == "en" and [name for name, _, _ in generic.levels] == ["en", "tr"]
    question = np.array([0.45, 0.63, 0.63], dtype=np.float32)  # Turkish, nearer the notes
    z, lifted = measure(0.45, question, generic)
    pooled = (0.45 - float(np.mean(np.sort(probes @ question)[-3:])) - generic.mean) / generic.std
    assert lifted and z > pooled and specificity(0.45, question, generic) == z
    # specific against every language's chatter already: not capped for reaching higher still
    # against its own (recall.strong_z; a mixed knowledge base read most English as foreign)
    assert measure(0.45, question, generic, strong=pooled + 0.01) == (z, True)
    assert measure(0.45, question, generic, strong=pooled) == (pooled, False)
    chatter = english[0].astype(np.float32) / np.linalg.norm(english[0])
    assert measure(0.5, chatter, generic)[1] is False  # the index's own language: pooled only
    assert calibrate("f", probes, best(probes, index)).levels == ()  # pooled levels only


def _around(rng: np.random.Generator) -> Callable[[list[float], int], np.ndarray]:
    """Unit vectors drawn close to a centre (count of them), from ``rng``."""

    def around(centre: list[float], count: int) -> np.ndarray:
        found: np.ndarray = rng.normal(centre, 0.03, (count, 3))
        return found / np.linalg.norm(found, axis=1, keepdims=True)

    return around


def test_an_index_in_a_language_with_few_probes_is_home_to_its_prompts() -> None:
    """German notes, German chatter's probes too few for levels of their own: English was read
    as the index's language (its probes came nearer than Turkish ones), so every German prompt
    was foreign, measured against Turkish chatter's lower levels and lifted (chatter too: "mach
    das Logging etwas ausführlicher" 2.78 → 4.82). German prompts are now the index's own."""
    n = MIN_PER_LANGUAGE
    around = _around(np.random.default_rng(11))
    english, turkish = around([0.6, 0.8, 0.0], n), around([0.0, 0.8, 0.6], n)
    german = around([0.95, 0.3, 0.0], 8)
    probes = np.vstack([english, turkish, german]).astype(np.float32)
    languages = ("en",) * n + ("tr",) * n + ("de",) * 8
    index = np.array([[1.0, 0.0, 0.0]], dtype=np.float32)
    generic = calibrate("f", probes, best(probes, index), languages)
    assert generic.home == "de" and [name for name, _, _ in generic.levels] == ["en", "tr"]
    prompt = german[0].astype(np.float32)
    assert measure(0.9, prompt, generic)[1] is False  # pooled only: not lifted


def test_a_prompt_is_read_in_the_language_of_its_nearest_probes_not_of_the_closest_mean() -> None:
    """The index's own language's probes span two kinds (chatter, and build errors or pasted
    tool output far from it), the other language's are chatter only: chatter in the index's
    language is closer *on average* to the other language's probes, but its nearest probes are
    its own language's. It is not lifted by the other language's lower levels; a prompt in the
    other language still is, and one in a language with too few probes for levels of its own
    is measured against the foreign language with levels it comes closest to."""
    n = MIN_PER_LANGUAGE
    around = _around(np.random.default_rng(7))
    chatter, pasted = around([1.0, 0.0, 0.0], n), around([0.0, 0.0, 1.0], n)
    turkish, german = around([0.9, 0.44, 0.0], n), around([0.0, 0.6, 0.8], 5)
    probes = np.vstack([chatter, pasted, turkish, german]).astype(np.float32)
    languages = ("en",) * (2 * n) + ("tr",) * n + ("de",) * 5
    index = np.array([[0.6, 0.0, 0.8]], dtype=np.float32)
    generic = calibrate("f", probes, best(probes, index), languages)
    assert generic.home == "en" and [name for name, _, _ in generic.levels] == ["en", "tr"]

    def unit(vector: list[float]) -> np.ndarray:
        found = np.asarray(vector, dtype=np.float32)
        return found / np.linalg.norm(found)

    english = unit([0.995, 0.1, 0.0])  # "no, revert that last change"
    tags = np.asarray(languages)
    assert (probes[tags == "tr"] @ english).mean() > (probes[tags == "en"] @ english).mean()
    assert measure(0.6, english, generic) == (specificity(0.6, english, generic), False)
    assert generic.language_of(english) == "en" and generic.foreign_levels(english) is None
    question = unit([0.86, 0.5, 0.1])  # in the other language, as near the notes as chatter
    assert generic.language_of(question) == "tr" and measure(0.6, question, generic)[1]
    assert generic.language_of(unit([0.0, 0.62, 0.78])) == "de"
    level = generic.foreign_levels(unit([0.0, 0.62, 0.78]))
    assert level is not None and level[0] == "tr"


def test_a_prompt_mostly_in_the_index_languages_words_is_not_lifted_by_another_languages() -> None:
    """A few words of chatter sit as close to their translation as to themselves in the
    model's space, so a vector alone can read them in another language; words only the index's
    own language's generic requests hold, most of the prompt's, say what it is written in."""
    n = MIN_PER_LANGUAGE
    rng = np.random.default_rng(11)
    english = rng.normal([1.0, 0.0, 0.0], 0.05, (n, 3))
    turkish = rng.normal([0.0, 0.7, 0.7], 0.05, (n, 3))
    probes = np.vstack([english, turkish]).astype(np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    index = np.array([[1.0, 0.0, 0.0]], dtype=np.float32)
    generic = calibrate("f", probes, best(probes, index), ("en",) * n + ("tr",) * n)
    foreign = np.array([0.45, 0.63, 0.63], dtype=np.float32)  # its nearest probes: Turkish
    assert generic.language_of(foreign) == "tr" and measure(0.45, foreign, generic)[1]
    assert mostly_in("no, undo that last edit", "en")
    assert measure(0.45, foreign, generic, "no, undo that last edit")[1] is False
    for turkish_or_mixed in ("hayır, bunu geri al", "on-call devrinde nöbetçi neleri yazmalı"):
        assert not mostly_in(turkish_or_mixed, "en")
        assert measure(0.45, foreign, generic, turkish_or_mixed)[1]


def test_a_prompt_lifted_by_its_own_languages_levels_gets_one_section_at_most(
    indexed: Briefd,
) -> None:
    assert ranked(indexed, 4.0, lifted=True).confidence == "weak"
    assert ranked(indexed, 2.0, lifted=True).confidence == "weak"


def ranked(api: Briefd, z: float | None, lifted: bool = False) -> engine.RecallResult:
    """The engine with the BM25 ranking of RELEVANT handed in as the hybrid one, at ``z``."""

    def search(prompt: str, scopes: tuple[str, ...], top_k: int, related: int) -> Ranking:
        with api.store.read() as conn:
            found = lexical(conn, prompt, scopes, api.settings, related)
        return Ranking(found.ranked, "kept", specificity=z, related=found.related, lifted=lifted)

    return engine.answer(api.store, RecallRequest(RELEVANT), api.settings, search)


def test_strong_prompts_get_their_sections(indexed: Briefd) -> None:
    result = ranked(indexed, 4.0)
    assert result.confidence == "strong" and len(result.sections) > 1
    assert result.tokens == count_tokens(result.knowledge) <= result.budget  # counted exactly


def test_strong_prompts_get_the_hits_near_the_best_and_their_links_only(indexed: Briefd) -> None:
    """In a knowledge base of five sections a specific question got four of them (353 tokens
    for one rule): the top four are most of such a base, the last ones there only for being
    less unrelated than the fifth. Hits under recall.relative_floor x the best are left out,
    and so are the sections linked from them."""
    with indexed.store.read() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY rowid LIMIT 6")]
    scores = [1.2, 0.69, 0.32, 0.26]  # the fused scores of that five-section base
    links = [(ids[4], ids[0]), (ids[5], ids[2])]  # one linked from a kept hit, one not

    def search(prompt: str, scopes: tuple[str, ...], top_k: int, related: int) -> Ranking:
        return Ranking(list(zip(ids, scores, strict=False)), "kept", specificity=4.0, related=links)

    result = engine.answer(indexed.store, RecallRequest(RELEVANT), indexed.settings, search)
    assert indexed.settings.recall.relative_floor == 0.4  # 0.48 here
    assert [s["chunk_id"] for s in result.sections] == [ids[0], ids[1], ids[4]]
    assert result.sections[-1]["related_to"] == ids[0]


def test_a_bm25_answer_bounds_its_block_without_the_tokenizer(indexed: Briefd) -> None:
    """The in-process BM25 answer (the hook's first prompt) does not count with the tokenizer:
    its ``tokens`` bound the block's real count from above."""
    result = indexed.recall(RecallRequest(RELEVANT))
    assert result.mode == "bm25" and result.sections
    assert count_tokens(result.knowledge) < result.tokens <= result.budget


def test_weak_prompts_get_one_short_section_and_pointers(indexed: Briefd) -> None:
    strong = ranked(indexed, 4.0)
    result = ranked(indexed, 2.0)
    section, *pointers = result.sections
    assert result.confidence == "weak" and section["doc_path"] == "domain/chargebacks.md"
    assert section["content"] and not section.get("pointer")
    assert pointers, "the other candidates are pointed to"
    direct = [s["chunk_id"] for s in strong.sections if not s.get("related_to")]
    assert [p["chunk_id"] for p in pointers] == direct[1 : 1 + len(pointers)]
    for p in pointers:
        assert p["pointer"] and p["content"] == ""
        assert f"· chunk {p['chunk_id']} · not shown]" in result.knowledge
    # counted exactly (the hybrid path's tokenizer), a source line costs its real ~30 tokens:
    # every other candidate of the top 4 fits as a pointer beside the head
    assert len(pointers) == len(direct[1:4]) == 3
    assert result.tokens == count_tokens(result.knowledge) <= 300
    assert result.budget == indexed.settings.recall.weak_tokens == 300


def test_pointers_are_not_remembered_as_injected(indexed: Briefd) -> None:
    def search(prompt: str, scopes: tuple[str, ...], top_k: int, related: int) -> Ranking:
        with indexed.store.read() as conn:
            found = lexical(conn, prompt, scopes, indexed.settings, related)
        return Ranking(found.ranked, "kept", specificity=z, related=found.related)

    request = RecallRequest(RELEVANT, session_id="s-pointers")
    z = 2.0
    weak = engine.answer(indexed.store, request, indexed.settings, search)
    pointed = [s["chunk_id"] for s in weak.sections if s.get("pointer")]
    assert pointed
    z = 4.0
    strong = engine.answer(indexed.store, request, indexed.settings, search)
    given = [s["chunk_id"] for s in strong.sections]
    assert set(pointed) <= set(given)  # a pointer was not injected: its text comes now
    head = weak.sections[0]  # and of the section itself its head only: the rest comes too
    assert head["content"].endswith(TRUNCATED) and head["chunk_id"] in given


def test_weak_prompts_get_the_head_of_a_long_section(indexed: Briefd) -> None:
    with indexed.store.read() as conn:
        (tokens,) = conn.execute(
            "SELECT tokens FROM chunks c JOIN documents d ON d.id = c.doc_id "
            "WHERE d.path = 'domain/chargebacks.md' ORDER BY tokens DESC LIMIT 1"
        ).fetchone()
    assert tokens > 300  # the example's longest chargeback section does not fit whole

    def search(prompt: str, scopes: tuple[str, ...], top_k: int, related: int) -> Ranking:
        with indexed.store.read() as conn:
            (chunk,) = conn.execute(
                "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id "
                "WHERE d.path = 'domain/chargebacks.md' ORDER BY tokens DESC LIMIT 1"
            ).fetchone()
        return Ranking([(chunk, 1.0)], "kept", specificity=2.0)

    result = engine.answer(indexed.store, RecallRequest(RELEVANT), indexed.settings, search)
    (section,) = result.sections
    assert section["content"].endswith(TRUNCATED) and section["tokens"] <= 300


def test_a_head_given_to_a_weak_prompt_leaves_the_whole_section_to_a_strong_one(
    indexed: Briefd,
) -> None:
    """A weak answer cuts a long section to its head; the session remembered the whole section
    as given, so no later prompt of that session (recall.session_hours, 24 h) got the rest of
    it, however specific. The head is remembered as a head: a weak answer does not repeat it,
    a strong one gives the section whole, and after that neither gives it again."""
    with indexed.store.read() as conn:
        chunk, content = conn.execute(
            "SELECT c.id, c.content FROM chunks c JOIN documents d ON d.id = c.doc_id "
            "WHERE d.path = 'domain/chargebacks.md' ORDER BY tokens DESC LIMIT 1"
        ).fetchone()

    def search(prompt: str, scopes: tuple[str, ...], top_k: int, related: int) -> Ranking:
        return Ranking([(chunk, 1.0)], "kept", specificity=z)

    def answer() -> engine.RecallResult:
        request = RecallRequest(RELEVANT, session_id="s-head")
        return engine.answer(indexed.store, request, indexed.settings, search)

    z = 2.0
    head, again = answer(), answer()
    z = 4.0
    whole, later = answer(), answer()

    assert head.sections[0]["content"].endswith(TRUNCATED)
    assert (again.sections, again.already_injected) == ((), 1)
    assert [s["content"] for s in whole.sections] == [content]
    assert (later.sections, later.already_injected) == ((), 1)


def test_a_weak_prompt_asked_again_gets_nothing_not_the_next_candidate(indexed: Briefd) -> None:
    """A weak match's evidence is for its best section alone. Asked again in the session (an
    agent's "the flaky test failed again"), the weak answer walked down the candidates, one more
    each turn: on the example knowledge "fix the flaky test in the checkout folder" got Flaky
    tests, then Integration tests, then payments' Adding a state or transition. Once the best
    section is given, a weak answer gives nothing and says why; a strong one still gives the
    others, as it always did."""
    request = RecallRequest(RELEVANT, session_id="s-weak-again")

    def search(prompt: str, scopes: tuple[str, ...], top_k: int, related: int) -> Ranking:
        with indexed.store.read() as conn:
            found = lexical(conn, prompt, scopes, indexed.settings, related)
        return Ranking(found.ranked, "kept", specificity=z, related=found.related)

    z = 2.0
    first = engine.answer(indexed.store, request, indexed.settings, search)
    again = engine.answer(indexed.store, request, indexed.settings, search)
    z = 4.0
    strong = engine.answer(indexed.store, request, indexed.settings, search)

    pointed = {s["chunk_id"] for s in first.sections if s.get("pointer")}
    assert pointed and (again.sections, again.knowledge, again.already_injected) == ((), "", 1)
    assert again.reason == "its best matching section was already injected in this session"
    assert pointed <= {s["chunk_id"] for s in strong.sections}


def test_generic_prompts_get_nothing_and_say_why(indexed: Briefd) -> None:
    result = ranked(indexed, 0.5)
    assert (result.confidence, result.sections, result.knowledge) == ("none", (), "")
    assert result.reason == (
        "the prompt reads like a generic request, not a question about the knowledge base "
        "(specificity 0.50 < recall.weak_z 1.645)"
    )


def test_a_prompt_read_as_generic_whose_words_name_its_best_section_gets_one_section(
    indexed: Briefd,
) -> None:
    """Turkish typed without its letters ("sifre sifirlama kodu kac dakika gecerli") was read
    by the model as near chatter (specificity 0.9-1.1) and got nothing, while its words named
    the one section that holds them all, ranked first by search too. A prompt read as generic
    whose words pick the same best section, together too unlikely by chance for chatter (the
    strong tier's level), gets one short section; words that pick another section, or that
    chance explains, leave it at nothing."""
    prompt = "idempotency_key_reused 409 SHA-256 fingerprint canonicalised body"
    with indexed.store.read() as conn:
        keywords = lexical(conn, prompt, ("domain", "conventions"), indexed.settings, 0)
    assert keywords.chance is not None and keywords.chance < 1e-6

    def search(order: list[tuple[str, float]]) -> HybridSearch:
        def ranked(prompt: str, scopes: tuple[str, ...], top_k: int, related: int) -> Ranking:
            return Ranking(order, "kept", specificity=0.5)

        return ranked

    same = engine.answer(
        indexed.store, RecallRequest(prompt), indexed.settings, search(keywords.ranked)
    )
    assert same.confidence == "weak" and same.sections[0]["chunk_id"] == keywords.ranked[0][0]
    assert "409" in same.knowledge and not any(s.get("pointer") for s in same.sections[:1])
    other = list(reversed(keywords.ranked))  # the model's best is not the keywords' best
    apart = engine.answer(indexed.store, RecallRequest(prompt), indexed.settings, search(other))
    assert (apart.confidence, apart.sections) == ("none", ())
    chatter = "the docker image build takes forever, can you speed it up"
    with indexed.store.read() as conn:  # its words meet in a section, as chance has them
        found = lexical(conn, chatter, ("domain", "conventions"), indexed.settings, 0)
    assert found.ranked
    plain = engine.answer(
        indexed.store, RecallRequest(chatter), indexed.settings, search(found.ranked)
    )
    assert (plain.confidence, plain.sections) == ("none", ())


def test_a_prompt_read_as_generic_is_no_gap_and_a_weak_one_is_answered(indexed: Briefd) -> None:
    """T3: a hook prompt hybrid recall read as generic (specificity under recall.weak_z) got
    nothing and was logged as any empty prompt: a top gap of the report, weakness 1.00. It is
    logged as generic and counted apart; a prompt read as weak got its section, no gap."""
    generic, weak = ranked(indexed, 0.5), ranked(indexed, 2.0)
    assert generic.sections == () and weak.sections
    indexed.log_queries([generic.log_entry()] * 3)

    report = indexed.gaps(GapsRequest())

    assert [(g.asked, g.weakness) for g in report.gaps] == []
    assert (report.groups, report.generic) == (1, 1)
    assert weak.log_entry().gate == "kept"


def test_related_sections_follow_the_hits_marked_and_once_per_session(indexed: Briefd) -> None:
    prompt = "idempotency keys"  # by keywords, untiered (--mode bm25): every hit and its links
    first = indexed.recall(RecallRequest(prompt, session_id="s-related", mode="bm25"))
    related = [s for s in first.sections if s.get("related_to")]
    direct = [s for s in first.sections if not s.get("related_to")]
    assert related, "the example's top hits link to other sections"
    assert len(related) <= indexed.settings.recall.related == 2
    assert first.sections.index(related[0]) >= len(direct)  # after every direct hit
    assert {s["related_to"] for s in related} <= {s["chunk_id"] for s in direct}
    assert f"related: linked from chunk {related[0]['related_to']}]" in first.knowledge
    again = indexed.recall(RecallRequest(prompt, session_id="s-related", mode="bm25"))
    assert not {s["chunk_id"] for s in again.sections} & {s["chunk_id"] for s in related}


def test_the_block_marks_related_sections() -> None:
    section = {
        "doc_path": "domain/refunds.md",
        "title": "Refunds",
        "heading_path": ["Partial refunds"],
        "chunk_id": "c2",
        "content": "Partial refunds are allowed.",
        "updated_at": "2026-11-29",
        "related_to": "c1",
    }
    block = knowledge_block([section])
    assert (
        "[source: domain/refunds.md · Refunds › Partial refunds · updated 2026-11-29 · chunk c2"
        " · related: linked from chunk c1]" in block
    )
    assert f"{RELATED_NOTE}\n" in block


def test_noise_set_is_large_bilingual_and_apart_from_the_calibration_probes() -> None:
    noise = yaml.safe_load(Path(REPO / "eval" / "recall-noise.yaml").read_text())["prompts"]
    texts = {p["text"].casefold() for p in noise}
    assert len(noise) >= 80 and len(texts) == len(noise)
    assert {p["id"][:3] for p in noise} == {"en-", "tr-"}
    probes = {t.casefold() for group in GENERIC_PROMPTS.values() for t in group}
    assert texts.isdisjoint(probes)


def test_an_index_of_another_models_vectors_is_recalled_by_keywords_not_refused(
    settings: Settings, write_files: WriteFiles
) -> None:
    """I8: recall's ``auto`` mode took any vectors as its own, so an index embedded under
    another model id (an upgrade's, another CPU's: ``…-e5q4-int8`` against ``…-e5q4-f32``)
    made the daemon fail to start and the server's hook route answer 400 ("search mode
    'hybrid' needs vectors of …"), while search fell back to keywords. Recall does the same
    as search until ``briefd index`` embeds it."""
    from briefd.embeddings.fake import FakeEmbedder

    write_files({"domain/chargebacks.md": CHARGEBACKS})
    with Briefd(settings, embedder=FakeEmbedder(name="model-a")) as first:
        first.index()
    with Briefd(settings, embedder=FakeEmbedder(name="model-b")) as later:
        result = later.recall(RecallRequest(RELEVANT, session_id="other-model"))
        assert result.mode == "bm25"
        assert [s["doc_path"] for s in result.sections] == ["domain/chargebacks.md"]
        later.index()  # embedded with this model: hybrid again
        assert later.recall(RecallRequest(RELEVANT, session_id="embedded")).mode == "hybrid"


CHARGEBACKS = (
    "# Chargebacks\n\n## Evidence deadline\n\nA merchant has 20 days to submit chargeback "
    "evidence after the dispute notice; late evidence is rejected by the card network.\n"
)
