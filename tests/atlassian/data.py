"""What the fake site holds: Jira issues and Confluence pages in the JSON shapes of Atlassian's
published REST documentation (Jira Cloud v3 / Data Center v2, Confluence v1 search, Cloud v2
pages, Data Center content). Every text here is fiction."""

from __future__ import annotations

from typing import Any

ISSUE_TEXT = "Two partial refunds created within 40 ms both passed validation"
PAGE_TEXT = "The refundable amount check ran outside the row lock"
COMMENT_TEXT = "Reproduced on staging with two parallel POST /v1/refunds calls"

DESCRIPTION_HTML = (
    f"<p>{ISSUE_TEXT}, so the cardholder got back 130.00 EUR on a 120.00 EUR capture.</p>"
    "<h3>Steps</h3><ol><li>Capture 120.00 EUR</li><li>Send two partial refunds of 65.00 EUR "
    "at once</li></ol>"
    '<div class="code panel" style="border-width: 1px;"><div class="codeContent panelContent">'
    '<pre class="code-python">refundable = captured - sum(pending_and_succeeded)</pre>'
    "</div></div>"
    '<p>Trace: <a href="/secure/attachment/10001/race.log">race.log</a></p>'
)
ADF_DESCRIPTION = {"type": "doc", "version": 1, "content": [{"type": "paragraph"}]}


def _person(name: str, account_id: str) -> dict[str, Any]:
    return {"accountId": account_id, "displayName": name, "name": account_id, "active": True}


def _ref(key: str, summary: str, status: str) -> dict[str, Any]:
    return {
        "id": str(10000 + int(key.split("-")[1])),
        "key": key,
        "self": f"/rest/api/3/issue/{key}",
        "fields": {"summary": summary, "status": {"name": status}, "issuetype": {"name": "Bug"}},
    }


SHOP_42_FIELDS: dict[str, Any] = {
    "summary": "Partial refunds can exceed the captured amount",
    "issuetype": {"name": "Bug", "subtask": False},
    "status": {"name": "In Progress", "statusCategory": {"key": "indeterminate"}},
    "priority": {"name": "High"},
    "assignee": _person("Ada Lovelace", "5b10a2844c20165700ede21g"),
    "reporter": _person("Grace Hopper", "5b10ac8d82e05b22cc7d4ef5"),
    "resolution": None,
    "created": "2026-04-28T09:12:44.000+0000",
    "updated": "2026-05-02T16:40:02.000+0000",
    "labels": ["refunds", "race-condition"],
    "components": [{"name": "payment-gateway"}],
    "fixVersions": [{"name": "2026.5"}],
    "customfield_10020": 5,
    "issuelinks": [
        {
            "id": "30001",
            "type": {"name": "Blocks", "inward": "is blocked by", "outward": "blocks"},
            "outwardIssue": _ref("SHOP-43", "Release 2026.5", "To Do"),
        },
        {
            "id": "30002",
            "type": {"name": "Relates", "inward": "relates to", "outward": "relates to"},
            "inwardIssue": _ref("PAY-7", "Refund ledger entries", "Done"),
        },
    ],
}

COMMENTS = [
    ("Grace Hopper", "2026-04-29T08:00:00.000+0000", "First seen by the merchant support team."),
    ("Ada Lovelace", "2026-05-01T12:30:00.000+0000", COMMENT_TEXT + "."),
    ("Alan Turing", "2026-04-30T10:00:00.000+0000", "The SELECT FOR UPDATE is missing."),
]

REMOTE_LINKS = [
    {
        "id": 10000,
        "self": "/rest/api/3/issue/SHOP-42/remotelink/10000",
        "globalId": "appId=0b3c2f1e-1d55-3c76-8a44-4b5a6d7e8f90&pageId=98765",
        "application": {"type": "com.atlassian.confluence", "name": "Confluence"},
        "relationship": "Wiki Page",
        "object": {
            "url": "{site}/wiki/pages/viewpage.action?pageId=98765",
            "title": "Refund incident review",
            "icon": {"url16x16": "{site}/wiki/favicon.ico", "title": "Confluence"},
        },
    }
]

SEARCH_SUMMARIES = [
    ("SHOP-42", "Partial refunds can exceed the captured amount", "In Progress"),
    ("SHOP-41", "Refund webhook sent twice", "To Do"),
    ("SHOP-40", "Refund reason missing in the export", "Done"),
    ("SHOP-39", "Refund list is slow for large merchants", "To Do"),
    ("SHOP-38", "Typo in the refund email", "Done"),
]

