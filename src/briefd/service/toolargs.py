"""The arguments the MCP tools share (I1): their types, limits and the descriptions the model
reads to fill them, and how a list argument sent as one string is read (as REST reads it).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field

from briefd.bundles.model import MAX_HARD_LIMIT, MAX_TOKENS, MIN_TOKENS
from briefd.service import schemas
from briefd.service.schemas import split_list


def _listed(value: object) -> object:
    """One name sent as a string where a list is taken (``scopes: "all"``, as the parameter's
    description words it): that list of one, as ``?scopes=all`` is read over REST."""
    return [value] if isinstance(value, str) else value


OneOrMore = BeforeValidator(_listed)
Scopes = Annotated[
    list[str] | None,
    Field(
        description="Scopes to read, as list_scopes and the server's instructions name them, "
        "or 'all'. Default: the server's default scopes."
    ),
    OneOrMore,
]
Paths = Annotated[  # as many as POST /api/bundle takes: each one is matched against every refs
    list[str] | None,
    Field(
        max_length=schemas.MAX_PATHS,
        description="Code paths the task touches, from the code repository's root as refs "
        "name them (src/payments/refund.py, src/payments/), or absolute in a checkout on the "
        "server's machine; documents whose refs cover them lead.",
    ),
    OneOrMore,
]
Tags = Annotated[
    list[str] | None,
    Field(max_length=50, description="Only documents with any of these front-matter tags."),
    OneOrMore,
]
Budget = Annotated[
    int,
    Field(
        ge=MIN_TOKENS,
        le=MAX_TOKENS,
        description="Soft token budget of the whole answer as you receive it (cl100k); optional content fills it.",
    ),
]
HardLimit = Annotated[
    int | None,
    Field(
        ge=MIN_TOKENS,
        le=MAX_HARD_LIMIT,
        description="Tokens the whole answer never goes over (default 4 x max_tokens), "
        "mandatory content included: a document_context target (or an always: true document, "
        "or issue text) over it comes from its top as far as it holds, and the warnings name "
        "the get_document call that reads on.",
    ),
]
Mode = schemas.Mode
Base = Annotated[
    str | None,
    Field(
        max_length=64,
        description="bundle_id of a bundle you already hold: only the difference is returned.",
    ),
]
Verbose = Annotated[
    bool,
    Field(description="Add diagnostics and exclusions for a person (not counted in tokens)."),
]
# a document part's text: Claude Code refuses a tool answer over 25,000 tokens and moves one
# over 50,000 characters to a file; the structured content adds the part's sections and links
DOCUMENT_PART_TOKENS = 8_000


def scope_tuple(scopes: list[str] | None) -> tuple[str, ...] | None:
    """As REST reads ``?scopes=``: comma lists split, names stripped, empty entries dropped;
    None (the default scopes) when none is left."""
    return split_list(scopes)
