"""Statistics for clustered recall data: row means with intervals, ICC(1), design effect, Wilson.

Rows are close to all-or-nothing, so the fourteen checks of one row are not fourteen independent
trials. Every mean travels with its row count, and check-level data with the intraclass
correlation and design effect that say how far to discount them. Undefined quantities come back
as ``float("nan")``; nothing here raises ``ZeroDivisionError``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat

from foldscope.core.distributions import norm_ppf, t_ppf

NAN = float("nan")


def mean_with_n(values: Sequence[float]) -> tuple[float, int]:
    """Mean of some values, with how many there were.

    Args:
        values: the values (e.g. per-row recalls).

    Returns:
        ``(mean, n)``; ``(nan, 0)`` when there are none.
    """
    n = len(values)
    return (math.fsum(values) / n if n else NAN), n


@dataclass(frozen=True)
class RowMean:
    """A mean over rows, with its row count and a Student-t interval over the rows."""

    mean: float
    """Mean of the per-row values (NaN with no rows)."""
    n: int
    """Rows averaged: the n to print beside the mean."""
    sd: float
    """Sample standard deviation over rows (n − 1 denominator; NaN below two rows)."""
    ci: tuple[float, float]
    """t interval mean ± t(n − 1) · sd / √n, clipped to ``bounds``; NaN below two rows."""


def row_mean(values: Sequence[float], confidence: float = 0.95,
             bounds: tuple[float, float] = (0.0, 1.0)) -> RowMean:
    """Mean of per-row values with a t interval over rows (rows are the independent units).

    The interval treats each row as one observation, so it needs no ICC: the clustering of
    checks inside a row is already folded into the row's value. It is clipped to ``bounds``
    (recall cannot leave [0, 1]); when every row agrees the interval collapses to the mean.

    Args:
        values: one value per row (e.g. per-row recall).
        confidence: two-sided level, strictly between 0 and 1.
        bounds: the range the values live in, used to clip the interval.

    Returns:
        The mean, row count, standard deviation and interval.

    Raises:
        ValueError: confidence outside (0, 1).
    """
    mean, n = mean_with_n(values)
    if n < 2:
        return row_mean_from_sums(n, math.fsum(values), 0.0, confidence, bounds)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    return _t_interval(mean, n, sd, confidence, bounds)


def row_mean_from_sums(n: int, total: float, total_sq: float, confidence: float = 0.95,
                       bounds: tuple[float, float] = (0.0, 1.0)) -> RowMean:
    """:func:`row_mean` from running sums (n, Σx, Σx²), for readers that keep them up to date
    row by row instead of holding every value.

    Args:
        n: rows.
        total: sum of the per-row values.
        total_sq: sum of their squares.
        confidence: two-sided level, strictly between 0 and 1.
        bounds: the range the values live in, used to clip the interval.

    Raises:
        ValueError: confidence outside (0, 1).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    mean = total / n if n else NAN
    if n < 2:
        return RowMean(mean=mean, n=n, sd=NAN, ci=(NAN, NAN))
    # Σ(x − x̄)² = Σx² − n·x̄²; rounding can take it a hair below zero when every row agrees.
    sd = math.sqrt(max(0.0, total_sq - n * mean * mean) / (n - 1))
    return _t_interval(mean, n, sd, confidence, bounds)


@functools.lru_cache(maxsize=1024)
def _t_quantile(q: float, df: int) -> float:
    # scipy's quantile costs ~0.5 ms; a live grid asks for the same few (level, rows) often.
    return t_ppf(q, df)


def _t_interval(mean: float, n: int, sd: float, confidence: float,
                bounds: tuple[float, float]) -> RowMean:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    half = _t_quantile(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n)
    low, high = bounds
    return RowMean(mean=mean, n=n, sd=sd, ci=(max(low, mean - half), min(high, mean + half)))