PAGE_HTML = (
    f"<p>{PAGE_TEXT}, so two requests both saw 120.00 EUR as refundable.</p>"
    '<div class="code panel pdl conf-macro output-block" data-macro-name="code">'
    '<div class="codeContent panelContent pdl"><pre class="syntaxhighlighter-pre" '
    'data-syntaxhighlighter-params="brush: sql; gutter: false; theme: Confluence" '
    'data-theme="Confluence">SELECT amount_captured FROM payments WHERE id = $1 FOR UPDATE;'
    "</pre></div></div>"
    '<div class="confluence-information-macro confluence-information-macro-warning conf-macro '
    'output-block" data-hasbody="true" data-macro-name="warning"><p class="title">Money out</p>'
    '<div class="confluence-information-macro-body"><p>Pending refunds count against the '
    "limit.</p></div></div>"
    '<div class="expand-container conf-macro output-block" data-macro-name="expand">'
    '<div class="expand-control"><span class="expand-control-icon icon">&nbsp;</span>'
    '<span class="expand-control-text">Timeline</span></div><div class="expand-content '
    'expand-hidden"><p>09:12 first refund; 09:12 second refund.</p></div></div>'
    '<ul class="inline-task-list" data-inline-tasks-content-id="98765">'
    '<li data-inline-task-id="1" class="checked">Add the row lock</li>'
    '<li data-inline-task-id="2">Backfill the ledger</li></ul>'
)

# what export_view renders that markdownify alone got wrong: links and images from the site's
# root ({context}: /wiki on Cloud, none on Data Center), a script and a style, a "|" in a
# table cell, a code block that holds a fence of its own
EDGE_HTML = (
    '<p>See <a href="{context}/display/ENG/Refund+runbook">the runbook</a> and '
    '<a href="https://status.example.com/">status</a>.</p>'
    '<p><img src="{context}/download/attachments/98767/race.png?version=1&amp;api=v2" '
    'alt="race.png"></p>'
    '<script type="text/javascript">alert(2)</script><style>p{color:red}</style>'
    "<table><tbody><tr><th>State</th><th>Counts</th></tr>"
    "<tr><td>pending | succeeded</td><td><code>a|b</code></td></tr></tbody></table>"
    '<pre data-language="markdown">Write it as:\n```sql\nSELECT 1;\n```</pre>'
)

# a code block with blank lines in it, as most real code has, long enough to be cut
SCRIPT_HTML = (
    "<p>Replay the stuck refunds with this script.</p>"
    '<div class="code panel pdl conf-macro output-block" data-macro-name="code">'
    '<div class="codeContent panelContent pdl"><pre class="syntaxhighlighter-pre" '
    'data-syntaxhighlighter-params="brush: py; gutter: false; theme: Confluence">'
    "import ledger\n\n\ndef stuck():\n    return ledger.pending(older_than=3600)\n\n\n"
    "def replay(refund):\n    ledger.lock(refund.payment_id)\n    refund.send()\n\n\n"
    "for refund in stuck():\n    replay(refund)\n</pre></div></div>"
    "<p>Then check the ledger totals against the captures of the day.</p>"
)

# one long paragraph of Japanese (a character is 3 bytes, often split between 2 tokens) and
# Turkish: a cut by tokens falls inside a character unless it stops at a whole one
TOKYO_HTML = "<p>" + "東京オフィスの営業時間は午前九時から午後六時までです。" * 40 + "</p>"


# how Jira renders a link to an issue in a description or comment (its summary as the title,
# its key struck through once resolved), and Confluence its Jira issue macro (summary, status)
def issue_link(key: str, summary: str, resolved: bool) -> str:
    shown = f"<del>{key}</del>" if resolved else key
    return (
        f'<a href="{{site}}/browse/{key}" title="{summary}" class="issue-link" '
        f'data-issue-key="{key}">{shown}</a>'
    )


OPS_SUMMARY = "Rotate the payment HSM master key"
JIRA_MACRO_HTML = (
    "<p>Before the release: "
    '<span class="confluence-jim-macro jira-issue" data-jira-key="OPS-9" data-client-id="x">'
    '<a href="https://jira.example.com/browse/OPS-9?src=confmacro" class="jira-issue-key">'
    '<img class="icon" src="https://jira.example.com/images/icons/bug.svg">OPS-9</a> - '
    f'<span class="summary">{OPS_SUMMARY}</span> <span class="aui-lozenge aui-lozenge-subtle '
    'aui-lozenge-current jira-macro-single-issue-export-pdf">In Progress</span></span> and '
    '<span class="confluence-jim-macro jira-issue" data-jira-key="SHOP-43">'
    '<a href="https://jira.example.com/browse/SHOP-43?src=confmacro" class="jira-issue-key">'
    'SHOP-43</a> - <span class="summary">Release 2026.5</span> <span class="aui-lozenge">To Do'
    "</span></span></p>"
)


# a Jira issues macro shown as a table, as Data Center's export_view renders it (captured from a
# public site: an empty first row, the header row, then a row an issue; no data-jira-key, the
# key a link to the issue, the summary and the status plain cells)
def jira_table_row(key: str, summary: str, status: str) -> str:
    cell = '<td class="jira-macro-table-underline-pdfexport">'
    return (
        f'<tr class="rowNormal">{cell}<a href="https://jira.example.com/browse/{key}?src=confmacro">'
        f'{key}</a></td>{cell}{summary}</td>{cell}<span class="aui-lozenge aui-lozenge-subtle '
        f'aui-lozenge-current">{status}</span></td></tr>'
    )


