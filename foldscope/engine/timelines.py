"""Fact timelines read from a database: one row's (inspector, ``foldscope inspect``), a whole
sweep's (survival view), and ``foldscope reindex``, which recomputes them by today's rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from foldscope.core.errors import ScenarioError, StoreError
from foldscope.core.forensics import (
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
    """A sweep's survival curves and where its facts die."""

    curves: list[SurvivalCurve]
    deaths: DeathTable
    rows: int


def sweep_forensics(store: Store, sweep_id: str) -> SweepForensics:
    """Every row's timeline of a sweep, from the folds' stored states (no carrier is read)."""
    rows = {r.id: r for r in store.rows(sweep_id)}
    scenarios: dict[str, Scenario] = {}
    per_row: dict[int, list[FoldFacts]] = {}
    for row_id, fold_index, first, last, status, mutations in store.fold_states(sweep_id):
        row = rows[row_id]
        if row.scenario not in scenarios:
            scenarios[row.scenario] = _scenario(row.scenario)
        per_row.setdefault(row_id, []).append(stored_fold_facts(
            fold_index, first, last, status, mutations, scenarios[row.scenario].facts))
    timelines: list[tuple[str, str, Timeline]] = []
    kinds: dict[str, str] = {}
    for row_id, entries in per_row.items():
        row = rows[row_id]
        facts = scenarios[row.scenario].facts
        kinds.update({f.label: f.kind for f in facts})
        courses = start_histories(facts)
        for entry in entries:
            courses = advance_histories(courses, entry)
        timelines.append((row.model, row.arm, Timeline(tuple(entries), courses)))
    return SweepForensics(survival_curves(timelines), death_table((t for _, _, t in timelines),
                                                                  kinds), len(timelines))


@dataclass(frozen=True)
class ReindexResult:
    """What ``foldscope reindex`` did."""

    rows: int
    folds: int
    regraded: int
    """Finished rows whose checks were recomputed."""


def reindex(store: Store, sweep_id: str | None = None,
            progress: Callable[[int, int], None] | None = None) -> ReindexResult:
    """Recompute every row's fact states, courses, answer classes and recall by today's rules,
    one transaction per row (an interrupted reindex leaves every row consistent).

    Args:
        store: a writable store.
        sweep_id: only this sweep's rows (None: every sweep).
        progress: called with (rows done, rows total) after each row.

    Raises:
        StoreError: the sweep does not exist, or a scenario cannot be loaded.
    """
    if sweep_id is not None:
        if store.sweep(sweep_id) is None:
            raise StoreError(f"{store.path}: no sweep {sweep_id!r}")
        sweeps = [sweep_id]
    else:
        sweeps = [s["id"] for s in store.sweeps()]
    rows = [r for s in sweeps for r in store.rows(s)]
    scenarios: dict[str, Scenario] = {}
    folds_done = regraded = 0
    for done, row in enumerate(rows, 1):
        if row.scenario not in scenarios:
            scenarios[row.scenario] = _scenario(row.scenario)
        scenario = scenarios[row.scenario]
        folds = [recompute_fold(f, scenario.facts) for f in store.folds(row.id)]
        timeline = stored_timeline(folds, scenario.facts)
        checks: tuple[Check, ...] = ()
        recall = None
        full = store.row(row.id)
        if full is not None and full.status == "done" and full.answer is not None:
            checks = grade_checks(full.answer, scenario.graded,
                                  carrier=folds[-1].carrier if folds else "",
                                  rivals=[f.value for f in scenario.facts],
                                  carriers=[f.carrier for f in folds[:-1]])
            recall = sum(c.correct for c in checks) / len(checks) if checks else 0.0
            regraded += 1
        store.rewrite_timeline(row.id, folds, timeline.facts if folds else (), checks, recall)
        folds_done += len(folds)
        if progress is not None:
            progress(done, len(rows))
    return ReindexResult(len(rows), folds_done, regraded)
