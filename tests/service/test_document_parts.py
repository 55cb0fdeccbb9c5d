"""A long document read part by part (I1, I2): MCP get_document answers within max_tokens
(default 8,000), each part says where the next starts, and the parts put together are the
document. Through the SDK's client on a real uvicorn, and REST through the app."""

from __future__ import annotations

import base64
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from mcp import Client
from mcp_types import CallToolResult

from briefd.api import Briefd
from briefd.model import DocumentView, FrontMatter
from briefd.service import create_app
from briefd.service.documents import fields_tokens, link_costs
from briefd.service.reading import read_within
from briefd.settings import Settings
from briefd.text import whole_characters
from briefd.tokens import count_tokens, escaped_tokens
from tests.conftest import WriteFiles
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN, serving
from tests.service.test_mcp import run

PATH = "domain/http2.md"


def _reference_page() -> str:
    """A reference page of ~27,000 tokens: 40 H2 sections with H4 options, links between them,
    and one section far over any part's budget."""
    parts = ["# HTTP/2 reference\n\nThe module's options.\n"]
    for n in range(40):
        options = "\n".join(
            f"* `option{n}_{k}` {{number}} Sets limit {k} of stream {n}; see [next](#stream-{n + 1})."
            for k in range(40)
        )
        parts.append(f"## Stream {n}\n\n#### Options\n\n{options}\n")
    huge = "\n".join(f"Line {k} of the settings table, value {k * 7}." for k in range(1500))
    parts.append(f"## Settings table\n\n{huge}\n")
    return "\n".join(parts)


def _served(tmp_path: Path, write_files: WriteFiles, body: Any) -> Any:
    root = write_files({PATH: _reference_page(), "domain/short.md": "# Short\n\nOne line.\n"})
    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            return run(base + "/mcp", "auto", body), root


def test_a_long_document_comes_in_parts_that_make_it_whole(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """Claude Code refuses a tool answer over 25,000 tokens and moves one over 50,000
    characters to a file: get_document sent this page whole (~27,000 tokens, twice that in
    text and structured content)."""

    async def body(client: Client) -> list[CallToolResult]:
        answers = [await client.call_tool("get_document", {"doc_path": PATH})]
        while answers[-1].structured_content["part"]["next_start_line"] is not None:  # type: ignore[index]
            following = answers[-1].structured_content["part"]["next_start_line"]  # type: ignore[index]
            answers.append(
                await client.call_tool("get_document", {"doc_path": PATH, "start_line": following})
            )
        answers.append(await client.call_tool("get_document", {"doc_path": "domain/short.md"}))
        return answers

    answers, root = _served(tmp_path, write_files, body)
    *parts, short = answers
    assert "part" not in short.structured_content  # type: ignore[operator]
    assert len(parts) >= 4
    bodies, start = [], 1
    for answer in parts:
        out = answer.structured_content
        part = out["part"]  # type: ignore[index]
        assert part["start_line"] == start
        text = answer.content[0].text  # type: ignore[union-attr]
        received = json.dumps(out, ensure_ascii=False, separators=(",", ":"))  # JSON.stringify
        assert count_tokens(received) <= 8_000, count_tokens(received)
        assert f"part: lines {start}-{part['end_line']} of {part['last_line']}" in text
        for section in out["sections"]:  # type: ignore[index]
            assert section["end_line"] >= start and section["start_line"] <= part["end_line"]
        assert all(start <= x["line"] <= part["end_line"] for x in out["links"])  # type: ignore[index]
        if part["next_start_line"] is not None:
            assert text.endswith(
                f'get_document(doc_path="{PATH}", start_line={part["next_start_line"]}, '
                'scopes=["domain"])]'
            )
            start = part["next_start_line"]
        bodies.append(out["body"])  # type: ignore[index]
    assert "\n".join(bodies) == (root / PATH).read_text()
    cut = [a for a in parts if a.structured_content["body"].startswith("Line ")]  # type: ignore[index]
    assert cut, "the settings table, over any budget, was cut between lines"


def test_rest_reads_whole_unless_asked_and_says_a_line_outside(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    root = write_files({PATH: _reference_page(), "domain/uses.md": "# Uses\n\n[h2](http2.md)\n"})
    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config(token=None))) as http:
            whole = http.get(f"/api/docs/{PATH}").json()
            first = http.get(f"/api/docs/{PATH}", params={"max_tokens": 2000}).json()
            outside = http.get(f"/api/docs/{PATH}", params={"start_line": 99_999})
            rest = http.get(f"/api/docs/{PATH}", params={"start_line": 5}).json()
    assert "part" not in whole and whole["body"] == (root / PATH).read_text()
    assert first["part"]["start_line"] == 1 and first["part"]["next_start_line"] > 1
    assert count_tokens(first["body"]) <= 2000
    assert whole["body"].startswith(first["body"] + "\n")
    assert first["part"]["sections"] == len(whole["sections"]) > len(first["sections"])
    assert rest["part"]["backlinks"] == len(whole["backlinks"]) == len(rest["backlinks"]) == 1
    assert outside.status_code == 400
    assert "start_line 99999 is outside domain/http2.md" in outside.text


