"""Live cell tallies: what the grid shows per (scenario, model, arm), kept up to date row by row.

A live view cannot afford to re-read a whole sweep on every poll. ``Tallies`` keeps each cell's
counts and sums as running totals: when a row changes, its old contribution is taken out and its
new one put in, so a poll costs what changed, not what the sweep holds. Validity is the verdict
stored with each row (``RowRecord.verdict``); recall and answer classes count valid rows only,
as in the report: cells and the selection are ``core.cells``'.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

from foldscope.core.cells import CellKey, cell_key, enters_aggregates
from foldscope.core.fabrication import ANSWER_COUNTS, counted_as
from foldscope.core.row import ROW_FIELDS, RowRecord, stored_verdict
from foldscope.core.status import RowStatus
from foldscope.core.validity import Validity


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


class TallyRow(NamedTuple):
    """What a tally reads of one stored row, as stored (a live view's read of ``rows``: its
    cell, stored verdict, figures and change sequence, no other field, not decoded into a
    ``RowRecord``: a first poll reads every row of the sweep)."""

    id: int
    position: int
    scenario: str
    model: str
    arm: str
    repeat: int
    status: str
    seq: int
    valid: int | None
    validity_reason: str | None
    retryable: int
    recall: float | None
    call_retries: int
    infra_retries: int
    cost_usd: float
    unpriced_calls: int
    simulated: int
    folds_done: int
    parse_failures: int

    @property
    def verdict(self) -> Validity:
        """The verdict stored with the row (``core.row.stored_verdict``, as ``RowRecord``)."""
        return stored_verdict(self.status, None if self.valid is None else bool(self.valid),
                              self.validity_reason, bool(self.retryable))


TALLY_FIELDS: tuple[str, ...] = TallyRow._fields
"""The ``rows`` columns a tally reads (each a ``RowRecord`` field of the same name)."""

Tallied = RowRecord | TallyRow
"""A row as a tally takes it: a stored record, or just what the tally reads of it."""


def _cell_part(row: Tallied, classes: RowClasses,
               final: FinalCarrier | None = None) -> tuple[float, ...]:
    """What one row adds to its cell's sums, in the order of ``_SUMS`` then the class counts."""
    valid = enters_aggregates(row)
    counted = classes if valid else NO_CHECKS
    recall = row.recall if valid else None
    carried = final if valid else None
    filled = carried.fill_fraction if carried is not None else None
    status = row.status
    return (1, int(valid), int(status == RowStatus.DONE), int(status == RowStatus.FAILED),
            int(status == RowStatus.RUNNING), int(recall is not None), recall or 0.0,
            counted.checks, counted.flagged, row.call_retries, row.infra_retries, row.cost_usd,
            row.unpriced_calls, int(row.simulated), (recall or 0.0) ** 2,
            int(carried is not None), carried.headings_carried if carried is not None else 0,
            int(filled is not None), filled or 0.0, row.folds_done, row.parse_failures,
            counted.abstained, *counted.counts)


_PART = ("rows", "valid_rows", "done_rows", "failed_rows", "running_rows", "recall_rows",
         "recall_sum", "checks", "flagged", "call_retries", "row_retries", "cost_usd",
         "unpriced_calls", "simulated_rows", "recall_sq_sum", "headings_rows", "headings_sum",
         "fill_rows", "fill_sum", "folds", "parse_failures", "abstained")
"""The sums ``_cell_part`` gives, in its order: every ``CellTally`` sum, none left out."""
assert _PART == _SUMS, "_cell_part's order must be CellTally's sums"
assert set(TALLY_FIELDS) <= set(ROW_FIELDS)


def _sums(values: list[float]) -> dict[str, Any]:
    """Running sums by ``CellTally`` field name, counts back as ints."""
    return {name: float(v) if name in _FLOATS else int(v) for name, v in zip(_SUMS, values)}


def _progress_part(row: Tallied) -> tuple[int, ...]:
    status = row.status
    return (int(status == RowStatus.PLANNED), int(status == RowStatus.RUNNING),
            int(status == RowStatus.DONE), int(status == RowStatus.FAILED), row.folds_done)


assert _PROGRESS == ("planned", "running", "done", "failed", "folds")


class Tallies:
    """Every cell of one sweep, updated one changed row at a time."""

    def __init__(self) -> None:
        self._rows: dict[int, tuple[tuple[float, ...], tuple[int, ...]]] = {}
        """Each row's part in its cell's sums and in the progress, as last put in."""
        self._cells: dict[CellKey, list[float]] = {}
        self._progress = [0] * len(_PROGRESS)

    def __len__(self) -> int:
        return len(self._rows)

    def update(self, row: Tallied, classes: RowClasses,
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
        part, progress = _cell_part(row, classes, final), _progress_part(row)
        old = self._rows.get(row.id)
        if old is not None:
            cell[:] = map(operator.sub, cell, old[0])
            self._progress[:] = map(operator.sub, self._progress, old[1])
        cell[:] = map(operator.add, cell, part)
        self._progress[:] = map(operator.add, self._progress, progress)
        self._rows[row.id] = (part, progress)

    def cells(self) -> list[CellTally]:
        """Every cell's tally, in the order cells were first seen (plan order on a first read)."""
        n = len(_SUMS)
        return [CellTally(*key, **_sums(sums[:n]), class_counts=tuple(int(v) for v in sums[n:]))
                for key, sums in self._cells.items()]

    def progress(self) -> Progress:
        """Rows by status and folds committed."""
        return Progress(*self._progress)
