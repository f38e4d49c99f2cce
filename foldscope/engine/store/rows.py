"""The rows and folds repository: planned rows, committed folds, facts' courses, answers."""

from __future__ import annotations

import dataclasses
import json
import math
import operator
import sqlite3
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from foldscope.core.forensics import FactHistory
from foldscope.core.row import (
    FOLD_FIELDS,
    ROW_FIELDS,
    Check,
    FoldRecord,
    RowRecord,
    RowResult,
)
from foldscope.core.status import RowStatus
from foldscope.core.study import FOLD_MEASURE_FIELDS, FoldMeasure
from foldscope.core.tally import TALLY_FIELDS, FinalCarrier, RowClasses, TallyRow, row_classes
from foldscope.core.validity import Validity
from foldscope.engine.store.connection import _FOLD_SEQ, _ROW_SEQ, Repository, column_names, named

_JSON_FOLD_FIELDS = {"fact_status": "fact_status_json", "fact_mutations": "fact_mutations_json"}
_FOLD_COLUMNS: tuple[str, ...] = tuple(_JSON_FOLD_FIELDS.get(f, f) for f in FOLD_FIELDS)
"""The fold table's record columns: the fold record's fields (its fact states as JSON)."""

_REPLY_AT = _FOLD_COLUMNS.index("reply")

_HISTORY_COLUMNS = ("label", "value", "graded", "chunk", "planted_fold", "first_carried_fold",
                    "lost_fold", "returned", "final_state", "final_altered", "final_rule")
"""The ``fact_histories`` columns of one fact's course (``core.forensics.FactHistory``)."""

_HISTORY_GETTER = operator.attrgetter(*_HISTORY_COLUMNS)

_INSERT_FOLD = (f"INSERT INTO folds (row_id, seq, reply_digest, {', '.join(_FOLD_COLUMNS)}) "
                f"VALUES (?, {_FOLD_SEQ}, ?, {', '.join('?' for _ in _FOLD_COLUMNS)})")
"""A fold's insert (``RowRepository.commit_fold``), written once."""
_REPLACE_HISTORY = (f"INSERT OR REPLACE INTO fact_histories (row_id, position, "
                    f"{', '.join(_HISTORY_COLUMNS)}) "
                    f"VALUES (?, ?, {', '.join('?' for _ in _HISTORY_COLUMNS)})")
"""A fact course's write (``RowRepository._write_histories``), written once."""


def _history_values(history: FactHistory) -> tuple[Any, ...]:
    """One course's column values (booleans as 0/1)."""
    return tuple(int(v) if isinstance(v, bool) else v for v in _HISTORY_GETTER(history))


def _typed(cls: type, names: tuple[str, ...]) -> dict[str, str]:
    annotations = {f: t for c in reversed(cls.__mro__) for f, t in
                   getattr(c, "__annotations__", {}).items()}
    return {name: str(annotations[name]) for name in names}


_FOLD_TYPES = _typed(FoldRecord, FOLD_FIELDS)
_ROW_TYPES = _typed(RowRecord, ROW_FIELDS)


