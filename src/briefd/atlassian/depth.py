"""Deeply nested HTML made shallow enough to convert, keeping all its text.

markdownify converts a tag by converting its children first, a few Python frames a level: a
page or issue with a few hundred levels of nesting (lists, quotes, tables in cells, ``<div>``
or ``<span>`` wrappers a generator or a paste left behind) ran out of stack, RecursionError,
and the page could not be read at all. And a deep list or quote costs its indent or ``> ``
on every line, once a level: what is nested past a level no reader follows costs tokens and
says nothing. So, before the conversion:

- a list in :data:`MAX_LISTS` lists has its items moved out to follow the item holding it,
  as items of that list: the outline keeps every item, each on its line with its bullet,
  indented no deeper than that;
- a block quote in :data:`MAX_QUOTES` quotes is a plain block inside the last of them;
- past :data:`MAX_DEPTH` tags, what a tag holds is its text, its inline leaves (a link, code,
  an image: tags holding no tag) and code blocks, one line each block it had.

Each walk here is a loop over an explicit stack, never a recursion.
"""

from __future__ import annotations

import copy

from bs4 import BeautifulSoup, Tag
from bs4.element import AttributeValueList, Comment, NavigableString, PageElement

MAX_LISTS = 8  # lists within lists; deeper ones' items join the 8th level
MAX_QUOTES = 8  # block quotes within block quotes
MAX_DEPTH = 100  # tags within tags (markdownify: 3 frames a tag, of Python's 1000)
_LISTS = frozenset(("ul", "ol"))
_BLOCKS = frozenset(
    (
        "p", "div", "blockquote", "pre", "hr", "section", "article", "li", "ul", "ol", "dl",
        "dt", "dd", "table", "thead", "tbody", "tfoot", "tr", "td", "th", "caption",
        "h1", "h2", "h3", "h4", "h5", "h6",
    )
)  # fmt: skip


def shallow(soup: BeautifulSoup) -> None:
    """``soup`` nested no deeper than markdownify can convert and a reader can follow (see
    the module's notes); unchanged, after one walk, where it is that already."""
    lists, quotes, deepest = _deep(soup)
    for tag in deepest:  # first: what is left is at most MAX_DEPTH deep, quick to move
        _flatten(soup, tag)
    for quote in quotes:
        quote.name = "div"  # (a div is a block: its text stays apart from the quote's)
    nested = {id(tag) for tag in lists}
    items = {id(tag.parent): tag.parent for tag in lists if tag.parent and _in_item(tag)}
    for item in items.values():  # (by id: a tag hashes as its whole markup)
        _unnest(soup, item, nested)


def _deep(soup: BeautifulSoup) -> tuple[list[Tag], list[Tag], list[Tag]]:
    """The lists in :data:`MAX_LISTS` lists, the quotes in :data:`MAX_QUOTES` quotes, and the
    tags :data:`MAX_DEPTH` deep that hold a tag, in document order (none below those)."""
    lists: list[Tag] = []
    quotes: list[Tag] = []
    deepest: list[Tag] = []
    stack: list[tuple[Tag, int, int, int]] = [(soup, 0, 0, 0)]
    while stack:  # (children pushed last first: popped in document order)
        tag, depth, in_lists, in_quotes = stack.pop()
        if in_lists > MAX_LISTS and tag.name in _LISTS:
            lists.append(tag)
        if in_quotes > MAX_QUOTES and tag.name == "blockquote":
            quotes.append(tag)
        children = [child for child in tag.contents if isinstance(child, Tag)]
        if depth == MAX_DEPTH and children:
            deepest.append(tag)
            continue
        for child in reversed(children):
            listed = in_lists + (child.name in _LISTS)
            stack.append((child, depth + 1, listed, in_quotes + (child.name == "blockquote")))
    return lists, quotes, deepest


