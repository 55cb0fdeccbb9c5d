"""Text normalisation shared by the index and the query side, and query-term extraction."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence

# Dotless ı and dotted İ have no Unicode decomposition, so FTS5's remove_diacritics cannot
# fold them; Turkish typed on an English keyboard writes "i" for both. Nor ß: German typed
# without an ß key, and Swiss German always, write "ss" (Strasse, Schliessung).
_FOLD = str.maketrans({"ı": "i", "İ": "I", "ß": "ss", "ẞ": "SS"})
_SHARP_S = re.compile("[ßẞ]")
_WORD = re.compile(r"\w+", re.UNICODE)


# Han ideographs, kana and bopomofo: scripts written without spaces between words. FTS5's
# unicode61 takes a run of them (a whole Japanese or Chinese sentence) for one word, which no
# query word equals; each is a word of its own instead (a combining kana mark stays with its
# letter), so "返金" finds "部分返金も可能です" and an advanced query's "返金" is a phrase.
_SPACELESS = (
    "\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c\u3041-\u3098\u309b-\u30ff"
    "\u3105-\u312f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uff66-\uff9d\U00020000-\U0003134f"
)
_FIRST_SPACELESS = "\u3005"  # text whose characters are all below it holds none
# Compiled when first needed (:func:`_spaceless`): ~3 ms of every process that imports this
# module (the prompt hook's included), for text that is nearly always free of them.
_SPACELESS_PATTERNS: list[re.Pattern[str]] = []


def _spaceless() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(one spaceless character, the places between one and what touches it)."""
    if not _SPACELESS_PATTERNS:
        _SPACELESS_PATTERNS[:] = (
            re.compile(f"[{_SPACELESS}]"),
            re.compile(f"(?<=[{_SPACELESS}])(?=\\S)|(?<=\\S)(?=[{_SPACELESS}])"),
        )
    return _SPACELESS_PATTERNS[0], _SPACELESS_PATTERNS[1]


# Full-width Latin letters, digits and signs (ＡＰＩ, ３Ｄ, as a Japanese or Chinese input
# method types them) and half-width katakana (ｾｷｭｱ) are the words API, 3D and セキュア written
# wide or narrow: they are folded to those (their compatibility forms, NFKC).
_WIDTH = re.compile("[\uff01-\uffef]+")


def _unwidened(text: str) -> str:
    return _WIDTH.sub(lambda run: unicodedata.normalize("NFKC", run.group()), text)


# Hebrew points and cantillation, Arabic harakat (vowel marks, shadda, sukun) and the kashida
# (ـ, a stretch): marks readers add to a word and typists leave out (מידע for מֵידָע, محمد for
# مُحَمَّد). FTS5's unicode61 reads a combining mark as a space, so a pointed word was indexed
# in pieces no unpointed query finds; they are dropped, as remove_diacritics drops a Latin one.
_POINTS = re.compile(
    "[\u0640"
    + "".join(chr(c) for c in range(0x0591, 0x06EE) if unicodedata.category(chr(c)) == "Mn")
    + "]+"
)


# What a file's text must not hand an agent or a terminal: a terminal's escape sequences whole
# (colours, ``ESC[1;31m``; a hyperlink, ``ESC]8;;url ESC\\``; a character set, ``ESC(B``), as
# a colour terminal's output saved to a file holds them; then the control characters but tab
# and newlines (NUL, a lone ESC…). A vertical tab (a line break pasted from Word or PowerPoint)
# or a form feed (a page break) parts two words, so it reads as a space: dropped, the words
# ran together.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[()][0-9A-Z])")
_BREAKS = re.compile("[\x0b\x0c\x85]")
# C1 controls (U+0080-U+009F) too: a double-encoded file's ``â\x80\x99``, a stray U+009B
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def without_controls(text: str) -> str:
    """``text`` as the index holds it: terminal escape sequences and control characters out
    (C0 and C1; tab and newlines stay), a vertical tab, form feed or next line (U+0085) read
    as a space."""
    return _CONTROL.sub("", _BREAKS.sub(" ", _ESCAPES.sub("", text)))


