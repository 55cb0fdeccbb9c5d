"""The lookups against the fake Cloud and Data Center sites over real HTTP on 127.0.0.1:
paging (Cloud ``nextPageToken``, Data Center ``startAt``; Confluence cursor and ``start``
links), ``renderedFields`` → Markdown, issue links, remote links, comments newest first,
budgets cut from the end, allow-lists, and whose credentials go out."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import httpx
import pytest

from briefd.atlassian import Account, Atlassian, JiraQuery
from briefd.atlassian.convert import html_to_markdown
from briefd.errors import IntegrationError, QueryError, RemoteNotFoundError
from tests.atlassian import data
from tests.atlassian.conftest import (
    CALLER_EMAIL,
    CALLER_TOKEN,
    DC_CALLER_PAT,
    DC_PAT,
    ENV,
    SERVICE_EMAIL,
    SERVICE_TOKEN,
    facade,
    site_settings,
)
from tests.atlassian.fake import FakeSite


def basic(email: str, token: str) -> str:
    return "Basic " + base64.b64encode(f"{email}:{token}".encode()).decode()


def test_cloud_jira_search_pages_by_next_page_token(tmp_path: Path, cloud: FakeSite) -> None:
    answer = facade(tmp_path, cloud).jira_search(JiraQuery(text="refund", limit=5), None)
    assert [r.key for r in answer.issues] == ["SHOP-42", "SHOP-41", "SHOP-40", "SHOP-39", "SHOP-38"]
    assert cloud.paths() == ["POST /rest/api/3/search/jql"] * 3  # page size 2: 2 + 2 + 1
    bodies = [s.body for s in cloud.seen]
    assert bodies[0] == {
        "jql": 'project in ("SHOP") AND text ~ "refund" ORDER BY created DESC',
        "maxResults": 5,
        "fields": ["summary", "issuetype", "status", "priority", "assignee", "updated"],
    }
    assert "nextPageToken" not in bodies[0] and bodies[1]["nextPageToken"]
    assert bodies[2]["maxResults"] == 1
    assert answer.text.markdown.startswith(
        '5 Jira issue(s), newest first, for: project in ("SHOP") AND text ~ "refund"'
    )
    assert (
        f"- SHOP-41 · Bug · To Do · Refund webhook sent twice · assignee unassigned · "
        f"updated 2026-05-02 · {cloud.url}/browse/SHOP-41" in answer.text.markdown
    )


def test_datacenter_jira_search_pages_by_start_at(tmp_path: Path, dc: FakeSite) -> None:
    answer = facade(tmp_path, dc).jira_search(JiraQuery(text="refund", limit=3), None)
    assert [r.key for r in answer.issues] == ["SHOP-42", "SHOP-41", "SHOP-40"]
    assert dc.paths() == ["GET /rest/api/2/search"] * 2
    assert [s.query["startAt"] for s in dc.seen] == ["0", "2"]
    assert dc.seen[0].authorization == f"Bearer {DC_PAT}"


def test_search_stops_at_the_budget_and_says_how_many_were_left_out(
    tmp_path: Path, cloud: FakeSite
) -> None:
    answer = facade(tmp_path, cloud).jira_search(JiraQuery(text="refund", max_tokens=90), None)
    assert answer.text.tokens <= 90 and answer.omitted > 0
    assert len(answer.issues) == 5 - answer.omitted
    assert answer.text.markdown.endswith(
        f"({answer.omitted} more left out to stay within max_tokens)"
    )


@pytest.mark.parametrize("deployment", ["cloud", "dc"])
def test_jira_issue_renders_everything_newest_comments_first(
    tmp_path: Path, deployment: str, request: pytest.FixtureRequest
) -> None:
    site: FakeSite = request.getfixturevalue(deployment)
    answer = facade(tmp_path, site).jira_issue("shop-42", True, 2000, None)
    text = answer.text.markdown
    api = "3" if site.cloud else "2"
    assert site.paths() == [
        f"GET /rest/api/{api}/issue/SHOP-42",
        f"GET /rest/api/{api}/issue/SHOP-42/remotelink",
        f"GET /rest/api/{api}/issue/SHOP-42/comment",
    ]
    assert site.seen[0].query["expand"] == "renderedFields,names"
    assert site.seen[2].query == {
        "expand": "renderedBody",
        "orderBy": "-created",
        "maxResults": "50",
    }
    assert text.startswith(
        "# SHOP-42: Partial refunds can exceed the captured amount\n\n"
        "Bug · In Progress · priority High · assignee Ada Lovelace · reporter Grace Hopper · "
        f"created 2026-04-28 · updated 2026-05-02 · {site.url}/browse/SHOP-42\n\n"
        "labels: refunds, race-condition · components: payment-gateway · fix versions: 2026.5\n\n"
        "## Related issues\n\n"
        "- blocks SHOP-43 (To Do): Release 2026.5\n"
        "- relates to PAY-7 (outside jira.projects)\n\n"  # SHOP only: no summary, no status
        "## Linked pages\n\n"
        f"- [Refund incident review]({site.url}/wiki/pages/viewpage.action?pageId=98765)"
        ' · confluence_page("98765")\n\n'
        "## Description\n\n"
        f"{data.ISSUE_TEXT}, so the cardholder got back 130.00 EUR on a 120.00 EUR capture.\n\n"
        "### Steps\n\n1. Capture 120.00 EUR\n2. Send two partial refunds of 65.00 EUR at once\n\n"
        "```python\nrefundable = captured - sum(pending_and_succeeded)\n```\n\n"
        f"Trace: [race.log]({site.url}/secure/attachment/10001/race.log)\n\n"
        "## Story Points\n\n5\n\n"
        "## Comments (3, newest first)\n\n### Ada Lovelace · 2026-05-01 12:30"
    )
    authors = [c.author for c in answer.issue.comments]
    assert authors == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]
    assert answer.query.startswith("Partial refunds can exceed the captured amount Two partial")
    assert not answer.text.truncated and answer.text.tokens < 2000


def test_a_small_budget_cuts_comments_before_the_description(
    tmp_path: Path, cloud: FakeSite
) -> None:
    answer = facade(tmp_path, cloud).jira_issue("SHOP-42", True, 300, None)
    text = answer.text.markdown
    assert answer.text.truncated and answer.text.tokens <= 300
    assert data.ISSUE_TEXT in text and "Grace Hopper · 2026-04-29" not in text
    assert text.endswith("tokens shown; ask jira_issue with a larger max_tokens]")
    without = facade(tmp_path, cloud).jira_issue("SHOP-42", False, 2000, None)
    assert "## Comments" not in without.text.markdown
    assert not any(p.endswith("/comment") for p in cloud.paths()[-2:])


@pytest.mark.parametrize("deployment", ["cloud", "dc"])
def test_confluence_search_follows_next_links(
    tmp_path: Path, deployment: str, request: pytest.FixtureRequest
) -> None:
    site: FakeSite = request.getfixturevalue(deployment)
    answer = facade(tmp_path, site).confluence_search("refund", [], 10, 1000, None)
    assert [h.id for h in answer.hits] == ["98765", "98766", "55555"]
    prefix = "/wiki" if site.cloud else ""
    assert site.paths() == [f"GET {prefix}/rest/api/search"] * 2
    field = "siteSearch" if site.cloud else "text"
    assert answer.cql == f'space in ("ENG") AND {field} ~ "refund" AND type in ("page", "blogpost")'
    assert site.seen[0].query == {"cql": answer.cql, "limit": "10"}
    assert site.seen[1].query["cql"] == answer.cql
    assert ("cursor" if site.cloud else "start") in site.seen[1].query
    first = answer.hits[0]
    assert (first.title, first.space, first.excerpt) == (
        "Refund incident review",
        "ENG",
        "About refunds & races",
    )
    assert answer.hits[2].type == "blogpost"


@pytest.mark.parametrize("deployment", ["cloud", "dc"])
def test_confluence_page_is_markdown_with_macros_kept(
    tmp_path: Path, deployment: str, request: pytest.FixtureRequest
) -> None:
    site: FakeSite = request.getfixturevalue(deployment)
    answer = facade(tmp_path, site).confluence_page("98765", 3000, None)
    if site.cloud:
        assert site.paths() == ["GET /wiki/api/v2/pages/98765", "GET /wiki/api/v2/spaces/131073"]
        assert site.seen[0].query == {"body-format": "export_view"}
        url = f"{site.url}/wiki/spaces/ENG/pages/98765/Refund+incident+review"
    else:
        assert site.paths() == ["GET /rest/api/content/98765"]
        assert site.seen[0].query == {"expand": "body.export_view,space,version"}
        url = f"{site.url}/display/ENG/Refund+incident+review"
    assert answer.text.markdown == (
        "# Refund incident review\n\n"
        f"page 98765 · space ENG · version 4 · updated 2026-04-01 · {url}\n\n"
        f"{data.PAGE_TEXT}, so two requests both saw 120.00 EUR as refundable.\n\n"
        "```sql\nSELECT amount_captured FROM payments WHERE id = $1 FOR UPDATE;\n```\n\n"
        "> **Warning: Money out**\n>\n> Pending refunds count against the limit.\n\n"
        "**Timeline**\n\n09:12 first refund; 09:12 second refund.\n\n"
        "- [x] Add the row lock\n- [ ] Backfill the ledger"
    )


@pytest.mark.parametrize("deployment", ["cloud", "dc"])
def test_scripts_table_pipes_fences_and_links_from_the_root_are_markdown(
    tmp_path: Path, deployment: str, request: pytest.FixtureRequest
) -> None:
    site: FakeSite = request.getfixturevalue(deployment)
    answer = facade(tmp_path, site).confluence_page("98767", 3000, None)
    root = site.url + ("/wiki" if site.cloud else "")  # the context path is in the links
    body = answer.text.markdown.split("\n\n", 2)[2]
    assert body == (
        f"See [the runbook]({root}/display/ENG/Refund+runbook) and "
        "[status](https://status.example.com/).\n\n"
        f"![race.png]({root}/download/attachments/98767/race.png?version=1&api=v2)\n\n"
        "| State | Counts |\n| --- | --- |\n| pending \\| succeeded | `a\\|b` |\n\n"
        "````markdown\nWrite it as:\n```sql\nSELECT 1;\n```\n````"
    )


@pytest.mark.parametrize("deployment", ["cloud", "dc"])
def test_images_and_attached_files_in_a_table_are_named_not_dropped(
    tmp_path: Path, deployment: str, request: pytest.FixtureRequest
) -> None:
    """A table of steps with a screenshot or an attached PDF per row came out with those cells
    empty: markdownify writes an image in a cell as its alt, and export_view gives embedded
    images none (their name is data-linked-resource-default-alias)."""
    site: FakeSite = request.getfixturevalue(deployment)
    answer = facade(tmp_path, site).confluence_page("98771", 3000, None)
    files = site.url + ("/wiki" if site.cloud else "") + "/download"
    assert answer.text.markdown.split("\n\n", 2)[2] == (
        "| Step | Screen |\n| --- | --- |\n"
        f"| Open the refund | ![refund form.png]({files}/attachments/98771/refund%20form.png"
        "?version=1&api=v2) |\n"
        "| Check the limits | "
        f"[![limits.pdf]({files}/thumbnails/98771/limits.pdf?version=2&api=v2)]"
        f"({files}/attachments/98771/limits.pdf?version=2&api=v2) |"
    )


def test_an_attachment_in_jira_text_is_named_without_its_icons() -> None:
    """Jira's renderer puts a thumbnail (no alt) in an attached image's link and a 7-pixel
    rendericon after an attached file's name: the image was ![](…/thumbnail/…), the file's
    link carried an image link to the icon."""
    html = (
        '<p><span class="image-wrap" style=""><a id="10001_thumb" '
        'href="/secure/attachment/10001/race.png" title="race.png" file-preview-type="image" '
        'file-preview-id="10001" file-preview-title="race.png"><img '
        'src="/secure/thumbnail/10001/_thumb_10001.png" style="border: 0px solid black" /></a>'
        '</span> and <span class="nobr"><a href="/secure/attachment/10002/race.log" '
        'title="race.log attached to SHOP-42">race.log<sup><img class="rendericon" '
        'src="/images/icons/link_attachment_7.gif" height="7" width="7" align="absmiddle" '
        'alt="" border="0"/></sup></a></span></p>'
    )
    site = "https://jira.example.com"
    assert html_to_markdown(html, f"{site}/browse/SHOP-42") == (
        f"[![race.png]({site}/secure/thumbnail/10001/_thumb_10001.png)]"
        f'({site}/secure/attachment/10001/race.png "race.png") and '
        f'[race.log]({site}/secure/attachment/10002/race.log "race.log attached to SHOP-42")'
    )
    pasted = '<table><tr><td><img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA"></td></tr>'
    assert html_to_markdown(pasted + "</table>") == (  # its kind, not its bytes as its name
        "|  |\n| --- |\n| ![embedded image](data:image/png;base64,…) |"
    )


@pytest.mark.parametrize("deployment", ["cloud", "dc"])
def test_a_page_cut_inside_a_code_block_with_blank_lines_closes_its_fence(
    tmp_path: Path, deployment: str, request: pytest.FixtureRequest
) -> None:
    site: FakeSite = request.getfixturevalue(deployment)
    answer = facade(tmp_path, site).confluence_page("98768", 110, None)
    body, marker = answer.text.markdown.split("\n\n", 2)[2].rsplit("\n\n", 1)
    assert body.startswith(  # the cut falls inside the code (Data Center's URL is shorter)
        "Replay the stuck refunds with this script.\n\n"
        "```py\nimport ledger\n\n\ndef stuck():\n    return ledger.pending(older_than=3600)\n"
    )
    assert "for refund in stuck()" not in body
    assert body.endswith("\n```") and body.count("```") == 2  # closed before the marker
    assert re.fullmatch(r"\[… cut to max_tokens: \d+ of \d+ tokens shown; ask .*\]", marker)
    assert answer.text.tokens <= 110 and answer.text.truncated


def test_a_cloud_blog_post_is_read_too(tmp_path: Path, cloud: FakeSite) -> None:
    answer = facade(tmp_path, cloud).confluence_page("55555", 3000, None)
    assert answer.page.info.title == "Refunds are faster now"
    assert cloud.paths()[:2] == ["GET /wiki/api/v2/pages/55555", "GET /wiki/api/v2/blogposts/55555"]


def test_allow_lists_hold_for_reads(tmp_path: Path, cloud: FakeSite) -> None:
    lookups = facade(tmp_path, cloud)
    with pytest.raises(RemoteNotFoundError) as page:
        lookups.confluence_page("11111", 3000, None)
    assert str(page.value) == (
        "Confluence page 11111 is in space OPS, outside confluence.spaces (ENG); briefd reads "
        "only those"
    )
    with pytest.raises(
        RemoteNotFoundError, match=r"PAY-7 is in project PAY, outside jira.projects \(SHOP\)"
    ):
        lookups.jira_issue("PAY-7", True, 2000, None)
    with pytest.raises(QueryError, match=r"project 'PAY' is not in jira\.projects"):
        lookups.jira_search(JiraQuery(text="refund", projects=("PAY",)), None)
    assert cloud.paths() == ["GET /wiki/api/v2/pages/11111", "GET /wiki/api/v2/spaces/131074"]


def test_an_issue_moved_out_of_the_projects_is_refused_before_more_is_fetched(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """Jira answers SHOP-17 as OPS-3 (moved): its comments and remote links are never asked
    for."""
    with pytest.raises(RemoteNotFoundError) as moved:
        facade(tmp_path, cloud).jira_issue("SHOP-17", True, 2000, None)
    assert str(moved.value) == (
        "OPS-3 is in project OPS, outside jira.projects (SHOP); briefd reads only those"
    )
    assert cloud.paths() == ["GET /rest/api/3/issue/SHOP-17"]
    allowed = facade(tmp_path, cloud, **{"jira.projects": ["SHOP", "OPS"]})
    assert allowed.jira_issue("SHOP-17", True, 2000, None).issue.key == "OPS-3"
    assert cloud.paths()[1:] == [
        "GET /rest/api/3/issue/SHOP-17",
        "GET /rest/api/3/issue/OPS-3/remotelink",
        "GET /rest/api/3/issue/OPS-3/comment",
    ]


def test_configured_fields_without_a_name_show_their_values(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """jira.fields naming a cascading select (Region: EMEA, then Germany under it) showed the
    option without its child, and time tracking (an object with no name) not at all: Jira
    renders neither, and only a name was read from an object."""
    fields = {
        **data.SHOP_42_FIELDS,
        "customfield_10030": {
            "self": f"{cloud.url}/rest/api/3/customFieldOption/10100",
            "value": "EMEA",
            "id": "10100",
            "child": {
                "self": f"{cloud.url}/rest/api/3/customFieldOption/10102",
                "value": "Germany",
                "id": "10102",
            },
        },
        "timetracking": {
            "originalEstimate": "2d",
            "remainingEstimate": "1d 4h",
            "timeSpent": "4h",
            "originalEstimateSeconds": 57600,
            "remainingEstimateSeconds": 43200,
            "timeSpentSeconds": 14400,
        },
    }
    issue = {
        "id": "10042",
        "self": f"{cloud.url}/rest/api/3/issue/10042",
        "key": "SHOP-42",
        "fields": fields,
        "renderedFields": {
            "description": data.DESCRIPTION_HTML,
            "customfield_10030": None,
            "timetracking": None,
        },
        "names": {"customfield_10030": "Region", "timetracking": "Time tracking"},
    }
    cloud.script(r"/issue/SHOP-42$", 200, body=issue)
    wanted = {"jira.fields": ["customfield_10030", "timetracking"]}
    text = facade(tmp_path, cloud, **wanted).jira_issue("SHOP-42", False, 2000, None).text
    assert text.markdown.endswith(
        "## Region\n\nEMEA › Germany\n\n"
        "## Time tracking\n\noriginalEstimate: 2d, remainingEstimate: 1d 4h, timeSpent: 4h"
    )


@pytest.mark.parametrize("deployment", ["cloud", "datacenter"])
def test_an_issue_on_a_site_with_issue_linking_off_is_read_without_linked_pages(
    tmp_path: Path, cloud: FakeSite, dc: FakeSite, deployment: str
) -> None:
    """Remote links answer 403 when the site has issue linking turned off (Jira's REST docs,
    Cloud and Data Center): that failed the whole jira_issue, and every bundle headed by an
    issue of that site, as "denied … (403 Forbidden)" though the issue itself was read."""
    site = cloud if deployment == "cloud" else dc
    api = "3" if deployment == "cloud" else "2"
    off = {"errorMessages": ["Issue linking is currently deactivated."], "errors": {}}
    site.script(r"/remotelink$", 403, body=off, times=2)
    lookups = facade(tmp_path, site)
    answer = lookups.jira_issue("SHOP-42", True, 2000, None)
    assert answer.issue.pages == () and "## Linked pages" not in answer.text.markdown
    assert data.ISSUE_TEXT in answer.text.markdown and "## Comments (3" in answer.text.markdown
    head, _ = lookups.prefetch("SHOP-42")("SHOP-42", 600) or ("", "")
    assert head.startswith("SHOP-42: Partial refunds can exceed the captured amount")
    assert site.paths()[:3] == [
        f"GET /rest/api/{api}/issue/SHOP-42",
        f"GET /rest/api/{api}/issue/SHOP-42/remotelink",
        f"GET /rest/api/{api}/issue/SHOP-42/comment",
    ]
    site.script(r"/issue/SHOP-42$", 403, body=off)
    with pytest.raises(IntegrationError, match=r"denied GET /rest/api/\d/issue/SHOP-42 \(403"):
        lookups.jira_issue("SHOP-42", True, 2000, None)  # the issue itself: still a failure


def test_an_issue_with_more_comments_than_are_read_says_so(tmp_path: Path, dc: FakeSite) -> None:
    """Only the newest 50 comments are read; an issue with 120 was headed "Comments (50, newest
    first)", as if that were all of them."""
    newest = [
        {
            "id": str(120 - n),
            "author": {"displayName": "Ada Lovelace"},
            "body": f"Comment {120 - n}",
            "renderedBody": f"<p>Comment {120 - n}</p>",
            "created": f"2026-05-0{9 - n}T10:00:00.000+0000",
        }
        for n in range(2)
    ]
    page = {"startAt": 0, "maxResults": 2, "total": 120, "comments": newest}
    dc.script(r"/issue/SHOP-42/comment$", 200, body=page)
    markdown = facade(tmp_path, dc).jira_issue("SHOP-42", True, 2000, None).text.markdown
    assert "\n## Comments (2, newest first; 118 older not read)\n" in markdown
    assert markdown.index("Comment 120") < markdown.index("Comment 119")
    every = facade(tmp_path, dc).jira_issue("SHOP-42", True, 2000, None).text.markdown
    assert "\n## Comments (3, newest first)\n" in every  # all of them: nothing more said


