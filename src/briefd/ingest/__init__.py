"""Indexing a knowledge source: scan → hash → parse changed files → one write transaction.

Incremental by content hash: unchanged files are neither parsed nor written, deleted files are
removed, and every change of one run lands in a single transaction, so readers in other
processes see either the previous index or the new one. ``rebuild`` replaces everything, also
in one transaction.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from briefd.embeddings.base import Embedder
from briefd.errors import BriefdError, ConfigError, SourceError
from briefd.ingest.embedding import EmbedOutcome, embed_changes
from briefd.markdown.document import parse_document
from briefd.markdown.spool import Spool
from briefd.model import Document, DocumentProblem, IndexReport, SkippedFile
from briefd.retrieval import calibration
from briefd.settings import Settings
from briefd.sources import moves
from briefd.sources.clashes import name_clashes
from briefd.sources.history import Change
from briefd.sources.knowledge import resolve as resolve_source
from briefd.sources.layout import Layout, misplaced_source
from briefd.sources.scan import SourceFile, scan
from briefd.sources.state import (
    LFS_POINTER,
    chunking_part,
    head_commit,
    index_fingerprint,
    keep_indexed,
    lfs_pointer,
    not_utf8,
    outside_scopes,
    parse_signature,
    skipped_files,
    source_key,
    vectors_id,
    without_commits,
)
from briefd.sources.worktree import folder_in_work_tree
from briefd.store import activity, postings, sync_state
from briefd.store import documents as docs_table
from briefd.store.changes import Delta
from briefd.store.db import Store, open_for_writing
from briefd.store.freshness import NO_COMMIT_YET, SERVED_COMMIT, SOURCE_HEAD, SOURCE_KEY
from briefd.store.links import (
    PREFIX,
    LinkContext,
    PathChanges,
    resolve_all_links,
    resolve_changed_links,
)
from briefd.store.runlock import WAITING, index_run_lock
from briefd.store.scopes import default_scope_warnings, known_scopes
from briefd.text import double_encoded, without_controls
from briefd.tokens import count_tokens
from briefd.vectors import store as vector_store

Progress = Callable[[str, int, int], None]


SKIPPED = docs_table.SKIPPED


def no_progress(stage: str, done: int, total: int) -> None:
    return None


def index_configured(
    settings: Settings,
    store: Store | None,
    source: Path | None,
    rebuild: bool = False,
    progress: Progress = no_progress,
    embedder: Embedder | None = None,
) -> tuple[Store, IndexReport]:
    """Index ``source`` (default: the configured one, a clone fetched first) into ``store``
    (None: the index file, opened for writing); the store and the report. A run that fails is
    recorded on an index that exists (:func:`sync_state.save_index_failure`), which the next
    run that succeeds clears: without it, ``briefd_last_sync_ok{source="index"}`` was 1
    whatever failed."""
    try:
        knowledge = resolve_source(settings, source)
        root = knowledge.prepare()
        store = store or open_for_writing(settings.db, rebuild)
        history = knowledge.history()
        return store, index_source(store, root, settings, rebuild, progress, embedder, history)
    except BriefdError as exc:
        _record_failure(settings.db, store, str(exc))
        raise


def _record_failure(db: Path, store: Store | None, error: str) -> None:
    """The failed run's error on the index, if there is one that takes a write now."""
    try:
        opened = store or Store.open(db)
    except BriefdError:  # no index (nothing to mark), or one that cannot be opened
        return
    try:
        with opened.write(wait_ms=500) as conn:  # a path that is not UTF-8 said as bytes
            sync_state.save_index_failure(conn, error.encode("utf-8", "backslashreplace").decode())
    except BriefdError:  # a full disk, another writer: the error is said by the caller
        pass
    finally:
        if store is None:
            opened.close()


def index_source(
    store: Store,
    source: Path,
    settings: Settings,
    rebuild: bool = False,
    progress: Progress = no_progress,
    embedder: Embedder | None = None,
    history: Mapping[str, Change] | None = None,
) -> IndexReport:
    """``history`` (path → last commit, from a git checkout) gives documents their
    ``updated_commit`` / ``updated_at``; without it ``updated_at`` is the file time. Runs on
    one index take turns (:func:`index_run_lock`)."""
    with index_run_lock(store.path, lambda holder: progress(WAITING + holder, 0, 1)) as run:
        noted = _noted(progress, run.progress)
        overtaken = None if rebuild or not _LEAVE_OTHERS.get() else _overtaken(store, settings)
        if overtaken is not None:
            raise ConfigError(overtaken)
        with Spool(store.path.expanduser().absolute().parent) as parsed:
            report = _index_source(
                store, source, settings, rebuild, noted, embedder, history, parsed
            )
    _INDEXED_WITH[str(store.path.expanduser().resolve())] = _signature(settings)
    waited = run.waited
    return replace(report, waited_seconds=round(waited, 2)) if waited > 1 else report


