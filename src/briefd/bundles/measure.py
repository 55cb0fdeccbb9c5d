"""What a section costs in a bundle, counted as the client receives it (B6, B7). Pure.

In ``markdown`` mode a section is its attribution line and body in the block, a blank line
between two, and for a section of a drifting document (T4) the note after the block that says
so (counted with each such section: an upper bound when a document has several). In
``package`` mode it is its item as compact JSON: the content escaped, with its location,
title, heading path, score, tokens, fingerprint and drift, because that is what an MCP client
hands the model (``JSON.stringify(structuredContent)``); the brackets around the items are
the package's ``frame``. A manifest is the package's metadata and is packed as the package,
so the two list the same sections.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from briefd.bundles.model import BundleItem, BundleMode
from briefd.bundles.render import SECTION_SEPARATOR, drift_notes, received, section_text
from briefd.bundles.wire import item_out
from briefd.tokens import count_tokens

Counter = Callable[[str], int]
PACKAGE_FRAME = 2  # "[" and "]" around the items: at most a token each, whatever they merge with


@dataclass(frozen=True, slots=True)
class Measure:
    """``item``: one section's tokens; ``separator``: what joining two costs; ``frame``: what
    holding them costs beyond that (a package's brackets); ``whole``: all of them as the mode
    delivers them (what a bundle's ``tokens`` reports)."""

    item: Callable[[BundleItem], int]
    separator: int
    whole: Callable[[tuple[BundleItem, ...]], int]
    frame: int = 0


def measure(mode: BundleMode, count: Counter = count_tokens) -> Measure:
    if mode == "markdown":
        return Measure(
            item=lambda item: count(section_text(item)) + _note_tokens(item, count),
            separator=count(SECTION_SEPARATOR),
            whole=lambda items: count(received(items)),
        )
    return Measure(
        item=partial(package_tokens, count=count),
        separator=count(","),
        whole=lambda items: count(package_json(items)),
        frame=PACKAGE_FRAME,
    )


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
