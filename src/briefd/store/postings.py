"""The index's own BM25 postings, kept in step with FTS5 (R1 at scale).

FTS5 scores every row that matches any query term before it can sort, so a long free-text
query costs ~20 ms on a 60K-chunk index. These tables hold the same statistics as FTS5 (per
token: the chunks that contain it and how often, per column; per chunk: its length in tokens)
so :mod:`briefd.retrieval.bm25` can compute FTS5's exact ``bm25()`` with a few array
operations per term.

Tokens come from FTS5 itself, never from a re-implementation of its tokenizer: a full build
reads the live index through ``fts5vocab``, and an incremental update tokenizes the changed
chunks in a scratch in-memory FTS5 table with the same ``tokenize=`` options.

Every change of an index run is collected in a :class:`Delta` and applied once at its end, in
the same transaction as the chunks, so the postings never describe another index than the one
readers see. ``postings_state`` records the chunks it covers; a reader that finds a different
chunk count falls back to FTS5 (and the next index run rebuilds).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from briefd.store import streams
from briefd.store.changes import TEXT_SQL, Delta
from briefd.text import fold

Progress = Callable[[str, int, int], None]


def _quiet(stage: str, done: int, total: int) -> None:
    return None


FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"  # chunks_fts's tokenize= (m002)
PLAIN_TOKENIZE = FTS_TOKENIZE.removeprefix("porter ")  # the same without the stemmer
COLUMNS = ("title", "heading_path", "content")
FULL_BUILD_SHARE = 0.25  # a run touching more of the chunks than this rebuilds from FTS5
_BATCH = 500

Rows = npt.NDArray[np.int64]
Freqs = npt.NDArray[np.uint16]  # (n, 3): occurrences per column, FTS5's column order


@dataclass(frozen=True, slots=True)
class Coverage:
    """Per chunk (sorted by rowid): length in tokens over all columns and scope number."""

    rows: Rows
    lengths: npt.NDArray[np.int32]
    scope_codes: npt.NDArray[np.uint16]
    scopes: tuple[str, ...]


def apply(conn: sqlite3.Connection, delta: Delta, progress: Progress = _quiet) -> None:
    """Bring the postings up to date with the chunks after an index run (same transaction);
    a full build reports ``progress("postings", terms done, terms)``. The chunks' token
    streams (:mod:`briefd.store.streams`) too."""
    _apply(conn, delta, progress)
    streams.apply(conn, delta, conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


def _apply(conn: sqlite3.Connection, delta: Delta, progress: Progress) -> None:
    if delta.empty() and _state_matches(conn):
        return
    current = load_coverage(conn)
    touched = len(delta.removed) + len(delta.added)
    total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    if delta.full or current is None or touched > FULL_BUILD_SHARE * max(total, 1):
        rebuild(conn, progress)
        return
    expected = len(current.rows) - len(set(delta.removed) & set(current.rows.tolist()))
    if expected + len(delta.added) != total:  # the postings had drifted: start over
        rebuild(conn, progress)
        return
    _update(conn, current, delta)


def rebuild(conn: sqlite3.Connection, progress: Progress = _quiet) -> None:
    """Every posting from the live FTS5 index (a migration, a --rebuild, a large run)."""
    conn.execute("DELETE FROM postings")
    rows, scope_codes, scopes = _chunk_scopes(conn)
    lengths = np.zeros(len(rows), dtype=np.int64)
    for kind in ("instance", "row"):
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.briefd_fts_{kind} "
            f"USING fts5vocab(main, chunks_fts, {kind})"
        )
    terms = conn.execute("SELECT count(*) FROM temp.briefd_fts_row").fetchone()[0]
    instances = conn.execute(_GROUPED_SQL.format(table="temp.briefd_fts_instance"))
    for done, (term, docs, freqs) in enumerate(_by_term(instances), start=1):
        lengths[np.searchsorted(rows, docs)] += freqs.sum(axis=1, dtype=np.int64)
        _write(conn, term, docs, freqs)
        if done % 1000 == 0 or done == terms:
            progress("postings", done, terms)
    _save_coverage(conn, Coverage(rows, lengths.astype(np.int32), scope_codes, scopes))


_GROUPED_SQL = (
    "SELECT term, doc, sum(col = 'title'), sum(col = 'heading_path'), sum(col = 'content') "
    "FROM {table} GROUP BY term, doc ORDER BY term, doc"
)


def _by_term(
    instances: Iterable[tuple[str, int, int, int, int]],
) -> Iterator[tuple[str, Rows, Freqs]]:
    """(term, rowids, per-column counts) from rows grouped by term then doc."""
    term: str | None = None
    docs: list[int] = []
    counts: list[tuple[int, int, int]] = []
    for token, doc, title, heading, content in instances:
        if token != term:
            if term is not None:
                yield term, np.asarray(docs, np.int64), np.asarray(counts, np.uint16)
            term, docs, counts = token, [], []
        docs.append(doc)
        counts.append((min(title, 65535), min(heading, 65535), min(content, 65535)))
    if term is not None:
        yield term, np.asarray(docs, np.int64), np.asarray(counts, np.uint16)


def _update(conn: sqlite3.Connection, current: Coverage, delta: Delta) -> None:
    gone = np.asarray(sorted(delta.removed), dtype=np.int64)
    with closing(_scratch()) as scratch:
        old_terms = {t for t, _, _ in _tokenize(scratch, delta.removed.items())}
        added_text = _added_text(conn, delta.added)
        new = {t: (d, f) for t, d, f in _tokenize(scratch, added_text.items())}
    for term, (docs, freqs) in _merged(conn, old_terms | set(new), gone, new):
        if len(docs):
            _write(conn, term, docs, freqs)
        else:
            conn.execute("DELETE FROM postings WHERE term = ?", (term,))
    _save_coverage(conn, _new_coverage(conn, current, gone, delta.added, new))


def _merged(
    conn: sqlite3.Connection,
    terms: set[str],
    gone: Rows,
    new: dict[str, tuple[Rows, Freqs]],
) -> Iterator[tuple[str, tuple[Rows, Freqs]]]:
    ordered = sorted(terms)
    for start in range(0, len(ordered), _BATCH):
        part = ordered[start : start + _BATCH]
        stored = dict(_read(conn, part))
        for term in part:
            docs, freqs = stored.get(term, (np.empty(0, np.int64), np.empty((0, 3), np.uint16)))
            keep = ~np.isin(docs, gone)
            docs, freqs = docs[keep], freqs[keep]
            if term in new:
                docs = np.concatenate([docs, new[term][0]])
                freqs = np.concatenate([freqs, new[term][1]])
                order = np.argsort(docs, kind="stable")
                docs, freqs = docs[order], freqs[order]
            yield term, (docs, freqs)


def _new_coverage(
    conn: sqlite3.Connection,
    current: Coverage,
    gone: Rows,
    added: Sequence[int],
    new: dict[str, tuple[Rows, Freqs]],
) -> Coverage:
    keep = ~np.isin(current.rows, gone)
    rows = current.rows[keep].tolist()
    lengths = dict(zip(rows, current.lengths[keep].tolist(), strict=True))
    codes = current.scope_codes[keep].tolist()
    scope_of = {r: current.scopes[c] for r, c in zip(rows, codes, strict=True)}
    for start in range(0, len(added), _BATCH):
        part = list(added[start : start + _BATCH])
        marks = ", ".join("?" * len(part))
        for rowid, scope in conn.execute(
            f"SELECT rowid, scope FROM chunks WHERE rowid IN ({marks})", part
        ):
            lengths[rowid] = 0
            scope_of[rowid] = scope
    for docs, freqs in new.values():
        for rowid, n in zip(docs.tolist(), freqs.sum(axis=1).tolist(), strict=True):
            lengths[rowid] += n
    return _coverage(lengths, scope_of)


def _coverage(lengths: dict[int, int], scope_of: dict[int, str]) -> Coverage:
    rows = np.asarray(sorted(lengths), dtype=np.int64)
    scopes = tuple(sorted(set(scope_of.values())))
    code = {s: i for i, s in enumerate(scopes)}
    return Coverage(
        rows,
        np.asarray([lengths[r] for r in rows.tolist()], dtype=np.int32),
        np.asarray([code[scope_of[r]] for r in rows.tolist()], dtype=np.uint16),
        scopes,
    )


def _added_text(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, tuple[str, str, str]]:
    found: dict[int, tuple[str, str, str]] = {}
    for start in range(0, len(rowids), _BATCH):
        part = list(rowids[start : start + _BATCH])
        marks = ", ".join("?" * len(part))
        for row in conn.execute(f"{TEXT_SQL} WHERE rowid IN ({marks})", part):
            found[row[0]] = (row[1], row[2], row[3])
    return found


def _scratch() -> sqlite3.Connection:
    """An in-memory FTS5 table tokenizing exactly like chunks_fts."""
    scratch = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    scratch.execute(
        f"CREATE VIRTUAL TABLE t USING fts5({', '.join(COLUMNS)}, tokenize='{FTS_TOKENIZE}')"
    )
    scratch.execute("CREATE VIRTUAL TABLE tv USING fts5vocab(t, instance)")
    scratch.execute(f"CREATE VIRTUAL TABLE p USING fts5(content, tokenize='{PLAIN_TOKENIZE}')")
    scratch.execute("CREATE VIRTUAL TABLE pv USING fts5vocab(p, instance)")
    return scratch


def _tokenize(
    scratch: sqlite3.Connection, texts: Iterable[tuple[int, tuple[str, str, str]]]
) -> Iterator[tuple[str, Rows, Freqs]]:
    scratch.execute("DELETE FROM t")
    scratch.executemany(
        "INSERT INTO t (rowid, title, heading_path, content) VALUES (?, ?, ?, ?)",
        [(rowid, *text) for rowid, text in texts],
    )
    return _by_term(list(scratch.execute(_GROUPED_SQL.format(table="tv"))))


def tokens_of(scratch: sqlite3.Connection, word: str) -> tuple[str, ...]:
    """The FTS5 tokens of one (folded) query word, in order."""
    scratch.execute("DELETE FROM t")
    scratch.execute("INSERT INTO t (rowid, content) VALUES (1, ?)", (fold(word),))
    return tuple(r[0] for r in scratch.execute("SELECT term FROM tv ORDER BY offset"))


def unstemmed_tokens_of(scratch: sqlite3.Connection, word: str) -> tuple[str, ...]:
    """The tokens of one (folded) query word as chunks_fts would have them without Porter."""
    scratch.execute("DELETE FROM p")
    scratch.execute("INSERT INTO p (rowid, content) VALUES (1, ?)", (fold(word),))
    return tuple(r[0] for r in scratch.execute("SELECT term FROM pv ORDER BY offset"))


SHARE_SAMPLE = 2000  # the most widespread words of the index the stemmer is tried on


def stemmed_share(
    conn: sqlite3.Connection, scratch: sqlite3.Connection | None = None, min_letters: int = 6
) -> float:
    """The share of the index's most widespread words (letters only, at least
    ``min_letters``) whose token the stemmer changes: high where it knows the language.
    ``scratch``: a :func:`scratch_tokenizer` to use (None: a new one)."""
    found = conn.execute(
        "SELECT term FROM vocabulary WHERE length(term) >= ? ORDER BY chunks DESC, term LIMIT ?",
        (min_letters, SHARE_SAMPLE * 2),
    ).fetchall()
    words = [w for (w,) in found if w.isalpha()][:SHARE_SAMPLE]
    if not words:
        return 1.0
    if scratch is None:
        with closing(_scratch()) as own:
            return _changed(own, words)
    return _changed(scratch, words)


def _changed(scratch: sqlite3.Connection, words: Sequence[str]) -> float:
    stemmed = _tokens_in_order(scratch, "t", "tv", words)
    plain = _tokens_in_order(scratch, "p", "pv", words)
    if len(stemmed) != len(words) or len(plain) != len(words):  # not one token per word
        by_row = (
            _tokens_by_row(scratch, "t", "tv", words),
            _tokens_by_row(scratch, "p", "pv", words),
        )
        return sum(by_row[0].get(i) != by_row[1].get(i) for i in range(len(words))) / len(words)
    return sum(a != b for a, b in zip(stemmed, plain, strict=True)) / len(words)


def _tokens_in_order(
    scratch: sqlite3.Connection, table: str, vocab: str, words: Sequence[str]
) -> list[str]:
    """The words' tokens in order, the words written as one row (a row per word costs ten
    times as much: FTS5 writes a segment per row)."""
    scratch.execute(f"DELETE FROM {table}")
    scratch.execute(f"INSERT INTO {table} (rowid, content) VALUES (1, ?)", (" ".join(words),))
    return [r[0] for r in scratch.execute(f"SELECT term FROM {vocab} ORDER BY offset")]


def _tokens_by_row(
    scratch: sqlite3.Connection, table: str, vocab: str, words: Sequence[str]
) -> dict[int, tuple[str, ...]]:
    scratch.execute(f"DELETE FROM {table}")
    scratch.executemany(f"INSERT INTO {table} (rowid, content) VALUES (?, ?)", enumerate(words))
    found: dict[int, list[str]] = {}
    for doc, term in scratch.execute(f"SELECT doc, term FROM {vocab} ORDER BY doc, offset"):
        found.setdefault(doc, []).append(term)
    return {doc: tuple(terms) for doc, terms in found.items()}


def scratch_tokenizer() -> sqlite3.Connection:
    return _scratch()


def _write(conn: sqlite3.Connection, term: str, docs: Rows, freqs: Freqs) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO postings (term, rows, freqs) VALUES (?, ?, ?)",
        (term, docs.astype("<i8").tobytes(), freqs.astype("<u2").tobytes()),
    )


def _read(
    conn: sqlite3.Connection, terms: Sequence[str]
) -> Iterator[tuple[str, tuple[Rows, Freqs]]]:
    marks = ", ".join("?" * len(terms))
    for term, docs, freqs in conn.execute(
        f"SELECT term, rows, freqs FROM postings WHERE term IN ({marks})", list(terms)
    ):
        yield term, (np.frombuffer(docs, "<i8"), np.frombuffer(freqs, "<u2").reshape(-1, 3))


def read(conn: sqlite3.Connection, terms: Sequence[str]) -> dict[str, tuple[Rows, Freqs]]:
    """Stored postings of these tokens (absent tokens are left out)."""
    found: dict[str, tuple[Rows, Freqs]] = {}
    for start in range(0, len(terms), _BATCH):  # a pasted page of text: SQLite's variable cap
        found.update(_read(conn, terms[start : start + _BATCH]))
    return found


def read_prefix(conn: sqlite3.Connection, prefix: str) -> tuple[Rows, Freqs] | None:
    """The postings of every token that begins with ``prefix``, merged as FTS5 counts a prefix
    query: the chunks holding any of them, and per column the occurrences of all of them."""
    parts = conn.execute(
        "SELECT rows, freqs FROM postings WHERE term >= ? AND term < ?",
        (prefix, prefix + "\U0010ffff"),
    ).fetchall()
    if not parts:
        return None
    if len(parts) == 1:
        return np.frombuffer(parts[0][0], "<i8"), np.frombuffer(parts[0][1], "<u2").reshape(-1, 3)
    docs = np.concatenate([np.frombuffer(p[0], "<i8") for p in parts])
    freqs = np.concatenate([np.frombuffer(p[1], "<u2").reshape(-1, 3) for p in parts])
    order = np.argsort(docs, kind="stable")
    docs, counts = docs[order], freqs[order].astype(np.int64)
    first = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
    summed = np.add.reduceat(counts, first, axis=0)
    return docs[first], np.minimum(summed, 65535).astype(np.uint16)


def _chunk_scopes(conn: sqlite3.Connection) -> tuple[Rows, npt.NDArray[np.uint16], tuple[str, ...]]:
    pairs = conn.execute("SELECT rowid, scope FROM chunks ORDER BY rowid").fetchall()
    scopes = tuple(sorted({p[1] for p in pairs}))
    code = {s: i for i, s in enumerate(scopes)}
    return (
        np.asarray([p[0] for p in pairs], dtype=np.int64),
        np.asarray([code[p[1]] for p in pairs], dtype=np.uint16),
        scopes,
    )


def _save_coverage(conn: sqlite3.Connection, coverage: Coverage) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO postings_state (id, chunks, rows, lengths, scope_codes, scopes) "
        "VALUES (1, ?, ?, ?, ?, ?)",
        (
            len(coverage.rows),
            coverage.rows.astype("<i8").tobytes(),
            coverage.lengths.astype("<i4").tobytes(),
            coverage.scope_codes.astype("<u2").tobytes(),
            json.dumps(coverage.scopes),
        ),
    )


def load_coverage(conn: sqlite3.Connection) -> Coverage | None:
    row = conn.execute(
        "SELECT rows, lengths, scope_codes, scopes FROM postings_state WHERE id = 1"
    ).fetchone()
    if row is None:
        return None
    try:
        return Coverage(
            np.frombuffer(row[0], "<i8").astype(np.int64),
            np.frombuffer(row[1], "<i4").astype(np.int32),
            np.frombuffer(row[2], "<u2").astype(np.uint16),
            tuple(json.loads(row[3])),
        )
    except (ValueError, TypeError) as exc:  # a page damaged under a reader: not SQLite's error
        raise sqlite3.DatabaseError(
            f"database disk image is malformed (postings_state cannot be read: {exc})"
        ) from None


def _state_matches(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT chunks FROM postings_state WHERE id = 1").fetchone()
    total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    return row is not None and row[0] == total
