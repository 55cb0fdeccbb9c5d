"""SQLite connections for the index: WAL, busy timeouts, migrations, read and write transactions.

Several processes (server, CLI, hook) share one file. Writers take ``BEGIN IMMEDIATE`` and do
all of an index run's changes in one transaction, so a reader sees the old index or the new
one, never half of it; readers never block in WAL mode and wait out checkpoints through a
busy timeout instead of failing with ``database is locked``.
"""

from __future__ import annotations

import errno
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from briefd.errors import (
    DamagedIndexError,
    ForeignDatabaseError,
    IndexNotFoundError,
    NewerIndexError,
    StoreError,
)
from briefd.folders import create_private, ignore_in_git, make_index_folder
from briefd.store.deferred import MAX_DEFERRED as MAX_DEFERRED  # at most this many wait
from briefd.store.deferred import Deferred, Write
from briefd.store.migrations import MIGRATIONS, SCHEMA_VERSION
from briefd.store.mounts import (
    disk_full,
    mounted_read_only,
    not_writable,
    read_only_mount,
    unwritable_folder,
)
from briefd.text import fold

BUSY_TIMEOUT_MS = 30_000
THAW_EVERY = 5.0  # seconds between a full-disk store's tries to open its file for writing
FULL = "database or disk is full"  # SQLite's words, as a write on a full disk says them


class Connection(sqlite3.Connection):
    """sqlite3's connection, numbered: caches that follow the index's content tell a reopened
    file (a new connection) apart with :func:`content_version`."""

    opened = 0

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        Connection.opened += 1
        self.number = Connection.opened


def content_version(conn: sqlite3.Connection) -> tuple[int, int]:
    """What the search caches follow: changes when the index's content changes (any
    connection's commit to a table in ``migrations.CONTENT_TABLES``), and when the store has
    reopened its file — not when a session is remembered or a query logged."""
    row = conn.execute("SELECT n FROM content_version").fetchone()
    return getattr(conn, "number", 0), int(row[0])


@dataclass(frozen=True, slots=True)
class Reopened:
    """The index file changed under an open store, which reopened it: ``deleted`` (a new,
    empty index was created in its place) or ``replaced`` (another process put a new file
    there, e.g. ``briefd index --rebuild`` of a damaged one)."""

    what: str
    at: str

    @property
    def notice(self) -> str:
        if self.what == "deleted":
            return (
                f"the index file was deleted at {self.at}; briefd created a new one in its "
                "place and fills it from the source (or run `briefd index`)"
            )
        return f"the index file was replaced at {self.at}; briefd reopened it"


def build_advice(source: Path | str | None) -> str:
    """The command that builds a missing index: ``briefd index`` when the settings name the
    source (it reads that), else with the ``--source`` it needs."""
    if source is None or not str(source):
        return "`briefd index --source DIR`"
    return f"`briefd index` (source: {source}, from the settings)"