def _noted(progress: Progress, lock: Progress) -> Progress:
    """``progress``, its stages also written in the run's lock file for others to read (a
    prompt answered while a first index run builds the index, ``runlock.index_run``)."""

    def both(stage: str, done: int, total: int) -> None:
        lock(stage, done, total)
        progress(stage, done, total)

    return both


# index file → the parse signature this process last indexed it with (_overtaken)
_INDEXED_WITH: dict[str, str] = {}
_LEAVE_OTHERS: ContextVar[bool] = ContextVar("leave_others", default=False)


@contextmanager
def leaving_other_settings() -> Iterator[None]:
    """Index runs in this block (a sync's) refuse to undo another briefd's run with other
    settings: see :func:`_overtaken`."""
    token = _LEAVE_OTHERS.set(True)
    try:
        yield
    finally:
        _LEAVE_OTHERS.reset(token)


def _overtaken(store: Store, settings: Settings) -> str | None:
    """Why this process must not index ``store`` again with ``settings``, or None: it did
    with them, and another briefd has since indexed it with other scopes, chunking, default
    scopes or index.include / exclude globs (a settings file changed after this process read
    it, say a `git pull` of the project's briefd.yaml and a git hook's `briefd index`).
    Indexing it again here would undo that run, and that briefd's next run this one."""
    ours = _signature(settings)
    if _INDEXED_WITH.get(str(store.path.expanduser().resolve())) != ours:
        return None  # not indexed here yet (a first run), or here with other settings
    parse, files = (docs_table.meta(store.conn, key) for key in ("parse", "files"))
    stored = f"{parse}; {files}" if files is not None else parse
    if stored is None or stored == (ours if files is not None else parse_signature(settings)):
        return None
    mine, built = ours.split("; "), stored.split("; ")
    theirs = "; ".join(_setting(p) for p in built if p not in mine)
    here = "; ".join(_setting(p) for p in mine if p not in built)
    return (
        f"the index was last built with other settings than this briefd read at its start "
        f"({theirs}; here: {here}): another briefd indexed it with a settings file that "
        "changed since; restart this one to read it again (or index with its settings); the "
        "index is left as that run built it"
    )


def _files_signature(settings: Settings) -> str:
    """Which files an index run reads besides the scopes: ``index.include`` / ``exclude``."""
    index = settings.index
    include, exclude = ",".join(index.include), ",".join(index.exclude) or "(none)"
    return (
        f"index.include {include}; index.exclude {exclude}; max_file_bytes {index.max_file_bytes}"
    )


def _signature(settings: Settings) -> str:
    return f"{parse_signature(settings)}; {_files_signature(settings)}"


def _setting(part: str) -> str:
    """A part of a parse signature as the settings name it (``links 10 shared a,b`` is the
    default scopes links prefer)."""
    if part.startswith("links ") and " shared " in part:
        return "default_scopes " + part.split(" shared ", 1)[1]
    return part


