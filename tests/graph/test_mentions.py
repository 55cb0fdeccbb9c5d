"""Finding a document's name in prose: the fast search over folded text finds what the
name's case-blind pattern finds in the text as written."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from briefd.graph.suggest import _ASCII_FOLD, _find, _name_pattern

# what a case-blind pattern takes for each letter of a name (İ and ı for i, the Kelvin sign
# for k, the long s for s)
_SPELLINGS = {"i": "iIİı", "k": "kK\u212a", "s": "sSſ", "a": "aA", "z": "zZ"}
# what stands around a mention: letters (also ones that fold), marks, and what edges look at
_AROUND = st.text(alphabet=st.sampled_from(list("az -[]|/#_.\n—é\u0301İıſ\u212a")), max_size=6)
_NAME = st.text(alphabet=st.sampled_from(list("aikszAIKSZ -.")), min_size=1, max_size=5).filter(
    str.strip
)


@st.composite
def _mention(draw: st.DrawFn) -> tuple[str, str]:
    """A name, and text that may spell it in any case-blind way between other text."""
    name = draw(_NAME)
    spelled = "".join(draw(st.sampled_from(_SPELLINGS.get(c.lower(), c))) for c in name)
    return name, draw(_AROUND) + spelled + draw(_AROUND)


@given(_mention())
def test_a_name_is_found_where_its_pattern_finds_it(mention: tuple[str, str]) -> None:
    name, text = mention
    match = _name_pattern(name).search(text)
    assert _find(text.translate(_ASCII_FOLD), name.lower()) == (match.span() if match else None)