def test_credentials_service_caller_and_fallback(
    tmp_path: Path, cloud: FakeSite, dc: FakeSite
) -> None:
    lookups = facade(tmp_path, cloud)  # Jira has no account of its own: the Confluence one
    lookups.jira_issue("SHOP-42", False, 500, None)
    lookups.jira_issue("SHOP-42", False, 500, Account(CALLER_EMAIL, CALLER_TOKEN, "caller"))
    assert cloud.seen[0].authorization == basic(SERVICE_EMAIL, SERVICE_TOKEN)
    assert cloud.seen[-1].authorization == basic(CALLER_EMAIL, CALLER_TOKEN)
    facade(tmp_path, dc).confluence_page("98765", 500, Account(None, DC_CALLER_PAT, "caller"))
    assert dc.seen[0].authorization == f"Bearer {DC_CALLER_PAT}"


def test_an_injected_client_is_used(tmp_path: Path, cloud: FakeSite) -> None:
    seen: list[str] = []
    with httpx.Client(event_hooks={"request": [lambda r: seen.append(r.url.path)]}) as client:
        lookups = Atlassian(site_settings(tmp_path, cloud), client=client, env=ENV)
        lookups.confluence_page("98765", 500, None)
    assert seen == ["/wiki/api/v2/pages/98765", "/wiki/api/v2/spaces/131073"]


