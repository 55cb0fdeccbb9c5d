"""What a bundle's answer says of itself beyond its items (B6, B7): a budget that held no
section, a target with no text or over the hard limit, a recovered full answer; each adds
its tokens to the ``tokens`` it reports, so the figure bounds what a client receives."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import quote

from briefd.bundles import render
from briefd.bundles.measure import field_tokens, warnings_tokens
from briefd.bundles.model import Bundle
from briefd.bundles.pack import NO_ROOM

FITS_NO_SECTION = "fits no section"  # what a warning that the budget held none says
DOCUMENT_PART_MIN = 500  # the smallest max_tokens get_document reads a part with


def too_small(bundle: Bundle, warned: tuple[str, ...] = ()) -> tuple[str, ...]:
    """An empty bundle whose sections matched but did not fit says so: it would read as
    "nothing matched" (the answer's envelope alone takes ~75 tokens of the budget). The
    warning names the limit that left no room (``hard_limit`` when it is below
    ``max_tokens``) and what the best section needs when that fits the limit beside
    ``warned``; a shorter one says the same where it does not."""
    if bundle.items or bundle.delta is not None:
        return ()
    d = bundle.diagnostics
    misses = [e.reason for e in d.exclusions if e.reason.startswith(NO_ROOM)]
    if not misses:
        return ()
    name, limit = (
        ("hard_limit", d.hard_limit) if d.hard_limit < d.budget else ("max_tokens", d.budget)
    )
    room = limit - d.tokens - warnings_tokens(warned)
    best = misses[0].removeprefix(NO_ROOM)
    full = f"{name} {limit} {FITS_NO_SECTION} (the best {best}); raise it"
    if warnings_tokens((*warned, full)) - warnings_tokens(warned) <= room:
        return (full,)
    return (f"{name} {limit} {FITS_NO_SECTION}; raise it",)


def no_text(bundle: Bundle) -> tuple[str, ...]:
    """A context whose target has no section (an empty file, or front matter only) says so:
    its answer, without the document it was asked around, read as a bundle gone wrong."""
    if bundle.target is None or any(i.doc_path == bundle.target for i in bundle.items):
        return ()
    return (
        f"the target {bundle.target} has no text to serve (an empty file, or front matter "
        "only): this context holds only what relates to it",
    )


def over_budget(bundle: Bundle) -> tuple[str, ...]:
    """A context whose target document alone is over the hard limit says so in words, with
    how to read it within a budget: B7 keeps mandatory content whole and only flags it
    (``budget_exceeded``, ``overage``), so the caller holds a document far over what it asked
    for, told so by two fields (and, over MCP, a line after the whole document)."""
    d = bundle.diagnostics
    target = [i for i in bundle.items if i.tier == "mandatory" and i.doc_path == bundle.target]
    size = sum(item.tokens for item in target)
    if not d.budget_exceeded or size <= d.hard_limit:
        return ()
    # parts within what the caller allowed: a hard_limit under max_tokens is the tighter one
    part = max(min(d.budget, d.hard_limit), DOCUMENT_PART_MIN)
    path, scope = target[0].doc_path, target[0].scope
    call = (
        f"get_document({render.quoted(path)}, scopes=[{render.quoted(scope)}], max_tokens={part})"
    )
    route = f"/api/docs/{quote(path)}?scopes={quote(scope, safe='')}&max_tokens={part}"
    here = (
        "the package would hold it whole, as mandatory content is (budget_exceeded); this "
        "manifest lists it without its text"
        if bundle.mode == "manifest"
        else "it is here whole, as mandatory content is (budget_exceeded)"
    )
    return (
        f"the target {path} alone takes {size} tokens, over hard_limit {d.hard_limit} "
        f"(max_tokens {d.budget}): {here}. "
        f"To read it within a budget, {call} (REST: GET {route}) gives it in parts, each saying "
        "where the next starts; or raise hard_limit",
    )


def with_warnings(bundle: Bundle, warned: tuple[str, ...]) -> Bundle:
    """``bundle`` answered with ``warned``, whose tokens its ``tokens`` counts (B6): the
    answer a client receives is what the figure bounds."""
    if not warned:
        return bundle
    return replace(counted(bundle, warnings_tokens(warned)), warnings=warned)


def recovered(bundle: Bundle) -> Bundle:
    """``bundle`` answered in full against a base it cannot be compared with (B5), marked
    ``recovered``: the mark is in its ``tokens`` too."""
    return replace(counted(bundle, field_tokens("recovered", True)), recovered=True)


def counted(bundle: Bundle, extra: int) -> Bundle:
    """``bundle`` whose answer carries ``extra`` tokens more than it was packed with."""
    d = bundle.diagnostics
    tokens = d.tokens + extra
    exceeded = max(tokens - d.hard_limit, 0)
    counted = replace(d, tokens=tokens, budget_exceeded=exceeded > 0, overage=exceeded)
    return replace(bundle, diagnostics=counted)
