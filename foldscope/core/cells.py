"""One cell, one selection: the (scenario, model, arm) key every aggregate groups by, and the one
rule for which of a cell's rows enter its figures.

The grid's live tallies (``core.tally``), the report (``engine.report``), the study tables
(``core.study``), the evidence package (``core.evidence``) and the survival curves
(``core.survival`` through ``engine.timelines``) all group rows with :func:`group_cells` (or key
them with :func:`cell_key`) and select them with :func:`valid_rows` / :func:`enters_aggregates`,
so a cell means the same rows wherever it is shown. Scenarios are never pooled: two scenarios
are two cells even for the same model and arm.

Mean recall has one interval wherever it is shown (grid, report, study, package): the row-level
95 % Student-t interval of :data:`RECALL_INTERVAL`, computed by ``core.stats.row_mean`` (or
``row_mean_from_sums`` from running sums); each row is one observation, so the clustering of a
row's checks needs no ICC. The check-level interval the report also gives (``check_ci95``) is
the interval of a different figure, the share of checks correct, and is named by its own
``interval_method``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import NamedTuple, Protocol, TypeVar

from foldscope.core.validity import Judged, verdict_of

RECALL_INTERVAL = "t_rows"
"""The name of mean recall's interval in every output that carries one: a 95 % Student-t
interval over valid rows (each row one observation), clipped to [0, 1], from two valid rows."""


class CellKey(NamedTuple):
    """Which cell a row belongs to. A tuple, so it sorts, hashes and unpacks as one."""

    scenario: str
    model: str
    arm: str


class InCell(Protocol):
    """Anything that names its scenario, model and arm (a stored row, a package row...)."""

    @property
    def scenario(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def arm(self) -> str: ...


class HasVerdict(Protocol):
    """A row that carries its validity verdict (stored once by the runner, never re-derived)."""

    @property
    def verdict(self) -> Judged: ...


T = TypeVar("T")
V = TypeVar("V", bound=HasVerdict)
K = TypeVar("K", bound=Hashable)


def cell_key(row: InCell) -> CellKey:
    """The cell a row belongs to."""
    return CellKey(row.scenario, row.model, row.arm)


def group_cells(rows: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    """Rows grouped by cell, cells in the order their first row comes (plan order for rows read
    in id order), rows in the order given.

    Args:
        rows: rows of any type.
        key: a row's cell; :func:`cell_key` for rows that name their scenario, model and arm
            (the evidence package adds the sweep in front, since a package spans sweeps).
    """
    cells: dict[K, list[T]] = {}
    for row in rows:
        cells.setdefault(key(row), []).append(row)
    return cells


def enters_aggregates(row: HasVerdict) -> bool:
    """Whether one row enters its cell's figures: its stored verdict is valid (``core.validity``:
    finished, answered, no infrastructure fault, no catch-up in a distributed scenario)."""
    return verdict_of(row.verdict).valid


def valid_rows(rows: Iterable[V]) -> list[V]:
    """The rows of a cell (or of any set of cells) that enter aggregates, in the order given.

    The one selection: counts of valid rows, means, intervals, answer classes and survival all
    go through it. Planned, running, failed and catch-up-distributed rows stay out.
    """
    return [r for r in rows if enters_aggregates(r)]
