"""A live search that stops at its ``limit`` says when the site has more matches (A1, A2):
Jira Cloud's next page, Data Center's ``total``, Confluence's ``_links.next``. Its count alone
("2 Jira issue(s)") read as all the issues there are."""

from __future__ import annotations

from pathlib import Path

from briefd.atlassian import JiraQuery
from tests.atlassian.conftest import facade
from tests.atlassian.fake import FakeSite

JQL = 'project in ("SHOP") AND text ~ "refund" ORDER BY created DESC'
CQL = 'space in ("ENG") AND siteSearch ~ "refund" AND type in ("page", "blogpost")'
MORE = "more match: ask with a larger limit, up to 50, or narrow the search"


def test_a_search_cut_at_its_limit_says_more_match(
    tmp_path: Path, cloud: FakeSite, dc: FakeSite
) -> None:
    for site in (cloud, dc):  # 5 issues match: a next page on Cloud, total 5 on Data Center
        lookups = facade(tmp_path, site)
        two = lookups.jira_search(JiraQuery(text="refund", limit=2), None)
        assert [r.key for r in two.issues] == ["SHOP-42", "SHOP-41"], site.deployment
        assert two.text.markdown.startswith(
            f"2 Jira issue(s), newest first ({MORE}), for: {JQL}\n\n- SHOP-42 · Bug"
        ), site.deployment
        every = lookups.jira_search(JiraQuery(text="refund", limit=5), None)
        assert every.text.markdown.startswith(f"5 Jira issue(s), newest first, for: {JQL}\n\n")
    lookups = facade(tmp_path, cloud)
    pages = lookups.confluence_search("refund", [], 2, 1000, None)  # 3 match, a page holds 2
    assert [h.id for h in pages.hits] == ["98765", "98766"]
    assert pages.text.markdown.startswith(f"2 Confluence page(s) ({MORE}) for: {CQL}\n\n- [")
    all_three = lookups.confluence_search("refund", [], 3, 1000, None)
    assert all_three.text.markdown.startswith(f"3 Confluence page(s) for: {CQL}\n\n- [")
    cut = lookups.confluence_search("refund", [], 2, 60, None)  # cut by max_tokens as well
    assert cut.text.markdown.startswith(f"2 Confluence page(s) ({MORE}) for: ")
    assert cut.text.markdown.endswith("(2 more left out to stay within max_tokens)")
