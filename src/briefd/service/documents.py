"""The documents REST and MCP answer with (I1, I2): a document whole or in parts, its sections,
its links and backlinks, and what each costs a client in tokens."""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, Field

from briefd.bundles.measure import compact
from briefd.model import Chunk, DocumentView, ResolvedLink
from briefd.service.reading import Costs, Part
from briefd.tokens import count_tokens, escaped_tokens


class SectionOut(BaseModel):
    chunk_id: str
    heading: str
    heading_path: list[str]
    anchor: str | None
    start_line: int
    end_line: int
    tokens: int


class LinkOut(BaseModel):
    source_path: str
    section: str
    line: int
    target: str
    fragment: str | None = Field(
        default=None, description="The heading or {#anchor} after '#', as written."
    )
    relation: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The front-matter relation the link is (depends_on, parent, extends, "
        "implements, supersedes, related); absent for a link written in the text.",
    )
    target_path: str | None = Field(
        description="The document the link reaches: the linking document's own path for a "
        "link to one of its own sections ([[#Heading]], [text](#anchor)); null when it "
        "reaches none, or leads into a scope the request did not ask for (see status and "
        "detail)."
    )
    status: str = Field(
        description="ok, broken, ambiguous, bad-anchor, or outside-scopes: the target is in a "
        "scope the request did not ask for (its detail names the scope)."
    )
    detail: str


class DocumentOut(BaseModel):
    path: str
    scope: str
    title: str
    updated_at: str
    tags: list[str]
    aliases: list[str]
    refs: list[str]
    body: str
    sections: list[SectionOut]
    links: list[LinkOut]
    backlinks: list[LinkOut]
    problems: list[str]
    part: DocumentPartOut | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Set when the body is a part of the document (max_tokens, start_line): "
        "its file lines, and next_start_line to read on from (null: the end); with "
        "next_start_char when a line alone over max_tokens is cut. sections and links are "
        "those of this part.",
    )


class DocumentPartOut(BaseModel):
    start_line: int
    end_line: int
    last_line: int = Field(description="The document's last file line.")
    next_start_line: int | None
    tokens: int = Field(
        description="What the part's text, sections and links cost, in cl100k tokens of "
        "this JSON (the document's other fields come on top)."
    )
    sections: int = Field(description="The document's sections, in every part.")
    links: int = Field(description="The links written in the document, in every part.")
    backlinks: int = Field(
        description="The links to the document: the first part lists as many as fit a "
        "quarter of max_tokens (relations first, then one per linking document), later parts "
        "none; max_tokens large enough for the whole document lists them all."
    )
    start_char: int = Field(
        default=0,
        exclude_if=lambda value: value == 0,
        description="Where in start_line the part starts, in characters (Unicode code "
        "points); absent: at its start.",
    )
    next_start_char: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Set when a line alone over max_tokens is cut: the next part starts at "
        "this character of next_start_line (this part's end_line), read with start_char; "
        "the line's pieces join without a line break. Absent: at the start of the line.",
    )


def _link_out(r: ResolvedLink) -> LinkOut:
    return LinkOut(
        source_path=r.link.source_path,
        section=r.link.section,
        line=r.link.line,
        target=r.link.target,
        fragment=r.link.fragment,
        relation=r.link.display if r.link.kind == "relation" else None,
        target_path=r.target_path,
        status=r.status,
        detail=r.detail,
    )


def _section_out(c: Chunk) -> SectionOut:
    return SectionOut(
        chunk_id=c.id,
        heading=c.heading,
        heading_path=list(c.heading_path),
        anchor=c.anchor,
        start_line=c.start_line,
        end_line=c.end_line,
        tokens=c.tokens,
    )


def fields_tokens(doc: DocumentView) -> int:
    """What a document's answer costs a client (cl100k tokens of its JSON) besides its body,
    sections and links: its other fields, backlinks included, and a part's (counted at its
    largest, so a part's answer stays within the budget whatever its numbers)."""
    bare = replace(doc, body="", chunks=(), links=())
    return json_tokens(document_out(bare, _LARGEST_PART))


def link_costs() -> Costs:
    """What a part's text, a section's fields and a link's fields cost a client."""
    return Costs(
        text=escaped_tokens,
        section=lambda chunk: json_tokens(_section_out(chunk)) + 1,  # and its comma
        link=lambda link: json_tokens(_link_out(link)) + 1,
        cut=count_tokens(f',"start_char":{_MANY},"next_start_char":{_MANY}'),
    )


_MANY = 9_999_999
_LARGEST_PART = Part(_MANY, _MANY, _MANY, _MANY, _MANY, _MANY, _MANY, _MANY)


def json_tokens(model: BaseModel) -> int:
    """A model's tokens as a client reads it: ``JSON.stringify`` of its JSON."""
    return count_tokens(compact(model.model_dump(mode="json")))


def document_out(doc: DocumentView, part: Part | None = None) -> DocumentOut:
    fm = doc.front_matter
    return DocumentOut(
        path=doc.path,
        scope=doc.scope,
        title=doc.title,
        updated_at=doc.updated_at,
        tags=list(fm.tags),
        aliases=list(fm.aliases),
        refs=list(fm.refs),
        body=doc.body,
        sections=[_section_out(c) for c in doc.chunks],
        links=[_link_out(r) for r in doc.links],
        backlinks=[_link_out(r) for r in doc.backlinks],
        problems=list(doc.problems),
        part=None if part is None else DocumentPartOut.model_validate(part, from_attributes=True),
    )
