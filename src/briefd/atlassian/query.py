"""JQL and CQL, built by briefd and never spliced from user input (A1, A2).

A value from a caller only ever appears inside one double-quoted string literal
(:func:`literal`): control characters become spaces, then ``\\`` and then ``"`` are escaped,
so nothing inside can close the literal, and a reserved word (``AND``, ``ORDER``, ``EMPTY``) is
only text there. Free text for a ``~`` search also loses the Lucene special characters first
and has the Lucene operators ``AND``, ``OR`` and ``NOT`` (operators only in capitals) written in
lower case (:func:`free_text`): both would otherwise be operators of the text search inside the
literal.
Identifiers (project and space keys, statuses, issue types, people) are quoted the same way.
The configured allow-lists are always ANDed in, and a caller can only narrow them
(:func:`narrowed`). Functions here are pure; tests pin their exact output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from briefd.errors import QueryError

Deployment = Literal["cloud", "datacenter"]

MAX_LIMIT = 50  # results one lookup returns at most
MIN_TOKENS = 50  # the smallest budget an answer takes
LUCENE_SPECIALS = frozenset('+-&|!(){}[]^"~*?:\\/')
# control characters, line and paragraph separators and lone surrogates: never inside a literal
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
ISSUE_KEY = re.compile(r"^[A-Z][A-Z0-9_]*-[1-9][0-9]{0,9}$")
_BROWSED = re.compile(r"^https?://[^\s?#]*/browse/([^/\s?#]+)/?(?:[?#]\S*)?$")
PAGE_ID = re.compile(r"^[1-9][0-9]{0,19}$")
LUCENE_OPERATORS = frozenset({"AND", "OR", "NOT"})
ME = frozenset({"me", "currentuser()"})
NOBODY = frozenset({"none", "unassigned"})


@dataclass(frozen=True, slots=True)
class JiraQuery:
    """``jira_search`` as asked: every filter optional, ANDed with ``jira.projects``."""

    text: str | None = None
    projects: tuple[str, ...] = ()
    status: str | None = None
    type: str | None = None
    assignee: str | None = None
    open_only: bool = False
    limit: int = 10
    max_tokens: int = 800


def literal(value: str) -> str:
    """``value`` as exactly one double-quoted JQL/CQL string literal."""
    clean = _UNPRINTABLE.sub(" ", value)
    return '"' + clean.replace("\\", "\\\\").replace('"', '\\"') + '"'


def free_text(value: str) -> str:
    """Words for a ``~`` text search: Lucene specials and control characters dropped,
    whitespace collapsed, ``AND`` / ``OR`` / ``NOT`` lower-cased (words, not operators; the
    search ignores case). Empty when nothing searchable is left."""
    kept = "".join(" " if ch in LUCENE_SPECIALS else ch for ch in _UNPRINTABLE.sub(" ", value))
    return " ".join(w.lower() if w in LUCENE_OPERATORS else w for w in kept.split())


def text_literal(value: str, what: str) -> str:
    words = free_text(value)
    if not words:
        raise QueryError(
            f"the {what} has no words left once the special characters "
            '(+ - & | ! ( ) { } [ ] ^ " ~ * ? : \\ /) are removed; search with words'
        )
    return literal(words)


def narrowed(asked: Sequence[str], allowed: Sequence[str], noun: str, key: str) -> list[str]:
    """The keys a search may use: the caller's (each must be allowed) or, when the caller
    names none, the whole allow-list. Empty ``allowed``: every key the account sees."""
    wanted = [a.strip() for a in asked if a.strip()]
    if not allowed:
        return wanted
    by_fold = {a.casefold(): a for a in allowed}
    outside = [w for w in wanted if w.casefold() not in by_fold]
    if outside:
        raise QueryError(
            f"{noun} '{outside[0]}' is not in {key} ({', '.join(allowed)}); "
            f"ask for one of those, or leave {noun}s out to search them all"
        )
    return [by_fold[w.casefold()] for w in wanted] or list(allowed)


def in_clause(field: str, values: Sequence[str]) -> str:
    return f"{field} in ({', '.join(literal(v) for v in values)})"


def jql(query: JiraQuery, allowed: Sequence[str]) -> str:
    """The JQL of a ``jira_search``, newest first."""
    projects = narrowed([p.upper() for p in query.projects], allowed, "project", "jira.projects")
    clauses = [in_clause("project", projects)] if projects else []
    if query.text and query.text.strip():
        clauses.append(f"text ~ {text_literal(query.text, 'search text')}")
    if query.status and query.status.strip():
        clauses.append(f"status = {literal(query.status.strip())}")
    if query.type and query.type.strip():
        clauses.append(f"issuetype = {literal(query.type.strip())}")
    if query.assignee and query.assignee.strip():
        clauses.append(assignee_clause(query.assignee.strip()))
    if query.open_only:
        clauses.append("statusCategory != Done")
    if not clauses:
        raise QueryError(
            "give text, projects, status, type, assignee or open_only (or set jira.projects): "
            "Jira refuses an unbounded search"
        )
    return " AND ".join(clauses) + " ORDER BY created DESC"


def assignee_clause(who: str) -> str:
    """``me`` is the account briefd reads as, ``unassigned`` nobody; anyone else by name,
    email or account id, quoted."""
    if who.casefold() in ME:
        return "assignee = currentUser()"
    if who.casefold() in NOBODY:
        return "assignee is EMPTY"
    return f"assignee = {literal(who)}"


def cql(text: str, spaces: Sequence[str], deployment: Deployment) -> str:
    """The CQL of a ``confluence_search``: Cloud ranks plain text best with ``siteSearch``,
    Data Center knows only ``text``."""
    field = "siteSearch" if deployment == "cloud" else "text"
    clauses = [in_clause("space", spaces)] if spaces else []
    clauses.append(f"{field} ~ {text_literal(text, 'search text')}")
    clauses.append(in_clause("type", ("page", "blogpost")))
    return " AND ".join(clauses)


def issue_key(value: str) -> str:
    """A Jira issue key as typed (``shop-42`` too), upper-cased; else a QueryError."""
    key = value.strip().upper()
    if not ISSUE_KEY.match(key):
        raise QueryError(f"'{value.strip()[:80]}' is not a Jira issue key; give one like SHOP-42")
    return key


def is_issue_key(value: str) -> bool:
    """Whether ``value`` is exactly one issue key, in any case as :func:`issue_key` takes it
    (bundles: anything else is the issue's text)."""
    return ISSUE_KEY.match(value.strip().upper()) is not None


def named_issue(text: str) -> str | None:
    """The key of the one issue ``text`` names whole — a key in any case, or an issue's browse
    URL (``https://acme.atlassian.net/browse/SHOP-42``, a query or fragment after it) — in
    capitals; else None (the gaps report: a bundle asked for by its issue alone)."""
    found = text.strip()
    if is_issue_key(found):
        return found.upper()
    browsed = _BROWSED.match(found)
    return browsed.group(1).upper() if browsed and is_issue_key(browsed.group(1)) else None


def page_id(value: str) -> str:
    found = value.strip()
    if not PAGE_ID.match(found):
        raise QueryError(
            f"'{found[:80]}' is not a Confluence page id; give the number in the page's URL "
            "(…/pages/123456/…), as confluence_search returns it"
        )
    return found


def project_of(key: str) -> str:
    return key.rsplit("-", 1)[0]