def icc_binary(groups: Sequence[Sequence[int | bool]]) -> float:
    """One-way random-effects ICC(1) of 0/1 checks clustered in rows (ANOVA estimator).

    With k clusters of sizes n_i (N in all): MSB = Σ n_i (ȳ_i − ȳ)² / (k − 1),
    MSW = Σ Σ (y − ȳ_i)² / (N − k), n0 = (N − Σ n_i² / N) / (k − 1), and
    ICC = (MSB − MSW) / (MSB + (n0 − 1) · MSW). n0 is the adjusted mean size that makes the
    estimator fair when rows have different numbers of checks.

    The raw estimate is returned, unclamped: it can be negative (rows less alike than chance),
    and a report should show that rather than a silent 0. Its floor is −1 / (n0 − 1), so with
    tiny unequal rows it can fall below −1. It never exceeds 1. Empty clusters are ignored.
    Computed from each row's counts (``icc_counts``): 0/1 checks are all it needs.

    Args:
        groups: one sequence of 0/1 (or bool) checks per row.

    Returns:
        The ICC; NaN when undefined: fewer than two non-empty rows, no row with two or more
        checks (no within-row variance can be measured), or every check identical (0/0: there
        is no variance to apportion). Rows that agree inside but differ between give 1.0.
    """
    return icc_counts(check_counts(groups))


def check_counts(groups: Iterable[Sequence[int | bool]]) -> list[tuple[int, int]]:
    """Each row's (checks, correct checks) from its 0/1 checks: all the ICC reads of a row."""
    return [(len(g), sum(1 for y in g if y)) for g in groups]


def icc_counts(counts: Iterable[tuple[int, int]]) -> float:
    """``icc_binary`` from each row's (checks, correct checks): a sweep's rows need not be held.

    The sums are ``math.fsum`` over the same terms ``icc_binary`` of the rows' 0/1 checks sums
    (``fsum`` is exact, so the order of the terms does not matter): the figure is the same to
    the last bit. Rows with no checks are ignored.
    """
    tally: dict[tuple[int, int], int] = {}
    for n, k in counts:
        if n > 0:
            tally[(n, k)] = tally.get((n, k), 0) + 1
    rows = sum(tally.values())
    total = sum(n * c for (n, _), c in tally.items())
    if rows < 2 or total - rows <= 0:
        return NAN
    grand = math.fsum(chain.from_iterable(repeat(float(k), c) for (_, k), c in tally.items())
                      ) / total
    means = {(n, k): float(k) / n for (n, k) in tally}
    ssb = math.fsum(chain.from_iterable(repeat(n * (means[(n, k)] - grand) ** 2, c)
                                        for (n, k), c in tally.items()))
    ssw = math.fsum(chain.from_iterable(
        chain(repeat((1.0 - means[(n, k)]) ** 2, k * c),
              repeat((0.0 - means[(n, k)]) ** 2, (n - k) * c))
        for (n, k), c in tally.items()))
    msb = ssb / (rows - 1)
    msw = ssw / (total - rows)
    n0 = (total - math.fsum(chain.from_iterable(repeat(n ** 2, c) for (n, _), c in tally.items()))
          / total) / (rows - 1)
    denominator = msb + (n0 - 1) * msw
    if denominator <= 0:
        return NAN
    return (msb - msw) / denominator


def design_effect(m: float, icc: float) -> float:
    """Design effect of clustering: DE = 1 + (m − 1) · ICC.

    Args:
        m: mean checks per row.
        icc: the intraclass correlation (NaN propagates).

    Returns:
        The design effect.
    """
    return 1.0 + (m - 1.0) * icc


def clamped_icc(icc: float) -> float:
    """The ICC a design effect discounts by: the raw estimate clamped to [0, 1] (NaN stays NaN).

    A negative ICC would claim more information than independent checks hold, so discounts
    (intervals, planning, effective n) never use one below 0.
    """
    return icc if math.isnan(icc) else min(1.0, max(0.0, icc))


def interval_icc(icc: float) -> float:
    """The ICC an interval discounts checks by: clamped to [0, 1], and 1 when undefined.

    A negative ICC would claim more information than independent checks hold; when the ICC is
    undefined (e.g. every check identical) the safe assumption is that a row is one trial.
    """
    return 1.0 if math.isnan(icc) else clamped_icc(icc)


def effective_n(n_checks: float, de: float) -> float:
    """Effective number of independent checks: n ÷ DE.

    Args:
        n_checks: checks counted.
        de: the design effect.

    Returns:
        n ÷ DE; NaN when DE is not positive or is NaN.
    """
    if not de > 0:  # also catches NaN
        return NAN
    return n_checks / de


