"""Drift against the code (T4, ADR-0007): a document with ``refs`` drifts when commits on a
configured code repository touch files its globs cover after the document's own last change
in the knowledge repository.

A refresh reads each repository's new commits (:mod:`briefd.sources.code`: a URL is fetched,
a local checkout only read; a first read goes back to the oldest governed document's last
change), stores them, and recomputes which documents drift (:func:`detect`, pure) from every
stored commit. It runs after every index run — so after every sync — and before
``briefd drift``; a repository that fails keeps its stored commits and reports its error.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from briefd.errors import BriefdError
from briefd.settings import Settings
from briefd.sources import code
from briefd.sources.refs import paths_covered
from briefd.store import code as code_table
from briefd.store.code import DriftRow, GovernedDocument, RepoState, StoredCommit
from briefd.store.db import Store


@dataclass(frozen=True, slots=True)
class DocumentDrift:
    """A drifting document: its last change, the commits since that touched what it
    governs (newest first), when the first of them came and how many days ago that was."""

    doc_path: str
    title: str
    refs: tuple[str, ...]
    updated_at: str
    since: str
    days: int
    commits: tuple[DriftCommit, ...]


@dataclass(frozen=True, slots=True)
class DriftCommit:
    repo: str
    hash: str
    at: str
    author: str
    subject: str
    paths: tuple[str, ...]  # the governed paths it touched


@dataclass(frozen=True, slots=True)
class DriftReport:
    checked_at: str
    governed: int  # documents with refs
    repos: tuple[RepoState, ...]
    documents: tuple[DocumentDrift, ...]  # longest drifting first


def detect(docs: Sequence[GovernedDocument], commits: Sequence[StoredCommit]) -> list[DriftRow]:
    """The (document, commit) pairs of drift: the commit is later than the document's last
    change and touched a path one of its ``refs`` globs covers."""
    touched: dict[str, list[int]] = {}
    for i, commit in enumerate(commits):
        for path in commit.paths:
            touched.setdefault(path, []).append(i)
    covered = {glob: paths_covered(glob, touched) for doc in docs for glob in doc.refs}
    rows = []
    for doc in docs:
        hits: dict[int, set[str]] = {}
        for glob in doc.refs:
            for path in covered[glob]:
                for i in touched[path]:
                    if commits[i].at > doc.updated_at:
                        hits.setdefault(i, set()).add(path)
        for i in sorted(hits):
            commit = commits[i]
            rows.append(DriftRow(doc.path, commit.repo, commit.hash, tuple(sorted(hits[i]))))
    return rows


def recompute(conn: sqlite3.Connection) -> int:
    """Store which documents drift now; how many (document, commit) pairs there are."""
    docs = code_table.governed_documents(conn)
    oldest = min((d.updated_at for d in docs), default=None)
    commits = code_table.commits_after(conn, oldest) if oldest is not None else []
    rows = detect(docs, commits)
    code_table.replace_drift(conn, rows)
    return len(rows)


def refresh(store: Store, settings: Settings, fetch: bool = True) -> tuple[RepoState, ...]:
    """Read the new commits of every code repository (fetching URLs when ``fetch``), store
    them, forget repositories no longer configured, and recompute drift."""
    sources = code.configured(settings)
    with store.read() as conn:
        known = {s.name: s for s in code_table.repo_states(conn)}
        oldest = min((d.updated_at for d in code_table.governed_documents(conn)), default=None)
    since = oldest or _now()
    results = [_read(source, known.get(source.name), since, fetch) for source in sources]
    states = []
    with store.write() as conn:
        for name in known.keys() - {s.name for s in sources}:
            code_table.forget_repo(conn, name)
        for state, read in results:
            if read is not None and read.complete:
                code_table.forget_repo(conn, state.name, keep_state=True)
            if read is not None:
                stored = [StoredCommit(state.name, *_fields(c)) for c in read.commits]
                state = replace(state, commits=code_table.save_commits(conn, state.name, stored))
            code_table.save_repo_state(conn, state)
            states.append(state)
        recompute(conn)
    return tuple(states)


def _read(
    source: code.CodeSource, known: RepoState | None, since: str, fetch: bool
) -> tuple[RepoState, code.ReadResult | None]:
    """One repository's new commits, or its error (its stored commits are then kept)."""
    now = _now()
    try:
        root = source.prepare(fetch)
        branch = source.branch(root)
        same = known is not None and (known.location, known.branch) == (source.location, branch)
        last = known.head if same and known is not None else None
        read = source.read(root, branch, last, since)
    except BriefdError as exc:
        kept = known.commits if known else 0
        head = known.head if known else None
        branch_name = known.branch if known else source.repo.branch
        state = RepoState(source.name, source.location, branch_name, head, kept, 0, now, str(exc))
        return state, None
    state = RepoState(
        source.name, source.location, branch, read.head, 0, len(read.commits), now, None
    )
    return state, read


def _fields(commit: code.CodeCommit) -> tuple[str, str, str, str, tuple[str, ...]]:
    return commit.hash, commit.at, commit.author, commit.subject, commit.paths


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def drift_report(store: Store, settings: Settings, refresh_first: bool = False) -> DriftReport:
    """The drifting documents, longest drifting first (``refresh_first``: read the code
    repositories before, as :func:`refresh`)."""
    if refresh_first:
        refresh(store, settings)
    now = datetime.now(UTC)
    with store.read() as conn:
        docs = {d.path: d for d in code_table.governed_documents(conn)}
        rows = code_table.drift_rows(conn)
        commits = code_table.commits_by_hash(conn, [(r.repo, r.hash) for r in rows])
        repos = code_table.repo_states(conn)
    by_doc: dict[str, list[DriftCommit]] = {}
    for row in rows:
        c = commits[(row.repo, row.hash)]
        by_doc.setdefault(row.doc_path, []).append(
            DriftCommit(c.repo, c.hash, c.at, c.author, c.subject, row.paths)
        )
    drifting = [document_drift(docs[path], found, now) for path, found in by_doc.items()]
    drifting.sort(key=lambda d: (d.since, d.doc_path))
    return DriftReport(now.isoformat(timespec="seconds"), len(docs), tuple(repos), tuple(drifting))


def document_drift(
    doc: GovernedDocument, commits: list[DriftCommit], now: datetime
) -> DocumentDrift:
    commits.sort(key=lambda c: (c.at, c.repo, c.hash), reverse=True)
    since = commits[-1].at
    days = max(0, (now - datetime.fromisoformat(since)).days)
    return DocumentDrift(doc.path, doc.title, doc.refs, doc.updated_at, since, days, tuple(commits))
