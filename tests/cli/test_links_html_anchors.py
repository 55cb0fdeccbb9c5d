"""``#fragment``s that name an HTML anchor outside the headings (K5): ``<a name="old-heading">``
kept where a heading used to be, ``<a id>``, ``<h2 id>``. GitHub lands a reader on them, so
``briefd links --check`` must not fail on them, and a context's linked section is the one
holding the anchor."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import briefd
from tests.cli.test_links_cli import _indexed

_FEES = """# Fees

## Intro

First.

## Card fees

<a name="old-card-fees"></a>
Two percent of the amount.

<h2 id="custom-limits">Limits</h2>

Three a day.

```html
<a id="only-an-example"></a>
```

Inline `<a id="inline-example">` is code too. <!-- <a id="commented"></a> -->
"""


def test_a_link_to_an_html_anchor_is_no_unknown_anchor(tmp_path: Path) -> None:
    cwd, db = _indexed(
        tmp_path,
        {
            "domain/a.md": (
                "# A\n\nSee [old](fees.md#old-card-fees), [limits](fees.md#Custom-Limits),\n"
                "[[fees#old-card-fees]], [example](fees.md#only-an-example),\n"
                "[inline](fees.md#inline-example) and [comment](fees.md#commented).\n"
            ),
            "domain/fees.md": _FEES,
        },
    )
    checked = briefd("--db", db, "links", "--check", "--json", cwd=cwd)
    assert checked.returncode == 1, checked.stdout  # the three in code and a comment
    unknown = json.loads(checked.stdout)["unknown_anchors"]
    assert sorted(r["link"]["fragment"] for r in unknown) == [
        "commented",
        "inline-example",
        "only-an-example",
    ]
    context = briefd("--db", db, "context", "domain/a.md", "--mode", "manifest", cwd=cwd)
    items = json.loads(context.stdout)["items"]
    linked = [i["location"]["start_line"] for i in items if i["tier"] == "linked"]
    assert 7 in linked, items  # Card fees, which holds <a name="old-card-fees">
