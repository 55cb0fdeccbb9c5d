from __future__ import annotations

from briefd.markdown.document import parse_document
from briefd.tokens import count_tokens

TEXT = """# Title

See [[retry-policy]], [[idempotency|keys]], [[refunds#Partial refunds]] and
[[settlement#cutoff|the cutoff]] or [outbox](../domain/adr/0002-outbox.md#why).

## Code

`[[not-a-link]]` and [site](https://example.org/x.md) and ![img](pic.md)

```
[[also-not]] [x](y.md)
```

Same page [[#Code]] and [up](#title).
"""


def test_four_wikilink_shapes_and_markdown_links_with_provenance() -> None:
    doc = parse_document("projects/a/notes.md", TEXT, "projects/a", "h", count_tokens)
    got = [(ln.kind, ln.target, ln.fragment, ln.display, ln.section, ln.line) for ln in doc.links]
    assert got == [
        ("wiki", "retry-policy", None, None, "Title", 3),
        ("wiki", "idempotency", None, "keys", "Title", 3),
        ("wiki", "refunds", "Partial refunds", None, "Title", 3),
        ("wiki", "settlement", "cutoff", "the cutoff", "Title", 4),
        ("markdown", "../domain/adr/0002-outbox.md", "why", "outbox", "Title", 4),
        ("wiki", "", "Code", None, "Code", 14),
        ("markdown", "", "title", "up", "Code", 14),
    ]
