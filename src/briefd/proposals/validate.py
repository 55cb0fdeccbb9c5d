"""Checks on a proposal before anything touches git (pure, but for :func:`check_read`, which
reads the knowledge's ``.gitignore`` files)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path

import pathspec

from briefd.errors import ProposalError
from briefd.markdown.frontmatter import NOT_KEYS, split_front_matter
from briefd.proposals.model import ProposalRequest
from briefd.settings import Settings
from briefd.sources.layout import Layout, in_scopes
from briefd.sources.scan import Rules
from briefd.store.scopes import ALL_SCOPES, check_known

SUFFIXES = (".md", ".markdown")
MAX_DESCRIPTION = 10_000
MAX_SEGMENT_BYTES = 255  # NAME_MAX of ext4, APFS, NTFS: a longer name cannot be checked out
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# general categories of characters that do not show: C1 controls (C0 ones are refused first),
# format characters, lone surrogates, line and paragraph separators
_UNSEEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_JOINERS = frozenset({"\u200c", "\u200d"})
# in a description, right-to-left writing needs these marks (LRM, RLM, ALM): they set the
# direction of a neutral character and reorder nothing around it
_MARKS = frozenset({"\u200e", "\u200f", "\u061c"})
_EMOJI = frozenset({"So", "Sk"})  # a symbol, a skin tone: the parts of an emoji ZWJ sequence
_FLAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")
_WINDOWS_CHARS = re.compile(r'[<>:"|?*]')
_WINDOWS_DEVICES = frozenset(
    ["con", "prn", "aux", "nul", "conin$", "conout$"]
    + [f"{port}{n}" for port in ("com", "lpt") for n in range(1, 10)]
)
# in a description: every control character but tab and line breaks (ESC sequences would reach
# the terminals that list proposals, a lone CR overwrite what they show)
_TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
_LINE_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # in one line of text: tabs, breaks too


EMPTY = (
    "new_content is empty; send the full new text of the document. A proposal changes or "
    "creates a document and cannot delete one: to retire it, propose the document that "
    "replaces it with `supersedes: <its path>` in its front matter (briefd then points readers "
    "there), and say in change_description that the old one can be deleted"
)

CLIENT = (
    "name the client in one line of plain text (it is shown in the pull request and wherever "
    "proposals are listed)"
)

FRONT_MATTER_ONLY = (
    "new_content is front matter with no text after it; a proposal replaces the whole "
    "document, so this would empty it. To change the front matter alone, send it followed by "
    "the document's text as get_document serves it"
)


def checked_path(
    request: ProposalRequest, settings: Settings, known: Callable[[], Sequence[str]]
) -> str:
    """The normalised document path, or a :class:`ProposalError` that says what to fix. Path
    and scopes are compared composed (NFC): an agent may send either form, and the commit
    spells the path as the repository does (:mod:`.branch`). ``known``: the index's scopes,
    read when the request names scopes; one that is neither among them nor the document's
    own (a new scope's first document) is refused as a search refuses it (:class:`ScopeError`)."""
    path = unicodedata.normalize("NFC", _clean_path(request.doc_path))
    _check_indexed(path, settings)
    layout = Layout.of(settings)
    scope = layout.scope_of(path)
    if scope is None:
        raise ProposalError(
            f"doc_path '{path}' is outside every scope; knowledge lives under {layout.folders()}"
        )
    allowed: Sequence[str] = [
        unicodedata.normalize("NFC", s) for s in request.scopes or settings.default_scopes
    ]
    if request.scopes:
        check_known(allowed, list(dict.fromkeys([*known(), scope])))
    if ALL_SCOPES not in allowed and not in_scopes(scope, allowed):
        raise ProposalError(
            f"doc_path '{path}' is in scope '{scope}', which this request may not see "
            f"(scopes: {', '.join(allowed) or 'none'}); add '{scope}' to scopes"
        )
    _check_text(request, settings.index.max_file_bytes)
    return path


def _clean_path(raw: str) -> str:
    path = raw.strip()
    while path.startswith("./"):
        path = path[2:]
    if not path:
        raise ProposalError("doc_path is empty; give the document's path, e.g. domain/retry.md")
    _check_checkout(path)
    if "\\" in path or path.startswith("/") or ":" in path.split("/")[0]:
        raise ProposalError(
            f"doc_path '{raw}' must be a relative path with forward slashes inside the "
            "knowledge repository, e.g. domain/retry.md"
        )
    parts = path.split("/")
    if any(part in ("", ".", "..") or part.startswith(".") for part in parts):
        raise ProposalError(
            f"doc_path '{raw}' may not contain '..', '.', empty or hidden path segments"
        )
    _check_windows(path)
    if not path.lower().endswith(SUFFIXES):
        raise ProposalError(f"doc_path '{path}' is not a Markdown file; use a .md path")
    return path


def _check_checkout(path: str) -> None:
    """Refuse a path that checkouts of the merged branch would fail on (git's plumbing commits
    it anyway): a segment longer than a file name may be (every checkout fails), or a control
    character (Windows checkouts fail; NUL cannot be in a git path at all); and one that would
    not read as what it is (a character that does not show, :func:`_unseen`)."""
    if control := _CONTROL.search(path):
        raise ProposalError(
            f"doc_path '{_shown(path)}' contains the control character "
            f"\\x{ord(control.group()):02x}, which checkouts on Windows cannot write in a file "
            "name; use printable characters"
        )
    if (at := _unseen(path)) is not None:
        char = path[at]
        lone = unicodedata.category(char) == "Cs"
        why = (
            "which is no character: UTF-8 cannot hold it"
            if lone
            else "which does not show or turns the text around, so the path would not read as "
            "what it is in a review or a listing"
        )
        raise ProposalError(
            f"doc_path '{_shown(path)}' contains {_escaped(char)} ({_named(char)}), {why}; use visible "
            "characters"
        )
    for part in path.split("/"):
        size = len(part.encode("utf-8", "surrogatepass"))
        if size > MAX_SEGMENT_BYTES:
            raise ProposalError(
                f"doc_path segment '{part[:40]}…' is {size} bytes in UTF-8; a file name may be "
                f"at most {MAX_SEGMENT_BYTES}, so no checkout could write it: shorten it"
            )


def _unseen(path: str) -> int | None:
    """Where ``path`` holds a character that does not show (C1 controls, format characters
    such as zero-width spaces, bidi controls and the BOM, line and paragraph separators, lone
    surrogates), or None. A zero-width (non-)joiner between two non-ASCII letters is spelling
    (Persian, Indic scripts), so it passes."""
    for at, char in enumerate(path):
        if unicodedata.category(char) not in _UNSEEN:
            continue
        if char in _JOINERS and 0 < at < len(path) - 1 and _joins(path[at - 1], path[at + 1]):
            continue
        return at
    return None


def _hidden_in_text(text: str) -> int | None:
    """Where a description holds a character that does not show or turns the text around (a
    bidi embedding, override or isolate, a zero-width space, the BOM, a line separator…), or
    None. Written text keeps what it needs: the directional marks of right-to-left writing
    (LRM, RLM, ALM), a zero-width (non-)joiner inside a word or an emoji sequence, the tags of
    a subdivision flag (🏴 + tags + cancel tag)."""
    for at, char in enumerate(text):
        if unicodedata.category(char) not in _UNSEEN - {"Cc"} or char in _MARKS:
            continue
        if (
            char in _JOINERS
            and 0 < at < len(text) - 1
            and _joins(text[at - 1], text[at + 1], emoji=True)
        ):
            continue
        if "\U000e0020" <= char <= "\U000e007f" and _in_flag(text, at):
            continue
        return at
    return None


def _joins(before: str, after: str, emoji: bool = False) -> bool:
    """A joiner between these two is spelling (non-ASCII letters, marks) or, with ``emoji``,
    an emoji sequence."""
    return all(
        not c.isascii()
        and (unicodedata.category(c)[0] in "LM" or (emoji and unicodedata.category(c) in _EMOJI))
        for c in (before, after)
    )


def _in_flag(text: str, at: int) -> bool:
    """Whether the tag character at ``at`` belongs to a subdivision flag's tag sequence."""
    return any(match.start() < at < match.end() for match in _FLAG_SEQUENCE.finditer(text))


def _named(char: str) -> str:
    if unicodedata.category(char) == "Cs":
        return "a lone surrogate"
    return unicodedata.name(char, "a control character")


def _escaped(char: str) -> str:
    code = ord(char)
    if code > 0xFFFF:
        return f"\\U{code:08x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _shown(path: str) -> str:
    """``path`` with its control and unseen characters written as escapes."""
    return "".join(_escaped(c) if unicodedata.category(c) in _UNSEEN else c for c in path)


def _check_windows(path: str) -> None:
    """Refuse a name Windows checkouts cannot write (git for Windows stops the checkout with
    "invalid path"): one of ``<>:"|?*``, a folder name ending in a dot or a space, a device
    name (``CON``, ``nul.md``, ``com1``…)."""
    parts = path.split("/")
    for at, part in enumerate(parts):
        device = part.split(".", 1)[0].rstrip(" ")
        if char := _WINDOWS_CHARS.search(part):
            why = f"contains '{char.group()}', a character"
        elif part.endswith((".", " ")):
            kind = "file" if at == len(parts) - 1 else "folder"
            why = f"has a {kind} name ending in a dot or a space ('{part}'), which"
        elif device.lower() in _WINDOWS_DEVICES:
            why = f"uses '{device}', a device name on Windows, which"
        else:
            continue
        raise ProposalError(
            f"doc_path '{path}' {why} checkouts on Windows cannot write in a file name; use "
            "another name"
        )


def _check_indexed(path: str, settings: Settings) -> None:
    """A proposal the index would never read (``Notes.MD`` against ``**/*.md``, an excluded
    folder) would merge unseen: refuse it."""
    included = pathspec.PathSpec.from_lines("gitignore", settings.index.include, backend="simple")
    excluded = pathspec.PathSpec.from_lines("gitignore", settings.index.exclude, backend="simple")
    if not included.match_file(path) or excluded.match_file(path):
        raise ProposalError(
            f"doc_path '{path}' would not be indexed (index.include: "
            f"{', '.join(settings.index.include)}; index.exclude: "
            f"{', '.join(settings.index.exclude) or 'none'}); use a path the index reads"
        )


def check_read(path: str, root: Path, settings: Settings) -> None:
    """Refuse ``path`` (checked by :func:`checked_path`) when a ``.gitignore`` in the knowledge
    ``root`` keeps the index from reading it, as the scan would: merged, it is never served."""
    if Rules(root, settings.index, Layout.of(settings)).would_index(path) is not None:
        raise ProposalError(
            f"doc_path '{path}' is ignored by a .gitignore of the knowledge repository, so the "
            "index would never read it; use another path (or change that .gitignore first)"
        )


def _check_text(request: ProposalRequest, max_bytes: int) -> None:
    description = request.change_description.strip()
    if not description:
        raise ProposalError("change_description is empty; say what changes and why")
    if control := _TEXT_CONTROL.search(description):
        raise ProposalError(
            f"change_description contains the control character \\x{ord(control.group()[0]):02x}; "
            "send plain text (tabs and line breaks are fine)"
        )
    if (at := _hidden_in_text(description)) is not None:
        char = description[at]
        raise ProposalError(
            f"change_description contains {_escaped(char)} ({_named(char)}), which does not "
            "show or turns the text around, so the commit message and pull request would not "
            "read as what they say in a review; send plain text (right-to-left letters, and a "
            "joiner inside a word or an emoji, are fine)"
        )
    _check_client(request.client)
    if len(description) > MAX_DESCRIPTION:
        raise ProposalError(
            f"change_description is {len(description)} characters; keep it under {MAX_DESCRIPTION}"
        )
    if not request.new_content.strip():
        raise ProposalError(EMPTY)
    if "\0" in request.new_content:
        raise ProposalError("new_content contains a NUL character; send Markdown text")
    _check_front_matter(request.new_content)
    if not split_front_matter(request.new_content.lstrip("\ufeff")).body.strip():
        raise ProposalError(FRONT_MATTER_ONLY)
    size = len(request.new_content.encode("utf-8"))
    if size > max_bytes:
        raise ProposalError(
            f"new_content is {size} bytes, over index.max_file_bytes ({max_bytes}); "
            "split the document"
        )


def _check_client(client: str | None) -> None:
    """Refuse a client name that is not one line of plain text: it goes into the pull request
    and every listing of proposals, where a line break (a mention, a "LGTM" on a line of its
    own), terminal codes or a bidi override would read as something else in a review."""
    if client is None:
        return
    if control := _LINE_CONTROL.search(client):
        code = ord(control.group())
        raise ProposalError(f"client contains the control character \\x{code:02x}; {CLIENT}")
    if (at := _hidden_in_text(client)) is not None:
        char = client[at]
        raise ProposalError(
            f"client contains {_escaped(char)} ({_named(char)}), which does not show or turns "
            f"the text around; {CLIENT}"
        )


def _check_front_matter(content: str) -> None:
    """Refuse front matter the index would not read as written (YAML it cannot parse, a
    ``tags`` that is not a list…): merged, the document would lose its title, tags or ``refs``
    without anyone having asked for it."""
    # a block of no keys under an opening '---' (a rule above prose) is indexed as the text it is
    split = split_front_matter(content.lstrip("\ufeff"))
    problems = [p for p in split.problems if not p.startswith(NOT_KEYS)]
    if problems:
        raise ProposalError(
            f"new_content's front matter would not be read as written: {problems[0]}; fix it, "
            "or send the document without front matter to keep the one it has"
        )
