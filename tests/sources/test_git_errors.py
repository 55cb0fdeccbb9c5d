"""What a failed git command tells the user: the hint follows git's message, not digits that
happen to appear in a URL."""

from __future__ import annotations

from briefd.sources.git import describe_failure

FETCH = ["-c", "gc.auto=0", "fetch", "origin"]


def test_a_refused_connection_on_a_port_containing_403_is_unreachable_not_credentials() -> None:
    stderr = (
        "fatal: unable to access 'http://127.0.0.1:40359/kb.git/': Failed to connect to "
        "127.0.0.1 port 40359 after 0 ms: Couldn't connect to server\n"
    )
    message = describe_failure(FETCH, stderr)
    assert message.startswith("git fetch failed: fatal: unable to access")
    assert "unreachable" in message
    assert "credentials" not in message


def test_an_http_403_points_at_the_credentials() -> None:
    stderr = "fatal: unable to access 'https://git.example/kb.git/': The requested URL returned error: 403\n"
    message = describe_failure(FETCH, stderr)
    assert "refused the credentials" in message