# A UTF-8 file read as Windows-1252 (or Latin-1) and saved as UTF-8 again: ’ is written â€™
# (or â\x80\x99), é Ã©, © Â©. Only these leads, which real text never puts before such a
# character (a German „Gruß“ is no ß then “), and a pair that decodes as UTF-8 are taken.
_CP1252 = bytes(range(0x80, 0xA0)).decode("cp1252", errors="ignore")
_BYTE = {c: c.encode("cp1252")[0] for c in _CP1252} | {chr(b): b for b in range(0x80, 0x100)}
_MOJIBAKE = re.compile(f"â[€\x80][{_CP1252}\x80-\xbf]|[ÂÃ][{_CP1252}\x80-\xbf]")


def double_encoded(text: str) -> str | None:
    """What to tell of ``text`` when it reads as a UTF-8 file saved as UTF-8 a second time
    (mojibake: ``â€™`` for ’), else None. The text is not repaired: a guess could be wrong."""
    found = [m.group() for m in _MOJIBAKE.finditer(text) if _decoded(m.group())]
    if not found:
        return None
    meant = _decoded(found[0])
    shown = found[0].translate({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
    return (
        f"the file looks double-encoded ('{shown}' where '{meant}' is meant, "
        f"{counted(len(found), 'place')}): it was read as Windows-1252 and saved as UTF-8 again; "
        "re-save it as UTF-8 from its original"
    )


def _decoded(written: str) -> str:
    try:
        return bytes(_BYTE[c] for c in written).decode("utf-8")
    except UnicodeDecodeError:
        return ""


def has_spaceless(text: str) -> bool:
    """Whether ``text`` holds a character :func:`fold` makes a word of its own."""
    if text.isascii() or max(text) < _FIRST_SPACELESS:
        return False
    return _spaceless()[0].search(text) is not None


def refolded(text: str) -> bool:
    """Whether :func:`fold` gives ``text`` other words than indexes before schema 20 hold:
    it holds Han or kana, ß, full-width or half-width forms, or Hebrew or Arabic points."""
    if text.isascii():
        return False
    if has_spaceless(text):
        return True
    return any(p.search(text) is not None for p in (_SHARP_S, _WIDTH, _POINTS))


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, which is plural (``plural``, else ``noun`` + s) unless the count
    is one: "1 document", "3 documents"."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def fold(text: str | None) -> str:
    """The index-side normalisation every FTS column goes through (also used for queries):
    Turkish ı and İ as i and I, ß as ss, full-width and half-width forms as their usual ones
    (ＡＰＩ as API), without Hebrew and Arabic points (``_POINTS``), and a space between a Han
    or kana character and what touches it, so that each is a word (see ``_SPACELESS``)."""
    if not text:
        return ""
    folded = text.translate(_FOLD)
    if folded.isascii():
        return folded
    if _WIDTH.search(folded) is not None:
        folded = _unwidened(folded)
    if _POINTS.search(folded) is not None:
        folded = _POINTS.sub("", folded)
    if not has_spaceless(folded):
        return folded
    return _spaceless()[1].sub(" ", folded)


_ENGLISH = (
    "a an the and or not of to in on at by for from with without into onto as is are was were be "
    "been being do does did done how what when where which who whom why can could should would "
    "will shall may might must i we you he she it they me us my our your their this that these "
    "those there here then than so if about any all some no yes please need want get make let "
    "use using via vs also just only its"
    # what is left of a negative contraction ("doesn't": see _CLITIC), and contractions typed
    # without their apostrophe ("whats", "dont"): the same common words as "does not"
    " ain aren couldn didn doesn don hadn hasn haven isn mightn mustn needn shan shouldn wasn"
    " weren won wouldn"
    " arent couldnt didnt doesnt dont hadnt hasnt havent isnt shouldnt wasnt werent wont"
    " wouldnt cant whats thats theres wheres hows whos"
)
_TURKISH = (
    "ve veya ile ya da de ki mi mı mu mü bir bu şu o için gibi ne nasıl neden niçin hangi nerede "
    "kaç çok daha en olan olarak ama fakat ise"
)
STOP_WORDS = frozenset(_ENGLISH.split() + _TURKISH.split())


# An English clitic an apostrophe joins to a word ("what's", "doesn't", "we're", "I'll": 's, 't,
# 're, 've, 'll, 'd, 'm), which FTS5 reads as a word of its own: taken for a query word, "s"
# or "t" had to be in the answer as much as "refund" (and "what's an acquirer" ranked first the
# section holding "merchant's" and "acquirer"). A Turkish ending after an apostrophe
# ("pod'lara", "Türkiye'deki") has a vowel, is no clitic and stays: where a section writes the
# word alike, it is evidence.
_CLITIC = re.compile(r"(?<=\w)['\u2019](?:s|t|re|ve|ll|d|m)\b", re.IGNORECASE)


def query_words(query: str) -> list[str]:
    """Folded, lower-cased words of a free-text query, each once, stop words included, without
    the English clitics an apostrophe joins to a word (``_CLITIC``). The query is composed
    first (NFC): a decomposed letter's combining mark ("u" + U+0308) is no word character, so
    "süresi" typed decomposed would be searched as "su" and "resi"."""
    composed = _CLITIC.sub("", fold(unicodedata.normalize("NFC", query)))
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(composed)))


