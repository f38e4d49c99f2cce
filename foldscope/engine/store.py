"""The SQLite system of record: sweeps, planned rows, folds, answers and per-fact checks."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import operator
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils

from foldscope.core.audit import StoredAudit
from foldscope.core.errors import FlagRefused, StoreError, SweepClaimed
from foldscope.core.fabrication import CLEARED, HumanVerdict, flag_refusal
from foldscope.core.forensics import FactHistory
from foldscope.core.nesting import loads_json
from foldscope.core.row import (
    FOLD_FIELDS,
    ROW_FIELDS,
    Check,
    FoldRecord,
    RowRecord,
    RowResult,
    StoredCheck,
)
from foldscope.core.tally import FinalCarrier, RowClasses, row_classes
from foldscope.core.text import storable
from foldscope.core.validity import Validity
from foldscope.engine.activity import (
    CONTROL_REQUESTS,
    ControlRequest,
    EndpointState,
    RunnerStatus,
    StoredEvent,
)
from foldscope.engine.events import Event, event_from_json
from foldscope.engine.procinfo import RunnerId, claim_alive

CHECK_BATCH = 2000
"""Checks read per fetch when a whole sweep's are iterated."""

EVENT_CAP = 2000
"""The most events a sweep's log keeps (the oldest go first): a 429 storm stays a few hundred
kilobytes, and a watcher reads the newest."""

SCHEMA_VERSION = 11
"""The schema this foldscope writes. Older databases are migrated; newer ones are refused."""

# How a check stored before schema 4 reads in today's answer classes (``core.answers``).
_LEGACY_CARRIER_STATE = "CASE WHEN in_carrier THEN 'present' ELSE 'missing' END"
_LEGACY_DETAIL = ("CASE WHEN classification = 'correct' OR NOT in_carrier THEN NULL "
                  "WHEN found IS NULL OR trim(found) = '' THEN 'nothing' "
                  "WHEN classification = 'abstained' THEN 'abstained' ELSE 'other_value' END")
_LEGACY_CLASS = ("CASE WHEN classification = 'correct' THEN 'correct' "
                 "WHEN in_carrier THEN 'read_failure' "
                 "WHEN classification = 'abstained' THEN 'honest_abstention' "
                 "ELSE 'fabricated' END")

_MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS sweeps (
        id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        name TEXT NOT NULL,
        config_digest TEXT NOT NULL,
        config_json TEXT NOT NULL,
        pins_json TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'planned',
        stop_reason TEXT,
        simulated INTEGER NOT NULL DEFAULT 0,
        updated_at REAL
    );
    CREATE INDEX IF NOT EXISTS sweeps_digest ON sweeps(config_digest);
    CREATE TABLE IF NOT EXISTS rows (
        id INTEGER PRIMARY KEY,
        sweep_id TEXT NOT NULL REFERENCES sweeps(id),
        position INTEGER NOT NULL,
        scenario TEXT NOT NULL,
        model TEXT NOT NULL,
        arm TEXT NOT NULL,
        repeat INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'planned',
        attempt INTEGER NOT NULL DEFAULT 0,
        infra_retries INTEGER NOT NULL DEFAULT 0,
        call_retries INTEGER NOT NULL DEFAULT 0,
        prompt_digest TEXT NOT NULL,
        declared_ceilings_json TEXT NOT NULL,
        output_budget INTEGER NOT NULL,
        carry_cap INTEGER NOT NULL,
        next_chunk INTEGER NOT NULL DEFAULT 0,
        folds_done INTEGER NOT NULL DEFAULT 0,
        catch_up INTEGER NOT NULL DEFAULT 0,
        parse_failures INTEGER NOT NULL DEFAULT 0,
        length_stops INTEGER NOT NULL DEFAULT 0,
        infra_error TEXT,
        answer TEXT,
        simulated INTEGER NOT NULL DEFAULT 0,
        recall REAL,
        correct INTEGER,
        graded INTEGER,
        valid INTEGER,
        validity_reason TEXT,
        retryable INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        est_prompt_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0,
        wall_s REAL NOT NULL DEFAULT 0,
        started_at REAL,
        finished_at REAL,
        UNIQUE (sweep_id, scenario, model, arm, repeat)
    );
    CREATE INDEX IF NOT EXISTS rows_sweep ON rows(sweep_id, position);
    CREATE TABLE IF NOT EXISTS folds (
        id INTEGER PRIMARY KEY,
        row_id INTEGER NOT NULL REFERENCES rows(id),
        fold_index INTEGER NOT NULL,
        first_chunk INTEGER NOT NULL,
        last_chunk INTEGER NOT NULL,
        catch_up INTEGER NOT NULL DEFAULT 0,
        reply TEXT NOT NULL,
        carrier TEXT NOT NULL,
        carrier_chars INTEGER NOT NULL,
        carrier_tokens_est INTEGER NOT NULL,
        clipped_chars INTEGER NOT NULL,
        headings_carried INTEGER NOT NULL,
        fill_fraction REAL,
        parse_status TEXT NOT NULL,
        recovery TEXT NOT NULL DEFAULT '',
        finish_reason TEXT NOT NULL,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        est_prompt_tokens INTEGER NOT NULL,
        latency_s REAL NOT NULL,
        cost_usd REAL,
        attempts INTEGER NOT NULL DEFAULT 1,
        simulated INTEGER NOT NULL DEFAULT 0,
        fact_status_json TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        UNIQUE (row_id, fold_index)
    );
    CREATE TABLE IF NOT EXISTS checks (
        id INTEGER PRIMARY KEY,
        row_id INTEGER NOT NULL REFERENCES rows(id),
        label TEXT NOT NULL,
        expected TEXT NOT NULL,
        found TEXT,
        correct INTEGER NOT NULL,
        abstained INTEGER NOT NULL,
        unit_dropped INTEGER NOT NULL,
        classification TEXT NOT NULL,
        in_carrier INTEGER NOT NULL,
        flagged INTEGER NOT NULL DEFAULT 0,
        UNIQUE (row_id, label)
    );
    """,
    # 2: the response cache, and which folds and rows were answered from it.
    2: """
    CREATE TABLE IF NOT EXISTS cache (
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        reply_json TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    ALTER TABLE folds ADD COLUMN cached INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE folds ADD COLUMN content_class TEXT;
    ALTER TABLE rows ADD COLUMN cached_calls INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sweeps ADD COLUMN runner_pid INTEGER;
    """,
    # 3: a change sequence on rows and folds, so readers fetch only what changed since their
    # last read (a write sets the row's or fold's seq above every seq before it).
    3: """
    ALTER TABLE rows ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE folds ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
    UPDATE rows SET seq = id;
    UPDATE folds SET seq = id;
    CREATE INDEX IF NOT EXISTS rows_seq ON rows(seq);
    CREATE INDEX IF NOT EXISTS rows_sweep_seq ON rows(sweep_id, seq);
    CREATE INDEX IF NOT EXISTS folds_seq ON folds(seq);
    CREATE INDEX IF NOT EXISTS folds_row ON folds(row_id, fold_index);
    """,
    # 4: answer classes judged by the final carrier (core.answers): each check records the
    # carrier's state of the fact and the read-failure sub-kind; classes written before are
    # renamed by what the check recorded of the carrier (whether it held the value). A mutated
    # carrier was not recorded then, so no old check becomes carried_corruption.
    4: f"""
    ALTER TABLE checks ADD COLUMN carrier_state TEXT;
    ALTER TABLE checks ADD COLUMN class_detail TEXT;
    UPDATE checks SET carrier_state = {_LEGACY_CARRIER_STATE}, class_detail = {_LEGACY_DETAIL},
        classification = {_LEGACY_CLASS};
    """,
    # 5: session audits (``foldscope audit --db``): one row per audited session, the audit
    # document as JSON (values already redacted when ``redacted`` is set; ``source`` then NULL).
    5: """
    CREATE TABLE IF NOT EXISTS audits (
        id INTEGER PRIMARY KEY,
        created_at REAL NOT NULL,
        source TEXT,
        session TEXT,
        format TEXT NOT NULL,
        redacted INTEGER NOT NULL,
        compactions INTEGER NOT NULL,
        lost_and_needed INTEGER NOT NULL,
        audit_json TEXT NOT NULL
    );
    """,
    # 6: a claim names its runner by pid and start token (engine.procinfo), so a pid the kernel
    # hands to another process after the runner died does not lock the sweep.
    6: """
    ALTER TABLE sweeps ADD COLUMN runner_started TEXT;
    """,
    # 7: every reply body is stored once, in a content-addressed table (sha256 of its UTF-8),
    # that a fold's reply, a row's answer and a cache entry refer to by digest; the bodies
    # already stored move there (the old columns keep '' so their NOT NULL and "answered"
    # meanings hold). Replies cut at max_reply_bytes are marked.
    7: """
    CREATE TABLE IF NOT EXISTS blobs (digest TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
    ALTER TABLE folds ADD COLUMN reply_digest TEXT;
    ALTER TABLE folds ADD COLUMN reply_truncated INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE rows ADD COLUMN answer_digest TEXT;
    ALTER TABLE rows ADD COLUMN answer_truncated INTEGER NOT NULL DEFAULT 0;
    INSERT OR IGNORE INTO blobs SELECT foldscope_sha256(reply), reply FROM folds;
    UPDATE folds SET reply_digest = foldscope_sha256(reply), reply = '';
    INSERT OR IGNORE INTO blobs SELECT foldscope_sha256(answer), answer FROM rows
        WHERE answer IS NOT NULL;
    UPDATE rows SET answer_digest = foldscope_sha256(answer), answer = '' WHERE answer IS NOT NULL;
    INSERT OR IGNORE INTO blobs SELECT foldscope_sha256(json_extract(reply_json, '$.content')),
        json_extract(reply_json, '$.content') FROM cache
        WHERE json_type(reply_json, '$.content') = 'text';
    UPDATE cache SET reply_json = json_set(json_remove(reply_json, '$.content'),
        '$.content_digest', foldscope_sha256(json_extract(reply_json, '$.content')))
        WHERE json_type(reply_json, '$.content') = 'text';
    """,
    # 8: the fact timeline. Folds record each mutated fact's altered text and named edit (their
    # states now include not_yet), and each row × planted fact its course (fold planted, first
    # carried, lost, returned, final state), kept current as folds commit. Folds written before
    # are read with not_yet derived from their chunks; `foldscope reindex` recomputes them.
    8: """
    ALTER TABLE folds ADD COLUMN fact_mutations_json TEXT NOT NULL DEFAULT '{}';
    CREATE TABLE IF NOT EXISTS fact_histories (
        row_id INTEGER NOT NULL REFERENCES rows(id),
        position INTEGER NOT NULL,
        label TEXT NOT NULL,
        value TEXT NOT NULL,
        graded INTEGER NOT NULL,
        chunk INTEGER NOT NULL,
        planted_fold INTEGER,
        first_carried_fold INTEGER,
        lost_fold INTEGER,
        returned INTEGER NOT NULL,
        final_state TEXT NOT NULL,
        final_altered TEXT,
        final_rule TEXT,
        PRIMARY KEY (row_id, label)
    );
    """,
    # 9: people's verdicts on answer values (core.fabrication): a history per check, the latest
    # entry is its verdict ('cleared' withdraws one), beside the automatic class, never over
    # it. checks.flagged stays as the count the grid reads (latest verdict is 'fabricated').
    # Flags set before verdicts existed become 'fabricated' by an unknown author.
    9: """
    CREATE TABLE IF NOT EXISTS verdicts (
        id INTEGER PRIMARY KEY,
        check_id INTEGER NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
        verdict TEXT NOT NULL,
        reason TEXT,
        author TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS verdicts_check ON verdicts(check_id, id);
    INSERT INTO verdicts (check_id, verdict, reason, author, created_at)
        SELECT id, 'fabricated', NULL, 'unknown', CAST(strftime('%s', 'now') AS REAL)
        FROM checks WHERE flagged
    """,
    # 10: what a watcher in another process needs of a live run. The runner's event log (the
    # kinds ``engine.events.PERSISTED_KINDS`` lists, capped per sweep), the runner's own status
    # (its limiter per endpoint, written at most about once a second), and the control requests
    # (pause, resume, cancel) the runner polls between calls.
    10: """
    CREATE TABLE IF NOT EXISTS events (
        id INTEGER PRIMARY KEY,
        sweep_id TEXT NOT NULL,
        t REAL NOT NULL,
        kind TEXT NOT NULL,
        model TEXT,
        summary TEXT NOT NULL,
        data_json TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS events_sweep ON events(sweep_id, id);
    CREATE TABLE IF NOT EXISTS runner_status (
        sweep_id TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        started_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        finished_at REAL,
        folds_at_start INTEGER NOT NULL,
        finished_at_start INTEGER NOT NULL,
        paused INTEGER NOT NULL DEFAULT 0,
        endpoints_json TEXT NOT NULL DEFAULT '[]'
    );
    CREATE TABLE IF NOT EXISTS sweep_control (
        sweep_id TEXT PRIMARY KEY,
        request TEXT NOT NULL,
        reason TEXT NOT NULL,
        requested_at REAL NOT NULL
    );
    """,
    # 11: the recall answer's finish reason (a cut answer "stopped early"; one that ended by
    # itself did not), and the calls whose cost the provider did not report (a row's cost is
    # then unknown, not $0).
    11: """
    ALTER TABLE rows ADD COLUMN answer_finish TEXT;
    ALTER TABLE rows ADD COLUMN unpriced_calls INTEGER NOT NULL DEFAULT 0;
    """,
}

_ADD_COLUMN = re.compile(r"\s*ALTER\s+TABLE\s+(?P<table>\w+)\s+ADD\s+COLUMN\s+(?P<column>\w+)",
                         re.IGNORECASE)
"""A migration statement that adds a column (skipped when the column is there already)."""

READABLE_VERSIONS = (2, 3, 4, 5, 6, 7, 8, 9, 10)
"""Older schemas a read-only open still reads without migrating (they lack ``seq`` and the
checks' carrier state, and their answer classes are read through the version 4 renaming;
versions before 5 lack the ``audits`` table, which then reads as empty; before 6 a claim has
no start token, and is judged by its pid; before 7 reply bodies sit in their own columns and
nothing is marked cut; before 8 the folds' mutations and the facts' stored courses are
missing, and are derived; before 9 there is no ``verdicts`` table: flags read as
``fabricated`` by an unknown author; before 10 there is no event log, runner status or
control table, which then read as empty; before 11 answers have no stored finish reason and
every call counts as priced)."""

_JSON_FOLD_FIELDS = {"fact_status": "fact_status_json", "fact_mutations": "fact_mutations_json"}
_FOLD_COLUMNS: tuple[str, ...] = tuple(_JSON_FOLD_FIELDS.get(f, f) for f in FOLD_FIELDS)
"""The fold table's record columns: the fold record's fields (its fact states as JSON)."""


def parse_schema_version(value: Any, newest: int | None = SCHEMA_VERSION
                         ) -> tuple[int | None, str | None]:
    """A stated schema version as a number, or why it is not one (text, huge, negative, or
    above ``newest`` when one is given).

    Returns:
        ``(version, None)`` or ``(None, why)``.
    """
    text = (str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool)
            else None)
    if text is None or not text.isdigit() or len(text) > 6:
        return None, f"schema_version {str(value)[:20]!r} is not a version number"
    version = int(text)
    if version < 1 or (newest is not None and version > newest):
        return None, (f"schema_version {version} is outside 1..{newest or '…'} "
                      "(newer than this foldscope, or not a foldscope version)")
    return version, None


def text_digest(text: str) -> str:
    """The content address of a stored body: the sha256 hex digest of its UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha256_sql(text: str | None) -> str | None:
    # The migration's SQL function: NULL stays NULL.
    return None if text is None else text_digest(text)


_REPLY_AT = _FOLD_COLUMNS.index("reply")

_HISTORY_COLUMNS = ("label", "value", "graded", "chunk", "planted_fold", "first_carried_fold",
                    "lost_fold", "returned", "final_state", "final_altered", "final_rule")
"""The ``fact_histories`` columns of one fact's course (``core.forensics.FactHistory``)."""

_HISTORY_GETTER = operator.attrgetter(*_HISTORY_COLUMNS)


def _history_values(history: FactHistory) -> tuple[Any, ...]:
    """One course's column values (booleans as 0/1)."""
    return tuple(int(v) if isinstance(v, bool) else v for v in _HISTORY_GETTER(history))


_ROW_SEQ = "(SELECT COALESCE(MAX(seq), 0) + 1 FROM rows)"
_FOLD_SEQ = "(SELECT COALESCE(MAX(seq), 0) + 1 FROM folds)"
"""The next change sequence of a table (its seq index makes this a single lookup)."""


def _typed(cls: type, names: tuple[str, ...]) -> dict[str, str]:
    annotations = {f: t for c in reversed(cls.__mro__) for f, t in
                   getattr(c, "__annotations__", {}).items()}
    return {name: str(annotations[name]) for name in names}


_FOLD_TYPES = _typed(FoldRecord, FOLD_FIELDS)
_ROW_TYPES = _typed(RowRecord, ROW_FIELDS)


def _from_sql(value: Any, kind: str) -> Any:
    if kind == "bool":
        return bool(value)
    if kind == "bool | None":
        return None if value is None else bool(value)
    return value


_CHECK_FIELDS = ("label", "expected", "found", "correct", "abstained", "unit_dropped",
                 "in_carrier", "classification", "carrier_state", "class_detail", "id",
                 "row_id", "flagged")
_CHECK_COLUMNS = ", ".join(_CHECK_FIELDS)
_LEGACY_CHECK_COLUMNS = _CHECK_COLUMNS.replace(
    "classification, carrier_state, class_detail",
    f"{_LEGACY_CLASS}, {_LEGACY_CARRIER_STATE}, {_LEGACY_DETAIL}")
"""The check columns of a database read before schema 4 (read-only, not migrated)."""


def _check(values: tuple[Any, ...]) -> StoredCheck:
    (label, expected, found, correct, abstained, unit_dropped, in_carrier, classification,
     carrier_state, class_detail, check_id, row_id, flagged) = values
    return StoredCheck(label, expected, found, bool(correct), bool(abstained), bool(unit_dropped),
                       bool(in_carrier), classification, carrier_state, class_detail, check_id,
                       row_id, bool(flagged))


def fold_values(fold: FoldRecord) -> list[Any]:
    """A fold record as the values of ``_FOLD_COLUMNS``."""
    out: list[Any] = []
    for name in FOLD_FIELDS:
        value = getattr(fold, name)
        if name in _JSON_FOLD_FIELDS:
            value = json.dumps(dict(value), ensure_ascii=False)
        elif isinstance(value, bool):
            value = int(value)
        out.append(value)
    return out


def _event(data_json: str | None) -> Event | None:
    """A logged event's JSON read back as its type (None when it is not one this version
    knows)."""
    try:
        data = json.loads(data_json) if data_json else None
    except json.JSONDecodeError:
        return None
    return event_from_json(data) if isinstance(data, dict) else None


def _fold(values: Iterable[Any]) -> FoldRecord:
    data: dict[str, Any] = {}
    for name, value in zip(FOLD_FIELDS, values):
        if name == "fact_mutations":
            data[name] = {k: (v[0], v[1]) for k, v in json.loads(value).items()}
        elif name == "fact_status":
            data[name] = json.loads(value)
        else:
            data[name] = _from_sql(value, _FOLD_TYPES[name])
    return FoldRecord(**data)


_ROW_BOOLS = tuple(i for i, name in enumerate(ROW_FIELDS) if _ROW_TYPES[name] == "bool")
_ROW_OPTIONAL_BOOLS = tuple(i for i, name in enumerate(ROW_FIELDS)
                            if _ROW_TYPES[name] == "bool | None")


def _row(values: Iterable[Any], answer: str | None = None) -> RowRecord:
    # Booleans converted by index, the rest as stored: a first live poll decodes every row.
    out = list(values)
    n = len(out)
    for i in _ROW_BOOLS:
        if i < n:
            out[i] = bool(out[i])
    for i in _ROW_OPTIONAL_BOOLS:
        if i < n and out[i] is not None:
            out[i] = bool(out[i])
    return RowRecord(**dict(zip(ROW_FIELDS, out)), answer=answer)


LIVE_STATUSES = ("running", "paused")
"""Sweep statuses that mean a runner holds the sweep (a paused run still holds it)."""

ROW_DONE = "done"
ROW_FAILED = "failed"
ROW_RUNNING = "running"
ROW_PLANNED = "planned"


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


class Store:
    """One connection to a foldscope database. Connections are thread-bound: one Store per thread.

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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        """Close the connection; an SQLite failure inside the block becomes one StoreError line."""
        try:
            self.close()
        except sqlite3.Error:
            pass
        if isinstance(exc, sqlite3.Error):
            raise database_error(self.path, exc) from None

    # -- schema -----------------------------------------------------------------------------

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
        self._has_seq = version >= 3 or version == 0
        self._has_blobs = version >= 7 or version == 0
        self._has_activity = version >= 10 or version == 0
        self._check_columns = (_CHECK_COLUMNS if version >= 4 or version == 0
                               else _LEGACY_CHECK_COLUMNS)
        self._has_timeline = version >= 8 or version == 0
        self._has_finish = version >= 11 or version == 0
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
        self._has_seq = True
        self._has_blobs = True
        self._has_activity = True
        self._check_columns = _CHECK_COLUMNS
        self._has_timeline = True
        self._has_finish = True

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

    # -- sweeps -----------------------------------------------------------------------------

    def create_sweep(self, sweep: dict[str, Any], rows: Iterable[dict[str, Any]]) -> None:
        """Store a sweep and its whole plan in one transaction, before any call is made."""
        with self.db.atomic():
            self.db.execute(
                "INSERT INTO sweeps (id, created_at, name, config_digest, config_json, pins_json, "
                "status, simulated, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                [sweep["id"], time.time(), sweep["name"], sweep["config_digest"],
                 json.dumps(sweep["config"], ensure_ascii=False, sort_keys=True),
                 json.dumps(sweep.get("pins", {}), ensure_ascii=False, sort_keys=True),
                 "planned", int(sweep.get("simulated", False)), time.time()])
            self.db.conn.executemany(
                "INSERT INTO rows (sweep_id, position, scenario, model, arm, repeat, prompt_digest, "
                "declared_ceilings_json, output_budget, carry_cap, seq) "
                f"VALUES (?,?,?,?,?,?,?,?,?,?,{_ROW_SEQ})",
                [(sweep["id"], r["position"], r["scenario"], r["model"], r["arm"], r["repeat"],
                  r["prompt_digest"], json.dumps(r["declared_ceilings"]), r["output_budget"],
                  r["carry_cap"]) for r in rows])

    def sweep(self, sweep_id: str) -> dict[str, Any] | None:
        """Return one sweep with its config decoded, or None."""
        rows = list(self.db.query("SELECT * FROM sweeps WHERE id = ?", [sweep_id]))
        if not rows:
            return None
        out = rows[0]
        try:
            out["config"] = loads_json(out.pop("config_json"))
            out["pins"] = loads_json(out.pop("pins_json"))
        except ValueError:
            raise StoreError(f"{self.path}: sweep {sweep_id}: its stored definition cannot be "
                             "read (run `foldscope check`)") from None
        if not isinstance(out["config"], dict) or not isinstance(out["pins"], dict):
            raise StoreError(f"{self.path}: sweep {sweep_id}: its stored definition is not a "
                             "table (run `foldscope check`)")
        out["runner_heartbeat"] = self.heartbeat(sweep_id, out.get("runner_pid"))
        return out

    def heartbeat(self, sweep_id: str, pid: int | None) -> float | None:
        """When the sweep's claimed runner last wrote its status (None: no live record)."""
        if not self._has_activity or not pid:
            return None
        found = self.db.execute("SELECT updated_at FROM runner_status WHERE sweep_id=? AND pid=? "
                                "AND finished_at IS NULL", [sweep_id, pid]).fetchone()
        return float(found[0]) if found and isinstance(found[0], int | float) else None

    def claim_holds(self, sweep: dict[str, Any]) -> bool:
        """Whether a sweep's recorded runner still holds it: alive here, or beating (its
        heartbeat fresh) where its pid cannot be seen (another pid namespace)."""
        pid = sweep.get("runner_pid")
        if not pid:
            return False
        heartbeat = sweep.get("runner_heartbeat")
        if "runner_heartbeat" not in sweep:
            heartbeat = self.heartbeat(sweep["id"], pid)
        return claim_alive(RunnerId(pid, sweep.get("runner_started")), heartbeat, time.time())

    def live_status(self, sweep: dict[str, Any]) -> str:
        """A sweep's status as a reader should show it: "running" (or "paused") only while its
        runner lives.

        A runner killed outright (kill -9, a crash, a closed pipe) cannot record that it
        stopped; its sweep reads as "interrupted" until it is run again.
        """
        if sweep["status"] in LIVE_STATUSES and not self.claim_holds(sweep):
            return "interrupted"
        return sweep["status"]

    def sweeps(self) -> list[dict[str, Any]]:
        """Every sweep, newest first (without configs)."""
        return list(self.db.query(
            "SELECT id, created_at, name, status, stop_reason, simulated FROM sweeps "
            "ORDER BY created_at DESC, rowid DESC"))

    def latest_sweep_id(self) -> str | None:
        """The newest sweep's id, or None for an empty database."""
        found = self.sweeps()
        return found[0]["id"] if found else None

    def sweep_by_digest(self, digest: str) -> str | None:
        """The newest sweep planned from an identical definition, so a rerun resumes it."""
        row = self.db.execute(
            "SELECT id FROM sweeps WHERE config_digest = ? ORDER BY created_at DESC LIMIT 1",
            [digest]).fetchone()
        return row[0] if row else None

    def set_sweep_status(self, sweep_id: str, status: str, reason: str | None = None) -> None:
        """Record a sweep's status (planned, running, done, stopped) and why it stopped."""
        self.db.execute("UPDATE sweeps SET status=?, stop_reason=?, updated_at=? WHERE id=?",
                        [status, reason, time.time(), sweep_id])

    def claim(self, sweep_id: str, runner: RunnerId,
              is_alive: Callable[[RunnerId], bool] | None = None) -> None:
        """Record ``runner`` as the sweep's runner, unless a live one already is.

        One ``BEGIN IMMEDIATE`` transaction: of several processes claiming together exactly one
        wins, and the others read its claim.

        Raises:
            SweepClaimed: another live process is running the sweep (two runners would race
                for the same rows).
        """
        with self.immediate():
            row = self.db.execute("SELECT runner_pid, runner_started FROM sweeps WHERE id=?",
                                  [sweep_id]).fetchone()
            holder = RunnerId(row[0], row[1]) if row and row[0] else None
            if holder is not None and holder != runner and (
                    is_alive(holder) if is_alive is not None else claim_alive(
                        holder, self.heartbeat(sweep_id, holder.pid), time.time())):
                raise SweepClaimed(f"{self.path}: sweep {sweep_id} is already being run by "
                                   f"process {holder.pid}; watch it with `foldscope` or wait for "
                                   "it to stop", holder.pid)
            self.db.execute("UPDATE sweeps SET runner_pid=?, runner_started=? WHERE id=?",
                            [runner.pid, runner.started, sweep_id])

    def release(self, sweep_id: str, runner: RunnerId) -> None:
        """Clear this runner's claim on a sweep."""
        self.db.execute("UPDATE sweeps SET runner_pid=NULL, runner_started=NULL WHERE id=? "
                        "AND runner_pid=?", [sweep_id, runner.pid])

    def record_fault(self, sweep_id: str, exc: BaseException) -> None:
        """Best effort, after a database failure: mark the sweep stopped with the reason.

        On a full disk the write itself may fail; then the sweep reads as interrupted once its
        runner has exited, which is also true.
        """
        try:
            self.set_sweep_status(sweep_id, "stopped", " ".join(str(exc).split()))
        except sqlite3.Error:
            pass

    def set_pins(self, sweep_id: str, pins: dict[str, Any]) -> None:
        """Record the endpoint pins (quantization, context, prices, parameters) of a sweep."""
        self.db.execute("UPDATE sweeps SET pins_json=? WHERE id=?",
                        [json.dumps(pins, ensure_ascii=False, sort_keys=True), sweep_id])

    # -- rows -------------------------------------------------------------------------------

    def _row_columns(self, prefix: str = "") -> str:
        def column(name: str) -> str:
            if name == "seq" and not self._has_seq:
                return "0 AS seq"
            if name == "answer_truncated" and not self._has_blobs:
                return "0 AS answer_truncated"
            if name == "answer_finish" and not self._has_finish:
                return "NULL AS answer_finish"
            if name == "unpriced_calls" and not self._has_finish:
                return "0 AS unpriced_calls"
            return f"{prefix}{name}"
        return ", ".join(column(name) for name in ROW_FIELDS)

    def unpriced_sql(self, prefix: str = "") -> str:
        """SQL for a row's unpriced calls (0 in a database from before they were counted)."""
        return f"{prefix}unpriced_calls" if self._has_finish else "0"

    def answer_sql(self, prefix: str = "") -> str:
        """SQL for a row's answer text, wherever this database keeps it (``prefix``: a table
        alias with its dot, e.g. ``"r."``)."""
        if not self._has_blobs:
            return f"{prefix}answer"
        return (f"COALESCE((SELECT body FROM blobs WHERE digest = {prefix}answer_digest), "
                f"{prefix}answer)")

    def reply_sql(self, prefix: str = "") -> str:
        """SQL for a fold's reply text, wherever this database keeps it (see ``answer_sql``)."""
        if not self._has_blobs:
            return f"{prefix}reply"
        return (f"COALESCE((SELECT body FROM blobs WHERE digest = {prefix}reply_digest), "
                f"{prefix}reply)")

    def _fold_select(self) -> str:
        def column(name: str) -> str:
            if name == "reply":
                return self.reply_sql()
            if name == "reply_truncated" and not self._has_blobs:
                return "0 AS reply_truncated"
            if name == "fact_mutations_json" and not self._has_timeline:
                return "'{}' AS fact_mutations_json"
            return name
        return ", ".join(column(name) for name in _FOLD_COLUMNS)

    def _put_blob(self, conn: sqlite3.Connection, text: str) -> str:
        digest = text_digest(text)
        conn.execute("INSERT OR IGNORE INTO blobs (digest, body) VALUES (?, ?)", [digest, text])
        return digest

    def rows(self, sweep_id: str, *, since: int | None = None) -> list[RowRecord]:
        """A sweep's rows in execution order (no answer text).

        Args:
            sweep_id: the sweep.
            since: only rows changed after this change sequence (a reader's last ``seq``).
        """
        sql = f"SELECT {self._row_columns()} FROM rows WHERE sweep_id = ?"
        params: list[Any] = [sweep_id]
        if since is not None and self._has_seq:
            sql += " AND seq > ?"
            params.append(since)
        return [_row(values) for values in self.db.execute(sql + " ORDER BY position", params)]

    def changes(self, sweep_id: str, since: int | None
                ) -> tuple[list[RowRecord], dict[int, RowClasses], dict[int, FinalCarrier]]:
        """Rows changed after change sequence ``since`` (all, for None), with their checks'
        classes and their last fold's carrier figures, read in one snapshot: what a live view
        needs, and only that.

        Returns:
            The changed rows in plan order, the class counts of those that have checks, and the
            final carrier of those that have a committed fold.
        """
        if not self._has_seq:
            since = None
        where = "sweep_id = ?" + (" AND seq > ?" if since is not None else "")
        params: list[Any] = [sweep_id] + ([since] if since is not None else [])
        conn = self.db.conn
        in_transaction = conn.in_transaction
        if not in_transaction:
            conn.execute("BEGIN")  # one snapshot for every read
        try:
            rows = [_row(v) for v in conn.execute(
                f"SELECT {self._row_columns()} FROM rows WHERE {where} ORDER BY position",
                params)]
            # Checks grouped by (class, detail); core.tally.row_classes counts them.
            grouped: dict[int, list[tuple[str, str | None, int, int, int]]] = {}
            for row_id, *group in conn.execute(
                    "SELECT row_id, classification, class_detail, COUNT(*), SUM(flagged), "
                    "SUM(abstained) FROM checks WHERE row_id IN "
                    f"(SELECT id FROM rows WHERE {where}) "
                    "GROUP BY row_id, classification, class_detail", params):
                grouped.setdefault(row_id, []).append(tuple(group))
            classes = {row_id: row_classes(groups) for row_id, groups in grouped.items()}
            # The last committed fold of each changed row (its unique (row, index) key finds it).
            finals = {row_id: FinalCarrier(headings, fill) for row_id, headings, fill in
                      conn.execute(
                          "SELECT f.row_id, f.headings_carried, f.fill_fraction FROM folds f "
                          "JOIN rows r ON f.row_id = r.id AND f.fold_index = r.folds_done - 1 "
                          f"WHERE r.{where.replace(' AND seq', ' AND r.seq')}", params)}
        finally:
            if not in_transaction:
                conn.execute("COMMIT")
        return rows, classes, finals

    def cell_rows(self, sweep_id: str, scenario: str | None, model: str, arm: str, *,
                  since: int | None = None) -> list[RowRecord]:
        """One cell's rows in execution order, with their answers; ``since`` as in ``rows``."""
        sql = (f"SELECT {self._row_columns()}, {self.answer_sql()} FROM rows WHERE sweep_id = ? "
               "AND model = ? "
               "AND arm = ?")
        params: list[Any] = [sweep_id, model, arm]
        if scenario is not None:
            sql += " AND scenario = ?"
            params.append(scenario)
        if since is not None and self._has_seq:
            sql += " AND seq > ?"
            params.append(since)
        return [_row(values[:-1], values[-1])
                for values in self.db.execute(sql + " ORDER BY position", params)]

    def row(self, row_id: int) -> RowRecord | None:
        """One row with everything recorded on it, its answer included."""
        found = self.db.execute(f"SELECT {self._row_columns()}, {self.answer_sql()} FROM rows "
                                "WHERE id = ?",
                                [row_id]).fetchone()
        return _row(found[:-1], found[-1]) if found else None

    def start_row(self, row_id: int) -> None:
        """Mark a row running (idempotent: resuming a running row keeps its folds)."""
        self.db.execute(f"UPDATE rows SET status='running', started_at=COALESCE(started_at, ?), "
                        f"seq={_ROW_SEQ} WHERE id=?", [time.time(), row_id])

    def commit_fold(self, row_id: int, fold: FoldRecord,
                    histories: Sequence[FactHistory] = (),
                    stored: Sequence[FactHistory] = ()) -> None:
        """Commit one fold, its facts' courses so far and its row's advance, atomically.

        The fold's unique (row, index) key makes a duplicate commit fail loudly rather than
        double-count.

        Args:
            row_id: the row.
            fold: the fold's record.
            histories: every planted fact's course after this fold (``core.row.advance``).
            stored: the row's courses as the table holds them before this fold (what the
                previous commit wrote), when the caller knows; only courses that differ from
                them are written (most facts' courses do not change in a fold). Empty, or of
                another length: every course is written.
        """
        cols = ", ".join(_FOLD_COLUMNS)
        marks = ", ".join("?" for _ in _FOLD_COLUMNS)
        values = fold_values(fold)
        values[_REPLY_AT] = ""  # the body is stored once, in blobs, by its digest
        # The hot path of every sweep: the raw connection as a transaction (one implicit BEGIN,
        # one COMMIT, rollback on error) skips the wrapper's per-statement bookkeeping.
        conn = self.db.conn
        with conn:
            digest = self._put_blob(conn, fold.reply)
            conn.execute(f"INSERT INTO folds (row_id, seq, reply_digest, {cols}) "
                         f"VALUES (?, {_FOLD_SEQ}, ?, {marks})", [row_id, digest, *values])
            conn.execute(
                "UPDATE rows SET next_chunk=?, folds_done=folds_done+1, catch_up=MAX(catch_up, ?), "
                "parse_failures=parse_failures+?, length_stops=length_stops+?, "
                "call_retries=call_retries+?, prompt_tokens=prompt_tokens+?, "
                "completion_tokens=completion_tokens+?, est_prompt_tokens=est_prompt_tokens+?, "
                f"cost_usd=cost_usd+?, unpriced_calls=unpriced_calls+?, "
                f"simulated=MAX(simulated, ?), cached_calls=cached_calls+?, "
                f"seq={_ROW_SEQ} WHERE id=?",
                [fold.last_chunk + 1, int(fold.catch_up), int(fold.parse_failure),
                 int(fold.length_stop), fold.attempts - 1, fold.prompt_tokens or 0,
                 fold.completion_tokens or 0, fold.est_prompt_tokens, fold.cost_usd or 0.0,
                 int(fold.cost_usd is None), int(fold.simulated), int(fold.cached), row_id])
            if histories:
                self._write_histories(conn, row_id, histories, stored)

    def _write_histories(self, conn: sqlite3.Connection, row_id: int,
                         histories: Sequence[FactHistory],
                         stored: Sequence[FactHistory] = ()) -> None:
        cols = ", ".join(_HISTORY_COLUMNS)
        marks = ", ".join("?" for _ in _HISTORY_COLUMNS)
        changed = (enumerate(histories) if len(stored) != len(histories) else
                   ((i, h) for i, (h, old) in enumerate(zip(histories, stored)) if h != old))
        conn.executemany(
            f"INSERT OR REPLACE INTO fact_histories (row_id, position, {cols}) "
            f"VALUES (?, ?, {marks})",
            [(row_id, i, *_history_values(h)) for i, h in changed])

    def fact_histories(self, row_id: int) -> list[FactHistory]:
        """A row's stored fact courses in planting order (none before schema 6 or any fold)."""
        if not self._has_timeline:
            return []
        return [FactHistory(label, value, bool(graded), chunk, planted, first, lost,
                            bool(returned), final, altered, rule)
                for (label, value, graded, chunk, planted, first, lost, returned, final, altered,
                     rule) in self.db.execute(
                    f"SELECT {', '.join(_HISTORY_COLUMNS)} FROM fact_histories WHERE row_id=? "
                    "ORDER BY position", [row_id])]

    def rewrite_timeline(self, row_id: int, folds: Sequence[FoldRecord],
                         histories: Sequence[FactHistory],
                         checks: Sequence[Check] = (), recall: float | None = None) -> None:
        """Replace a row's recomputed fact states, courses and answer classes in one transaction
        (``foldscope reindex``). Flags a person set on checks are kept.

        Args:
            row_id: the row.
            folds: its folds with their fact states recomputed (matched by fold index).
            histories: the facts' recomputed courses.
            checks: the recomputed checks of a finished row (matched by label), or none.
            recall: the row's recall by those checks (with ``checks``).
        """
        conn = self.db.conn
        with conn:
            conn.executemany(
                "UPDATE folds SET fact_status_json=?, fact_mutations_json=?, "
                f"seq={_FOLD_SEQ} WHERE row_id=? AND fold_index=?",
                [(json.dumps(dict(f.fact_status), ensure_ascii=False),
                  json.dumps(dict(f.fact_mutations), ensure_ascii=False), row_id, f.fold_index)
                 for f in folds])
            conn.execute("DELETE FROM fact_histories WHERE row_id=?", [row_id])
            self._write_histories(conn, row_id, histories)
            if checks:
                conn.executemany(
                    "UPDATE checks SET found=?, correct=?, abstained=?, unit_dropped=?, "
                    "classification=?, in_carrier=?, carrier_state=?, class_detail=? "
                    "WHERE row_id=? AND label=?",
                    [(c.found, int(c.correct), int(c.abstained), int(c.unit_dropped),
                      c.classification, int(bool(c.in_carrier)), c.carrier_state,
                      c.class_detail, row_id, c.label) for c in checks])
                conn.execute("UPDATE rows SET correct=?, recall=? WHERE id=?",
                             [sum(c.correct for c in checks), recall, row_id])
            conn.execute(f"UPDATE rows SET seq={_ROW_SEQ} WHERE id=?", [row_id])

    def folds(self, row_id: int, *, start: int = 0) -> list[FoldRecord]:
        """A row's committed folds in order, from fold index ``start`` on."""
        return [_fold(values) for values in self.db.execute(
            f"SELECT {self._fold_select()} FROM folds WHERE row_id=? AND fold_index >= ? "
            "ORDER BY fold_index", [row_id, start])]

    def fold_states(self, sweep_id: str) -> Iterator[tuple[int, int, int, int, dict[str, str],
                                                             dict[str, tuple[str, str]]]]:
        """Every fold of a sweep without its texts: (row id, fold index, first chunk, last chunk,
        fact states, mutations), by row and fold (the survival view's whole input)."""
        mutations = "f.fact_mutations_json" if self._has_timeline else "'{}'"
        for row_id, index, first, last, status, changed in self.db.execute(
                f"SELECT f.row_id, f.fold_index, f.first_chunk, f.last_chunk, f.fact_status_json, "
                f"{mutations} FROM folds f JOIN rows r ON r.id = f.row_id WHERE r.sweep_id = ? "
                "ORDER BY f.row_id, f.fold_index", [sweep_id]):
            yield (row_id, index, first, last, json.loads(status),
                   {k: (v[0], v[1]) for k, v in json.loads(changed).items()})

    def last_fold(self, row_id: int) -> FoldRecord | None:
        """The most recent committed fold of a row, or None."""
        found = self.db.execute(
            f"SELECT {self._fold_select()} FROM folds WHERE row_id=? "
            "ORDER BY fold_index DESC LIMIT 1", [row_id]).fetchone()
        return _fold(found) if found else None

    def finish_row(self, row_id: int, result: RowResult, *, prompt_tokens: int | None,
                   completion_tokens: int | None, est_prompt_tokens: int, cost_usd: float | None,
                   retries: int, cached: bool, wall_s: float,
                   answer_truncated: bool = False, answer_finish: str | None = None) -> None:
        """Commit the recall answer, the per-fact checks and the row's verdict together.

        The usage arguments are the recall call's own; they add to the folds' usage; the
        answer's text is stored once, in blobs, by its digest.
        """
        verdict = result.verdict
        with self.db.atomic():
            digest = self._put_blob(self.db.conn, result.answer)
            self.db.execute("DELETE FROM checks WHERE row_id=?", [row_id])
            self.db.conn.executemany(
                "INSERT INTO checks (row_id, label, expected, found, correct, abstained, "
                "unit_dropped, classification, in_carrier, carrier_state, class_detail) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [(row_id, c.label, c.expected, c.found, int(c.correct), int(c.abstained),
                  int(c.unit_dropped), c.classification, int(bool(c.in_carrier)),
                  c.carrier_state, c.class_detail)
                 for c in result.checks])
            self.db.execute(
                "UPDATE rows SET status='done', answer='', answer_digest=?, answer_truncated=?, "
                "recall=?, correct=?, graded=?, valid=?, "
                "validity_reason=?, retryable=?, prompt_tokens=prompt_tokens+?, "
                "completion_tokens=completion_tokens+?, est_prompt_tokens=est_prompt_tokens+?, "
                "cost_usd=cost_usd+?, unpriced_calls=unpriced_calls+?, "
                "call_retries=call_retries+?, wall_s=wall_s+?, answer_finish=?, "
                f"cached_calls=cached_calls+?, finished_at=?, seq={_ROW_SEQ} WHERE id=?",
                [digest, int(answer_truncated), result.recall, result.correct, result.graded,
                 int(verdict.valid),
                 verdict.reason, int(verdict.retryable), prompt_tokens or 0,
                 completion_tokens or 0, est_prompt_tokens, cost_usd or 0.0,
                 int(cost_usd is None), retries, wall_s, answer_finish,
                 int(cached), time.time(), row_id])

    def fail_row(self, row_id: int, *, error: str, verdict: Validity, wall_s: float,
                 call_retries: int = 0) -> None:
        """Mark a row failed with its verdict (folds committed so far are kept).

        ``call_retries`` are the retries the failing call made before it gave up.
        """
        self.db.execute(
            "UPDATE rows SET status='failed', infra_error=?, valid=?, validity_reason=?, "
            "retryable=?, wall_s=wall_s+?, call_retries=call_retries+?, finished_at=?, "
            f"seq={_ROW_SEQ} WHERE id=?",
            [error, int(verdict.valid), verdict.reason, int(verdict.retryable), wall_s,
             call_retries, time.time(), row_id])

    def add_call_usage(self, row_id: int, *, retries: int, prompt_tokens: int | None,
                       completion_tokens: int | None, cost_usd: float | None) -> None:
        """Add a call that committed no fold (its chunk waits for catch-up) to its row's usage."""
        self.db.execute(
            "UPDATE rows SET call_retries=call_retries+?, prompt_tokens=prompt_tokens+?, "
            "completion_tokens=completion_tokens+?, cost_usd=cost_usd+?, "
            "unpriced_calls=unpriced_calls+? WHERE id=?",
            [retries, prompt_tokens or 0, completion_tokens or 0, cost_usd or 0.0,
             int(cost_usd is None and (prompt_tokens is not None or completion_tokens is not None)),
             row_id])

    def reset_row_for_retry(self, row_id: int) -> None:
        """Start a retryable row over as a new attempt: its folds and checks are discarded."""
        with self.db.atomic():
            self.db.execute("DELETE FROM folds WHERE row_id=?", [row_id])
            self.db.execute("DELETE FROM checks WHERE row_id=?", [row_id])
            self.db.execute("DELETE FROM fact_histories WHERE row_id=?", [row_id])
            self.db.execute(
                "UPDATE rows SET status='planned', attempt=attempt+1, infra_retries=infra_retries+1, "
                "next_chunk=0, folds_done=0, catch_up=0, parse_failures=0, length_stops=0, "
                "infra_error=NULL, answer=NULL, answer_digest=NULL, answer_truncated=0, "
                f"{'answer_finish=NULL, ' if self._has_finish else ''}"
                "recall=NULL, correct=NULL, graded=NULL, valid=NULL, "
                f"validity_reason=NULL, retryable=0, started_at=NULL, finished_at=NULL, "
                f"seq={_ROW_SEQ} WHERE id=?", [row_id])

    # -- response cache ------------------------------------------------------------------------

    def cached_reply(self, key: str) -> dict[str, Any] | None:
        """A cached reply by key (pin, request digest and repeat index), or None."""
        row = self.db.execute("SELECT reply_json FROM cache WHERE key=?", [key]).fetchone()
        if row is None:
            return None
        try:
            reply = loads_json(row[0])
        except ValueError:
            reply = None
        if not isinstance(reply, dict):  # unreadable: dropped, and the call is made again
            self.drop_cached_reply(key)
            return None
        digest = reply.pop("content_digest", None)
        if digest is not None:
            body = self.db.execute("SELECT body FROM blobs WHERE digest=?", [digest]).fetchone()
            if body is None:  # its body is gone: a miss, and the call is made again
                return None
            reply["content"] = body[0]
        return reply

    def highest_call_cost(self, sweep_id: str) -> float:
        """The most one stored fold call of a sweep cost (0.0 when none states a cost)."""
        found = self.db.execute(
            "SELECT MAX(f.cost_usd) FROM folds f JOIN rows r ON r.id = f.row_id "
            "WHERE r.sweep_id = ? AND typeof(f.cost_usd) IN ('real', 'integer')",
            [sweep_id]).fetchone()
        value = found[0] if found else None
        if isinstance(value, int | float) and math.isfinite(value) and value >= 0:
            return float(value)
        return 0.0

    def drop_cached_reply(self, key: str) -> None:
        """Remove a cache entry that may not be replayed (it failed validation)."""
        self.db.execute("DELETE FROM cache WHERE key=?", [key])

    def release_running_rows(self, sweep_id: str) -> int:
        """Put rows a stopping runner leaves ``running`` back to ``planned`` (their committed
        folds stay; a rerun resumes each from its next chunk). Returns how many."""
        cur = self.db.execute(f"UPDATE rows SET status='planned', seq={_ROW_SEQ} "
                              "WHERE sweep_id=? AND status='running'", [sweep_id])
        return cur.rowcount

    def cache_reply(self, key: str, model: str, reply: dict[str, Any]) -> None:
        """Store a successful reply for replay; an existing entry is kept (first answer wins).

        The reply's text goes to blobs (the fold or answer that used it refers to the same
        body), the entry keeps its digest.
        """
        record = {k: v for k, v in reply.items() if k != "content"}
        with self.db.atomic():
            record["content_digest"] = self._put_blob(self.db.conn, reply["content"])
            self.db.execute("INSERT OR IGNORE INTO cache (key, model, reply_json, created_at) "
                            "VALUES (?,?,?,?)",
                            [key, model, json.dumps(record, ensure_ascii=False), time.time()])

    def token_pairs(self, sweep_id: str) -> list[dict[str, Any]]:
        """Estimated vs reported prompt tokens of every fold that has a reported count."""
        return list(self.db.query(
            "SELECT f.content_class, f.est_prompt_tokens, f.prompt_tokens FROM folds f "
            "JOIN rows r ON r.id=f.row_id WHERE r.sweep_id=? AND f.prompt_tokens IS NOT NULL "
            "AND f.cached=0", [sweep_id]))

    def checks(self, row_id: int) -> list[StoredCheck]:
        """The per-fact checks of a finished row."""
        return [_check(v) for v in self.db.execute(
            f"SELECT {self._check_columns} FROM checks WHERE row_id=? ORDER BY id", [row_id])]

    def set_flag(self, check_id: int, flagged: bool, author: str = "unknown") -> None:
        """Flag a checked answer as fabricated, or withdraw its verdict (the ``f`` toggle).

        Raises:
            FlagRefused: the answer is correct, an abstention or empty (``core.fabrication``).
        """
        self.add_verdict(check_id, "fabricated" if flagged else CLEARED, author=author)

    def check(self, check_id: int) -> StoredCheck | None:
        """One check by id, or None."""
        found = self.db.execute(f"SELECT {self._check_columns} FROM checks WHERE id=?",
                                [check_id]).fetchone()
        return _check(found) if found else None

    def add_verdict(self, check_id: int, verdict: str, reason: str | None = None, *,
                    author: str) -> int:
        """Record a person's verdict on a checked answer (a new history entry; the automatic
        class is never touched). The check's ``flagged`` mark follows the latest verdict.

        Args:
            check_id: the checked answer.
            verdict: one of ``core.fabrication.VERDICTS``, or ``CLEARED`` to withdraw.
            reason: an optional one-line reason.
            author: who says so.

        Returns:
            The history entry's id.

        Raises:
            FlagRefused: no such check, or the rule refuses it (a correct answer, an abstention,
                an empty answer, an unknown verdict).
        """
        with self.db.atomic():
            check = self.check(check_id)
            if check is None:
                raise FlagRefused(f"no check {check_id} in {self.path}")
            refusal = flag_refusal(check, verdict)
            if refusal is not None:
                raise FlagRefused(refusal)
            reason = " ".join((reason or "").split()) or None
            cursor = self.db.execute(
                "INSERT INTO verdicts (check_id, verdict, reason, author, created_at) "
                "VALUES (?,?,?,?,?)", [check_id, verdict, reason, author, time.time()])
            self._sync_flag(check_id)
        return int(cursor.lastrowid or 0)

    def undo_verdict(self, check_id: int) -> bool:
        """Take back the latest verdict entry of a check (the one before it applies again).

        Returns:
            Whether there was an entry to take back.
        """
        with self.db.atomic():
            cursor = self.db.execute(
                "DELETE FROM verdicts WHERE id=(SELECT MAX(id) FROM verdicts WHERE check_id=?)",
                [check_id])
            self._sync_flag(check_id)
        return cursor.rowcount > 0

    def remove_verdict(self, check_id: int, entry_id: int) -> bool:
        """Take back one verdict entry of a check (the one a writer made; the entry before it
        applies again).

        Returns:
            Whether the entry was there to take back.
        """
        with self.db.atomic():
            cursor = self.db.execute("DELETE FROM verdicts WHERE id=? AND check_id=?",
                                     [entry_id, check_id])
            self._sync_flag(check_id)
        return cursor.rowcount > 0

    def _sync_flag(self, check_id: int) -> None:
        self.db.execute(
            "UPDATE checks SET flagged=COALESCE((SELECT verdict = 'fabricated' FROM verdicts "
            "WHERE check_id=? ORDER BY id DESC LIMIT 1), 0) WHERE id=?", [check_id, check_id])
        self.db.execute(f"UPDATE rows SET seq={_ROW_SEQ} WHERE id=(SELECT row_id FROM checks "
                        "WHERE id=?)", [check_id])

    def verdicts(self, sweep_id: str) -> dict[int, HumanVerdict]:
        """Every check of a sweep that has a verdict now (its latest entry, unless withdrawn).

        A database from before verdicts (read-only, not migrated) reads its flags as
        ``fabricated`` by an unknown author.
        """
        if "verdicts" not in self.db.table_names():
            return {cid: HumanVerdict(0, cid, "fabricated", None, "unknown", 0.0)
                    for (cid,) in self.db.execute(
                        "SELECT id FROM checks WHERE flagged AND row_id IN "
                        "(SELECT id FROM rows WHERE sweep_id=?)", [sweep_id])}
        found = self.db.execute(
            "SELECT v.id, v.check_id, v.verdict, v.reason, v.author, v.created_at FROM verdicts v "
            "WHERE v.id IN (SELECT MAX(id) FROM verdicts WHERE check_id IN (SELECT c.id FROM "
            "checks c JOIN rows r ON r.id = c.row_id WHERE r.sweep_id=?) GROUP BY check_id)",
            [sweep_id])
        return {v[1]: HumanVerdict(*v) for v in found if v[2] != CLEARED}

    def verdict(self, check_id: int) -> HumanVerdict | None:
        """One check's verdict now (its latest entry, unless withdrawn), or None: what a writer
        reads back after a write, instead of the whole sweep's verdicts."""
        if "verdicts" not in self.db.table_names():
            found = self.db.execute("SELECT flagged FROM checks WHERE id=?", [check_id]).fetchone()
            return (HumanVerdict(0, check_id, "fabricated", None, "unknown", 0.0)
                    if found and found[0] else None)
        row = self.db.execute(
            "SELECT id, check_id, verdict, reason, author, created_at FROM verdicts "
            "WHERE check_id=? ORDER BY id DESC LIMIT 1", [check_id]).fetchone()
        return HumanVerdict(*row) if row and row[2] != CLEARED else None

    def verdict_history(self, check_id: int) -> list[HumanVerdict]:
        """Every verdict entry of a check, oldest first (withdrawals included)."""
        if "verdicts" not in self.db.table_names():
            return []
        return [HumanVerdict(*v) for v in self.db.execute(
            "SELECT id, check_id, verdict, reason, author, created_at FROM verdicts "
            "WHERE check_id=? ORDER BY id", [check_id])]

    def sweep_checks(self, sweep_id: str) -> Iterator[StoredCheck]:
        """Every check of a sweep, for check-level statistics: read in batches as it is
        iterated (a 50,000-row sweep has 700,000), each label, expected value and class text
        one shared string."""
        cursor = self.db.conn.execute(
            f"SELECT {self._check_columns} FROM checks WHERE row_id IN "
            "(SELECT id FROM rows WHERE sweep_id=?) ORDER BY id", [sweep_id])
        shared: dict[str, str] = {}
        while batch := cursor.fetchmany(CHECK_BATCH):
            for values in batch:
                (label, expected, found, correct, abstained, unit_dropped, in_carrier,
                 classification, carrier_state, class_detail, check_id, row_id, flagged) = values
                yield StoredCheck(
                    shared.setdefault(label, label), shared.setdefault(expected, expected),
                    found if found is None else shared.setdefault(found, found), bool(correct),
                    bool(abstained), bool(unit_dropped), bool(in_carrier),
                    shared.setdefault(classification, classification),
                    shared.setdefault(carrier_state, carrier_state),
                    class_detail if class_detail is None
                    else shared.setdefault(class_detail, class_detail),
                    check_id, row_id, bool(flagged))

    def progress(self, sweep_id: str) -> dict[str, int]:
        """Row counts by status, plus folds committed, for progress displays."""
        out = {s: 0 for s in (ROW_PLANNED, ROW_RUNNING, ROW_DONE, ROW_FAILED)}
        for status, count in self.db.execute(
                "SELECT status, COUNT(*) FROM rows WHERE sweep_id=? GROUP BY status", [sweep_id]):
            out[status] = count
        out["folds"] = self.db.execute(
            "SELECT COALESCE(SUM(folds_done),0) FROM rows WHERE sweep_id=?", [sweep_id]).fetchone()[0]
        out["total"] = sum(out[s] for s in (ROW_PLANNED, ROW_RUNNING, ROW_DONE, ROW_FAILED))
        return out

    # -- a live run's event log, status and control (schema 6) ---------------------------------

    def add_events(self, sweep_id: str, events: list[Event], cap: int = EVENT_CAP) -> None:
        """Append events to a sweep's log in one transaction, keeping only its newest ``cap``."""
        if not events:
            return
        with self.db.atomic():
            self.db.conn.executemany(
                "INSERT INTO events (sweep_id, t, kind, model, summary, data_json) "
                "VALUES (?,?,?,?,?,?)",
                [(sweep_id, e.t, e.kind, e.about_model(), storable(e.summary()),
                  json.dumps(e.as_json(), ensure_ascii=False)) for e in events])
            self.db.execute(
                "DELETE FROM events WHERE sweep_id=? AND id <= (SELECT id FROM events WHERE "
                "sweep_id=? ORDER BY id DESC LIMIT 1 OFFSET ?)", [sweep_id, sweep_id, cap])

    def events(self, sweep_id: str, *, since: int = 0, limit: int = EVENT_CAP
               ) -> list[StoredEvent]:
        """A sweep's logged events after event id ``since``, oldest first (at most ``limit``,
        the newest of them); none in a database from before the event log."""
        if not self._has_activity:
            return []
        found = self.db.execute(
            "SELECT id, sweep_id, t, kind, model, summary, json_extract(data_json, '$.fault'), "
            "data_json FROM events WHERE sweep_id=? AND id>? ORDER BY id DESC LIMIT ?",
            [sweep_id, since, limit]).fetchall()
        return [StoredEvent(i, sweep, t, kind, model, summary, fault, _event(data))
                for i, sweep, t, kind, model, summary, fault, data in reversed(found)]

    def set_runner_status(self, sweep_id: str, status: RunnerStatus) -> None:
        """Record the live runner's status (one row per sweep, replaced)."""
        self.db.execute(
            "INSERT OR REPLACE INTO runner_status (sweep_id, pid, started_at, updated_at, "
            "finished_at, folds_at_start, finished_at_start, paused, endpoints_json) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            [sweep_id, status.pid, status.started_at, status.updated_at, status.finished_at,
             status.folds_at_start, status.finished_at_start, int(status.paused),
             json.dumps([dataclasses.asdict(e) for e in status.endpoints], ensure_ascii=False)])

    def runner_status(self, sweep_id: str) -> RunnerStatus | None:
        """The last status a runner of this sweep recorded, or None."""
        if not self._has_activity:
            return None
        found = self.db.execute(
            "SELECT pid, started_at, updated_at, finished_at, folds_at_start, finished_at_start, "
            "paused, endpoints_json FROM runner_status WHERE sweep_id=?", [sweep_id]).fetchone()
        if found is None:
            return None
        pid, started_at, updated_at, finished_at, folds_at_start, finished_at_start, paused, \
            endpoints = found
        return RunnerStatus(pid, started_at, updated_at, finished_at, folds_at_start,
                            finished_at_start, paused=bool(paused), endpoints=tuple(
            EndpointState(e["endpoint"], tuple(e["models"]), e["in_flight"], e["limit"],
                          e["ceiling"]) for e in json.loads(endpoints)))

    def request_control(self, sweep_id: str, request: str, reason: str) -> None:
        """Ask the sweep's runner to pause, resume or cancel (it polls this between calls)."""
        if request not in CONTROL_REQUESTS:
            raise StoreError(f"unknown control request '{request}' "
                             f"(known: {', '.join(CONTROL_REQUESTS)})")
        self.db.execute("INSERT OR REPLACE INTO sweep_control (sweep_id, request, reason, "
                        "requested_at) VALUES (?,?,?,?)", [sweep_id, request, reason, time.time()])

    def control(self, sweep_id: str) -> ControlRequest | None:
        """The last control request for a sweep, or None."""
        if not self._has_activity:
            return None
        found = self.db.execute("SELECT request, reason, requested_at FROM sweep_control "
                                "WHERE sweep_id=?", [sweep_id]).fetchone()
        return ControlRequest(*found) if found else None

    def clear_control(self, sweep_id: str) -> None:
        """Forget a sweep's control request (a new run starts unpaused)."""
        self.db.execute("DELETE FROM sweep_control WHERE sweep_id=?", [sweep_id])

    # -- session audits ---------------------------------------------------------------------

    def add_audit(self, doc: dict[str, Any]) -> int:
        """Store one session audit (the ``audit --json`` document) and return its id."""
        lost = sum(len(c["lost_and_needed"]) for c in doc["compactions"])
        with self.db.atomic():
            cursor = self.db.execute(
                "INSERT INTO audits (created_at, source, session, format, redacted, compactions, "
                "lost_and_needed, audit_json) VALUES (?,?,?,?,?,?,?,?)",
                [time.time(), doc.get("source"), doc.get("session"), doc["format"],
                 int(bool(doc.get("redacted"))), len(doc["compactions"]), lost,
                 json.dumps(doc, ensure_ascii=False, sort_keys=True)])
        return int(cursor.lastrowid or 0)

    def audits(self) -> list[StoredAudit]:
        """Every stored session audit, newest first (none in a database from before audits)."""
        if "audits" not in self.db.table_names():
            return []
        return [_audit(r) for r in self.db.execute(
            f"SELECT {_AUDIT_COLUMNS} FROM audits ORDER BY id DESC").fetchall()]

    def audit(self, audit_id: int) -> StoredAudit | None:
        """One stored session audit, or None."""
        if "audits" not in self.db.table_names():
            return None
        row = self.db.execute(f"SELECT {_AUDIT_COLUMNS} FROM audits WHERE id=?", [audit_id]).fetchone()
        return None if row is None else _audit(row)


_AUDIT_COLUMNS = ("id, created_at, source, session, format, redacted, compactions, lost_and_needed, "
                  "audit_json")


def _audit(row: tuple[Any, ...]) -> StoredAudit:
    (audit_id, created_at, source, session, fmt, redacted, compactions, lost, doc) = row
    return StoredAudit(audit_id, created_at, source, session, fmt, bool(redacted), compactions,
                       lost, json.loads(doc))
