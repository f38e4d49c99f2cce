"""Fact survival over a sweep: the share of graded facts still carried after each fold, per
cell (scenario, model, arm: ``core.cells``), and where facts die (fold of loss by chunk planted
in, and by kind of value), per scenario.

Computed from rows' fact timelines (``core.forensics``); pure. The caller passes the valid rows
only (``core.cells.valid_rows``), as for every other aggregate; scenarios are never pooled (their
chunks and facts differ).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from foldscope.core.cells import CellKey
from foldscope.core.forensics import NOT_YET, PRESENT, Timeline
from foldscope.core.nearmiss import value_kind

NEVER_LOST = "kept"
"""The fold-of-loss column of graded facts still carried at the row's last fold."""

NO_KIND = "other"
"""The kind shown for a value that has no identifier kind."""


@dataclass(frozen=True)
class SurvivalCurve:
    """One cell (scenario × model × arm): after fold k (k from 1), the share of graded facts
    planted by then that the carrier holds verbatim, pooled over its rows."""

    scenario: str
    model: str
    arm: str
    rows: int
    carried: tuple[int, ...]
    """Graded facts present after each fold, summed over rows."""
    planted: tuple[int, ...]
    """Graded facts planted by each fold, summed over rows (the denominator)."""

    @property
    def fractions(self) -> tuple[float | None, ...]:
        """carried ÷ planted after each fold (None where nothing was planted yet)."""
        return tuple(c / p if p else None for c, p in zip(self.carried, self.planted))


def survival_curves(rows: Iterable[tuple[CellKey, Timeline]]) -> list[SurvivalCurve]:
    """Pool rows' timelines into one survival curve per cell.

    A row that stopped early adds to the folds it reached only.

    Args:
        rows: (cell, timeline) per valid row.

    Returns:
        The curves, sorted by scenario, then arm, then model.
    """
    carried: dict[CellKey, list[int]] = {}
    planted: dict[CellKey, list[int]] = {}
    counts: Counter[CellKey] = Counter()
    for key, timeline in rows:
        counts[key] += 1
        c, p = carried.setdefault(key, []), planted.setdefault(key, [])
        graded = {h.label for h in timeline.facts if h.graded}
        for i, entry in enumerate(timeline.folds):
            if len(c) <= i:
                c.append(0)
                p.append(0)
            for fact in entry.facts:
                if fact.label not in graded or fact.state == NOT_YET:
                    continue
                p[i] += 1
                c[i] += fact.state == PRESENT
    return [SurvivalCurve(key.scenario, key.model, key.arm, counts[key], tuple(carried[key]),
                          tuple(planted[key]))
            for key in sorted(counts, key=lambda k: (k.scenario, k.arm, k.model))]


@dataclass(frozen=True)
class DeathTable:
    """Where graded facts die: counts by fold of loss (from 1, or :data:`NEVER_LOST`) against
    the chunk the fact was planted in (from 1) and against the kind of its value."""

    by_chunk: Mapping[tuple[str, int], int]
    """(fold of loss, chunk planted) -> graded facts."""
    by_kind: Mapping[tuple[str, str], int]
    """(fold of loss, kind) -> graded facts."""
    folds: tuple[str, ...]
    """The fold-of-loss columns in order ("1", "2", ... then ``kept``)."""
    chunks: tuple[int, ...]
    kinds: tuple[str, ...]


def death_table(rows: Iterable[Timeline], kinds: Mapping[str, str] | None = None) -> DeathTable:
    """Count where rows' graded facts were lost.

    Args:
        rows: the rows' timelines.
        kinds: label -> the scenario's kind of the fact; the kind shown is the identifier kind
            the near-miss rules use (``core.nearmiss.value_kind``), else ``kinds``' own.

    Returns:
        The two tables. A fact never planted (its row stopped first) is left out.
    """
    kinds = kinds or {}
    by_chunk: Counter[tuple[str, int]] = Counter()
    by_kind: Counter[tuple[str, str]] = Counter()
    lost_at: set[int] = set()
    for timeline in rows:
        for h in timeline.facts:
            if not h.graded or h.planted_fold is None:
                continue
            column = NEVER_LOST if h.lost_fold is None else str(h.lost_fold + 1)
            if h.lost_fold is not None:
                lost_at.add(h.lost_fold + 1)
            kind = value_kind(h.value, kinds.get(h.label)) or kinds.get(h.label) or NO_KIND
            by_chunk[(column, h.chunk + 1)] += 1
            by_kind[(column, kind)] += 1
    folds = tuple(str(k) for k in sorted(lost_at)) + (NEVER_LOST,)
    return DeathTable(dict(by_chunk), dict(by_kind), folds,
                      tuple(sorted({c for _, c in by_chunk})), tuple(sorted({k for _, k in by_kind})))


def pool_by_arm(curves: Iterable[SurvivalCurve], scenario: str,
                model: str | None = None) -> list[SurvivalCurve]:
    """One curve per arm of one scenario: the curves of one model (or, with None, of every
    model pooled). Scenarios are never pooled.

    Args:
        curves: per-cell curves (:func:`survival_curves`).
        scenario: keep only this scenario's.
        model: keep only this model's; None pools all models (model reads ``all models``).

    Returns:
        Curves sorted by arm.
    """
    pooled: dict[str, tuple[int, list[int], list[int]]] = {}
    for c in curves:
        if c.scenario != scenario or (model is not None and c.model != model):
            continue
        rows, carried, planted = pooled.get(c.arm, (0, [], []))
        for i, (n, p) in enumerate(zip(c.carried, c.planted)):
            if i >= len(carried):
                carried.append(0)
                planted.append(0)
            carried[i] += n
            planted[i] += p
        pooled[c.arm] = (rows + c.rows, carried, planted)
    name = model if model is not None else "all models"
    return [SurvivalCurve(scenario, name, arm, rows, tuple(carried), tuple(planted))
            for arm, (rows, carried, planted) in sorted(pooled.items())]