# An identifier, a path, a version, a date or a time, written as one name: words joined by dots
# or colons ("payments.events.v1", "3.2.0", "02:00"), a path (two slashes or more, or one and a
# dot: "platform/http/retry.py"), numbers joined by hyphens ("2025-03-14"). FTS5 reads the parts
# as words of their own. Words joined by hyphens alone are compounds (:func:`compound_words`):
# a "non-teaching" hospital is also written apart ("teaching"), "cert-manager" is not. Words
# joined by one slash ("TCR/CD3" microdomains, also written "CD3") and abbreviations
# ("M.Sc.Dr.", "e.g.", written "M.Sc. Dr." as well) are left as they are.
# (each tried from a word's start only: tried from every character of a 20,000-letter word, it
# took 35 s, every other search waiting on it)
_JOINED = re.compile(r"(?<!\w)\w+(?:[-./:]\w+)+")


def joined_words(query: str) -> list[tuple[str, tuple[str, ...]]]:
    """The joined names of a query (``_JOINED``), folded and lower-cased, each once, with those
    of their words (:func:`query_words`) the query does not also hold apart."""
    return _joined(query, _named)


def compound_words(query: str) -> list[tuple[str, tuple[str, ...]]]:
    """The words of a query joined by hyphens alone, not all of them numbers ("cert-manager",
    "read-only", "e-mail", "IL-6"), as :func:`joined_words` gives names: a name to match as
    written where the index writes it so (:func:`briefd.retrieval.lexical.joined_terms`)."""
    return _joined(query, _compound)


def _joined(query: str, kept: Callable[[str], bool]) -> list[tuple[str, tuple[str, ...]]]:
    composed = _CLITIC.sub("", fold(unicodedata.normalize("NFC", query)))
    names = [n.lower() for n in _JOINED.findall(composed) if kept(n)]
    apart = {w.lower() for w in _WORD.findall(_JOINED.sub(" ", composed))}
    return [
        (name, tuple(w for w in dict.fromkeys(_WORD.findall(name)) if w not in apart))
        for name in dict.fromkeys(names)
    ]


def _abbreviation(words: Sequence[str]) -> bool:
    return all(w.isalpha() and len(w) <= 2 for w in words)  # "e.g.", "M.Sc.", "U.S."


def _named(joined: str) -> bool:
    if _abbreviation(_WORD.findall(joined)):
        return False
    if "." in joined or ":" in joined or joined.count("/") >= 2:
        return True
    return "/" not in joined and all(any(c.isdigit() for c in w) for w in joined.split("-"))


def _compound(joined: str) -> bool:
    parts = joined.split("-")
    return (
        all(_WORD.fullmatch(p) is not None for p in parts)
        and not _abbreviation(parts)
        and not _named(joined)
    )


def typed_words(query: str) -> list[str]:
    """The words of a query as a message names them: lower-cased, each once, a clitic or an
    ending kept with its word ("don't", not the "don" :func:`query_words` searches)."""
    composed = fold(unicodedata.normalize("NFC", query))
    return list(dict.fromkeys(w.lower() for w in _TYPED.findall(composed)))


_TYPED = re.compile(r"\w+(?:['\u2019]\w+)*")
MAX_QUERY_TERMS = 256  # a pasted page is searched by its first 256 distinct words


def query_terms(query: str) -> list[str]:
    """The words of a free-text query that say what it is about: stop words dropped, at most
    ``MAX_QUERY_TERMS``. Empty for a query of only stop words ("what is it"), which matches
    everything and nothing."""
    return [w for w in query_words(query) if w not in STOP_WORDS][:MAX_QUERY_TERMS]


