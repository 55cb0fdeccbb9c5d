"""Each chunk's words in reading order, as the postings count them, with where they stand in
its structure (R1 hybrid: :mod:`briefd.retrieval.proximity` reads them at query time).

Per chunk (``proximity``): ``terms``, every token of its heading path then of its body, each
as the CRC-32 of the token FTS5 writes (uint32 LE; a query word is looked up by the same
hash, and two words of one section sharing a hash is a one-in-a-billion event); ``cells``
(int32 LE): the heading path's token count, then per table cell holding tokens its
(start, end) in ``terms``, table, row and column; ``length``, its tokens over FTS5's three
columns (BM25's length). ``proximity_state`` holds the chunk count and the lengths' sum.

Tokens come from FTS5 itself (a scratch table with chunks_fts's ``tokenize=``), a segment
(the heading path, a run of text, a table cell) at a time: the body is only split where FTS5
separates tokens anyway (line breaks, cell bars), so the segments' tokens are the body's.
Written with the postings, in the same transaction (:func:`briefd.store.postings.apply`).
"""

from __future__ import annotations

import re
import sqlite3
import zlib
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from briefd.store.changes import TEXT_SQL, Delta

TOKENIZE = "porter unicode61 remove_diacritics 2"  # chunks_fts's (postings.FTS_TOKENIZE)
_BATCH = 500
# Matched against a stripped line: spaces around it are no part of the pattern, where two runs
# of \s* side by side cost a line of 20,000 spaces 11 s (every split of the run tried).
_SEPARATOR = re.compile(r"\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CELL = re.compile(r"(?<!\\)\|")
TITLE, HEADING, TEXT = -3, -2, -1  # a segment's "table" when it is no table cell


def term_hash(token: str) -> int:
    """A token's id in ``terms``."""
    return zlib.crc32(token.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of a chunk's text: title, heading path, free text, or one table cell."""

    text: str
    table: int = TEXT
    row: int = 0
    column: int = 0


def segments(content: str) -> list[Segment]:
    """The body in reading order: free text and table cells (a table: a line beginning with
    ``|`` followed by a separator line, outside fenced code)."""
    out: list[Segment] = []
    lines = content.split("\n")
    text: list[str] = []
    code, table, i = False, -1, 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            code = not code
        if not code and _table_starts(lines, i):
            out.append(Segment("\n".join(text)))
            text, table, row = [], table + 1, 0
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                if row != 1 or not _separator(lines[i]):
                    out.extend(_cells(lines[i], table, row))
                row += 1
                i += 1
            continue
        text.append(line)
        i += 1
    out.append(Segment("\n".join(text)))
    return [s for s in out if s.text]


def _table_starts(lines: list[str], i: int) -> bool:
    return lines[i].lstrip().startswith("|") and i + 1 < len(lines) and _separator(lines[i + 1])


def _separator(line: str) -> bool:
    """A table's separator line (``| --- | :-: |``), in time linear in its length."""
    return _SEPARATOR.fullmatch(line.strip()) is not None


def _cells(line: str, table: int, row: int) -> Iterator[Segment]:
    cells = _CELL.split(line.strip())
    if cells and not cells[0].strip():
        cells = cells[1:]
    if cells and not cells[-1].strip():
        cells = cells[:-1]
    for column, cell in enumerate(cells):
        yield Segment(cell, table, row, column)


@dataclass(frozen=True, slots=True)
class State:
    chunks: int
    total: int  # the chunks' lengths summed

    def avgdl(self) -> float:
        return float(self.total) / max(self.chunks, 1) or 1.0


def state(conn: sqlite3.Connection) -> State | None:
    """None before the first index run that wrote them (an index older than them)."""
    try:
        row = conn.execute("SELECT chunks, total FROM proximity_state WHERE id = 1").fetchone()
    except sqlite3.OperationalError:  # not migrated yet (a read-only open of an old index)
        return None
    return None if row is None else State(int(row[0]), int(row[1]))


def read(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, tuple[int, bytes, bytes]]:
    """Per chunk: its length, ``terms`` and ``cells`` as stored (chunks without a stream
    left out)."""
    if not rowids:
        return {}
    marks = ", ".join("?" * len(rowids))
    sql = f"SELECT chunk, length, terms, cells FROM proximity WHERE chunk IN ({marks})"
    return {r[0]: (int(r[1]), r[2], r[3]) for r in conn.execute(sql, list(rowids))}


def apply(conn: sqlite3.Connection, delta: Delta, chunks: int) -> None:
    """Bring the streams up to date after an index run that leaves ``chunks`` chunks (same
    transaction): the changed chunks', or every chunk's when they were never written (an
    index older than them), the run replaced everything, or they had drifted."""
    current = state(conn)
    if current is None or delta.full:
        rebuild(conn)
        return
    if delta.empty():
        if current.chunks != chunks:
            rebuild(conn)
        return
    gone = sorted(delta.removed)
    lost, dropped = 0, 0
    for start in range(0, len(gone), _BATCH):
        part = gone[start : start + _BATCH]
        marks = ", ".join("?" * len(part))
        n, total = conn.execute(
            f"SELECT count(*), coalesce(sum(length), 0) FROM proximity WHERE chunk IN ({marks})",
            part,
        ).fetchone()
        conn.execute(f"DELETE FROM proximity WHERE chunk IN ({marks})", part)
        dropped, lost = dropped + n, lost + total
    added, gained = _write(conn, delta.added)
    after = State(current.chunks - dropped + added, current.total - lost + gained)
    if after.chunks != chunks:  # they had drifted: start over
        rebuild(conn)
        return
    _save(conn, after)


def rebuild(conn: sqlite3.Connection) -> None:
    """Every chunk's stream again."""
    conn.execute("DELETE FROM proximity")
    rowids = [r[0] for r in conn.execute("SELECT rowid FROM chunks ORDER BY rowid")]
    chunks, total = _write(conn, rowids)
    _save(conn, State(chunks, total))


def _save(conn: sqlite3.Connection, now: State) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO proximity_state (id, chunks, total) VALUES (1, ?, ?)",
        (now.chunks, now.total),
    )


def _write(conn: sqlite3.Connection, rowids: Sequence[int]) -> tuple[int, int]:
    """Write these chunks' streams; (chunks written, their lengths summed)."""
    written, total = 0, 0
    with closing(_scratch()) as scratch:
        hashes: dict[str, int] = {}
        for start in range(0, len(rowids), _BATCH):
            part = list(rowids[start : start + _BATCH])
            marks = ", ".join("?" * len(part))
            texts = conn.execute(f"{TEXT_SQL} WHERE rowid IN ({marks})", part).fetchall()
            rows = list(_streams(scratch, texts, hashes))
            conn.executemany(
                "INSERT OR REPLACE INTO proximity (chunk, length, terms, cells) "
                "VALUES (?, ?, ?, ?)",
                rows,
            )
            written += len(rows)
            total += sum(r[1] for r in rows)
            if len(hashes) > 500_000:
                hashes.clear()
    return written, total


def _scratch() -> sqlite3.Connection:
    scratch = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    scratch.execute(f"CREATE VIRTUAL TABLE s USING fts5(c, tokenize='{TOKENIZE}')")
    scratch.execute("CREATE VIRTUAL TABLE sv USING fts5vocab(s, instance)")
    return scratch


def _streams(
    scratch: sqlite3.Connection,
    texts: Sequence[tuple[int, str, str, str]],
    hashes: dict[str, int],
) -> Iterator[tuple[int, int, bytes, bytes]]:
    """(rowid, length, terms, cells) of each chunk of ``texts`` (rowid, title, heading path,
    body: folded as chunks_fts has them)."""
    parts: list[tuple[int, list[Segment]]] = []
    rows: list[tuple[int, str]] = []
    for rowid, title, heading, content in texts:
        segs = [Segment(title or "", TITLE), Segment(heading or "", HEADING)]
        segs += segments(content or "")
        parts.append((rowid, segs))
        rows += [(n, s.text) for n, s in enumerate(segs, start=len(rows) + 1)]
    scratch.execute("BEGIN")
    scratch.execute("DELETE FROM s")
    scratch.executemany("INSERT INTO s (rowid, c) VALUES (?, ?)", rows)
    scratch.execute("COMMIT")
    ids, docs, offsets = _instances(scratch, hashes)
    terms = ids[np.lexsort((offsets, docs))]
    counts = np.bincount(docs, minlength=len(rows) + 1)
    ends = np.cumsum(counts)  # segment d's tokens: terms[ends[d - 1] : ends[d]]
    doc = 1
    for rowid, segs in parts:
        yield _stream(rowid, segs, terms, ends, doc)
        doc += len(segs)


def _instances(
    scratch: sqlite3.Connection, hashes: dict[str, int]
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every token the scratch table holds: its id, segment and offset there."""
    found = scratch.execute("SELECT term, doc, offset FROM sv").fetchall()
    if not found:
        return np.empty(0, np.uint32), np.empty(0, np.int64), np.empty(0, np.int64)
    words, docs, offsets = zip(*found, strict=True)
    for word in dict.fromkeys(words):
        if word not in hashes:
            hashes[word] = term_hash(word)
    ids = np.fromiter(map(hashes.__getitem__, words), dtype=np.uint32, count=len(words))
    return ids, np.asarray(docs, dtype=np.int64), np.asarray(offsets, dtype=np.int64)


def _stream(
    rowid: int,
    segs: list[Segment],
    terms: npt.NDArray[np.uint32],
    ends: npt.NDArray[np.int64],
    first: int,
) -> tuple[int, int, bytes, bytes]:
    title = int(ends[first] - ends[first - 1])
    begin = int(ends[first])  # the heading path's first token (the title is left out)
    mine = terms[begin : int(ends[first + len(segs) - 1])]
    cells = [int(ends[first + 1]) - begin]
    for d, seg in enumerate(segs[2:], start=first + 2):
        start, end = int(ends[d - 1]) - begin, int(ends[d]) - begin
        if seg.table >= 0 and end > start:
            cells += [start, end, seg.table, seg.row, seg.column]
    length = title + len(mine)
    return rowid, length, mine.astype("<u4").tobytes(), np.asarray(cells, "<i4").tobytes()
