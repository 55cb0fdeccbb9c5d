"""``briefd index`` when nothing changed (O4): hash the files, compare, report, exit.

Teams run ``briefd index`` from git hooks, cron and CI. When the files, their scopes, the git
commit, the chunker and the embedding model are what the last complete run indexed (one
source key, :mod:`briefd.sources.state`; or only the git commit moved, with no commit since the
indexed one touching the source folder: a commit to the code beside the knowledge, as a
post-commit hook sees most of them), the relevance gate is fitted to it by this release (not
by the one before an upgrade), and no upkeep is due, the answer is the last run's report with
nothing changed — without typer, rich, the parser, numpy or the model — and the stamp (:mod:`briefd.cli.stamp_write`) that lets the next such run answer before even settings
load. When the run would only remove documents (deleted, or renamed to content the index
holds), it runs here through the API, without the command line and without the model.
Anything else (other options, a git URL source, code repositories for drift, a setting error,
a missing or incomplete index) goes to the full command, which does the work or says what is
wrong."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from briefd.cli import stamp_write
from briefd.cli.stamp import RACY_NS, SECONDS, Args, index_args
from briefd.errors import BriefdError
from briefd.model import DocumentProblem, IndexReport, SkippedFile
from briefd.settings import CONFIG_FILE, Settings, load_settings
from briefd.text import counted, visible

if TYPE_CHECKING:
    from briefd.sources.state import SourceState

__all__ = ["index_args", "main", "refresh_stamp", "report_lines", "unchanged"]


@dataclass(frozen=True, slots=True)
class Unchanged:
    """A run now would change nothing: the last run's report, the source key, and when the
    upkeep an index run does (log retention, bundle manifests) is next due (epoch seconds)."""

    report: IndexReport
    key: str
    fingerprint: str
    due: float


@dataclass(frozen=True, slots=True)
class Removals:
    """A run now would only remove documents (deleted, or renamed to content the index
    holds): the model is not needed, nor the full command line."""

    paths: tuple[str, ...]


def unchanged(settings: Settings) -> IndexReport | None:
    """The last run's report when an index run now would change nothing; None otherwise."""
    found = check(settings)
    return found.report if isinstance(found, Unchanged) else None


def check(settings: Settings, config: Path | None = None) -> Unchanged | Removals | None:
    """What :func:`unchanged` says, with the source key and the next upkeep time; or the
    documents a run would remove when that is all it would do. ``config``: the settings file
    named (``--config``), for :func:`with_unread_settings`."""
    from briefd.embeddings.registry import model_id_of
    from briefd.settings.trust import read_outside_problem
    from briefd.sources.state import head_commit, index_fingerprint, parse_signature, read_state
    from briefd.store import documents as docs_table
    from briefd.store import freshness, sync_state
    from briefd.store.migrations import SCHEMA_VERSION
    from briefd.store.peek import peek
    from briefd.store.scopes import default_scope_warnings, known_scopes

    root = settings.source
    if settings.sync.remote or settings.code.repos or root is None or not root.is_dir():
        return None
    if read_outside_problem(settings.project_named, root, None) is not None:
        return None  # the full run refuses it, saying why
    if not settings.db.is_file():
        return None
    started = time.perf_counter()
    model_id, words = model_id_of(settings), settings.embeddings.window_words
    state = read_state(root, settings)
    head = head_commit(root, settings.sync.git_timeout)
    conn = peek(settings.db)
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            return None
        conn.row_factory = sqlite3.Row
        # the documents a full run keeps as last indexed (unreadable, too large…) count there
        state = state.as_indexed(docs_table.document_hashes(conn))
        fingerprint = index_fingerprint(state.hashes, parse_signature(settings))
        key = _key_of(conn, settings, state, fingerprint, head)
        if not isinstance(key, str):
            return key
        if _upkeep_due(conn, settings, fingerprint):
            return None
        if model_id is not None and not _fitted(conn, model_id, fingerprint, words):
            return None  # another release's fit (an upgrade), or none: the full run fits it
        due = _upkeep_next(freshness.oldest_entries(conn), settings)
        last = sync_state.index_report(conn)
        warnings = default_scope_warnings(settings.default_scopes, known_scopes(conn))
    finally:
        conn.close()
    report = _report(last, str(root), state.skipped, time.perf_counter() - started)
    if report is None:
        return None
    report = with_unread_settings(dataclasses.replace(report, warnings=warnings), settings, config)
    return Unchanged(report, key, fingerprint, due)


