"""T1 with real git: ``propose_update`` leaves a branch with exactly one commit whose diff is
the requested change, in the bare remote, without touching the serving checkout or index."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from mcp import Client

from briefd.api import Briefd
from briefd.errors import ConfigError, ProposalConflictError, ProposalError
from briefd.proposals import ProposalRequest
from briefd.retrieval.search import SearchRequest
from briefd.service import create_app
from briefd.service.app import error_name, status_of
from briefd.settings import with_overrides
from briefd.sources.knowledge import checkout_dir
from tests.service.conftest import service_config
from tests.service.live import mcp_session, serving
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import GLOSSARY, RETRY, Remote, git
from tests.sync.httpgit import AuthenticatedGit

NEW_RETRY = RETRY.replace("three times", "four times").lstrip("\n")


def serving_state(api: Briefd) -> tuple[str, str, str, str, str]:
    clone = checkout_dir(api.settings)
    return (
        git(clone, "rev-parse", "HEAD"),
        git(clone, "status", "--porcelain"),
        git(clone, "for-each-ref", "--format=%(refname) %(objectname)"),
        (clone / "domain" / "retry.md").read_text(),
        str(api.last_report()["fingerprint"]),
    )


def test_branch_with_exactly_one_commit_and_serving_untouched(
    tmp_path: Path, remote: Remote
) -> None:
    settings = with_overrides(
        git_settings(tmp_path, remote.url),
        {"proposals.author_name": "Knowledge Bot", "proposals.author_email": "kb@acme.test"},
    )
    with Briefd(settings, embedder=None) as api:
        api.sync()
        before = serving_state(api)

        made = api.propose_update(
            ProposalRequest(
                "domain/retry.md",
                "Retry soft declines four times\n\nOps asked.",
                NEW_RETRY,
                client="claude-code",
            )
        )

        assert serving_state(api) == before
        hits = api.search(SearchRequest("soft decline retried", mode="bm25")).hits
        assert "three times" in hits[0].content
        assert api.proposals() == [made]

    main, branch = remote.head("main"), made.branch
    assert branch == f"briefd/proposal-{made.id}" and len(made.id) == 8
    assert git(remote.bare, "rev-list", f"main..{branch}").splitlines() == [made.commit_hash]
    assert git(remote.bare, "rev-parse", f"{branch}^") == main == made.base_commit
    assert git(remote.bare, "diff", "--name-status", main, branch) == "M\tdomain/retry.md"
    assert git(remote.bare, "show", f"{branch}:domain/retry.md") + "\n" == NEW_RETRY
    assert git(remote.bare, "log", "-1", "--format=%an <%ae>|%cn|%B", branch) == (
        "Knowledge Bot <kb@acme.test>|Knowledge Bot|Retry soft declines four times\n\nOps asked."
    )
    assert made.status == "pushed" and made.pr_url is None
    assert made.client == "claude-code" and made.doc_path == "domain/retry.md"


def test_new_document_in_a_project_scope(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    made = git_api.propose_update(
        ProposalRequest(
            "./projects/alpha/onboarding.md",
            "Add onboarding notes",
            "# Onboarding\n\nAsk for a card.\n",
            scopes=("projects/alpha",),
        )
    )
    assert made.doc_path == "projects/alpha/onboarding.md"
    assert git(remote.bare, "diff", "--name-status", "main", made.branch) == (
        "A\tprojects/alpha/onboarding.md"
    )


@pytest.mark.parametrize(
    "path, scopes, message",
    [
        ("../etc/passwd.md", None, "doc_path '../etc/passwd.md' may not contain '..'"),
        ("domain/../x.md", None, "doc_path 'domain/../x.md' may not contain '..'"),
        ("/domain/x.md", None, "doc_path '/domain/x.md' must be a relative path"),
        ("domain\\x.md", None, "must be a relative path with forward slashes"),
        ("domain/.git/config.md", None, "may not contain '..', '.', empty or hidden"),
        ("domain/retry.txt", None, "doc_path 'domain/retry.txt' is not a Markdown file"),
        (
            "domain/Upper.MD",
            None,
            "doc_path 'domain/Upper.MD' would not be indexed (index.include: **/*.md, "
            "**/*.markdown; index.exclude: none); use a path the index reads",
        ),
        ("README.md", None, "doc_path 'README.md' is outside every scope"),
        (
            "projects/alpha/a.md",
            None,
            "doc_path 'projects/alpha/a.md' is in scope 'projects/alpha', which this request "
            "may not see (scopes: domain, conventions); add 'projects/alpha' to scopes",
        ),
        ("", None, "doc_path is empty"),
        (
            "domain/tab\there.md",
            None,
            "doc_path 'domain/tab\\x09here.md' contains the control character \\x09, which "
            "checkouts on Windows cannot write in a file name; use printable characters",
        ),
        ("domain/bell\x07.md", None, "doc_path 'domain/bell\\x07.md' contains"),
        ("domain/del\x7f.md", None, "the control character \\x7f"),
        ("domain/nul\0.md", None, "the control character \\x00"),
        ("domain/new\nline.md", None, "the control character \\x0a"),
        # characters that do not show: the path would not read as what it is in a review
        (
            "domain/fee\x85s.md",
            None,
            "doc_path 'domain/fee\\x85s.md' contains \\x85 (a control character), which does "
            "not show or turns the text around, so the path would not read as what it is in a "
            "review or a listing; use visible characters",
        ),
        ("domain/csi\x9b.md", None, "contains \\x9b (a control character)"),
        ("domain/\u202edm.exe.md", None, "contains \\u202e (RIGHT-TO-LEFT OVERRIDE), which"),
        ("domain/\u2066iso.md", None, "contains \\u2066 (LEFT-TO-RIGHT ISOLATE)"),
        ("domain/re\u200btry.md", None, "doc_path 'domain/re\\u200btry.md' contains \\u200b"),
        ("domain/re\u200dtry.md", None, "contains \\u200d (ZERO WIDTH JOINER)"),
        ("domain/\ufeffretry.md", None, "contains \\ufeff (ZERO WIDTH NO-BREAK SPACE)"),
        ("domain/soft\xadhyphen.md", None, "contains \\xad (SOFT HYPHEN)"),
        ("domain/a\u2028b.md", None, "contains \\u2028 (LINE SEPARATOR)"),
        (
            "domain/lone\ud800.md",
            None,
            "contains \\ud800 (a lone surrogate), which is no character: UTF-8 cannot hold it",
        ),
        (
            f"domain/{'a' * 253}.md",
            None,
            f"doc_path segment '{'a' * 40}…' is 256 bytes in UTF-8; a file name may be at "
            "most 255, so no checkout could write it: shorten it",
        ),
        (f"domain/{'é' * 127}.md", None, "is 257 bytes in UTF-8"),  # 130 characters
        (f"{'d' * 256}/x.md", None, "is 256 bytes in UTF-8"),
        # merged, each stops every checkout on Windows with git's "invalid path"
        (
            "domain/retry*.md",
            None,
            "doc_path 'domain/retry*.md' contains '*', a character checkouts on Windows cannot "
            "write in a file name; use another name",
        ),
        ("domain/a:b.md", None, "contains ':', a character"),
        ('domain/"q".md', None, "contains '\"', a character"),
        (
            "domain/CON.md",
            None,
            "doc_path 'domain/CON.md' uses 'CON', a device name on Windows, which checkouts on "
            "Windows cannot write in a file name; use another name",
        ),
        ("domain/nul/x.md", None, "uses 'nul', a device name on Windows"),
        (
            "domain/drafts./x.md",
            None,
            "doc_path 'domain/drafts./x.md' has a folder name ending in a dot or a space "
            "('drafts.'), which checkouts on Windows cannot write in a file name",
        ),
        ("domain/x.md.", None, "has a file name ending in a dot or a space ('x.md.')"),
    ],
)
def test_paths_are_validated_before_git_is_touched(
    git_api: Briefd, remote: Remote, path: str, scopes: tuple[str, ...] | None, message: str
) -> None:
    git_api.sync()
    with pytest.raises(ProposalError, match=_literal(message)):
        git_api.propose_update(ProposalRequest(path, "change", "# Text\n", scopes=scopes))
    assert "proposal" not in git(remote.bare, "branch", "--list")
    assert git_api.proposals() == []


def test_a_zero_width_non_joiner_inside_a_word_is_spelling_and_passes(
    git_api: Briefd, remote: Remote
) -> None:
    """Persian and Indic names write U+200C/U+200D between letters: that is no hidden
    character (a joiner between ASCII letters, or alone, is refused above)."""
    git_api.sync()
    name = "domain/\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md"  # می‌خواهم
    made = git_api.propose_update(ProposalRequest(name, "Persian notes", "# Notes\n"))
    assert made.doc_path == name
    assert git(remote.bare, "diff", "--name-status", "-z", "main", made.branch) == f"A\0{name}\0"


def test_a_file_name_of_255_bytes_is_proposed_and_checks_out(
    git_api: Briefd, remote: Remote, tmp_path: Path
) -> None:
    """The longest name a file system takes passes (the limit is bytes, not characters)."""
    git_api.sync()
    name = "é" * 123 + "-rules.md"  # 132 characters, 255 bytes
    assert len(name.encode("utf-8")) == 255
    made = git_api.propose_update(ProposalRequest(f"domain/{name}", "long", "# Long\n"))
    team = tmp_path / "team"
    git(tmp_path, "clone", "--quiet", "--branch", made.branch, str(remote.bare), str(team))
    assert (team / "domain" / name).read_text() == "# Long\n"


@pytest.mark.parametrize(
    "description, content, message",
    [
        ("  ", "# Text\n", "change_description is empty; say what changes and why"),
        ("why", " \n", "new_content is empty; send the full new text of the document"),
        ("why", "a\0b", "new_content contains a NUL character"),
        (
            "Fix \x1b]0;pwned\x07 the title",  # would retitle the terminal of `briefd proposals`
            "# Text\n",
            "change_description contains the control character \\x1b; send plain text (tabs "
            "and line breaks are fine)",
        ),
        ("ok\rall reviewed", "# Text\n", "the control character \\x0d"),
        ("red \x9b31m", "# Text\n", "the control character \\x9b"),
        (
            # "Trojan Source": shown as 'Raise the limit to 100' … in a review
            "Raise the limit to \u202e001\u202c and keep the audit log",
            "# Text\n",
            "change_description contains \\u202e (RIGHT-TO-LEFT OVERRIDE), which does not show "
            "or turns the text around, so the commit message and pull request would not read as "
            "what they say in a review; send plain text (right-to-left letters, and a joiner "
            "inside a word or an emoji, are fine)",
        ),
        ("Fix \u2067the\u2069 typo", "# Text\n", "contains \\u2067 (RIGHT-TO-LEFT ISOLATE)"),
        ("Fix \u202athe\u202c typo", "# Text\n", "contains \\u202a (LEFT-TO-RIGHT EMBEDDING)"),
        ("ad\u200bmin only", "# Text\n", "contains \\u200b (ZERO WIDTH SPACE)"),
        ("ad\u200dmin only", "# Text\n", "contains \\u200d (ZERO WIDTH JOINER)"),
        ("Fix typo\u2060", "# Text\n", "contains \\u2060 (WORD JOINER)"),
        ("Fix \ufefftypo", "# Text\n", "contains \\ufeff (ZERO WIDTH NO-BREAK SPACE)"),
        ("Fix\u2028typo", "# Text\n", "contains \\u2028 (LINE SEPARATOR)"),
        (
            "ignore\U000e0041\U000e0042",
            "# Text\n",
            "contains \\U000e0041 (TAG LATIN CAPITAL LETTER A)",
        ),
    ],
)
def test_description_and_content_are_validated(
    git_api: Briefd, description: str, content: str, message: str
) -> None:
    git_api.sync()
    with pytest.raises(ProposalError, match=_literal(message)):
        git_api.propose_update(ProposalRequest("domain/retry.md", description, content))


def test_right_to_left_text_and_joined_words_and_emoji_pass_in_a_description(
    git_api: Briefd, remote: Remote
) -> None:
    """What written text needs passes as sent: Arabic and Hebrew with their direction marks,
    a zero-width non-joiner inside a Persian word, emoji ZWJ sequences (with a skin tone and a
    variation selector) and a subdivision flag's tags."""
    git_api.sync()
    description = (
        "\u062a\u062d\u062f\u064a\u062b \u05e2\u05d3\u05db\u05d5\u05df\u200f (v2)\n\n"
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u061c"
        "\U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f44b\U0001f3fd\u200d\u2642\ufe0f "
        "\u2764\ufe0f\u200d\U0001f525 "
        "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    )
    made = git_api.propose_update(ProposalRequest("domain/retry.md", description, "# Retry\n"))
    assert git(remote.bare, "log", "-1", "--format=%B", made.branch) == description


@pytest.mark.parametrize("path", ["domain/scratch/fees.md", "domain/fees.draft.md"])
def test_a_path_a_gitignore_hides_from_the_index_is_refused(
    git_api: Briefd, remote: Remote, path: str
) -> None:
    """Merged, such a document was never indexed: the sync after the merge added nothing."""
    remote.push({".gitignore": "*.draft.md\n", "domain/.gitignore": "scratch/\n"})
    git_api.sync()
    with pytest.raises(ProposalError) as refused:
        git_api.propose_update(ProposalRequest(path, "Add fees", "# Fees\n\nWaived.\n"))
    assert str(refused.value) == (
        f"doc_path '{path}' is ignored by a .gitignore of the knowledge repository, so the "
        "index would never read it; use another path (or change that .gitignore first)"
    )
    assert git(remote.bare, "branch", "--list") == "* main"
    assert git_api.proposals() == []


def test_a_path_through_a_symbolic_link_is_refused_with_its_reason(
    git_api: Briefd, remote: Remote
) -> None:
    """A link in the repository (a folder linked to another scope, to a folder outside, a
    document linked to another): the commit would fail on git's "appears as both a file and as
    a directory", or replace the link by a file and leave the linked document unchanged."""
    (remote.work / "domain" / "shared").symlink_to("../conventions")
    (remote.work / "domain" / "outside").symlink_to("/tmp")
    (remote.work / "domain" / "alias.md").symlink_to("retry.md")
    git(remote.work, "add", "domain")
    git(remote.work, "commit", "--quiet", "-m", "links")
    git(remote.work, "push", "--quiet", "origin", "main")
    git_api.sync()
    refused = {
        "domain/shared/new.md": "lies under domain/shared, which is a symbolic link on main (to "
        "'../conventions')",
        "domain/outside/deeper/x.md": "lies under domain/outside, which is a symbolic link on "
        "main (to '/tmp')",
        "domain/alias.md": "is a symbolic link on main (to 'retry.md')",
    }
    for path, why in refused.items():
        with pytest.raises(ProposalError) as caught:
            git_api.propose_update(ProposalRequest(path, "change", "# Text\n\nNew.\n"))
        assert str(caught.value) == (
            f"doc_path '{path}' {why}; propose the change to the file at its own path"
        )
    assert git(remote.bare, "branch", "--list") == "* main"
    assert git_api.proposals() == []
    made = git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert git(remote.bare, "diff", "--name-only", "main", made.branch) == "domain/retry.md"


def test_a_folder_or_a_path_under_a_file_is_refused_with_its_reason(
    git_api: Briefd, remote: Remote
) -> None:
    """A doc_path that is a folder on the base answered git's 'git cat-file failed: fatal: …:
    bad file'; one under a document, 'appears as both a file and as a directory'."""
    remote.push({"domain/archive.md/old.md": "# Old\n\nText.\n"}, "A folder named .md")
    git_api.sync()
    refused = {
        "domain/archive.md": "is a folder on main, not a document; name a Markdown file (in "
        "it, or another path)",
        "domain/retry.md/notes.md": "lies under 'domain/retry.md', which is a file on main; use "
        "another path",
    }
    for path, why in refused.items():
        with pytest.raises(ProposalError) as caught:
            git_api.propose_update(ProposalRequest(path, "change", "# Text\n\nNew.\n"))
        assert str(caught.value) == f"doc_path '{path}' {why}"
    assert git(remote.bare, "branch", "--list") == "* main" and git_api.proposals() == []
    made = git_api.propose_update(
        ProposalRequest("domain/archive.md/new.md", "new", "# New\n\nText.\n")
    )
    assert (
        git(remote.bare, "diff", "--name-only", "main", made.branch) == "domain/archive.md/new.md"
    )


def test_an_identical_document_is_not_proposed(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    current = (checkout_dir(git_api.settings) / "domain" / "retry.md").read_text()
    with pytest.raises(ProposalError, match=r"identical to domain/retry\.md on main"):
        git_api.propose_update(ProposalRequest("domain/retry.md", "no-op", current))
    assert git(remote.bare, "branch", "--list") == "* main"
    assert git_api.proposals() == []


def test_proposals_start_from_the_current_remote_head(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    served = git(checkout_dir(git_api.settings), "rev-parse", "HEAD")
    newer = remote.push({"domain/fx.md": "# FX\n"}, "not synced yet")

    made = git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    assert made.base_commit == newer != served
    assert git(checkout_dir(git_api.settings), "rev-parse", "HEAD") == served
    assert git(remote.bare, "diff", "--name-only", "main", made.branch) == "domain/retry.md"


def test_a_document_a_teammate_changed_since_the_sync_is_a_conflict(
    git_api: Briefd, remote: Remote
) -> None:
    git_api.sync()
    served = git(checkout_dir(git_api.settings), "rev-parse", "HEAD")
    edited = RETRY.replace("three times", "three times, then never again")
    remote.push({"domain/retry.md": edited}, "Cap soft decline retries")
    remote.push({"domain/glossary.md": None}, "Drop the glossary")
    asked = r"domain/retry\.md changed on main since the commit this server serves"

    with pytest.raises(ProposalConflictError, match=asked) as refused:
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    with pytest.raises(ProposalConflictError, match=r"glossary\.md was deleted on main"):
        git_api.propose_update(ProposalRequest("domain/glossary.md", "x", "# Glossary\n\nx\n"))

    assert "by Teammate: Cap soft decline retries" in str(refused.value)
    assert "briefd sync" in str(refused.value) and "get_document" in str(refused.value)
    assert status_of(refused.value) == 409 and error_name(refused.value) == "proposal_conflict"
    assert git(remote.bare, "branch", "--list") == "* main"
    assert git_api.proposals() == []
    assert git(checkout_dir(git_api.settings), "rev-parse", "HEAD") == served

    git_api.sync()
    current = git_api.document("domain/retry.md").body
    made = git_api.propose_update(
        ProposalRequest("domain/retry.md", "four", current.replace("three", "four"))
    )
    assert "four times, then never again" in git(
        remote.bare, "show", f"{made.branch}:domain/retry.md"
    )


def test_a_document_moved_since_the_sync_is_named_at_its_new_path(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: a teammate moved the document an agent had read (git mv, pushed, not synced yet):
    the conflict said it "was deleted" and to read it again with get_document, which after the
    sync finds nothing at the old path, so the agent proposed there again and brought the old
    document back beside the moved one. The conflict now names where it went."""
    git_api.sync()
    git(remote.work, "mv", "domain/retry.md", "domain/soft-declines.md")
    git(remote.work, "commit", "--quiet", "-m", "Name it for what it covers")
    git(remote.work, "push", "--quiet", "origin", "main")

    with pytest.raises(ProposalConflictError) as refused:
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    assert re.match(
        r"domain/retry\.md was moved to domain/soft-declines\.md on main since the commit this "
        r"server serves \([0-9a-f]{7,} by Teammate: Name it for what it covers\); ",
        str(refused.value),
    ), str(refused.value)
    assert str(refused.value).endswith(
        "read the document at its new path (get_document domain/soft-declines.md) and propose "
        "the change there"
    )
    git_api.sync()
    current = git_api.document("domain/soft-declines.md").body
    made = git_api.propose_update(
        ProposalRequest("domain/soft-declines.md", "four", current.replace("three", "four"))
    )
    assert git(remote.bare, "diff", "--name-status", "main", made.branch) == (
        "M\tdomain/soft-declines.md"
    )


def _blob(remote: Remote, rev: str) -> bytes:
    return subprocess.run(
        ["git", "cat-file", "blob", rev], cwd=remote.bare, capture_output=True, check=True
    ).stdout


def test_after_a_sync_whose_index_run_failed_the_served_text_is_what_counts(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: a sync resets the clone before it indexes; when the index run then fails, the last
    good index is served, but the check compared the base with the clone's new HEAD, so a
    document deleted on the base looked new and a proposal to the served text recreated it.
    The check compares with the commit the served index was read at."""
    git_api.sync()
    served = git_api.document("domain/glossary.md").body
    moved = {"domain/retry.md": None, "domain/glossary.md": None, "notes/retry.md": RETRY}
    remote.push(moved, "Move the knowledge out of domain/")
    report = git_api.sync()
    assert report.error is not None and "found no document" in report.error
    assert git(checkout_dir(git_api.settings), "rev-parse", "HEAD") == remote.head()

    with pytest.raises(ProposalConflictError, match=r"glossary\.md was deleted on main since"):
        git_api.propose_update(ProposalRequest("domain/glossary.md", "x", served + "\nMore.\n"))
    assert git(remote.bare, "branch", "--list") == "* main" and git_api.proposals() == []


def test_a_served_commit_the_repository_lost_is_refused_with_what_to_do(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: the commit the index was read at, gone from the clone (history rewritten, the
    clone made again), cannot tell what changed since: refused, nothing pushed."""
    from briefd.store import documents as docs_table
    from briefd.store.freshness import SERVED_COMMIT

    git_api.sync()
    with git_api.store.write() as conn:
        docs_table.set_meta(conn, SERVED_COMMIT, "0123456789abcdef0123456789abcdef01234567")
    with pytest.raises(ProposalConflictError, match=r"\(0123456789ab\) is no longer in the repo"):
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert git(remote.bare, "branch", "--list") == "* main"


def test_a_proposal_keeps_the_documents_line_breaks_and_final_newline(
    git_api: Briefd, remote: Remote
) -> None:
    windows = b"\xef\xbb\xbf# Card data\r\n\r\nMask the PAN.\r\nKeep the last four.\r\n"
    (remote.work / "domain" / "cards.md").write_bytes(windows)
    (remote.work / "domain" / "limits.md").write_bytes(b"# Limits\n\nDaily limit: 500.")
    git(remote.work, "add", "domain")
    git(remote.work, "commit", "--quiet", "-m", "Windows-authored and unterminated")
    git(remote.work, "push", "--quiet", "origin", "main")
    git_api.sync()
    cards = git_api.document("domain/cards.md").body.strip()  # as MCP's text shows it
    limits = git_api.document("domain/limits.md").body + "\n"  # an agent that ends its lines

    card = git_api.propose_update(
        ProposalRequest("domain/cards.md", "digits", cards.replace("four", "four digits"))
    )
    limit = git_api.propose_update(
        ProposalRequest("domain/limits.md", "raise", limits.replace("500", "800"))
    )

    assert _blob(remote, f"{card.branch}:domain/cards.md") == windows.replace(
        b"four", b"four digits"
    )
    assert git(remote.bare, "diff", "--numstat", "main", card.branch) == "1\t1\tdomain/cards.md"
    assert _blob(remote, f"{limit.branch}:domain/limits.md") == b"# Limits\n\nDaily limit: 800."
    with pytest.raises(ProposalError, match=r"identical to domain/cards\.md"):
        git_api.propose_update(ProposalRequest("domain/cards.md", "no-op", cards))


def test_the_body_get_document_serves_keeps_the_front_matter_when_proposed(
    git_api: Briefd, remote: Remote
) -> None:
    governed = "---\ntitle: Retry policy\ntags: [payments]\nrefs: [src/retry/**]\n---\n"
    remote.push({"domain/retry.md": governed + RETRY.split("---\n", 2)[2]}, "govern retries")
    git_api.sync()
    served = git_api.document("domain/retry.md")
    assert not served.body.startswith("---")  # the body an agent reads and edits

    made = git_api.propose_update(
        ProposalRequest("domain/retry.md", "four", served.body.replace("three", "four"))
    )

    proposed = _blob(remote, f"{made.branch}:domain/retry.md").decode()
    assert proposed.startswith(governed + "# Retry policy\n")
    assert "retried four times" in proposed
    assert git(remote.bare, "diff", "--numstat", "main", made.branch) == "1\t1\tdomain/retry.md"
    own = "---\ntitle: Retries\n---\n" + served.body
    mine = git_api.propose_update(ProposalRequest("domain/retry.md", "retitle", own))
    assert _blob(remote, f"{mine.branch}:domain/retry.md").decode() == own


def test_get_documents_text_edited_and_sent_back_commits_the_document_alone(
    git_api: Briefd, remote: Remote
) -> None:
    """T1 over MCP: an agent reads get_document's text (a head of title, "path: … · scope: …
    · updated: …" and links above the body), edits it and proposes it: the commit wrote that
    head into the document. It is left out now; the text of a part is refused, or the lines
    it left out would be deleted."""
    remote.push({"domain/glossary.md": GLOSSARY + "See [retries](retry.md).\n"}, "link")
    git_api.sync()

    async def agent(client: Client) -> tuple[str, str, str]:
        served = await client.call_tool("get_document", {"doc_path": "domain/retry.md"})
        text = served.content[0].text  # type: ignore[union-attr]
        made = await client.call_tool(
            "propose_update",
            {
                "doc_path": "domain/retry.md",
                "change_description": "four",
                "new_content": text.replace("three", "four"),
            },
        )
        part = await client.call_tool(
            "get_document", {"doc_path": "domain/retry.md", "start_line": 6}
        )
        cut = await client.call_tool(
            "propose_update",
            {
                "doc_path": "domain/retry.md",
                "change_description": "five",
                "new_content": part.content[0].text.replace("three", "five"),  # type: ignore[union-attr]
            },
        )
        assert made.structured_content is not None
        return text, made.structured_content["branch"], cut.content[0].text  # type: ignore[union-attr]

    with serving(create_app(git_api, service_config())) as base:
        text, branch, refused = mcp_session(base + "/mcp", agent)

    assert text.splitlines()[1].startswith("path: domain/retry.md · scope: domain · updated: ")
    assert "linked from: domain/glossary.md" in text
    assert _blob(remote, f"{branch}:domain/retry.md").decode() == NEW_RETRY
    assert git(remote.bare, "diff", "--numstat", "main", branch) == "1\t1\tdomain/retry.md"
    assert git(remote.bare, "branch", "--list", "briefd/*").split() == [branch]
    assert refused == (
        "new_content is get_document's text of a part of domain/retry.md (lines 6-8 of 8), and a proposal replaces the whole document: the lines left out would be "
        "deleted; read the whole document (get_document without start_line, with a max_tokens "
        "that holds it) and send all of it"
    )


def test_a_name_that_differs_only_in_case_from_one_on_the_base_is_refused(
    git_api: Briefd, remote: Remote
) -> None:
    remote.push({"projects/alpha/notes/intro.md": "# Intro\n"}, "alpha notes")
    git_api.sync()
    for path, existing in [
        ("domain/Retry.md", "domain/retry.md"),
        ("projects/alpha/Notes/setup.md", "projects/alpha/notes"),
    ]:
        request = ProposalRequest(path, "x", "# X\n", scopes=("all",))
        with pytest.raises(ProposalError, match=f"differs only in case from '{existing}' on main"):
            git_api.propose_update(request)
    assert git(remote.bare, "branch", "--list") == "* main"
    made = git_api.propose_update(ProposalRequest("domain/retry-limits.md", "x", "# Limits\n"))
    assert git(remote.bare, "diff", "--name-status", "main", made.branch) == (
        "A\tdomain/retry-limits.md"
    )


def test_front_matter_the_index_would_not_read_is_refused(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    body = "# Retry policy\n\nA soft decline is retried four times.\n"
    unquoted = "---\ntitle: Retry: soft declines\nrefs: [src/retry/**]\n---\n" + body
    with pytest.raises(ProposalError) as refused:
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", unquoted))
    assert str(refused.value) == (
        "new_content's front matter would not be read as written: front matter is not valid "
        "YAML at line 2 (mapping values are not allowed here); indexed without front matter; "
        "fix it, or send the document without front matter to keep the one it has"
    )
    assert git(remote.bare, "branch", "--list") == "* main"

    quoted = unquoted.replace("Retry: soft declines", '"Retry: soft declines"')
    made = git_api.propose_update(ProposalRequest("domain/retry.md", "four", quoted))
    assert git(remote.bare, "show", f"{made.branch}:domain/retry.md") + "\n" == quoted


def test_a_document_opening_with_a_rule_is_proposed_as_served(
    git_api: Briefd, remote: Remote
) -> None:
    """A document that opens with a '---' rule above prose (a banner) is indexed and served
    whole, the rule and the prose included; sent back edited, it was refused as front matter
    the index would not read, and sent without that block (as the refusal said) it was
    committed without the banner."""
    banner = "---\n\nDeprecated, see the ledger rules instead.\n\n---\n\n"
    remote.push({"domain/old.md": banner + "# Old ledger\n\nPostings close at five.\n"}, "old")
    git_api.sync()
    served = git_api.document("domain/old.md")
    assert served.body.startswith(banner)

    made = git_api.propose_update(
        ProposalRequest("domain/old.md", "six", served.body.replace("five", "six"))
    )

    proposed = _blob(remote, f"{made.branch}:domain/old.md").decode()
    assert proposed == banner + "# Old ledger\n\nPostings close at six.\n"


def test_a_plain_directory_source_cannot_take_proposals(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "domain").mkdir(parents=True)
    (root / "domain" / "a.md").write_text("# A\n")
    with Briefd(git_settings(tmp_path, str(root)), embedder=None) as api:
        api.index()
        with pytest.raises(ProposalError, match="is a plain directory, not a git repository"):
            api.propose_update(ProposalRequest("domain/a.md", "why", "# B\n"))


def test_a_users_checkout_pushes_with_consent_without_touching_it(
    tmp_path: Path, remote: Remote
) -> None:
    work = remote.work
    (work / "domain" / "glossary.md").write_text("# Glossary\n\nuncommitted edit\n")
    before = (
        git(work, "rev-parse", "HEAD"),
        git(work, "status", "--porcelain"),
        (work / ".git" / "index").read_bytes(),
    )
    consent = git_settings(tmp_path, str(work), **{"proposals.push": True})
    with Briefd(consent, embedder=None) as api:
        api.sync()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))

    after = (
        git(work, "rev-parse", "HEAD"),
        git(work, "status", "--porcelain"),
        (work / ".git" / "index").read_bytes(),
    )
    assert after == before
    assert git(work, "for-each-ref", "refs/briefd") == ""  # the scratch ref is gone
    assert git(remote.bare, "rev-list", f"main..{made.branch}").splitlines() == [made.commit_hash]


UNPROPOSED = (
    "; nothing was proposed and nothing kept (no branch, no record): send the same proposal"
)


def test_an_unreachable_remote_is_a_proposal_error(git_api: Briefd, remote: Remote) -> None:
    """T1: the agent was told only "git fetch failed: …", and could not tell whether the
    proposal was kept, queued for later or lost; it now says nothing was kept, and to send it
    again once the remote answers."""
    git_api.sync()
    remote.bare.rename(remote.bare.with_name("gone.git"))
    with pytest.raises(
        ProposalError, match=r"^git fetch failed: fatal: .*check the repository"
    ) as e:
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert str(e.value).endswith(
        "check the repository URL in `source`" + UNPROPOSED + " again once that is fixed"
    )
    assert status_of(e.value) == 502 and error_name(e.value) == "proposal_remote"
    assert git_api.proposals() == []
    clone = checkout_dir(git_api.settings)
    assert "proposal" not in git(clone, "for-each-ref", "--format=%(refname)")


def test_a_remote_down_at_proposal_time_says_to_send_it_again_when_it_answers(
    tmp_path: Path, remote: Remote
) -> None:
    """T1: an HTTP remote down when an agent proposes (connection refused): the change is not
    kept anywhere, and the answer says so and what to do, not only "git fetch failed"."""
    with AuthenticatedGit(remote.bare.parent, "alice", "s3cret") as server:
        source = server.url(remote.bare.name, "alice:s3cret")
        api = Briefd(git_settings(tmp_path, source), embedder=None)
        api.sync()
    with api, pytest.raises(ProposalError) as refused:
        api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    said = str(refused.value)
    assert said.startswith("git fetch failed: fatal: unable to access"), said
    assert said.endswith(
        "the remote is unreachable; check the network and the URL"
        + UNPROPOSED
        + " again once the remote answers"
    ), said
    assert "s3cret" not in said


def test_a_token_that_may_fetch_but_not_push_is_told_so(tmp_path: Path, remote: Remote) -> None:
    """T1: a source URL whose token may read the repository but not write to it (GitHub's 403
    "Permission to … denied") answered "the remote refused the credentials; briefd never
    prompts, so put a token in the URL, configure a credential helper or an SSH key", about a
    token that is in the URL and had just fetched, and without the remote's own words. It now
    says the credentials may fetch but not push, with what the remote said."""
    with AuthenticatedGit(remote.bare.parent, "alice", "s3cret") as server:
        source = server.url(remote.bare.name, "alice:s3cret")
        with Briefd(git_settings(tmp_path, source), embedder=None) as api:
            api.sync()
            server.read_only = True
            with pytest.raises(ProposalError) as refused:
                api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
            assert api.proposals() == []
    said = str(refused.value)
    assert said.startswith("git push failed: fatal: unable to access 'http://127.0.0.1:"), said
    assert said.endswith(
        "The requested URL returned error: 403 (remote: Permission to remote.git denied to "
        "bot.); the remote let these credentials fetch but refused them the push: they may "
        "read the repository, not write to it; give them write access (on GitHub a "
        "fine-grained token's Contents: Read and write, a classic token's repo scope, a deploy "
        "key's write access)" + UNPROPOSED + " again once that is fixed"
    ), said
    assert status_of(refused.value) == 502 and "s3cret" not in said
    assert "proposal" not in git(remote.bare, "for-each-ref", "--format=%(refname)")


def _hook(remote: Remote, name: str, body: str) -> None:
    hook = remote.bare / "hooks" / name
    hook.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    hook.chmod(0o755)


def test_a_remote_that_hangs_up_on_the_push_says_nothing_was_proposed(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: the remote dropping the connection mid-push answered "git push failed: fatal: the
    remote end hung up unexpectedly" and nothing else; the remote, asked after, has no branch,
    so it says nothing was kept and to send it again."""
    git_api.sync()
    _hook(remote, "pre-receive", "kill -9 $PPID")  # receive-pack dies: the connection drops
    with pytest.raises(ProposalError) as refused:
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert str(refused.value) == (
        "git push failed: fatal: the remote end hung up unexpectedly"
        + UNPROPOSED
        + " again once the remote answers"
    )
    assert git_api.proposals() == []
    assert "proposal" not in git(remote.bare, "branch", "--list")


def test_a_remote_gone_after_the_push_says_the_branch_may_have_landed(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: a remote that went away as it took the push cannot say whether the branch landed;
    "nothing was proposed" would be a guess, so the answer names the branch to look for."""
    git_api.sync()
    gone = remote.bare.with_name("gone.git")
    _hook(remote, "pre-receive", f"mv '{remote.bare}' '{gone}'; kill -9 $PPID")
    with pytest.raises(ProposalError) as unsure:
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert re.fullmatch(
        r"git push failed: fatal: the remote end hung up unexpectedly; the remote did not "
        r"answer whether it has the branch, so the push may still reach the remote: look for "
        r"branch briefd/proposal-[0-9a-f]{8} there before proposing this change again",
        str(unsure.value),
    ), str(unsure.value)
    assert git_api.proposals() == []


def test_a_push_the_remotes_rules_refuse_says_which_setting_can_help(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: a remote whose rules refuse new branches (GitHub's rulesets restricting creation,
    branch protection, a pre-receive hook) answered "git push failed: remote: error: GH013:
    Repository rule violations found for refs/heads/briefd/proposal-…", with nothing on what
    to do, though proposals.branch_prefix exists for exactly this."""
    git_api.sync()
    hook = remote.bare / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        "echo 'error: GH013: Repository rule violations found for refs/heads/briefd.' >&2\n"
        "echo '- Cannot create ref due to creations being restricted.' >&2\nexit 1\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)
    with pytest.raises(ProposalError) as refused:
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert git_api.proposals() == []
    message = str(refused.value)
    branch = re.search(r"refused the branch (briefd/proposal-[0-9a-f]{8}) for", message)
    assert branch is not None
    assert message == (
        "git push failed: remote: error: GH013: Repository rule violations found for "
        "refs/heads/briefd. (pre-receive hook declined); the remote's rules (branch "
        f"protection, a ruleset, a pre-receive hook) refused the branch {branch.group(1)} for "
        "the reason above: where they restrict which branches may be created, let briefd's "
        "credentials create such branches or set proposals.branch_prefix to a prefix they "
        "allow; nothing was proposed"
    )


def test_a_push_refused_in_the_remotes_plain_words_gives_them(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: GitLab, Gitea and Bitbucket give a protected or restricted branch's reason as a
    plain "remote: GitLab: …" line, without GitHub's "error:"; briefd answered "git push
    failed: ! [remote rejected] <sha> -> briefd/proposal-… (pre-receive hook declined)" and
    advised acting "for the reason above", which it had left out. The remote's words lead."""
    git_api.sync()
    _hook(
        remote,
        "pre-receive",
        "echo 'Resolving deltas: 100% (1/1)' >&2\necho '-----' >&2\n"
        "echo 'GitLab: You are not allowed to push code to protected branches on this "
        "project.' >&2\necho 'See the branch rules of the project.' >&2\nexit 1",
    )
    with pytest.raises(ProposalError) as refused:
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert str(refused.value).startswith(
        "git push failed: remote: GitLab: You are not allowed to push code to protected "
        "branches on this project. (pre-receive hook declined); the remote's rules (branch "
        "protection, a ruleset, a pre-receive hook) refused the branch briefd/proposal-"
    ), str(refused.value)
    assert git_api.proposals() == []


def _slow_hook(remote: Remote, name: str, seconds: float) -> None:
    hook = remote.bare / "hooks" / name
    hook.write_text(f"#!/bin/sh\nsleep {seconds}\n", encoding="utf-8")
    hook.chmod(0o755)


def test_a_push_that_landed_as_its_timeout_ended_is_a_proposal(
    tmp_path: Path, remote: Remote
) -> None:
    _slow_hook(remote, "post-receive", 2)  # the branch is there; git push still waits
    settings = with_overrides(git_settings(tmp_path, remote.url), {"proposals.git_timeout": 1})
    with Briefd(settings, embedder=None) as api:
        api.sync()
        made = api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        assert api.proposals() == [made]
    assert made.status == "pushed"
    assert git(remote.bare, "rev-parse", made.branch) == made.commit_hash


def test_a_push_that_timed_out_names_the_branch_that_may_still_land(
    tmp_path: Path, remote: Remote
) -> None:
    _slow_hook(remote, "pre-receive", 2)
    settings = with_overrides(git_settings(tmp_path, remote.url), {"proposals.git_timeout": 1})
    with Briefd(settings, embedder=None) as api:
        api.sync()
        with pytest.raises(ProposalError) as raised:
            api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        assert api.proposals() == []
    message = str(raised.value)
    branch = re.search(r"look for branch (briefd/proposal-[0-9a-f]{8}) there", message)
    assert message.startswith("git push took longer than 1s; ") and branch is not None
    assert message.endswith("there before proposing this change again")


def test_the_private_ref_of_a_killed_proposal_is_removed_by_the_next(
    git_api: Briefd, remote: Remote
) -> None:
    git_api.sync()
    clone = checkout_dir(git_api.settings)
    dead = subprocess.Popen(["true"])  # its pid: a proposal's process killed since
    dead.wait()
    live = subprocess.Popen(["sleep", "60"])
    try:
        head = git(clone, "rev-parse", "HEAD")
        for name in (f"{dead.pid}-0badf00d", f"{live.pid}-0c0ffee0"):
            git(clone, "update-ref", f"refs/briefd/scratch/{name}", head)
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        left = git(clone, "for-each-ref", "--format=%(refname)", "refs/briefd")
        assert left == f"refs/briefd/scratch/{live.pid}-0c0ffee0"  # a proposal may run there
    finally:
        live.kill()
        live.wait()


def test_the_temporary_folder_of_a_killed_proposal_is_removed_by_the_next(
    git_api: Briefd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    git_api.sync()
    dead = subprocess.Popen(["true"])  # its pid: a proposal's process killed since
    dead.wait()
    live = subprocess.Popen(["sleep", "60"])
    try:
        for name in (f"briefd-proposal-{dead.pid}-k1ll3d", f"briefd-proposal-{live.pid}-w0rk1n"):
            (temporary / name).mkdir()
            (temporary / name / "index").write_bytes(b"DIRC")
        (temporary / "briefd-proposal-olderbr1").mkdir()  # an earlier briefd's: no pid
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
        assert sorted(p.name for p in temporary.iterdir()) == [
            f"briefd-proposal-{live.pid}-w0rk1n",
            "briefd-proposal-olderbr1",
        ]
    finally:
        live.kill()
        live.wait()


def _literal(text: str) -> str:
    return re.escape(text)


def test_proposals_made_in_one_second_list_newest_first(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    first = git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    second = git_api.propose_update(ProposalRequest("domain/a.md", "new", "# A\n\nText.\n"))
    assert [p.id for p in git_api.proposals()] == [second.id, first.id]


def test_the_branch_prefix_is_configurable(tmp_path: Path, remote: Remote) -> None:
    settings = with_overrides(
        git_settings(tmp_path, remote.url), {"proposals.branch_prefix": "kb-bot/"}
    )
    with Briefd(settings, embedder=None) as api:
        api.sync()
        made = api.propose_update(ProposalRequest("domain/retry.md", "Four retries", NEW_RETRY))
    assert made.branch == f"kb-bot/{made.id}"
    assert git(remote.bare, "show", f"{made.branch}:domain/retry.md") + "\n" == NEW_RETRY


def test_a_branch_prefix_that_names_an_existing_branchs_folder_says_so(
    tmp_path: Path, remote: Remote
) -> None:
    """``proposals.branch_prefix: main/`` passes the name check, but git cannot create
    ``main/<id>`` beside ``main``: every proposal failed with git's 'cannot lock ref'."""
    from tests.sync.conftest import git_settings as settings_for

    for source, where in ((remote.url, "the remote"), (str(remote.work), "the repository")):
        settings = settings_for(tmp_path, source, **{"proposals.branch_prefix": "main/"})
        with Briefd(settings, embedder=None) as api:
            api.index()
            with pytest.raises(ProposalError) as refused:
                api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
            assert api.proposals() == []
        assert re.fullmatch(
            rf"the proposal branch main/[0-9a-f]{{8}} cannot be made: {where} has a branch "
            r"'main', and git cannot hold a branch and a folder of branches of one name; set "
            r"proposals\.branch_prefix to a prefix no branch's name starts \(default "
            r"'briefd/proposal-'\); nothing was proposed",
            str(refused.value),
        )
        assert status_of(refused.value) == 400  # a setting to change, not a remote to wait for
    assert git(remote.bare, "branch", "--list") == "* main"


@pytest.mark.parametrize(
    ("prefix", "why"),
    [
        ("kb bot/", "holds a space"),
        ("kb//", "empty path component"),
        ("-kb/", "starts with '-'"),
        ("kb.lock/", "ends with '.lock'"),
        ("kb../", "holds '..'"),
    ],
)
def test_a_branch_prefix_git_refuses_is_a_settings_error(
    tmp_path: Path, prefix: str, why: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        with_overrides(git_settings(tmp_path, "unused"), {"proposals.branch_prefix": prefix})
    assert f"proposals.branch_prefix: {prefix!r} makes branch names git refuses" in str(
        refused.value
    )
    assert why in str(refused.value)


def test_a_path_spelled_decomposed_changes_the_document_it_names(
    git_api: Briefd, remote: Remote
) -> None:
    """An agent on macOS sends "ö" as "o" + U+0308: the proposal added a second file, to the
    eye of the same name, beside the document instead of changing it."""
    remote.push({"projects/ödeme/genel-bakış.md": "# Ödeme\n\nEski.\n"})
    git_api.sync()
    nfd = "projects/o\u0308deme/genel-bak\u0131s\u0327.md"
    changed = git_api.propose_update(
        ProposalRequest(nfd, "Ödeme: güncellendi", "# Ödeme\n\nYeni.\n", scopes=("all",))
    )
    assert changed.doc_path == "projects/ödeme/genel-bakış.md"
    assert git(
        remote.bare, "-c", "core.quotepath=off", "diff", "--name-status", "main", changed.branch
    ) == ("M\tprojects/ödeme/genel-bakış.md")
    added = git_api.propose_update(
        ProposalRequest(
            "projects/o\u0308deme/yeni-do\u0308ku\u0308man.md", "Yeni", "# Yeni\n", scopes=("all",)
        )
    )
    assert added.doc_path == "projects/ödeme/yeni-döküman.md"
    assert git(
        remote.bare, "-c", "core.quotepath=off", "diff", "--name-status", "main", added.branch
    ) == ("A\tprojects/ödeme/yeni-döküman.md")


def test_a_scope_and_a_path_composed_otherwise_are_the_same_scope(
    git_api: Briefd, remote: Remote
) -> None:
    """ "doc_path 'projects/ödeme/genel-bakış.md' is in scope 'projects/ödeme', which this
    request may not see (scopes: projects/ödeme)": one of them arrived decomposed (NFD)."""
    remote.push({"projects/ödeme/genel-bakış.md": "# Ödeme\n\nEski.\n"})
    git_api.sync()
    for path, scope in [
        ("projects/o\u0308deme/genel-bakış.md", "projects/ödeme"),
        ("projects/ödeme/genel-bakış.md", "projects/o\u0308deme"),
    ]:
        made = git_api.propose_update(
            ProposalRequest(path, "Ödeme", f"# Ödeme\n\n{scope!r}\n", scopes=(scope,))
        )
        assert made.doc_path == "projects/ödeme/genel-bakış.md"


def test_a_default_branch_renamed_since_the_last_sync_says_to_sync(
    git_api: Briefd, remote: Remote
) -> None:
    """K3, T1: the team renamed the remote's default branch (main → trunk) and an agent
    proposed before briefd's next sync: "couldn't find remote ref refs/heads/main; … check
    `sync.branch`", a setting nobody had set. It now says a sync follows the rename; after
    one, the proposal starts from trunk."""
    git_api.sync()
    git(remote.work, "branch", "--quiet", "-m", "main", "trunk")
    git(remote.work, "push", "--quiet", "origin", "trunk")
    git(remote.bare, "symbolic-ref", "HEAD", "refs/heads/trunk")
    git(remote.bare, "branch", "--quiet", "-D", "main")

    with pytest.raises(ProposalError) as refused:
        git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert str(refused.value) == (
        "git fetch failed: fatal: couldn't find remote ref refs/heads/main; the remote has no "
        "branch 'main' (any more): when its default branch was renamed, a sync follows the new "
        "one (unless sync.branch names the old): run briefd sync (or POST /api/admin/sync) and "
        "propose again; else set sync.branch to a branch it has"
        "; nothing was proposed and nothing kept (no branch, no record): send the same proposal again once that is fixed"
    )
    assert git_api.sync().branch == "trunk"
    made = git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    assert made.base_branch == "trunk"


def test_an_agent_that_tries_to_delete_a_document_is_told_how_to_retire_it(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: an agent asked to remove an obsolete document sent empty new_content and was told
    "send the full new text of the document", so it wrote a stub over it; proposals cannot
    delete, and the answer now says so and how a document is retired instead."""
    git_api.sync()
    with pytest.raises(ProposalError) as refused:
        git_api.propose_update(ProposalRequest("domain/glossary.md", "obsolete: remove", ""))
    assert str(refused.value) == (
        "new_content is empty; send the full new text of the document. A proposal changes or "
        "creates a document and cannot delete one: to retire it, propose the document that "
        "replaces it with `supersedes: <its path>` in its front matter (briefd then points "
        "readers there), and say in change_description that the old one can be deleted"
    )
    assert git(remote.bare, "branch", "--list", "briefd/*") == ""


def test_front_matter_alone_is_refused_rather_than_emptying_the_document(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: an agent asked to add a tag sent the new front matter alone; the proposal replaced
    the document with it, its whole text gone in the branch under review. Refused now, with
    how to change only the front matter; nothing is pushed."""
    git_api.sync()
    metadata_only = "---\ntitle: Retry policy\ntags: [retries, payments]\n---\n"
    with pytest.raises(ProposalError) as refused:
        git_api.propose_update(ProposalRequest("domain/retry.md", "tag it", metadata_only))
    assert str(refused.value) == (
        "new_content is front matter with no text after it; a proposal replaces the whole "
        "document, so this would empty it. To change the front matter alone, send it followed "
        "by the document's text as get_document serves it"
    )
    assert git(remote.bare, "branch", "--list", "briefd/*") == ""


def test_a_pushed_proposal_merged_on_the_remote_is_merged_at_the_next_sync(
    git_api: Briefd, remote: Remote
) -> None:
    """T1: without a forge (a team on GitLab or Gitea, forge.type: none) a proposal's branch
    merged on the remote stayed "pushed" in `briefd proposals`, GET /api/proposals and the
    dashboard for good, as if still waiting for review. A sync now finds its commit on the
    base branch it fetched and says merged, as for a local proposal; one not merged stays."""
    git_api.sync()
    made = git_api.propose_update(ProposalRequest("domain/retry.md", "four", NEW_RETRY))
    other = git_api.propose_update(ProposalRequest("domain/glossary.md", "why", "# G\n\nG.\n"))
    git(remote.work, "fetch", "--quiet", "origin", made.branch)
    git(remote.work, "merge", "--quiet", "--no-ff", "-m", "Merge the proposal", "FETCH_HEAD")
    git(remote.work, "push", "--quiet", "origin", "main")

    report = git_api.sync()
    stored = {p.id: (p.status, p.forge_error) for p in git_api.proposals()}
    again = git_api.sync()

    assert report.proposals_changed == (f"{made.id}: pushed → merged",)
    assert stored == {made.id: ("merged", None), other.id: ("pushed", None)}
    assert again.proposals_changed == ()
    hits = git_api.search(SearchRequest("soft decline retried", mode="bm25")).hits
    assert "four times" in hits[0].content