def _in_item(nested: Tag) -> bool:
    """Whether ``nested`` is right in an item of a list (not ``<ul><ul>``, nor in a ``<div>``
    in the item: :data:`MAX_DEPTH` holds there)."""
    item = nested.parent
    outer = item.parent if item is not None else None
    return item is not None and item.name == "li" and outer is not None and outer.name in _LISTS


def _unnest(soup: BeautifulSoup, item: Tag, nested: set[int]) -> None:
    """The items of the too deep lists in ``item`` moved to follow it in its list, in order;
    what followed such a list in ``item`` an item of its own after that list's items. One
    pass over the item and one insertion (one a list took quadratic time for an item of
    thousands of lists)."""
    outer = item.parent
    if outer is None:
        return
    children = list(item.contents)
    item.clear()
    after: list[PageElement] = []
    holder: Tag | None = item  # where text after a hoisted list goes (None: not made yet)
    for child in children:
        if isinstance(child, Tag) and id(child) in nested:
            for node in _emptied(child):
                if isinstance(node, Tag) and node.name == "li":
                    after.append(node)
                elif holder is not None or not _blank(node):
                    holder = _held(soup, holder, after)
                    holder.append(node)  # (text right in a list: the item's before it)
            holder = None
        elif holder is not None or not _blank(child):
            holder = _held(soup, holder, after)
            holder.append(child)
    outer.insert(outer.index(item) + 1, *after)


def _emptied(tag: Tag) -> list[PageElement]:
    children = list(tag.contents)
    tag.clear()
    return children


def _held(soup: BeautifulSoup, holder: Tag | None, after: list[PageElement]) -> Tag:
    """``holder``, else a new item at the end of ``after``."""
    if holder is None:
        holder = soup.new_tag("li")
        after.append(holder)
    return holder


def _flatten(soup: BeautifulSoup, tag: Tag) -> None:
    """``tag`` holding its text, its inline leaves and code blocks, in order, a ``<br>`` where
    a block it held started or ended (one where several met, none at its ends)."""
    flat: list[PageElement | None] = []  # None: a line break
    stack: list[tuple[PageElement, bool]] = [(child, False) for child in reversed(tag.contents)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            flat.append(None)
        elif isinstance(node, NavigableString):
            if not isinstance(node, Comment):
                flat.append(type(node)(str(node)))
        elif isinstance(node, Tag):
            children = node.contents
            if node.name == "br":
                flat.append(None)
            elif node.name == "pre":  # a code block: its code, in its language
                flat += [None, _code_block(node), None]
            elif node.name not in _BLOCKS and not any(isinstance(child, Tag) for child in children):
                flat.append(copy.copy(node))  # (a copy: taking it out looks for it in its parent)
            else:
                block = node.name in _BLOCKS
                if block:
                    flat.append(None)
                    stack.append((node, True))
                stack.extend((child, False) for child in reversed(children))
    tag.clear()
    previous: PageElement | None = None
    for part in flat:
        if part is None:
            if previous is None or (isinstance(previous, Tag) and previous.name == "br"):
                continue
            added: PageElement = soup.new_tag("br")
        elif isinstance(previous, Tag) and previous.name == "br" and _blank(part):
            continue  # (space between two blocks)
        else:
            added = part
        tag.append(added)
        previous = added
    while tag.contents and isinstance(tag.contents[-1], Tag) and tag.contents[-1].name == "br":
        tag.contents[-1].extract()


def _code_block(pre: Tag) -> Tag:
    """A copy of ``pre`` holding its code alone, with its code's classes (where its language
    may be)."""
    block = copy.copy(pre)
    block.clear()
    block.string = pre.get_text()
    code = pre.find("code")
    if isinstance(code, Tag):
        classes = pre.get_attribute_list("class") + code.get_attribute_list("class")
        block["class"] = AttributeValueList(name for name in classes if name)
    return block


def _blank(node: PageElement) -> bool:
    return isinstance(node, NavigableString) and not node.strip()