JIRA_TABLE_HTML = (
    "<p>Open before the release:</p>"
    '<div id="refresh-module--1732135165" class="refresh-module-id jira-table">'
    '<div id="jira-issues--1732135165" style="width: 100%;  overflow: auto;" class="jira-issues">'
    '<table class="aui" style="padding:5px !important;vertical-align: top;"><tbody><tr></tr><tr>'
    + "".join(
        '<th class="jira-macro-table-underline-pdfexport jira-tablesorter-header"><span '
        f'class="jim-table-header-content">{name}</span></th>'
        for name in ("Key", "Summary", "Status")
    )
    + "</tr>"
    + jira_table_row("OPS-9", OPS_SUMMARY, "Blocked on legal")
    + jira_table_row("SHOP-43", "Release 2026.5", "To Do")
    + "</tbody></table></div></div>"
)

# a page of ENG that includes pages of OPS (outside confluence.spaces) with the Include Page
# and Excerpt Include macros: export_view inlines their content in the macro's div, which
# names neither the page nor its space (the storage format does)
OPS_RUNBOOK = "Page the HSM custodian on 555-0199 before rotating"
INCLUDING_HTML = (
    "<p>On call:</p>"
    '<div class="conf-macro output-block" data-hasbody="false" data-macro-name="include" '
    f'data-macro-id="5f1c"><p>{OPS_RUNBOOK}.</p></div>'
    '<div class="conf-macro output-block" data-hasbody="false" '
    'data-macro-name="excerpt-include" data-macro-id="7a2e"><div class="panel" '
    'style="border-width: 1px;"><div class="panelHeader" style="border-bottom-width: 1px;">'
    '<b>Ops secrets</b></div><div class="panelContent"><p>The vault is sealed at night.</p>'
    "</div></div></div>"
)

# a table of steps with a screenshot and an attached file per row, as export_view renders
# them (embedded images carry no alt: their name is data-linked-resource-default-alias)
SCREENS_HTML = (
    '<div class="table-wrap"><table class="confluenceTable"><tbody><tr>'
    '<th class="confluenceTh">Step</th><th class="confluenceTh">Screen</th></tr><tr>'
    '<td class="confluenceTd">Open the refund</td><td class="confluenceTd"><div '
    'class="content-wrapper"><p><span class="confluence-embedded-file-wrapper">'
    '<img class="confluence-embedded-image" loading="lazy" '
    'src="{context}/download/attachments/98771/refund%20form.png?version=1&amp;api=v2" '
    'data-image-src="{context}/download/attachments/98771/refund%20form.png?version=1&amp;'
    'api=v2" data-linked-resource-id="98801" data-linked-resource-type="attachment" '
    'data-linked-resource-default-alias="refund form.png"></span></p></div></td></tr><tr>'
    '<td class="confluenceTd">Check the limits</td><td class="confluenceTd"><div '
    'class="content-wrapper"><p><span class="confluence-embedded-file-wrapper">'
    '<a class="confluence-embedded-file" '
    'href="{context}/download/attachments/98771/limits.pdf?version=2&amp;api=v2" '
    'data-linked-resource-default-alias="limits.pdf"><img class="confluence-embedded-image" '
    'src="{context}/download/thumbnails/98771/limits.pdf?version=2&amp;api=v2" '
    'data-linked-resource-default-alias="limits.pdf"></a></span></p></div></td></tr>'
    "</tbody></table></div>"
)

PAGES: dict[str, dict[str, Any]] = {
    "98765": {"title": "Refund incident review", "space": "ENG", "type": "page", "html": PAGE_HTML},
    "98766": {
        "title": "Refund runbook",
        "space": "ENG",
        "type": "page",
        "html": "<p>How to replay a refund.</p>",
    },
    "55555": {
        "title": "Refunds are faster now",
        "space": "ENG",
        "type": "blogpost",
        "html": "<p>Blog.</p>",
    },
    "98767": {"title": "Ledger notes", "space": "ENG", "type": "page", "html": EDGE_HTML},
    "98768": {"title": "Replay script", "space": "ENG", "type": "page", "html": SCRIPT_HTML},
    "98769": {"title": "東京オフィス", "space": "ENG", "type": "page", "html": TOKYO_HTML},
    "98770": {
        "title": "Release checklist",
        "space": "ENG",
        "type": "page",
        "html": JIRA_MACRO_HTML,
    },
    "98771": {"title": "Deploy screens", "space": "ENG", "type": "page", "html": SCREENS_HTML},
    "98772": {"title": "Release issues", "space": "ENG", "type": "page", "html": JIRA_TABLE_HTML},
    "98773": {"title": "On call", "space": "ENG", "type": "page", "html": INCLUDING_HTML},
    "11111": {"title": "Ops secrets", "space": "OPS", "type": "page", "html": "<p>Hidden.</p>"},
}
SPACES = {"ENG": ("131073", "Engineering"), "OPS": ("131074", "Operations")}
