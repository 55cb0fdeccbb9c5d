"""Text normalisation: the fast paths for ASCII text give what the general rules give."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from briefd import text as text_module
from briefd.text import caseless, has_spaceless, slugify, whole_characters

# ASCII of every kind (controls and punctuation too), the Turkish and German letters that
# fold or case-fold differently, and combining marks
_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=127),
        st.sampled_from("İıßŞşÇçÖöÜüĞğẞ\u0307\u0308"),
        st.characters(min_codepoint=128, max_codepoint=0x2FF),
    ),
    max_size=40,
)


@given(_TEXT)
def test_slugify_is_githubs_slug_for_any_text(text: str) -> None:
    """Lower-cased, every character but a word character, hyphen or space dropped, spaces as
    hyphens."""
    expected = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
    assert slugify(text) == expected


@given(_TEXT)
def test_caseless_composes_folds_and_case_folds_any_text(text: str) -> None:
    turkish = str.maketrans({"ı": "i", "İ": "I"})
    assert caseless(text) == unicodedata.normalize("NFC", text).translate(turkish).casefold()


def test_slugs_and_caseless_forms_of_headings() -> None:
    assert slugify("Static method: AsyncLocalStorage.bind(fn)") == (
        "static-method-asynclocalstoragebindfn"
    )
    assert slugify("  Retry & back-off (v2)\t") == "retry--back-off-v2"
    assert slugify("İade süresi") == "iade-süresi"  # the dot İ lower-cases to is dropped
    assert caseless("İADE") == caseless("iade") == "iade"
    assert caseless("Straße") == "strasse"
    assert caseless("返金ポリシー") == "返金ポリシー"  # a name, not split into words as search is
    assert caseless("Retry-Policy") == "retry-policy"


@given(
    st.text(
        alphabet=st.sampled_from("a \U0001f1f9\U0001f1f7\u200d\U0001f468\u0307\U0001f3fd"),
        max_size=30,
    ),
    st.data(),
)
def test_whole_characters_from_a_floor_cuts_where_it_cuts_from_the_start(
    text: str, data: st.DataObject
) -> None:
    """A floor that is itself a whole cut is as far back as ``whole_characters`` looks (a line
    of flags was scanned back to its start for each piece of it read in parts): same cuts."""
    at = data.draw(st.integers(0, len(text)))
    floor = whole_characters(text, data.draw(st.integers(0, at)))
    assert whole_characters(text, at, floor) == whole_characters(text, at)


# around the first Han/kana character (U+3005) and the last (U+3134F), and far past them
_WIDE = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=0x3010),
        st.characters(min_codepoint=0x3000, max_codepoint=0xFFFF),
        st.characters(min_codepoint=0x1F300, max_codepoint=0x3135F),
    ),
    max_size=20,
)


@given(_WIDE)
def test_has_spaceless_finds_what_the_spaceless_class_finds(text: str) -> None:
    """The shortcut (all characters below the first of them: none) and the pattern compiled
    on first use answer as the character class itself does."""
    expected = re.search(f"[{text_module._SPACELESS}]", text) is not None
    assert has_spaceless(text) == expected
    assert has_spaceless("返金") and has_spaceless("a\u3005") and not has_spaceless("a\u3004 👍")
