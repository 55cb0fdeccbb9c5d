"""A proposal's content in the form of the document it replaces (T1). Agents read documents as
briefd serves them — the body without its front matter, line breaks as ``\\n``, no byte order
mark, in MCP's text without the final newline — and send back what they edited; committed as
sent, a proposal dropped the front matter (title, tags, ``refs``…), rewrote every line of a
CRLF file and added or dropped the final newline. Pure."""

from __future__ import annotations

from briefd.markdown.frontmatter import split_front_matter

BOM = "\ufeff"


def in_form(current: str, new: str) -> str:
    """``new`` with ``current``'s byte order mark, front matter (when ``new`` has none of its
    own), line breaks (CRLF when every line of ``current`` ends so and ``new`` has no CR of
    its own) and final newline, or lack of one."""
    if not current:
        return new
    bom = BOM if current.startswith(BOM) else ""
    current, new = current.removeprefix(BOM), new.removeprefix(BOM)
    own = split_front_matter(new).body_start_line > 1  # new's own front matter: as sent
    crlf = "\r\n" in current and "\n" not in current.replace("\r\n", "")
    if crlf and "\r" not in new:
        new = new.replace("\n", "\r\n")
    eol = "\r\n" if crlf else "\n"
    if current.endswith("\n") and not new.endswith("\n"):
        new += eol
    elif not current.endswith("\n") and new.endswith("\n"):
        new = new.removesuffix("\r\n") if new.endswith("\r\n") else new.removesuffix("\n")
    return bom + ("" if own else _front_matter(current, eol)) + new


def _front_matter(current: str, eol: str) -> str:
    """``current``'s front matter as written, to its closing line's break ('' without one)."""
    split = split_front_matter(current)
    if split.body_start_line == 1:
        return ""
    written = current[: len(current) - len(split.body)]
    return written if written.endswith("\n") else written + eol
