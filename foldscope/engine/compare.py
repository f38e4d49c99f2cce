"""The compare view's read model: two rows of a sweep with their folds, checks and the
scenario's planted facts, and the row a row is compared with by default."""

from __future__ import annotations

from dataclasses import dataclass

from foldscope.core.compare import counterpart_arm
from foldscope.core.errors import FoldscopeError, ScenarioError
from foldscope.core.forensics import display_order
from foldscope.core.row import FoldRecord, RowRecord, StoredCheck
from foldscope.core.scenario import Fact
from foldscope.engine.loader import load_scenario
from foldscope.engine.store import Store


class CompareError(FoldscopeError):
    """Two rows cannot be compared (a row not found, or no row to pair it with)."""


@dataclass(frozen=True)
class CompareSide:
    """One row of a comparison, with everything the view shows of it."""

    row: RowRecord
    """The row, its answer included."""
    folds: tuple[FoldRecord, ...]
    checks: tuple[StoredCheck, ...]


@dataclass(frozen=True)
class ComparePair:
    """Two rows side by side and the planted facts of their scenario (display order)."""

    a: CompareSide
    b: CompareSide
    facts: tuple[Fact, ...]
    """Row A's scenario's planted facts, graded first (empty if the scenario file is gone)."""


def counterpart(store: Store, sweep_id: str, row: RowRecord) -> RowRecord | None:
    """The row a row is compared with by default: the same scenario, model and repeat under
    the other arm of the study's central contrast (j vs q), else under the sweep's first other
    arm (``core.compare.counterpart_arm``); None if the sweep has no such row."""
    rows = store.rows(sweep_id)
    arms = list(dict.fromkeys(r.arm for r in rows))
    same = {r.arm: r for r in rows
            if (r.scenario, r.model, r.repeat) == (row.scenario, row.model, row.repeat)
            and r.id != row.id}
    arm = counterpart_arm(row.arm, [a for a in arms if a == row.arm or a in same])
    return same.get(arm) if arm is not None else None


def _side(store: Store, row_id: int) -> CompareSide:
    row = store.row(row_id)
    if row is None:
        raise CompareError(f"no row {row_id} in this database")
    return CompareSide(row, tuple(store.folds(row_id)), tuple(store.checks(row_id)))


def read_pair(store: Store, sweep_id: str, a_id: int, b_id: int | None = None) -> ComparePair:
    """Read two rows for the compare view.

    Args:
        store: an open store.
        sweep_id: the sweep the rows are of (the counterpart is looked for in it).
        a_id: row A.
        b_id: row B (None: row A's counterpart, see :func:`counterpart`).

    Raises:
        CompareError: a row is not found, or row A has no counterpart.
    """
    a = _side(store, a_id)
    if b_id is None:
        other = counterpart(store, sweep_id, a.row)
        if other is None:
            raise CompareError(f"row {a_id} has no counterpart (no row of the same model, "
                               "scenario and repeat under another arm): mark a row with m first")
        b_id = other.id
    if b_id == a_id:
        raise CompareError(f"row {a_id} would be compared with itself: mark another row")
    b = _side(store, b_id)
    try:
        facts = tuple(display_order(load_scenario(a.row.scenario).facts))
    except ScenarioError:
        facts = ()
    return ComparePair(a, b, facts)
