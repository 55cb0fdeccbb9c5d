"""Drift against the code (T4, ADR-0007): a document with ``refs`` drifts when commits on a
configured code repository touch files its globs cover after the document's own last change
in the knowledge repository.

A refresh reads each repository's new commits (:mod:`briefd.sources.code`: a URL is fetched,
a local checkout only read; a first read goes back to the oldest governed document's last
change) and stores them; then drift is brought up to date incrementally — documents whose
``refs`` or last change moved are checked against every stored commit, the others only
against the new commits (:func:`detect` is pure). It runs after every index run, so after
every sync, and before ``briefd drift``; a repository that fails keeps its stored commits and
reports its error.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from briefd.errors import BriefdError
from briefd.settings import Settings
from briefd.sources import code, knowledge
from briefd.sources.code import CodeCommit
from briefd.sources.history import shallow_cut
from briefd.sources.refs import covers_any, paths_covered, taken_back
from briefd.store import code as code_table
from briefd.store.activity import now_iso
from briefd.store.code import DriftRow, GovernedDocument, RepoState
from briefd.store.db import Store, opened

COMMITS_SHOWN = 20  # per drifting document, newest first (the count covers all)
UNREAD = "not read yet: `briefd drift` (without --no-refresh) or the next sync reads it"

# what a drifting document asks of its team (the texts and the dashboard say it): the report
# read as a list to watch, not to act on
DRIFT_FIX = (
    "Bring each up to date with the code commits listed and commit it: a commit of the "
    "document after them clears its drift at the next sync or index run (one that keeps its "
    "text, a review, must still change the file: a `reviewed:` date in its front matter)."
)


@dataclass(frozen=True, slots=True)
class DocumentDrift:
    """A drifting document: its last change, how many commits since touched what it governs,
    when the first came and how many days ago, and the newest ``COMMITS_SHOWN`` of them
    (each with the governed paths it touched)."""

    doc_path: str
    title: str
    refs: tuple[str, ...]
    updated_at: str
    commit_count: int
    since: str
    days: int
    commits: tuple[CodeCommit, ...]


@dataclass(frozen=True, slots=True)
class UncoveredRefs:
    """A document whose ``refs`` globs (these) cover no file of any code repository at the
    commit read last: a typo, or code moved or deleted since. Such a glob can never drift."""

    doc_path: str
    globs: tuple[str, ...]


@dataclass(frozen=True)  # no slots: the MCP SDK reads class attributes as defaults
class DriftReport:
    checked_at: str
    governed: int  # documents with refs
    repos: tuple[RepoState, ...]
    documents: tuple[DocumentDrift, ...]  # longest drifting first
    warnings: tuple[str, ...] = ()  # what the report cannot see (a shallow knowledge clone)
    drifting: int = 0  # drifting documents, those a page leaves out too
    offset: int = 0  # how many drifting documents, in their order, come before those listed
    # documents with refs that cover no file (checked when every repository was read)
    uncovered: tuple[UncoveredRefs, ...] = ()
    uncovered_count: int = 0  # all of them (an MCP answer lists the first MAX of them)


def page(report: DriftReport, limit: int | None, offset: int = 0) -> DriftReport:
    """``limit`` of the report's drifting documents (all: None) from ``offset``; ``drifting``
    still counts every one. A team whose refs cover much of its code may see thousands drift,
    each with up to ``COMMITS_SHOWN`` commits: megabytes that no agent can be handed whole."""
    end = None if limit is None else offset + limit
    return replace(report, documents=report.documents[offset:end], offset=offset)


def detect(docs: Sequence[GovernedDocument], commits: Sequence[CodeCommit]) -> list[DriftRow]:
    """The (document, commit) pairs of drift: the commit is later than the document's last
    change and touched a path one of its ``refs`` globs covers."""
    touched: dict[str, list[int]] = {}
    for i, commit in enumerate(commits):
        for path in commit.paths:
            touched.setdefault(path, []).append(i)
    covered = {glob: paths_covered(glob, touched) for doc in docs for glob in doc.refs}
    ats = [c.at for c in commits]
    rows = []
    for doc in docs:
        hits: dict[int, set[str]] = {}
        after = doc.updated_at
        out = taken_back(doc.refs, {p for glob in doc.refs for p in covered[glob]})
        for glob in doc.refs:
            for path in (p for p in covered[glob] if p not in out):
                for i in touched[path]:
                    if ats[i] > after:
                        hits.setdefault(i, set()).add(path)
        for i in sorted(hits):
            c = commits[i]
            rows.append(DriftRow(doc.path, c.repo, c.hash, c.at, tuple(sorted(hits[i]))))
    return rows


def update_drift(conn: sqlite3.Connection, new: Sequence[CodeCommit] = ()) -> None:
    """Bring the stored drift up to date with the documents and the ``new`` commits (not
    stored yet): documents whose refs or last change moved are checked against every commit,
    the others against the new ones."""
    docs = code_table.governed_documents(conn)
    basis = code_table.drift_basis(conn)
    now = {d.path: (d.refs, d.updated_at) for d in docs}
    changed = [d for d in docs if basis.get(d.path) != now[d.path]]
    code_table.forget_drift(conn, [p for p, state in basis.items() if now.get(p) != state])
    rows = []
    if changed:
        oldest = min(d.updated_at for d in changed)
        rows += detect(changed, [*code_table.commits_after(conn, oldest), *new])
    if changed or len(basis) != len(docs):
        code_table.save_drift_basis(conn, docs)
    moved = {d.path for d in changed}
    steady = [d for d in docs if d.path not in moved]
    if steady and new:
        rows += detect(steady, new)
    code_table.add_drift(conn, rows)


def refresh(store: Store, settings: Settings, fetch: bool = True) -> tuple[RepoState, ...]:
    """Read the new commits of every code repository (fetching URLs when ``fetch``), store
    them, forget repositories no longer configured, and bring drift up to date."""
    sources = code.configured(settings)
    with store.read() as conn:
        oldest = min((d.updated_at for d in code_table.governed_documents(conn)), default=None)
        since = oldest or now_iso()
        known = {s.name: s for s in code_table.repo_states(conn)}
        covered = {name for name in known if _covers(conn, name, since)}
    results = [
        _read(source, known.get(source.name), since, fetch, source.name in covered)
        for source in sources
    ]
    states = []
    new = [c for _, commits, _ in results for c in commits]
    with store.write() as conn:
        for name in known.keys() - {s.name for s in sources}:
            code_table.forget_repo(conn, name)
        for source in sources:
            if source.refused is not None:  # read before the rule refused it: nothing is kept
                code_table.forget_repo(conn, source.name, keep_state=True)
        for state, _, complete in results:
            if complete:
                code_table.forget_repo(conn, state.name, keep_state=True)
                code_table.save_read_from(conn, state.name, since)
        update_drift(conn, new)  # before storing them: what is stored is what is not new
        code_table.save_drift_state(conn)  # bundles are packed with their drift (B7)
        code_table.save_commits(conn, new)
        for state, _, _ in results:
            counted = replace(state, commits=code_table.commit_count(conn, state.name))
            code_table.save_repo_state(conn, counted)
            states.append(counted)
    return tuple(states)


def _covers(conn: sqlite3.Connection, repo: str, since: str) -> bool:
    """Whether the stored commits of ``repo`` go back to ``since``; when a governed document's
    last change is older (one merged from a branch, a scope added), the repository is read
    again from there, not only its new commits."""
    start = code_table.read_from(conn, repo)
    return start is not None and start <= since


def _read(
    source: code.CodeSource, known: RepoState | None, since: str, fetch: bool, covered: bool
) -> tuple[RepoState, list[CodeCommit], bool]:
    """One repository's state, its new commits, and whether they replace all stored ones
    (read from ``since`` unless the stored ones are ``covered`` from there); on an error its
    stored commits are kept and the error recorded."""
    now = now_iso()
    try:
        root = source.prepare(fetch)
        branch = source.branch(root)
        same = (
            covered
            and known is not None
            and (known.location, known.branch) == (source.location, branch)
        )
        read = source.read(root, branch, known.head if same and known else None, since)
    except BriefdError as exc:
        kept = known if source.refused is None else None  # a refused one: no commit of its
        head, branch_name = (kept.head, kept.branch) if kept else (None, source.repo.branch)
        return (
            RepoState(source.name, source.location, branch_name, head, 0, 0, now, str(exc)),
            [],
            False,
        )
    commits = list(read.commits)
    state = RepoState(source.name, source.location, branch, read.head, 0, len(commits), now, None)
    return state, commits, read.complete


def drift_report(settings: Settings, refresh_first: bool = False) -> DriftReport:
    """The drifting documents, longest drifting first (``refresh_first``: read the code
    repositories before, as :func:`refresh`), on a connection of its own."""
    with opened(settings.db, settings.source) as store:
        if refresh_first:
            refresh(store, settings)
        listed = [code.CodeSource(settings, repo) for repo in settings.code.repos]
        report = _report(store, listed)
        with store.read() as conn:
            cut = shallow_note(conn, settings) if report.governed else None
            docs = code_table.governed_documents(conn) if report.governed else []
    uncovered = _uncovered(docs, report.repos, listed)
    report = replace(report, uncovered=uncovered, uncovered_count=len(uncovered))
    return replace(report, warnings=(cut,)) if cut else report


def uncovered_refs(
    docs: Sequence[GovernedDocument], files: Sequence[str]
) -> tuple[UncoveredRefs, ...]:
    """The documents whose ``refs`` globs (not the ``!`` ones, which take code back) cover
    none of ``files``, each with those globs."""
    unique = {glob for doc in docs for glob in doc.refs if not glob.startswith("!")}
    covering = {glob: covers_any(glob, files) for glob in unique}
    found = []
    for doc in sorted(docs, key=lambda d: d.path):
        globs = tuple(g for g in doc.refs if not g.startswith("!") and not covering[g])
        if globs:
            found.append(UncoveredRefs(doc.path, globs))
    return tuple(found)


def _uncovered(
    docs: Sequence[GovernedDocument],
    repos: Sequence[RepoState],
    configured: Sequence[code.CodeSource],
) -> tuple[UncoveredRefs, ...]:
    """:func:`uncovered_refs` against the files of every configured repository at the commit
    read last; none when one of them is not read (an error, not read yet): a glob may cover
    its files."""
    heads = {r.name: r.head for r in repos if r.head and not r.error}
    if not docs or not configured or any(s.name not in heads for s in configured):
        return ()
    files: list[str] = []
    try:
        for source in configured:
            files += _files(source, heads[source.name])
    except BriefdError:  # moved or deleted since it was read: the next refresh says so
        return ()
    return uncovered_refs(docs, files)


# the dashboard asks every minute: a commit's files do not change
_files_at = functools.lru_cache(maxsize=16)(code.files_at)


def _files(source: code.CodeSource, head: str) -> tuple[str, ...]:
    return _files_at(source.prepare(fetch=False), head, source.timeout)


def shallow_note(conn: sqlite3.Connection, settings: Settings) -> str | None:
    """Why drift is not seen for documents of a shallow knowledge checkout (CI's default
    ``fetch-depth: 1``): git shows its oldest commit adding every file, so each document not
    changed since is dated by that commit, and code changed before it is no drift here. No
    note when the source cannot be read now (moved, a git URL not cloned here): the report
    reads the index alone."""
    try:
        source = knowledge.resolve(settings)
    except BriefdError:
        return None
    cut = shallow_cut(source.root, settings.sync.git_timeout)
    dated = code_table.governed_dated_by(conn, cut) if cut else []
    if not dated:
        return None
    listed = ", ".join(dated[:3]) + (f" and {len(dated) - 3} more" if dated[3:] else "")
    return (
        f"the knowledge source {source.label} is a shallow clone: {listed} "
        f"{'is' if len(dated) == 1 else 'are'} dated by its oldest commit (git shows it adding "
        "every file), so code changed before that commit is not reported as drift; fetch the "
        "whole history (git fetch --unshallow; GitHub Actions: actions/checkout with "
        "fetch-depth: 0), then index again"
    )


def _report(store: Store, configured: Sequence[code.CodeSource]) -> DriftReport:
    now = datetime.now(UTC)
    with store.read() as conn:
        docs = {d.path: d for d in code_table.governed_documents(conn)}
        marks = code_table.drift_marks(conn)
        rows = code_table.newest_drift(conn, COMMITS_SHOWN)
        commits = code_table.commits_by_hash(conn, [(r.repo, r.hash) for r in rows])
        repos = with_unread(code_table.repo_states(conn), configured)
    shown: dict[str, list[CodeCommit]] = {}
    for row in rows:
        governed = replace(commits[(row.repo, row.hash)], paths=row.paths)
        shown.setdefault(row.doc_path, []).append(governed)
    drifting = [
        document_drift(docs[path], count, since, shown.get(path, []), now)
        for path, (count, since) in marks.items()
        if path in docs
    ]
    drifting.sort(key=lambda d: (d.since, d.doc_path))
    at = now.isoformat(timespec="seconds")
    return DriftReport(at, len(docs), tuple(repos), tuple(drifting), drifting=len(drifting))


def with_unread(
    read: Sequence[RepoState], configured: Sequence[code.CodeSource]
) -> list[RepoState]:
    """The states of the repositories read so far, and of those configured but not read yet
    (no sync since they were added to ``code.repos``: nothing of theirs is checked)."""
    names = {r.name for r in read}
    unread = [
        RepoState(s.name, s.location, s.repo.branch, None, 0, 0, None, UNREAD)
        for s in configured
        if s.name not in names
    ]
    return sorted([*read, *unread], key=lambda r: r.name)


def document_drift(
    doc: GovernedDocument, count: int, since: str, commits: list[CodeCommit], now: datetime
) -> DocumentDrift:
    commits.sort(key=lambda c: (c.at, c.repo, c.hash), reverse=True)
    days = max(0, (now - datetime.fromisoformat(since)).days)
    return DocumentDrift(
        doc.path, doc.title, doc.refs, doc.updated_at, count, since, days, tuple(commits)
    )