def _index_source(
    store: Store,
    source: Path,
    settings: Settings,
    rebuild: bool,
    progress: Progress,
    embedder: Embedder | None,
    history: Mapping[str, Change] | None,
    parsed: Spool,
) -> IndexReport:
    started = time.perf_counter()
    # before the files are read: a commit checked out meanwhile (a git pull) is then newer than
    # the one recorded, and a proposal on a document it changed is refused, not let through
    head = head_commit(source, settings.sync.git_timeout)
    found = _changes(store, source, settings, rebuild, progress, parsed)
    current, deleted = found.current, found.deleted
    if not current and deleted:
        raise _emptying(source, len(deleted), store.path, misplaced(source, found, settings))
    fingerprint = index_fingerprint(current, found.signature)
    touched = set(parsed.paths) | set(deleted)
    outcome = embed_changes(store, embedder, parsed, touched, rebuild, settings, progress)
    with store.write() as conn:
        outside = outside_scopes(found.skipped, settings)
        links = LinkContext(
            outside,
            settings.default_scopes,
            folder_in_work_tree(source),
            skipped_files(found.skipped, settings, found.left_out),
        )
        _apply(conn, found, rebuild, progress, links)
        since = docs_table.meta(conn, SERVED_COMMIT)  # the commit the index served until now
        moved = moves.moved(source, since, found.known, current, deleted)
        activity.follow_renames(conn, moved)
        docs_table.record_moves(conn, moved, current)  # broken links say where they went
        docs_table.set_meta(conn, "parse", found.signature)
        docs_table.set_meta(conn, "files", _files_signature(settings))
        if history is not None:
            docs_table.save_history(conn, {p: (c.commit, c.at) for p, c in history.items()})
        docs_table.save_dates_state(conn)  # the days bundles show (B3)
        if embedder is not None:
            vector_store.prune(conn, embedder.model_id, settings.embeddings.window_words)
            outcome.missing = vector_store.uncovered(conn, embedder.model_id)
            outcome.windows = vector_store.window_count(conn, settings.embeddings.window_words)
        report = _report(
            conn, source, found, fingerprint, outcome, settings, embedder, rebuild, started
        )
        _save_state(conn, report)
        complete = embedder is None or (outcome.error is None and outcome.missing == 0)
        scopes = {f.path: f.scope for f in found.files if f.path in current}
        vectors = vectors_id(report.embedding_model, settings.embeddings.window_words)
        key = source_key(fingerprint, scopes, head, vectors, source, outside, links.skipped)
        state = f"{fingerprint}/{outcome.missing}"
        fitted = _gate_fitted(conn, embedder, state, settings)
        docs_table.set_meta(conn, SOURCE_KEY, key if complete and fitted else "")
        docs_table.set_meta(conn, SOURCE_HEAD, head if complete else "")
        docs_table.set_meta(conn, SERVED_COMMIT, head)  # with the documents it served (T1)
        unborn = not head and without_commits(source, settings.sync.git_timeout)
        docs_table.set_meta(conn, NO_COMMIT_YET, "1" if unborn else "")
    if embedder is None:
        return report
    fitting = time.perf_counter()
    if not _calibrate(store, embedder, outcome, state, settings) or fitted:
        return report
    report = replace(  # the run took what the fit took too, and says so
        report,
        seconds=round(time.perf_counter() - started, 3),
        fitting_seconds=round(time.perf_counter() - fitting, 3),
    )
    with store.write() as conn:
        _save_state(conn, report)
        if complete:  # complete once the gate is fitted: a run stopped before is not
            docs_table.set_meta(conn, SOURCE_KEY, key)
    return report


def _report(
    conn: sqlite3.Connection,
    source: Path,
    found: _Changes,
    fingerprint: str,
    outcome: EmbedOutcome,
    settings: Settings,
    embedder: Embedder | None,
    rebuild: bool,
    started: float,
) -> IndexReport:
    """What a run did to the index: its documents, chunks and problems, the files it added,
    changed, deleted and skipped, and what it embedded."""
    current, deleted = found.current, found.deleted
    chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    return IndexReport(
        source=str(source),
        documents=len(current),
        chunks=chunks,
        added=found.added,
        changed=found.changed,
        deleted=tuple(deleted),
        unchanged=len(current) - len(found.added) - len(found.changed),
        skipped=tuple(sorted(found.skipped, key=lambda s: s.path)),
        problems=_problems(conn),
        fingerprint=fingerprint,
        seconds=round(time.perf_counter() - started, 3),
        rebuilt=rebuild,
        embedding_model=embedder.model_id if embedder else None,
        embedded=outcome.embedded,
        replaced_models=outcome.replaced_models,
        vectors_missing=outcome.missing,
        embedding_error=outcome.error,
        rechunked=found.rechunk,
        relinked=found.relink,
        window_words=settings.embeddings.window_words if embedder else 0,
        windows=outcome.windows,
        warnings=default_scope_warnings(settings.default_scopes, known_scopes(conn)),
    )


def _gate_fitted(
    conn: sqlite3.Connection, embedder: Embedder | None, state: str, settings: Settings
) -> bool:
    """Whether the gate needs no fitting to the index state ``state`` (no model: no gate)."""
    if embedder is None:
        return True
    words = settings.embeddings.window_words
    return calibration.fitted(conn, embedder.model_id, state, words)