def grouping_key(query: str) -> str:
    """What the gaps report groups queries by (T3): the query's terms, folded, lower-cased,
    without the accents of Latin letters (as search matches them: "şifre sıfırlama" typed
    "sifre sifirlama" on an English keyboard is the same question), each once and sorted
    ("Retry policy?" and "policy for retries"… "retry policy" alike up to word forms); a
    query of only stop words keeps its words."""
    words = query_words(query)
    terms = [w for w in words if w not in _FOLDED_STOP_WORDS][:MAX_QUERY_TERMS] or words
    return " ".join(sorted({_unaccented(t) for t in terms}))


# The stop words as query_words spells them: folded, so "nasıl" and "mı" are "nasil" and "mi"
# (STOP_WORDS as written never meets a folded "nasıl", and "iade nasıl yapılır" was another
# question than "iade yapılır" where "how to refund" is "refund"). Only the grouping reads it:
# query_terms, which search's all-words match is built from, is left as it ranks.
_FOLDED_STOP_WORDS = frozenset(w for stop in STOP_WORDS for w in query_words(stop))


def _unaccented(word: str) -> str:
    """``word`` case-folded (ß → ss), without the combining marks of Latin letters (ş → s,
    ü → u); other scripts' marks (й, ё) are letters of their own and stay."""
    kept: list[str] = []
    for char in unicodedata.normalize("NFD", word.casefold()):
        if unicodedata.combining(char) and kept and kept[-1] < "\u0250":
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def caseless(text: str) -> str:
    """``text`` as case-insensitive matching compares it: composed (NFC), Turkish İ and ı as
    i, then case-folded in full ("İade" and "IADE" are "iade", "Straße" is "strasse"); plain
    ``lower()`` gives "i̇ade" (i and a combining dot) for "İade"."""
    if text.isascii():  # nothing to compose or fold: the same, ~10x sooner
        return text.lower()
    return unicodedata.normalize("NFC", text).translate(_FOLD).casefold()


def nested_heading_position(headings: Sequence[tuple[int, str]], fragment: str) -> int | None:
    """The index of the heading Obsidian's nested fragment names (``Limits#Daily``: the
    "Daily" heading under "Limits"), each part a heading's text or slug, each one inside the
    part before it; None when ``fragment`` is no such chain."""
    parts = [part.strip() for part in fragment.split("#")]
    if len(parts) < 2 or not all(parts):
        return None
    at, depth, found = 0, 0, None
    for part in parts:
        wanted = {caseless(part), slugify(part)}
        found = None
        for index in range(at, len(headings)):
            level, text = headings[index]
            if found is None and depth and level <= depth:  # left the part before's section
                break
            if {caseless(text), slugify(text)} & wanted:
                found = index
                break
        if found is None:
            return None
        at, depth = found + 1, headings[found][0]
    return found


def numbered_slug_position(texts: Sequence[str], fragment: str) -> int | None:
    """The index of the heading text GitHub's numbered slug ``fragment`` names
    (``overview-1``: the second "Overview"), if it is one (the first use keeps the plain slug)."""
    wanted = fragment.strip().lower()
    seen: dict[str, int] = {}
    for index, text in enumerate(texts):
        slug = slugify(text)
        uses = seen.get(slug, 0)
        if uses and f"{slug}-{uses}" == wanted:
            return index
        seen[slug] = uses + 1
    return None


_TAG = re.compile(r"<[^<>\n]*>")
_HTML_ANCHOR = re.compile(r"""<a\s[^<>]*?\b(?:name|id)\s*=\s*["']?([^"'\s<>]+)""", re.IGNORECASE)


# The elements of HTML (WHATWG's list, with the obsolete ones Markdown still meets): a tag of
# one of them in a heading is markup, ``<String>`` in ``List<String>`` is text.
HTML_ELEMENTS = frozenset(
    """a abbr acronym address area article aside audio b base bdi bdo big blink blockquote body
    br button canvas caption center cite code col colgroup data datalist dd del details dfn
    dialog dir div dl dt em embed fieldset figcaption figure font footer form frame frameset
    h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins kbd label legend li
    link main map mark marquee menu meta meter nav nobr noscript object ol optgroup option
    output p param picture pre progress q rp rt ruby s samp script search section select
    slot small source span strike strong style sub summary sup table tbody td template
    textarea tfoot th thead time title tr track tt u ul var video wbr""".split()  # noqa: SIM905
)


