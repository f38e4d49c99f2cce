"""The per-cell metrics a live grid can show: their definitions, and each computed from a cell's
running sums.

A cell is one (scenario, model, arm). Every metric is a ratio of the sums ``core.tally`` keeps
up to date row by row (a changed row's old contribution out, its new one in), so a poll costs
what changed, never the sweep's size. Means and rates are over *valid* rows (the one rule,
``core.validity``), except the parse-failure rate: a parse failure is the arm's behaviour and
never makes a row invalid, so it is counted over every fold committed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from foldscope.core.cells import RECALL_INTERVAL
from foldscope.core.stats import row_mean_from_sums
from foldscope.core.status import RowStatus
from foldscope.core.tally import CellTally

TONES: tuple[str, ...] = ("good", "fair", "poor", "none")
"""How a value reads at a glance; the UI maps each tone to one theme variable."""

INTERVAL_METHOD = (f"{RECALL_INTERVAL}: 95 % Student-t interval over valid rows (each row one "
                   "observation, so the clustering of a row's checks needs no ICC), clipped to "
                   "[0, 1]; shown from two valid rows — core.stats.row_mean, the same interval as "
                   "the report's recall_ci95, the study's recall table and the evidence "
                   "package's aggregates.csv")
"""How the recall interval is computed, in words (the help screen names it)."""


@dataclass(frozen=True)
class MetricValue:
    """One metric of one cell."""

    value: float | None
    """None when nothing is there to measure yet."""
    n: int
    """What the value is over: valid rows, checks or folds (``Metric.over`` says which)."""
    ci: tuple[float, float] | None = None
    """The interval, for recall with two or more valid rows."""
    tone: str = "none"
    """One of :data:`TONES`."""


@dataclass(frozen=True)
class Metric:
    """A metric a grid cell can show."""

    name: str
    """Its id (palette commands and keys use it)."""
    label: str
    """Short heading."""
    definition: str
    """One sentence: what it measures and over what."""
    over: str
    """The unit ``MetricValue.n`` counts: ``rows``, ``checks`` or ``folds``."""
    compute: Callable[[CellTally], tuple[float | None, int, tuple[float, float] | None]]
    good: float
    """Threshold for ``good``: value ≥ good when higher is better, ≤ good otherwise."""
    fair: float
    """Threshold for ``fair``, the same way; anything else is ``poor``."""
    higher_is_better: bool = True
    percent: bool = False
    """Show as a percentage (rates) rather than a plain number."""
    out_of: int | None = None
    """Show as ``x.x/N`` (a count out of N, such as headings out of 5)."""

    def tone(self, value: float | None) -> str:
        """How a value reads: good, fair, poor, or none when there is no value."""
        if value is None or math.isnan(value):
            return "none"
        if self.higher_is_better:
            return "good" if value >= self.good else ("fair" if value >= self.fair else "poor")
        return "good" if value <= self.good else ("fair" if value <= self.fair else "poor")

    def format(self, value: float | None) -> str:
        """The value as a grid cell shows it (five characters wide)."""
        if value is None or math.isnan(value):
            return "  —  "
        if self.out_of is not None:
            return f"{value:3.1f}/{self.out_of}"
        return f"{100 * value:4.0f}%" if self.percent else f"{value:5.2f}"


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _recall(t: CellTally) -> tuple[float | None, int, tuple[float, float] | None]:
    if not t.recall_rows:
        return None, 0, None
    summary = row_mean_from_sums(t.recall_rows, t.recall_sum, t.recall_sq_sum)
    ci = None if math.isnan(summary.ci[0]) else summary.ci
    return summary.mean, summary.n, ci


METRICS: tuple[Metric, ...] = (
    Metric("recall", "recall", "Mean recall over valid rows (graded facts answered correctly ÷ "
           "graded facts, per row), with its row-level interval.", "rows", _recall, 0.8, 0.4),
    Metric("headings", "headings carried", "Mean, over valid rows, of how many of the five fixed "
           "sections arrived in the final carrier (0–5).", "rows",
           lambda t: (_ratio(t.headings_sum, t.headings_rows), t.headings_rows, None), 5.0, 3.0,
           out_of=5),
    Metric("fill", "fill fraction", "Mean, over valid rows, of the final carrier's characters ÷ "
           "the arm's declared ceiling (arms without a ceiling show —).", "rows",
           lambda t: (_ratio(t.fill_sum, t.fill_rows), t.fill_rows, None), 0.5, 0.2,
           percent=True),
    Metric("parse", "parse-failure rate", "Folds whose reply did not parse against the arm's "
           "schema ÷ folds committed, over every row (parse failures are the arm's behaviour "
           "and never invalidate a row).", "folds",
           lambda t: (_ratio(t.parse_failures, t.folds), t.folds, None), 0.0, 0.1,
           higher_is_better=False, percent=True),
    Metric("abstention", "abstention rate", "Graded answers that abstained (\"unknown\", nothing "
           "given) ÷ graded checks, over valid rows.", "checks",
           lambda t: (_ratio(t.abstained, t.checks), t.checks, None), 0.05, 0.25,
           higher_is_better=False, percent=True),
    Metric("fabrication", "fabrication rate", "Answers classed fabricated (the carrier had lost "
           "the value, the answer gave one anyway) ÷ graded checks, over valid rows.", "checks",
           lambda t: (_ratio(t.answers("fabricated"), t.checks), t.checks, None), 0.0, 0.1,
           higher_is_better=False, percent=True),
    Metric("hedged", "hedged rate", "Answers classed hedged (several candidates, a negated or "
           "struck value; never credited) ÷ graded checks, over valid rows.", "checks",
           lambda t: (_ratio(t.answers("hedged"), t.checks), t.checks, None), 0.0, 0.1,
           higher_is_better=False, percent=True),
)
"""Every metric, in the order a key cycles through them."""

METRIC_BY_NAME: Mapping[str, Metric] = {m.name: m for m in METRICS}


def cell_metric(name: str, sums: CellTally) -> MetricValue:
    """One metric of one cell from its running tally.

    Args:
        name: a metric name (see :data:`METRICS`).
        sums: the cell's tally over its rows.

    Raises:
        KeyError: an unknown metric name.
    """
    metric = METRIC_BY_NAME[name]
    value, n, ci = metric.compute(sums)
    return MetricValue(value, n, ci, metric.tone(value))


def live_row_status(status: str, sweep_running: bool) -> str:
    """A row's status as a reader should show it: a row left ``running`` by a runner that is
    no longer alive reads ``interrupted``."""
    return RowStatus.INTERRUPTED if status == RowStatus.RUNNING and not sweep_running else status
