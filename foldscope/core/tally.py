"""Live cell tallies: what the grid shows per (scenario, model, arm), kept up to date row by row.

A live view cannot afford to re-read a whole sweep on every poll. ``Tallies`` keeps each cell's
counts and sums as running totals: when a row changes, its old contribution is taken out and its
new one put in, so a poll costs what changed, not what the sweep holds. Validity is the verdict
stored with each row (``RowRecord.verdict``); recall and answer classes count valid rows only,
as in the report: cells and the selection are ``core.cells``'.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from foldscope.core.cells import CellKey, cell_key, enters_aggregates
from foldscope.core.fabrication import ANSWER_COUNTS, counted_as
from foldscope.core.row import RowRecord
from foldscope.core.status import RowStatus


@dataclass(frozen=True)
class RowClasses:
    """How many checks a row has, how many fell in each answer class, and flags set by hand."""

    checks: int = 0
    flagged: int = 0
    counts: tuple[int, ...] = (0,) * len(ANSWER_COUNTS)
    """Checks per count, in the order of ``core.fabrication.ANSWER_COUNTS`` (the answer classes
    with ``no_answer`` beside ``honest_abstention``; see :func:`row_classes`)."""
    abstained: int = 0
    """Checks whose answer abstained (the grader's abstention markers), whatever their class."""


def row_classes(groups: Iterable[tuple[str, str | None, int, int, int]]) -> RowClasses:
    """One row's classes from its checks grouped by (class, detail): each group as (class,
    detail, checks, flagged, abstained). Counts go through ``core.fabrication.counted_as``."""
    counts = [0] * len(ANSWER_COUNTS)
    checks = flagged = abstained = 0
    for classification, detail, n, n_flagged, n_abstained in groups:
        checks, flagged, abstained = checks + n, flagged + n_flagged, abstained + n_abstained
        key = counted_as(classification, detail)
        if key in ANSWER_COUNTS:
            counts[ANSWER_COUNTS.index(key)] += n
    return RowClasses(checks, flagged, tuple(counts), abstained)


NO_CHECKS = RowClasses()
"""The classes of a row without checks (unfinished, failed, or reset for a retry)."""


@dataclass(frozen=True)
class FinalCarrier:
    """A row's last committed fold, as far as the grid's carrier metrics go: the carrier the
    recall turn reads (or will read)."""

    headings_carried: int
    """How many of the five fixed sections arrived in the carrier (0–5)."""
    fill_fraction: float | None
    """Carried characters ÷ declared ceiling (None for arms that declare none)."""


@dataclass(frozen=True)
class CellTally:
    """One cell's counts and sums (valid rows only for recall and answer classes)."""

    scenario: str
    model: str
    arm: str
    rows: int = 0
    valid_rows: int = 0
    done_rows: int = 0
    failed_rows: int = 0
    running_rows: int = 0
    recall_rows: int = 0
    recall_sum: float = 0.0
    checks: int = 0
    flagged: int = 0
    call_retries: int = 0
    row_retries: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    """Calls of the cell's rows that were not priced: its spend is unknown when any is."""
    simulated_rows: int = 0
    recall_sq_sum: float = 0.0
    """Σ recall² over valid rows (with ``recall_sum``, the row-level interval)."""
    headings_rows: int = 0
    """Valid rows with a committed fold."""
    headings_sum: int = 0
    fill_rows: int = 0
    """Valid rows with a committed fold whose arm declares a ceiling."""
    fill_sum: float = 0.0
    folds: int = 0
    """Folds committed, every row (the parse-failure rate's base)."""
    parse_failures: int = 0
    """Folds that failed to parse, every row."""
    abstained: int = 0
    """Valid rows' checks whose answer abstained."""
    class_counts: tuple[int, ...] = (0,) * len(ANSWER_COUNTS)
    """Valid rows' checks per count, in the order of ``core.fabrication.ANSWER_COUNTS``."""

    def answers(self, name: str) -> int:
        """How many of the valid rows' checks are counted as ``name`` (one of
        ``ANSWER_COUNTS``: ``honest_abstention`` counts abstentions, ``no_answer`` answers that
        gave nothing)."""
        return self.class_counts[ANSWER_COUNTS.index(name)]

    @property
    def mean_recall(self) -> float | None:
        """Mean recall over valid rows, or None before any."""
        return self.recall_sum / self.recall_rows if self.recall_rows else None

    @property
    def simulated(self) -> bool:
        """Any reply in the cell came from a simulated model."""
        return self.simulated_rows > 0


@dataclass(frozen=True)
class Progress:
    """Row counts by status and folds committed, over the whole sweep."""

    planned: int = 0
    running: int = 0
    done: int = 0
    failed: int = 0
    folds: int = 0

    @property
    def total(self) -> int:
        """Every row of the sweep."""
        return self.planned + self.running + self.done + self.failed

    @property
    def finished(self) -> int:
        """Rows done or failed."""
        return self.done + self.failed


_SUMS = tuple(f.name for f in fields(CellTally))[3:-1]
_FLOATS = frozenset({"recall_sum", "cost_usd", "recall_sq_sum", "fill_sum"})
_PROGRESS = tuple(f.name for f in fields(Progress))


def _cell_part(row: RowRecord, classes: RowClasses,
               final: FinalCarrier | None = None) -> tuple[float, ...]:
    valid = enters_aggregates(row)
    counted = classes if valid else RowClasses()
    recall = row.recall if valid and row.recall is not None else None
    carried = final if valid else None
    filled = carried.fill_fraction if carried is not None else None
    part = {
        "rows": 1, "valid_rows": int(valid), "done_rows": int(row.status == RowStatus.DONE),
        "failed_rows": int(row.status == RowStatus.FAILED),
        "running_rows": int(row.status == RowStatus.RUNNING),
        "recall_rows": int(recall is not None), "recall_sum": recall or 0.0,
        "checks": counted.checks, "flagged": counted.flagged, "call_retries": row.call_retries,
        "row_retries": row.infra_retries, "cost_usd": row.cost_usd,
        "unpriced_calls": row.unpriced_calls,
        "simulated_rows": int(row.simulated), "recall_sq_sum": (recall or 0.0) ** 2,
        "headings_rows": int(carried is not None),
        "headings_sum": carried.headings_carried if carried is not None else 0,
        "fill_rows": int(filled is not None), "fill_sum": filled or 0.0,
        "folds": row.folds_done, "parse_failures": row.parse_failures,
        "abstained": counted.abstained}
    return (*(part[name] for name in _SUMS), *counted.counts)


def _sums(values: list[float]) -> dict[str, Any]:
    """Running sums by ``CellTally`` field name, counts back as ints."""
    return {name: float(v) if name in _FLOATS else int(v) for name, v in zip(_SUMS, values)}


def _progress_part(row: RowRecord) -> tuple[int, ...]:
    return tuple(int(row.status == s) for s in _PROGRESS[:4]) + (row.folds_done,)


class Tallies:
    """Every cell of one sweep, updated one changed row at a time."""

    def __init__(self) -> None:
        self._rows: dict[int, tuple[RowRecord, RowClasses, FinalCarrier | None]] = {}
        self._cells: dict[CellKey, list[float]] = {}
        self._progress = [0] * len(_PROGRESS)

    def __len__(self) -> int:
        return len(self._rows)

    def update(self, row: RowRecord, classes: RowClasses,
               final: FinalCarrier | None = None) -> None:
        """Put a row's latest state in (its previous one, if any, comes out first).

        Args:
            row: the row as now stored.
            classes: its checks' classes as now stored.
            final: its last committed fold's carrier figures (None before its first fold).
        """
        key = cell_key(row)
        cell = self._cells.get(key)
        if cell is None:
            cell = self._cells[key] = [0] * (len(_SUMS) + len(ANSWER_COUNTS))
        old = self._rows.get(row.id)
        if old is not None:
            cell[:] = [a - b for a, b in zip(cell, _cell_part(*old))]
            self._progress[:] = [a - b for a, b in zip(self._progress, _progress_part(old[0]))]
        cell[:] = [a + b for a, b in zip(cell, _cell_part(row, classes, final))]
        self._progress[:] = [a + b for a, b in zip(self._progress, _progress_part(row))]
        self._rows[row.id] = (row, classes, final)

    def cells(self) -> list[CellTally]:
        """Every cell's tally, in the order cells were first seen (plan order on a first read)."""
        n = len(_SUMS)
        return [CellTally(*key, **_sums(sums[:n]), class_counts=tuple(int(v) for v in sums[n:]))
                for key, sums in self._cells.items()]

    def progress(self) -> Progress:
        """Rows by status and folds committed."""
        return Progress(*self._progress)
