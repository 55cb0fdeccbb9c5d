"""The text a chunk is embedded as (R2): what a reader of the rendered page sees of it."""

from __future__ import annotations

from pathlib import Path

from briefd.api import Briefd
from briefd.markdown.passages import passage_hash, passage_text, readable
from tests.conftest import WriteFiles

NODE_STYLE = """## fs.readFile(path[, options], callback)
<!-- YAML
added: v0.1.29
changes:
  - version: v10.0.0
    description: The `callback` parameter is no longer optional.
-->

Asynchronously reads the entire contents of a file. <!-- TODO: link --> See [`fs.open()`][].

```js
[example]: not-a-definition-inside-code
<!-- a comment the example prints -->
```

[`fs.open()`]: #fsopenpath-flags-mode-callback
[Buffer]: https://nodejs.org/api/buffer.html "Buffer"
[URL]: <https://nodejs.org/api/url.html>
"""


def test_comments_and_link_definitions_are_out_of_what_is_embedded() -> None:
    """The Node.js docs open each section with a ``<!-- YAML … -->`` history and end each page
    with 5-80 link reference definitions; both were embedded as the section's text, and a
    page's last section, mostly URLs, came near almost any question (21 files: vector Recall@5
    0.725, 0.825 without them)."""
    assert readable(NODE_STYLE) == (
        "## fs.readFile(path[, options], callback)\n\n"
        "Asynchronously reads the entire contents of a file.  See [`fs.open()`][].\n\n"
        "```js\n[example]: not-a-definition-inside-code\n<!-- a comment the example prints -->\n"
        "```"
    )
    assert passage_text("File system", ["fs.readFile"], NODE_STYLE) == (
        "File system > fs.readFile\n" + readable(NODE_STYLE)
    )
    plain = "No comment here.\n\nA [link](x.md) and a ratio 3:1 stay: [not]: a definition"
    assert readable(plain) == plain
    unclosed = "Text before.\n<!-- a comment never closed\nstill in it"
    assert readable(unclosed) == "Text before."
    assert readable("a <!-- one --> b <!-- two --> c") == "a  b  c"


def test_the_section_is_kept_as_written_for_the_agent_and_bm25(
    api: Briefd, write_files: WriteFiles, tmp_path: Path
) -> None:
    """Only the embedding reads the rendered text: the chunk (what the agent is given, and
    what BM25 indexes) keeps the comment and the definitions, and its embed hash is that of
    the rendered text."""
    root = write_files({"domain/fs.md": "# File system\n\n" + NODE_STYLE})
    api.index(root)
    with api.store.read() as conn:
        content, title, embed_hash = conn.execute(
            "SELECT content, title, embed_hash FROM chunks WHERE heading LIKE 'fs.readFile%'"
        ).fetchone()
    assert "<!-- YAML" in content and "[Buffer]: https://nodejs.org/api/buffer.html" in content
    heading = "fs.readFile(path[, options], callback)"
    assert embed_hash == passage_hash(passage_text(title, [heading], content))
    assert embed_hash != passage_hash(f"{title} > {heading}\n{content}")
