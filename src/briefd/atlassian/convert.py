"""Server-rendered HTML → Markdown, one path for Confluence ``export_view`` and Jira
``renderedFields`` / ``renderedBody`` (Cloud and Data Center alike).

``markdownify`` (MIT) does the conversion; before it, a few small rewrites turn what the
servers render for macros into plain HTML it understands: panels (info, note, warning, tip and
Jira ``{panel}``) become block quotes headed by their kind and title, an expand becomes its
title and its content, task list items get ``[x]`` / ``[ ]``, Jira's ``<tt>`` is code, an
emoticon its emoji or name; ``<script>`` and ``<style>`` go with their content; links and
images from the site's root (``/display/…``) become absolute against ``base``. Code blocks
keep their language (read from Confluence's ``brush:``, Jira's ``code-java`` class or a
``language-`` class) and a fence longer than any backtick run inside; images are named (alt,
attachment name, file name). A ``|`` in a table cell is escaped, once; a list in a cell has
its items after ``<br>``; a table nested in a cell goes on the cell's line, its pipes escaped
too; a cell merged over rows (``rowspan``) is in each of them, so no cell after it moves left.
Superscript and subscript stay ``<sup>`` and ``<sub>``.
Code comes out as written (CRLF read as LF, blank lines around it dropped): the clean-up of
the Markdown around it — trailing spaces, runs of blank lines — never reaches its lines.
"""

from __future__ import annotations

import re
import secrets
import urllib.parse
from collections.abc import Callable

from bs4 import BeautifulSoup, Tag
from bs4.element import NavigableString
from markdownify import MarkdownConverter

from briefd.atlassian.depth import shallow
from briefd.atlassian.rowspans import Tagged, rowspans, span
from briefd.atlassian.runs import (
    CELL_RUN,
    PARAGRAPH,
    blank_tail_cut,
    cell_ends_cut,
    paragraph_break,
    spaces_collapsed,
)

_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING = re.compile(r"(?<![ \t])[ \t]+\n")  # from a run's start only: linear in the run
_BRUSH = re.compile(r"brush:\s*([\w+#-]+)")
_LANG_CLASS = re.compile(r"^(?:code|language|lang)-([\w+#-]+)$")
_BACKTICKS = re.compile(r"`+")
_PRE_HEAD = re.compile(r"^[ \n]*\n")
# a code line held out (read from where a run of spaces starts only: linear in the run)
_HELD = re.compile("(?<![ \t])([ \t]*)\ue000([0-9a-f]{8}):(\\d+)\ue001")
_SHORTCODE = re.compile(r"^:[\w+-]+:$")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
_CELLS = frozenset(("td", "th"))
# the Jira issues macro shown as a table (Data Center, Cloud), and an issue's link in it
_JIRA_TABLE_CLASSES = frozenset(("jira-issues", "jira-table", "jiraWorkItemMacroListViewTable"))
_JIRA_TABLE = re.compile(r"jira-issues|jira-table|jiraWorkItemMacroListViewTable|jira-tablesorter")
_BROWSE = re.compile(r"/browse/([A-Za-z][A-Za-z0-9_]*-[0-9]+)(?![A-Za-z0-9_-])")
# what starts a block where a line starts (a heading, a quote, a list item, a rule or setext
# underline, a fence), for text that starts a line: escaped, it stays text
_LINE_MARK = re.compile(
    r"^([ \t]*)(#{1,6}(?=[ \t]|$)|>|[-+*](?=[ \t]|$)|\d{1,9}(?=[.)](?:[ \t]|$))"
    r"|={3,}|-{3,}|\*{3,}|_{3,}|`{3,}|~{3,})",
    re.MULTILINE,
)
_LISTS_AND_TABLES = ("li", "ul", "ol", "dl", "dt", "dd", "table", "tr", "td", "th")
_HEADINGS = tuple(f"h{n}" for n in range(1, 7))
_BLOCKS = frozenset(  # the tags whose content starts a line
    ("p", "div", "blockquote", "pre", "hr", "section", "body", *_LISTS_AND_TABLES, *_HEADINGS)
)
_Tags = dict[str, list[Tag]]
PANEL_KINDS = ("info", "note", "warning", "tip", "error", "success")
DECORATIVE = frozenset(("rendericon", "icon"))  # classes of icons beside the text they mark