def _emptying(source: Path, held: int, db: Path, hint: str | None = None) -> SourceError:
    """A source that lost every document is refused: more likely unmounted than emptied, or
    one folder off (``hint``: what to give instead, as a first index run says it)."""
    check = hint or (
        "check that the source path is right and mounted (and index.include / index.exclude "
        "/ scopes in briefd.yaml)"
    )
    return SourceError(
        f"found no document in {source} where the index holds {held}: the index is left as "
        f"it was; {check}. To empty the index, delete {db}"
    )


def misplaced(source: Path, found: _Changes, settings: Settings) -> str | None:
    """What to give as the source when its files outside every scope show it is one folder
    off (:func:`briefd.sources.layout.misplaced_source`); None when they do not."""
    layout = Layout.of(settings)
    outside = [s.path for s in found.skipped if layout.is_outside(s.reason)]
    return misplaced_source(str(source), outside, settings) if outside else None


def _calibrate(
    store: Store, embedder: Embedder, outcome: EmbedOutcome, state: str, settings: Settings
) -> bool:
    """Refit the gate and recall to the index (when embedding worked: whether it did), then
    give back what passages and the probes took: a server keeps what queries use."""
    try:
        if outcome.error is not None:
            return False
        calibration.refresh(store, embedder, state, settings.embeddings.window_words)
        return True
    finally:
        embedder.release()


@dataclass(frozen=True, slots=True)
class _Changes:
    """What an index run found: every file, the changed ones parsed, the deleted paths."""

    files: list[SourceFile]
    skipped: list[SkippedFile]
    signature: str  # how documents are parsed and chunked (a change re-chunks everything)
    rechunk: bool
    relink: bool  # only how links resolve changed: every link is resolved again
    current: dict[str, str]  # path → hash of every readable file
    parsed: Spool
    mtimes: dict[str, float]
    deleted: list[str]
    added: tuple[str, ...]
    changed: tuple[str, ...]
    known: Mapping[str, str]  # path → hash of every document indexed before the run
    left_out: dict[str, str]  # documents index.exclude or a .gitignore leave out: why


def _changes(
    store: Store, source: Path, settings: Settings, rebuild: bool, progress: Progress, parsed: Spool
) -> _Changes:
    """What a run finds: the files, the changed ones parsed into ``parsed``."""
    left_out: dict[str, str] = {}
    files, skipped = scan(source, settings.index, Layout.of(settings), left_out)
    known = {} if rebuild else docs_table.document_hashes(store.conn)
    signature = parse_signature(settings)
    stored = docs_table.meta(store.conn, "parse")
    # only the links part differs (LINKS_VERSION, default_scopes): the chunks stay, every
    # link is resolved again (_apply); it took reading and writing every document again
    rechunk = bool(known) and (stored is None or chunking_part(stored) != chunking_part(signature))
    relink = bool(known) and not rechunk and stored != signature
    current, mtimes = _read_changed(files, known, rechunk, settings, progress, skipped, parsed)
    added = tuple(p for p in parsed.paths if p not in known)
    changed = tuple(p for p in parsed.paths if p in known and known[p] != current[p])
    deleted = sorted(set(known) - set(current))
    return _Changes(
        files,
        skipped,
        signature,
        rechunk,
        relink,
        current,
        parsed,
        mtimes,
        deleted,
        added,
        changed,
        known,
        left_out,
    )


def _apply(
    conn: sqlite3.Connection,
    found: _Changes,
    rebuild: bool,
    progress: Progress,
    links: LinkContext,
) -> None:
    """Write the parsed documents and drop the deleted ones (everything first on a rebuild),
    with their postings; then resolve the links the changes can resolve otherwise, every one
    when what links resolve with besides the documents changed (the files outside every
    scope: ``links.outside``, those skipped, the folder's place in its work tree)."""
    parsed, deleted = found.parsed, found.deleted
    delta = Delta()
    if rebuild:
        docs_table.delete_everything(conn, delta)
    docs_table.delete_documents(conn, deleted, delta)
    now = _iso(time.time())
    for number, doc in enumerate(parsed, start=1):
        if not _same_as_indexed(conn, found, doc):
            docs_table.write_document(conn, doc, now, _iso(found.mtimes[doc.path]), delta)
        progress("write", number, len(parsed))
    postings.apply(conn, delta, progress)
    unscoped = json.dumps(sorted(links.outside), ensure_ascii=False)
    unread = json.dumps(dict(sorted(links.skipped.items())), ensure_ascii=False)
    if (
        rebuild
        or found.relink
        or docs_table.meta(conn, docs_table.UNSCOPED) != unscoped
        or (docs_table.meta(conn, SKIPPED) or "{}") != unread
        or docs_table.meta(conn, PREFIX) != links.prefix
    ):
        resolve_all_links(conn, links)
        docs_table.set_meta(conn, docs_table.UNSCOPED, unscoped)
        docs_table.set_meta(conn, SKIPPED, unread)
        docs_table.set_meta(conn, PREFIX, links.prefix)
    elif parsed or deleted:
        written = list(parsed.paths)
        resolve_changed_links(conn, links, PathChanges(written, found.added, deleted))


