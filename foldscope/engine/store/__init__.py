"""The SQLite system of record: sweeps, planned rows, folds, answers and per-fact checks.

``Store`` is the facade over one connection; the typed repositories behind it live in
``sweeps`` (sweeps, statuses, runner claims), ``rows`` (rows, folds, fact courses), ``checks``
(checks and verdicts), ``activity_log`` (event log, runner status, control), ``audits``
(session audits), ``cache`` (response cache) and ``export`` (the evidence package's
whole-database reads); ``schema`` holds the migrations and ``connection`` the opening,
migrating (an older database opened read-only: in a temporary copy) and transactions.
Records are decoded by column name (``connection.named`` / ``column_names``).
"""

from foldscope.core.row import PlannedRow
from foldscope.engine.store.activity_log import EVENT_CAP
from foldscope.engine.store.checks import CHECK_BATCH
from foldscope.engine.store.connection import (
    StoreConnection,
    database_error,
    open_readonly,
    writable,
)
from foldscope.engine.store.facade import Store
from foldscope.engine.store.rows import (
    ROW_BATCH,
    ROW_DONE,
    ROW_FAILED,
    ROW_PLANNED,
    ROW_RUNNING,
    fold_values,
)
from foldscope.engine.store.schema import (
    _MIGRATIONS,
    SCHEMA_VERSION,
    _sha256_sql,
    parse_schema_version,
    text_digest,
)
from foldscope.engine.store.sweeps import LIVE_STATUSES, NewSweep, SweepHeader, SweepRecord

__all__ = [
    "CHECK_BATCH",
    "ROW_BATCH",
    "EVENT_CAP",
    "LIVE_STATUSES",
    "NewSweep",
    "PlannedRow",
    "ROW_DONE",
    "ROW_FAILED",
    "ROW_PLANNED",
    "ROW_RUNNING",
    "SCHEMA_VERSION",
    "_MIGRATIONS",
    "Store",
    "StoreConnection",
    "SweepHeader",
    "SweepRecord",
    "_sha256_sql",
    "database_error",
    "fold_values",
    "open_readonly",
    "parse_schema_version",
    "text_digest",
    "writable",
]