def test_a_page_cut_inside_a_character_ends_on_a_whole_one(tmp_path: Path, cloud: FakeSite) -> None:
    """A token can hold part of a character's bytes: the cut showed it as "\ufffd"."""
    pieces = set()
    for budget in range(150, 190):
        answer = facade(tmp_path, cloud).confluence_page("98769", budget, None)
        body = answer.text.markdown.split("\n\n", 2)[2].rsplit("\n\n", 1)[0]
        assert "\ufffd" not in answer.text.markdown, budget
        assert body.startswith("東京オフィスの営業時間") and answer.text.truncated
        assert answer.text.tokens <= budget
        pieces.add(body)
    assert len(pieces) > 10  # the cut moved with the budget


def test_a_linked_page_of_another_site_gets_no_page_id(tmp_path: Path, cloud: FakeSite) -> None:
    """confluence_page("1001") would fetch page 1001 of the configured site: an unrelated one."""
    ours = json.loads(json.dumps(data.REMOTE_LINKS).replace("{site}", cloud.url))
    partner = "https://partner.atlassian.net/wiki/spaces/X/pages/1001/Partner+API+spec"
    theirs = {
        "application": {"type": "com.atlassian.confluence", "name": "Confluence"},
        "object": {"url": partner, "title": "Partner API spec"},
    }
    cloud.script(r"/remotelink$", 200, body=[*ours, theirs])
    answer = facade(tmp_path, cloud).jira_issue("SHOP-42", False, 2000, None)
    assert [(p.title, p.page_id) for p in answer.issue.pages] == [
        ("Refund incident review", "98765"),
        ("Partner API spec", None),
    ]
    assert f"- [Partner API spec]({partner})\n" in answer.text.markdown