@dataclass(frozen=True)
class Clustering:
    """How far clustering in rows discounts check-level data."""

    icc: float
    """Raw one-way random-effects ICC(1) (may be negative or NaN)."""
    design_effect: float
    """DE = 1 + (m − 1) · ICC, with the raw ICC."""
    effective_n: float
    """Checks ÷ DE: the number of independent checks the data are worth."""
    checks: int
    """Checks counted."""
    rows: int
    """Rows (clusters) with at least one check."""
    m: float
    """Mean checks per row."""

    @property
    def icc_used(self) -> float:
        """The ICC intervals and discounts use (``interval_icc``: clamped, undefined → 1)."""
        return interval_icc(self.icc)

    @property
    def design_effect_used(self) -> float:
        """1 + (m − 1) · ``icc_used``: the design effect an interval on these checks uses
        (NaN with no rows)."""
        return design_effect(self.m, self.icc_used)

    @property
    def effective_n_used(self) -> float:
        """Checks ÷ ``design_effect_used``."""
        return effective_n(self.checks, self.design_effect_used)


def clustering(groups: Sequence[Sequence[int | bool]]) -> Clustering:
    """ICC, design effect and effective n of 0/1 checks grouped by row.

    Args:
        groups: one sequence of 0/1 checks per row; empty rows are ignored.

    Returns:
        The diagnostics; NaN where undefined (see ``icc_binary``).
    """
    return clustering_counts(check_counts(groups))


def clustering_counts(counts: Sequence[tuple[int, int]]) -> Clustering:
    """``clustering`` from each row's (checks, correct checks) (``icc_counts``)."""
    kept = [c for c in counts if c[0] > 0]
    checks = sum(n for n, _ in kept)
    m = checks / len(kept) if kept else NAN
    icc = icc_counts(kept)
    de = design_effect(m, icc)
    return Clustering(icc=icc, design_effect=de, effective_n=effective_n(checks, de),
                      checks=checks, rows=len(kept), m=m)


