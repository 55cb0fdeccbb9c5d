"""Failure 7 of issue 16: a fixed folder layout. ``scopes:`` maps folder globs to scopes and
default visibility (today's layout is the default), a run that indexes nothing exits non-zero
naming the folders it looked in and the setting to change, and ``briefd docs`` lists what is
indexed per scope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.errors import ConfigError
from briefd.retrieval.search import SearchRequest
from briefd.settings import ScopeRule, Settings, load_settings, with_overrides
from briefd.sources.layout import Layout
from tests.cli.test_cli import briefd
from tests.conftest import WriteFiles

DOCS = {
    "docs/refunds.md": "# Refunds\n\nA refund is possible for 180 days after capture.\n",
    "docs/adr/0001-ledger.md": "# Ledger\n\nThe ledger is append-only.\n",
    "teams/payments/runbook.md": "# Runbook\n\nPage the payments on-call for refund failures.\n",
    "README.md": "# Knowledge\n",
}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_a_docs_folder_indexes_nothing_and_exits_non_zero(tmp_path: Path) -> None:
    source = write(tmp_path / "knowledge", DOCS)
    result = briefd("index", "--source", str(source), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"error: indexed 0 documents from {source}: briefd looked for **/*.md, **/*.markdown in "
        "domain/, conventions/, projects/*/, and the 4 files it found are outside those "
        "folders (README.md, docs/adr/0001-ledger.md, docs/refunds.md, …); map their folders "
        "to scopes with 'scopes' in briefd.yaml, e.g. scopes: [{folder: docs, default: true}]"
    )


def test_scopes_setting_maps_folders_and_default_visibility(tmp_path: Path) -> None:
    write(tmp_path / "knowledge", DOCS)
    (tmp_path / "briefd.yaml").write_text(
        "source: knowledge\nscopes:\n  - {folder: docs, default: true}\n  - {folder: 'teams/*'}\n"
    )
    indexed = briefd("index", "--json", cwd=tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    report = json.loads(indexed.stdout)
    assert (report["documents"], [s["path"] for s in report["skipped"]]) == (3, ["README.md"])
    listed = briefd("docs", "--json", cwd=tmp_path)
    assert [
        (d["scope"], d["path"], d["sections"]) for d in json.loads(listed.stdout)["documents"]
    ] == [
        ("docs", "docs/adr/0001-ledger.md", 1),
        ("docs", "docs/refunds.md", 1),
        ("teams/payments", "teams/payments/runbook.md", 1),
    ]
    table = briefd("docs", "--scopes", "teams/payments", cwd=tmp_path)
    assert "teams/payments/runbook.md" in table.stdout and "docs/refunds.md" not in table.stdout
    searched = json.loads(briefd("search", "refund", "--json", cwd=tmp_path).stdout)
    assert {h["doc_path"] for h in searched["hits"]} == {"docs/refunds.md"}  # teams/* not default
    assert briefd("docs", "--scopes", "nope", cwd=tmp_path).stderr.strip() == (
        "error: scope 'nope' does not exist; known scopes: docs, teams/payments (or 'all')"
    )


def test_today_layout_is_the_default(settings: Settings) -> None:
    from briefd.sources.layout import Layout

    layout = Layout.of(settings)
    assert settings.default_scopes == ("domain", "conventions")
    assert [layout.scope_of(p) for p in ("domain/a.md", "conventions/x/y.md")] == [
        "domain",
        "conventions",
    ]
    assert layout.scope_of("projects/pay/a/b.md") == "projects/pay"
    assert [layout.scope_of(p) for p in ("projects/a.md", "README.md", "docs/a.md")] == [
        None,
        None,
        None,
    ]


def test_rules_globs_names_and_order() -> None:
    from briefd.settings import ScopeRule
    from briefd.sources.layout import Layout, folder_matches

    layout = Layout(
        (
            ScopeRule("**/adr", scope="adr", default=True),
            ScopeRule("teams/*"),
            ScopeRule("**"),
            ScopeRule(".", scope="root"),
        )
    )
    assert layout.scope_of("a/b/adr/1.md") == "adr"
    assert layout.scope_of("adr/1.md") == "adr"
    assert layout.scope_of("teams/x/y/z.md") == "teams/x"
    assert layout.scope_of("guides/deep/a.md") == "guides"
    assert layout.scope_of("top.md") == "root"
    assert folder_matches("teams/*", "teams/x") and not folder_matches("teams/*", "teams")


def test_default_scopes_follow_the_rules_unless_named(tmp_path: Path) -> None:
    config = tmp_path / "briefd.yaml"
    config.write_text(
        "scopes:\n  - {folder: guides, default: true}\n  - {folder: 'teams/*', default: true}\n"
    )
    assert load_settings(config, env={}).default_scopes == ("guides", "teams/*")
    config.write_text("default_scopes: [guides]\nscopes:\n  - {folder: guides, default: true}\n")
    assert load_settings(config, env={}).default_scopes == ("guides",)


def test_a_default_glob_scope_is_searched_without_naming_it(
    settings: Settings, tmp_path: Path
) -> None:
    source = write(tmp_path / "kb", DOCS)
    layout = with_overrides(settings, {"scopes": [{"folder": "teams/*", "default": True}]})
    layout = with_overrides(layout, {"default_scopes": ["teams/*"]})
    with Briefd(layout, embedder=None) as api:
        api.index(source)
        hits = api.search(SearchRequest("refund failures on-call")).hits
        assert [h.doc_path for h in hits] == ["teams/payments/runbook.md"]


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ("[{scope: x}]", "scopes[0].folder: required, and missing"),
        ("[{folder: '../up'}]", "scopes[0].folder: expected a folder glob relative"),
        ("[{folder: docs, scope: all}]", "scopes[0].scope: 'all' cannot name a scope"),
        ("[{folder: .}]", "scopes[0].scope: the root folder '.' needs a scope name"),
        ("[{folder: docs, color: red}]", "unknown key 'scopes[0].color'"),
        ("[]", "scopes: expected a non-empty list of mappings"),
    ],
)
def test_bad_rules_name_the_key(tmp_path: Path, rules: str, message: str) -> None:
    config = tmp_path / "briefd.yaml"
    config.write_text(f"scopes: {rules}\n")
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace(".", r"\.")):
        load_settings(config, env={})


def test_a_rules_folder_matches_it_named_decomposed(settings: Settings, tmp_path: Path) -> None:
    """A macOS copy names ``ekipler/ödeme`` decomposed (``o`` + U+0308): its files were
    "outside every scope (genel/, ekipler/ödeme/)", the very folder the message named."""
    folder = "ekipler/o\u0308deme"
    source = write(tmp_path / "kb", {f"{folder}/ekip.md": "# Ekip\n\nİade nöbeti.\n"})
    rules = [{"folder": "genel", "default": True}, {"folder": "ekipler/ödeme", "scope": "odeme"}]
    with Briefd(with_overrides(settings, {"scopes": rules}), embedder=None) as api:
        report = api.index(source)
        assert [s.path for s in report.skipped] == []
        assert [(s.name, s.documents) for s in api.scopes()] == [("odeme", 1)]


def test_a_folder_renamed_only_in_letter_case_says_so(tmp_path: Path) -> None:
    """A knowledge repo's projects/ renamed Projects/ (scopes name projects/*): its documents
    were skipped as "outside every scope (…); add its folder to 'scopes'", though 'scopes'
    names it, and nothing said that only the letter case differs."""
    source = write(
        tmp_path / "kb",
        {
            "domain/glossary.md": "# Glossary\n\nSee [pay](../Projects/pay/notes.md).\n",
            "Projects/pay/notes.md": "# Pay\n\nRefunds are retried three times.\n",
        },
    )
    done = briefd("index", "--source", str(source), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "  skipped Projects/pay/notes.md: outside every scope (domain/, conventions/, "
        "projects/*/); not served: Projects/ differs from the scope folder projects/*/ only in "
        "letter case, and folder names must match exactly: rename it to projects/, or write "
        "the scope folder as Projects/* in briefd.yaml"
    ) in done.stdout.splitlines()
    links = briefd("links", cwd=tmp_path).stdout  # a file outside every scope still
    assert "Projects/pay/notes.md exists but is outside every scope (not indexed)" in links

    (source / "domain").rename(source / "Domain")
    alone = briefd("--db", "other.db", "index", "--source", str(source), cwd=tmp_path)
    assert alone.returncode == 1
    assert " ".join(alone.stderr.split()) == (
        f"error: indexed 0 documents from {source}: briefd looked for **/*.md, **/*.markdown "
        "in domain/, conventions/, projects/*/, and Domain/ differs from the scope folder "
        "domain/ only in letter case, and folder names must match exactly: rename it to "
        "domain/, or write the scope folder as Domain in briefd.yaml"
    )


def test_letter_case_hint_names_the_folder_that_differs() -> None:
    layout = Layout(
        (
            ScopeRule(folder="docs/**/teams/*", scope="teams"),
            ScopeRule(folder="ekipler/Ödeme", scope="odeme"),
        )
    )
    assert layout.case_only("notes/a.md") is None
    assert layout.case_only("docs/x/Teams/pay/a.md") == (
        "docs/x/Teams/pay/ differs from the scope folder docs/**/teams/*/ only in letter case, "
        "and folder names must match exactly: name that folder as it is in 'scopes' in "
        "briefd.yaml"
    )
    assert layout.case_only("ekipler/ödeme/a.md") == (
        "ekipler/ödeme/ differs from the scope folder ekipler/Ödeme/ only in letter case, and "
        "folder names must match exactly: rename it to ekipler/Ödeme/, or write the scope "
        "folder as ekipler/ödeme in briefd.yaml"
    )


def test_a_folder_name_with_a_space_at_its_end_points_at_the_scope(
    api: Briefd, write_files: WriteFiles
) -> None:
    """``domain /`` (a trailing space, as a file manager's rename leaves it) was only "outside
    every scope; add its folder to 'scopes'": the skipped file now names the scope folder it
    misses, as one in other letter case does."""
    write_files(
        {
            "domain/fees.md": "# Fees\n\nA refund fee is 2%.\n",
            "domain /refunds.md": "# Refunds\n\nRefunds take five days.\n",
            " Conventions /naming.md": "# Naming\n\nUse kebab-case.\n",
        }
    )
    report = api.index()
    start = "outside every scope (domain/, conventions/, projects/*/); not served: "
    assert [(s.path, s.reason) for s in report.skipped] == [
        (
            " Conventions /naming.md",
            f"{start}' Conventions /' differs from the scope folder conventions/ only in letter "
            "case and the spaces around a name, and folder names must match exactly: rename it "
            "to conventions/",
        ),
        (
            "domain /refunds.md",
            f"{start}'domain /' differs from the scope folder domain/ only in spaces around a "
            "name, and folder names must match exactly: rename it to domain/",
        ),
    ]


def test_a_misspelt_folder_name_points_at_the_scope(api: Briefd, write_files: WriteFiles) -> None:
    """``domian/`` or ``projets/pay/`` was only "outside every scope; add its folder to
    'scopes'": the skipped file now names the scope folder it is a typo of."""
    write_files(
        {
            "domain/fees.md": "# Fees\n\nA refund fee is 2%.\n",
            "domian/refunds.md": "# Refunds\n\nRefunds take five days.\n",
            "projets/pay/notes.md": "# Pay\n\nRetried three times.\n",
            "notes/todo.md": "# Todo\n\nWrite the runbook.\n",
        }
    )
    report = api.index()
    start = "outside every scope (domain/, conventions/, projects/*/); not served: "
    assert [(s.path, s.reason.removeprefix(start)) for s in report.skipped] == [
        (
            "domian/refunds.md",
            "domian/ is close to the scope folder domain/ (a typo?): if so, rename it to "
            "domain/; else add its folder to 'scopes' in briefd.yaml",
        ),
        ("notes/todo.md", "add its folder to 'scopes' in briefd.yaml"),
        (
            "projets/pay/notes.md",
            "projets/ is close to the scope folder projects/*/ (a typo?): if so, rename it to "
            "projects/; else add its folder to 'scopes' in briefd.yaml",
        ),
    ]


def test_a_source_one_folder_off_names_the_folder_to_give(tmp_path: Path) -> None:
    """``--source kb/domain`` (the scope folder itself) or ``--source .`` above ``kb/``: the
    run indexed nothing and advised mapping ``adr/`` or ``kb/`` as a scope of its own
    (``scopes: [{folder: adr, default: true}]``), which would have served the domain notes as
    scope "adr" or one scope "kb"; it now names the folder to give as the source."""
    write(
        tmp_path / "kb",
        {
            "domain/fees.md": "# Fees\n\nA refund fee is 2%.\n",
            "domain/adr/0001-ledger.md": "# Ledger\n\nThe ledger is append-only.\n",
            "projects/pay/notes.md": "# Pay\n\nRetried three times.\n",
        },
    )
    deep = briefd("--db", "deep.db", "index", "--source", "kb/domain", cwd=tmp_path)
    assert deep.returncode == 1
    assert " ".join(deep.stderr.split()) == (
        "error: indexed 0 documents from kb/domain: briefd looked for **/*.md, **/*.markdown "
        "in domain/, conventions/, projects/*/, and the 2 files it found are outside those "
        "folders (adr/0001-ledger.md, fees.md); kb/domain is itself the folder domain/ of the "
        "scopes: give the folder that holds it (kb) as the source (--source, or source: in "
        "briefd.yaml)"
    )
    high = briefd("--db", "high.db", "index", "--source", ".", cwd=tmp_path)
    assert high.returncode == 1
    assert " ".join(high.stderr.split()).endswith(
        "and the 3 files it found are outside those folders (kb/domain/adr/0001-ledger.md, "
        "kb/domain/fees.md, kb/projects/pay/notes.md); the folders of the scopes are inside "
        "kb/: give it (kb) as the source (--source, or source: in briefd.yaml)"
    )


def test_a_misplaced_source_is_told_only_by_folders_written_out(settings: Settings) -> None:
    """A source kept in a folder a glob rule could name (``~/projects/kb`` for
    ``projects/*``) is not taken for a scope folder; a git URL's clone, which has no other
    folder to give, is told to write the scope folders with the one they are in."""
    from briefd.sources.layout import misplaced_source

    assert misplaced_source("kb/projects", ["pay/notes.md"], settings) == (
        "kb/projects is itself the folder projects/ of the scopes: give the folder that holds "
        "it (kb) as the source (--source, or source: in briefd.yaml)"
    )
    assert "give the folder that holds it (kb) as the source" in str(
        misplaced_source("sub/../kb/domain", ["fees.md"], settings)  # as a settings file in
    )  # sub/ names its source, from the working folder: kb/, not sub/../kb
    assert misplaced_source("/home/me/projects/kb", ["docs/a.md"], settings) is None
    assert misplaced_source("/srv/kb", ["docs/a.md", "README.md"], settings) is None
    cloned = with_overrides(settings, {"source": "https://example.com/kb.git"})
    assert misplaced_source("/data/repo", ["knowledge/domain/a.md"], cloned) == (
        "the folders of the scopes are inside knowledge/ of the repository: write them with "
        "knowledge/ in front in 'scopes' in briefd.yaml, e.g. scopes: [{folder: "
        "knowledge/domain, scope: domain, default: true}]"
    )
