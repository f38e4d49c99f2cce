"""Fact timelines read from a database: one row's (inspector, ``foldscope inspect``), a whole
sweep's (survival view), and ``foldscope reindex``, which recomputes them by today's rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from foldscope.core.cells import CellKey, cell_key, group_cells, valid_rows
from foldscope.core.errors import ScenarioError, StoreError
from foldscope.core.forensics import (
    FactHistory,
    FoldFacts,
    Timeline,
    advance_histories,
    display_order,
    start_histories,
)
from foldscope.core.row import (
    Check,
    FoldRecord,
    RowRecord,
    grade_checks,
    recompute_fold,
    stored_fold_facts,
    stored_timeline,
)
from foldscope.core.scenario import Fact, Scenario
from foldscope.core.status import RowStatus
from foldscope.core.survival import DeathTable, SurvivalCurve, death_table, survival_curves
from foldscope.engine.loader import load_scenario
from foldscope.engine.store import Store


@dataclass(frozen=True)
class RowTimeline:
    """One row with its scenario, its folds and its fact timeline (facts in display order)."""

    row: RowRecord
    scenario: Scenario
    facts: tuple[Fact, ...]
    folds: tuple[FoldRecord, ...]
    timeline: Timeline


def _scenario(name: str) -> Scenario:
    try:
        return load_scenario(name)
    except ScenarioError as exc:
        raise StoreError(f"scenario {name!r} of this database cannot be loaded: {exc}") from None


def read_row_timeline(store: Store, row_id: int) -> RowTimeline:
    """Read one row's timeline (stored courses when complete, else derived from its folds).

    Raises:
        StoreError: no row has that id, or its scenario cannot be loaded.
    """
    row = store.row(row_id)
    if row is None:
        raise StoreError(f"{store.path}: no row {row_id}")
    scenario = _scenario(row.scenario)
    facts = tuple(display_order(scenario.facts))
    folds = tuple(store.folds(row_id))
    timeline = stored_timeline(folds, facts, store.fact_histories(row_id))
    return RowTimeline(row, scenario, facts, folds, timeline)


@dataclass(frozen=True)
class SweepForensics:
    """A sweep's survival curves per cell and where its facts die per scenario, over its valid
    rows (``core.cells.valid_rows``: planned, running, failed and catch-up-distributed rows are
    left out, as from every other aggregate)."""

    curves: list[SurvivalCurve]
    """One per cell (scenario, model, arm) with valid rows that have folds."""
    deaths: dict[str, DeathTable]
    """Scenario -> where its graded facts die."""
    rows: int
    """Valid rows with folds (the curves' rows together)."""
    scenarios: tuple[str, ...] = ()
    """The scenarios with curves, in the order their first row comes."""
    excluded: int = 0
    """Rows of the sweep left out because they are not valid."""

    def rows_of(self, scenario: str) -> int:
        """Valid rows with folds of one scenario."""
        return sum(c.rows for c in self.curves if c.scenario == scenario)


def sweep_forensics(store: Store, sweep_id: str) -> SweepForensics:
    """Every valid row's timeline of a sweep, from the folds' stored states (no carrier is read),
    pooled into survival curves per cell and death tables per scenario."""
    every = store.rows(sweep_id)
    rows = {r.id: r for r in valid_rows(every)}
    scenarios: dict[str, Scenario] = {}
    per_row: dict[int, list[FoldFacts]] = {}
    for row_id, fold_index, first, last, status, mutations in store.fold_states(sweep_id):
        row = rows.get(row_id)
        if row is None:
            continue
        if row.scenario not in scenarios:
            scenarios[row.scenario] = _scenario(row.scenario)
        per_row.setdefault(row_id, []).append(stored_fold_facts(
            fold_index, first, last, status, mutations, scenarios[row.scenario].facts))
    timelines: list[tuple[CellKey, Timeline]] = []
    for row_id, entries in per_row.items():
        row = rows[row_id]
        courses = start_histories(scenarios[row.scenario].facts)
        for entry in entries:
            courses = advance_histories(courses, entry)
        timelines.append((cell_key(row), Timeline(tuple(entries), courses)))
    deaths = {}
    for name, group in group_cells(timelines, lambda kt: kt[0].scenario).items():
        kinds = {f.label: f.kind for f in scenarios[name].facts}
        deaths[name] = death_table((t for _, t in group), kinds)
    return SweepForensics(survival_curves(timelines), deaths, len(timelines),
                          tuple(deaths), len(every) - len(rows))


@dataclass(frozen=True)
class ReindexResult:
    """What ``foldscope reindex`` did."""

    rows: int
    folds: int
    regraded: int
    """Finished rows whose checks were recomputed."""


REINDEX_BATCH = 32
"""Rows one worker process recomputes per task."""

REINDEX_PARALLEL_FROM = 128
"""Rows from which ``reindex`` spreads the work over processes (below, starting them costs more
than it saves)."""

_Recomputed = tuple[int, list[FoldRecord], tuple[FactHistory, ...], tuple[Check, ...],
                    float | None, bool]
_WORKER_SCENARIOS: dict[str, Scenario] = {}


def _recompute_row(scenario_name: str, row_id: int, stored: list[FoldRecord],
                   answer: str | None) -> _Recomputed:
    """One row by today's rules: its folds' fact states, its facts' courses and, for a
    finished row (``answer`` given), its checks and recall. Pure of the store, so a worker
    process can run it."""
    scenario = _WORKER_SCENARIOS.get(scenario_name)
    if scenario is None:
        scenario = _WORKER_SCENARIOS[scenario_name] = _scenario(scenario_name)
    folds = [recompute_fold(f, scenario.facts) for f in stored]
    timeline = stored_timeline(folds, scenario.facts)
    checks: tuple[Check, ...] = ()
    recall = None
    if answer is not None:
        checks = grade_checks(answer, scenario.graded,
                              carrier=folds[-1].carrier if folds else "",
                              rivals=[f.value for f in scenario.facts],
                              carriers=[f.carrier for f in folds[:-1]])
        recall = sum(c.correct for c in checks) / len(checks) if checks else 0.0
    return row_id, folds, timeline.facts if folds else (), checks, recall, answer is not None


def _recompute_batch(batch: list[tuple[str, int, list[FoldRecord], str | None]]
                     ) -> list[_Recomputed]:
    return [_recompute_row(*item) for item in batch]


def reindex(store: Store, sweep_id: str | None = None,
            progress: Callable[[int, int], None] | None = None, *,
            workers: int | None = None) -> ReindexResult:
    """Recompute every row's fact states, courses, answer classes and recall by today's rules,
    one transaction per row (an interrupted reindex leaves every row consistent).

    Rows are read and written here in batches, in order; the recomputing (pure ``core``) runs
    in ``workers`` processes (default: one per core) once there are ``REINDEX_PARALLEL_FROM``
    rows, with a bounded number of batches in flight, so memory does not grow with the sweep.

    Args:
        store: a writable store.
        sweep_id: only this sweep's rows (None: every sweep).
        progress: called with (rows done, rows total) after each row.
        workers: processes to recompute in (1: this one).

    Raises:
        StoreError: the sweep does not exist, or a scenario cannot be loaded.
    """
    import os
    from collections import deque

    if sweep_id is not None:
        if store.sweep(sweep_id) is None:
            raise StoreError(f"{store.path}: no sweep {sweep_id!r}")
        sweeps = [sweep_id]
    else:
        sweeps = [s.id for s in store.sweeps()]
    # Each row's id and scenario only (its record, folds and answer are read batch by batch).
    rows = [(r.id, r.scenario) for s in sweeps for batch in store.row_batches(s) for r in batch]
    for name in {scenario for _, scenario in rows}:
        _scenario(name)  # a scenario that cannot be loaded is refused before anything changes

    def batches() -> Any:
        for at in range(0, len(rows), REINDEX_BATCH):
            batch = []
            for row_id, scenario in rows[at:at + REINDEX_BATCH]:
                full = store.row(row_id)
                answer = (full.answer if full is not None and full.status == RowStatus.DONE else None)
                batch.append((scenario, row_id, store.folds(row_id), answer))
            yield batch

    folds_done = regraded = done = 0

    def write(results: list[_Recomputed]) -> None:
        nonlocal folds_done, regraded, done
        for row_id, folds, histories, checks, recall, graded in results:
            store.rewrite_timeline(row_id, folds, histories, checks, recall)
            folds_done += len(folds)
            regraded += graded
            done += 1
            if progress is not None:
                progress(done, len(rows))

    count = workers if workers is not None else (os.cpu_count() or 1)
    if count <= 1 or len(rows) < REINDEX_PARALLEL_FROM:
        for batch in batches():
            write(_recompute_batch(batch))
        return ReindexResult(len(rows), folds_done, regraded)
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=count) as pool:
        pending: deque[Any] = deque()
        for batch in batches():
            pending.append(pool.submit(_recompute_batch, batch))
            if len(pending) >= 2 * count:  # a bounded read-ahead: memory stays flat
                write(pending.popleft().result())
        while pending:
            write(pending.popleft().result())
    return ReindexResult(len(rows), folds_done, regraded)
