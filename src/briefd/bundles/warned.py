"""What a bundle's answer says of itself beyond its items (B6, B7): a budget that held no
section, a target with no text or over the hard limit, a recovered full answer; each adds
its tokens to the ``tokens`` it reports, so the figure bounds what a client receives."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import quote

from briefd.bundles import render
from briefd.bundles.measure import field_tokens, warnings_tokens
from briefd.bundles.model import Bundle
from briefd.bundles.pack import ALWAYS, NO_ROOM
from briefd.bundles.pack import OVER_HARD_LIMIT as OVER

FITS_NO_SECTION = "fits no section"  # what a warning that the budget held none says
TARGET_CUT = "Read on with get_document("  # what the warning of a target cut at the hard limit says
HELD = ": this answer holds "  # where that warning says what the answer holds
REST_ROUTE = " (REST: GET "  # where its REST route starts
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
    if not misses or any(e.reason.startswith(OVER) for e in d.exclusions):
        return ()  # a target cut at the hard limit took the room (over_budget says so)
    name, limit = _tighter(bundle)
    room = limit - d.tokens - warnings_tokens(warned)
    best = misses[0].removeprefix(NO_ROOM)
    full = f"{name} {limit} {FITS_NO_SECTION} (the best {best}); raise it"
    if warnings_tokens((*warned, full)) - warnings_tokens(warned) <= room:
        return (full,)
    return (f"{name} {limit} {FITS_NO_SECTION}; raise it",)


ISSUE = "issue:"  # how the tracker issue's chunk id starts (structure.issue_candidate)
ISSUE_LEFT_OUT = "issue left out: "  # how the warning of an issue over the hard limit starts


def crowded_out(bundle: Bundle, warned: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A bundle whose ``always: true`` documents or tracker issue text left no room for any
    section that matched says so: a 7,600-token house-rules document answered "partial
    refunds" at max_tokens 2000 with itself alone, 20 refund sections left out,
    budget_exceeded false and not a word; a pasted issue of 2,000 tokens the same."""
    d = bundle.diagnostics
    if bundle.delta is not None or any(i.tier != "mandatory" for i in bundle.items):
        return ()
    if any(i.truncated for i in bundle.items) or any(
        e.reason.startswith(OVER) for e in d.exclusions
    ):
        return ()  # cut at the hard limit: over_budget says so, within the room kept for it
    misses = [e for e in d.exclusions if e.reason.startswith(NO_ROOM)]
    sizes: dict[str, int] = {}
    issue = sum(i.tokens for i in bundle.items if i.chunk_id.startswith(ISSUE))
    for item in bundle.items:
        if item.reasons == ALWAYS:
            sizes[item.doc_path] = sizes.get(item.doc_path, 0) + item.tokens
    if not misses or not (sizes or issue):
        return ()
    named = ", ".join(f"{path} {tokens}" for path, tokens in sizes.items())
    what = [f"the tracker issue takes {issue} tokens"] if issue else []
    if sizes:
        what.append(f"always: true documents take {sum(sizes.values())} tokens ({named})")
    best = f"{misses[0].doc_path}: {misses[0].reason.removeprefix(NO_ROOM)}"
    limit, value = _tighter(bundle)  # raising max_tokens over a lower hard_limit changes nothing
    share = d.effective_budget / max(value, 1)  # the headroom kept
    said = f"{' and '.join(what)} of {limit} {value}, so no section that matched fits "
    said += f"({len(misses)} left out; the best {best}); raise "
    answer = d.tokens + min(e.tokens for e in misses) + warnings_tokens((said + "x" * 60,))
    needed = math.ceil(answer / max(share, 0.01))
    shorter = "those documents" if not issue else "the issue text" if not sizes else "them"
    full = f"{said}{limit} (to {needed} or more) or shorten {shorter}"
    room = d.hard_limit - d.tokens - warnings_tokens(warned)  # (mandatory text may pass max_tokens)
    if warnings_tokens((*warned, full)) - warnings_tokens(warned) <= room:
        return (full,)
    return (f"{' and '.join(what)} of {limit} {value}, so no section that matched fits; raise it",)


