"""``briefd index`` when nothing changed (O4): hash the files, compare, report, exit.

Teams run ``briefd index`` from git hooks, cron and CI. When the files, their scopes, the git
commit, the chunker and the embedding model are what the last complete run indexed (one
source key, :mod:`briefd.sources.state`), and no upkeep is due, the answer is the last run's
report with nothing changed — without typer, rich, the parser, numpy or the model. Anything
else (other options, a git URL source, code repositories for drift, a setting error, a
missing or incomplete index) goes to the full command, which does the work or says what is
wrong. This module imports only the standard library and the light parts of briefd.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from briefd.errors import BriefdError
from briefd.model import DocumentProblem, IndexReport, SkippedFile
from briefd.settings import Settings, load_settings

GLOBAL_OPTIONS = ("--db", "--config")
INDEX_OPTIONS = ("--source",)


def index_args(argv: Sequence[str]) -> dict[str, str | bool] | None:
    """``{db, config, source, json}`` when ``argv`` is ``[--db X] [--config Y] index
    [--source DIR] [--json]``; None for anything else (--rebuild, --help, other commands)."""
    found: dict[str, str | bool] = {"json": False}
    items = iter(argv)
    command = False
    for arg in items:
        name, eq, inline = arg.partition("=")
        allowed = INDEX_OPTIONS if command else GLOBAL_OPTIONS
        if arg == "index" and not command:
            command = True
        elif command and arg == "--json":
            found["json"] = True
        elif name in allowed:
            value = inline if eq else next(items, None)
            if not value:
                return None
            found[name.removeprefix("--")] = value
        else:
            return None
    return found if command else None


def unchanged(settings: Settings) -> IndexReport | None:
    """The last run's report when an index run now would change nothing; None otherwise."""
    from briefd.embeddings.registry import model_id_of
    from briefd.sources.state import (
        head_commit,
        index_fingerprint,
        parse_signature,
        read_state,
        source_key,
    )
    from briefd.store import freshness, sync_state
    from briefd.store.migrations import SCHEMA_VERSION

    root = settings.source
    if settings.sync.remote or settings.code.repos or root is None or not root.is_dir():
        return None
    if not settings.db.is_file():
        return None
    started = time.perf_counter()
    model = model_id_of(settings)
    state = read_state(root, settings)
    fingerprint = index_fingerprint(state.hashes, parse_signature(settings))
    head = head_commit(root, settings.sync.git_timeout)
    key = source_key(fingerprint, state.scopes, head, model, root)
    conn = sqlite3.connect(f"file:{settings.db}?mode=ro", uri=True, timeout=5)
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            return None
        if freshness.stored_key(conn) != key or _upkeep_due(conn, settings, fingerprint):
            return None
        conn.row_factory = sqlite3.Row
        last = sync_state.index_report(conn)
    finally:
        conn.close()
    return _report(last, str(root), state.skipped, time.perf_counter() - started)


def _upkeep_due(conn: sqlite3.Connection, settings: Settings, fingerprint: str) -> bool:
    from briefd.store import freshness

    now = datetime.now(UTC)
    days = settings.activity.retention_days
    log_cutoff = (now - timedelta(days=days)).isoformat(timespec="seconds") if days > 0 else None
    manifests = now - timedelta(days=settings.bundles.manifest_days)
    return freshness.upkeep_due(
        conn, fingerprint, log_cutoff, manifests.isoformat(timespec="seconds")
    )


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
    )


def report_lines(report: IndexReport) -> list[str]:
    """The human report of an index run (the full command prints the same lines)."""
    verb = "Rebuilt" if report.rebuilt else "Indexed"
    changed = len(report.added) + len(report.changed)
    lines = [
        f"{verb} {report.source}: {report.documents} documents, {report.chunks} chunks "
        f"in {report.seconds:.2f}s",
        f"  {changed} changed ({len(report.added)} new), {len(report.deleted)} deleted, "
        f"{report.unchanged} unchanged, {len(report.skipped)} skipped",
    ]
    if report.rechunked:
        lines.append(
            "  every document was chunked again: this briefd chunks differently than the one "
            "that built the index (or chunking settings changed)"
        )
    if report.embedding_model:
        lines.append(
            f"  vectors: {report.embedded} embedded with {report.embedding_model}, "
            f"{report.vectors_missing} missing"
        )
    if report.embedding_model and report.replaced_models:
        lines.append(
            f"  the embedding model changed ({', '.join(report.replaced_models)} → "
            f"{report.embedding_model}): chunks are embedded again, the old vectors are "
            "dropped once every chunk has a new one"
        )
    if report.embedding_error:
        lines.append(
            f"  warning: embeddings incomplete ({report.embedding_error}); lexical search works, "
            "run `briefd index` again to embed what is missing"
        )
    lines += [f"  skipped {item.path}: {item.reason}" for item in report.skipped]
    lines += [f"  warning {p.path}: {p.problem}" for p in report.problems]
    return lines


def main(argv: Sequence[str]) -> int | None:
    """Answer ``briefd index`` here when nothing changed (exit status 0); None: run the full
    command instead."""
    args = index_args(argv)
    if args is None:
        return None
    try:
        config = Path(str(args["config"])) if "config" in args else None
        overrides: dict[str, object] = {
            k: Path(str(args[k])) for k in ("db", "source") if k in args
        }
        report = unchanged(load_settings(config, overrides=overrides))
    except (BriefdError, OSError, sqlite3.Error, ValueError, KeyError, TypeError):
        return None  # the full command reports it properly
    if report is None:
        return None
    if args["json"]:
        sys.stdout.write(json.dumps(dataclasses.asdict(report), ensure_ascii=False, indent=2))
        sys.stdout.write("\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in report_lines(report)))
    return 0
