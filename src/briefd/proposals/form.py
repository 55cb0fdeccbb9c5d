"""A proposal's content in the form of the document it replaces (T1). Agents read documents as
briefd serves them — the body without its front matter, line breaks as ``\\n``, no byte order
mark, in MCP's text without the final newline — and send back what they edited; committed as
sent, a proposal dropped the front matter (title, tags, ``refs``…), rewrote every line of a
CRLF file and added or dropped the final newline. Pure."""

from __future__ import annotations

import re
import unicodedata

from briefd.errors import ProposalError
from briefd.markdown.frontmatter import split_front_matter

BOM = "\ufeff"
# the lines MCP's get_document text puts above a document's body (service.render.document_text)
_SERVED_PATH = re.compile(r"path: (.+?) · scope: .+ · updated: .*")
_SERVED_LINES = re.compile(
    r"(?:superseded by|links to|broken links|linked from): .*"
    r"|(?:1 more link|\d+ more links) into scopes not requested .*"
)
_SERVED_PART = re.compile(r"part: lines (\d+)-(\d+) of (\d+).*")
PART = (
    "new_content is get_document's text of a part of {path} (lines {start}-{end} of {last}), "
    "and a proposal replaces the whole document: the lines left out would be deleted; read "
    "the whole document (get_document without start_line, with a max_tokens that holds it) "
    "and send all of it"
)


def served_body(new: str, doc_path: str) -> str:
    """``new`` without the head get_document's MCP text puts above the body of ``doc_path``
    (its title, ``path: … · scope: … · updated: …``, the links), which an agent that edited
    that text sends back with it: committed, every such proposal wrote briefd's listing into
    the document. Text that does not start with that head is returned as sent; the head of a
    part of the document is refused (:data:`PART`)."""
    lines = new.split("\n")
    wanted = unicodedata.normalize("NFC", doc_path.strip().removeprefix("./"))
    if len(lines) < 3 or not lines[0].startswith("# "):
        return new
    named = _SERVED_PATH.fullmatch(lines[1].rstrip("\r"))
    if named is None or unicodedata.normalize("NFC", named.group(1)) != wanted:
        return new
    for at, line in enumerate(lines[2:], start=2):
        line = line.rstrip("\r")
        if not line:
            return "\n".join(lines[at + 1 :])
        if part := _SERVED_PART.fullmatch(line):
            start, end, last = part.groups()
            raise ProposalError(PART.format(path=wanted, start=start, end=end, last=last))
        if not _SERVED_LINES.fullmatch(line):
            return new
    return new


def in_form(current: str, new: str) -> str:
    """``new`` with ``current``'s byte order mark, front matter (when ``new`` has none of its
    own), line breaks (:func:`_line_breaks`) and final newline, or lack of one: a text that
    differs from ``current`` in these alone comes back as ``current``."""
    if not current:
        return new
    bom = BOM if current.startswith(BOM) else ""
    current, new = current.removeprefix(BOM), new.removeprefix(BOM)
    own = split_front_matter(new).body_start_line > 1  # new's own front matter: as sent
    kept = _line_breaks(current)
    if kept is not None:  # an LF text sent CRLF rewrote every line, and was no longer equal
        new = new.replace("\r\n", "\n")
        new = new.replace("\n", "\r\n") if kept == "\r\n" else new
    eol = kept or "\n"
    if current.endswith("\n") and not new.endswith("\n"):
        new += eol
    elif not current.endswith("\n") and new.endswith("\n"):
        new = new.removesuffix("\r\n") if new.endswith("\r\n") else new.removesuffix("\n")
    return bom + ("" if own else _front_matter(current, eol)) + new


def _line_breaks(text: str) -> str | None:
    """The line break every line of ``text`` ends with: ``\\r\\n`` (every one CRLF), ``\\n``
    (none CRLF), None (both: mixed line breaks, no form to give a text, which is kept as sent)."""
    crlf = text.count("\r\n")
    if not crlf:
        return "\n"
    return "\r\n" if crlf == text.count("\n") else None


def _front_matter(current: str, eol: str) -> str:
    """``current``'s front matter as written, to its closing line's break ('' without one)."""
    split = split_front_matter(current)
    if split.body_start_line == 1:
        return ""
    written = current[: len(current) - len(split.body)]
    return written if written.endswith("\n") else written + eol