def _converters(types: dict[str, str], names: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """The positions of a cursor's boolean and optional-boolean columns, found by name."""
    return (tuple(i for i, n in enumerate(names) if types.get(n) == "bool"),
            tuple(i for i, n in enumerate(names) if types.get(n) == "bool | None"))


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



_FOLD_NAMES = {column: field for field, column in _JSON_FOLD_FIELDS.items()}
"""A fold column's record field where the two are named differently (JSON columns)."""


def _folds(cursor: sqlite3.Cursor) -> list[FoldRecord]:
    """A query's folds, each column read into the ``FoldRecord`` field of its name."""
    names = [_FOLD_NAMES.get(n, n) for n in column_names(cursor)]
    bools, optional = _converters(_FOLD_TYPES, names)
    out = []
    for values in cursor:
        data = dict(zip(names, values))
        for i in bools:
            data[names[i]] = bool(values[i])
        for i in optional:
            if values[i] is not None:
                data[names[i]] = bool(values[i])
        data["fact_status"] = json.loads(data["fact_status"])
        data["fact_mutations"] = {k: (v[0], v[1])
                                  for k, v in json.loads(data["fact_mutations"]).items()}
        out.append(FoldRecord(**data))
    return out


def _rows(cursor: sqlite3.Cursor) -> list[RowRecord]:
    """A query's rows, each column read into the ``RowRecord`` field of its name."""
    return _decode_rows(column_names(cursor), cursor)


def _decode_rows(names: Sequence[str], records: Iterable[Sequence[Any]],
                 shared: dict[str, str] | None = None) -> list[RowRecord]:
    """Rows from their stored values (columns ``names``); with ``shared``, each short text
    (scenario, model, arm, status, reason) one string across every row decoded with it."""
    # Booleans converted by position found once by name, the rest as stored: a first live poll
    # decodes every row.
    names = [sys.intern(n) for n in names]  # matched to the record's fields by identity
    bools, optional = _converters(_ROW_TYPES, names)
    # Columns in the record's own field order (as every query here selects them): the values
    # go in by position, the fields having been matched by name once.
    positional = names == list(_RECORD_FIELDS[:len(names)])
    out = []
    for values in records:
        if bools or optional or shared is not None:
            values = list(values)
            for i in bools:
                values[i] = bool(values[i])
            for i in optional:
                if values[i] is not None:
                    values[i] = bool(values[i])
            if shared is not None:
                values = [shared.setdefault(v, v) if isinstance(v, str) and len(v) < 200 else v
                          for v in values]
        out.append(RowRecord(*values) if positional else RowRecord(**dict(zip(names, values))))
    return out


_RECORD_FIELDS = tuple(f.name for f in dataclasses.fields(RowRecord))
"""Every field of ``RowRecord`` in its order (the stored ones, then the answer)."""


ROW_DONE = RowStatus.DONE
ROW_FAILED = RowStatus.FAILED
ROW_RUNNING = RowStatus.RUNNING
ROW_PLANNED = RowStatus.PLANNED


class TokenPair(NamedTuple):
    """One fold's estimated and reported prompt tokens (``Store.token_pairs``)."""

    content_class: str | None
    est_prompt_tokens: int
    prompt_tokens: int


class FoldState(NamedTuple):
    """One fold without its texts (``Store.fold_states``: the survival view's input)."""

    row_id: int
    fold_index: int
    first_chunk: int
    last_chunk: int
    fact_status: dict[str, str]
    fact_mutations: dict[str, tuple[str, str]]


@dataclass(frozen=True, slots=True)
class SweepTotals:
    """A sweep's rows at a glance (the picker's line)."""

    rows_done: int
    """Rows finished (done or failed)."""
    rows_planned: int
    first_started: float | None
    """When its first row started (None: none has)."""
    spend_usd: float


@dataclass(frozen=True, slots=True)
class RunSpan:
    """How far a sweep's rows ran: rows done, the first start and the last finish."""

    rows_done: int
    first_started: float | None
    last_finished: float | None


ROW_BATCH = 500
"""Rows read per batch when a whole sweep is streamed (and row ids per ``IN`` list)."""


class RowRepository(Repository):
    """The ``rows``, ``folds`` and ``fact_histories`` tables (a finished row's checks are
    written with its answer, in one transaction)."""

    def _row_columns(self, prefix: str = "") -> str:
        return ", ".join(f"{prefix}{name}" for name in ROW_FIELDS)

    def unpriced_sql(self, prefix: str = "") -> str:
        """SQL for a row's unpriced calls."""
        return f"{prefix}unpriced_calls"

    def answer_sql(self, prefix: str = "") -> str:
        """SQL for a row's answer text: its body by digest (``prefix``: a table alias with its
        dot, e.g. ``"r."``)."""
        return (f"COALESCE((SELECT body FROM blobs WHERE digest = {prefix}answer_digest), "
                f"{prefix}answer)")

    def reply_sql(self, prefix: str = "") -> str:
        """SQL for a fold's reply text: its body by digest (see ``answer_sql``)."""
        return (f"COALESCE((SELECT body FROM blobs WHERE digest = {prefix}reply_digest), "
                f"{prefix}reply)")

    def _fold_select(self) -> str:
        def column(name: str) -> str:
            if name == "reply":
                return f"{self.reply_sql()} AS reply"
            return name
        return ", ".join(column(name) for name in _FOLD_COLUMNS)

    def rows(self, sweep_id: str, *, since: int | None = None) -> list[RowRecord]:
        """A sweep's rows in execution order (no answer text).

        Args:
            sweep_id: the sweep.
            since: only rows changed after this change sequence (a reader's last ``seq``).
        """
        sql = f"SELECT {self._row_columns()} FROM rows WHERE sweep_id = ?"
        params: list[Any] = [sweep_id]
        if since is not None:
            sql += " AND seq > ?"
            params.append(since)
        return _rows(self.db.execute(sql + " ORDER BY position", params))

    def row_batches(self, sweep_id: str, size: int | None = None) -> Iterator[list[RowRecord]]:
        """A sweep's rows in execution order (no answer text), ``size`` at a time, read as
        iterated: a whole-sweep command holds one batch of stored rows at once (``size``:
        ``ROW_BATCH`` unless given)."""
        size = size or ROW_BATCH
        cursor = self.db.execute(f"SELECT {self._row_columns()} FROM rows WHERE sweep_id = ? "
                                 "ORDER BY position", [sweep_id])
        names = column_names(cursor)
        shared: dict[str, str] = {}
        while batch := cursor.fetchmany(size):
            yield _decode_rows(names, batch, shared)

    def rows_fold_measures(self, row_ids: Sequence[int]) -> dict[int, list[FoldMeasure]]:
        """The committed folds' measures of these rows (one batch of a streamed sweep), by row
        id, in fold order (no carrier text; see ``fold_measures``)."""
        out: dict[int, list[FoldMeasure]] = defaultdict(list)
        for start in range(0, len(row_ids), ROW_BATCH):
            ids = list(row_ids[start:start + ROW_BATCH])
            cursor = self.db.conn.execute(
                f"SELECT row_id, {', '.join(FOLD_MEASURE_FIELDS)} FROM folds WHERE row_id IN "
                f"({', '.join('?' * len(ids))}) ORDER BY row_id, fold_index", ids)
            make = FoldMeasure  # the columns are selected in the fields' order
            for row_id, *values in cursor:
                out[row_id].append(make(*values))
        return out

    def changes(self, sweep_id: str, since: int | None
                ) -> tuple[list[TallyRow], dict[int, RowClasses], dict[int, FinalCarrier]]:
        """Rows changed after change sequence ``since`` (all, for None), with their checks'
        classes and their last fold's carrier figures, read in one snapshot: what a live view
        needs, and only that (each row's ``core.tally.TallyRow``).

        Returns:
            The changed rows in plan order, the class counts of those that have checks, and the
            final carrier of those that have a committed fold.
        """
        where = "sweep_id = ?" + (" AND seq > ?" if since is not None else "")
        params: list[Any] = [sweep_id] + ([since] if since is not None else [])
        conn = self.db.conn
        in_transaction = conn.in_transaction
        if not in_transaction:
            conn.execute("BEGIN")  # one snapshot for every read
        try:
            rows = list(map(TallyRow._make, conn.execute(
                f"SELECT {', '.join(TALLY_FIELDS)} FROM rows WHERE {where} ORDER BY position",
                params)))
            # Checks grouped by (class, detail); core.tally.row_classes counts them.
            grouped: dict[int, list[tuple[str, str | None, int, int, int]]] = {}
            for record in conn.execute(
                    "SELECT row_id, classification, class_detail, COUNT(*), SUM(flagged), "
                    "SUM(abstained) FROM checks WHERE row_id IN "
                    f"(SELECT id FROM rows WHERE {where}) "
                    "GROUP BY row_id, classification, class_detail", params):
                grouped.setdefault(record[0], []).append(record[1:])
            # Rows of a sweep share a few patterns of classes: each pattern counted once.
            patterns: dict[tuple[Any, ...], RowClasses] = {}
            classes = {}
            for row_id, groups in grouped.items():
                pattern = tuple(groups)
                found = patterns.get(pattern)
                if found is None:
                    found = patterns[pattern] = row_classes(groups)
                classes[row_id] = found
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
        sql = (f"SELECT {self._row_columns()}, {self.answer_sql()} AS answer FROM rows "
               "WHERE sweep_id = ? "
               "AND model = ? "
               "AND arm = ?")
        params: list[Any] = [sweep_id, model, arm]
        if scenario is not None:
            sql += " AND scenario = ?"
            params.append(scenario)
        if since is not None:
            sql += " AND seq > ?"
            params.append(since)
        return _rows(self.db.execute(sql + " ORDER BY position", params))

    def row(self, row_id: int) -> RowRecord | None:
        """One row with everything recorded on it, its answer included."""
        found = _rows(self.db.execute(f"SELECT {self._row_columns()}, {self.answer_sql()} AS answer "
                                      "FROM rows WHERE id = ?", [row_id]))
        return found[0] if found else None

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
        values = fold_values(fold)
        values[_REPLY_AT] = ""  # the body is stored once, in blobs, by its digest
        # The hot path of every sweep: the raw connection as a transaction (one implicit BEGIN,
        # one COMMIT, rollback on error) skips the wrapper's per-statement bookkeeping.
        conn = self.db.conn
        with conn:
            digest = self._conn.put_blob(conn, fold.reply)
            conn.execute(_INSERT_FOLD, [row_id, digest, *values])
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
        # A course the fold left alone is the very record the last commit wrote (``core.
        # forensics.advance_histories`` keeps it): told by identity before comparing fields.
        changed = (enumerate(histories) if len(stored) != len(histories) else
                   ((i, h) for i, (h, old) in enumerate(zip(histories, stored))
                    if h is not old and h != old))
        conn.executemany(_REPLACE_HISTORY, [(row_id, i, *_history_values(h)) for i, h in changed])

    def fact_histories(self, row_id: int) -> list[FactHistory]:
        """A row's stored fact courses in planting order (none before its first fold)."""
        return [FactHistory(**{**h, "graded": bool(h["graded"]), "returned": bool(h["returned"])})
                for h in named(self.db.execute(
                    f"SELECT {', '.join(_HISTORY_COLUMNS)} FROM fact_histories WHERE row_id=? "
                    "ORDER BY position", [row_id]))]

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
        return _folds(self.db.execute(
            f"SELECT {self._fold_select()} FROM folds WHERE row_id=? AND fold_index >= ? "
            "ORDER BY fold_index", [row_id, start]))

    def fold_states(self, sweep_id: str) -> Iterator[FoldState]:
        """Every fold of a sweep without its texts: (row id, fold index, first chunk, last chunk,
        fact states, mutations), by row and fold (the survival view's whole input)."""
        for row_id, index, first, last, status, changed in self.db.execute(
                "SELECT f.row_id, f.fold_index, f.first_chunk, f.last_chunk, f.fact_status_json, "
                "f.fact_mutations_json FROM folds f JOIN rows r ON r.id = f.row_id WHERE r.sweep_id = ? "
                "ORDER BY f.row_id, f.fold_index", [sweep_id]):
            yield FoldState(row_id, index, first, last, json.loads(status),
                            {k: (v[0], v[1]) for k, v in json.loads(changed).items()})

    def last_fold(self, row_id: int) -> FoldRecord | None:
        """The most recent committed fold of a row, or None."""
        found = _folds(self.db.execute(
            f"SELECT {self._fold_select()} FROM folds WHERE row_id=? "
            "ORDER BY fold_index DESC LIMIT 1", [row_id]))
        return found[0] if found else None

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
            digest = self._conn.put_blob(self.db.conn, result.answer)
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
                "answer_finish=NULL, "
                "recall=NULL, correct=NULL, graded=NULL, valid=NULL, "
                f"validity_reason=NULL, retryable=0, started_at=NULL, finished_at=NULL, "
                f"seq={_ROW_SEQ} WHERE id=?", [row_id])

    def release_running_rows(self, sweep_id: str) -> int:
        """Put rows a stopping runner leaves ``running`` back to ``planned`` (their committed
        folds stay; a rerun resumes each from its next chunk). Returns how many."""
        cur = self.db.execute(f"UPDATE rows SET status='planned', seq={_ROW_SEQ} "
                              "WHERE sweep_id=? AND status='running'", [sweep_id])
        return cur.rowcount

    def highest_call_cost(self, sweep_id: str) -> float:
        """The most one stored call of a sweep cost (0.0 when none states a cost): a fold's
        call, or a finished row's recall call (its cost less its folds', for rows whose every
        call was priced; a row run twice over-states it, which only makes a budget stricter)."""
        found = self.db.execute(
            "SELECT MAX(f.cost_usd) FROM folds f JOIN rows r ON r.id = f.row_id "
            "WHERE r.sweep_id = ? AND typeof(f.cost_usd) IN ('real', 'integer')",
            [sweep_id]).fetchone()
        recall = self.db.execute(
            "SELECT MAX(r.cost_usd - COALESCE((SELECT SUM(f.cost_usd) FROM folds f "
            "WHERE f.row_id = r.id), 0)) FROM rows r WHERE r.sweep_id = ? AND r.status = 'done' "
            "AND r.unpriced_calls = 0 AND typeof(r.cost_usd) IN ('real', 'integer') "
            "AND NOT EXISTS (SELECT 1 FROM folds f WHERE f.row_id = r.id "
            "AND typeof(f.cost_usd) NOT IN ('real', 'integer'))", [sweep_id]).fetchone()
        values = [v for v in (found[0] if found else None, recall[0] if recall else None)
                  if isinstance(v, int | float) and math.isfinite(v) and v >= 0]
        return float(max(values)) if values else 0.0

    def token_pairs(self, sweep_id: str) -> Iterator[TokenPair]:
        """Estimated vs reported prompt tokens of every fold that has a reported count, read as
        iterated (a 50,000-row sweep has 300,000 folds)."""
        cursor = self.db.conn.execute(
            f"SELECT {', '.join(f'f.{n}' for n in TokenPair._fields)} FROM folds f "
            "JOIN rows r ON r.id=f.row_id WHERE r.sweep_id=? AND f.prompt_tokens IS NOT NULL "
            "AND f.cached=0", [sweep_id])
        pick = operator.itemgetter(*(column_names(cursor).index(n) for n in TokenPair._fields))
        return (TokenPair(*pick(values)) for values in cursor)

    def sweep_totals(self) -> dict[str, SweepTotals]:
        """Every sweep's rows finished and planned, first start and spend, by sweep id."""
        return {sweep_id: SweepTotals(int(done or 0), int(planned or 0), started,
                                      float(spend or 0.0))
                for sweep_id, done, planned, started, spend in self.db.execute(
                    "SELECT sweep_id, SUM(status IN ('done', 'failed')), COUNT(*), "
                    "MIN(started_at), COALESCE(SUM(cost_usd), 0) FROM rows GROUP BY sweep_id")}

    def run_span(self, sweep_id: str) -> RunSpan:
        """Rows done, the first row's start and the last row's finish of a sweep."""
        done, first, last = self.db.execute(
            "SELECT SUM(status='done'), MIN(started_at), MAX(finished_at) FROM rows "
            "WHERE sweep_id=?", [sweep_id]).fetchone()
        return RunSpan(int(done or 0), first, last)

    def fold_measures(self, sweep_id: str) -> dict[int, list[FoldMeasure]]:
        """Every committed fold's measures of a sweep, by row id, in fold order (no carrier
        text): what the study's tables read."""
        cursor = self.db.conn.execute(
            f"SELECT f.row_id, {', '.join(f'f.{name}' for name in FOLD_MEASURE_FIELDS)} "
            "FROM folds f JOIN rows r ON r.id = f.row_id WHERE r.sweep_id = ? "
            "ORDER BY f.row_id, f.fold_index", [sweep_id])
        names = column_names(cursor)[1:]
        out: dict[int, list[FoldMeasure]] = defaultdict(list)
        for row_id, *values in cursor:
            out[row_id].append(FoldMeasure(**dict(zip(names, values))))
        return out

    def progress(self, sweep_id: str) -> dict[str, int]:
        """Row counts by status, plus folds committed, for progress displays."""
        out: dict[str, int] = {s: 0 for s in (ROW_PLANNED, ROW_RUNNING, ROW_DONE, ROW_FAILED)}
        for status, count in self.db.execute(
                "SELECT status, COUNT(*) FROM rows WHERE sweep_id=? GROUP BY status", [sweep_id]):
            out[status] = count
        out["folds"] = self.db.execute(
            "SELECT COALESCE(SUM(folds_done),0) FROM rows WHERE sweep_id=?", [sweep_id]).fetchone()[0]
        out["total"] = sum(out[s] for s in (ROW_PLANNED, ROW_RUNNING, ROW_DONE, ROW_FAILED))
        return out
