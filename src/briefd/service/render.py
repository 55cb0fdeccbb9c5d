"""The text block of each MCP tool result, pure: what the model reads next to the structured
content. Facts with attribution, no instructions."""

from __future__ import annotations

import json

from briefd.bundles.render import drift_note, self_contained, trimmed
from briefd.bundles.warned import FITS_NO_SECTION, TARGET_CUT
from briefd.model import OUTSIDE_SCOPES
from briefd.service import documents, schemas
from briefd.text import counted, visible


def search_text(out: schemas.SearchOut) -> str:
    """The hits, or why there are none, then what ``warnings`` says (a default scope the index
    lacks): a model reading the text alone is told too."""
    return "\n\n".join([_search_body(out), *(f"Warning: {w}" for w in out.warnings or ())])


def _search_body(out: schemas.SearchOut) -> str:
    """The query is repeated as :func:`visible` shows it: a NUL or a terminal's escape in it
    reached the model's text as it came."""
    out = out.model_copy(update={"query": visible(out.query)})
    if not out.hits and out.note:
        return f"Nothing returned for '{out.query}': {out.note}."
    if not out.hits and out.gate == "empty":
        why = "; ".join(out.gate_reasons or ())
        return (
            f"Nothing returned for '{out.query}': the relevance gate judged it unrelated to this "
            f"knowledge base ({why}). If it is about this team's domain, ask again in the words "
            "its documents use."
        )
    if not out.hits and not out.scopes:  # an index without documents has no scope
        return (
            f"Nothing returned for '{out.query}': the knowledge base is empty (no document is "
            "indexed yet), so there is nothing to search."
        )
    if not out.hits:
        scopes = ", ".join(out.scopes)
        if out.warnings:  # other scopes answer, or only keywords were searched: not "nothing"
            return f"No knowledge matches '{out.query}' in scopes {scopes} (see below)."
        return (
            f"No knowledge matches '{out.query}' in scopes {scopes}. The knowledge base has "
            "nothing on this topic (or try other words, or scopes=['all'])."
        )
    parts = [f"{len(out.hits)} section(s) for '{out.query}' ({out.tokens} tokens):"]
    for rank, hit in enumerate(out.hits, 1):
        crumbs = " › ".join(map(one_line, hit.heading_path)) or one_line(hit.title)
        related = f", linked from {hit.related_to}" if hit.related_to else ""
        if hit.superseded_by:
            related += f", superseded by {', '.join(hit.superseded_by)}"
        parts.append(
            f"\n## {rank}. {crumbs}\n"
            f"source: {hit.doc_path}:{hit.start_line}-{hit.end_line} · chunk {hit.chunk_id} · "
            f"score {hit.score:.3f}{related}\n\n{self_contained(trimmed(hit.content))}"
        )
    if out.omitted:
        parts.append(
            f"\n({out.omitted} more section(s), ranked or linked to them, left out to stay in "
            "max_tokens)"
        )
    if out.note:
        parts.append(f"\n(note: {out.note})")
    return "\n".join(parts)


def bundle_text(out: schemas.BundleOut, structured: dict[str, object]) -> str:
    """Markdown mode: the block and one line about it; package and manifest: the structured
    content itself as compact JSON (never a second rendering of the same sections)."""
    if out.mode != "markdown":
        return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    notes = [f"bundle_id {out.bundle_id}", f"{out.tokens} tokens"]
    if out.cached:
        notes.append("cached")
    if out.budget_exceeded:
        notes.append(f"budget exceeded: {out.overage} tokens over hard_limit {out.hard_limit}")
    if out.recovered:
        notes.append("base unknown or compiled for another request, full bundle")
    if out.delta is not None:
        notes.append(delta_note(out.delta))
    return "\n\n".join([*bundle_block(out), *drift_notes(structured), f"({', '.join(notes)})"])


def bundle_block(out: schemas.BundleOut) -> list[str]:
    """The sections, then what ``warnings`` says (a default scope the index lacks; first when
    the bundle is over its hard limit, so a reader meets it before the block); without
    sections the warnings themselves when one says why (a budget that fits none), else why
    nothing came, then the warnings."""
    block = (out.text or "").rstrip()
    warned = [f"Warning: {w}" for w in out.warnings or ()]
    cut = any(TARGET_CUT in w for w in out.warnings or ())  # the target cut at hard_limit
    if block and (out.budget_exceeded or cut):  # said before the block, not after it
        return [*warned, block]
    if block:
        return [block, *warned]
    if cut and out.delta is None:  # none of the target fit: not "nothing matched"
        return warned
    if any(FITS_NO_SECTION in w for w in out.warnings or ()):
        return ["\n".join(out.warnings or ())]
    return [nothing_new(out.delta), *warned]


