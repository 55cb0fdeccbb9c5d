"""What a section costs in a bundle, counted as the client receives it (B6, B7). Pure.

An MCP client hands the model ``JSON.stringify(structuredContent)`` (Claude Code, VS Code), so
a section costs what it adds to that JSON. In ``markdown`` mode that is its attribution line
and body inside the escaped ``text`` string, a blank line between two, and its item's metadata
(id, tier, reasons, drift); a section of a drifting document (T4) also costs the note the MCP
text puts after the block (counted with each such section: an upper bound when a document has
several), so the text channel is bounded too. In ``package`` mode it is its item as compact
JSON: the content escaped, with its location, title, heading path, score, tokens, fingerprint
and drift; the brackets around the items are the package's ``frame``. A manifest is the
package's metadata and is packed as the package, so the two list the same sections. The rest
of the answer — ids, the budget figures, the estimator — is the ``envelope``
(:func:`envelope_tokens`), kept back from the budget before anything is packed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache, partial

from briefd.bundles.model import Bundle, BundleItem, BundleMode
from briefd.bundles.render import SECTION_SEPARATOR, drift_notes, markdown, section_text
from briefd.bundles.wire import item_out, opening, response
from briefd.tokens import ESTIMATOR, count_tokens

Counter = Callable[[str], int]
PACKAGE_FRAME = 2  # "[" and "]" around the items: at most a token each, whatever they merge with
ID_TOKENS = 16  # a bundle id's 16 hex digits, at most a token each: the same for every id
# an id whose digits are a token each wherever it stands (a digit, a letter, ...): an answer is
# counted with it in its id's place, so its figures, and whether it fits a hard limit, are the
# same for every id (at hard_limit 100 a document_context answered or was refused by its id)
WIDEST_ID = "0a" * 8


@dataclass(frozen=True, slots=True)
class Measure:
    """``item``: one section's tokens; ``separator``: what joining two costs; ``frame``: what
    holding them costs beyond that (a package's brackets); ``whole``: all of them as the mode
    delivers them (what a bundle's ``tokens`` reports)."""

    item: Callable[[BundleItem], int]
    separator: int
    whole: Callable[[tuple[BundleItem, ...]], int]
    frame: int = 0
    envelope: int = 0  # the rest of the answer (:func:`envelope_tokens`), kept back too


def measure(mode: BundleMode, count: Counter = count_tokens, envelope: int = 0) -> Measure:
    """How ``mode`` spends tokens; ``envelope``: what the answer around the sections costs."""
    if mode == "markdown":
        return Measure(
            item=partial(markdown_tokens, count=count),
            separator=count(_escaped(SECTION_SEPARATOR)) + count(","),
            whole=lambda items: count(markdown_json(items)) + _notes_tokens(items, count),
            frame=count(markdown_json(())),
            envelope=envelope,
        )
    return Measure(
        item=partial(package_tokens, count=count),
        separator=count(","),
        whole=lambda items: count(package_json(items)),
        frame=PACKAGE_FRAME,
        envelope=envelope,
    )


@cache
def markdown_measure() -> Measure:
    """:func:`measure` of a Markdown bundle with no envelope, made once: on first use, not at
    import (it loads the token encoding, ~150 ms that every CLI command paid, ``--help`` too)."""
    return measure("markdown")


def markdown_tokens(item: BundleItem, count: Counter = count_tokens) -> int:
    """``item`` in a Markdown bundle as received: its section in the escaped ``text``, its
    metadata item, and its drift note."""
    metadata = compact(item_out(item, "markdown"))
    return count(_escaped(section_text(item))) + count(metadata) + _note_tokens(item, count)


def markdown_json(items: tuple[BundleItem, ...]) -> str:
    """The block and the items' metadata as the structured answer carries them."""
    return compact({"text": markdown(items), "items": [item_out(i, "markdown") for i in items]})


def envelope_tokens(
    mode: BundleMode,
    target: str | None,
    ceiling: int,
    count: Counter = count_tokens,
) -> int:
    """What a bundle's answer costs besides its sections (REST's JSON, MCP's structured
    content): its ids and budget figures, the figures as long as they can get and the id as
    long as it can get, so a package and its manifest (another id) pack the same sections."""
    widest = 10 * max(ceiling, 1)
    shape: BundleMode = "markdown" if mode == "markdown" else "package"  # a manifest packs as
    out = opening("", shape, target, widest, widest, widest, False, widest)  # its package
    out.update(cached=False, diagnostics={"estimator": ESTIMATOR})
    if mode != "markdown":  # the key of the package's items (a Markdown bundle's are counted
        out["items"] = []  # with its text: markdown_json)
    return count(compact(out)) + ID_TOKENS


def answer_tokens(bundle: Bundle, count: Counter = count_tokens, widest: bool = False) -> int:
    """What ``bundle``'s answer costs exactly as REST and MCP send it, its own ``tokens`` field
    included (settled as :func:`package_tokens` is): for an answer against a base (B5), which
    sends the delta, not the sections packed within the budget. ``widest``: its id counted as
    :data:`WIDEST_ID`, so the figure is the same whatever the id's digits (never under the
    exact count): for the minimal answer, whether it fits a hard limit."""
    tokens = bundle.diagnostics.tokens
    sent = replace(bundle, bundle_id=WIDEST_ID) if widest else bundle
    for _ in range(3):
        counted = replace(sent, diagnostics=replace(bundle.diagnostics, tokens=tokens))
        found = count(compact(response(counted)))
        if found == tokens:
            break
        tokens = found
    return tokens


def warnings_tokens(warnings: tuple[str, ...], count: Counter = count_tokens) -> int:
    """What an answer's ``warnings`` add to it (the key, the list and a comma; none without)."""
    return field_tokens("warnings", list(warnings), count) if warnings else 0


def field_tokens(key: str, value: object, count: Counter = count_tokens) -> int:
    """What one more field adds to an answer: the key, the value and a comma (its braces
    stand for the comma, so never less)."""
    return count(compact({key: value}))


def _escaped(text: str) -> str:
    """``text`` as it is inside a JSON string."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _notes_tokens(items: tuple[BundleItem, ...], count: Counter) -> int:
    notes = drift_notes(items)
    return count(SECTION_SEPARATOR.join(["", *notes])) if notes else 0


def _note_tokens(item: BundleItem, count: Counter) -> int:
    """What the drift note after the block costs for ``item`` (nothing without drift)."""
    if item.drift is None:
        return 0
    return count(SECTION_SEPARATOR.join(["", *drift_notes((item,))]))


def package_tokens(item: BundleItem, count: Counter = count_tokens) -> int:
    """``item`` as compact package JSON, its own ``tokens`` field included: a count that counts
    itself, settled in at most three passes (its digits take one token more from 1,000)."""
    tokens = 0
    for _ in range(3):
        found = count(compact(item_out(replace(item, tokens=tokens), "package")))
        if found == tokens:
            break
        tokens = found
    return tokens


def package_json(items: tuple[BundleItem, ...]) -> str:
    """The package's items as a client receives them."""
    return compact([item_out(item, "package") for item in items])


def compact(value: object) -> str:
    """``JSON.stringify``: no spaces, non-ASCII as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
