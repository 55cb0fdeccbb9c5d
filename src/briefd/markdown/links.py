"""Link extraction (K5): wikilinks in all four shapes and relative Markdown links.

Pure. Code blocks, inline code spans, HTML comments and Obsidian ``%% comments %%`` are
masked first, so ``[[x]]`` in an example or a commented-out line is not a link. Each link keeps its provenance: source path,
enclosing section, line.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from urllib.parse import unquote

from briefd.model import Heading, Link

_WIKI = re.compile(r"\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
# destination: <in angle brackets, spaces allowed> (as editors write a file name with spaces)
# or bare (balanced parentheses allowed: ``fees_(old).md``); then an optional "title", 'title'
# or (title); the text may wrap onto the next lines of its paragraph and hold brackets
# (``[![diagram](flow.png)](design.md)``, an image that links to a document)
_MARKDOWN = re.compile(
    r"(?<!!)\[((?:[^\[\]\n]|\[[^\[\]\n]*\]|\n(?![ \t]*\n))*)\]"
    r"\(\s*(?:<([^<>\n]+)>|((?:[^()\s<>]|\([^()\s<>]*\))+))"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*\)"
)
# a reference-style link's definition, ``[label]: <dest> "title"``, and its uses: ``[text][label]``,
# ``[label][]`` and ``[label]`` (never an inline link's text, a wikilink or an image)
DEFINITION = re.compile(
    r"^ {0,3}\[([^\[\]\n]+)\]:\s*(?:<([^<>\n]+)>|(\S+))(?:\s+[\"'(].*[\"')])?\s*$"
)
_REFERENCE = re.compile(r"(?<![!\[\]\\])\[([^\[\]\n]+)\](?:\[([^\[\]\n]*)\])?(?![(\[\]:])")
_TICKS = re.compile(r"`+")
# a backslash escaping a bracket or another backslash: ``\[not a link](x.md)`` is text
_ESCAPED = re.compile(r"\\[\\\[\]]")
_BLANK_LINE = re.compile(r"(\n[ \t]*\n)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_DOC_SUFFIXES = (".md", ".markdown", ".mdx")
# Hugo's ref and relref shortcodes (``{{< ref "fees.md#two" >}}``, ``{{% relref path="/domain/fees"
# %}}``; never an escaped ``{{</* ref */>}}``), alone or a Markdown link's destination
# (``[fees]({{< ref "fees.md" >}})``, ``[fees]({{< relref "fees" >}}#two)``)
_HUGO = re.compile(
    r"(?:(?<!!)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*)?"
    r"(\{\{[<%]-?\s*(?:rel)?ref\s[^{}\n]*?[>%]\}\})"
    r"(?:(#[^\s()]*)?\s*\))?"
)
# a shortcode's argument: ``"path"``, ```path```, ``path="…"`` (the path: the first positional one
# or the one named ``path``); a name is tried from a word's start only ((?<!\w), the same
# matches: tried from every letter of a 20,000-letter word, ``briefd index`` took 17 s on it)
_HUGO_ARG = re.compile(r'(?:(?<!\w)(\w+)\s*=\s*)?(?:"([^"\n]*)"|`([^`\n]*)`)')
# what a wikilink names that is no document: an attachment Obsidian embeds (``![[diagram.png]]``)
_ATTACHMENT = re.compile(
    r"\.(?:avif|bmp|gif|jpe?g|png|svg|webp|flac|m4a|mp3|ogg|wav|webm|3gp|mkv|mov|mp4|ogv|pdf"
    r"|canvas|base)$",
    re.IGNORECASE,
)


def extract_links(
    doc_path: str,
    lines: Sequence[str],
    first_line: int,
    headings: Sequence[Heading],
    hidden: Sequence[tuple[int, int]],
    title: str,
) -> tuple[Link, ...]:
    """Every link in file lines ``first_line``.. of ``doc_path`` outside code and comments
    (``hidden``: the line ranges of code blocks and HTML comment blocks)."""
    section_lines = [h.line for h in headings if h.level <= 3]
    section_names = [h.text for h in headings if h.level <= 3]
    visible = _visible(lines, first_line, _line_mask(hidden))
    texts = {number: text for number, text in visible.items() if "[" in text or "{{" in text}
    inline = _inline_links(visible, lines)
    definitions = _definitions((text, lines[number - 1]) for number, text in texts.items())
    links: list[Link] = []
    for number, text in texts.items():
        at = bisect.bisect_right(section_lines, number) - 1
        section = section_names[at] if at >= 0 else title
        found = _wikilinks(doc_path, section, number, text)  # (column, link)
        if "{{" in text:
            found += _hugo_refs(doc_path, section, number, text, lines[number - 1])
        for column, display, href in inline.get(number, ()):
            if (link := _markdown_link(doc_path, section, number, display, href)) is not None:
                found.append((column, link))
        if definitions and not DEFINITION.match(text):
            written = lines[number - 1]
            found += _reference_links(doc_path, section, number, text, written, definitions)
        # in the order written: related sections (R6) and a document's links follow the text
        links.extend(link for _, link in sorted(found, key=lambda f: f[0]))
    return tuple(links)


def _label(text: str) -> str:
    """A reference label as CommonMark matches it: case-folded, white space collapsed."""
    return " ".join(text.split()).casefold()


def _written(match: re.Match[str], group: int, written: str) -> str | None:
    """What ``group`` of a match in a line's masked text spans in the line as written (masking
    keeps every character's place): a code span in a label or a link's text is read, as
    CommonMark reads it (``[`open()`][]``), not as the blank that kept it from being a link."""
    start, end = match.span(group)
    return None if start < 0 else written[start:end]


def _definitions(texts: Iterable[tuple[str, str]]) -> dict[str, str]:
    """label → destination of the reference definitions in (masked, written) lines (the first
    of a label wins)."""
    found: dict[str, str] = {}
    for text, written in texts:
        if match := DEFINITION.match(text):
            label = _written(match, 1, written) or ""
            found.setdefault(_label(label), match.group(2) or match.group(3))
    return found


def _reference_links(
    doc_path: str,
    section: str,
    line: int,
    text: str,
    written: str,
    definitions: dict[str, str],
) -> list[tuple[int, Link]]:
    """The reference-style links of a line (``[text][label]``, ``[label][]``, ``[label]``)
    whose label is defined, as links to the definition's destination (``text``: the line
    masked, ``written``: as written), each with its column."""
    found = []
    for match in _REFERENCE.finditer(_WIKI.sub(lambda m: " " * len(m.group(0)), text)):
        display = _written(match, 1, written) or ""
        label = _written(match, 2, written)
        href = definitions.get(_label(label or display))
        link = None if href is None else _markdown_link(doc_path, section, line, display, href)
        if link is not None:
            found.append((match.start(), link))
    return found


def _visible(lines: Sequence[str], first_line: int, hidden: set[int]) -> dict[int, str]:
    """File line → its text with code spans and closed HTML comments blanked (a comment may
    run over the lines of its paragraph), for the lines outside ``hidden``."""
    visible: dict[int, str] = {}
    run: list[int] = []
    for number in [*range(first_line, len(lines) + 1), 0]:
        if number and number not in hidden:
            run.append(number)
            continue
        if not run:
            continue
        spans = "\n".join(_escapes_blanked(_spans_blanked(lines[n - 1])) for n in run)
        shown = _obsidian_uncommented(_uncommented(spans))
        visible.update(zip(run, shown.split("\n"), strict=True))
        run = []
    return visible


def _escapes_blanked(line: str) -> str:
    """``line`` with its escaped brackets (and escaped backslashes) as spaces: CommonMark reads
    ``\\[text](x.md)`` and ``[text\\](x.md)`` as text, and ``\\\\[text](x.md)`` as a backslash
    and a link."""
    return _ESCAPED.sub("  ", line) if "\\" in line else line


def _uncommented(text: str) -> str:
    """``text`` with its closed HTML comments blanked: inside a paragraph, as CommonMark's
    inline HTML (never past a blank line). One pass: once an opening ``<!--`` has no closing
    in its paragraph, none after it has either."""
    pieces = []
    for paragraph in _BLANK_LINE.split(text):
        done, start = 0, paragraph.find("<!--")
        while start != -1 and (end := paragraph.find("-->", start + 4)) != -1:
            pieces += [paragraph[done:start], re.sub(r"[^\n]", " ", paragraph[start : end + 3])]
            done = end + 3
            start = paragraph.find("<!--", done)
        pieces.append(paragraph[done:])
    return "".join(pieces)


def comments_blanked(text: str) -> str:
    """``text`` (without its code) with its closed HTML and Obsidian comments blanked, every
    line break kept: what a reader sees of it."""
    return _obsidian_uncommented(_uncommented(text))


def _obsidian_uncommented(text: str) -> str:
    """``text`` with its closed Obsidian comments blanked: ``%%`` to the next ``%%``, on one
    line or over lines and blank lines (Obsidian renders neither them nor their links). An
    unclosed ``%%`` is left as written."""
    pieces, done, start = [], 0, text.find("%%")
    while start != -1 and (end := text.find("%%", start + 2)) != -1:
        pieces += [text[done:start], re.sub(r"[^\n]", " ", text[start : end + 2])]
        done = end + 2
        start = text.find("%%", done)
    pieces.append(text[done:])
    return "".join(pieces)


def code_spans_blanked(line: str) -> str:
    """``line`` (no line break) with its code spans as spaces."""
    return _spans_blanked(line)


def _spans_blanked(line: str) -> str:
    """``line`` (no line break) with its code spans as spaces: what ``re.sub`` made of the
    expression ``(`+)(?:(?!\\1).)+?\\1``, without its time: backtracking, a line of n backticks
    took n³ steps (2,000: 85 s; a document's author writes the line, and every index run of
    the knowledge stalled on it). At a backtick with ``size`` more before other text, the
    expression takes the longest ``fit`` ≤ ``size`` that a later run of at least ``fit``
    backticks closes, where ``2 * fit > size`` (a shorter one starts with its own closing);
    none: it tries again one character on."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(line)]
    longest_after = [0] * (len(runs) + 1)  # the longest run after each
    for k in range(len(runs) - 1, -1, -1):
        longest_after[k] = max(longest_after[k + 1], runs[k][1] - runs[k][0])
    out, done, at, k = [], 0, 0, 0
    while k < len(runs):
        start, end = runs[k]
        at = max(at, start)
        if at >= end:
            k += 1
            continue
        size = end - at
        fit = min(size, longest_after[k + 1])
        if 2 * fit <= size:
            at += 1
            continue
        k = next(r for r in range(k + 1, len(runs)) if runs[r][1] - runs[r][0] >= fit)
        out += [line[done:at], " " * (runs[k][0] + fit - at)]
        done = at = runs[k][0] + fit
    return "".join([*out, line[done:]])


def _line_mask(ranges: Sequence[tuple[int, int]]) -> set[int]:
    return {line for start, end in ranges for line in range(start, end + 1)}


def _wikilinks(doc_path: str, section: str, line: int, text: str) -> list[tuple[int, Link]]:
    """The wikilinks of a line, each with its column."""
    found = []
    for match in _WIKI.finditer(text):
        target, fragment, display = (g.strip() if g else None for g in match.groups())
        if display is not None and fragment is not None:  # a table cell's [[a#b\|text]]
            fragment = _unescaped(fragment)
        elif display is not None:  # [[a\|text]], as Obsidian writes one in a table
            target = _unescaped(target)
        if (not target and not fragment) or (target and _ATTACHMENT.search(target)):
            continue
        link = Link(doc_path, section, line, target or "", fragment or None, display, "wiki")
        found.append((match.start(), link))
    return found


def _unescaped(name: str | None) -> str | None:
    """``name`` without the backslash that escapes the ``|`` after it in a table cell."""
    return name[:-1].rstrip() if name and name.endswith("\\") else name


def _hugo_refs(
    doc_path: str, section: str, line: int, text: str, written: str
) -> list[tuple[int, Link]]:
    """The links Hugo's ``ref`` / ``relref`` shortcodes of a line make (``text``: the line
    masked, ``written``: as written), each with its column: to the page the shortcode names,
    as a Markdown link's path (from the document's folder, ``/…`` from the root; without an
    extension, the page or page bundle Hugo reads it as: :mod:`briefd.graph.resolve`)."""
    found = []
    for match in _HUGO.finditer(text):
        shortcode = _written(match, 2, written) or ""  # as written: a `path` is a code span
        args = [(m[1], m[2] if m[2] is not None else m[3]) for m in _HUGO_ARG.finditer(shortcode)]
        named = [value for name, value in args if name == "path"]
        positional = [value for name, value in args if name is None]
        value = (named or positional or [""])[0].strip()
        if not value or _SCHEME.match(value):
            continue
        path, _, fragment = value.partition("#")
        if match.group(1) is not None and match.group(3) and not fragment:
            fragment = match.group(3)[1:]  # [text]({{< relref "fees" >}}#two)
        display = _written(match, 1, written)
        display = display.strip() if display is not None else None
        link = Link(doc_path, section, line, path, fragment or None, display or None, "markdown")
        found.append((match.start(), link))
    return found


def _inline_links(
    visible: dict[int, str], lines: Sequence[str]
) -> dict[int, list[tuple[int, str, str]]]:
    """File line → the inline Markdown links (column, text as written, destination) that start
    on it, their text read over the lines of its paragraph (hard-wrapped prose wraps ``[the
    retry\npolicy](…)``)."""
    found: dict[int, list[tuple[int, str, str]]] = defaultdict(list)
    for run in _runs(list(visible)):
        text = "\n".join(visible[number] for number in run)
        written = "\n".join(lines[number - 1] for number in run)
        starts = list(accumulate((len(visible[number]) + 1 for number in run[:-1]), initial=0))
        for match in _MARKDOWN.finditer(text):
            at = bisect.bisect_right(starts, match.start()) - 1
            display = re.sub(r"\s*\n\s*", " ", _written(match, 1, written) or "")
            column = match.start() - starts[at]
            found[run[at]].append((column, display, match.group(2) or match.group(3)))
    return found


def _runs(numbers: Sequence[int]) -> Iterator[list[int]]:
    """``numbers`` (ascending) cut into runs of consecutive ones."""
    run: list[int] = []
    for number in numbers:
        if run and number != run[-1] + 1:
            yield run
            run = []
        run.append(number)
    if run:
        yield run


def _markdown_link(doc_path: str, section: str, line: int, display: str, href: str) -> Link | None:
    """The link to ``href`` (a document, relative), or None for a URL or another file."""
    display, href = display.strip(), href.strip()
    if _SCHEME.match(href) or href.startswith("//"):
        return None
    path, _, fragment = href.partition("#")
    path = unquote(path)
    if path and not path.lower().endswith(_DOC_SUFFIXES):
        return None
    return Link(
        doc_path, section, line, path, unquote(fragment) or None, display or None, "markdown"
    )