def delta_note(delta: schemas.DeltaOut) -> str:
    """As ``briefd bundle --base`` says it: reused, replaced, removed, tokens saved."""
    replaced = sum(1 for e in delta.entries if e.op == "replace")
    return (
        f"delta from {delta.base}: {len(delta.entries) - replaced} reused, {replaced} replaced, "
        f"{len(delta.removed)} removed, {delta.tokens_saved} tokens saved"
    )


def nothing_new(delta: schemas.DeltaOut | None) -> str:
    """The text of an empty block: no section matched, or (against a base) none is new."""
    if delta is None:
        return "No knowledge section matched."
    if not delta.removed:
        return f"Nothing changed since bundle {delta.base}: {len(delta.entries)} section(s) reused."
    return (
        f"No section changed or was added since bundle {delta.base}: {len(delta.entries)} "
        f"reused, {len(delta.removed)} removed."
    )


def drift_notes(structured: dict[str, object]) -> list[str]:
    """One line per document of the bundle whose governed code changed after it (T4): the
    notes the bundle's ``tokens`` counted (:func:`briefd.bundles.measure.measure`). Against a
    ``base``, the items sent are the delta's replaced ones."""
    drifting = {
        d["doc_path"]: d
        for i in _sent_items(structured)
        if isinstance(i, dict) and isinstance(d := i.get("drift"), dict)
    }
    return [
        drift_note(str(path), int(d["commits"]), str(d["since"]))
        for path, d in sorted(drifting.items())
    ]


def _sent_items(structured: dict[str, object]) -> list[object]:
    """The items an answer carries: its ``items``, or against a base its replaced entries'."""
    items = structured.get("items")
    sent = list(items) if isinstance(items, list) else []
    delta = structured.get("delta")
    entries = delta.get("entries") if isinstance(delta, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("item"), dict):
            sent.append(entry["item"])
    return sent


def document_text(out: documents.DocumentOut) -> str:
    """The head names the documents that supersede it (front matter), the other documents it
    links to (a link to one of its own sections stays in the body; one into a scope not
    requested is only counted; one that reaches no document is said broken) and those linking
    to it, then the body."""
    hidden = sum(1 for link in out.links if link.status == OUTSIDE_SCOPES)
    reached = {link.target_path for link in out.links if link.target_path} - {out.path}
    broken = {link.target for link in out.links if link.status == "broken"}
    backlinks = ", ".join(sorted({link.source_path for link in out.backlinks}))
    head = [
        f"# {one_line(out.title)}",
        f"path: {out.path} · scope: {out.scope} · updated: {out.updated_at}",
    ]
    newer = sorted({link.source_path for link in out.backlinks if link.relation == "supersedes"})
    if newer:
        head.append(f"superseded by: {', '.join(newer)} (this text was replaced: prefer it)")
    if reached:
        head.append(f"links to: {', '.join(sorted(reached))}")
    if broken:
        head.append(f"broken links: {', '.join(sorted(broken))}")
    unlisted = out.part.backlinks - len(out.backlinks) if out.part is not None else 0
    if backlinks:
        more = f" (+{unlisted} more links to it: see part.backlinks)" if unlisted else ""
        head.append(f"linked from: {backlinks}{more}")
    elif unlisted:
        head.append(f"linked from: {unlisted} links to it, listed in the first part")
    if hidden:
        more = "1 more link" if hidden == 1 else f"{hidden} more links"
        head.append(f"{more} into scopes not requested (scopes=['all'] follows {_them(hidden)})")
    tail = ""
    if out.part is not None:
        part = out.part
        head.append(
            f"part: lines {part.start_line}-{part.end_line} of {part.last_line}{_chars(part)} "
            f"({part.tokens} tokens); links above are this part's"
        )
        if part.next_start_char is not None:
            tail = (
                f"\n\n[… line {part.next_start_line} continues at character "
                f'{part.next_start_char}: get_document(doc_path="{out.path}", start_line='
                f"{part.next_start_line}, start_char={part.next_start_char}, "
                f'scopes=["{out.scope}"])]'
            )
        elif part.next_start_line is not None:
            tail = (
                f"\n\n[… continues at line {part.next_start_line}: get_document(doc_path="
                f'"{out.path}", start_line={part.next_start_line}, scopes=["{out.scope}"])]'
            )
    return "\n".join(head) + "\n\n" + self_contained(trimmed(out.body)) + tail


