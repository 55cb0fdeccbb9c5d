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
from briefd.sync.webhook import signature, verify_signature
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