def with_unread_settings(
    report: IndexReport, settings: Settings, config: Path | None
) -> IndexReport:
    """``report`` warning that the knowledge folder holds a briefd.yaml which is not the
    settings file read, when files were skipped as outside every scope: each skip says "add
    its folder to 'scopes' in briefd.yaml", and a new user who had written the scopes in that
    file (16 files, 13 skipped) was not told it is not read from there."""
    from briefd.settings.locate import config_candidates, project_folder, settings_file
    from briefd.sources.layout import Layout

    beside = Path(report.source) / CONFIG_FILE
    layout = Layout.of(settings)
    if not beside.is_file() or not any(layout.is_outside(s.reason) for s in report.skipped):
        return report
    read = settings_file(config, os.environ)[0]
    if read is not None and beside.resolve() == read.resolve():
        return report
    if read is not None:
        held = f"the scopes are those of {read.absolute()}"
    else:
        looked = config_candidates(os.environ, project_folder(os.environ))
        where = ", ".join(str(path.absolute()) for path in looked)
        held = f"no settings file was read (looked for {where}): the default scopes hold"
    unread = (
        f"{beside} is not read from the knowledge folder ({held}): run briefd in "
        f"{beside.parent}, or pass --config {beside}"
    )
    return dataclasses.replace(report, warnings=(*report.warnings, unread))


def _key_of(
    conn: sqlite3.Connection, settings: Settings, state: SourceState, fingerprint: str, head: str
) -> str | Removals | None:
    """The source key of ``state`` (the source's files as the index ``conn`` holds them, at
    commit ``head``) when the index is that state's: the key the last complete run stored, or
    that key but for a commit that moved and changed nothing of the knowledge. Else what a run
    would remove when that is all it would do, or None: a full run is needed."""
    from briefd.embeddings.registry import model_id_of
    from briefd.sources.state import (
        outside_scopes,
        parse_signature,
        skipped_files,
        source_key,
        untouched_between,
        vectors_id,
    )
    from briefd.store import freshness

    root = settings.source
    assert root is not None
    model = vectors_id(model_id_of(settings), settings.embeddings.window_words)
    outside = outside_scopes(state.skipped, settings)
    skipped = skipped_files(state.skipped, settings, state.left_out)
    key = source_key(fingerprint, state.scopes, head, model, root, outside, skipped)
    stored = freshness.stored_key(conn)
    if stored == key:
        return key
    old = freshness.stored_head(conn)
    was = source_key(fingerprint, state.scopes, old, model, root, outside, skipped)
    if not stored or was != stored:
        return _removals(conn, state.hashes, parse_signature(settings))
    if not untouched_between(root, old, head, settings.sync.git_timeout):
        return None  # only the commit moved, and it moved the knowledge's history
    return stored  # only the commit moved, elsewhere: the index is this state's


def _removals(
    conn: sqlite3.Connection, current: Mapping[str, str], signature: str
) -> Removals | None:
    """The indexed documents gone from the source, when every file there is indexed as it
    is, or is one of them renamed (the same content); None for any other change."""
    from briefd.store import documents as docs_table

    if not current or docs_table.meta(conn, "parse") != signature:
        return None
    indexed = docs_table.document_hashes(conn)
    gone = {path: digest for path, digest in indexed.items() if path not in current}
    moved = set(gone.values())
    if any(indexed.get(p) != d and d not in moved for p, d in current.items()):
        return None
    return Removals(tuple(sorted(gone))) if gone else None


def _fitted(conn: sqlite3.Connection, model: str, fingerprint: str, words: int) -> bool:
    """Whether the relevance gate (R4) and recall's generic calibration (I8) are what this
    release fits to the complete index state ``fingerprint`` (as an index run checks): an
    upgrade that fits either another way (its version bumped) left the index itself as it
    was, and the run that refits them is not skipped as "nothing to do"."""
    from briefd.recall import generic
    from briefd.retrieval import gate_fit

    gate = gate_fit.fitted_to(f"{fingerprint}/0", words)  # '/0': no chunk without a vector
    if gate_fit.stored_fit(conn, model) != gate:
        return False
    sql = "SELECT fingerprint FROM calibration WHERE model = ?"
    row = conn.execute(sql, (f"{model}|generic",)).fetchone()
    return row is not None and row[0] == generic.fitted_to(gate)