def _chars(part: documents.DocumentPartOut) -> str:
    """Where a part cut inside a line starts and ends in it; "" for whole lines."""
    start = f", line {part.start_line} from character {part.start_char}" if part.start_char else ""
    if part.next_start_char is None:
        return start
    return f"{start}, line {part.end_line} up to character {part.next_start_char}"


def one_line(text: str) -> str:
    """A title or heading as one line: a title written over several lines (``title: |``)
    would end the heading it is put in, its next line read as text or as a heading of its own."""
    return " ".join(text.split())


def _them(count: int) -> str:
    return "it" if count == 1 else "them"


# the largest limit list_scopes takes (half of it by default): a scope per project folder
# grows the list with the team, and 1,000 of them were 47 KB of text and 64 KB of JSON
MAX_SCOPES = 200


def scopes_text(out: schemas.ScopesOut) -> str:
    rows = [
        f"- {s.name}: {counted(s.documents, 'document')}, {counted(s.chunks, 'section')}"
        for s in out.scopes
    ]
    default = ", ".join(out.default_scopes)
    warnings = [f"Warning: {w}" for w in out.warnings or ()]
    return "\n".join(
        ["Scopes:", *rows, *_scope_pages(out), f"Searched by default: {default}", *warnings]
    )


def _scope_pages(out: schemas.ScopesOut) -> list[str]:
    """Where a page of scopes sits among all, and the call for the next (none: all listed)."""
    if out.total is None:
        return []
    listed, total = len(out.scopes), out.total
    return page_lines("list_scopes", "scopes", out.offset or 0, listed, total, MAX_SCOPES)


def page_lines(
    tool: str, noun: str, offset: int, listed: int, total: int, most: int, repeat: str = ""
) -> list[str]:
    """Where the ``listed`` rows from ``offset`` sit among ``total``, and the call for the
    next page, asking at most ``most`` (the tool's largest limit); none when every row is
    listed."""
    end = offset + listed
    if not offset and end >= total:
        return []
    if not listed:
        return [
            f"No {noun} from offset={offset}: there are {total}; call {tool} with {repeat}"
            "offset=0 (or a smaller offset) to read them."
        ]
    shown = f"{offset + 1}-{end}" if offset else f"{end}"
    if end >= total:
        return [f"[{shown} of {total} {noun} shown: the last of them]"]
    size = min(total - end, most)
    return [
        f"[{shown} of {total} {noun} shown: call {tool} with {repeat}offset={end}, "
        f"limit={size} for the next]"
    ]


MAX_SUGGESTIONS = 100  # the largest limit the suggest_links tool takes: ~33 KB with its JSON


def suggestions_text(out: schemas.SuggestionsOut) -> str:
    """The suggestions listed, where they sit among all, and what was left out (dismissed, or
    broken links the scopes asked for do not see): without that, no suggestion would read as
    no broken link while ``briefd links --check`` fails."""
    omitted = _left_out(out)
    if not out.total:
        if omitted:
            return f"No link suggestions listed; left out: {omitted}."
        return "No link suggestions: every mention is linked and no link is broken."
    text = _suggestions_listed(out)
    return f"{text}\n[left out: {omitted}]" if omitted else text


def _left_out(out: schemas.SuggestionsOut) -> str:
    parts = []
    if out.dismissed:
        broken = "a broken link" if out.dismissed == 1 else f"{out.dismissed_broken} broken"
        check = f" ({broken}, which `briefd links --check` still fails on)"
        parts.append(
            f"{counted(out.dismissed, 'dismissed suggestion')}{check if out.dismissed_broken else ''}"
        )
    if out.other_scopes:
        parts.append(
            f"{counted(out.other_scopes, 'broken link')} in or into scopes not requested "
            '(call suggest_links with scopes=["all"] to list them)'
        )
    return "; ".join(parts)


def _suggestions_listed(out: schemas.SuggestionsOut) -> str:
    listed = "\n".join(f"- {s.doc_path}:{s.line} {s.kind}: {s.detail}" for s in out.suggestions)
    end = out.offset + len(out.suggestions)
    if not out.offset and out.total <= end:
        return listed
    if not out.suggestions:
        return (
            f"No link suggestions from offset={out.offset}: there are {out.total}; call "
            "suggest_links with offset=0 (or a smaller offset) to read them"
        )
    shown = f"{out.offset + 1}-{end}" if out.offset else f"{end}"
    if out.total <= end:
        return f"{listed}\n[{shown} of {out.total} suggestions shown: the last of them]"
    if not out.offset and out.total <= MAX_SUGGESTIONS:
        return (
            f"{listed}\n[{end} of {out.total} suggestions shown: call suggest_links with "
            f"limit={out.total} (or a doc_path) for the rest]"
        )
    # past the most a call lists, only an offset reaches the rest
    size = min(out.total - end, MAX_SUGGESTIONS)
    return (
        f"{listed}\n[{shown} of {out.total} suggestions shown: call suggest_links with "
        f"offset={end}, limit={size} (or a doc_path) for the next]"
    )


