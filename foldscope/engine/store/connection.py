"""One connection to a foldscope database: opening, migrating, transactions, the blob table."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from foldscope.core.errors import StoreError
from foldscope.engine.store.schema import (
    _ADD_COLUMN,
    _LEGACY_CARRIER_STATE,
    _LEGACY_CLASS,
    _LEGACY_DETAIL,
    _MIGRATIONS,
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    _sha256_sql,
    parse_schema_version,
    text_digest,
)

_CHECK_FIELDS = ("label", "expected", "found", "correct", "abstained", "unit_dropped",
                 "in_carrier", "classification", "carrier_state", "class_detail", "id",
                 "row_id", "flagged")
_CHECK_COLUMNS = ", ".join(_CHECK_FIELDS)
_LEGACY_CHECK_COLUMNS = _CHECK_COLUMNS.replace(
    "classification, carrier_state, class_detail",
    f"{_LEGACY_CLASS}, {_LEGACY_CARRIER_STATE}, {_LEGACY_DETAIL}")
"""The check columns of a database read before schema 4 (read-only, not migrated)."""

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
        try:
            conn = _connect(self.path, readonly=readonly)
            conn.create_function("foldscope_sha256", 1, _sha256_sql, deterministic=True)
            self.db = sqlite_utils.Database(conn)
        except sqlite3.Error as exc:
            raise database_error(self.path, exc) from None
        try:
            self.db.execute("PRAGMA foreign_keys=ON")
            if not readonly:
                self.db.execute("PRAGMA journal_mode=WAL")
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
        self.has_seq = version >= 3 or version == 0
        self.has_blobs = version >= 7 or version == 0
        self.has_activity = version >= 10 or version == 0
        self.check_columns = (_CHECK_COLUMNS if version >= 4 or version == 0
                               else _LEGACY_CHECK_COLUMNS)
        self.has_timeline = version >= 8 or version == 0
        self.has_finish = version >= 11 or version == 0
        if version == SCHEMA_VERSION or (readonly and version in READABLE_VERSIONS):
            return
        if readonly:
            raise StoreError(f"{self.path}: database needs migrating from version {version}; "
                             "open it once with `foldscope run --resume` or the TUI")
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
        self.has_seq = True
        self.has_blobs = True
        self.has_activity = True
        self.check_columns = _CHECK_COLUMNS
        self.has_timeline = True
        self.has_finish = True

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
        """The schema version recorded in the database."""
        return self._version()

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
    def db(self) -> sqlite_utils.Database:
        """The shared database handle."""
        return self._conn.db

    @property
    def path(self) -> Path:
        """The database file."""
        return self._conn.path

    def immediate(self) -> contextlib.AbstractContextManager[None]:
        """A write transaction that takes the write lock at once (``StoreConnection.immediate``)."""
        return self._conn.immediate()

    @property
    def _has_seq(self) -> bool:
        return self._conn.has_seq

    @property
    def _has_blobs(self) -> bool:
        return self._conn.has_blobs

    @property
    def _has_activity(self) -> bool:
        return self._conn.has_activity

    @property
    def _has_timeline(self) -> bool:
        return self._conn.has_timeline

    @property
    def _has_finish(self) -> bool:
        return self._conn.has_finish

    @property
    def _check_columns(self) -> str:
        return self._conn.check_columns
