"""Finding a document's name in prose: the fast search over folded text finds what the
name's case-blind pattern finds in the text as written."""

from __future__ import annotations

import dataclasses
import itertools
import re
import string
import time

from hypothesis import given
from hypothesis import strategies as st

from briefd.graph.suggest import (
    _ADDRESS,
    _ASCII_FOLD,
    _INLINE_CODE,
    DocNames,
    _find,
    _long_enough,
    _name_pattern,
    _prose_lines,
    links_blanked,
    unlinked_mentions,
)
from briefd.markdown.links import comments_blanked

# links as written, as a regex: what links_blanked blanks (a wikilink, a markdown link or
# image with its target, a reference-style link)
_LINKS = re.compile(r"!?\[\[[^\]\n]*\]\]|!?\[[^\[\]\n]*\](?:\([^()\n]*\)|\[[^\[\]\n]*\])")

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


_WORDS = st.text(alphabet=st.sampled_from(list("aikszßAIKSZẞ -.\n")), max_size=12)


@given(_mention(), _WORDS, _WORDS, st.booleans())
def test_a_document_naming_another_in_prose_is_suggested_wherever_its_pattern_finds_it(
    mention: tuple[str, str], before: str, after: str, sharp: bool
) -> None:
    """Names are tried only in texts holding their words, each pair of them one after the
    other (a whole text read per name, for every name whose words a long document holds
    anywhere, took 17 s of CPU for the suggestions of 5,000 documents): what that leaves out,
    the name's pattern never finds."""
    name, text = mention
    text = re.sub("[sSſ]{2}", "ß", text) if sharp else text  # as Germans write ss
    body = f"{before} {text} {after}"
    target = DocNames("domain/target.md", (name,), "Target.\n", 1, frozenset())
    subject = DocNames("domain/subject.md", ("Subject",), body, 1, frozenset())
    found = [s.target for s in unlinked_mentions([subject], [subject, target])]
    named = _long_enough(name.strip()) and _name_pattern(name).search(body) is not None
    assert found == (["domain/target.md"] if named else [])


def test_names_whose_words_a_long_document_holds_apart_are_not_searched_for_in_it() -> None:
    """Long documents hold the words of thousands of titles, never two of a title together:
    each title was searched for in each one's whole text (17 s of CPU for the suggestions of a
    5,000-document knowledge base, every other request of the server waiting); now a title
    is tried only in a text holding its words one after the other."""
    words = ["".join(p) for p in itertools.product(string.ascii_lowercase, repeat=2)]
    long_docs = [
        DocNames(
            f"domain/log-{k}.md",
            (f"Log {k}",),
            "\n".join(
                " then ".join(words[(n * 31 + j * 7 + k) % len(words)] for j in range(8)) + "."
                for n in range(1_000)
            ),
            1,
            frozenset(),
        )
        for k in range(10)
    ]
    pairs = itertools.islice(itertools.product(words, words), 10_000)
    titled = [
        DocNames(f"domain/t{i}.md", (f"{a} {b}",), "Text.\n", 1, frozenset())
        for i, (a, b) in enumerate(pairs)
    ]
    named = DocNames("domain/named.md", ("xy then zq",), "Text.\n", 1, frozenset())
    long_docs[3] = dataclasses.replace(long_docs[3], body=long_docs[3].body + "\nSee XY then zq.")
    started = time.process_time()
    found = unlinked_mentions(long_docs, [*long_docs, *titled, named])
    elapsed = time.process_time() - started
    assert [(s.doc_path, s.target, s.mention, s.line) for s in found] == [
        ("domain/log-3.md", "domain/named.md", "XY then zq", 1_001)
    ]
    assert elapsed < 1.5, f"{elapsed:.1f} s of CPU"  # ~0.2 s here; 4 s trying every name


_PIECES = ["www.", "WWW.", "http://", "mailto:", "MailTo:", "@", "a@b.c", "[x](y)", "[[a]]", "`c`"]
_PROSE = st.lists(
    st.sampled_from([*_PIECES, "<!--", "-->", "%%", "\n", " ", "a", "b", ".", "/", ":", "[", "`"]),
    max_size=30,
).map("".join)


@given(_PROSE)
def test_prose_is_blanked_as_when_every_pattern_is_tried_on_every_line(body: str) -> None:
    """Links, inline code and addresses are blanked only in documents (and lines) that may
    hold them, which is most of what suggestions over thousands of documents spent (4.3 →
    2.7 s of CPU at 5,000): the prose is the same as every pattern tried on every line."""
    lines = body.split("\n")
    shown = [_INLINE_CODE.sub(" ", line) for line in lines]
    if "<!--" in body or "%%" in body:
        shown = comments_blanked("\n".join(shown)).split("\n")
    every = [(i, _ADDRESS.sub(" ", _LINKS.sub(" ", line))) for i, line in enumerate(shown)]
    assert _prose_lines(body, frozenset()) == every


@given(
    st.lists(st.sampled_from(["[", "[[", "]", "]]", "(", ")", "!", "a", " ", "\n"]), max_size=40)
)
def test_links_are_blanked_as_the_regex_blanks_them(pieces: list[str]) -> None:
    line = "".join(pieces)
    assert links_blanked(line) == _LINKS.sub(" ", line)


def test_a_line_of_many_unclosed_wikilinks_is_read_in_linear_time() -> None:
    """A wikilink tried as a regex at every "[[" read on to the line's end each time: a 100 KB
    document of "[[a " took 3.5 CPU-s per suggestion (suggest_links, the dashboard's
    suggestions), minutes near the 2 MB file limit."""
    line = "[[a " * 50_000
    started = time.process_time()
    blanked = links_blanked(line)
    elapsed = time.process_time() - started
    assert blanked == line  # no wikilink closes: nothing is blanked
    assert elapsed < 1.0, f"{elapsed:.1f} s of CPU"  # ~0.04 s; 14 s as a regex