class Store:
    """One connection to the index file. Its transactions are serialised across threads (a
    server's worker threads share it): a second thread waits instead of interleaving its
    statements into the first one's transaction. Before each transaction it checks that the
    file at ``path`` is still the one it has open (device and inode) and reopens it when it is
    not; writes that the index cannot take now can be deferred (:meth:`defer`)."""

    def __init__(self, path: Path, conn: sqlite3.Connection, frozen: bool = False) -> None:
        self.path = path
        self.conn = conn
        self.frozen = frozen  # read-only and immutable: see mounts.unwritable_folder
        self.full = False  # frozen because the disk was full at the open: see _thaw
        self._thawed_at = time.monotonic()
        self._lock = threading.RLock()
        self._identity = _identity(path, frozen)
        self.reopened: Reopened | None = None
        self.damaged: str | None = None  # damage a read or write found inside the open file
        self._deferred = Deferred()

    @classmethod
    def open(cls, path: Path, create: bool = False, source: Path | None = None) -> Store:
        """Open (or with ``create``, create) the index at ``path`` and bring its schema up;
        ``source``: the knowledge folder or URL the settings name, for the advice when there
        is no index yet."""
        if not create and not path.exists():
            raise IndexNotFoundError(f"no index at {path}; build one with {build_advice(source)}")
        if not create and _never_written(path):  # `touch briefd.db`: read as no index, and
            raise IndexNotFoundError(  # left empty (no schema written by a reader)
                f"the index file {path} is empty (0 bytes): nothing was indexed into it; "
                f"build it with {build_advice(source)}"
            )
        if path.is_dir():
            raise StoreError(
                f"the index path {path} is a folder; give the index file's path (--db, "
                f"BRIEFD_DB or db: in briefd.yaml), e.g. {path / 'briefd.db'}"
            )
        frozen = not create and unwritable_folder(path)
        try:
            return cls._opened(path, create, frozen)
        except sqlite3.Error as exc:
            if create or frozen or not out_of_space(path, str(exc)):
                raise _open_failed(path, exc) from None
        try:  # a full disk: SQLite cannot size the -shm it reads through; read it immutable
            store = cls._opened(path, create=False, frozen=True)
        except sqlite3.Error as exc:
            raise _open_failed(path, exc) from None
        store.full = True
        return store

    @classmethod
    def _opened(cls, path: Path, create: bool, frozen: bool) -> Store:
        """Connect to ``path`` (read-only and immutable when ``frozen``) and bring its schema
        up; an sqlite3.Error is the caller's to describe."""
        if not frozen:
            try:
                make_index_folder(path.parent)
                if not path.exists():
                    ignore_in_git(path.parent)
                create_private(path)
            except OSError as exc:
                raise StoreError(_no_folder(path, exc)) from None
        conn = sqlite3.connect(
            f"{path.absolute().as_uri()}?mode=ro&immutable=1" if frozen else path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
            factory=Connection,
            uri=frozen,
        )
        conn.row_factory = sqlite3.Row
        conn.create_function("briefd_fold", 1, fold, deterministic=True)
        store = cls(path, conn, frozen)
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            store._refuse_foreign()
            store._migrate()
        except BaseException:
            conn.close()
            raise
        store._identity = _identity(path, frozen)
        return store

    def close(self) -> None:
        self.conn.close()

    def follow_file(self) -> None:
        """Reopen the file at ``path`` now if it was deleted or replaced (see ``reopened``)."""
        with self._lock:
            self._follow_file()

    def _follow_file(self) -> None:
        """Reopen the file at ``path`` when it is not the one open: deleted (a new index is
        created there, so what is written next is not lost with the old file) or replaced.
        Call under the lock, outside a transaction."""
        self._thaw(now=False)
        current = _identity(self.path, self.frozen)
        if current == self._identity or self.conn.in_transaction:
            return
        fresh = Store.open(self.path, create=not self.frozen)
        before = self._identity or ()
        old, self.conn, self._identity = self.conn, fresh.conn, fresh._identity
        self.frozen, self.full = fresh.frozen, fresh.full
        old.close()
        if current is not None and current[:2] == before[:2]:
            return  # the same file, written in place: a frozen store follows its content
        at = datetime.now(UTC).isoformat(timespec="seconds")
        self.damaged = None
        self.reopened = Reopened("deleted" if current is None else "replaced", at)

    def _thaw(self, now: bool) -> None:
        """A store opened read-only for a full disk opens the file the usual way again once
        there is space: before a write (``now``), else at most every :data:`THAW_EVERY`
        seconds. Call under the lock, outside a transaction."""
        if not self.full or self.conn.in_transaction:
            return
        if not now and time.monotonic() - self._thawed_at < THAW_EVERY:
            return
        self._thawed_at = time.monotonic()
        try:  # still full: SQLite fails again where it did at the open, and it stays read-only
            fresh = Store._opened(self.path, create=False, frozen=False)
        except (sqlite3.Error, StoreError):
            return
        old, self.conn, self._identity = self.conn, fresh.conn, fresh._identity
        self.frozen = self.full = False
        old.close()

    def defer(
        self, key: str, write: Write, payload: object = None, said: str | None = None
    ) -> None:
        """Keep a write the index cannot take now (another process's long write, a full
        disk) for :meth:`flush_deferred`; ``payload`` answers :meth:`deferred` meanwhile;
        ``said``: how to name it if it is never written (a write a client was told is stored;
        None for a cache row). See :class:`~briefd.store.deferred.Deferred`."""
        self._deferred.add(key, write, payload, said)

    def deferred(self, key: str) -> object | None:
        """The payload of a write still waiting under ``key`` (None: none is)."""
        return self._deferred.payload(key)

    def deferred_payloads(self, prefix: str) -> list[object]:
        """The payloads of the writes still waiting under keys starting with ``prefix``."""
        return self._deferred.payloads(prefix)

    def unsaved(self) -> list[str]:
        """The writes a client was told are stored that still wait, named (``said``)."""
        return self._deferred.unsaved()

    def flush_deferred(self, wait_ms: int | None = None) -> int:
        """Write what was deferred; how many. On a full disk each write gets its own
        transaction, those a client was told are stored first. A :class:`StoreError` leaves
        what was not written queued for the next try."""
        return self._deferred.flush(lambda: self.write(wait_ms=wait_ms, durable=False))

    def healthy(self) -> bool:
        """SQLite's quick check finds no damage (seconds for a large index: --rebuild only)."""
        try:
            rows = self.conn.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError:
            return False
        return [tuple(r) for r in rows] == [("ok",)]

    def _refuse_foreign(self) -> None:
        """Never add briefd's tables to another application's database (a wrong --db)."""
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        tables = self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if version == 0 and tables:
            raise ForeignDatabaseError(
                f"{self.path} is an SQLite database of another application, not a briefd "
                "index; point --db (or 'db:' in briefd.yaml) at a briefd index or a new file"
            )

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise NewerIndexError(
                f"index {self.path} has schema {version}, newer than this briefd understands "
                f"({SCHEMA_VERSION}): a newer briefd made it; upgrade briefd to use it, or point "
                "--db (or 'db:' in briefd.yaml) at a new file. It is left as it is, --rebuild "
                "included: it holds the query log, feedback and proposals"
            )
        if version == SCHEMA_VERSION:
            return
        if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            for migration in MIGRATIONS:
                if migration.number > version:
                    for statement in _statements(migration.sql):
                        self.conn.execute(statement)
                    if migration.after is not None:
                        migration.after(self.conn)
                    self.conn.execute(f"PRAGMA user_version = {migration.number}")
            self.conn.execute("COMMIT")
        except BaseException:
            self._rollback()  # a full disk ends the transaction itself: say that, not ROLLBACK's
            raise

    @contextmanager
    def write(
        self, wait_ms: int | None = None, durable: bool = True
    ) -> Iterator[sqlite3.Connection]:
        """One write transaction: all or nothing.

        ``wait_ms`` bounds the wait for another process's write (a sync's reindex) instead of
        the default 30 s, for writes a request can do without (caches, logs, counters): they
        fail fast with a StoreError. ``durable=False`` skips the fsync at commit (WAL with
        ``synchronous=NORMAL`` never corrupts; a power cut may forget the last such writes)."""
        with self._lock:
            self._thaw(now=True)
            self._follow_file()
            if self.full:
                raise StoreError(f"cannot write index {self.path}: {FULL}; {RUN_AGAIN}")
            with self._transaction(wait_ms, durable) as conn:
                yield conn

    @contextmanager
    def _transaction(self, wait_ms: int | None, durable: bool) -> Iterator[sqlite3.Connection]:
        with self._pragmas(wait_ms, durable):
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.DatabaseError as exc:  # busy, or a file damaged since it was opened
                raise self._failed(exc) from None
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise self._failed(exc) from None
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        """Roll back unless SQLite already has (a full disk or I/O error ends the
        transaction itself, and a second ROLLBACK would hide the real error)."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    @contextmanager
    def _pragmas(self, wait_ms: int | None, durable: bool) -> Iterator[None]:
        if wait_ms is not None:
            self.conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
        if not durable:
            self.conn.execute("PRAGMA synchronous = NORMAL")
        try:
            yield
        finally:
            if wait_ms is not None:
                self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if not durable:
                self.conn.execute("PRAGMA synchronous = FULL")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees the same snapshot of the index.

        Damage found past the open (a truncated file, a bad page) is a StoreError naming the
        file and the fix, as at the open, so every front end says it the same way."""
        with self._lock:
            self._follow_file()
            try:
                self.conn.execute("BEGIN")
                try:
                    yield self.conn
                finally:
                    self._end_read()
            except sqlite3.DatabaseError as exc:
                raise self._failed(exc) from None

    def _failed(self, exc: sqlite3.Error) -> StoreError:
        """The StoreError that says what ``exc`` means; damage inside the file (a bad page, a
        truncated file) is kept in :attr:`damaged` until another file is opened in its place
        (a rebuild), for ``/api/health``."""
        if _DAMAGE in str(exc) or "not a database" in str(exc):
            at = datetime.now(UTC).isoformat(timespec="seconds")  # no path: health is open
            self.damaged = (
                f"the index file was found damaged at {at} ({exc}); rebuild it: the "
                "dashboard's rebuild, POST /api/admin/rebuild or `briefd index --rebuild`"
            )
        return StoreError(_describe(self.path, exc))

    def _end_read(self) -> None:
        """End a read transaction; a damaged file may refuse the COMMIT, then roll back so
        that the next read starts afresh."""
        if not self.conn.in_transaction:
            return
        try:
            self.conn.execute("COMMIT")
        except sqlite3.DatabaseError:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise


