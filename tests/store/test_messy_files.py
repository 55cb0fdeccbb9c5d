"""A messy real knowledge repository through the real ``briefd index`` process: files as
editors on other systems write them (old Mac line endings, byte order marks…) are indexed,
or skipped with a reason, and never stop the run."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from tests import zygote
from tests.sync.gitrepo import Remote

GOOD = b"# Good\n\n## Refunds\n\nThe refund window is thirty days.\n"


def briefd(
    tmp_path: Path, *args: str, timeout: float = 120, settings: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env.update(BRIEFD_DB=str(tmp_path / "index.db"), BRIEFD_EMBEDDINGS__ENABLED="false")
    env.update(settings or {})
    return zygote.run(list(args), cwd=Path.cwd(), env=env, timeout=timeout)


def source_with(tmp_path: Path, files: dict[str, bytes]) -> Path:
    root = tmp_path / "knowledge"
    for rel, data in {"domain/good.md": GOOD, **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def search(tmp_path: Path, query: str) -> list[dict[str, object]]:
    done = briefd(tmp_path, "search", query, "--mode", "bm25", "--json")
    assert done.returncode == 0, done.stderr
    hits: list[dict[str, object]] = json.loads(done.stdout)["hits"]
    return hits


def test_old_mac_line_endings_are_lines(tmp_path: Path) -> None:
    """A lone CR ends a line for the Markdown parser but not for the chunker's line split: the
    run died with an IndexError traceback and indexed nothing."""
    lone_cr = b"---\rtitle: Ledger rules\r---\r# Ledger\r\r## Alpha\r\rPosting alpha.\r"
    source = source_with(tmp_path, {"domain/ledger.md": lone_cr + b"\r## Beta\r\rPosting beta.\r"})
    done = briefd(tmp_path, "index", "--source", str(source))
    assert (done.returncode, done.stderr) == (0, "")
    hits = search(tmp_path, "posting beta")
    top = hits[0]
    assert (top["doc_path"], top["title"], top["heading_path"]) == (
        "domain/ledger.md", "Ledger rules", ["Ledger", "Beta"]
    )  # fmt: skip
    assert (top["start_line"], top["end_line"], top["content"]) == (10, 12, "Posting beta.")


def test_a_document_grown_past_the_size_limit_keeps_its_indexed_version(tmp_path: Path) -> None:
    """A log pasted into a document took it over index.max_file_bytes: the run deleted the
    document from the index, where a stray byte or a permission change keeps it served."""
    source = source_with(
        tmp_path, {"domain/chargebacks.md": b"# Chargebacks\n\nEvidence deadline.\n"}
    )
    assert briefd(tmp_path, "index", "--source", str(source)).returncode == 0
    log = b"\n```\n" + b"log line 123 " * 200_000 + b"\n```\n"
    (source / "domain/chargebacks.md").write_bytes(b"# Chargebacks\n\nEvidence deadline.\n" + log)
    done = briefd(tmp_path, "index", "--source", str(source), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["deleted"] == []
    assert report["skipped"] == [
        {
            "path": "domain/chargebacks.md",
            "reason": "larger than index.max_file_bytes (2600044 > 2000000 bytes): split it, or "
            "raise index.max_file_bytes; the version indexed before is kept",
        }
    ]
    again = json.loads(briefd(tmp_path, "index", "--source", str(source), "--json").stdout)
    assert (again["deleted"], again["documents"]) == ([], 2)  # the fast path keeps it too
    assert [h["doc_path"] for h in search(tmp_path, "evidence deadline")] == [
        "domain/chargebacks.md"
    ]
    fresh = source_with(tmp_path / "other", {"domain/huge.md": b"# Huge\n" + log})
    first = json.loads(briefd(tmp_path / "other", "index", "--source", str(fresh), "--json").stdout)
    assert first["skipped"] == [
        {
            "path": "domain/huge.md",
            "reason": "larger than index.max_file_bytes (2600017 > 2000000 bytes): split it, or "
            "raise index.max_file_bytes",
        }
    ]


def test_a_document_kept_as_indexed_stays_when_every_document_is_chunked_again(
    tmp_path: Path,
) -> None:
    """A run that chunks every document again (other chunking settings, a new briefd) read
    the files without the hashes indexed before, so a document that had become unreadable (a
    stray byte) was reported deleted and taken out of the index, where any other run keeps
    its earlier version and says so."""
    source = source_with(tmp_path, {"domain/fees.md": b"# Fees\n\nThe fee is two percent.\n"})
    assert briefd(tmp_path, "index", "--source", str(source)).returncode == 0
    (source / "domain/fees.md").write_bytes(b"# Fees\n\nThe fee is two \xff percent.\n")
    rechunk = {"BRIEFD_CHUNKING__TARGET_TOKENS": "400"}
    done = briefd(tmp_path, "index", "--source", str(source), "--json", settings=rechunk)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["rechunked"], report["deleted"], report["documents"]) == (True, [], 2)
    assert report["skipped"] == [
        {
            "path": "domain/fees.md",
            "reason": "not valid UTF-8 text: byte 0xFF at line 3, column 16 (ÿ in Windows-1252); "
            "fix that character, or save the file as UTF-8; the version indexed before is kept",
        }
    ]
    assert [h["doc_path"] for h in search(tmp_path, "fee two percent")] == ["domain/fees.md"]


def test_a_file_name_written_decomposed_is_the_name_links_spell(tmp_path: Path) -> None:
    """macOS writes ``café.md`` decomposed (NFD: ``e`` + a combining accent); links and the
    path a user types are composed (NFC). The links were broken, and ``briefd doc`` said "no
    document 'domain/café.md'; did you mean domain/café.md?"."""
    decomposed = unicodedata.normalize("NFD", "domain/café.md")
    links = "# Résumé\n\nSee [[café]], [[domain/café]] and [the menu](café.md#menu).\n"
    source = source_with(
        tmp_path,
        {
            decomposed: "# Café\n\n## Menu\n\nEspresso.\n".encode(),
            "domain/résumé.md": links.encode(),
        },
    )
    assert briefd(tmp_path, "index", "--source", str(source)).returncode == 0
    checked = briefd(tmp_path, "links", "--check")
    assert (checked.returncode, checked.stderr) == (0, ""), checked.stdout
    shown = briefd(tmp_path, "doc", "domain/café.md", "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["path"] == decomposed
    assert {b["link"]["source_path"] for b in doc["backlinks"]} == {"domain/résumé.md"}


def test_front_matter_yaml_cannot_construct_is_reported_not_fatal(tmp_path: Path) -> None:
    """PyYAML raises more than YAMLError: a date that does not exist (ValueError), a number of
    over 4,300 digits (ValueError), nesting deeper than Python recurses (RecursionError). Each
    stopped ``briefd index`` with a traceback, where bad YAML is reported and indexed without.
    Plain scalars are text (FRONT_MATTER_VERSION 4), so it takes explicit tags now."""
    source = source_with(
        tmp_path,
        {
            "domain/leap.md": b"---\nreviewed: !!timestamp 2024-02-30\n---\n# Leap\n\nLeap day review.\n",
            "domain/long.md": b"---\nid: !!int 1" + b"0" * 5000 + b"\n---\n# Long\n\nLong id.\n",
            "domain/deep.md": b"---\ntags: " + b"[" * 5000 + b"\n---\n# Deep\n\nDeep tags.\n",
        },
    )
    done = briefd(tmp_path, "index", "--source", str(source), "--json")
    assert done.returncode == 0, done.stderr
    problems = {p["path"]: p["problem"] for p in json.loads(done.stdout)["problems"]}
    assert problems == {
        "domain/leap.md": "front matter is not valid YAML (day is out of range for month); "
        "indexed without front matter",
        "domain/long.md": "front matter is not valid YAML (Exceeds the limit (4300 digits) for "
        "integer string conversion: value has 5001 digits; use sys.set_int_max_str_digits() to "
        "increase the limit); indexed without front matter",
        "domain/deep.md": "front matter is not valid YAML (nested too deeply); indexed without "
        "front matter",
    }
    assert search(tmp_path, "leap day review")[0]["doc_path"] == "domain/leap.md"


def test_a_rule_that_starts_the_file_keeps_the_text_under_it(tmp_path: Path) -> None:
    """A document that opens with a '---' rule (exported pages, a banner between two rules)
    looked like front matter; YAML reads the prose between the rules as text, not keys, and
    that prose was dropped from the index with 'indexed without front matter': the words
    under the rule found nothing, and the sections' lines were counted without them."""
    banner = b"---\n\nDeprecated, see the ledger rules instead of this page.\n\n---\n\n"
    listed = b"---\n- Settlement cutoff is 17:00 CET\n- Payouts run nightly\n---\n"
    source = source_with(
        tmp_path,
        {
            "domain/banner.md": banner + b"# Old ledger\n\n## Postings\n\nPosting rules.\n",
            "domain/listed.md": listed + b"# Payouts\n\nPayout text.\n",
        },
    )
    done = briefd(tmp_path, "index", "--source", str(source), "--json")
    assert done.returncode == 0, done.stderr
    top = search(tmp_path, "deprecated ledger rules instead")[0]
    assert (top["doc_path"], top["start_line"]) == ("domain/banner.md", 1)
    assert "Deprecated, see the ledger rules instead of this page." in str(top["content"])
    assert search(tmp_path, "settlement cutoff")[0]["doc_path"] == "domain/listed.md"
    postings = search(tmp_path, "posting rules")[0]
    assert (postings["heading"], postings["start_line"]) == ("Postings", 9)
    problems = {p["path"]: p["problem"] for p in json.loads(done.stdout)["problems"]}
    not_keys = (
        "front matter is not a mapping of keys (YAML reads {} there, no `key: value` lines); "
        "indexed as plain Markdown, those lines as text: write front matter as `key: value` "
        "lines, or put a blank line above a '---' rule that starts the file"
    )
    assert problems == {
        "domain/banner.md": not_keys.format("text"),
        "domain/listed.md": not_keys.format("a list"),
    }


def test_a_relation_list_that_holds_itself_is_reported_not_a_hang(tmp_path: Path) -> None:
    """YAML anchors can make a list that holds itself (``depends_on: &a [*a]``); reading an
    unquoted ``[[wikilink]]`` relation unwrapped one-item lists until none was left, so the
    run never ended (nor a sync, which holds the sync lock meanwhile)."""
    source = source_with(
        tmp_path,
        {
            "domain/loop.md": b"---\ntitle: Loop\ndepends_on: &a [*a]\nrelated: &b [[*b]]\n"
            b"---\n# Loop\n\nSelf referencing anchors.\n",
        },
    )
    done = briefd(tmp_path, "index", "--source", str(source), "--json", timeout=30)
    assert done.returncode == 0, done.stderr
    problems = [(p["path"], p["problem"]) for p in json.loads(done.stdout)["problems"]]
    assert problems == [
        ("domain/loop.md", "front matter 'depends_on' must be a list of strings; ignored"),
        ("domain/loop.md", "front matter 'related' must be a list of strings; ignored"),
    ]
    top = search(tmp_path, "self referencing anchors")[0]
    assert (top["doc_path"], top["title"]) == ("domain/loop.md", "Loop")


def test_a_front_matter_key_written_twice_is_reported(tmp_path: Path) -> None:
    """YAML forbids a key twice in one mapping, but its loaders keep the second silently: a
    document whose ``tags:`` were written twice lost the first ones without a word."""
    twice = b"---\ntags: [payments, refunds]\ntitle: Refund window\ntags: [legacy]\n---\n"
    source = source_with(tmp_path, {"domain/window.md": twice + b"# Window\n\nThirty days.\n"})
    done = briefd(tmp_path, "index", "--source", str(source), "--json")
    assert done.returncode == 0, done.stderr
    problems = [(p["path"], p["problem"]) for p in json.loads(done.stdout)["problems"]]
    assert problems == [
        (
            "domain/window.md",
            "front matter key 'tags' appears twice (lines 2 and 4): YAML keeps only the second; "
            "merge them into one",
        )
    ]
    shown = json.loads(briefd(tmp_path, "doc", "domain/window.md", "--json").stdout)
    assert (shown["title"], shown["front_matter"]["tags"]) == ("Refund window", ["legacy"])


def test_a_front_matter_key_written_like_one_briefd_reads_is_reported(tmp_path: Path) -> None:
    """``depends-on:``, ``Parent:`` or ``tag:`` are not the keys briefd reads (nor ``dependsOn:``),
    and were ignored without a word: the context had no structural tier, the tag filter
    missed the document. Each is named with the key to write; other keys (``owner``) are the
    team's own and stay quiet."""
    head = b"---\ndepends-on: [[b]]\nParent: b\ntag: pay\nowner: team-x\nrelated: b\n---\n"
    source = source_with(
        tmp_path, {"domain/a.md": head + b"# A\n\nText.\n", "domain/b.md": b"# B\n\nB.\n"}
    )
    done = briefd(tmp_path, "index", "--source", str(source), "--json")
    assert done.returncode == 0, done.stderr
    problems = [(p["path"], p["problem"]) for p in json.loads(done.stdout)["problems"]]
    assert problems == [
        ("domain/a.md", "front matter key 'depends-on' is not read; write it 'depends_on'"),
        ("domain/a.md", "front matter key 'Parent' is not read; write it 'parent'"),
        ("domain/a.md", "front matter key 'tag' is not read; write it 'tags'"),
    ]


def test_a_file_name_with_control_characters_is_skipped_and_shown_escaped(
    tmp_path: Path,
) -> None:
    """A name holding ESC (``\\x1b[2J`` clears a terminal) or a newline was indexed: its
    escape sequence reached the terminal of whoever ran ``briefd index`` or ``briefd docs``,
    and the agents served its path; a newline split the listing's row in two."""
    clear = "domain/notes\x1b[2J\x1b[31m.md"
    source = source_with(
        tmp_path,
        {clear: b"# Notes\n\nHidden notes.\n", "domain/two\nlines.md": b"# Two\n\nLines.\n"},
    )
    done = briefd(tmp_path, "index", "--source", str(source))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    reason = (
        "which would reach terminals and agents (and Windows checkouts cannot write); rename it"
    )
    assert done.stdout.splitlines()[2:] == [
        f"  skipped domain/notes\\x1b[2J\\x1b[31m.md: its path holds the control character "
        f"\\x1b, {reason}",
        f"  skipped domain/two\\x0alines.md: its path holds the control character \\x0a, {reason}",
    ]
    listed = json.loads(briefd(tmp_path, "docs", "--scopes", "all", "--json").stdout)
    assert [d["path"] for d in listed["documents"]] == ["domain/good.md"]


def test_a_source_folder_gone_between_runs_is_said_to_be_gone(tmp_path: Path) -> None:
    """A source folder moved, renamed or on a disk not mounted any more was reported as "not a
    directory", as if a file had been passed; the index stays as it was."""
    source = source_with(tmp_path, {})
    assert briefd(tmp_path, "index", "--source", str(source)).returncode == 0
    source.rename(tmp_path / "moved")
    done = briefd(tmp_path, "index", "--source", str(source))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: knowledge source {source} does not exist; pass --source DIR, or point "
        "'source:' in briefd.yaml (or BRIEFD_SOURCE) at the knowledge folder\n"
    )
    assert search(tmp_path, "refund window")[0]["doc_path"] == "domain/good.md"


