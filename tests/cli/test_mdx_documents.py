"""MDX documents (K1, K4), through the real ``briefd index`` and ``briefd search`` on a git
checkout of a Docusaurus site whose ``.mdx`` pages are added to ``index.include``, as the
skipped-file report advises: their ESM and ``{/* comments */}`` are no text of the page."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli.test_cli import briefd

PAGE = """---
title: Payments guide
---
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
export const Highlight = ({children}) => (
  <span style={{color: 'red'}}>{children}</span>
);

{/* reviewers: keep this page short */}

## Retries

<Tabs>
  <TabItem value="py" label="Python">

```mdx
import Chart from './chart';
```

  </TabItem>
</Tabs>

Retries back off <Highlight>exponentially</Highlight> {/* was: linearly */} after a failure.
"""


def _hits(cwd: Path, query: str, env: dict[str, str]) -> list[dict[str, object]]:
    args = ("search", query, "--mode", "bm25", "--json", "--related", "0")
    result = briefd(*args, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    hits: list[dict[str, object]] = json.loads(result.stdout)["hits"]
    return hits


def test_an_mdx_pages_imports_exports_and_comments_are_not_its_text(tmp_path: Path) -> None:
    """Indexed as text, the imports and exports of a Docusaurus page were a section of their own
    ("import Tabs from '@theme/Tabs'; …", found by "theme children"), and a reviewer's
    ``{/* comment */}`` was searchable. Now only what the page shows is indexed (fenced code
    as written), at the file's own line numbers."""
    repo = tmp_path / "site"
    domain = repo / "docs" / "domain"
    domain.mkdir(parents=True)
    (domain / "guide.mdx").write_text(PAGE, encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    env = {"BRIEFD_INDEX__INCLUDE": "**/*.md, **/*.mdx"}
    indexed = briefd("index", "--source", str(repo / "docs"), cwd=tmp_path, env=env)
    assert indexed.returncode == 0, indexed.stderr
    assert _hits(tmp_path, "theme children span color red", env) == []
    assert _hits(tmp_path, "reviewers short", env) == []
    (hit,) = _hits(tmp_path, "retries exponentially", env)
    content = str(hit["content"])
    assert (hit["title"], hit["heading_path"], hit["start_line"]) == (
        "Payments guide",
        ["Retries"],
        12,
    )
    assert "import Chart from './chart';" in content  # code is shown: kept
    assert "linearly" not in content and "after a failure." in content
