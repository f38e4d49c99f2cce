"""Live cell tallies: what the grid shows per (scenario, model, arm), kept up to date row by row.

A live view cannot afford to re-read a whole sweep on every poll. ``Tallies`` keeps each cell's
counts and sums as running totals: when a row changes, its old contribution is taken out and its
new one put in, so a poll costs what changed, not what the sweep holds. Validity is the verdict
stored with each row (``RowRecord.verdict``); recall and answer classes count valid rows only,
as in the report.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from foldscope.core.answers import ANSWER_CLASSES
from foldscope.core.row import RowRecord


@dataclass(frozen=True)
class RowClasses:
    """How many checks a row has, how many fell in each answer class, and flags set by hand."""

    checks: int = 0
    flagged: int = 0
    counts: tuple[int, ...] = (0,) * len(ANSWER_CLASSES)
    """Checks per class, in the order of ``core.answers.ANSWER_CLASSES``."""


NO_CHECKS = RowClasses()
"""The classes of a row without checks (unfinished, failed, or reset for a retry)."""


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
    simulated_rows: int = 0
    class_counts: tuple[int, ...] = (0,) * len(ANSWER_CLASSES)
    """Valid rows' checks per answer class, in the order of ``ANSWER_CLASSES``."""

    def answers(self, name: str) -> int:
        """How many of the valid rows' checks are in answer class ``name``."""
        return self.class_counts[ANSWER_CLASSES.index(name)]

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
_FLOATS = frozenset({"recall_sum", "cost_usd"})
_PROGRESS = tuple(f.name for f in fields(Progress))


def _cell_part(row: RowRecord, classes: RowClasses) -> tuple[float, ...]:
    valid = row.verdict.valid
    counted = classes if valid else RowClasses()
    recalled = valid and row.recall is not None
    return (1, int(valid), int(row.status == "done"), int(row.status == "failed"),
            int(row.status == "running"), int(recalled), row.recall if recalled else 0.0,
            counted.checks, counted.flagged, row.call_retries, row.infra_retries, row.cost_usd,
            int(row.simulated), *counted.counts)


def _progress_part(row: RowRecord) -> tuple[int, ...]:
    return tuple(int(row.status == s) for s in _PROGRESS[:4]) + (row.folds_done,)


class Tallies:
    """Every cell of one sweep, updated one changed row at a time."""

    def __init__(self) -> None:
        self._rows: dict[int, tuple[RowRecord, RowClasses]] = {}
        self._cells: dict[tuple[str, str, str], list[float]] = {}
        self._progress = [0] * len(_PROGRESS)

    def __len__(self) -> int:
        return len(self._rows)

    def update(self, row: RowRecord, classes: RowClasses) -> None:
        """Put a row's latest state in (its previous one, if any, comes out first).

        Args:
            row: the row as now stored.
            classes: its checks' classes as now stored.
        """
        key = (row.scenario, row.model, row.arm)
        cell = self._cells.setdefault(key, [0] * (len(_SUMS) + len(ANSWER_CLASSES)))
        old = self._rows.get(row.id)
        if old is not None:
            for i, v in enumerate(_cell_part(*old)):
                cell[i] -= v
            for i, v in enumerate(_progress_part(old[0])):
                self._progress[i] -= v
        for i, v in enumerate(_cell_part(row, classes)):
            cell[i] += v
        for i, v in enumerate(_progress_part(row)):
            self._progress[i] += v
        self._rows[row.id] = (row, classes)

    def cells(self) -> list[CellTally]:
        """Every cell's tally, in the order cells were first seen (plan order on a first read)."""
        n = len(_SUMS)
        return [CellTally(*key, *(float(v) if name in _FLOATS else int(v)
                                  for name, v in zip(_SUMS, sums[:n])),
                          class_counts=tuple(int(v) for v in sums[n:]))
                for key, sums in self._cells.items()]

    def progress(self) -> Progress:
        """Rows by status and folds committed."""
        return Progress(*self._progress)