def _upkeep_due(conn: sqlite3.Connection, settings: Settings, fingerprint: str) -> bool:
    from briefd.store import freshness

    now = datetime.now(UTC)
    days = settings.activity.retention_days
    log_cutoff = (now - timedelta(days=days)).isoformat(timespec="seconds") if days > 0 else None
    manifests = now - timedelta(days=settings.bundles.manifest_days)
    activity = settings.activity
    if freshness.text_modes(conn) != freshness.modes_key(activity.log_prompts, activity.hook_mode):
        return True  # a stricter log_prompts empties the text logged before (T6)
    return freshness.upkeep_due(
        conn, fingerprint, log_cutoff, manifests.isoformat(timespec="seconds")
    )


def _upkeep_next(oldest: tuple[str | None, str | None], settings: Settings) -> float:
    """When the next upkeep would delete something: the oldest log entry or bundle manifest
    ageing out, or an entry written from now on (epoch seconds)."""
    now = time.time()
    spans = [(oldest[1], settings.bundles.manifest_days)]
    if settings.activity.retention_days > 0:
        spans.append((oldest[0], settings.activity.retention_days))
    due = [now + timedelta(days=days).total_seconds() for _, days in spans]
    for created, days in spans:
        if created is not None:
            try:
                at = datetime.fromisoformat(created) + timedelta(days=days)
            except ValueError:
                return now  # not a time upkeep can compare: never skip it
            due.append(at.timestamp())
    return min(due)


def _report(
    last: dict[str, object], source: str, skipped: tuple[SkippedFile, ...], seconds: float
) -> IndexReport | None:
    documents = last.get("documents")
    if not isinstance(documents, int) or documents == 0:
        return None
    problems = last.get("problems") or []
    assert isinstance(problems, list)
    return IndexReport(
        source=source,
        documents=documents,
        chunks=int(str(last.get("chunks", 0))),
        added=(),
        changed=(),
        deleted=(),
        unchanged=documents,
        skipped=skipped,
        problems=tuple(DocumentProblem(p["path"], p["problem"]) for p in problems),
        fingerprint=str(last.get("fingerprint", "")),
        seconds=round(seconds, 3),
        embedding_model=str(last["embedding_model"]) if last.get("embedding_model") else None,
        window_words=int(str(last.get("window_words", 0))),
        windows=int(str(last.get("windows", 0))),
    )


def _waited(seconds: float) -> str:
    return f", after waiting {seconds:.1f}s for another index run" if seconds else ""


def report_lines(report: IndexReport) -> list[str]:
    """The human report of an index run (the full command prints the same lines)."""
    verb = "Rebuilt" if report.rebuilt else "Indexed"
    changed = len(report.added) + len(report.changed)
    lines = [
        f"{verb} {report.source}: {counted(report.documents, 'document')}, "
        f"{counted(report.chunks, 'chunk')} "
        f"in {report.seconds:.2f}s{_waited(report.waited_seconds)}",
        f"  {changed} changed ({len(report.added)} new), {len(report.deleted)} deleted, "
        f"{report.unchanged} unchanged, {len(report.skipped)} skipped",
    ]
    if report.rechunked:
        lines.append(
            "  every document was read again: this briefd chunks documents differently than "
            "the one that built the index (or chunking settings or scopes changed)"
        )
    if report.relinked:
        lines.append(
            "  every link was resolved again: this briefd resolves links differently than the "
            "one that built the index (or default_scopes changed)"
        )
    if report.embedding_model:
        windows = (
            f"; long sections also as {report.windows} windows of at most "
            f"{report.window_words} words (embeddings.window_words)"
            if report.window_words
            else ""
        )
        lines.append(
            f"  vectors: {report.embedded} embedded with {report.embedding_model}, "
            f"{report.vectors_missing} missing{windows}"
        )
    if report.fitting_seconds:
        lines.append(
            f"  {report.fitting_seconds:.1f}s of the run fitted the relevance gate and recall to "
            "the index (what its own sections and the off-topic probes score)"
        )
    if report.embedding_model and report.replaced_models:
        lines.append(
            f"  the embedding model changed ({', '.join(report.replaced_models)} → "
            f"{report.embedding_model}): chunks are embedded again, the old vectors are "
            "dropped once every chunk has a new one"
        )
    return [visible(line) for line in lines] + notice_lines(report)