def html_anchor_names(text: str) -> list[str]:
    """The names ``<a name>`` / ``<a id>`` tags in ``text`` give, in order, as written."""
    return _HTML_ANCHOR.findall(text)


def html_heading_names(text: str) -> set[str]:
    """What else a ``#fragment`` names a heading whose text holds HTML by (``## Limits <a
    name="limits"></a>``): the names its ``<a name>`` / ``<a id>`` give (case-folded) and its
    slug as GitHub renders the heading, without the tags."""
    if "<" not in text:
        return set()
    names = {caseless(name) for name in html_anchor_names(text)}
    names.add(slugify(_TAG.sub("", text)))
    return names


_UNSLUGGED = re.compile(r"[^\w\- ]")
# the ASCII characters _UNSLUGGED removes: bytes.translate drops them ~4x sooner than a sub
_ASCII_PUNCTUATION = bytes(c for c in range(128) if _UNSLUGGED.match(chr(c)))


def slugify(text: str) -> str:
    """GitHub-style heading slug, as relative Markdown links use in their ``#fragment``."""
    lowered = text.strip().lower()
    kept = (
        lowered.encode().translate(None, _ASCII_PUNCTUATION).decode()
        if lowered.isascii()
        else _UNSLUGGED.sub("", lowered)
    )
    return kept.replace(" ", "-")


def _extends(char: str) -> bool:
    """Whether ``char`` belongs to the character before it: a combining mark, a zero-width
    joiner, a variation selector, a skin-tone modifier or an emoji tag."""
    return (
        unicodedata.category(char) in ("Mn", "Mc", "Me")
        or char == "\u200d"
        or "\ufe00" <= char <= "\ufe0f"
        or "\U0001f3fb" <= char <= "\U0001f3ff"
        or "\U000e0020" <= char <= "\U000e007f"
    )


def _regional(char: str) -> bool:
    return "\U0001f1e6" <= char <= "\U0001f1ff"  # two of them make a flag


def whole_characters(text: str, at: int, floor: int = 0) -> int:
    """The greatest cut at or before ``at`` that leaves every character whole as a reader sees
    it (a grapheme cluster, for the cases knowledge holds): never before a combining mark, a
    skin-tone modifier or a variation selector, never on either side of a zero-width joiner
    (👨‍👩‍👧), never between the two halves of a flag (🇹🇷). ``floor``, a cut known to leave
    them whole, is as far back as it looks (and the cut at the least): the halves of flags
    were counted back to the start of their run, a line of flags for each piece of it."""
    while floor < at < len(text):
        if _extends(text[at]) or text[at - 1] == "\u200d":
            at -= 1
            continue
        run = 0
        while run < at - floor and _regional(text[at - 1 - run]):
            run += 1
        if _regional(text[at]) and run % 2:
            at -= 1
            continue
        return at
    return max(0, min(at, len(text)))


SHOWN_CHARS = 200  # of a value from a request that an error message names
# what a text a model or a terminal reads must not carry from a request (or a file's name)
# unseen: control characters but tab and newline (C0, DEL, C1), the bidirectional overrides,
# isolates and marks, and the characters that show as nothing (zero-width space, word joiner,
# invisible operators, byte order mark, soft hyphen, line and paragraph separators): 'a\u200bb.md'
# read as 'ab.md'. The zero-width (non-)joiners stay: emoji sequences and Persian words hold them.
_UNSEEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b\u200e\u200f\u2028\u2029"
    "\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


def visible(text: str) -> str:
    """``text`` with what it should not carry unseen written as an escape: a control character
    as ``\\xNN`` (a NUL, a terminal's ESC), a bidirectional override as ``\\uNNNN`` (which
    would show the rest of the line reordered), a zero-width space as ``\\u200b``. Tab and
    newline stay."""
    return _UNSEEN.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(value: str, limit: int = SHOWN_CHARS) -> str:
    """``value`` as an error names it: whole up to ``limit`` characters, else its head and
    "…" (a request's 100,000-character value is not sent back)."""
    return value if len(value) <= limit else value[: whole_characters(value, limit)] + "…"


