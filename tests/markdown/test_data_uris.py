"""Inline ``data:`` URIs (K4): their payload is out of the chunk text, indexed and served in
sections, and in the document read whole or in parts as the file has it."""

from __future__ import annotations

import base64
import random

from briefd.api import Briefd
from briefd.retrieval.search import SearchRequest
from briefd.service.documents import fields_tokens, link_costs
from briefd.service.reading import read_within
from tests.conftest import WriteFiles

_PNG = base64.b64encode(random.Random(7).randbytes(60 * 1024)).decode()  # a 60 KB image
_SVG = base64.b64encode(random.Random(8).randbytes(3000)).decode()
_PDF = base64.b64encode(random.Random(9).randbytes(1200 * 1024)).decode()
TEXT = (
    "# Checkout flow\n\n"  # 1
    "The page shows the card form first.\n\n"  # 3
    f"![Card form, step one](data:image/png;base64,{_PNG})\n\n"  # 5
    "## Logos {#logos}\n\n"  # 7
    f'<p><img alt="Acquirer logo" src="data:image/svg+xml;base64,{_SVG}"></p>\n\n'  # 9
    f"Download [the signed terms](data:application/pdf;base64,{_PDF}) before launch.\n\n"  # 11
    "A tiny one stays: ![dot](data:image/gif;base64,R0lGODlhAQABAAAAACw=)\n"  # 13
)


def test_a_data_uris_payload_is_out_of_chunks_and_in_the_document(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A 60 KB base64 image made 160 chunks (57,000 tokens) of letters that crowded search
    results; its chunk text now says what it is (alt text, media type, size), lines as before."""
    write_files({"domain/checkout.md": TEXT})
    api.index()
    view = api.document("domain/checkout.md")
    got = [(c.heading, c.heading_path, c.anchor, c.start_line, c.end_line) for c in view.chunks]
    assert got == [
        ("Checkout flow", (), None, 1, 5),
        ("Logos", ("Logos",), "logos", 7, 13),
    ]
    assert [c.content for c in view.chunks] == [
        "The page shows the card form first.\n\n"
        "![Card form, step one](data:image/png;base64,… (60 KB elided))",
        '<p><img alt="Acquirer logo" src="data:image/svg+xml;base64,… (3 KB elided)"></p>\n\n'
        "Download [the signed terms](data:application/pdf;base64,… (1.2 MB elided)) before "
        "launch.\n\n"
        "A tiny one stays: ![dot](data:image/gif;base64,R0lGODlhAQABAAAAACw=)",
    ]
    assert sum(c.tokens for c in view.chunks) < 150
    hits = api.search(SearchRequest("card form step", top_k=3)).hits
    assert [(h.heading, h.content) for h in hits[:1]] == [("Checkout flow", view.chunks[0].content)]
    assert view.body == TEXT  # the document as the file has it
    parts, start, char, read = [], None, 0, ""
    while True:  # read in parts within 2,000 tokens: the file's lines, a line over it in pieces
        shown, part = read_within(view, start, 2000, fields_tokens, link_costs(), char)
        parts.append(part)
        read += shown.body
        if part is None or part.next_start_line is None:
            break
        read += "" if part.next_start_char is not None else "\n"  # a piece goes on in the line
        start, char = part.next_start_line, part.next_start_char or 0
    assert len(parts) > 3 and read == TEXT
    assert {p.end_line for p in parts if p and p.next_start_char is not None} == {5, 9, 11}


_ICON = base64.b64encode(random.Random(10).randbytes(300)).decode()


def test_a_data_links_title_stays_its_one_title(api: Briefd, write_files: WriteFiles) -> None:
    """A data: link with a title came out with two, the size and the title
    (``![Logo](data:…,… (300 bytes elided) "Acquirer logo")``), which is no link."""
    text = (
        "# Logos\n\n"
        f'![Logo](data:image/png;base64,{_ICON} "Acquirer logo") on the form.\n\n'
        f"See [the icon](data:image/png;base64,{_ICON}  'Small icon' ), "
        f"[the other](data:image/png;base64,{_ICON} (Other icon)) and "
        f'<img src="data:image/png;base64,{_ICON}" title="HTML icon">.\n'
    )
    write_files({"domain/logos.md": text})
    api.index()
    assert [c.content for c in api.document("domain/logos.md").chunks] == [
        '![Logo](data:image/png;base64,… "Acquirer logo (300 bytes elided)") on the form.\n\n'
        "See [the icon](data:image/png;base64,…  'Small icon (300 bytes elided)' ), "
        "[the other](data:image/png;base64,… (Other icon, 300 bytes elided)) and "
        '<img src="data:image/png;base64,… (300 bytes elided)" title="HTML icon">.'
    ]


def _wrapped(data: bytes, prefix: str = "") -> str:
    text = base64.b64encode(data).decode()
    return f"\n{prefix}".join(text[i : i + 76] for i in range(0, len(text), 76))


def test_a_payload_wrapped_over_lines_is_elided_whole(api: Briefd, write_files: WriteFiles) -> None:
    """A base64 payload wrapped at 76 characters (``base64`` writes it so) had its first line
    elided and the rest left in the chunks: a 20 KB image gave 360 lines of letters."""
    text = (
        "# Wrapped\n\n"  # 1
        f"![Flow](data:image/png;base64,{_wrapped(random.Random(11).randbytes(20 * 1024))})\n\n"  # 3-362
        "Text after the flow.\n\n"  # 364
        "## Logo {#logo}\n\n"  # 366
        '<p><img alt="Logo" src="data:image/png;base64,\n'  # 368
        f"{_wrapped(random.Random(12).randbytes(600))}\n"  # 369-379
        '" width="20"></p>\n\n'  # 380
        "> quoted ![q](data:image/png;base64,"  # 382
        f'{_wrapped(random.Random(13).randbytes(300), "> ")} "Quoted") tail\n'  # 382-387
    )
    write_files({"domain/wrapped.md": text})
    api.index()
    view = api.document("domain/wrapped.md")
    got = [(c.heading, c.anchor, c.start_line, c.end_line) for c in view.chunks]
    assert got == [("Wrapped", None, 1, 364), ("Logo", "logo", 366, 387)]
    assert [c.content for c in view.chunks] == [
        "![Flow](data:image/png;base64,… (20 KB elided))\n\nText after the flow.",
        '<p><img alt="Logo" src="data:image/png;base64,… (600 bytes elided)" width="20"></p>\n\n'
        '> quoted ![q](data:image/png;base64,… "Quoted (300 bytes elided)") tail',
    ]
    assert view.body == text  # the document as the file has it
