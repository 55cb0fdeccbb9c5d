"""Polling picks up a push within its interval; webhook signatures are HMAC-SHA256 of the raw
body, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import time

import pytest

from briefd.api import Briefd
from briefd.retrieval.search import SearchRequest
from briefd.sync.poller import Poller
from briefd.sync.webhook import signature, skipped_push, verify_signature
from tests.sync.gitrepo import Remote


def test_polling_picks_up_a_push_within_the_interval(git_api: Briefd, remote: Remote) -> None:
    git_api.sync()
    interval = 0.5
    poller = Poller(git_api, interval)
    poller.start()
    try:
        remote.push({"domain/fees.md": "# Fees\n\n## Interchange\nInterchange fee rules.\n"})
        pushed = time.monotonic()
        found = None
        while time.monotonic() - pushed < 10:
            hits = git_api.search(SearchRequest("interchange fee", mode="bm25")).hits
            if hits:
                found = time.monotonic() - pushed
                break
            time.sleep(0.02)
    finally:
        poller.stop()
    assert found is not None
    assert found < interval + 1.0  # one interval plus one (sub-second) sync
    assert git_api.sync_status().last_commit == remote.head()


def test_poller_stops_and_refuses_a_zero_interval(git_api: Briefd) -> None:
    poller = Poller(git_api, 0.05)
    poller.start()
    time.sleep(0.2)
    poller.stop()
    runs = git_api.sync_status().syncs
    assert runs >= 1
    time.sleep(0.2)
    assert git_api.sync_status().syncs == runs
    with pytest.raises(ValueError, match="above 0"):
        Poller(git_api, 0)


def test_signature_is_github_hmac_sha256_of_the_raw_body() -> None:
    body = b'{"ref":"refs/heads/main"}'
    expected = "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert signature("s3cret", body) == expected
    assert verify_signature("s3cret", body, expected)


@pytest.mark.parametrize(
    "secret, header",
    [
        ("s3cret", None),
        ("s3cret", ""),
        ("s3cret", "sha1=abc"),
        ("s3cret", signature("other", b"{}")),
        ("s3cret", signature("s3cret", b"{} ")),
        ("", signature("", b"{}")),
    ],
)
def test_bad_or_missing_signatures_are_refused(secret: str, header: str | None) -> None:
    assert not verify_signature(secret, b"{}", header)


@pytest.mark.parametrize(
    "remote",
    [
        "https://github.com/Acme/Knowledge.git",
        "git@github.com:acme/knowledge.git",
        "ssh://git@github.com:22/acme/knowledge",
        "gh-work:acme/knowledge.git",  # a host alias of ~/.ssh/config
        "https://x-access-token:secret@ghe.example.com/acme/knowledge/",
    ],
)
def test_a_push_to_another_repository_starts_no_sync(remote: str) -> None:
    """K3: one webhook on an organisation sends every repository's pushes; only the followed
    one's start a sync, however its URL is written."""
    main = {"ref": "refs/heads/main", "repository": {"default_branch": "main"}}
    ours = {**main, "repository": {"full_name": "acme/knowledge", "default_branch": "main"}}
    other = {**main, "repository": {"full_name": "acme/website", "default_branch": "main"}}
    assert skipped_push(ours, None, remote) is None
    assert skipped_push(main, None, remote) is None  # an event without the name: followed
    assert skipped_push(other, None, remote) == (
        "push to acme/website, not to the followed repository acme/knowledge"
    )


def test_a_mirror_in_a_folder_is_followed_whatever_the_event_names() -> None:
    """A folder or file:// remote (a mirror) is named as it likes: no repository check."""
    other = {"ref": "refs/heads/main", "repository": {"full_name": "acme/website"}}
    assert skipped_push(other, "main", "/srv/git/knowledge.git") is None
    assert skipped_push(other, "main", "file:///srv/git/knowledge.git") is None


def test_a_tag_push_starts_no_sync() -> None:
    """A sync follows a branch: a release tag pushed changes none of its documents."""
    tag = {"ref": "refs/tags/v1.2", "repository": {"full_name": "acme/knowledge"}}
    assert skipped_push(tag, None, "git@github.com:acme/knowledge.git") == (
        "push of the tag v1.2: a sync follows a branch"
    )
