from __future__ import annotations

from briefd.markdown.document import parse_document
from briefd.markdown.frontmatter import split_front_matter
from briefd.tokens import count_tokens


def test_recognised_keys() -> None:
    split = split_front_matter(
        "---\ntitle: Refunds\ntags: [payments, refunds]\naliases: [give money back]\n"
        "refs: ['services/refunds/**']\n---\n# Heading\n"
    )
    fm = split.front_matter
    assert (fm.title, fm.tags, fm.aliases, fm.refs) == (
        "Refunds",
        ("payments", "refunds"),
        ("give money back",),
        ("services/refunds/**",),
    )
    assert split.body == "# Heading\n"
    assert split.body_start_line == 7
    assert split.problems == ()


def test_bad_yaml_is_reported_and_body_still_indexed() -> None:
    text = "---\ntitle: [unclosed\ntags: a\n---\n# Real title\n\nBody text.\n"
    doc = parse_document("domain/bad.md", text, "domain", "h", count_tokens)
    assert doc.title == "Real title"
    assert doc.problems == (
        "front matter is not valid YAML at line 3 (expected ',' or ']', but got ':'); "
        "indexed without front matter",
    )
    assert [c.content for c in doc.chunks] == ["Body text."]


def test_wrong_types_are_ignored_with_a_problem() -> None:
    split = split_front_matter("---\ntitle: {a: 1}\ntags: {b: 2}\n---\nx\n")
    assert split.front_matter.title is None
    assert split.problems == (
        "front matter 'title' must be a string; ignored",
        "front matter 'tags' must be a list of strings; ignored",
    )


def test_plain_scalars_are_read_as_written() -> None:
    """YAML 1.1 would make these False, a date, 1.1 and True: front matter means the text."""
    split = split_front_matter(
        "---\ntitle: No\ntags: [yes, 1.10, 2024-01-05, null, on]\naliases: 5\nalways: yes\n---\nx\n"
    )
    fm = split.front_matter
    assert (fm.title, fm.tags, fm.aliases, fm.always) == (
        "No",
        ("yes", "1.10", "2024-01-05", "on"),
        ("5",),
        True,
    )
    assert split.problems == ()
    doc = parse_document(
        "domain/r.md", "---\ntitle: 2024-01-05\n---\nx\n", "domain", "h", count_tokens
    )
    assert (doc.title, doc.problems) == ("2024-01-05", ())
    assert split_front_matter("---\ntitle: true\nalways: off\n---\n").front_matter.title == "true"
    assert split_front_matter("---\nalways: Off\n---\n").front_matter.always is False
    assert split_front_matter("---\nalways: True\n---\n").front_matter.always is True


def test_title_falls_back_to_h1_then_file_name() -> None:
    assert (
        parse_document("domain/a.md", "# From H1\n", "domain", "h", count_tokens).title == "From H1"
    )
    assert (
        parse_document("domain/file-name.md", "text\n", "domain", "h", count_tokens).title
        == "file-name"
    )


def test_relations_and_always() -> None:
    split = split_front_matter(
        "---\ndepends_on: [domain/fees.md, '[[settlement|the payout rules]]']\n"
        "parent: payment-lifecycle#States\nalways: true\n---\n# Body\n"
    )
    fm = split.front_matter
    assert fm.relations == (
        ("depends_on", "domain/fees.md"),
        ("depends_on", "settlement"),
        ("parent", "payment-lifecycle#States"),
    )
    assert fm.always is True and split.problems == ()
    doc = parse_document(
        "domain/a.md",
        "---\nparent: payment-lifecycle#States\n---\n# A\n",
        "domain",
        "h",
        count_tokens,
    )
    relation = doc.links[-1]
    assert (relation.kind, relation.display, relation.target, relation.fragment) == (
        "relation",
        "parent",
        "payment-lifecycle",
        "States",
    )
    assert (relation.section, relation.line) == ("", 2)


def test_bad_relations_and_always_are_ignored_with_a_problem() -> None:
    split = split_front_matter("---\ndepends_on: {a: 1}\nalways: sometimes\n---\nx\n")
    assert split.front_matter.relations == () and split.front_matter.always is False
    assert split.problems == (
        "front matter 'depends_on' must be a list of strings; ignored",
        "front matter 'always' must be true or false; ignored",
    )


