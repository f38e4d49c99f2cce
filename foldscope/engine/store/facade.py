"""The ``Store`` facade: one connection to a foldscope database and its typed repositories."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foldscope.core.fabrication import CLEARED, HumanVerdict
from foldscope.core.forensics import FactHistory
from foldscope.core.row import Check, FoldRecord, PlannedRow, RowRecord, RowResult, StoredCheck
from foldscope.core.study import FoldMeasure
from foldscope.core.tally import FinalCarrier, RowClasses, TallyRow
from foldscope.core.validity import Validity
from foldscope.engine.activity import ControlRequest, RunnerStatus, StoredEvent
from foldscope.engine.events import Event
from foldscope.engine.procinfo import RunnerId
from foldscope.engine.store.activity_log import EVENT_CAP, ActivityRepository
from foldscope.engine.store.audits import AuditRepository
from foldscope.engine.store.cache import CacheRepository
from foldscope.engine.store.checks import CheckRepository
from foldscope.engine.store.connection import StoreConnection, database_error
from foldscope.engine.store.export import ExportRepository
from foldscope.engine.store.rows import (
    FoldState,
    RowRepository,
    RunSpan,
    SweepTotals,
    TokenPair,
)
from foldscope.engine.store.sweeps import NewSweep, SweepHeader, SweepRecord, SweepRepository

if TYPE_CHECKING:  # loaded when an audit is read (engine.store.audits)
    from foldscope.core.audit import StoredAudit


class Store:
    """One connection to a foldscope database and its typed repositories. Connections are
    thread-bound: one Store per thread.

    Each kind of method lives in its repository (``sweep_repo``: sweeps and runner claims;
    ``row_repo``: rows, folds and fact courses; ``check_repo``: checks and verdicts;
    ``activity_repo``: the event log, runner status and control; ``audit_repo``: session audits;
    ``cache_repo``: the response cache; ``export_repo``: the evidence package's whole-database
    reads); the methods below forward to them, so a caller that needs the whole database keeps
    one object.

    Args:
        path: the database file; created (with parent folders) when missing unless ``readonly``.
        readonly: open an existing database for reading only (the TUI's and reports' mode; an
            older schema is read through a migrated temporary copy, the file left as it is).
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self._conn = StoreConnection(path, readonly=readonly)
        self.path = self._conn.path
        self.readonly = readonly
        self.db = self._conn.db
        self.sweep_repo = SweepRepository(self._conn)
        self.row_repo = RowRepository(self._conn)
        self.check_repo = CheckRepository(self._conn)
        self.activity_repo = ActivityRepository(self._conn)
        self.audit_repo = AuditRepository(self._conn)
        self.cache_repo = CacheRepository(self._conn)
        self.export_repo = ExportRepository(self._conn)

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

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the database."""
        return self._conn.schema_version

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """A transaction: everything inside commits together or not at all."""
        with self._conn.atomic():
            yield

    @contextmanager
    def immediate(self) -> Iterator[None]:
        """A write transaction that takes the write lock at once (``BEGIN IMMEDIATE``); see
        ``StoreConnection.immediate``."""
        with self._conn.immediate():
            yield

    # -- sweeps (``sweep_repo``) -------------------------------------------------------------------

    def create_sweep(self, sweep: NewSweep, rows: Iterable[PlannedRow]) -> None:
        """Store a sweep and its whole plan in one transaction, before any call is made."""
        return self.sweep_repo.create_sweep(sweep, rows)

    def sweep(self, sweep_id: str) -> SweepRecord | None:
        """Return one sweep with its definition and pins decoded, or None."""
        return self.sweep_repo.sweep(sweep_id)

    def heartbeat(self, sweep_id: str, pid: int | None) -> float | None:
        """When the sweep's claimed runner last wrote its status (None: no live record)."""
        return self.sweep_repo.heartbeat(sweep_id, pid)

    def claim_holds(self, sweep: SweepRecord) -> bool:
        """Whether a sweep's recorded runner still holds it: alive here, or beating (its
        heartbeat fresh) where its pid cannot be seen (another pid namespace)."""
        return self.sweep_repo.claim_holds(sweep)

    def live_status(self, sweep: SweepRecord) -> str:
        """A sweep's status as a reader should show it: "running" (or "paused") only while
        its runner lives."""
        return self.sweep_repo.live_status(sweep)

    def sweeps(self) -> list[SweepHeader]:
        """Every sweep, newest first (without definitions)."""
        return self.sweep_repo.sweeps()

    def latest_sweep_id(self) -> str | None:
        """The newest sweep's id, or None for an empty database."""
        return self.sweep_repo.latest_sweep_id()

    def sweep_by_digest(self, digest: str) -> str | None:
        """The newest sweep planned from an identical definition, so a rerun resumes it."""
        return self.sweep_repo.sweep_by_digest(digest)

    def set_sweep_status(self, sweep_id: str, status: str, reason: str | None = None) -> None:
        """Record a sweep's status (planned, running, done, stopped) and why it stopped."""
        return self.sweep_repo.set_sweep_status(sweep_id, status, reason)

    def claim(self, sweep_id: str, runner: RunnerId,
              is_alive: Callable[[RunnerId], bool] | None = None) -> None:
        """Record ``runner`` as the sweep's runner, unless a live one already is."""
        return self.sweep_repo.claim(sweep_id, runner, is_alive)

    def release(self, sweep_id: str, runner: RunnerId) -> None:
        """Clear this runner's claim on a sweep."""
        return self.sweep_repo.release(sweep_id, runner)

    def record_fault(self, sweep_id: str, exc: BaseException) -> None:
        """Best effort, after a database failure: mark the sweep stopped with the reason."""
        return self.sweep_repo.record_fault(sweep_id, exc)

    def set_pins(self, sweep_id: str, pins: dict[str, Any]) -> None:
        """Record the endpoint pins (quantization, context, prices, parameters) of a sweep."""
        return self.sweep_repo.set_pins(sweep_id, pins)


    # -- rows and folds (``row_repo``) -------------------------------------------------------------

    def unpriced_sql(self, prefix: str = "") -> str:
        """SQL for a row's unpriced calls."""
        return self.row_repo.unpriced_sql(prefix)

    def answer_sql(self, prefix: str = "") -> str:
        """SQL for a row's answer text, wherever this database keeps it (``prefix``: a table
        alias with its dot, e.g. ``"r."``)."""
        return self.row_repo.answer_sql(prefix)

    def reply_sql(self, prefix: str = "") -> str:
        """SQL for a fold's reply text, wherever this database keeps it (see
        ``answer_sql``)."""
        return self.row_repo.reply_sql(prefix)

    def rows(self, sweep_id: str, *, since: int | None = None) -> list[RowRecord]:
        """A sweep's rows in execution order (no answer text)."""
        return self.row_repo.rows(sweep_id, since=since)

    def changes(self, sweep_id: str, since: int | None
                ) -> tuple[list[TallyRow], dict[int, RowClasses], dict[int, FinalCarrier]]:
        """Rows changed after change sequence ``since`` (all, for None), with their checks'
        classes and their last fold's carrier figures, read in one snapshot: what a live
        view needs, and only that (``core.tally.TallyRow``)."""
        return self.row_repo.changes(sweep_id, since)

    def cell_rows(self, sweep_id: str, scenario: str | None, model: str, arm: str, *,
                  since: int | None = None) -> list[RowRecord]:
        """One cell's rows in execution order, with their answers; ``since`` as in ``rows``."""
        return self.row_repo.cell_rows(sweep_id, scenario, model, arm, since=since)

    def row(self, row_id: int) -> RowRecord | None:
        """One row with everything recorded on it, its answer included."""
        return self.row_repo.row(row_id)

    def start_row(self, row_id: int) -> None:
        """Mark a row running (idempotent: resuming a running row keeps its folds)."""
        return self.row_repo.start_row(row_id)

    def commit_fold(self, row_id: int, fold: FoldRecord,
                    histories: Sequence[FactHistory] = (),
                    stored: Sequence[FactHistory] = ()) -> None:
        """Commit one fold, its facts' courses so far and its row's advance, atomically."""
        return self.row_repo.commit_fold(row_id, fold, histories, stored)

    def fact_histories(self, row_id: int) -> list[FactHistory]:
        """A row's stored fact courses in planting order (none before its first fold)."""
        return self.row_repo.fact_histories(row_id)

    def rewrite_timeline(self, row_id: int, folds: Sequence[FoldRecord],
                         histories: Sequence[FactHistory],
                         checks: Sequence[Check] = (), recall: float | None = None) -> None:
        """Replace a row's recomputed fact states, courses and answer classes in one
        transaction (``foldscope reindex``). Flags a person set on checks are kept."""
        return self.row_repo.rewrite_timeline(row_id, folds, histories, checks, recall)

    def folds(self, row_id: int, *, start: int = 0) -> list[FoldRecord]:
        """A row's committed folds in order, from fold index ``start`` on."""
        return self.row_repo.folds(row_id, start=start)

    def fold_states(self, sweep_id: str) -> Iterator[FoldState]:
        """Every fold of a sweep without its texts: (row id, fold index, first chunk, last
        chunk, fact states, mutations), by row and fold (the survival view's whole input)."""
        return self.row_repo.fold_states(sweep_id)

    def last_fold(self, row_id: int) -> FoldRecord | None:
        """The most recent committed fold of a row, or None."""
        return self.row_repo.last_fold(row_id)

    def finish_row(self, row_id: int, result: RowResult, *, prompt_tokens: int | None,
                   completion_tokens: int | None, est_prompt_tokens: int, cost_usd: float | None,
                   retries: int, cached: bool, wall_s: float,
                   answer_truncated: bool = False, answer_finish: str | None = None) -> None:
        """Commit the recall answer, the per-fact checks and the row's verdict together."""
        return self.row_repo.finish_row(row_id, result, prompt_tokens=prompt_tokens,
                                        completion_tokens=completion_tokens,
                                        est_prompt_tokens=est_prompt_tokens, cost_usd=cost_usd,
                                        retries=retries, cached=cached, wall_s=wall_s,
                                        answer_truncated=answer_truncated,
                                        answer_finish=answer_finish)

    def fail_row(self, row_id: int, *, error: str, verdict: Validity, wall_s: float,
                 call_retries: int = 0) -> None:
        """Mark a row failed with its verdict (folds committed so far are kept)."""
        return self.row_repo.fail_row(row_id, error=error, verdict=verdict, wall_s=wall_s,
                                      call_retries=call_retries)

    def add_call_usage(self, row_id: int, *, retries: int, prompt_tokens: int | None,
                       completion_tokens: int | None, cost_usd: float | None) -> None:
        """Add a call that committed no fold (its chunk waits for catch-up) to its row's
        usage."""
        return self.row_repo.add_call_usage(row_id, retries=retries, prompt_tokens=prompt_tokens,
                                            completion_tokens=completion_tokens, cost_usd=cost_usd)

    def reset_row_for_retry(self, row_id: int) -> None:
        """Start a retryable row over as a new attempt: its folds and checks are discarded."""
        return self.row_repo.reset_row_for_retry(row_id)

    def release_running_rows(self, sweep_id: str) -> int:
        """Put rows a stopping runner leaves ``running`` back to ``planned`` (their
        committed folds stay; a rerun resumes each from its next chunk). Returns how many."""
        return self.row_repo.release_running_rows(sweep_id)

    def highest_call_cost(self, sweep_id: str) -> float:
        """The most one stored call of a sweep cost (0.0 when none states a cost)."""
        return self.row_repo.highest_call_cost(sweep_id)

    def token_pairs(self, sweep_id: str) -> Iterator[TokenPair]:
        """Estimated vs reported prompt tokens of every fold that has a reported count."""
        return self.row_repo.token_pairs(sweep_id)

    def sweep_totals(self) -> dict[str, SweepTotals]:
        """Every sweep's rows finished and planned, first start and spend, by sweep id."""
        return self.row_repo.sweep_totals()

    def run_span(self, sweep_id: str) -> RunSpan:
        """Rows done, the first row's start and the last row's finish of a sweep."""
        return self.row_repo.run_span(sweep_id)

    def fold_measures(self, sweep_id: str) -> dict[int, list[FoldMeasure]]:
        """Every committed fold's measures of a sweep, by row id, in fold order."""
        return self.row_repo.fold_measures(sweep_id)

    def row_batches(self, sweep_id: str, size: int | None = None) -> Iterator[list[RowRecord]]:
        """A sweep's rows in execution order, ``size`` at a time, read as iterated."""
        return self.row_repo.row_batches(sweep_id, size)

    def rows_fold_measures(self, row_ids: Sequence[int]) -> dict[int, list[FoldMeasure]]:
        """The committed folds' measures of these rows, by row id, in fold order."""
        return self.row_repo.rows_fold_measures(row_ids)

    def progress(self, sweep_id: str) -> dict[str, int]:
        """Row counts by status, plus folds committed, for progress displays."""
        return self.row_repo.progress(sweep_id)


    # -- response cache (``cache_repo``) -----------------------------------------------------------

    def cached_reply(self, key: str) -> dict[str, Any] | None:
        """A cached reply by key (pin, request digest and repeat index), or None."""
        return self.cache_repo.cached_reply(key)

    def drop_cached_reply(self, key: str) -> None:
        """Remove a cache entry that may not be replayed (it failed validation)."""
        return self.cache_repo.drop_cached_reply(key)

    def cache_reply(self, key: str, model: str, reply: dict[str, Any]) -> None:
        """Store a successful reply for replay; an existing entry is kept (first answer
        wins)."""
        return self.cache_repo.cache_reply(key, model, reply)


    # -- checks and verdicts (``check_repo``) ------------------------------------------------------

    def checks(self, row_id: int) -> list[StoredCheck]:
        """The per-fact checks of a finished row."""
        return self.check_repo.checks(row_id)

    def check(self, check_id: int) -> StoredCheck | None:
        """One check by id, or None."""
        return self.check_repo.check(check_id)

    def set_flag(self, check_id: int, flagged: bool, author: str = "unknown") -> None:
        """Flag a checked answer as fabricated, or withdraw its verdict (the ``f`` toggle).

        Raises:
            FlagRefused: the answer is correct, an abstention or empty (``core.fabrication``).
        """
        self.add_verdict(check_id, "fabricated" if flagged else CLEARED, author=author)

    def add_verdict(self, check_id: int, verdict: str, reason: str | None = None, *,
                    author: str) -> int:
        """Record a person's verdict on a checked answer (a new history entry; the automatic
        class is never touched). The check's ``flagged`` mark follows the latest verdict."""
        return self.check_repo.add_verdict(check_id, verdict, reason, author=author)

    def undo_verdict(self, check_id: int) -> bool:
        """Take back the latest verdict entry of a check (the one before it applies again)."""
        return self.check_repo.undo_verdict(check_id)

    def remove_verdict(self, check_id: int, entry_id: int) -> bool:
        """Take back one verdict entry of a check (the one a writer made; the entry before
        it applies again)."""
        return self.check_repo.remove_verdict(check_id, entry_id)

    def verdicts(self, sweep_id: str) -> dict[int, HumanVerdict]:
        """Every check of a sweep that has a verdict now (its latest entry, unless
        withdrawn)."""
        return self.check_repo.verdicts(sweep_id)

    def verdict(self, check_id: int) -> HumanVerdict | None:
        """One check's verdict now (its latest entry, unless withdrawn), or None: what a
        writer reads back after a write, instead of the whole sweep's verdicts."""
        return self.check_repo.verdict(check_id)

    def verdict_history(self, check_id: int) -> list[HumanVerdict]:
        """Every verdict entry of a check, oldest first (withdrawals included)."""
        return self.check_repo.verdict_history(check_id)

    def rows_checks(self, row_ids: Sequence[int]) -> dict[int, list[StoredCheck]]:
        """The checks of these rows, by row id, each in the order asked."""
        return self.check_repo.rows_checks(row_ids)

    def review_checks(self, sweep_id: str, classes: Sequence[str]) -> Iterator[StoredCheck]:
        """A sweep's checks of these classes or with a verdict ever, in id order."""
        return self.check_repo.review_checks(sweep_id, classes)

    def sweep_checks(self, sweep_id: str) -> Iterator[StoredCheck]:
        """Every check of a sweep, for check-level statistics: read in batches as it is
        iterated (a 50,000-row sweep has 700,000), each label, expected value and class text
        one shared string."""
        return self.check_repo.sweep_checks(sweep_id)


    # -- a live run's event log, status and control (``activity_repo``) ----------------------------

    def add_events(self, sweep_id: str, events: list[Event], cap: int = EVENT_CAP) -> None:
        """Append events to a sweep's log in one transaction, keeping only its newest
        ``cap``."""
        return self.activity_repo.add_events(sweep_id, events, cap)

    def events(self, sweep_id: str, *, since: int = 0, limit: int = EVENT_CAP
               ) -> list[StoredEvent]:
        """A sweep's logged events after event id ``since``, oldest first (at most
        ``limit``, the newest of them)."""
        return self.activity_repo.events(sweep_id, since=since, limit=limit)

    def set_runner_status(self, sweep_id: str, status: RunnerStatus) -> None:
        """Record the live runner's status (one row per sweep, replaced)."""
        return self.activity_repo.set_runner_status(sweep_id, status)

    def runner_status(self, sweep_id: str) -> RunnerStatus | None:
        """The last status a runner of this sweep recorded, or None."""
        return self.activity_repo.runner_status(sweep_id)

    def request_control(self, sweep_id: str, request: str, reason: str) -> None:
        """Ask the sweep's runner to pause, resume or cancel (it polls this between calls)."""
        return self.activity_repo.request_control(sweep_id, request, reason)

    def control(self, sweep_id: str) -> ControlRequest | None:
        """The last control request for a sweep, or None."""
        return self.activity_repo.control(sweep_id)

    def clear_control(self, sweep_id: str) -> None:
        """Forget a sweep's control request (a new run starts unpaused)."""
        return self.activity_repo.clear_control(sweep_id)


    # -- session audits (``audit_repo``) -----------------------------------------------------------

    def add_audit(self, doc: dict[str, Any]) -> int:
        """Store one session audit (the ``audit --json`` document) and return its id."""
        return self.audit_repo.add_audit(doc)

    def audits(self) -> list[StoredAudit]:
        """Every stored session audit, newest first."""
        return self.audit_repo.audits()

    def audit(self, audit_id: int) -> StoredAudit | None:
        """One stored session audit, or None."""
        return self.audit_repo.audit(audit_id)