def issue_left_out(
    bundle: Bundle, warned: tuple[str, ...] = (), grows: Callable[[int], int] | None = None
) -> tuple[str, ...]:
    """A tracker issue the packer left out (:func:`briefd.bundles.pack.pack`: whole, it would
    take the answer over the hard limit) says so, and the hard limit that holds it when that
    fits beside ``warned``; a shorter warning says the same where it does not. Without it the
    answer read as one about a task with no issue. ``grows``: how many tokens more a live
    issue is fitted to at a given hard limit (its share grows with it)."""
    d = bundle.diagnostics
    out = [e for e in d.exclusions if e.chunk_id.startswith(ISSUE) and e.reason.startswith(OVER)]
    if not out or bundle.delta is not None:
        return ()
    short = f"{ISSUE_LEFT_OUT}over hard_limit {d.hard_limit}"
    said = f"{ISSUE_LEFT_OUT}the tracker issue needs {out[0].tokens} tokens, more than "
    said += f"hard_limit {d.hard_limit} leaves beside the rest of this answer; raise hard_limit"
    share = d.effective_budget / max(min(d.budget, d.hard_limit), 1)  # the headroom kept
    answer = d.tokens + out[0].tokens + warnings_tokens((said + "x" * 40,))
    needed = math.ceil(answer / max(share, 0.01))
    for _ in range(4 if grows else 0):  # a live issue fitted to a larger share there
        needed = math.ceil((answer + grows(needed)) / max(share, 0.01)) if grows else needed
    full = f"{said} (to {needed} or more)"
    room = d.hard_limit - d.tokens - warnings_tokens(warned)
    if warnings_tokens((*warned, full)) - warnings_tokens(warned) <= room:
        return (full,)
    return (short,)


NOTHING_FOR_ISSUE = "nothing in "  # how the warning of a bundle the issue alone makes up starts