def html_to_markdown(html: str, base: str = "") -> str:
    """Markdown of a fragment of server-rendered HTML ("" for none); ``base``: the URL the
    fragment was served from (a page's, an issue's), against which links from the site's root
    are made absolute ("": left as they are)."""
    if not html or not html.strip():
        return ""
    soup = BeautifulSoup(html, "html.parser", element_classes={Tag: Tagged})
    tags = _tags(soup)
    for rewrite in (_unscripted, _emoticons, _panels, _expands, _tasks, _monospace, _empty_rows):
        rewrite(soup, tags)
    if base:
        _absolute(tags, base)
    rowspans(tags)  # the cells it copies are rewritten already
    shallow(soup)  # last: a rewrite above may nest (a panel is a quote)
    spaces_collapsed(soup)
    converter = _Converter()  # one a call: it holds the call's code lines
    text = converter.convert_soup(soup)
    text = _TRAILING.sub("\n", text)
    return converter.restore(_BLANK_RUNS.sub("\n\n", text).strip())


def withheld_issues(html: str, outside: Callable[[str], bool]) -> str:
    """``html`` with each issue for which ``outside`` holds (a project outside
    ``jira.projects``) down to its key: Jira renders a link to an issue with its summary as the
    link's ``title`` and its key struck through once resolved, Confluence's Jira issue macro
    with its summary and status, and its Jira issues macro shown as a table a row an issue
    (key, summary, status, assignee…: every cell of such a row is withheld, the key's link
    kept). ``html`` as it was when it names no such issue (no parse)."""
    if (
        "data-issue-key" not in html
        and "data-jira-key" not in html
        and not _JIRA_TABLE.search(html)
    ):
        return html
    soup = BeautifulSoup(html, "html.parser")
    changed = _withheld_rows(soup, outside)
    for tag in soup.find_all(True):
        key = str(tag.get("data-issue-key") or tag.get("data-jira-key") or "")
        if not key or not outside(key):
            continue  # (one inside a macro taken out before changes nothing shown)
        changed = True
        if tag.name == "a":  # a link: the key alone, no summary as its title, nothing struck
            tag.attrs.pop("title", None)
            tag.string = key
            continue
        found = tag.find("a", href=True)  # a macro: a link to the issue by its key
        if isinstance(found, Tag):
            link = soup.new_tag("a", href=str(found["href"]))
            link.string = key
            tag.replace_with(link)
        else:
            tag.replace_with(key)
    return str(soup) if changed else html


def _withheld_rows(soup: BeautifulSoup, outside: Callable[[str], bool]) -> bool:
    """In each table of the Jira issues macro (Data Center's ``div.jira-issues`` around a
    ``table.aui``, Cloud's ``table.jiraWorkItemMacroListViewTable``), each row whose issue (the
    first link to ``…/browse/KEY`` in it) is outside: its first cell linking to the issue → a
    link by the key alone, every other cell emptied. Whether a row was."""
    changed = False
    for table in soup.find_all("table"):
        if not _jira_table(table):
            continue
        for row in table.find_all("tr"):
            cells = row.find_all(["td", "th"], recursive=False)
            links = [(c, a) for c in cells for a in c.find_all("a", href=True)]
            keyed = [(c, a, m.group(1)) for c, a in links if (m := _BROWSE.search(str(a["href"])))]
            if not keyed or not outside(keyed[0][2]):
                continue
            held, link, key = keyed[0]
            for cell in cells:
                cell.clear()
            shown = soup.new_tag("a", href=str(link["href"]))
            shown.string = key
            held.append(shown)
            changed = True
    return changed