def test_binary_and_utf16_files_say_what_they_are(tmp_path: Path) -> None:
    """An image renamed ``.md`` was told to be saved as UTF-8, as a Latin-1 file is; a UTF-16
    file (PowerShell 5's ``>``) was not said to be one. Both are skipped with what they are and
    what to do, the same in the run that does nothing (the no-change path)."""
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00"
    source = source_with(
        tmp_path,
        {
            "domain/diagram.md": png,
            "domain/windows.md": "# Windows\n\nWritten by PowerShell.\n".encode("utf-16"),
            "domain/latin1.md": "# Café\n\nCrème brûlée.\n".encode("latin-1"),
        },
    )
    expected = [
        {
            "path": "domain/diagram.md",
            "reason": "not text: it holds NUL bytes (binary data, or UTF-16/32 text); save text "
            "as UTF-8, or leave the file out with index.exclude",
        },
        {
            "path": "domain/latin1.md",
            "reason": "not valid UTF-8 text: byte 0xE9 at line 1, column 6 (é in Windows-1252); "
            "fix that character, or save the file as UTF-8",
        },
        {
            "path": "domain/windows.md",
            "reason": "UTF-16 text (it starts with a UTF-16 byte order mark), not UTF-8; save "
            "it as UTF-8",
        },
    ]
    for _ in range(2):
        done = briefd(tmp_path, "index", "--source", str(source), "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["skipped"] == expected


def test_a_refs_entry_that_is_no_glob_is_reported_not_a_traceback(tmp_path: Path) -> None:
    """``refs`` written as a Windows path (``src\\gateway\\``) or a lone ``!`` are no gitignore
    glob: every ``briefd index`` then stopped with a GitIgnorePatternError traceback (its
    drift check), as did every search or bundle given ``paths``."""
    front = b'---\ntitle: Gateway\nrefs: ["!", src\\gateway\\, src/refunds/**]\n---\n'
    source = source_with(tmp_path, {"domain/gateway.md": front + b"# Gateway\n\nRefund calls.\n"})
    done = briefd(tmp_path, "index", "--source", str(source), "--json")
    assert (done.returncode, done.stderr) == (0, "")
    advice = "ignored: separate folders with '/' (src/gateway/**), and put a glob after a '!'"
    assert json.loads(done.stdout)["problems"] == [
        {
            "path": "domain/gateway.md",
            "problem": f"front matter 'refs' entry '{entry}' is not a glob briefd can read; {advice}",
        }
        for entry in ("!", "src\\gateway\\")
    ]
    for command in ("search", "bundle"):
        found = briefd(tmp_path, command, "refund", "--paths", "src/refunds/a.py", "--json")
        assert found.returncode == 0, found.stderr
        assert "domain/gateway.md" in found.stdout


def test_a_folder_named_decomposed_is_excluded_by_its_composed_name(tmp_path: Path) -> None:
    """``index.exclude: [domain/şirket/**]`` missed the folder a macOS copy names decomposed
    (``s`` + U+0327): the documents meant to stay out were indexed and served."""
    folder = unicodedata.normalize("NFD", "domain/şirket")
    source = source_with(tmp_path, {f"{folder}/gizli.md": b"# Gizli\n\nMaa\xc5\x9flar.\n"})
    (tmp_path / "briefd.yaml").write_text(
        f"source: {source}\nindex:\n  exclude: ['domain/şirket/**']\n", encoding="utf-8"
    )
    assert briefd(tmp_path, "--config", str(tmp_path / "briefd.yaml"), "index").returncode == 0
    done = briefd(tmp_path, "--config", str(tmp_path / "briefd.yaml"), "docs", "--json")
    assert [d["path"] for d in json.loads(done.stdout)["documents"]] == ["domain/good.md"]


LFS_POINTER = """
version https://git-lfs.github.com/spec/v1
oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393
size 12345
"""
LFS_REASON = (
    "a Git LFS pointer, not the document; install git-lfs and run `git lfs pull` in the source"
)


def test_a_git_lfs_pointer_is_skipped_saying_what_to_do(tmp_path: Path) -> None:
    """A repository that keeps its Markdown in Git LFS, cloned where git-lfs is not installed,
    checks out pointer files: each was indexed as a document whose one section was the
    pointer's text, served to agents as knowledge. It is skipped with what to do, in the run
    that does nothing too; a document indexed before that turns into a pointer stays served."""
    remote = Remote(tmp_path / "git")
    lfs = "*.md filter=lfs diff=lfs merge=lfs -text\n"
    files = {".gitattributes": lfs, "domain/good.md": GOOD.decode(), "domain/fees.md": LFS_POINTER}
    remote.push(files)
    source = str(remote.work)
    for _ in range(2):
        done = briefd(tmp_path, "index", "--source", source, "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["skipped"] == [{"path": "domain/fees.md", "reason": LFS_REASON}]
        assert report["documents"] == 1
    listed = json.loads(briefd(tmp_path, "docs", "--json").stdout)["documents"]
    assert [d["path"] for d in listed] == ["domain/good.md"]
    remote.push({"domain/good.md": LFS_POINTER})
    done = briefd(tmp_path, "index", "--source", source, "--json")
    assert json.loads(done.stdout)["skipped"] == [
        {"path": "domain/fees.md", "reason": LFS_REASON},
        {"path": "domain/good.md", "reason": f"{LFS_REASON}; the version indexed before is kept"},
    ]
    assert [h["doc_path"] for h in search(tmp_path, "refund window")] == ["domain/good.md"]


def test_a_pointer_an_earlier_build_indexed_leaves_the_index(tmp_path: Path) -> None:
    """Builds without the pointer check indexed a pointer as a document: the runs after found
    its hash unchanged and kept serving it. Made here as they left it (the pointer's hash on
    the document), the run drops it instead of keeping it as a version indexed before."""
    source = source_with(tmp_path, {"domain/fees.md": b"# Fees\n\nThe fee is two percent.\n"})
    assert briefd(tmp_path, "index", "--source", str(source)).returncode == 0
    pointer = LFS_POINTER.lstrip("\n").encode()
    (source / "domain/fees.md").write_bytes(pointer)
    with sqlite3.connect(tmp_path / "index.db") as conn:
        digest = hashlib.sha256(pointer).hexdigest()
        conn.execute(
            "UPDATE documents SET content_hash = ? WHERE path = 'domain/fees.md'", [digest]
        )
    conn.close()
    done = briefd(tmp_path, "index", "--source", str(source), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["skipped"] == [{"path": "domain/fees.md", "reason": LFS_REASON}]
    assert (report["deleted"], report["documents"]) == (["domain/fees.md"], 1)


def test_names_only_case_or_accent_composition_tell_apart_are_reported(tmp_path: Path) -> None:
    """``Refunds.md`` beside ``refunds.md`` and ``café.md`` written composed beside ``café.md``
    written decomposed are two documents on Linux but one file on a macOS (and, for the case,
    Windows) checkout: the team edits one while agents are served both. Both were indexed
    without a word; both stay indexed, and each now says which other name it clashes with and
    what to do, in the run's report (what the CLI, /api/stats and the dashboard show)."""
    composed, decomposed = "domain/café.md", unicodedata.normalize("NFD", "domain/café.md")
    source = source_with(
        tmp_path,
        {
            "domain/Refunds.md": b"# Refunds (old)\n\nFourteen days.\n",
            "domain/refunds.md": b"# Refunds\n\nThirty days.\n",
            composed: "# Café\n\nEspresso.\n".encode(),
            decomposed: "# Café menu\n\nLatte.\n".encode(),
        },
    )
    done = briefd(tmp_path, "index", "--source", str(source), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["documents"] == 5
    fix = "rename one of them, or merge them into one document"
    assert [(p["path"], p["problem"]) for p in report["problems"]] == [
        (
            "domain/Refunds.md",
            "its name differs from domain/refunds.md only in letter case: macOS and Windows "
            f"checkouts hold only one of the two files, and a link by name picks one; {fix}",
        ),
        (
            decomposed,
            "its name (domain/cafe\\u0301.md, accents decomposed, as macOS writes them) is the "
            f"name of {composed} (domain/caf\\xe9.md, accents composed) written another way: "
            f"macOS checkouts hold only one of the two files, and a link by name picks one; {fix}",
        ),
        (
            composed,
            "its name (domain/caf\\xe9.md, accents composed) is the name of "
            f"{decomposed} (domain/cafe\\u0301.md, accents decomposed, as macOS writes them) "
            "written another way: macOS checkouts hold only one of the two files, and a link by "
            f"name picks one; {fix}",
        ),
        (
            "domain/refunds.md",
            "its name differs from domain/Refunds.md only in letter case: macOS and Windows "
            f"checkouts hold only one of the two files, and a link by name picks one; {fix}",
        ),
    ]
    again = briefd(tmp_path, "index", "--source", str(source))
    assert again.returncode == 0, again.stderr
    assert "warning domain/refunds.md: its name differs from domain/Refunds.md" in again.stdout


def test_a_stray_byte_is_named_with_its_line_and_column(tmp_path: Path) -> None:
    """One Windows-1252 quote pasted into a long UTF-8 document made the file 'not valid UTF-8
    text; save it as UTF-8': the author's editor showed valid UTF-8 everywhere else, and
    nothing said where the byte was. The reason names the byte, its line and column, and what
    Windows-1252 reads there, in the full run and in the run that finds nothing changed."""
    lines = [f"Line {n}: the refund window is thirty days.".encode() for n in range(1, 40)]
    lines[26] = "Über: it".encode() + b"\x92" + "s the merchant’s call.".encode()
    source = source_with(tmp_path, {"domain/long.md": b"# Long\n\n" + b"\n".join(lines)})
    said = (
        "not valid UTF-8 text: byte 0x92 at line 29, column 9 (’ in Windows-1252); fix that "
        "character, or save the file as UTF-8"
    )
    for _ in range(2):  # the second run changes nothing and says it again
        done = briefd(tmp_path, "index", "--source", str(source))
        assert done.returncode == 0, done.stderr
        assert f"  skipped domain/long.md: {said}\n" in done.stdout


def test_terminal_colours_and_page_breaks_leave_the_words_apart(tmp_path: Path) -> None:
    """A runbook holding a colour terminal's output (``cmd > notes.md``, a ``script`` log: ESC
    [31m before a word) and text pasted from Word or PowerPoint (a vertical tab for a line
    break) or with an Emacs page break (form feed): only the control character was dropped, so
    '[31mERROR[0m:' stayed in the text agents read, and the words either side of the dropped
    one ran together ('31merror', 'retriessettlement'): searching them found nothing."""
    runbook = (
        b"# Runbook\n\n## Payout job\n\n```\n\x1b[1;31mERROR\x1b[0m: payout batch rejected\n"
        b"\x1b]8;;https://ci.example/1\x1b\\build 1\x1b]8;;\x1b\\ failed\n```\n\n"
        b"Three retries\x0bsettlement follows.\n\x0c\n## Cutoff\n\nCutoff text.\n"
    )
    source = source_with(tmp_path, {"domain/runbook.md": runbook})
    done = briefd(tmp_path, "index", "--source", str(source))
    assert (done.returncode, done.stderr) == (0, "")
    assert [h["doc_path"] for h in search(tmp_path, "error")] == ["domain/runbook.md"]
    assert [h["doc_path"] for h in search(tmp_path, "settlement")] == ["domain/runbook.md"]
    hits = search(tmp_path, "error payout batch rejected")
    assert hits[0]["content"] == (
        "```\nERROR: payout batch rejected\nbuild 1 failed\n```\n\n"
        "Three retries settlement follows."
    )
    cutoff = search(tmp_path, "cutoff text")[0]
    assert (cutoff["heading"], cutoff["start_line"]) == ("Cutoff", 12)
