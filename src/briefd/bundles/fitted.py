"""An answer within the hard limit whatever it has to say (B1, B7): the packer keeps room for
the sections' own warnings, but an answer says more than that (a scope the index lacks, a
target cut at the limit, an issue left out, a budget that fits no section), and at a small
``hard_limit`` those took it past the limit the user set: a target cut at ``hard_limit`` 100
answered 185 tokens. Here the warnings are shortened, then the less important dropped; when
not even the most important fits beside the rest, the answer is a minimal one that says the
limit holds nothing of it and names the limit that would; when not even that fits, the
request is refused (a 400), never answered over the limit."""

from __future__ import annotations

from dataclasses import replace

from briefd.bundles.measure import answer_tokens, warnings_tokens
from briefd.bundles.model import Bundle
from briefd.bundles.warned import FITS_NO_SECTION, ISSUE_LEFT_OUT, TARGET_CUT, counted, cut_short
from briefd.errors import QueryError


def within_limit(bundle: Bundle) -> Bundle:
    """``bundle`` as is when its answer is within its hard limit; else with its warnings
    shortened and the less important left out, or the minimal answer (:func:`nothing_fits`)."""
    d = bundle.diagnostics
    if d.tokens <= d.hard_limit:
        return bundle
    bare = d.tokens - warnings_tokens(bundle.warnings)
    ranked = sorted(bundle.warnings, key=_rank)
    if ranked and bare <= d.hard_limit:
        for said in _shorter(ranked):
            if bare + warnings_tokens(said) <= d.hard_limit:
                return _saying(bundle, said)
    key = _shorter(ranked)[-1] if ranked else ()
    return nothing_fits(bundle, bare + warnings_tokens(key))


def nothing_fits(bundle: Bundle, needed: int) -> Bundle:
    """The answer that holds nothing, only that ``hard_limit`` is too small for this one and
    the limit (``needed``) that holds it with what it has to say."""
    limit = bundle.diagnostics.hard_limit
    for said in (
        f"hard_limit {limit} holds nothing of this answer; raise it to {needed} or more",
        f"hard_limit {limit} holds nothing: raise it to {needed}",
    ):
        empty = replace(bundle, items=(), text="", delta=None, recovered=False, state_error=None)
        empty = replace(empty, warnings=(said,))
        tokens = answer_tokens(empty, widest=True)  # the same for every bundle id
        exceeded = max(tokens - limit, 0)
        figures = replace(
            bundle.diagnostics, tokens=tokens, budget_exceeded=exceeded > 0, overage=exceeded
        )
        if tokens <= limit:
            return replace(empty, diagnostics=figures)
    raise QueryError(
        f"hard_limit {limit} is too small for any answer to this request (its envelope alone "
        f"takes more); raise it to {max(needed, tokens)} or more"
    )


def _rank(warning: str) -> int:
    """The order in which warnings are kept: a document cut at the limit (where to read on)
    first, then what was left out for the limit, then the rest as they came."""
    if TARGET_CUT in warning:
        return 0
    if warning.startswith(ISSUE_LEFT_OUT) or FITS_NO_SECTION in warning:
        return 1
    return 2


def _shorter(ranked: list[str]) -> list[tuple[str, ...]]:
    """The warnings as they are, then in their compact form, then the compact ones with the
    least important left out one by one, down to the most important alone."""
    compact = [cut_short(w) for w in ranked]
    tries = [tuple(ranked), tuple(compact)]
    tries += [tuple(compact[:n]) for n in range(len(compact) - 1, 0, -1)]
    return tries


def _saying(bundle: Bundle, said: tuple[str, ...]) -> Bundle:
    """``bundle`` with ``said`` as its warnings, its ``tokens`` counting them in their place."""
    extra = warnings_tokens(said) - warnings_tokens(bundle.warnings)
    return replace(counted(bundle, extra), warnings=said)