def test_a_document_linked_hundreds_of_times_still_reads_in_parts_within_the_budget(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """Node's errors.md, linked ~300 times: every part carried all its backlinks (15,500
    tokens) whatever max_tokens said, and the text left was one line per part (3,674 calls to
    read it). The first part lists backlinks in a quarter of the budget (the relation first,
    then one per linking document), later parts none, and every answer stays within it."""
    codes = "\n".join(
        f"## ERR_{n}\n\nError {n} is raised when limit {n} is hit.\n" for n in range(150)
    )
    files = {"domain/errors.md": f"# Errors\n\nEvery error code.\n\n{codes}"}
    for n in range(60):  # 60 documents linking 5 codes each
        links = " ".join(f"[ERR_{n + k}](errors.md#err_{n + k})" for k in range(5))
        files[f"domain/api{n:02}.md"] = f"# API {n}\n\nMay raise {links}.\n"
    files["domain/errors2.md"] = "---\nsupersedes: errors.md\n---\n# Errors v2\n\nNewer codes.\n"
    root = write_files(files)

    async def body(client: Client) -> list[CallToolResult]:
        asked = {"doc_path": "domain/errors.md", "max_tokens": 1000}
        answers = [await client.call_tool("get_document", asked)]
        following = answers[0].structured_content["part"]["next_start_line"]  # type: ignore[index]
        answers.append(await client.call_tool("get_document", {**asked, "start_line": following}))
        return answers

    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        everything = api.document("domain/errors.md")
        with serving(create_app(api, service_config())) as base:
            first, second = run(base + "/mcp", "auto", body)
    assert len(everything.backlinks) == 301
    for answer in (first, second):
        out = answer.structured_content
        received = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
        assert count_tokens(received) <= 1000, count_tokens(received)
        assert out["part"]["backlinks"] == 301  # type: ignore[index]
        assert out["part"]["end_line"] - out["part"]["start_line"] >= 10  # type: ignore[index]
    listed = first.structured_content["backlinks"]  # type: ignore[index]
    assert 5 <= len(listed) < 301 and second.structured_content["backlinks"] == []  # type: ignore[index]
    relation = [x for x in listed if x["source_path"] == "domain/errors2.md"]
    assert [x.get("relation") for x in relation] == ["supersedes"]  # never cut before the rest
    assert len({x["source_path"] for x in listed}) == len(listed)  # one per linking document
    text = first.content[0].text  # type: ignore[union-attr]
    assert "superseded by: domain/errors2.md" in text
    assert f"(+{301 - len(listed)} more links to it: see part.backlinks)" in text
    assert "linked from: 301 links to it, listed in the first part" in second.content[0].text  # type: ignore[union-attr]


def _long_lines() -> str:
    """Lines each alone over any part's budget: the brief's one-line paragraph, a base64
    data-URI image (no space to cut at), and a line of flags, families (joined by U+200D),
    accents written as a combining mark and astral CJK, which a cut must leave whole."""
    words = " ".join(f"zebra{i} ledger" for i in range(4000))
    image = base64.b64encode(random.Random(7).randbytes(24_000)).decode()
    marks = " ".join(f"🇹🇷👨\u200d👩\u200d👧q\u0307𠮷{i}" for i in range(3000))
    return (
        f"# One line\n\n## Line\n\n{words}\n\n## Image\n\n![logo](data:image/png;base64,{image})"
        f"\n\n## Marks\n\n{marks}\nThe end.\n"
    )


def _pieces(answers: list[dict[str, Any]], max_tokens: int) -> str:
    """The parts put together, each checked to fit ``max_tokens`` as a client receives it."""
    text = ""
    for out in answers:
        received = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
        assert count_tokens(received) <= max_tokens, (count_tokens(received), out["part"])
        cut = out["part"].get("next_start_char") is not None
        text += out["body"] + ("" if cut else "\n")
    return text[:-1]


def test_a_line_over_the_budget_comes_in_pieces_that_make_it_whole(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """A part held at least one whole line: a one-line paragraph came back as 21,303 tokens
    with max_tokens=8000, which Claude Code refuses (over 25,000 a data-URI image or a
    minified JSON would be): such a document could not be read over MCP at all."""
    root = write_files({"domain/oneline.md": _long_lines()})
    asked = {"doc_path": "domain/oneline.md", "max_tokens": 8000, "scopes": ["all"]}

    async def body(client: Client) -> list[CallToolResult]:
        answers = [await client.call_tool("get_document", asked)]
        while (part := answers[-1].structured_content["part"])["next_start_line"] is not None:  # type: ignore[index]
            following = {"start_line": part["next_start_line"]}
            if "next_start_char" in part:
                following["start_char"] = part["next_start_char"]
            answers.append(await client.call_tool("get_document", {**asked, **following}))
        return answers

    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            answers = run(base + "/mcp", "auto", body)
    assert not any(a.is_error for a in answers), answers[-1].content
    outs = [a.structured_content for a in answers]
    assert _pieces(outs, 8000) == (root / "domain/oneline.md").read_text()  # type: ignore[arg-type]
    # the first part fills its budget with the paragraph's first piece (it held the two
    # headings alone, 12 tokens of 8,000, and the next call began the paragraph)
    opening = outs[0]
    assert opening["body"].startswith("# One line\n\n## Line\n\nzebra0 ledger zebra1 ledger")  # type: ignore[index]
    assert opening["part"]["end_line"] == 5 and opening["part"]["tokens"] > 6000  # type: ignore[index]
    lines = (root / "domain/oneline.md").read_text().split("\n")
    cuts = [
        (o["part"]["end_line"], o["part"]["next_start_char"])
        for o in outs
        if "next_start_char" in o["part"]
    ]  # type: ignore[index,operator]
    assert {line for line, _ in cuts} == {5, 9, 13}  # each long line cut at least once
    for line, char in cuts:
        text = lines[line - 1]
        assert whole_characters(text, char) == char  # never inside a flag, family or accent
        if line != 9:  # the image has no space to cut at
            assert text[char - 1] == " ", text[char - 10 : char + 10]
    first = next(a for a in answers if "next_start_char" in a.structured_content["part"])  # type: ignore[index,operator]
    line, char = cuts[0]
    assert first.content[0].text.endswith(  # type: ignore[union-attr]
        f'[… line {line} continues at character {char}: get_document(doc_path="domain/oneline.md", '
        f'start_line={line}, start_char={char}, scopes=["domain"])]'
    )


def test_rest_reads_a_long_line_in_pieces_and_says_a_character_past_it(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    root = write_files({"domain/oneline.md": _long_lines()})
    url = "/api/docs/domain/oneline.md"
    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config(token=None))) as http:
            outs = [http.get(url, params={"max_tokens": 2000}).json()]
            while (part := outs[-1]["part"])["next_start_line"] is not None:
                following = {"start_line": part["next_start_line"]}
                following["start_char"] = part.get("next_start_char", 0)
                outs.append(http.get(url, params={"max_tokens": 2000, **following}).json())
            rest = http.get(url, params={"start_line": 5, "start_char": 100}).json()
            past = http.get(url, params={"start_line": 5, "start_char": 200_000})
    assert _pieces(outs, 2000) == (root / "domain/oneline.md").read_text()
    assert sum("start_char" in o["part"] for o in outs) > 30  # pieces of ~2,000 tokens
    whole = (root / "domain/oneline.md").read_text().split("\n")
    assert rest["body"] == "\n".join([whole[4][100:], *whole[5:]])
    assert rest["part"]["start_char"] == 100 and "next_start_char" not in rest["part"]
    assert past.status_code == 400
    assert (
        f"start_char 200000 is past line 5 of domain/oneline.md, which has {len(whole[4])} characters"
        in past.text
    )


def test_a_megabyte_line_is_read_in_pieces_counting_each_character_a_few_times() -> None:
    """Each piece counted the whole rest of its line and searched its cut over 64 characters a
    token of room: a 1.2 MB data-URI line (a PDF pasted into a note) read at max_tokens=8000
    had 217 million characters counted (a minute), and tests/markdown/test_data_uris.py ran over
    20 minutes in CI. What is counted is now a few times what is read (2.4)."""
    pdf = base64.b64encode(random.Random(9).randbytes(1200 * 1024)).decode()
    body = f"# Terms\n\nDownload [the terms](data:application/pdf;base64,{pdf}) first.\nThe end."
    view = DocumentView(PATH, "domain", "Terms", FrontMatter(), body, "", (), (), (), ())
    counted, limit = 0, 4 * len(body)

    def text(piece: str) -> int:
        nonlocal counted
        counted += len(piece)
        assert counted <= limit, f"{counted:,} characters counted for {len(body):,}"
        return escaped_tokens(piece)

    costs = replace(link_costs(), text=text)
    read, start, char = "", None, 0
    while True:
        shown, part = read_within(view, start, 8000, fields_tokens, costs, char)
        assert part is not None and part.tokens <= 8000
        read += shown.body
        if part.next_start_line is None:
            break
        read += "" if part.next_start_char is not None else "\n"
        start, char = part.next_start_line, part.next_start_char or 0
    assert read == body


def test_a_documents_absolute_path_in_the_knowledge_folder_reads_it(
    service_api: Briefd, service_settings: Settings, tmp_path: Path
) -> None:
    """An agent beside the knowledge (a spawned `briefd mcp`, a checkout that holds it) names
    a document by its absolute path, as its own file tools do: that document, not 'no
    document … paths are relative to the repository root'. A path outside stays refused
    alike, whether or not its file exists."""
    assert service_settings.source is not None
    source = service_settings.source.resolve()
    (tmp_path / "outside.md").write_text("# Outside\n")
    asked = [
        str(source / "domain" / "refunds.md"),
        str(source / "domain" / ".." / "domain" / "refunds.md"),
        str(source / ".." / "outside.md"),
        str(tmp_path / "outside.md"),
        "/etc/passwd",
    ]

    async def body(client: Client) -> list[CallToolResult]:
        return [await client.call_tool("get_document", {"doc_path": p}) for p in asked]

    with serving(create_app(service_api, service_config())) as base:
        read, dotted, *refused = run(base + "/mcp", "auto", body)
    assert not read.is_error, read.content
    assert read.structured_content is not None
    assert read.structured_content["path"] == "domain/refunds.md"
    assert dotted.structured_content == read.structured_content
    for answer in refused:
        assert answer.is_error
        assert "paths are relative to the repository root" in answer.content[0].text  # type: ignore[union-attr]


def test_document_context_and_suggest_links_read_an_absolute_path_as_get_document_does(
    service_api: Briefd, service_settings: Settings
) -> None:
    """README: a document's absolute path inside the knowledge folder reads as its path from
    the folder's root. get_document did; document_context and suggest_links (MCP and REST)
    answered the same path "no document '/…/domain/refunds.md' in scopes domain, conventions"."""
    assert service_settings.source is not None
    refunds = str(service_settings.source.resolve() / "domain" / "refunds.md")

    async def body(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("document_context", {"doc_path": refunds}),
            await client.call_tool("suggest_links", {"doc_path": refunds, "scopes": ["all"]}),
        ]

    with serving(create_app(service_api, service_config())) as base:
        context, links = run(base + "/mcp", "auto", body)
    assert not context.is_error, context.content
    assert context.structured_content is not None
    assert context.structured_content["target"] == "domain/refunds.md"
    assert not links.is_error, links.content
    with TestClient(create_app(service_api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        rest = http.post("/api/context", json={"doc_path": refunds})
        suggested = http.get(
            "/api/links/suggestions", params={"doc_path": refunds, "scopes": "all"}
        )
    assert rest.status_code == 200, rest.text
    assert rest.json()["target"] == "domain/refunds.md"
    assert suggested.status_code == 200, suggested.text
    assert suggested.json() == links.structured_content


def test_a_front_matter_over_the_budget_still_reads_in_whole_lines(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """A generated page whose front matter lists 1,500 tags, aliases and refs (every part
    carries them, ~20,000 tokens): the text was given what was left of max_tokens, one token,
    so each part was one character and its 30 lines took hundreds of calls. The text gets a
    quarter of max_tokens at least: one part holds it all."""
    tags = ", ".join(f"tag{n}" for n in range(1500))
    aliases = ", ".join(f"alias number {n}" for n in range(1500))
    refs = ", ".join(f'"src/p{n}/**"' for n in range(1500))
    lines = "\n".join(f"Line {n} of the generated page." for n in range(30))
    page = (
        f"---\ntags: [{tags}]\naliases: [{aliases}]\nrefs: [{refs}]\n---\n# Generated\n\n{lines}\n"
    )
    root = write_files({"domain/generated.md": page})
    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config(token=None))) as http:
            out = http.get("/api/docs/domain/generated.md", params={"max_tokens": 8000}).json()
    assert len(out["tags"]) == 1500
    assert out["body"].rstrip().endswith("Line 29 of the generated page.")
    assert out.get("part", {}).get("next_start_line") is None


def test_a_short_document_linked_from_hundreds_comes_within_the_budget(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """A glossary of three lines that 400 documents link to: its text fits any budget, so it
    came whole, with all 400 backlinks, whatever max_tokens said (on 3,000 generated
    documents linking theirs: 27 KB of text and 231 KB of JSON from get_document at its
    default 8,000). Its backlinks are cut to a quarter of the budget and counted, as a long
    document's first part does."""
    files = {"domain/glossary.md": "# Glossary\n\n## Terms\nA ledger is a book.\n"}
    for n in range(400):
        files[f"domain/topic-{n:03}.md"] = f"# Topic {n}\n\nSee the [glossary](glossary.md).\n"
    root = write_files(files)

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool("get_document", {"doc_path": "domain/glossary.md"})

    with Briefd(service_settings_for(root, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with serving(create_app(api, service_config())) as base:
            answer = run(base + "/mcp", "auto", body)
    out = answer.structured_content
    received = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
    assert count_tokens(received) <= 8000, count_tokens(received)
    assert out["body"].rstrip("\n") == "# Glossary\n\n## Terms\nA ledger is a book."  # type: ignore[index]
    assert out["part"]["backlinks"] == 400 and out["part"]["next_start_line"] is None  # type: ignore[index]
    listed = len(out["backlinks"])  # type: ignore[index]
    assert 20 <= listed < 400
    text = answer.content[0].text  # type: ignore[union-attr]
    assert f"(+{400 - listed} more links to it: see part.backlinks)" in text
    assert text.rstrip("\n").endswith("A ledger is a book.")
