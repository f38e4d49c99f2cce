"""One connection to a foldscope database: opening, migrating, transactions, the blob table."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from foldscope.core.errors import StoreError
from foldscope.engine.store.handle import Database
from foldscope.engine.store.schema import (
    _ADD_COLUMN,
    _MIGRATIONS,
    SCHEMA_VERSION,
    _sha256_sql,
    parse_schema_version,
    text_digest,
)

_ROW_SEQ = "(SELECT COALESCE(MAX(seq), 0) + 1 FROM rows)"
_FOLD_SEQ = "(SELECT COALESCE(MAX(seq), 0) + 1 FROM folds)"
"""The next change sequence of a table (its seq index makes this a single lookup)."""


def writable(path: str | Path) -> bool:
    """Whether this process can write a database file and create its WAL companions beside it.

    ``os.access`` reports a read-only mount as not writable even for root.
    """
    p = Path(path)
    return os.access(p.parent, os.W_OK) and (not p.exists() or os.access(p, os.W_OK))


def _connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    # A long busy timeout: readers and the writer share the file, and WAL keeps waits short.
    if not readonly:
        return sqlite3.connect(str(path), timeout=30.0)
    # Read-only at the SQLite level: nothing this connection runs can change the file.
    uri = f"{path.resolve().as_uri()}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=30.0)
    if writable(path):
        return conn
    try:
        # WAL readers need a -shm file beside the database; on a read-only file or directory
        # it may be impossible to create, and then the file is opened as immutable (no
        # locking, no WAL: fine, since nothing can be writing a file no one may write).
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
        return sqlite3.connect(uri + "&immutable=1", uri=True, timeout=30.0)


WAL_SWITCH_WAIT_S = 30.0
"""How long opening a database waits to switch it to WAL while other processes open it too."""


def _wal(conn: sqlite3.Connection) -> None:
    """Put the database in WAL mode (a no-op once it is).

    Switching a new file's journal needs it exclusively. When several processes open a new
    database at once, SQLite answers "database is locked" at once instead of waiting whenever
    waiting could deadlock (one holds a read lock the other's switch needs), so the switch is
    retried, with a growing pause, until it lands or ``WAL_SWITCH_WAIT_S`` passes.
    """
    deadline = time.monotonic() + WAL_SWITCH_WAIT_S
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if conn.in_transaction:
                conn.rollback()
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)  # a bounded back-off between two attempts, not a timing guess
            pause = min(pause * 2, 0.25)


def open_readonly(path: str | Path) -> sqlite3.Connection:
    """A raw connection that cannot write (``mode=ro``; immutable on a read-only file or folder),
    for tools that must read a database whatever its state, such as ``foldscope check``."""
    return _connect(Path(path), readonly=True)


def database_error(path: str | Path, exc: sqlite3.Error) -> StoreError:
    """Phrase an SQLite failure as one line naming the database and what the person can do.

    Args:
        path: the database file.
        exc: what SQLite raised.

    Returns:
        The error to raise instead (the CLI prints it and exits 2).
    """
    detail = " ".join(str(exc).split()) or type(exc).__name__
    lower = detail.lower()
    if "malformed" in lower or "not a database" in lower or "corrupt" in lower:
        return StoreError(f"{path}: database is corrupt ({detail}); "
                          f"`foldscope check --db {path}` says where")
    if "readonly" in lower or "read-only" in lower:
        return StoreError(f"{path}: database is read-only ({detail}); `report` and the TUI can "
                          "read it, running a sweep needs a writable copy")
    if "disk is full" in lower or "disk i/o error" in lower:
        return StoreError(f"{path}: cannot write ({detail}); every committed fold is kept: free "
                          "space and run again to resume")
    return StoreError(f"{path}: database error ({detail})")


def column_names(cursor: sqlite3.Cursor) -> list[str]:
    """A query's column names, interned: a record built with ``**`` from them matches its
    parameters by identity, not by comparing text (a 10,000-row first poll decodes its rows
    in two thirds of the time)."""
    return [sys.intern(d[0]) for d in cursor.description]


def named(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    """A query's rows as ``{column: value}``, each value found by its column's name (the
    cursor's own names, never an assumed order)."""
    names = column_names(cursor)
    return [dict(zip(names, values)) for values in cursor]


def _open(path: Path, *, readonly: bool) -> Database:
    """A connection with foldscope's SQL functions and foreign keys on."""
    conn = _connect(path, readonly=readonly)
    conn.create_function("foldscope_sha256", 1, _sha256_sql, deterministic=True)
    db = Database(conn)
    try:
        db.execute("PRAGMA foreign_keys=ON")
    except sqlite3.Error:
        db.close()
        raise
    return db


_COPIES: dict[str, tuple[tuple[int, ...], Path, tempfile.TemporaryDirectory[str]]] = {}
_COPIES_LOCK = threading.Lock()


def _file_state(path: Path) -> tuple[int, ...]:
    """What tells one content of a database file (and its WAL) from another."""
    out: list[int] = []
    for p in (path, path.with_name(path.name + "-wal")):
        try:
            st = p.stat()
        except OSError:
            out += [0, 0, 0, 0]
            continue
        out += [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
    return tuple(out)


def migrated_copy(path: Path, source: sqlite3.Connection) -> Path:
    """A copy of an older database, migrated to ``SCHEMA_VERSION`` in a temporary folder, so a
    read-only open reads today's schema and never writes the original.

    The copy is an SQLite backup of ``source`` (one consistent snapshot, WAL included), then
    opened writable once so the ordinary migrations run on it. One copy per file is kept for
    the process while the file is unchanged (a reader that reopens it does not copy again);
    the folder goes when the process ends.

    Args:
        path: the database file (``source`` is a read-only connection to it).
        source: the connection to copy from.

    Returns:
        The migrated copy's path.

    Raises:
        StoreError: the copy could not be made or migrated (named by the original's path).
    """
    key = str(path.resolve())
    state = _file_state(path)
    with _COPIES_LOCK:
        found = _COPIES.get(key)
        if found is not None and found[0] == state and found[1].exists():
            return found[1]
        folder = tempfile.TemporaryDirectory(prefix="foldscope-read-")
        target = Path(folder.name) / path.name
        try:
            copy = sqlite3.connect(str(target))
            try:
                source.backup(copy)
            finally:
                copy.close()
            migrated = StoreConnection(target)
            try:
                # No WAL companions: a reader of the copy needs nothing beside the file.
                migrated.db.execute("PRAGMA journal_mode=DELETE")
            finally:
                migrated.close()
        except StoreError as exc:
            folder.cleanup()
            raise StoreError(str(exc).replace(str(target), str(path))) from None
        except (sqlite3.Error, OSError) as exc:
            folder.cleanup()
            raise StoreError(f"{path}: cannot read this older database through a migrated "
                             f"copy ({' '.join(str(exc).split()) or type(exc).__name__})") from None
        if found is not None:
            found[2].cleanup()  # the file changed: its older copy is not read again
        _COPIES[key] = (state, target, folder)
        return target


class StoreConnection:
    """One connection to a foldscope database, opened and migrated; the repositories share it.
    Connections are thread-bound: one per thread.

    Args:
        path: the database file; created (with parent folders) when missing unless ``readonly``.
        readonly: open an existing database for reading only (the TUI's and reports' mode).
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        if readonly and not self.path.exists():
            raise StoreError(f"{self.path}: no such database")
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a folder, not a database file (give the file, "
                             "e.g. db/demo.sqlite)")
        if not readonly:
            if self.path.exists() and not writable(self.path):
                raise StoreError(f"{self.path}: database is read-only (the file or its folder "
                                 "cannot be written); `report` and the TUI can read it, "
                                 "running a sweep needs a writable copy")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{self.path.parent}: cannot create the database folder "
                                 f"({exc.strerror or exc})") from None
        self.source_version: int | None = None
        try:
            self.db = _open(self.path, readonly=readonly)
        except sqlite3.Error as exc:
            raise database_error(self.path, exc) from None
        try:
            if not readonly:
                _wal(self.db.conn)
                # NORMAL is durable across process crashes in WAL mode; only power loss can drop
                # the last commits, which a rerun resumes anyway.
                self.db.execute("PRAGMA synchronous=NORMAL")
            self._check_and_migrate(readonly)
        except sqlite3.DatabaseError as exc:
            self.db.close()
            if "not a database" in str(exc) or "malformed" in str(exc):
                raise StoreError(f"{self.path}: not a usable foldscope database ({exc})") from None
            raise database_error(self.path, exc) from None
        except StoreError:
            self.db.close()
            raise

    def _version(self) -> int:
        if "meta" not in self.db.table_names():
            return 0
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if not row:
            return 0
        version, problem = parse_schema_version(row[0], newest=None)
        if version is None:
            raise StoreError(f"{self.path}: {problem}; not a usable foldscope database")
        return version

    def _check_and_migrate(self, readonly: bool) -> None:
        tables = set(self.db.table_names())
        version = self._version()
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: database schema version {version} is newer than this foldscope "
                f"understands ({SCHEMA_VERSION}); upgrade foldscope to open it"
            )
        if version == 0 and tables and "sweeps" not in tables:
            raise StoreError(f"{self.path}: not a foldscope database (tables: {', '.join(sorted(tables))})")
        if version == SCHEMA_VERSION:
            return
        if readonly:
            if version == 0:
                raise StoreError(f"{self.path}: database needs migrating from version {version}; "
                                 "open it once with `foldscope run --resume` or the TUI")
            # An older schema read as it is: its copy is migrated by the same steps, then read.
            copy = migrated_copy(self.path, self.db.conn)
            self.db.close()
            self.db = _open(copy, readonly=True)
            self.source_version = version
            return
        for target in range(version + 1, SCHEMA_VERSION + 1):
            # One write transaction per step, taken at once: several processes opening a new
            # or old database together each wait their turn, and a step another one already
            # ran is skipped rather than run twice.
            with self.immediate():
                if self._version() >= target:
                    continue
                for statement in _MIGRATIONS[target].split(";"):
                    if statement.strip() and not self._column_exists(statement):
                        self.db.execute(statement)
                self.db.execute(
                    "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
                    "ON CONFLICT(key) DO UPDATE SET value=excluded.value", [str(target)])

    def _column_exists(self, statement: str) -> bool:
        """True when ``statement`` adds a column the table already has (so a step is safe to
        run on a database that got the column another way, or ran the step half)."""
        match = _ADD_COLUMN.match(statement)
        if match is None:
            return False
        table, column = match.group("table"), match.group("column")
        return any(row[1] == column for row in
                   self.db.execute(f"PRAGMA table_info({table})").fetchall())

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the database file (an older file read through its
        migrated copy keeps its own)."""
        return self.source_version if self.source_version is not None else self._version()

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """A transaction: everything inside commits together or not at all."""
        with self.db.atomic():
            yield

    @contextmanager
    def immediate(self) -> Iterator[None]:
        """A write transaction that takes the write lock at once (``BEGIN IMMEDIATE``).

        For read-then-write decisions (plan a sweep unless one exists, claim a sweep unless it
        is held): a deferred transaction would read, then fail with "database is locked" when
        another writer got in between; this one waits its turn (the busy timeout) before
        reading, so the decision holds when it is written.
        """
        conn = self.db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            raise
        conn.execute("COMMIT")

    def put_blob(self, conn: sqlite3.Connection, text: str) -> str:
        """Store a body once, by its content address, and return the address."""
        digest = text_digest(text)
        conn.execute("INSERT OR IGNORE INTO blobs (digest, body) VALUES (?, ?)", [digest, text])
        return digest


class Repository:
    """A typed view of some of the database's tables over a shared ``StoreConnection``."""

    def __init__(self, conn: StoreConnection) -> None:
        self._conn = conn

    @property
    def db(self) -> Database:
        """The shared database handle."""
        return self._conn.db

    @property
    def path(self) -> Path:
        """The database file."""
        return self._conn.path

    def immediate(self) -> contextlib.AbstractContextManager[None]:
        """A write transaction that takes the write lock at once (``StoreConnection.immediate``)."""
        return self._conn.immediate()