def _never_written(path: Path) -> bool:
    """An index file of 0 bytes with no write-ahead log beside it holding anything."""
    try:
        return path.stat().st_size == 0 and _size(Path(f"{path}-wal")) == 0
    except OSError:
        return False


def out_of_space(path: Path, error: str) -> bool:
    """Whether ``error`` (SQLite's words) reading the index ``path`` is its disk being full,
    with nothing in a -wal that a read-only, immutable read would miss."""
    said = "disk is full" in error or "disk I/O" in error
    return said and disk_full(path) and _size(Path(f"{path}-wal")) == 0


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _identity(path: Path, frozen: bool = False) -> tuple[int, ...] | None:
    """Device and inode of the file at ``path`` (None: there is none); for a ``frozen`` store
    also its size, its modification time and whether a ``-wal`` is beside it: SQLite reads an
    immutable file without looking for changes, so the store reopens it when any changes."""
    try:
        found = path.stat()
    except OSError:
        return None
    if not frozen:
        return found.st_dev, found.st_ino
    try:  # a writer's -wal (made, or written after a full disk got space again)
        wal = Path(f"{path}-wal").stat().st_size + 1
    except OSError:
        wal = 0
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, wal


def _statements(sql: str) -> list[str]:
    """Split a migration into statements (``sqlite3.complete_statement`` knows triggers)."""
    statements, current = [], ""
    for line in sql.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    if current.strip():
        statements.append(current.strip())
    return statements


