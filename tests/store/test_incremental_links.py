"""An index run resolves only the links its changes can resolve otherwise (K5, O4), and
they come out as resolving every link would: compared over a real knowledge folder in a git
work tree after rounds of edits, heading changes, additions, deletions and renames."""

from __future__ import annotations

import random
import sqlite3
import subprocess
from pathlib import Path

from briefd.api import Briefd
from briefd.settings import Settings
from briefd.store import documents as docs_table
from briefd.store.links import PREFIX, LinkContext, resolve_all_links
from tests.conftest import WriteFiles

NAMES = (
    "retry-policy",
    "Retry Policy",
    "refunds",
    "Refunds",
    "café",
    "cafe\u0301",
    "İade",
    "iade",
    "overview",
    "fees.v2",
    "limits",
    "notes",
)
FOLDERS = ("domain", "domain/sub", "conventions", "projects/alpha", "projects/beta", "misc")
SNAPSHOT = (
    "SELECT source_path, line, kind, target, fragment, target_path, status, detail "
    "FROM links ORDER BY source_path, line, target, fragment"
)


def _snapshot(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    return [tuple(row) for row in conn.execute(SNAPSHOT)]


def _fully_resolved(api: Briefd, settings: Settings) -> list[tuple[object, ...]]:
    """The links as resolving every one against the same index gives them."""
    with api.store.write() as conn:
        context = LinkContext(
            docs_table.unscoped_files(conn),
            settings.default_scopes,
            docs_table.meta(conn, PREFIX) or "",
            docs_table.skipped_files(conn),
        )
        resolve_all_links(conn, context)
        return _snapshot(conn)


def _document(rng: random.Random, paths: list[str], own: str) -> str:
    """A document with random headings, anchors, block ids and links of every form."""
    lines = ["---", f"depends_on: [{_stem(rng.choice(paths))}]", "---", f"# {own}", ""]
    for _ in range(3):
        k = rng.randrange(4)
        lines += [rng.choice([f"## Section {k}", f"## Old {k} {{#anchor-{k}}}"]), ""]
        lines += [f'<a name="old-{k}"></a>', f"Text {k} ^blk{k}", ""]
        for _ in range(4):
            lines.append(_link(rng, rng.choice(paths), own) + "\n")
    return "\n".join(lines)


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _link(rng: random.Random, target: str, own: str) -> str:
    stem, k = _stem(target), rng.randrange(4)
    up = "../" * own.count("/")
    forms = [
        f"[[{stem}]]",
        f"[[{stem.upper()}]]",
        f"[[{stem}#Section {k}]]",
        f"[[{stem}#^blk{k}]]",
        f"[[{target.removesuffix('.md')}]]",
        f"[t]({up}{target})",
        f"[t]({up}{target}#section-{k})",
        f"[t]({up}{target}#old-{k})",
        f"[t]({up}{target.upper()})",
        f"[t](/{target})",
        f"[t](/knowledge/{target}#anchor-{k})",
        "[t](/README.md)",
        f"[t]({up}../{stem}.md)",
        f"[t](#section-{k})",
        "[t](../)",
        f"[[missing-{k}]]",
        f"[[{rng.choice(NAMES)}]]",
    ]
    return rng.choice(forms)


def _round(rng: random.Random, root: Path, paths: list[str], write_files: WriteFiles) -> None:
    """Edit, add, delete and rename a few documents."""
    for _ in range(rng.randrange(1, 4)):
        action = rng.choice(("edit", "add", "delete", "rename", "headings"))
        path = rng.choice(paths)
        if action == "add" or len(paths) < 6:
            new = f"{rng.choice(FOLDERS)}/{rng.choice(NAMES)}.md"
            if new not in paths:
                paths.append(new)
                write_files({new: _document(rng, paths, new)})
        elif action == "delete":
            paths.remove(path)
            (root / path).unlink()
        elif action == "rename":
            new = f"{rng.choice(FOLDERS)}/{rng.choice(NAMES)}.md"
            if new not in paths:
                (root / new).parent.mkdir(parents=True, exist_ok=True)
                (root / path).rename(root / new)
                paths[paths.index(path)] = new
        elif action == "headings":
            text = (root / path).read_text(encoding="utf-8")
            write_files({path: text.replace("Section", "Part").replace("{#anchor-", "{#a-")})
        else:
            write_files({path: _document(rng, paths, path)})


def test_incremental_resolution_equals_resolving_every_link(
    tmp_path: Path, settings: Settings, write_files: WriteFiles
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # links from its top
    rng = random.Random(20)
    paths = sorted({f"{rng.choice(FOLDERS)}/{rng.choice(NAMES)}.md" for _ in range(40)})
    root = write_files({p: _document(rng, paths, p) for p in paths})
    (tmp_path / "README.md").write_text("# Code\n")
    with Briefd(settings, embedder=None) as api:
        api.index()
        assert docs_table.meta(api.store.conn, PREFIX) == "knowledge/"
        partial = 0  # runs that resolved only some links: the files outside scopes stayed
        for number in range(12):
            unscoped = docs_table.unscoped_files(api.store.conn)
            _round(rng, root, paths, write_files)
            api.index()
            partial += unscoped == docs_table.unscoped_files(api.store.conn)
            incremental = _snapshot(api.store.conn)
            assert incremental == _fully_resolved(api, settings), number
        statuses = {row[6] for row in incremental}
    assert statuses == {"ok", "broken", "ambiguous", "bad-anchor"}
    assert partial >= 6


def test_an_edit_resolves_the_links_it_can_change_and_leaves_the_rest(
    api: Briefd, write_files: WriteFiles
) -> None:
    write_files(
        {
            "domain/fees.md": "# Fees\n\n## Card fees\n\nSee [[refunds]].\n",
            "domain/refunds.md": "# Refunds\n\n## Window\n\nFees: [f](fees.md#card-fees).\n",
            "domain/limits.md": "# Limits\n\nSee [[refunds#Window]] and [[fees#Card fees]].\n",
        }
    )
    api.index()
    with api.store.write() as conn:  # a mark no resolution writes
        conn.execute("UPDATE links SET detail = 'untouched' WHERE status = 'ok'")
    write_files({"domain/fees.md": "# Fees\n\n## Scheme fees\n\nSee [[refunds]].\n"})
    api.index()
    rows = api.store.conn.execute(
        "SELECT source_path, target, fragment, status, detail FROM links ORDER BY source_path, line, id"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        ("domain/fees.md", "refunds", None, "ok", ""),  # the edited document's own link
        (
            "domain/limits.md",  # to the edited document: its heading is gone
            "refunds",
            "Window",
            "ok",
            "untouched",
        ),
        (
            "domain/limits.md",
            "fees",
            "Card fees",
            "bad-anchor",
            "domain/fees.md has no heading or anchor '#Card fees'",
        ),
        (
            "domain/refunds.md",
            "fees.md",
            "card-fees",
            "bad-anchor",
            "domain/fees.md has no heading or anchor '#card-fees'",
        ),
    ]


def test_a_first_document_in_a_top_folder_changes_links_from_the_work_trees_top(
    tmp_path: Path, api: Briefd, write_files: WriteFiles
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write_files({"domain/fees.md": "# Fees\n\nStyle: [s](/conventions/style.md).\n"})
    api.index()
    detail = "SELECT detail FROM links WHERE target = '/conventions/style.md'"
    assert "leads out of the knowledge folder" in api.store.conn.execute(detail).fetchone()[0]
    write_files({"conventions/naming.md": "# Naming\n"})  # no link names it
    api.index()
    found = api.store.conn.execute(detail).fetchone()[0]
    assert found == "no document matches '/conventions/style.md'"