CLOUD_ID = "1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d"


class Gateway(httpx.HTTPTransport):
    """``api.atlassian.com`` resolved to the fake site, as a hosts file would: a request to the
    gateway reaches the fake on 127.0.0.1 with its path (``/ex/jira/<cloud id>/…``) intact."""

    def __init__(self, site: FakeSite) -> None:
        super().__init__()
        self.site = httpx.URL(site.url)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.atlassian.com":
            site = self.site
            request.url = request.url.copy_with(scheme=site.scheme, host=site.host, port=site.port)
        return super().handle_request(request)


def test_issue_links_through_the_api_gateway_open_the_site(tmp_path: Path, cloud: FakeSite) -> None:
    """With jira.url the gateway (a scoped token's only way in), links were built on it:
    https://api.atlassian.com/ex/jira/<cloud id>/browse/SHOP-42 opens nothing in a browser,
    and links from the site's root became https://api.atlassian.com/secure/…. Jira names its
    site in serverInfo's baseUrl, asked once (an issue's self is on the gateway too)."""
    gateway = f"https://api.atlassian.com/ex/jira/{CLOUD_ID}"
    settings = site_settings(tmp_path, cloud, **{"jira.url": gateway})
    cloud.script(r"/serverInfo$", 503)  # down at first: the lookup answers, and asks again
    with httpx.Client(transport=Gateway(cloud)) as client:
        lookups = Atlassian(settings, client, env=ENV, sleep=lambda s: None)
        first = lookups.jira_issue("SHOP-42", False, 2000, None)
        answer = lookups.jira_issue("SHOP-42", False, 2000, None)
        found = lookups.jira_search(JiraQuery(text="refund", limit=2), None)
    assert first.issue.url == f"{gateway}/browse/SHOP-42"
    assert answer.issue.url == f"{cloud.url}/browse/SHOP-42"
    assert f"· {cloud.url}/browse/SHOP-42\n\n" in answer.text.markdown
    assert f"[race.log]({cloud.url}/secure/attachment/10001/race.log)" in answer.text.markdown
    assert [r.url for r in found.issues] == [f"{cloud.url}/browse/SHOP-{n}" for n in (42, 41)]
    issue = f"GET /ex/jira/{CLOUD_ID}/rest/api/3/issue/SHOP-42"
    info = f"GET /ex/jira/{CLOUD_ID}/rest/api/3/serverInfo"
    assert cloud.paths() == [
        *(info, issue, issue + "/remotelink"),
        *(info, issue, issue + "/remotelink"),
        f"POST /ex/jira/{CLOUD_ID}/rest/api/3/search/jql",  # baseUrl kept: not asked again
    ]