# what a line opens behind the block quote and list markers of its container: a code fence
# (a backtick fence's info string holds no backtick), or an HTML block that runs to a closing
# string; four spaces more would make it indented code. Its markers are taken possessively (*+):
# each takes a '>' or a list marker nothing after the container can match, so giving one back
# never makes a match, and trying to took time exponential in a line's '>'s (" >" 22 times:
# 0.9 s, twice as long for each more; a document's author writes the line)
_CONTAINER = r"(?P<prefix>(?:[ ]{0,3}(?:>[ ]?|(?:[-+*]|\d{1,9}[.)])[ ]{1,4}))*+[ ]{0,3})"
_FENCE = re.compile(_CONTAINER + r"(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_HTML = re.compile(_CONTAINER + r"<(?P<tag>!--|(?:pre|script|style|textarea)(?=[\s>]|$))", re.I)
_LIST_MARKER = re.compile(r"[-+*]|\d{1,9}[.)]")


def open_block(text: str) -> tuple[int, str, str] | None:
    """The code fence or HTML block (comment, ``<pre>``…) ``text`` leaves open: the index of
    its opening line, the line that closes it (with its container's indentation and ``>``)
    and its kind ("fence" or "html"); None when every one is closed. A line scan for the
    prompt-time path, which loads no Markdown parser (bundles and the MCP text use
    :func:`briefd.bundles.render.closed_blocks`): a fence in a list item's continuation
    lines four spaces deep is not seen, rather than a line of indented code taken for one."""
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        found = _opening(lines[index])
        if found is not None:
            end = _block_end(lines, index, *found)
            if end is None:
                return index, found[0], found[1]
            index = end
        index += 1
    return None


def closed(text: str) -> str:
    """``text`` with the block it leaves open (:func:`open_block`) closed, as
    :func:`briefd.bundles.render.closed_blocks` closes it: a fence with nothing in it is
    dropped rather than closed."""
    found = open_block(text)
    if found is None:
        return text
    start, closer, kind = found
    lines = text.split("\n")
    if kind == "fence" and not any(line.strip(" >\t") for line in lines[start + 1 :]):
        return "\n".join(lines[:start]).rstrip()
    return f"{text.rstrip()}\n{closer}"


def _opening(line: str) -> tuple[str, str, str, str] | None:
    """What ``line`` opens: its closing line, its kind, what follows the opener on the line,
    and what the lines inside its list item or block quote start with ("" at top level)."""
    fence = _FENCE.match(line)
    html = None if fence else _HTML.match(line)
    found = fence or html
    if found is None or (fence and fence["fence"][0] == "`" and "`" in fence["info"]):
        return None
    prefix = found["prefix"]
    indent = _LIST_MARKER.sub(lambda marker: " " * len(marker.group()), prefix)
    within = "" if prefix == indent and ">" not in prefix else indent
    if fence:
        return indent + fence["fence"], "fence", "", within.rstrip() if ">" in within else within
    tag = found["tag"].lower()
    return indent + ("-->" if tag == "!--" else f"</{tag}>"), "html", line[found.end() :], ""


def _block_end(
    lines: list[str], start: int, closer: str, kind: str, rest: str, within: str
) -> int | None:
    """The index of the line that ends the block opened at ``start``, or None."""
    end = closer.lstrip(" >")
    if kind == "html":
        if end.lower() in rest.lower():
            return start
        found = (i for i in range(start + 1, len(lines)) if end in lines[i].lower())
        return next(found, None)
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if within and line.strip(" >\t") and not line.startswith(within):
            return index - 1  # its list item or block quote ended, and the fence with it
        if _closes(_FENCE.match(line), end):
            return index
    return None


def _closes(fence: re.Match[str] | None, opener: str) -> bool:
    """A closing fence: the opener's character, at least as many of it, nothing after them."""
    if fence is None or fence["info"].strip():
        return False
    return fence["fence"][0] == opener[0] and len(fence["fence"]) >= len(opener)


def html_anchor_line(anchors: Mapping[str, int], fragment: str) -> int | None:
    """The file line of the HTML anchor (``<a name>``, an ``id``) ``fragment`` names, compared
    as headings' anchors are (case-insensitive)."""
    wanted = caseless(fragment.strip())
    return next((line for name, line in anchors.items() if caseless(name) == wanted), None)
