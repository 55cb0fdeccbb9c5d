"""A knowledge folder inside a code repository (``docs/``), read in place: what git ignores
there from outside the folder — the ``.gitignore`` files above it and the repository's
``info/exclude`` — is not indexed, as what the folder's own ``.gitignore`` files ignore is
not (K3). Real ``briefd index`` processes over a real git repository."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests import zygote
from tests.sync.gitrepo import git

DRAFT = "Unannounced pricing plan for enterprise tier"


def briefd(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """A real ``briefd`` process in ``tmp_path``, its index there, no embeddings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_DB=str(tmp_path / "index.db"), BRIEFD_EMBEDDINGS__ENABLED="false")
    return zygote.run(list(args), cwd=tmp_path, env=env, timeout=timeout)


def repository(tmp_path: Path, files: dict[str, str]) -> Path:
    """A git repository of ``files`` (``.git/info/exclude`` among them), committed."""
    top = tmp_path / "app"
    top.mkdir()
    git(top, "init", "--quiet", "--initial-branch=main")
    for rel, text in files.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text, encoding="utf-8")
    git(top, "add", "-A")
    git(top, "commit", "--quiet", "-m", "app and its docs")
    return top


def indexed(tmp_path: Path, source: Path) -> list[str]:
    done = briefd(tmp_path, "index", "--source", str(source), "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(briefd(tmp_path, "docs", "--scopes", "all", "--json").stdout)
    return sorted(d["path"] for d in listed["documents"])


def test_a_knowledge_folder_follows_what_git_ignores_above_it(tmp_path: Path) -> None:
    """Only the ``.gitignore`` files inside the source were read: a team's ``docs/`` in its
    code repository had the drafts and local notes the repository ignores indexed and served."""
    top = repository(
        tmp_path,
        {
            ".gitignore": "docs/domain/drafts/\n*.local.md\n",
            "src/app.py": "print('app')\n",
            "docs/domain/refunds.md": "# Refunds\n\nThe refund window is thirty days.\n",
            "docs/domain/drafts/pricing.md": f"# Pricing\n\n{DRAFT}.\n",
            "docs/domain/notes.local.md": f"# Notes\n\n{DRAFT}, my notes.\n",
            "docs/domain/private.md": f"# Private\n\n{DRAFT}, private.\n",
            ".git/info/exclude": "private.md\n",
        },
    )
    assert git(top, "status", "--porcelain", "--ignored").splitlines() == [
        "!! docs/domain/drafts/",
        "!! docs/domain/notes.local.md",
        "!! docs/domain/private.md",
    ]
    assert indexed(tmp_path, top / "docs") == ["domain/refunds.md"]
    found = briefd(tmp_path, "search", DRAFT, "--mode", "bm25", "--scopes", "all", "--json")
    assert json.loads(found.stdout)["hits"] == []


def test_a_source_folder_the_repository_ignores_is_still_indexed(tmp_path: Path) -> None:
    """Ignoring the source folder itself (a team's local knowledge kept out of the code
    repository) is no reason to index nothing: it was chosen as the source on purpose; what
    is ignored inside it still is."""
    top = repository(
        tmp_path,
        {
            ".gitignore": "knowledge/\n*.local.md\n",
            "knowledge/domain/refunds.md": "# Refunds\n\nThe refund window is thirty days.\n",
            "knowledge/domain/.gitignore": "scratch.md\n",
            "knowledge/domain/scratch.md": f"# Scratch\n\n{DRAFT}.\n",
        },
    )
    assert indexed(tmp_path, top / "knowledge") == ["domain/refunds.md"]


def test_a_gitignore_saved_with_a_byte_order_mark_is_followed(tmp_path: Path) -> None:
    """Editors on Windows save ``.gitignore`` with a UTF-8 byte order mark (and CRLF); git
    skips the mark, briefd read it as part of the first pattern, which then matched nothing,
    and indexed and served the file git ignores."""
    top = repository(
        tmp_path,
        {
            ".gitignore": "\ufeffsecrets.md\r\n*.local.md\r\n",
            "domain/refunds.md": "# Refunds\n\nThe refund window is thirty days.\n",
            "domain/secrets.md": f"# Secrets\n\n{DRAFT}.\n",
            "domain/notes.local.md": f"# Notes\n\n{DRAFT}, my notes.\n",
        },
    )
    assert git(top, "status", "--porcelain", "--ignored").splitlines() == [
        "!! domain/notes.local.md",
        "!! domain/secrets.md",
    ]
    assert indexed(tmp_path, top) == ["domain/refunds.md"]


def test_a_nearer_gitignore_takes_back_what_one_above_ignores(tmp_path: Path) -> None:
    """git lets the nearest ``.gitignore`` with a matching pattern decide, so ``!keep.local.md``
    in ``domain/.gitignore`` keeps a file that ``*.local.md`` at the top ignores; briefd
    ignored a file when any level matched it, and left out, without a word, documents git
    tracks (a clone has them)."""
    top = repository(
        tmp_path,
        {
            ".gitignore": "*.local.md\n",
            "domain/.gitignore": "!keep.local.md\n",
            "domain/keep.local.md": "# Keep\n\nKept on purpose.\n",
            "domain/sub/keep.local.md": "# Kept too\n\nKept below.\n",
            "domain/sub/.gitignore": "keep.local.md\n",
            "domain/drop.local.md": f"# Drop\n\n{DRAFT}.\n",
            "domain/refunds.md": "# Refunds\n\nThe refund window is thirty days.\n",
        },
    )
    tracked = git(top, "ls-files").splitlines()
    assert [t for t in tracked if t.endswith(".local.md")] == ["domain/keep.local.md"]
    assert indexed(tmp_path, top) == ["domain/keep.local.md", "domain/refunds.md"]


def test_a_gitignore_line_that_is_no_pattern_is_skipped_as_git_skips_it(tmp_path: Path) -> None:
    """git skips a ``.gitignore`` line that is no pattern (a lone ``!``, a Windows folder
    ending in ``\\``) and follows the others; every ``briefd index`` stopped with a
    GitIgnorePatternError traceback."""
    top = repository(
        tmp_path,
        {
            ".gitignore": "secrets.md\n!\nbuild\\\n",
            "domain/refunds.md": "# Refunds\n\nThe refund window is thirty days.\n",
            "domain/secrets.md": f"# Secrets\n\n{DRAFT}.\n",
        },
    )
    assert git(top, "status", "--porcelain", "--ignored").splitlines() == ["!! domain/secrets.md"]
    assert indexed(tmp_path, top) == ["domain/refunds.md"]


def test_a_committed_file_a_gitignore_matches_is_reported_not_left_out_silently(
    tmp_path: Path,
) -> None:
    """A document committed with ``git add -f`` (generated reference notes), or before the
    pattern was added to ``.gitignore``: in the repository, on the forge, in every clone, and
    left out of the index without a word, since git ignores only what it does not track."""
    top = repository(
        tmp_path,
        {
            ".gitignore": "domain/generated/\n*.draft.md\n",
            "domain/refunds.md": "# Refunds\n\nThe refund window is thirty days.\n",
        },
    )
    files = {
        "domain/generated/limits.md": "# Limits\n\nThe rate limit is 40 per second.\n",
        "domain/pricing.draft.md": f"# Pricing\n\n{DRAFT}.\n",
        "domain/local.draft.md": "# Mine\n\nNever committed.\n",
    }
    for rel, text in files.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text, encoding="utf-8")
    git(top, "add", "-f", "domain/generated/limits.md", "domain/pricing.draft.md")
    git(top, "commit", "--quiet", "-m", "generated limits, a draft")
    done = briefd(tmp_path, "index", "--source", str(top), "--json")
    assert done.returncode == 0, done.stderr
    skipped = {s["path"]: s["reason"] for s in json.loads(done.stdout)["skipped"]}
    assert sorted(skipped) == ["domain/generated/limits.md", "domain/pricing.draft.md"]
    assert skipped["domain/pricing.draft.md"].startswith(
        "committed to the repository, but a .gitignore pattern matches it (or its folder)"
    )
    assert indexed(tmp_path, top) == ["domain/refunds.md"]
