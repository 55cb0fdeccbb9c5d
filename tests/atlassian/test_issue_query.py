"""What a bundle headed by a live issue searches with (B1): the issue's summary and the first
words of its description — words, not the Markdown's link targets, fences and marks."""

from __future__ import annotations

from pathlib import Path

from briefd.atlassian.render import description_words
from tests.atlassian.conftest import facade
from tests.atlassian.fake import FakeSite


def test_the_query_of_an_issue_is_its_words_without_link_targets_or_marks(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """The query held '### Steps 1. … ```python … [race.log](/secure/attachment/10001/race.log)':
    an attachment's or screenshot's URL (…/rest/api/3/attachment/content/…) searched the team's
    knowledge for 'rest', 'api', 'attachment', 'content'."""
    answer = facade(tmp_path, cloud).jira_issue("SHOP-42", False, 2000, None)
    assert answer.query == (
        "Partial refunds can exceed the captured amount Two partial refunds created within 40 "
        "ms both passed validation, so the cardholder got back 130.00 EUR on a 120.00 EUR "
        "capture. Steps Capture 120.00 EUR Send two partial refunds of 65.00 EUR at once "
        "refundable = captured sum(pending_and_succeeded) Trace: race.log"
    )
    screenshot = (
        'See ![login.png](https://acme.atlassian.net/rest/api/3/attachment/content/10001 "x") '
        "and [the runbook](https://wiki.example.com/display/OPS/Runbook) or "
        "https://status.example.com/incidents/42\n\n| Step | Owner |\n| --- | --- |\n| **roll "
        "back** | `ops` |"
    )
    assert description_words(screenshot) == [
        "See", "login.png", "and", "the", "runbook", "or", "Step", "Owner", "roll", "back", "ops"
    ]  # fmt: skip
