"""``foldscope check``: SQLite's own integrity check plus foldscope's invariants over a database,
read without writing anything (the file may be read-only, corrupt, or being run)."""

from __future__ import annotations

import functools
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from foldscope.core.errors import StoreError
from foldscope.core.nesting import loads_json
from foldscope.core.status import SweepStatus
from foldscope.engine.procinfo import RunnerId, claim_alive
from foldscope.engine.store import _MIGRATIONS, SCHEMA_VERSION, _sha256_sql, open_readonly
from foldscope.engine.store import parse_schema_version as parse_version

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
    sweeps: list[str] = field(default_factory=list)
    """The sweeps the findings concern, for a check made sweep by sweep (empty: the whole
    database, or every sweep)."""


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


def check_database(path: str | Path, *, cache: bool = True) -> IntegrityReport:
    """Run SQLite's ``integrity_check`` and foldscope's invariants, reading only.

    Args:
        path: the database file.
        cache: also hold the response cache's entries to the reply rules (only a rerun reads
            them; ``report`` and ``export`` leave them out, and so the client's imports).

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
        return IntegrityReport(str(p), _run_checks(conn, p, cache=cache))
    finally:
        conn.close()


def _run_checks(conn: sqlite3.Connection, path: Path, *, cache: bool) -> list[CheckResult]:
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
    results += _sound(conn)
    for name, sql, form in _INVARIANTS:
        results.append(_invariant(conn, name, sql, form))
    results.append(_sweep_counts(conn))
    results.append(_abandoned_rows(conn))
    if cache:
        results.append(_cache_entries(conn))
    return results


# -- what every reader relies on (cheap enough for report and export to check first) -----------

_NUMERIC = (("recall", "real"), ("correct", "integer"), ("graded", "integer"),
            ("cost_usd", "real"), ("prompt_tokens", "integer"), ("completion_tokens", "integer"),
            ("wall_s", "real"), ("folds_done", "integer"), ("attempt", "integer"))
"""Row columns readers compute with, and the storage class they must have (or NULL)."""


def _stated_version(conn: sqlite3.Connection) -> tuple[int | None, str | None]:
    """The schema version the database states, or why it cannot be read as one."""
    try:
        found = conn.execute("SELECT value, typeof(value) FROM meta "
                             "WHERE key='schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        return None, f"meta table cannot be read ({' '.join(str(exc).split())})"
    if found is None:
        return None, "no schema_version in meta"
    return parse_version(found[0])


@functools.cache
def _expected_columns(version: int) -> dict[str, frozenset[str]]:
    """The columns each table has at ``version`` (the migrations run on an empty database)."""
    mem = sqlite3.connect(":memory:")
    mem.create_function("foldscope_sha256", 1, _sha256_sql, deterministic=True)
    try:
        for target in range(1, min(version, SCHEMA_VERSION) + 1):
            mem.executescript(_MIGRATIONS[target])
        return {t: frozenset(r[1] for r in mem.execute(f"PRAGMA table_info({t})"))
                for t in _TABLES}
    finally:
        mem.close()


def _sound(conn: sqlite3.Connection) -> list[CheckResult]:
    """Schema version, the columns readers need, readable definitions, typed numbers."""
    out: list[CheckResult] = []
    version, why = _stated_version(conn)
    name = f"schema version is a whole number from 1 to {SCHEMA_VERSION}"
    out.append(CheckResult(name, why is None, int(why is not None), [why] if why else []))
    name = "every table has the columns readers need"
    missing: list[str] = []
    if version is not None:
        try:
            for table, columns in _expected_columns(version).items():
                have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
                missing += [f"{table}.{c}: missing" for c in sorted(columns - have)]
        except sqlite3.DatabaseError as exc:
            out.append(_unreadable(name, exc))
        else:
            out.append(CheckResult(name, not missing, len(missing), missing[:EXAMPLES]))
    name = "stored sweep definitions are readable tables"
    try:
        bad = [f"sweep {sid}: {what} cannot be read" for sid, config, pins in
               conn.execute("SELECT id, config_json, pins_json FROM sweeps")
               for what, text in (("config_json", config), ("pins_json", pins))
               if not _is_table(text)]
        out.append(CheckResult(name, not bad, len(bad), bad[:EXAMPLES]))
    except sqlite3.DatabaseError as exc:
        out.append(_unreadable(name, exc))
    name = "row figures are numbers in range"
    have = set()
    try:
        have = {r[1] for r in conn.execute("PRAGMA table_info(rows)")}
        tests = " OR ".join(
            f"(typeof({c}) NOT IN ('null', 'integer'{', ' + repr('real') if t == 'real' else ''}))"
            for c, t in _NUMERIC if c in have)
        if "recall" in have:
            tests += " OR recall < 0 OR recall > 1"
        bad_rows = conn.execute(f"SELECT id FROM rows WHERE {tests} LIMIT 1000").fetchall() \
            if tests else []
        out.append(CheckResult(name, not bad_rows, len(bad_rows),
                               [f"row {r[0]}: a figure is not a number in range"
                                for r in bad_rows[:EXAMPLES]]))
    except sqlite3.DatabaseError as exc:
        out.append(_unreadable(name, exc))
    return out


def _is_table(text: Any) -> bool:
    if not isinstance(text, str):
        return False
    try:
        return isinstance(loads_json(text), dict)
    except ValueError:
        return False


def unsound(path: str | Path) -> str | None:
    """The first problem a reader (report, export) must not read past, or None.

    The cheap checks only (schema version, columns, definitions, typed figures); SQLite's own
    integrity check is left to ``foldscope check`` (a corrupt page is one line anyway).
    """
    p = Path(path)
    if not p.is_file():
        return None  # the Store's own error (missing, a folder) says it better
    try:
        conn = open_readonly(p)
    except sqlite3.Error:
        return None
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not set(_TABLES) <= tables:
            return None
        for result in _sound(conn):
            if not result.ok:
                return f"{result.name}: {result.examples[0] if result.examples else 'fails'}"
    except sqlite3.DatabaseError:
        return None
    finally:
        conn.close()
    return None


CACHE = "cached replies meet the rules a fresh reply meets"
"""A check of what only a rerun reads (a failing entry is dropped there, never replayed), so
it does not stop ``report`` or ``export``."""

ABANDONED = "no rows left running without a live runner"
"""The name of the check ``report --partial`` lets pass for the sweep it reports."""


def refuse_unsound(path: str | Path, what: str, *, sweep: str | None = None,
                   partial: bool = False, full: bool = True) -> None:
    """Raise one line when ``check`` would flag what ``what`` (report, export) reads.

    The cheap checks run first (a reader cannot even open a database with a text schema
    version); then, with ``full``, everything ``foldscope check`` runs: SQLite's integrity
    check, the fold and row invariants, row counts, rows left running with no live runner.

    Args:
        path: the database.
        what: the command, for the message.
        sweep: the one sweep the command reads (None: every sweep in the database); a finding
            about another sweep does not stop it.
        partial: let rows left running with no live runner pass (``report --partial`` on an
            interrupted sweep: what it committed, its unfinished rows counted as not run).
        full: also run the checks that read every page (False: the cheap checks only).

    Raises:
        StoreError: naming the first problem and ``foldscope check``.
    """
    _raise_refusal(path, what, _refusal(path, what, sweep, partial, full))


def refuse_unsound_later(path: str | Path, what: str, *, partial: bool = False
                         ) -> Callable[[str | None], None]:
    """:func:`refuse_unsound` (``full``) on a thread of its own, started now; returns what to
    call, with the one sweep the command reads (None: every sweep), before anything it read is
    shown: it waits for the checks and raises as :func:`refuse_unsound` does.

    The checks are SQLite's work mostly (its integrity check reads every page), which runs
    without the GIL: meanwhile the command imports what it needs and computes what it will
    show, and shows it only if they pass.
    """
    found: list[IntegrityReport | str | None] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            found.append(_findings(path, True))
        except BaseException as exc:  # noqa: BLE001 - raised again on the command's thread
            failed.append(exc)

    thread = threading.Thread(target=run, name="foldscope-check", daemon=True)
    thread.start()

    def wait(sweep: str | None) -> None:
        thread.join()
        if failed:
            raise failed[0]
        _raise_refusal(path, what, _first_problem(found[0], what, sweep, partial))

    return wait


def _refusal(path: str | Path, what: str, sweep: str | None, partial: bool,
             full: bool) -> str | None:
    """What :func:`refuse_unsound` refuses for (None: nothing)."""
    return _first_problem(_findings(path, full), what, sweep, partial)


def _findings(path: str | Path, full: bool) -> IntegrityReport | str | None:
    """The cheap checks' problem, else (with ``full``) every check's report."""
    problem = unsound(path)
    if problem is not None or not full or not Path(path).is_file():
        return problem
    try:
        return check_database(path, cache=False)
    except StoreError:
        return None  # not a foldscope database: the Store's own error says it better


def _first_problem(findings: IntegrityReport | str | None, what: str, sweep: str | None,
                   partial: bool) -> str | None:
    """The first finding that concerns what ``what`` reads (``sweep``: None for every sweep)."""
    if findings is None or isinstance(findings, str):
        return findings
    for result in findings.checks:
        if result.ok or (sweep is not None and result.sweeps and sweep not in result.sweeps):
            continue
        if partial and result.name == ABANDONED:
            continue
        problem = f"{result.name}: {result.examples[0] if result.examples else 'fails'}"
        if result.name == ABANDONED and what == "report":
            problem += " or pass --partial to report what it committed"
        return problem
    return None


def _raise_refusal(path: str | Path, what: str, problem: str | None) -> None:
    if problem is not None:
        raise StoreError(f"{path}: refusing to {what}: {problem}; run `foldscope check --db "
                         f"{path}`")


def _abandoned_rows(conn: sqlite3.Connection) -> CheckResult:
    """Rows left ``running`` by a runner that is gone (a crash, kill -9, a lost machine)."""
    name = ABANDONED
    try:
        have_status = "runner_status" in {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}
        sweeps = conn.execute(
            "SELECT s.id, s.runner_pid, s.runner_started, COUNT(r.id) FROM sweeps s "
            "JOIN rows r ON r.sweep_id = s.id AND r.status = 'running' GROUP BY s.id").fetchall() \
            if "runner_started" in {r[1] for r in conn.execute("PRAGMA table_info(sweeps)")} \
            else [(sid, pid, None, n) for sid, pid, n in conn.execute(
                "SELECT s.id, s.runner_pid, COUNT(r.id) FROM sweeps s JOIN rows r "
                "ON r.sweep_id = s.id AND r.status = 'running' GROUP BY s.id")]
        bad: list[str] = []
        which: list[str] = []
        for sweep_id, pid, started, count in sweeps:
            beat = None
            if have_status and pid:
                found = conn.execute("SELECT updated_at FROM runner_status WHERE sweep_id=? AND "
                                     "pid=? AND finished_at IS NULL", [sweep_id, pid]).fetchone()
                beat = found[0] if found and isinstance(found[0], int | float) else None
            if not pid or not claim_alive(RunnerId(pid, started), beat, time.time()):
                bad.append(f"sweep {sweep_id}: {count} row(s) running, no live runner "
                           "(run it again to resume them)")
                which.append(str(sweep_id))
    except sqlite3.DatabaseError as exc:
        return _unreadable(name, exc)
    return CheckResult(name, not bad, len(bad), bad[:EXAMPLES], which)


def _cache_entries(conn: sqlite3.Connection) -> CheckResult:
    """Every response cache entry would be replayed (a poisoned one, say a reply whose usage
    overflows, is dropped by the next run: this says it is there before then)."""
    from foldscope.engine.client.reply_check import cached_reply_problem, parse_cached

    bad: list[str] = []
    count = 0
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "cache" not in tables:
            return CheckResult(CACHE, True)  # older than the cache: nothing to replay
        body = ("(SELECT 1 FROM blobs b WHERE b.digest = CASE WHEN json_valid(c.reply_json) "
                "THEN json_extract(c.reply_json, '$.content_digest') END) IS NOT NULL"
                if "blobs" in tables else "0")
        for key, model, text, has_body in conn.execute(
                f"SELECT c.key, c.model, c.reply_json, {body} FROM cache c"):
            record = parse_cached(text) if isinstance(text, str) else None
            if record is not None and "content_digest" in record:
                record = {k: v for k, v in record.items() if k != "content_digest"}
                record["content"] = "" if has_body else None
            problem = "cannot be read" if record is None else cached_reply_problem(record)
            if problem is not None:
                count += 1
                if len(bad) < EXAMPLES:
                    bad.append(f"cache entry {str(key)[:16]}… of {model}: {problem} "
                               "(dropped when a run would replay it)")
    except sqlite3.DatabaseError as exc:
        return _unreadable(CACHE, exc)
    return CheckResult(CACHE, not count, count, bad)


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


INVARIANT_BATCH = 1000
"""Offending records fetched at a time: an invariant counts them all, keeping ``EXAMPLES``."""


def _invariant(conn: sqlite3.Connection, name: str, sql: str, form: str) -> CheckResult:
    """One invariant: every record its query finds breaks it; counted as they stream past (a
    broken 50,000-row database can break one for every row), the first few kept to show."""
    count = 0
    examples: list[str] = []
    try:
        cursor = conn.execute(sql)
        while batch := cursor.fetchmany(INVARIANT_BATCH):
            count += len(batch)
            examples += [form.format(*row) for row in batch[:EXAMPLES - len(examples)]]
    except sqlite3.DatabaseError as exc:
        return _unreadable(name, exc)
    return CheckResult(name, not count, count, examples)


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
    which: list[str] = []
    for sweep_id, status, config_json, rows, open_rows in sweeps:
        before = len(bad)
        try:
            planned = _planned_rows(loads_json(config_json))
        except (ValueError, KeyError, TypeError, AttributeError):
            bad.append(f"sweep {sweep_id}: stored definition cannot be read")
            planned = rows
        if planned != rows:
            bad.append(f"sweep {sweep_id}: definition plans {planned} rows, {rows} stored")
        elif status == SweepStatus.DONE and open_rows:
            bad.append(f"sweep {sweep_id}: status done with {open_rows} rows not finished")
        if len(bad) > before:
            which.append(str(sweep_id))
    return CheckResult(name, not bad, len(bad), bad[:EXAMPLES], which)
