"""JQL and CQL are built by briefd (A1, A2): the exact queries are pinned, and a property test
shows that no input can change a query's structure — user text only ever lands, whole, inside
one well-formed string literal — and that allow-lists only ever narrow."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from briefd.atlassian.query import (
    JiraQuery,
    cql,
    free_text,
    is_issue_key,
    issue_key,
    jql,
    literal,
    narrowed,
    page_id,
)
from briefd.errors import QueryError

# A lexer for the JQL/CQL briefd writes: string literals with backslash escapes, words
# (fields, keywords, functions), operators. Anything else does not lex and fails the test.
_TOKEN = re.compile(
    r'\s*(?:(?P<literal>"(?:[^"\\]|\\.)*")|(?P<word>[A-Za-z_][\w.]*(?:\(\))?)|(?P<op>!=|[~=(),]))'
)


def lex(query: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(query.rstrip()):
        found = _TOKEN.match(query, position)
        assert found is not None and found.end() > position, query[position:]
        kind = found.lastgroup or ""
        tokens.append((kind, found.group(kind)))
        position = found.end()
    return tokens


def shape(query: str) -> list[tuple[str, str]]:
    """The structure of a query: every literal replaced by a placeholder."""
    return [(kind, "…" if kind == "literal" else value) for kind, value in lex(query)]


def literals(query: str) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", v[1:-1]) for k, v in lex(query) if k == "literal"]


def test_jql_is_pinned() -> None:
    query = JiraQuery(
        text='refund "race" OR 1=1',
        projects=("shop",),
        status="In Progress",
        type="Bug",
        assignee="me",
        open_only=True,
    )
    assert jql(query, ("SHOP", "PAY")) == (
        'project in ("SHOP") AND text ~ "refund race or 1=1" AND status = "In Progress" AND '
        'issuetype = "Bug" AND assignee = currentUser() AND statusCategory != Done '
        "ORDER BY created DESC"
    )
    assert jql(JiraQuery(assignee="unassigned"), ()) == ("assignee is EMPTY ORDER BY created DESC")
    assert jql(JiraQuery(assignee='o"brien\\x'), ("PAY",)) == (
        'project in ("PAY") AND assignee = "o\\"brien\\\\x" ORDER BY created DESC'
    )


def test_cql_is_pinned_for_cloud_and_data_center() -> None:
    assert cql("refund window?", ["ENG", "PAY"], "cloud") == (
        'space in ("ENG", "PAY") AND siteSearch ~ "refund window" AND type in ("page", "blogpost")'
    )
    assert cql("(refund)", [], "datacenter") == 'text ~ "refund" AND type in ("page", "blogpost")'


def test_lucene_operators_in_free_text_are_words_not_operators() -> None:
    """Jira's and Confluence's text search read AND, OR and NOT in capitals as operators (and
    refuse a query ending in one): inside the literal they must be plain words."""
    text = "refund NOT webhook OR export AND"
    assert jql(JiraQuery(text=text), ("SHOP",)) == (
        'project in ("SHOP") AND text ~ "refund not webhook or export and" ORDER BY created DESC'
    )
    assert cql("NOT refunded", [], "cloud") == (
        'siteSearch ~ "not refunded" AND type in ("page", "blogpost")'
    )
    assert free_text("Not ANDROID ORacle nOT") == "Not ANDROID ORacle nOT"  # only the operators


def test_unbounded_and_empty_searches_say_what_to_give() -> None:
    with pytest.raises(QueryError, match="give text, projects, status"):
        jql(JiraQuery(), ())
    with pytest.raises(QueryError, match="no words left once the special characters"):
        cql('*** "" ???', [], "cloud")


def test_allow_lists_only_narrow() -> None:
    assert narrowed([], ["ENG", "PAY"], "space", "confluence.spaces") == ["ENG", "PAY"]
    assert narrowed(["pay"], ["ENG", "PAY"], "space", "confluence.spaces") == ["PAY"]
    with pytest.raises(QueryError) as caught:
        narrowed(["OPS"], ["ENG", "PAY"], "space", "confluence.spaces")
    assert str(caught.value) == (
        "space 'OPS' is not in confluence.spaces (ENG, PAY); ask for one of those, or leave "
        "spaces out to search them all"
    )


def test_keys_and_ids() -> None:
    assert issue_key(" shop-42 ") == "SHOP-42"
    assert is_issue_key("SHOP-42") and not is_issue_key("SHOP-42 refund race")
    assert is_issue_key(" shop-42 ") and issue_key("Shop-42") == "SHOP-42"  # any case, as Jira
    assert not is_issue_key("shop-42 refund race") and not is_issue_key("shop 42")
    with pytest.raises(QueryError, match="'SHOP 42' is not a Jira issue key"):
        issue_key("SHOP 42")
    with pytest.raises(QueryError, match="not a Confluence page id"):
        page_id("98765 OR 1=1")


TEMPLATE_TEXT = shape(jql(JiraQuery(text="x", projects=("SHOP",)), ("SHOP", "PAY")))
TEMPLATE_FIELDS = shape(jql(JiraQuery(status="x", type="x", assignee="x"), ("SHOP",)))
TEMPLATE_CQL = shape(cql("x", ["ENG"], "cloud"))


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_is_exactly_one_literal_and_cannot_change_the_query(text: str) -> None:
    assert lex(literal(text)) == [("literal", literal(text))]
    words = free_text(text)
    assert not {"AND", "OR", "NOT"} & set(words.split())  # Lucene's operators: never as such
    if not words:  # blank: no text clause; only specials: an error that says to use words
        if text.strip():
            with pytest.raises(QueryError):
                jql(JiraQuery(text=text, projects=("SHOP",)), ("SHOP", "PAY"))
        return
    query = jql(JiraQuery(text=text, projects=("SHOP",)), ("SHOP", "PAY"))
    assert shape(query) == TEMPLATE_TEXT
    assert literals(query) == ["SHOP", words]
    search = cql(text, ["ENG"], "cloud")
    assert shape(search) == TEMPLATE_CQL
    assert literals(search)[1] == words


@settings(max_examples=300, deadline=None)
@given(
    st.text(min_size=1).filter(
        lambda t: (
            t.strip() and t.strip().casefold() not in ("me", "currentuser()", "none", "unassigned")
        )
    )
)
def test_any_identifier_is_quoted_whole(value: str) -> None:
    query = jql(JiraQuery(status=value, type=value, assignee=value), ("SHOP",))
    assert shape(query) == TEMPLATE_FIELDS
    clean = re.sub("[\x00-\x1f\x7f-\x9f\u2028\u2029]", " ", value.strip())
    assert literals(query) == ["SHOP", clean, clean, clean]


@given(st.lists(st.sampled_from(["ENG", "eng", "PAY", "OPS", "HR", ""]), max_size=4))
def test_a_caller_can_never_widen_an_allow_list(asked: list[str]) -> None:
    allowed = ["ENG", "PAY"]
    try:
        used = narrowed(asked, allowed, "space", "confluence.spaces")
    except QueryError:
        assert any(a.strip() and a.casefold() not in ("eng", "pay") for a in asked)
        return
    assert used and set(used) <= set(allowed)