def test_a_server_info_naming_no_site_is_asked_once_a_failed_one_again(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """An answer without a baseUrl was not kept: every lookup through the gateway asked
    serverInfo again, for the same answer. A 5xx is still asked again on the next lookup."""
    gateway = f"https://api.atlassian.com/ex/jira/{CLOUD_ID}"
    settings = site_settings(tmp_path, cloud, **{"jira.url": gateway})
    unnamed = {  # Jira Cloud's serverInfo without its site's URLs
        "version": "1001.0.0-SNAPSHOT",
        "versionNumbers": [1001, 0, 0],
        "deploymentType": "Cloud",
        "buildNumber": 100300,
        "serverTime": "2026-05-04T10:00:00.000+0000",
        "serverTitle": "Jira",
    }
    cloud.script(r"/serverInfo$", 502)
    cloud.script(r"/serverInfo$", 200, body=unnamed, times=5)
    with httpx.Client(transport=Gateway(cloud)) as client:
        lookups = Atlassian(settings, client, env=ENV, sleep=lambda s: None)
        answers = [lookups.jira_issue("SHOP-42", False, 2000, None) for _ in range(3)]
        found = lookups.jira_search(JiraQuery(text="refund", limit=2), None)
    assert {a.issue.url for a in answers} == {f"{gateway}/browse/SHOP-42"}
    assert [r.url for r in found.issues] == [f"{gateway}/browse/SHOP-{n}" for n in (42, 41)]
    info = f"GET /ex/jira/{CLOUD_ID}/rest/api/3/serverInfo"
    assert [p for p in cloud.paths() if p.endswith("/serverInfo")] == [info, info]


def test_an_issue_linked_in_the_text_outside_the_projects_shows_its_key_alone(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """Jira renders a mention of another issue as a link whose title is that issue's summary
    (and its key struck through once resolved): for an issue outside jira.projects that was
    its summary and state, which briefd withholds from related issues too."""
    said = (
        f"<p>Same race as {data.issue_link('PAY-7', data.OPS_SUMMARY, True)}; fixed for "
        f"{data.issue_link('SHOP-43', 'Release 2026.5', False)}.</p>"
    ).replace("{site}", cloud.url)
    comment = {"id": "9", "author": {"displayName": "Alan Turing"}, "renderedBody": said}
    comment |= {"created": "2026-05-03T09:00:00.000+0000", "body": {"type": "doc"}}
    listed = {"startAt": 0, "maxResults": 50, "total": 1, "comments": [comment]}
    cloud.script(r"/issue/SHOP-42/comment$", 200, body=listed, times=2)
    text = facade(tmp_path, cloud).jira_issue("SHOP-42", True, 2000, None).text.markdown
    assert data.OPS_SUMMARY not in text and "~~PAY-7~~" not in text
    assert (
        f"Same race as [PAY-7]({cloud.url}/browse/PAY-7); fixed for "
        f'[SHOP-43]({cloud.url}/browse/SHOP-43 "Release 2026.5").'
    ) in text
    everywhere = facade(tmp_path, cloud, **{"jira.projects": []})
    assert data.OPS_SUMMARY in everywhere.jira_issue("SHOP-42", True, 2000, None).text.markdown


def test_a_pages_jira_issue_macro_outside_the_projects_shows_its_key_alone(
    tmp_path: Path, cloud: FakeSite
) -> None:
    text = facade(tmp_path, cloud).confluence_page("98770", 2000, None).text.markdown
    assert data.OPS_SUMMARY not in text and "In Progress" not in text
    assert (
        "Before the release: [OPS-9](https://jira.example.com/browse/OPS-9?src=confmacro) and "
        "[SHOP-43](https://jira.example.com/browse/SHOP-43?src=confmacro) - Release 2026.5 To Do"
    ) in text


@pytest.mark.parametrize("deployment", ["cloud", "dc"])
def test_a_pages_jira_issues_table_withholds_every_cell_of_a_row_outside_the_projects(
    tmp_path: Path, deployment: str, request: pytest.FixtureRequest
) -> None:
    """The Jira issues macro shown as a table (export_view: a row an issue, the key a link,
    the summary and status plain cells, no data-jira-key): a row of an issue outside
    jira.projects showed its summary and status; now its key's link alone."""
    site: FakeSite = request.getfixturevalue(deployment)
    text = facade(tmp_path, site).confluence_page("98772", 2000, None).text.markdown
    assert data.OPS_SUMMARY not in text and "Blocked on legal" not in text
    assert "| [OPS-9](https://jira.example.com/browse/OPS-9?src=confmacro) |  |  |" in text
    assert (
        "| [SHOP-43](https://jira.example.com/browse/SHOP-43?src=confmacro) | Release 2026.5 "
        "| To Do |"
    ) in text
    everywhere = facade(tmp_path, site, **{"jira.projects": []})
    shown = everywhere.confluence_page("98772", 2000, None).text.markdown
    assert f"| {data.OPS_SUMMARY} | Blocked on legal |" in shown


def test_content_a_page_includes_from_another_space_is_shown_as_the_readme_says(
    tmp_path: Path, cloud: FakeSite
) -> None:
    """Include Page and Excerpt Include inline another page's content in export_view, in a
    div naming neither that page nor its space: a page of confluence.spaces shows it, whatever
    its space, and the README says so where confluence.spaces is described."""
    text = facade(tmp_path, cloud).confluence_page("98773", 2000, None).text.markdown
    assert f"On call:\n\n{data.OPS_RUNBOOK}.\n\n> **Panel: Ops secrets**" in text
    assert "The vault is sealed at night." in text
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    said = next(line for line in readme.splitlines() if line.startswith("| `confluence.spaces`"))
    assert "Include Page and Excerpt Include macros pull from a page of another space" in said


@pytest.mark.parametrize("deployment", ["cloud", "dc"])
def test_a_project_the_account_cannot_see_is_left_out_not_every_search_failed(
    tmp_path: Path, deployment: str, request: pytest.FixtureRequest
) -> None:
    """jira.projects names a project this account may not browse (a developer's own token,
    a project the service account was never added to): Jira refuses it as an unknown key, and
    that 400 failed every search that named no projects, though the others were readable."""
    site: FakeSite = request.getfixturevalue(deployment)
    lookups = facade(tmp_path, site, **{"jira.projects": ["SHOP", "LEGAL"]})
    answer = lookups.jira_search(JiraQuery(text="refund", limit=3), None)
    assert [r.key for r in answer.issues] == ["SHOP-42", "SHOP-41", "SHOP-40"]
    assert answer.jql == 'project in ("SHOP") AND text ~ "refund" ORDER BY created DESC'
    assert answer.text.markdown.startswith(
        "3 Jira issue(s), newest first (more match: ask with a larger limit, up to 50, or "
        f"narrow the search), for: {answer.jql}\n\n(not searched: LEGAL of "
        "jira.projects, which Jira knows no project by for this account: no permission to "
        "browse it, or no such key)\n\n- SHOP-42"
    )
    with pytest.raises(QueryError, match="The value 'LEGAL' does not exist"):  # asked for
        lookups.jira_search(JiraQuery(text="refund", projects=("LEGAL",)), None)
    with pytest.raises(QueryError, match="The value 'LEGAL' does not exist"):  # none left
        facade(tmp_path, site, **{"jira.projects": ["LEGAL"]}).jira_search(
            JiraQuery(text="refund"), None
        )