def notice_lines(report: IndexReport) -> list[str]:
    """What an index run left out or found wrong: embeddings it could not make, skipped
    files with their reasons, documents' problems, the run's warnings (``briefd index`` and
    ``briefd sync`` print the same)."""
    lines = []
    if report.embedding_error:
        lines.append(
            f"  warning: embeddings incomplete ({report.embedding_error}); lexical search works, "
            "run `briefd index` again to embed what is missing"
        )
    skipped = [f"  skipped {item.path}: {item.reason}" for item in report.skipped]
    lines += _first(skipped, "skipped files")
    lines += _first([f"  warning {p.path}: {p.problem}" for p in report.problems], "warnings")
    lines += [f"  warning: {warning}" for warning in report.warnings]
    return [visible(line) for line in lines]  # a file's name as a terminal shows it truly


LISTED = 20  # skipped files and documents' problems printed, each; --json holds them all


def _first(lines: list[str], what: str) -> list[str]:
    """The first ``LISTED`` of ``lines``, and how many more there are: a knowledge folder of
    3,000 files none of the scopes takes printed 3,000 lines above the error that says why."""
    if len(lines) <= LISTED:
        return lines
    more = len(lines) - LISTED
    return [*lines[:LISTED], f"  … and {more} more {what} (--json lists every one)"]


def refresh_stamp(
    settings: Settings,
    args: Args,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    racy_ns: int = RACY_NS,
) -> Unchanged | Removals | None:
    """:func:`check`, and the stamp that lets the next run with nothing to do answer before
    settings load (:mod:`briefd.cli.stamp`): written when this one would change nothing,
    removed when it would or when no stamp can be trusted."""
    env = os.environ if env is None else env
    snapshot = stamp_write.take(settings, args, env, cwd or Path.cwd(), racy_ns)
    found = check(settings, Path(str(args["config"])) if "config" in args else None)
    if not isinstance(found, Unchanged) or snapshot is None:
        stamp_write.discard(settings)
        return found
    marked = dataclasses.replace(found.report, seconds=0.0)
    lines = report_lines(marked)
    lines[0] = lines[0].removesuffix("0.00s") + SECONDS + "s"
    text = _json(marked).replace('\n  "seconds": 0.0,', f'\n  "seconds": {SECONDS},', 1)
    human = "".join(line + "\n" for line in lines)
    stamp_write.write(snapshot, found.key, found.fingerprint, found.due, human, text)
    return found


def _json(report: IndexReport) -> str:
    return json.dumps(dataclasses.asdict(report), ensure_ascii=False, indent=2) + "\n"


def main(argv: Sequence[str]) -> int | None:
    """Answer ``briefd index`` here when nothing changed, or when it only removes documents
    (exit status 0); None: run the full command instead."""
    args = index_args(argv)
    if args is None:
        return None
    try:
        settings = _settings(args)
        found = refresh_stamp(settings, args)
        if isinstance(found, Removals):
            report = _remove(settings)
            refresh_stamp(settings, args)
        elif isinstance(found, Unchanged):
            report = found.report
        else:
            return None
    except (BriefdError, OSError, sqlite3.Error, ValueError, KeyError, TypeError):
        return None  # the full command reports it properly
    if args["json"]:
        sys.stdout.write(_json(report))
    else:
        sys.stdout.write("".join(line + "\n" for line in report_lines(report)))
    return 0


def _remove(settings: Settings) -> IndexReport:
    """The index run itself, through the API as the full command makes it, without the
    command line (typer, rich, the service): nothing to embed, so the model never loads."""
    from briefd.api import Briefd

    with Briefd(settings) as api:
        return api.index()


def _settings(args: Args) -> Settings:
    config = Path(str(args["config"])) if "config" in args else None
    overrides: dict[str, object] = {k: Path(str(args[k])) for k in ("db", "source") if k in args}
    return load_settings(config, overrides=overrides)
