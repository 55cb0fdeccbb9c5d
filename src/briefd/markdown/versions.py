"""What decides a file's chunks and its links' targets besides its bytes, as version strings:
bump one and every index built by another version parses its documents and resolves their
links again (``briefd.ingest``). Kept apart from the parser so a no-change check (``briefd
index`` with nothing to do) reads them without it."""

# Bump when the same file can come out as other chunks (parsing or chunking rules).
CHUNKER_VERSION = "18"  # 2: split fences, tables, HTML stay well-formed; 3: stubs get a chunk;
# 5: an opening line cut from its long first inner line stays with it (no empty fences);
# 6: a lone CR (old Mac line ending) ends a line, as it does for the Markdown parser;
# 7: the text is composed (NFC) before it is parsed, as queries are, and a long outline (a
# document of headings only) comes in parts within the maximum, as any section does;
# 8: a run without spaces over a part (Chinese, Japanese) is cut after a sentence or clause mark;
# 9: a heading's HTML tags are out of its text, an <a name>/<a id> in it is its anchor;
# 10: an H1 other than the front-matter title stays in heading paths (only the title is left out),
# and a data: URI's payload is out of the chunk text (``data:image/png;base64,… (60 KB elided)``)
# 11: a data: link's title holds the size (one title), a payload wrapped over lines is elided whole
# 12: an H1 that is the title but for a closing dash or the quotes around it is out of heading paths
# 13: a terminal's escape sequences are out of the text whole (not ESC alone), and a vertical
# tab or form feed reads as a space (``briefd.text.without_controls``)
# 14: a run of 1,000 or more base64 or hex characters (a pasted certificate, key or file) is out
# of the chunk text, a marker saying its size in its place (``briefd.markdown.blobs``)
# 15: C1 control characters (U+0080-U+009F) are out of the text as the C0 ones are, and a file
# that looks double-encoded (``â€™``) is reported (``briefd.text.double_encoded``)
# 16: an ``.mdx`` file's ESM (``import``/``export`` lines) and ``{/* comments */}`` are out of
# its text (``briefd.markdown.mdx``)
# 17: HTML comments and link reference definitions are out of the text a chunk is embedded as
# (``briefd.markdown.passages.readable``; each chunk's embed hash is computed when it is written)
# 18: a heading with no text under it, right over another (an overloaded signature), is in the
# next section's text (it was in no chunk)
FRONT_MATTER_VERSION = "22"  # 2: relations and always (a change re-parses every document);
# 3: an unquoted [[wikilink]] relation (YAML: a list in a list) is read as one, and a link
# to <a file name with spaces.md> is one (both: links a document's parse gives);
# 4: a plain scalar is read as written (title: No, title: 2024-01-05, tags: [1.10]), not YAML 1.1;
# 5: a reference-style link ([text][label] with [label]: path.md) is a link
# 6: a key written twice (``tags:`` twice) is reported, as its first value is lost, and a
# ``refs`` entry that is no glob (``src\\gw\\``, a lone ``!``) is reported and dropped;
# 7: a link inside an HTML comment (``<!-- [[x]] -->``, a comment block) is no link;
# 8: a wikilink whose ``|`` a table cell escapes (``[[a\\|text]]``, as Obsidian writes it) names a;
# 9: a wikilink to an attachment (``![[diagram.png]]``, ``[[spec.pdf]]``) is no link to a document;
# 10: a Markdown link whose text wraps onto the next line (hard-wrapped prose) is a link;
# 11: a key written like one briefd reads (``depends-on``, ``Tags``, ``tag``) is reported;
# 12: a Markdown link's destination may hold balanced parentheses, its title parentheses;
# 13: a Markdown link's text may hold brackets: an image that links (``[![a](b.png)](c.md)``)
# 14: a code span in a reference label or a link's text is read as written ([`x()`][] with
# [`x()`]: a.md links a.md; every such label read as blank, so all took the first one's target)
# 15: a line's links are kept in the order written (wikilinks came first, then Markdown links),
# and a value YAML reads as a comment (``tags: #payments``) is reported
# 16: a link inside an Obsidian comment (``%% [[x]] %%``, a ``%%`` block) is no link
# 17: a block under an opening '---' that YAML reads as text or a list (a rule above prose)
# is the document's text, not front matter dropped from it
# 18: a backslash-escaped bracket is text: ``\[text](x.md)``, ``[text\](x.md)`` are no links
# 19: control characters a quoted YAML string writes as escapes (``title: "\e]0;x\a"``,
# ``"\0"``) are out of the title, tags, aliases, refs and relations, as the file's own are
# 20: Hugo's front matter is read: TOML between ``+++`` lines, a JSON object opening the file
# (both were text: a section of their own, title and tags lost), and a closing line that ends
# the file without a line break is not the body's first line
# 21: Hugo's ``{{< ref "x.md" >}}`` / ``{{< relref "x" >}}`` shortcodes are links, and so is a
# Markdown link to an ``.mdx`` file
# 22: a JSON object on the file's first line is front matter (``{"title": "A"}``), and a key
# one typo from one briefd reads (``titel``, ``aliasses``) is reported
# Bump when the same links can resolve to other documents (``briefd.graph.resolve``).
LINKS_VERSION = "12"  # 2: an ambiguous name prefers the linking document's scope, then a shared;
# 3: a file name written decomposed (NFD, as macOS writes them) matches a link spelled composed;
# 4: names compare case-folded in full, Turkish İ/ı as i ([[İade]] finds iade.md);
# 5: a Markdown link with a folder is a path: its file gone, it is broken (no same-named file);
# 6: a link that climbs out of the knowledge folder (``../../CONTRIBUTING.md``) says so;
# 7: a fragment may name a heading by its ``<a name>``/``<a id>`` or its slug without HTML tags;
# 8: ``#^id`` names an Obsidian block id, and an anchor compares case-insensitively;
# 9: ``#Heading#Subheading`` (Obsidian) names the subheading inside the heading
# 10: of names that differ only in letter case, the one a link spells exactly wins; a path
# off only in letter case names the file; a path from the top of the git work tree
# (``/docs/domain/fees.md`` for knowledge in ``docs/``) reaches its document or says it leads out
# 11: a fragment may name an HTML anchor outside the headings (``<a name="old-heading">``, any
# tag's ``id``), and an unknown anchor's detail names the heading it most likely meant
# 12: a name or path without a document's extension (Hugo's ``{{< relref "fees" >}}``) names
# its page or page bundle (``fees.md``, ``fees/index.md``, ``fees/_index.md``), and an ``.mdx``
# file is a document by name (``[[guide]]`` finds ``guide.mdx``)