def _same_as_indexed(conn: sqlite3.Connection, found: _Changes, doc: Document) -> bool:
    """Whether ``doc``, read again only because the index is re-chunked (its file unchanged),
    came out as the index holds it: an upgraded chunker or front-matter reader changes a few
    documents, and rewriting the others cost their chunks, postings and vocabulary again."""
    unchanged = found.rechunk and found.known.get(doc.path) == doc.content_hash
    return unchanged and docs_table.stored_as_parsed(conn, doc)


def _read_changed(
    files: Sequence[SourceFile],
    known: Mapping[str, str],
    rechunk: bool,
    settings: Settings,
    progress: Progress,
    skipped: list[SkippedFile],
    parsed: Spool,
) -> tuple[dict[str, str], dict[str, float]]:
    """Hash every file; parse those whose hash is not the indexed one (every one when the
    index is chunked again: ``rechunk``) into ``parsed``. Returns (path → hash of every
    readable file and of every document kept as last indexed, the parsed ones' file times);
    unreadable files join ``skipped``, a document indexed before kept as it was also on a
    re-chunk."""
    current: dict[str, str] = {}
    mtimes: dict[str, float] = {}
    unread: dict[str, str] = {}  # path → hash of the files not read as text ('' unreadable)
    for number, file in enumerate(files, start=1):
        progress("scan", number, len(files))
        try:
            raw = file.abs_path.read_bytes()
        except FileNotFoundError:  # removed since the scan: deleted
            continue
        except OSError as exc:  # unreadable (permissions, I/O): the indexed version stays
            unread[file.path] = ""
            skipped.append(SkippedFile(file.path, f"cannot read it ({exc.strerror or exc})"))
            continue
        digest = hashlib.sha256(raw).hexdigest()
        if lfs_pointer(raw):  # before the hash: a pointer an earlier build indexed leaves
            unread[file.path] = digest
            skipped.append(SkippedFile(file.path, LFS_POINTER))
            continue
        if not rechunk and known.get(file.path) == digest:
            current[file.path] = digest
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            unread[file.path] = digest
            skipped.append(SkippedFile(file.path, not_utf8(raw)))
            continue
        current[file.path] = digest
        parsed.append(_parse(file, text, digest, settings))
        mtimes[file.path] = file.mtime
        progress("parse", len(parsed), len(files))
    keep_indexed(known, current, skipped, unread)
    return current, mtimes


def _parse(file: SourceFile, text: str, digest: str, settings: Settings) -> Document:
    doc = parse_document(
        file.path,
        without_controls(text),  # NUL, ESC…: never handed to an agent or a terminal
        file.scope,
        digest,
        count_tokens,
        settings.chunking.target_tokens,
        settings.chunking.max_tokens,
    )
    told = double_encoded(text)  # before without_controls takes its C1 characters
    return doc if told is None else replace(doc, problems=(*doc.problems, told))


def _problems(conn: sqlite3.Connection) -> tuple[DocumentProblem, ...]:
    """Each document's own problems, and the names only a case-sensitive file system tells
    apart (:mod:`briefd.sources.clashes`)."""
    rows = conn.execute("SELECT path, problems FROM documents ORDER BY path").fetchall()
    own = [DocumentProblem(r["path"], p) for r in rows for p in json.loads(r["problems"])]
    clashes = name_clashes(r["path"] for r in rows)
    return tuple(sorted(own + clashes, key=lambda p: p.path))


def _save_state(conn: sqlite3.Connection, report: IndexReport) -> None:
    summary = json.dumps(asdict(report), ensure_ascii=False)
    sync_state.save_index_run(conn, _iso(time.time()), report.fingerprint, summary)


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")