INDEX_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def is_briefd_or_sqlite(path: Path) -> bool:
    """--rebuild may replace the file: it is gone or empty, an SQLite database (maybe damaged
    inside), or named like an index (``.db``…: a damaged one may have lost its header).
    Anything else (a README passed as --db) is never deleted."""
    try:
        with path.open("rb") as file:
            head = file.read(16)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return head in (b"", b"SQLite format 3\x00") or path.suffix.lower() in INDEX_SUFFIXES


_DAMAGE = "malformed"  # SQLite's "database disk image is malformed"


def _no_folder(path: Path, exc: OSError) -> str:
    """The index's folder cannot be made: a file in its way, no permission, a read-only disk."""
    if exc.errno == errno.EROFS and (why := mounted_read_only(path)):
        return f"cannot create the index {path}: {why}"
    in_way = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    where = exc.filename or path.parent
    why = f"{in_way} is a file, not a folder" if in_way else f"{exc.strerror}: {where}"
    return (
        f"cannot create the index {path} ({why}); pass --db (or 'db:' in briefd.yaml) a path "
        "in a folder you can write"
    )


RUN_AGAIN = "free disk space and run the command again"  # a full disk's advice to a command


BUSY = "another briefd is writing"  # what a write refused for another process's write says


def busy(exc: BaseException) -> bool:
    """Whether ``exc`` is a write refused because another process writes the index (an index
    run, a sync): one that a wait of a few seconds may let through."""
    return isinstance(exc, StoreError) and f"; {BUSY}, " in str(exc)