def test_a_list_of_wikilinks_written_unquoted_hints_at_quotes() -> None:
    split = split_front_matter("---\ntitle: T\nrelated: [[a]], [[b]]\n---\nx\n")
    assert split.problems == (
        "front matter is not valid YAML at line 3 (expected <block end>, but found ','); "
        'indexed without front matter; quote wikilinks in a list: related: ["[[a]]", "[[b]]"]',
    )


def test_a_value_yaml_reads_as_a_comment_is_reported() -> None:
    """``tags: #payments #refunds`` (tags as Obsidian writes them in text) is a YAML comment:
    the document was indexed with no tags and no word, and ``--tags payments`` then said the
    tag is on no document. A comment after a value, or one where a list follows, is none."""
    text = (
        "---\ntitle: #1 rule of refunds\ntags: #payments #refunds\naliases:\n  - money back\n"
        "  - #chargeback\nrefs: [src/refunds/**] # the service\ndepends_on: # none yet\n---\n"
        "# Refunds\n\nBody.\n"
    )
    doc = parse_document("domain/refunds.md", text, "domain", "h", count_tokens)
    assert (doc.title, doc.front_matter.tags) == ("Refunds", ())
    assert doc.problems == (
        "front matter 'title': '#1 rule of refunds' is a YAML comment, so nothing was read "
        'from it; quote it: "#1 rule of refunds"',
        "front matter 'tags': '#payments #refunds' is a YAML comment, so nothing was read from "
        "it; write it without '#': tags: [payments, refunds]",
        "front matter 'aliases': '#chargeback' is a YAML comment, so nothing was read from it; "
        'quote it: "#chargeback"',
    )


def test_hugo_front_matter_edges() -> None:
    """JSON closed mid-line, TOML without its closing line, a Hugo shortcode opening the file,
    and a closing line that ends the file: each as the text says, never a stray chunk."""
    cases = {
        '{\n  "title": "A"\n} trailing\n# T\n': ("T", 1),
        '+++\ntitle = "x"\n\nbody\n': ("page", 1),
        "{{< notice >}}\n# Shortcode\n": ("Shortcode", 1),
        '+++\ntitle = "Only"\n+++': ("Only", 4),
        '{\n  "title": "Only"\n}': ("Only", 4),
        "---\ntitle: Only\n---": ("Only", 4),
    }
    for text, (title, start) in cases.items():
        doc = parse_document("domain/page.md", text, "domain", "h", count_tokens)
        assert (doc.title, doc.body_start_line) == (title, start), text
        assert not any(c.content in ("+++", "---", "}") for c in doc.chunks), text
    assert split_front_matter('{\n  "title": "A"\n} trailing\n').problems == (
        "front matter's closing '}' is not alone on its line; indexed as plain Markdown",
    )


def test_json_front_matter_on_one_line_is_read() -> None:
    """A JSON object on the file's first line, as Hugo reads it too, was indexed as a section
    of its own text: its title and tags were lost without a word (only the form with '{'
    alone on its line was read)."""
    text = '{"title": "JSON doc", "tags": ["json"]}\n\n# J\n\nBody.\n'
    doc = parse_document("domain/page.md", text, "domain", "h", count_tokens)
    assert (doc.title, doc.front_matter.tags, doc.body_start_line) == ("JSON doc", ("json",), 2)
    assert [(c.heading, c.content) for c in doc.chunks] == [("J", "Body.")]
    assert doc.problems == ()
    assert split_front_matter('{"title": "A"} trailing\n').problems == (
        "front matter's closing '}' is not alone on its line; indexed as plain Markdown",
    )


def test_a_key_one_typo_from_one_briefd_reads_is_reported() -> None:
    """``titel:``, ``aliasses:`` or ``tgas:`` were ignored without a word (only another case,
    ``-`` or a singular was caught): the document's title, aliases and tags were lost. A key
    of the team's own is not a typo (``owner``, ``status``, ``tests``, ``teams``)."""
    text = (
        "---\ntitel: Misspelt\naliasses: [foo]\ntgas: [x]\ndepnds_on: [b]\nowner: team-x\n"
        "status: draft\ntests: none\nteams: [a]\n---\n# M\n\nBody.\n"
    )
    doc = parse_document("domain/m.md", text, "domain", "h", count_tokens)
    assert doc.title == "M"
    assert doc.problems == (
        "front matter key 'titel' is not read; write it 'title'",
        "front matter key 'aliasses' is not read; write it 'aliases'",
        "front matter key 'tgas' is not read; write it 'tags'",
        "front matter key 'depnds_on' is not read; write it 'depends_on'",
    )
