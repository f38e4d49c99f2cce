"""``foldscope check``: SQLite's own integrity check plus foldscope's invariants over a database,
read without writing anything (the file may be read-only, corrupt, or being run)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from foldscope.core.errors import StoreError
from foldscope.engine.store import open_readonly

EXAMPLES = 5
"""Offending items quoted per failed check; the count says how many there are in all."""

_TABLES = ("sweeps", "rows", "folds", "checks")


@dataclass(frozen=True)
class CheckResult:
    """One check: its name, whether it passed, how many items break it and a few of them."""

    name: str
    ok: bool
    count: int = 0
    examples: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class IntegrityReport:
    """Every check run on one database."""

    db: str
    checks: list[CheckResult]

    @property
    def clean(self) -> bool:
        """True when every check passed."""
        return all(c.ok for c in self.checks)

    def as_json(self) -> dict[str, Any]:
        """``{"db", "clean", "problems", "checks": [{"name", "ok", "count", "examples"}]}``."""
        return {"db": self.db, "clean": self.clean,
                "problems": sum(not c.ok for c in self.checks),
                "checks": [asdict(c) for c in self.checks]}


# (name, SQL returning one row per offending item, formatter of such a row)
_INVARIANTS: tuple[tuple[str, str, str], ...] = (
    ("no duplicate folds per (row, fold_index)",
     "SELECT row_id, fold_index, COUNT(*) FROM folds GROUP BY row_id, fold_index "
     "HAVING COUNT(*) > 1",
     "row {0} fold {1}: {2} copies"),
    ("no orphan rows (every row's sweep exists)",
     "SELECT id, sweep_id FROM rows WHERE sweep_id NOT IN (SELECT id FROM sweeps)",
     "row {0}: sweep {1} missing"),
    ("no orphan folds (every fold's row exists)",
     "SELECT id, row_id FROM folds WHERE row_id NOT IN (SELECT id FROM rows)",
     "fold {0}: row {1} missing"),
    ("no orphan checks (every check's row exists)",
     "SELECT id, row_id FROM checks WHERE row_id NOT IN (SELECT id FROM rows)",
     "check {0}: row {1} missing"),
    ("each row's folds_done equals its folds, indexed 0..n-1",
     "SELECT r.id, r.folds_done, COUNT(f.id), COALESCE(MAX(f.fold_index) + 1, 0) FROM rows r "
     "LEFT JOIN folds f ON f.row_id = r.id GROUP BY r.id "
     "HAVING r.folds_done != COUNT(f.id) OR COALESCE(MAX(f.fold_index) + 1, 0) != COUNT(f.id)",
     "row {0}: folds_done {1}, {2} folds stored, highest index + 1 = {3}"),
    ("done rows have an answer and one check per graded fact",
     "SELECT r.id, r.answer IS NOT NULL, r.graded, COUNT(c.id) FROM rows r "
     "LEFT JOIN checks c ON c.row_id = r.id WHERE r.status = 'done' GROUP BY r.id "
     "HAVING r.answer IS NULL OR r.graded IS NULL OR r.graded != COUNT(c.id)",
     "row {0}: answer stored {1}, graded {2}, checks {3}"),
    ("done rows' correct count equals their correct checks",
     "SELECT r.id, r.correct, SUM(c.correct) FROM rows r JOIN checks c ON c.row_id = r.id "
     "WHERE r.status = 'done' GROUP BY r.id HAVING r.correct IS NOT SUM(c.correct)",
     "row {0}: correct {1}, correct checks {2}"),
    ("no checks on rows that are not done",
     "SELECT r.id, r.status, COUNT(c.id) FROM rows r JOIN checks c ON c.row_id = r.id "
     "WHERE r.status != 'done' GROUP BY r.id",
     "row {0}: status {1} but {2} checks"),
)


def check_database(path: str | Path) -> IntegrityReport:
    """Run SQLite's ``integrity_check`` and foldscope's invariants, reading only.

    Args:
        path: the database file.

    Returns:
        The report (problems are findings, not exceptions).

    Raises:
        StoreError: the path is missing, not a file, not SQLite, or not a foldscope database.
    """
    p = Path(path)
    if not p.exists():
        raise StoreError(f"{p}: no such database")
    if not p.is_file():
        raise StoreError(f"{p}: not a file")
    try:
        conn = open_readonly(p)
    except sqlite3.Error as exc:
        raise StoreError(f"{p}: cannot open ({exc})") from None
    try:
        return IntegrityReport(str(p), _run_checks(conn, p))
    finally:
        conn.close()


def _run_checks(conn: sqlite3.Connection, path: Path) -> list[CheckResult]:
    results: list[CheckResult] = []
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "encrypted" in str(exc):
            raise StoreError(f"{path}: not an SQLite database ({exc})") from None
        tables = None  # the schema itself is unreadable: integrity_check says why
    if tables is not None and tables and not set(_TABLES) <= tables:
        raise StoreError(f"{path}: not a foldscope database (tables: {', '.join(sorted(tables))})")
    results.append(_integrity(conn))
    for name, sql, form in _INVARIANTS:
        results.append(_invariant(conn, name, sql, form))
    results.append(_sweep_counts(conn))
    return results


def _unreadable(name: str, exc: sqlite3.Error) -> CheckResult:
    return CheckResult(name, False, 1, [f"could not be read: {' '.join(str(exc).split())}"])


def _integrity(conn: sqlite3.Connection) -> CheckResult:
    name = "SQLite integrity_check"
    try:
        lines = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    except sqlite3.DatabaseError as exc:
        return _unreadable(name, exc)
    if lines == ["ok"]:
        return CheckResult(name, True)
    return CheckResult(name, False, len(lines), lines[:EXAMPLES])


def _invariant(conn: sqlite3.Connection, name: str, sql: str, form: str) -> CheckResult:
    try:
        bad = conn.execute(sql).fetchall()
    except sqlite3.DatabaseError as exc:
        return _unreadable(name, exc)
    return CheckResult(name, not bad, len(bad), [form.format(*row) for row in bad[:EXAMPLES]])


def _planned_rows(config: dict[str, Any]) -> int:
    sweep = config["sweep"]
    scenarios = list(sweep.get("scenarios") or [])
    if sweep.get("scenario") and sweep["scenario"] not in scenarios:
        scenarios.append(sweep["scenario"])
    return len(scenarios) * len(config["models"]) * len(sweep["arms"]) * int(sweep.get("repeats", 1))


def _sweep_counts(conn: sqlite3.Connection) -> CheckResult:
    """Each sweep holds the rows its definition plans, and a ``done`` sweep has no open rows."""
    name = "sweep row counts agree with their definitions and statuses"
    try:
        sweeps = conn.execute(
            "SELECT s.id, s.status, s.config_json, COUNT(r.id), "
            "SUM(r.status IN ('planned', 'running')) FROM sweeps s "
            "LEFT JOIN rows r ON r.sweep_id = s.id GROUP BY s.id").fetchall()
    except sqlite3.DatabaseError as exc:
        return _unreadable(name, exc)
    bad: list[str] = []
    for sweep_id, status, config_json, rows, open_rows in sweeps:
        try:
            planned = _planned_rows(json.loads(config_json))
        except (ValueError, KeyError, TypeError, AttributeError):
            bad.append(f"sweep {sweep_id}: stored definition cannot be read")
            continue
        if planned != rows:
            bad.append(f"sweep {sweep_id}: definition plans {planned} rows, {rows} stored")
        elif status == "done" and open_rows:
            bad.append(f"sweep {sweep_id}: status done with {open_rows} rows not finished")
    return CheckResult(name, not bad, len(bad), bad[:EXAMPLES])