_REFUSED = ("locked", "busy", "readonly", "read-only", "unable to open", "disk is full", "I/O")


def _open_failed(path: Path, exc: sqlite3.Error) -> StoreError:
    """The error of an open that failed: :class:`DamagedIndexError` for damage or a schema
    that cannot be brought up, which ``--rebuild`` replaces; a plain StoreError when the file
    was refused (another process holds it, no permission, read-only, a full disk or an I/O
    error), which a rebuild could only delete, not make again."""
    said = _describe(path, exc)
    if any(word in str(exc) for word in _REFUSED):
        return StoreError(said)
    return DamagedIndexError(said)


def _describe(path: Path, exc: sqlite3.Error) -> str:
    message = str(exc)
    if "disk is full" in message or "disk I/O" in message:
        return f"cannot write index {path}: {message}; {RUN_AGAIN}"
    if "not a database" in message and not is_briefd_or_sqlite(path):
        return (
            f"{path} is not an SQLite file, so not a briefd index (it is left as it is); point "
            "--db (or 'db:' in briefd.yaml) at a briefd index or a new file"
        )
    if "not a database" in message or "malformed" in message:
        return (
            f"{path} is not a usable briefd index ({message}); "
            "rebuild it with `briefd index --rebuild`"
        )
    if "locked" in message or "busy" in message:
        return f"index {path} is busy ({message}); {BUSY}, try again"
    refused = any(word in message for word in ("readonly", "read-only", "unable to open"))
    if refused and (why := mounted_read_only(path)):
        if "attempt to write" in message:  # read-only and immutable: it reads, but no write
            return f"cannot write the index {path} ({message}): {why}"
        return (
            f"cannot use the index {path} ({message}; SQLite writes {path.name}-wal and "
            f"{path.name}-shm beside it, even to read): {why}"
        )
    if refused and (why := not_writable(path)):  # "unable to open": another user's -shm
        verb = "write" if "readonly" in message else "use"
        return f"cannot {verb} the index {path} ({message}): {why}"
    if "unable to open" in message or "readonly" in message or "read-only" in message:
        return (
            f"cannot open or write the index {path} ({message}); check that its directory "
            "exists and is writable by you, or pass --db (or 'db:' in briefd.yaml) elsewhere"
        )
    return f"index {path}: {message}"


def open_for_writing(db: Path, rebuild: bool) -> Store:
    """The index to write; with ``rebuild``, an SQLite file that is damaged inside is replaced
    (a file that is not SQLite, another application's database or a newer briefd's index never
    is)."""
    try:
        store = Store.open(db, create=True)
    except DamagedIndexError:  # not refused: locked, unreadable, read-only files stay
        if not rebuild or not is_briefd_or_sqlite(db) or read_only_mount(db):
            raise  # a read-only file system: nothing to start over on
        return _start_over(db)
    if rebuild and not store.healthy():
        store.close()
        return _start_over(db)
    return store


def _start_over(db: Path) -> Store:
    for suffix in ("", "-wal", "-shm"):  # unusable file: --rebuild starts over
        Path(str(db) + suffix).unlink(missing_ok=True)
    return Store.open(db, create=True)


@contextmanager
def opened(db: Path, source: Path | None = None) -> Iterator[Store]:
    """The index on a connection of its own, closed after use: for reports that read a lot
    and must neither wait for nor hold up the connection a server shares between requests
    (``source``: the settings' knowledge source, for the advice when there is no index)."""
    store = Store.open(db, source=source)
    try:
        yield store
    finally:
        store.close()