def usage_text(out: schemas.UsageOut) -> str:
    text = f"stored {out.stored} usage record(s) for bundle {out.bundle_id}"
    if out.unknown_chunk_ids:
        text += f"; not in the current index: {', '.join(out.unknown_chunk_ids)}"
    return text


def proposal_text(out: schemas.ProposalOut) -> str:
    """The answer to a new proposal; its ``where``: where its branch is and what comes next,
    when its status and pull request do not say it (a local branch; a pushed one no forge
    opens a pull request for), as REST's answer has it in that field."""
    if out.where is not None:
        return f"proposed on branch {out.branch}, {out.where}" + _superseded_note(out)
    return _proposed(out) + _superseded_note(out)


def _proposed(out: schemas.ProposalOut) -> str:
    if out.status == "local":
        return f"proposed on branch {out.branch}, a local branch (not pushed: proposals.push)"
    if out.pr_url is None and out.forge_error:  # pushed, but the forge refused the pull request
        return (
            f"proposed on branch {out.branch} (pushed), but the pull request was NOT opened: "
            f"{out.forge_error}"
        )
    where = f"; pull request {out.pr_url}" if out.pr_url else ""
    return f"proposed on branch {out.branch} ({out.status}){where}"


def _superseded_note(out: schemas.ProposalOut) -> str:
    if not out.superseded_by:
        return ""
    return (
        f"\nnote: {out.doc_path} is superseded by {', '.join(out.superseded_by)}: the current "
        "text is there; if the rule itself changed, propose the change there too"
    )


BUILDING = (
    "The index is being built for the first time: until it is done the tools say so (try "
    "again a minute later), then they answer from it"
)


def instructions(out: schemas.ScopesOut, building: bool = False) -> str:
    """The server's MCP ``instructions``: what knowledge is here and how to ask for it.
    ``building``: a first index still runs beside the server, so there is knowledge to come
    (a client reads the instructions once, when it connects: "empty" would stay its word)."""
    if building:
        listing = BUILDING
    elif not out.scopes:
        listing = "The index is empty: nothing has been indexed yet"
    else:
        docs = sum(s.documents for s in out.scopes)
        listing = f"{counted(docs, 'document')} in scopes: " + _scopes_listed(out)
    return (
        "briefd serves this team's domain knowledge (terminology, business rules, ADRs, "
        f"conventions, project notes). {listing}. {_defaults(out)}. Before working on a task, call "
        "compile_bundle(task_description) for a token-budgeted context block, or "
        "search_context(query) for ranked sections; get_document reads a whole document and "
        "document_context(doc_path) compiles what is relevant to one. "
        "Afterwards, report_usage(bundle_id, useful_chunk_ids) says what helped."
    )


INSTRUCTION_SCOPES = 20  # scopes the instructions name; list_scopes names them all, in pages


def _scopes_listed(out: schemas.ScopesOut) -> str:
    """The scopes with their counts, the default ones first among the first
    ``INSTRUCTION_SCOPES``: a client puts the instructions before every conversation, and a
    team with a scope per project (400 of them) had 17 KB there, every scope named."""
    default = [s for s in out.scopes if s.name in out.default_scopes]
    others = [s for s in out.scopes if s.name not in out.default_scopes]
    shown = {s.name for s in [*default, *others][:INSTRUCTION_SCOPES]}
    listed = ", ".join(
        f"{s.name} ({counted(s.documents, 'doc')}, {counted(s.chunks, 'section')})"
        for s in out.scopes
        if s.name in shown
    )
    left = len(out.scopes) - len(shown)
    return listed + (f", and {left} more (list_scopes names them all)" if left else "")


def _defaults(out: schemas.ScopesOut) -> str:
    """The default scopes, and how to read the others: by a name this index has (the layout
    is the team's: ``projects/<name>`` or any other), or all of them."""
    said = f"Default scopes: {', '.join(out.default_scopes)}"
    others = [s.name for s in out.scopes if s.name not in out.default_scopes]
    if not others:
        return said
    return f"{said}; pass scopes=['{others[0]}'] or ['all'] for more"