def issue_alone(bundle: Bundle, warned: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A bundle the tracker issue alone makes up, nothing of the knowledge having matched
    (none left out for room: :func:`crowded_out` says that), says so: its one item read as
    one section found ("1 section"). Said once: not beside the warning that names the scopes
    not requested that answer it (which says "nothing in scopes … answers this")."""
    d = bundle.diagnostics
    if bundle.delta is not None or not bundle.items or bundle.target is not None:
        return ()
    if bundle.knowledge:
        return ()
    if any(e.chunk_id and not e.chunk_id.startswith(ISSUE) for e in d.exclusions):
        return ()
    if any(w.startswith(NOTHING_FOR_ISSUE) for w in warned):
        return ()
    scopes = f"scopes {', '.join(d.scopes)}" if d.scopes else "the knowledge"
    room = min(d.budget, d.hard_limit) - d.tokens - warnings_tokens(warned)
    for said in (
        f"{NOTHING_FOR_ISSUE}{scopes} answers this issue: this bundle holds the issue alone, "
        "no section of the knowledge",
        f"{NOTHING_FOR_ISSUE}the knowledge answers this issue",
    ):
        if warnings_tokens((*warned, said)) - warnings_tokens(warned) <= room:
            return (said,)
    return ()


GATED = "the relevance gate judged the task unrelated to this knowledge base"


def gated(bundle: Bundle, warned: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A bundle the relevance gate emptied says so, as an empty search does: alone, "No
    knowledge section matched." read as a knowledge base with nothing written on the task.
    Not beside the warning that names the scopes not requested that answer it, and only
    where it fits the budget."""
    d = bundle.diagnostics
    if d.gate != "empty" or bundle.knowledge or bundle.target is not None:
        return ()
    if any(w.startswith(NOTHING_FOR_ISSUE) for w in warned):  # "nothing in scopes … do"
        return ()
    room = min(d.budget, d.hard_limit) - d.tokens - warnings_tokens(warned)
    for said in (
        f"{GATED}; if it is about this team's domain, describe it in the words its documents use",
        GATED,
    ):
        if warnings_tokens((*warned, said)) - warnings_tokens(warned) <= room:
            return (said,)
    return ()


def issue_reserve(hard_limit: int, budget: int) -> int:
    """What a warning beside a tracker issue packed whole can cost at most: the short form of
    :func:`crowded_out`'s (the issue kept, no section beside it), kept back with the issue."""
    limit, value = ("hard_limit", hard_limit) if hard_limit < budget else ("max_tokens", budget)
    widest = 10 * max(hard_limit, budget, 1)
    said = f"the tracker issue takes {widest} tokens of {limit} {value}, so no section that "
    return warnings_tokens((said + "matched fits; raise it",))


def _tighter(bundle: Bundle) -> tuple[str, int]:
    """The limit that bounds the bundle's content: ``hard_limit`` when it is below
    ``max_tokens``, else ``max_tokens``; with its value."""
    d = bundle.diagnostics
    return ("hard_limit", d.hard_limit) if d.hard_limit < d.budget else ("max_tokens", d.budget)


def no_text(bundle: Bundle) -> tuple[str, ...]:
    """A context whose target has no section (an empty file, or front matter only) says so:
    its answer, without the document it was asked around, read as a bundle gone wrong."""
    if bundle.target is None or any(i.doc_path == bundle.target for i in bundle.items):
        return ()
    if any(e.doc_path == bundle.target for e in bundle.diagnostics.exclusions):
        return ()  # it has text; none of it fit the hard limit (over_budget says so)
    return (
        f"the target {bundle.target} has no text to serve (an empty file, or front matter "
        "only): this context holds only what relates to it",
    )


def over_budget(bundle: Bundle) -> tuple[str, ...]:
    """A context whose target document, or a bundle whose ``always: true`` document, would
    take the answer over the hard limit says so in words, one warning a document: which of
    its lines the answer holds (from the top, as far as they fit) and the ``get_document``
    call (and REST route) that reads on from there in parts. The packer cut it
    (:func:`briefd.bundles.pack.pack`); whole, 35,000 tokens of it reached Claude Code, which
    refuses a tool answer over 25,000, as an error in place of any context."""
    d = bundle.diagnostics
    over = [e.doc_path for e in d.exclusions if e.reason.startswith(OVER)]
    cut = [i.doc_path for i in bundle.items if i.tier == "mandatory" and i.truncated]
    paths = [p for p in dict.fromkeys(cut + over) if p]
    paths.sort(key=lambda p: p != bundle.target)  # the target's first, as it was alone
    return tuple(_cut_warning(bundle, p, p == bundle.target) for p in paths)  # else always


def _cut_warning(bundle: Bundle, path: str, target: bool) -> str:
    d = bundle.diagnostics
    left_out = [e for e in d.exclusions if e.doc_path == path and e.reason.startswith(OVER)]
    shown = [i for i in bundle.items if i.tier == "mandatory" and i.doc_path == path]
    scope = shown[0].scope if shown else _scope_of(path, d.scopes)
    if not shown:
        start, held = 1, "none of it"
    else:
        last = shown[-1]
        start = last.start_line if last.truncated else last.end_line + 1
        cut = ", the last cut short" if last.truncated else ""
        total = len(shown) + len(left_out)
        held = f"its lines {shown[0].start_line}-{last.end_line} ({len(shown)} of {total} sections{cut})"
    return target_cut(path, scope, d.hard_limit, d.budget, held, start, target)


def target_cut(
    path: str, scope: str, hard_limit: int, budget: int, held: str, start: int, target: bool = True
) -> str:
    """The warning of a target (or an ``always: true`` document) cut at the hard limit:
    ``held`` says what of it the answer holds, ``start`` the line to read on from."""
    part = max(min(budget, hard_limit), DOCUMENT_PART_MIN)  # a hard_limit under max_tokens
    in_scope = f", scopes=[{render.quoted(scope)}]" if scope else ""  # is the tighter one
    args = f"{render.quoted(path)}{in_scope}, start_line={start}, max_tokens={part})"
    query = f"scopes={quote(scope, safe='')}&" if scope else ""
    route = f"/api/docs/{quote(path)}?{query}start_line={start}&max_tokens={part}"
    what = "the target" if target else "the always: true document"
    return (
        f"{what} {path} is over hard_limit {hard_limit} (max_tokens {budget}){HELD}"
        f"{held}. {TARGET_CUT}{args}{REST_ROUTE}{route}), which gives the rest "
        "in parts, each saying where the next starts; or raise hard_limit to have it whole"
    )


def cut_short(warning: str) -> str:
    """The compact form of :func:`target_cut`'s warning, for an answer it would take past its
    hard limit: without the REST route and the explanation (the ``get_document`` call that
    reads on stays); any other warning is short already and comes back as it is."""
    if TARGET_CUT not in warning or REST_ROUTE not in warning or HELD not in warning:
        return warning
    what = warning.split(HELD, 1)[0].split(" (max_tokens ", 1)[0]
    call = warning[warning.index(TARGET_CUT) : warning.index(REST_ROUTE)]
    return f"{what}. {call}"


def target_cut_reserve(
    path: str, scope: str, hard_limit: int, budget: int, target: bool = True
) -> int:
    """What :func:`over_budget`'s warning can cost at most, kept back when the document is cut."""
    widest = 10 * max(hard_limit, 1)
    held = f"its lines {widest}-{widest} ({widest} of {widest} sections, the last cut short)"
    return warnings_tokens((target_cut(path, scope, hard_limit, budget, held, widest, target),))


def _scope_of(path: str, scopes: tuple[str, ...]) -> str:
    """The scope of a path none of whose sections the answer holds: the longest scope that is
    one of its folders (none: the call names no scopes)."""
    folders = [s for s in scopes if path.startswith(s.rstrip("/") + "/")]
    return max(folders, key=len, default="")


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