def _jira_table(table: Tag) -> bool:
    """Whether ``table`` is the Jira issues macro's (its class, a container's, a header's)."""
    if _classes(table) & _JIRA_TABLE_CLASSES:
        return True
    if any(_classes(parent) & _JIRA_TABLE_CLASSES for parent in table.parents):
        return True
    return table.find("th", class_="jira-tablesorter-header") is not None


def code_language(pre: Tag) -> str:
    """The language of a code block, wherever the server put it; "" when none is known."""
    params = pre.get("data-syntaxhighlighter-params")
    if isinstance(params, str) and (brush := _BRUSH.search(params)):
        return brush.group(1)
    language = pre.get("data-language")
    if isinstance(language, str) and language:
        return language
    code = pre.find("code")
    for node in (pre, code) if isinstance(code, Tag) else (pre,):
        for name in node.get_attribute_list("class"):
            found = _LANG_CLASS.match(name or "")
            if found and found.group(1) not in ("panel", "block"):
                return found.group(1)
    return ""


def fence(code: str) -> str:
    """A code fence no backtick run in ``code`` can close: at least three, one more than the
    longest run."""
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    return "`" * max(3, longest + 1)


def code_span(line: str) -> str:
    """``line`` as inline code ("" for an empty one): delimited by one backtick more than its
    longest run, padded where it starts or ends with one."""
    if not line.strip():
        return ""
    ticks = "`" * (max((len(run) for run in _BACKTICKS.findall(line)), default=0) + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{ticks}{pad}{line}{pad}{ticks}"


def image_name(img: Tag, src: str) -> str:
    """What an image is called: its ``alt``, else the attachment's name (Confluence's
    ``data-linked-resource-default-alias``, the title of the link Jira puts around a
    thumbnail), else the file name its URL ends in."""
    link = img.parent if img.parent is not None and img.parent.name == "a" else None
    for said in (
        img.get("alt"),
        img.get("data-linked-resource-default-alias"),
        link.get("file-preview-title") if link is not None else None,
    ):
        if isinstance(said, str) and said.strip():
            return " ".join(said.split()).replace("]", "\\]")
    path = urllib.parse.urlsplit(src).path if "://" in src or src.startswith("/") else src
    stem = urllib.parse.unquote(path.rstrip("/").rsplit("/", 1)[-1].split("?")[0])
    return " ".join(stem.split()).replace("]", "\\]")


def _tags(soup: BeautifulSoup) -> _Tags:
    """The fragment's tags by name, in document order: one walk for all the rewrites (a walk
    each took a sixth of a large page's time). A rewrite adds no tag another one looks for,
    and one that a rewrite takes out is only changed where no one sees it."""
    found: _Tags = {}
    for node in soup.descendants:
        if isinstance(node, Tag):
            found.setdefault(node.name, []).append(node)
    return found


def _unscripted(soup: BeautifulSoup, tags: _Tags) -> None:
    """``<script>`` and ``<style>`` with their content: code for a browser, not text."""
    for tag in tags.get("script", []) + tags.get("style", []):
        tag.decompose()


def _emoticons(soup: BeautifulSoup, tags: _Tags) -> None:
    """An emoticon (``img.emoticon``, Confluence's and Jira's) → the emoji it stands for, else
    its name — not an image link to a 16-pixel icon, which costs ~20 tokens and says little;
    a decorative icon (Jira's ``rendericon`` beside an attachment's link, the issue type's
    ``icon`` in a Jira issue macro) goes: the text beside it names the thing."""
    for img in tags.get("img", []):
        classes = _classes(img)
        if "emoticon" in classes or img.get("data-emoji-id"):
            img.replace_with(emoticon_text(img))
        elif classes & DECORATIVE:
            img.extract()


def emoticon_text(img: Tag) -> str:
    """The emoji (``data-emoji-fallback`` unless a ``:shortcode:``), else ``alt`` ("(tick)"),
    else the shortcode, else the icon's name ("(smile)" for …/emoticons/smile.png)."""
    fallback = str(img.get("data-emoji-fallback") or "").strip()
    if fallback and not _SHORTCODE.match(fallback):
        return fallback
    for attribute in ("alt", "data-emoji-shortname"):
        said = str(img.get(attribute) or "").strip()
        if said:
            return said
    name = str(img.get("data-emoticon-name") or "").strip()
    stem = str(img.get("src") or "").split("?")[0].rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return f"({name or stem})" if name or stem else ""


def _absolute(tags: _Tags, base: str) -> None:
    """Links and images from the site's root (``/display/ENG/…``, ``/download/attachments/…``)
    → absolute URLs on ``base``'s site, as a browser resolves them there; others unchanged."""
    for tag, attribute in (("a", "href"), ("img", "src")):
        for node in tags.get(tag, []):
            value = node.get(attribute)
            if isinstance(value, str) and value.startswith("/"):
                node[attribute] = urllib.parse.urljoin(base, value)


def _classes(tag: Tag) -> set[str]:
    return {c for c in tag.get_attribute_list("class") if c}


def _panels(soup: BeautifulSoup, tags: _Tags) -> None:
    """Confluence information macros and Jira/Confluence ``panel`` divs → headed quotes."""
    for div in tags.get("div", []):
        classes = _classes(div)
        if "confluence-information-macro" in classes:
            kind = str(div.get("data-macro-name") or _kind_from(classes) or "note")
            title = div.find(class_="title")
            body = div.find(class_="confluence-information-macro-body") or div
        elif "panel" in classes and not classes & {"code", "preformatted"}:
            kind = "panel"
            title = div.find(class_="panelHeader")
            body = div.find(class_="panelContent") or div
        else:
            continue
        heading = kind.capitalize() + (f": {title.get_text(' ', strip=True)}" if title else "")
        if isinstance(title, Tag):
            title.extract()
        quote = soup.new_tag("blockquote")
        label = soup.new_tag("p")
        strong = soup.new_tag("strong")
        strong.string = heading
        label.append(strong)
        quote.append(label)
        for child in list(body.children):
            quote.append(child.extract())
        div.replace_with(quote)


def _kind_from(classes: set[str]) -> str | None:
    """The macro's kind from its class, where ``data-macro-name`` is missing (older export
    views): the info macro's class says ``information``."""
    if "confluence-information-macro-information" in classes:
        return "info"
    for kind in PANEL_KINDS:
        if f"confluence-information-macro-{kind}" in classes:
            return kind
    return None


def _expands(soup: BeautifulSoup, tags: _Tags) -> None:
    """An expand macro → its title in bold, then its (no longer hidden) content."""
    for div in (d for d in tags.get("div", []) if "expand-container" in _classes(d)):
        control = div.find(class_="expand-control-text")
        content = div.find(class_="expand-content")
        title = soup.new_tag("p")
        strong = soup.new_tag("strong")
        strong.string = control.get_text(" ", strip=True) if control else "Details"
        title.append(strong)
        parts = [title] + (list(content.children) if isinstance(content, Tag) else [])
        div.replace_with(*[p.extract() if p is not title else p for p in parts])


def _tasks(soup: BeautifulSoup, tags: _Tags) -> None:
    """Confluence inline tasks (``li.checked``) and Jira/ADF task items → ``[x]`` / ``[ ]``."""
    for ul in tags.get("ul", []):
        classes = _classes(ul)
        if not classes & {"inline-task-list", "task-list"}:
            continue
        for li in ul.find_all("li", recursive=False):
            done = "checked" in _classes(li) or li.get("data-task-state") == "DONE"
            li.insert(0, "[x] " if done else "[ ] ")


def _monospace(soup: BeautifulSoup, tags: _Tags) -> None:
    """Jira's ``{{monospaced}}`` (its wiki renderer writes ``<tt>``, which markdownify knows
    not: a command or a config key came out as plain text) → ``<code>``."""
    for tag in tags.get("tt", []):
        tag.name = "code"


def _empty_rows(soup: BeautifulSoup, tags: _Tags) -> None:
    """A table row without a cell goes: Data Center's Jira issues table starts with an empty
    ``<tr></tr>`` before its header row, which made the table's first line a bare ``|`` and
    its header an ordinary row."""
    for row in tags.get("tr", []):
        if row.find(["td", "th"], recursive=False) is None:
            row.decompose()
    tags["tr"] = [row for row in tags.get("tr", []) if not row.decomposed]


def _after_a_tag(el: Tag) -> bool:
    """Whether a tag comes before ``el`` in its parent (``find_previous_sibling``, which builds
    a filter for each call: a row each)."""
    sibling = el.previous_sibling
    while sibling is not None and not isinstance(sibling, Tag):
        sibling = sibling.previous_sibling
    return sibling is not None


def _lists_in_cell(el: Tag) -> int:
    """How many lists ``el`` is in (itself too), up to the table cell holding it."""
    count = 1 if el.name in ("ul", "ol") else 0
    for parent in el.parents:
        if parent.name in _CELLS:
            break
        count += parent.name in ("ul", "ol")
    return count


def _literal(text: str, el: NavigableString) -> str:
    """``text`` with what would start a block where a line starts escaped: a paragraph
    reading "# of retries" came out a heading, "1. Stop the job" a list, "> 5 s" a quote. Its
    first line only where it starts one (:func:`_starts_line`)."""
    if not _LINE_MARK.search(text):
        return text

    def escaped(found: re.Match[str]) -> str:
        lead, mark = found.group(1), found.group(2)
        if found.start() == 0 and not _starts_line(el):
            return found.group(0)
        return f"{lead}{mark}\\" if mark[0].isdigit() else f"{lead}\\{mark}"

    return _LINE_MARK.sub(escaped, text)


def _starts_line(el: NavigableString) -> bool:
    """Whether ``el`` starts a line of the Markdown: nothing but space before it in the block
    (a paragraph, an item, a quote …) that holds it, or a line break."""
    node: Tag | NavigableString = el
    while True:
        before = node.previous_sibling
        while isinstance(before, NavigableString) and not before.strip():
            before = before.previous_sibling
        if before is not None:
            return isinstance(before, Tag) and (before.name == "br" or before.name in _BLOCKS)
        parent = node.parent
        if parent is None or parent.name in _BLOCKS:
            return True
        node = parent


def _numbered(bullet: str, text: str) -> str:
    """An ordered list item as markdownify writes one: its lines indented under ``bullet``
    ("" for an empty item's line)."""
    text = text.strip()
    if not text:
        return "\n"
    indent = " " * len(bullet)
    lines = [indent + line if line else "" for line in text.split("\n")]
    return bullet + lines[0][len(bullet) :] + "".join("\n" + line for line in lines[1:]) + "\n"


def _theads(tbody: Tag) -> list[Tag]:
    table = tbody.parent
    return table.find_all("thead", recursive=False) if table else []


class _Converter(MarkdownConverter):
    """markdownify with code blocks in fences their code cannot close, each line of code held
    out as a marker (``\ue000<nonce>:<n>\ue001``) until :meth:`restore`, so that the clean-up
    of the text around it (trailing spaces, runs of blank lines) leaves the code as written."""

    def __init__(self) -> None:
        super().__init__(
            heading_style="ATX",
            bullets="-",
            escape_asterisks=False,
            escape_underscores=False,
            sup_symbol="<sup>",  # kept as HTML, which Markdown allows and GitHub shows:
            sub_symbol="<sub>",  # "mc2", "H2O" lost what they said; ~ is strike-through
        )
        self.nonce = secrets.token_hex(4)  # a marker the page's own text cannot pass for
        self.held: list[str] = []
        self.numbers: dict[int, int] = {}  # an ordered list item's number, by its id

    def process_text(self, el: NavigableString, parent_tags: set[str] | None = None) -> str:
        """markdownify's text, a ``|`` in a table cell → ``\\|``, which GitHub's tables read
        as text (in code too; not in a comment or CDATA): once, in a nested table's cell too.
        Here rather than in a walk over the page's strings before, a tenth of its time."""
        text: str = super().process_text(el, parent_tags)  # type: ignore[misc]  # not in stubs
        if parent_tags and not parent_tags.isdisjoint(_CELLS):
            if "|" in text and type(el) is NavigableString:
                return text.replace("|", "\\|")
            return text  # (a cell is one line: nothing in it starts one)
        if type(el) is NavigableString and "_noformat" not in (parent_tags or ()):
            return _literal(text, el)
        return text

    def convert_p(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """A paragraph; in a table cell between marks that :meth:`convert_td` makes one
        ``<br>`` (markdownify ran a cell's paragraphs together: "a b")."""
        if parent_tags.isdisjoint(_CELLS):
            converted: str = super().convert_p(el, text, parent_tags)  # type: ignore[misc]
            return converted
        return f"{PARAGRAPH}{text.strip()}{PARAGRAPH}" if text.strip() else ""

    def convert_pre(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """A fenced code block; in a table cell, which holds one line, its lines as code spans
        between ``<br>`` (a fence there ran them together: two commands read as one)."""
        code = text.replace("\r\n", "\n").replace("\r", "\n")
        code = blank_tail_cut(_PRE_HEAD.sub("", code))  # as markdownify's strip_pre
        if not code:
            return ""
        if not parent_tags.isdisjoint(_CELLS):
            return " " + "<br>".join(code_span(line) for line in code.split("\n")) + " "
        ticks = fence(code)
        return f"\n\n{ticks}{code_language(el)}\n{self._hold(code)}\n{ticks}\n\n"

    def convert_img(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """An image by its name, in a table cell or heading too (markdownify gave there its
        ``alt`` alone, and Confluence's embedded images and files carry none: a cell holding
        a screenshot or an attached PDF came out empty)."""
        src = str(el.get("src") or el.get("data-image-src") or "")
        if src.startswith("data:"):  # the image itself, base64: its kind only, not its bytes
            name = image_name(el, "") or "embedded image"
            src = "data:" + src[5:].split(",", 1)[0] + ",…"
        else:
            name = image_name(el, src)
        if not parent_tags.isdisjoint(_CELLS):
            name = _UNESCAPED_PIPE.sub(r"\\|", name)
        if not src:
            return name
        title = str(el.get("title") or "").replace('"', '\\"')
        return f"![{name}]({src}" + (f' "{title}")' if title else ")")

    def convert_br(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """A line break; in a table cell ``<br>``, which GitHub's tables read as one (the
        cell's lines were run together)."""
        if not parent_tags.isdisjoint(_CELLS):
            return "<br>" + text
        converted: str = super().convert_br(el, text, parent_tags)  # type: ignore[misc]
        return converted

    def convert_li(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """A list item; in a table cell, which holds one line, on a line of its own after a
        ``<br>``, indented two spaces a level (markdownify ran a cell's items together: "- a -
        b", a bullet read as a dash)."""
        parent = el.parent
        numbered = parent is not None and parent.name == "ol"
        if parent_tags.isdisjoint(_CELLS):
            if not numbered:
                item: str = super().convert_li(el, text, parent_tags)  # type: ignore[misc]
                return item
            return _numbered(f"{self._number(el)}. ", text)
        text = text.strip().strip(PARAGRAPH).strip()  # (a paragraph in it: its own line)
        if not text:
            return ""  # an empty item: no bare bullet
        lists = _lists_in_cell(el)
        bullet = f"{self._number(el)}." if numbered else "-"
        return f"<br>{'  ' * (lists - 1)}{bullet} {text}"

    def _number(self, li: Tag) -> int:
        """An ordered list item's number: its list's ``start`` plus the items before it.
        Counted once a list (markdownify counted each item's previous siblings: a list of
        10,000 steps took seconds, 40,000 a minute)."""
        if id(li) not in self.numbers:
            parent = li.parent
            start = str(parent.get("start") or "1") if parent is not None else "1"
            first = int(start) if start.isdigit() else 1
            siblings = parent.find_all("li", recursive=False) if parent is not None else [li]
            self.numbers.update((id(item), first + n) for n, item in enumerate(siblings))
        return self.numbers[id(li)]

    def convert_list(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """A list; in a table cell its items (:meth:`convert_li`), then a ``<br>`` before what
        follows it (a cell's ends lose theirs: :meth:`convert_td`); in an item, a blank line
        before text after it there (it ran on into the list's last item: "- btail")."""
        if parent_tags.isdisjoint(_CELLS):
            converted: str = super().convert_list(el, text, parent_tags)  # type: ignore[misc]
            after = el.next_sibling
            while isinstance(after, NavigableString) and not after.strip():
                after = after.next_sibling
            inline = isinstance(after, NavigableString) or (
                isinstance(after, Tag) and after.name not in _BLOCKS
            )
            return converted + ("\n\n" if "li" in parent_tags and inline else "")
        return text + ("<br>" if _lists_in_cell(el) == 1 else "")

    convert_ul = convert_list
    convert_ol = convert_list

    def convert_td(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """markdownify's cell, without the ``<br>`` a list at its start or end leaves there;
        its paragraphs one ``<br>`` apart (a list's or a line break's beside them too)."""
        text = CELL_RUN.sub(paragraph_break, cell_ends_cut(text))
        cell: str = super().convert_td(el, text, parent_tags)  # type: ignore[misc]
        return cell

    def convert_th(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        return self.convert_td(el, text, parent_tags)  # markdownify writes both alike

    def convert_table(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """A table; one nested in a cell its rows on the cell's line, every ``|`` of them
        escaped once (its cells' own were escaped by :meth:`process_text`)."""
        rows = text.strip()
        if not parent_tags.isdisjoint(_CELLS):
            rows = _UNESCAPED_PIPE.sub(r"\\|", rows)
        return f"\n\n{rows}\n\n"

    def convert_tr(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """markdownify's row (``table_infer_header`` off) read from the row's own cells and
        its own table's sections: it counted a nested table's cells, so a 2-column table got
        a 6-column header line."""
        section = el.parent
        if _after_a_tag(el) or section is None:
            return f"|{text}\n"
        cells = el.find_all(["td", "th"], recursive=False)
        line = "| " + " | ".join(["---"] * sum(span(cell) for cell in cells)) + " |\n"
        if all(cell.name == "th" for cell in cells) or (
            section.name == "thead" and len(section.find_all("tr", recursive=False)) == 1
        ):
            return f"|{text}\n{line}"
        if section.name != "tbody" or not _theads(section) or not section.find_previous_sibling():
            return line.replace("---", "") + line + f"|{text}\n"
        return f"|{text}\n"

    def _hold(self, code: str) -> str:
        first = len(self.held)
        self.held += code.split("\n")
        return "\n".join(f"\ue000{self.nonce}:{n}\ue001" for n in range(first, len(self.held)))

    def restore(self, text: str) -> str:
        """``text`` with its code lines back; an empty one that ends its line without the
        indent or the quote's space a list or a block quote put before its marker."""
        return _HELD.sub(self._line, text)

    def _line(self, found: re.Match[str]) -> str:
        if found.group(2) != self.nonce:
            return found.group(0)
        line = self.held[int(found.group(3))]
        ends = found.string[found.end() : found.end() + 1] in ("", "\n")
        return "" if not line and ends else found.group(1) + line