def group_checks(records: Iterable[tuple[Hashable, Hashable, float]]) -> list[list[int]]:
    """Group ``(row_id, check, value)`` records into one list of 0/1 checks per row.

    Rows keep the order in which they first appear.

    Args:
        records: one triple per check; value must be 0 or 1 (or a bool).

    Returns:
        The checks of each row.

    Raises:
        ValueError: a value other than 0/1, or the same check twice in one row.
    """
    rows: dict[Hashable, dict[Hashable, int]] = {}
    for row_id, check, value in records:
        if value not in (0, 1):
            raise ValueError(f"row {row_id}, check {check}: value must be 0 or 1, got {value!r}")
        seen = rows.setdefault(row_id, {})
        if check in seen:
            raise ValueError(f"row {row_id}: check {check} appears twice")
        seen[check] = int(value)
    return [list(checks.values()) for checks in rows.values()]


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion.

    Args:
        successes: successes (may be fractional, e.g. p · effective n).
        n: trials (may be fractional); 0 gives (nan, nan).
        confidence: two-sided confidence level, strictly between 0 and 1.

    Returns:
        ``(low, high)`` within [0, 1].

    Raises:
        ValueError: successes outside [0, n], negative n, or confidence outside (0, 1).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0 or math.isnan(n):
        return NAN, NAN
    z = norm_ppf(0.5 + confidence / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # At p = 0 or 1 the bound is exactly 0 or 1; floating point would leave 0.9999999999999999.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class CellSummary:
    """Recall of one sweep cell (model × arm) with its clustering diagnostics."""

    rows: int
    """Valid rows in the cell: the n to print beside the mean."""
    mean_recall: float
    """Mean of per-row recalls."""
    ci: tuple[float, float]
    """Wilson interval at 95 %, on the design-effect-discounted number of checks."""
    icc: float
    """Raw ICC(1) of the checks clustered by row (may be negative or NaN)."""
    design_effect: float
    """1 + (m − 1) · ICC with the raw ICC (NaN when the ICC is)."""
    checks: int
    """Checks in all rows."""
    mean_checks_per_row: float
    """m: checks ÷ rows."""
    effective_checks: float
    """Checks ÷ the design effect the interval used."""
    interval_design_effect: float = NAN
    """The design effect the interval used."""


def cell_summary(row_recalls: Sequence[float], check_groups: Sequence[Sequence[int | bool]],
                 confidence: float = 0.95, interval_de: float | None = None) -> CellSummary:
    """Summarise one cell: mean recall with rows, a cluster-aware interval, ICC and DE.

    The interval is a Wilson interval with the effective number of checks, N ÷ DE. The DE is
    ``interval_de`` when given (the report passes its scenario's pooled design effect,
    ``Clustering.design_effect_used``); otherwise the cell's own, with the ICC taken through
    ``interval_icc`` (clamped to [0, 1], undefined → 1). The cell's raw ICC and DE are kept
    beside it either way.

    Args:
        row_recalls: recall of each valid row.
        check_groups: the 0/1 checks of each valid row (same rows).
        confidence: level of the interval.
        interval_de: the design effect the interval uses (None: the cell's own).

    Returns:
        The summary; NaN fields where a quantity is undefined (e.g. no rows).
    """
    return cell_summary_counts(row_recalls, check_counts(check_groups), confidence, interval_de)


def cell_summary_counts(row_recalls: Sequence[float], counts: Sequence[tuple[int, int]],
                        confidence: float = 0.95, interval_de: float | None = None
                        ) -> CellSummary:
    """``cell_summary`` from each valid row's (checks, correct checks) (``icc_counts``)."""
    mean, rows = mean_with_n(row_recalls)
    checks = sum(n for n, _ in counts)
    groups = sum(1 for n, _ in counts if n > 0)
    m = checks / groups if groups else NAN
    icc = icc_counts(counts)
    de = design_effect(m, icc)
    de_for_ci = design_effect(m, interval_icc(icc)) if interval_de is None else interval_de
    n_eff = effective_n(checks, de_for_ci) if groups else NAN
    if rows and not math.isnan(n_eff) and n_eff > 0 and 0.0 <= mean <= 1.0:
        ci = wilson_interval(mean * n_eff, n_eff, confidence)
    else:
        ci = (NAN, NAN)
    return CellSummary(rows=rows, mean_recall=mean, ci=ci, icc=icc, design_effect=de,
                       checks=checks, mean_checks_per_row=m, effective_checks=n_eff,
                       interval_design_effect=de_for_ci if groups else NAN)


@dataclass(frozen=True)
class Kappa:
    """Agreement between two raters over the same items (Cohen's kappa)."""

    n: int
    """Items both raters judged."""
    kappa: float
    """(p_o − p_e) ÷ (1 − p_e); NaN with no items, or when chance agreement is total (both
    raters used one and the same category for every item)."""
    observed: float
    """p_o: the share of items the raters put in the same category (NaN with no items)."""
    expected: float
    """p_e: the agreement expected by chance from each rater's own category shares."""
    table: tuple[tuple[str, str, int], ...]
    """(first rater's category, second rater's category, items), every non-empty cell, sorted."""


def cohen_kappa(pairs: Iterable[tuple[Hashable, Hashable]]) -> Kappa:
    """Cohen's kappa for two raters who each put every item in one category.

    p_o is the share of items both put in the same category; p_e = Σ_k p1(k) · p2(k), where
    pX(k) is the share of items rater X put in category k. Kappa is 1 for perfect agreement,
    0 for agreement at chance, negative below it.

    Args:
        pairs: one (first rater's category, second rater's category) per item.

    Returns:
        The agreement; ``kappa`` is NaN when undefined (no items, or p_e = 1).
    """
    items = list(pairs)
    n = len(items)
    if not n:
        return Kappa(0, NAN, NAN, NAN, ())
    cells: dict[tuple[Hashable, Hashable], int] = {}
    first: dict[Hashable, int] = {}
    second: dict[Hashable, int] = {}
    for a, b in items:
        cells[(a, b)] = cells.get((a, b), 0) + 1
        first[a] = first.get(a, 0) + 1
        second[b] = second.get(b, 0) + 1
    observed = sum(count for (a, b), count in cells.items() if a == b) / n
    expected = math.fsum(first[k] * second.get(k, 0) for k in first) / (n * n)
    kappa = NAN if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    table = tuple(sorted((str(a), str(b), count) for (a, b), count in cells.items()))
    return Kappa(n, kappa, observed, expected, table)
