"""Tests and intervals for comparing arms: Fisher's exact test, TOST, Pearson r, paired bootstrap.

Everything takes plain numbers (row counts, per-row values) and returns a frozen record, so a
report, an exported package's verifier and ``foldscope stats`` all compute the same figure from
the same function. Undefined quantities come back as ``float("nan")``; bad arguments raise
``StatsError`` (a ``ValueError`` with a one-line message naming the argument).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeVar

from foldscope.core.distributions import norm_ppf, t_cdf, t_ppf, t_sf
from foldscope.core.errors import StatsError

NAN = float("nan")

Alternative = Literal["two-sided", "less", "greater"]
ALTERNATIVES: tuple[str, ...] = ("two-sided", "less", "greater")
"""Alternatives Fisher's test accepts: ``less`` and ``greater`` refer to the odds ratio vs 1."""

ROW_THRESHOLD = 0.5
"""A row counts as recalled when its recall is at least this (rows ≥ 0.5 vs < 0.5)."""


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be between 0 and 1, got {confidence}")


def _finite_values(name: str, values: Sequence[float]) -> list[float]:
    out = [float(v) for v in values]
    if any(not math.isfinite(v) for v in out):
        raise StatsError(f"{name}: every value must be a finite number")
    return out


# -- Fisher's exact test ----------------------------------------------------------------------


@dataclass(frozen=True)
class FisherResult:
    """Fisher's exact test on a 2×2 table ``[[a, b], [c, d]]``."""

    table: tuple[tuple[int, int], tuple[int, int]]
    """Rows are the two groups, columns (successes, failures)."""
    odds_ratio: float
    """Sample odds ratio a·d ÷ (b·c): inf when only the denominator is 0, NaN when both are."""
    p_value: float
    """Exact p from the hypergeometric distribution of ``a`` given the margins."""
    alternative: str
    """``two-sided``; ``less`` (odds ratio < 1) or ``greater`` (odds ratio > 1)."""


def _hypergeometric_weights(r1: int, c1: int, total: int, lo: int, hi: int) -> dict[int, int]:
    """C(c1, x)·C(total − c1, r1 − x) for x from lo to hi, as exact integers.

    Each from the one before: w(x + 1) = w(x)·(c1 − x)(r1 − x) ÷ ((x + 1)(total − c1 − r1 + x + 1)),
    a division that is always exact, so every weight is the binomial product itself; one
    multiplication and one division per table instead of two binomials (a 16,000-row table's
    weights are 16,000-bit integers: time linear in the support, not quadratic).
    """
    weight = {lo: math.comb(c1, lo) * math.comb(total - c1, r1 - lo)}
    w = weight[lo]
    for x in range(lo, hi):
        w = w * ((c1 - x) * (r1 - x)) // ((x + 1) * (total - c1 - r1 + x + 1))
        weight[x + 1] = w
    return weight


def fisher_exact(table: Sequence[Sequence[int]], alternative: str = "two-sided") -> FisherResult:
    """Fisher's exact test, computed exactly from hypergeometric probabilities.

    With the margins fixed, ``a`` is hypergeometric: P(a = x) = C(c1, x)·C(N − c1, r1 − x) ÷
    C(N, r1) (r1 = a + b, c1 = a + c). The two-sided p sums every table no more probable than
    the observed one; one-sided p sums a tail. Probabilities are compared as exact integers, so
    ties are never lost to rounding.

    Args:
        table: ``[[a, b], [c, d]]`` of non-negative integer counts.
        alternative: one of ``ALTERNATIVES``.

    Returns:
        The table, sample odds ratio, p-value and alternative.

    Raises:
        StatsError: not a 2×2 table of non-negative integers, or an unknown alternative.
    """
    if alternative not in ALTERNATIVES:
        raise StatsError(f"alternative must be one of {', '.join(ALTERNATIVES)}, "
                         f"got {alternative!r}")
    if len(table) != 2 or any(len(r) != 2 for r in table):
        raise StatsError("table must be 2×2: [[a, b], [c, d]]")
    cells = [v for r in table for v in r]
    if any(isinstance(v, bool) or not float(v).is_integer() or v < 0 for v in cells):
        raise StatsError("table counts must be non-negative integers")
    a, b, c, d = (int(v) for v in cells)
    r1, c1, total = a + b, a + c, a + b + c + d
    lo, hi = max(0, r1 + c1 - total), min(r1, c1)
    weight = _hypergeometric_weights(r1, c1, total, lo, hi)
    whole = math.comb(total, r1)
    if alternative == "less":
        hits = sum(w for x, w in weight.items() if x <= a)
    elif alternative == "greater":
        hits = sum(w for x, w in weight.items() if x >= a)
    else:
        hits = sum(w for w in weight.values() if w <= weight[a])
    p = min(1.0, float(Fraction(hits, whole)))
    if b * c == 0:
        odds = NAN if a * d == 0 else math.inf
    else:
        odds = (a * d) / (b * c)
    return FisherResult(table=((a, b), (c, d)), odds_ratio=odds, p_value=p,
                        alternative=alternative)


def counts_table(success_1: int, n_1: int, success_2: int, n_2: int) -> list[list[int]]:
    """The 2×2 table of two groups' successes out of their totals: ``[[s1, n1 − s1], [s2, n2 − s2]]``.

    Raises:
        StatsError: a count is negative, not an integer, or exceeds its total.
    """
    for s, n, which in ((success_1, n_1, "first"), (success_2, n_2, "second")):
        if any(isinstance(v, bool) or not float(v).is_integer() for v in (s, n)):
            raise StatsError(f"{which} group: counts must be integers")
        if n < 0 or not 0 <= s <= n:
            raise StatsError(f"{which} group: need 0 <= successes <= total, got {s}/{n}")
    return [[int(success_1), int(n_1 - success_1)], [int(success_2), int(n_2 - success_2)]]


def rows_table(recalls_1: Sequence[float], recalls_2: Sequence[float],
               threshold: float = ROW_THRESHOLD) -> list[list[int]]:
    """Row counts at or above vs below a recall threshold, for two groups of rows.

    Args:
        recalls_1: per-row recall of the first group (e.g. arm j's valid rows of one model).
        recalls_2: per-row recall of the second group.
        threshold: a row at or above it counts as recalled.

    Returns:
        ``[[rows ≥ t, rows < t] of group 1, [rows ≥ t, rows < t] of group 2]``.
    """
    first = _finite_values("first group", recalls_1)
    second = _finite_values("second group", recalls_2)
    hi_1 = sum(v >= threshold for v in first)
    hi_2 = sum(v >= threshold for v in second)
    return [[hi_1, len(first) - hi_1], [hi_2, len(second) - hi_2]]


# -- Post-hoc separation ----------------------------------------------------------------------


@dataclass(frozen=True)
class Separation:
    """The chance that a post-hoc split picks out exactly the k lowest of n by luck."""

    n: int
    k: int
    ways: int
    """C(n, k): the number of equally likely ways to choose k of n."""
    probability: float
    """1 ÷ C(n, k)."""


def separation_probability(n: int, k: int) -> Separation:
    """Probability that a random choice of k of n items is exactly the k lowest: 1 / C(n, k).

    A pattern found after looking (say, the two rows of one model are the two worst of eight)
    is only as surprising as this; it is a ceiling on the evidence, not a test planned ahead.

    Raises:
        StatsError: n < 1, or k outside 0..n, or either not an integer.
    """
    if any(isinstance(v, bool) or not float(v).is_integer() for v in (n, k)):
        raise StatsError("n and k must be integers")
    n, k = int(n), int(k)
    if n < 1 or not 0 <= k <= n:
        raise StatsError(f"need n >= 1 and 0 <= k <= n, got n={n}, k={k}")
    ways = math.comb(n, k)
    return Separation(n=n, k=k, ways=ways, probability=1.0 / ways)


# -- TOST equivalence -------------------------------------------------------------------------


@dataclass(frozen=True)
class TostResult:
    """Two one-sided t-tests for equivalence within ±margin."""

    estimate: float
    """Mean difference (one sample or paired: mean of the values; two samples: mean 1 − mean 2)."""
    margin: float
    """Equivalence margin δ: H0 is |difference| ≥ δ."""
    df: float
    """Degrees of freedom (Welch–Satterthwaite for two independent samples)."""
    se: float
    """Standard error of the estimate."""
    p_lower: float
    """p of H0 difference ≤ −δ."""
    p_upper: float
    """p of H0 difference ≥ +δ."""
    p_value: float
    """max(p_lower, p_upper): equivalence is shown when it is below alpha."""
    ci: tuple[float, float]
    """The (1 − 2α) t interval; equivalence ⇔ it lies inside (−δ, δ)."""
    alpha: float
    equivalent: bool
    n: tuple[int, ...]
    """Sample size(s)."""


def _tost(estimate: float, se: float, df: float, margin: float, alpha: float,
          n: tuple[int, ...]) -> TostResult:
    if se > 0:
        p_lower = t_sf((estimate + margin) / se, df)
        p_upper = t_cdf((estimate - margin) / se, df)
        half = t_ppf(1 - alpha, df) * se
    else:  # every difference identical: the t statistics are ±infinite
        p_lower = 0.0 if estimate > -margin else 1.0
        p_upper = 0.0 if estimate < margin else 1.0
        half = 0.0
    p = max(p_lower, p_upper)
    return TostResult(estimate=estimate, margin=margin, df=df, se=se, p_lower=p_lower,
                      p_upper=p_upper, p_value=p, ci=(estimate - half, estimate + half),
                      alpha=alpha, equivalent=p < alpha, n=n)


def _check_tost(margin: float, alpha: float) -> None:
    if not margin > 0 or not math.isfinite(margin):
        raise StatsError(f"margin must be a positive number, got {margin}")
    if not 0 < alpha < 0.5:
        raise StatsError(f"alpha must be between 0 and 0.5, got {alpha}")


def tost_one_sample(values: Sequence[float], margin: float, alpha: float = 0.05) -> TostResult:
    """TOST that a mean is within ±margin of 0: use it on paired differences (arm A − arm B).

    Args:
        values: the differences (at least two).
        margin: δ > 0, in the values' units (e.g. 0.1 recall).
        alpha: level of each one-sided test.

    Raises:
        StatsError: fewer than two values, a non-finite value, or a bad margin or alpha.
    """
    _check_tost(margin, alpha)
    xs = _finite_values("values", values)
    if len(xs) < 2:
        raise StatsError(f"TOST needs at least two values, got {len(xs)}")
    n = len(xs)
    mean = math.fsum(xs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    return _tost(mean, sd / math.sqrt(n), n - 1, margin, alpha, (n,))


def tost_two_sample(values_1: Sequence[float], values_2: Sequence[float], margin: float,
                    alpha: float = 0.05) -> TostResult:
    """TOST (Welch) that two independent means differ by less than ±margin.

    Raises:
        StatsError: fewer than two values in a sample, a non-finite value, bad margin or alpha.
    """
    _check_tost(margin, alpha)
    a = _finite_values("first sample", values_1)
    b = _finite_values("second sample", values_2)
    if len(a) < 2 or len(b) < 2:
        raise StatsError("TOST needs at least two values in each sample")
    ma, mb = math.fsum(a) / len(a), math.fsum(b) / len(b)
    va = math.fsum((x - ma) ** 2 for x in a) / (len(a) - 1) / len(a)
    vb = math.fsum((x - mb) ** 2 for x in b) / (len(b) - 1) / len(b)
    se = math.sqrt(va + vb)
    if se > 0:
        df = (va + vb) ** 2 / ((va ** 2 / (len(a) - 1) if va else 0.0)
                              + (vb ** 2 / (len(b) - 1) if vb else 0.0))
    else:
        df = float(len(a) + len(b) - 2)
    return _tost(ma - mb, se, df, margin, alpha, (len(a), len(b)))


# -- Pearson correlation ----------------------------------------------------------------------


@dataclass(frozen=True)
class PearsonResult:
    """Pearson's r with a Fisher-z interval and a t-test p-value."""

    r: float
    n: int
    p_value: float
    """Two-sided p of r = 0 from t = r·√((n − 2) ÷ (1 − r²)) on n − 2 df."""
    ci: tuple[float, float]
    """tanh(atanh r ± z·1/√(n − 3)); NaN below four pairs."""
    confidence: float


def pearson(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> PearsonResult:
    """Pearson's correlation (e.g. headings carried vs recall, fill fraction vs recall).

    Args:
        x: first variable, one value per row.
        y: second variable, same rows.
        confidence: level of the Fisher-z interval.

    Returns:
        r (NaN when a variable is constant), its p-value and interval.

    Raises:
        StatsError: lengths differ, fewer than three pairs, or a non-finite value.
    """
    _check_confidence(confidence)
    xs, ys = _finite_values("x", x), _finite_values("y", y)
    if len(xs) != len(ys):
        raise StatsError(f"x and y must have the same length, got {len(xs)} and {len(ys)}")
    n = len(xs)
    if n < 3:
        raise StatsError(f"Pearson r needs at least three pairs, got {n}")
    mx, my = math.fsum(xs) / n, math.fsum(ys) / n
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(xs, ys))
    sxx = math.fsum((a - mx) ** 2 for a in xs)
    syy = math.fsum((b - my) ** 2 for b in ys)
    if sxx == 0 or syy == 0:
        return PearsonResult(r=NAN, n=n, p_value=NAN, ci=(NAN, NAN), confidence=confidence)
    r = max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))
    if abs(r) == 1.0:
        p = 0.0
    else:
        t = r * math.sqrt((n - 2) / (1 - r * r))
        p = 2 * t_sf(abs(t), n - 2)
    if n > 3:
        z = norm_ppf(0.5 + confidence / 2)
        centre, half = math.atanh(r) if abs(r) < 1 else math.copysign(math.inf, r), z / math.sqrt(n - 3)
        ci = (math.tanh(centre - half), math.tanh(centre + half))
    else:
        ci = (NAN, NAN)
    return PearsonResult(r=r, n=n, p_value=p, ci=ci, confidence=confidence)


# -- Paired bootstrap -------------------------------------------------------------------------


@dataclass(frozen=True)
class BootstrapResult:
    """A percentile bootstrap interval for the mean of paired differences."""

    estimate: float
    """Mean of (first − second) over the pairs."""
    ci: tuple[float, float]
    """Percentile interval of the resampled means."""
    n: int
    """Pairs."""
    resamples: int
    seed: int
    confidence: float


_BLOCK = 2_000
"""Resamples drawn at a time at most, so memory stays bounded for large n."""
_BLOCK_DRAWS = 1_000_000
"""Draws (resamples × pairs) per block at most: a 4,000-pair contrast draws 250 resamples at a
time, not 2,000 (130 MB). The generator's stream does not depend on how the draws are split
into calls, so the block size never changes a figure."""


def paired_bootstrap(first: Sequence[float], second: Sequence[float], *, resamples: int = 10_000,
                     confidence: float = 0.95, seed: int = 0) -> BootstrapResult:
    """Percentile bootstrap interval for a within-model arm contrast over paired rows.

    Pairs (a row of arm A and a row of arm B of the same model, scenario and repeat) are
    resampled together, so what a repeat shares across arms cancels. The draw comes from
    ``numpy.random.default_rng(seed)``: the same inputs and seed give the same interval.

    Args:
        first: per-row values under the first arm.
        second: the paired rows' values under the second arm (same order).
        resamples: bootstrap resamples (at least 100).
        confidence: level of the interval.
        seed: the generator seed.

    Returns:
        Mean difference first − second with its interval.

    Raises:
        StatsError: lengths differ, no pairs, a non-finite value, or a bad resamples/confidence.
    """
    _check_confidence(confidence)
    a, b = _finite_values("first", first), _finite_values("second", second)
    if len(a) != len(b):
        raise StatsError(f"paired samples must have the same length, got {len(a)} and {len(b)}")
    if not a:
        raise StatsError("paired bootstrap needs at least one pair")
    if isinstance(resamples, bool) or not float(resamples).is_integer() or resamples < 100:
        raise StatsError(f"resamples must be an integer of at least 100, got {resamples}")
    resamples = int(resamples)
    import numpy as np  # only the bootstrap needs it (importing it costs ~0.1 s)

    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    n = len(diffs)
    means = np.empty(resamples)
    block = max(1, min(_BLOCK, _BLOCK_DRAWS // n))
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        means[start:start + size] = diffs[rng.integers(0, n, size=(size, n))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return BootstrapResult(estimate=float(math.fsum(diffs.tolist()) / n),
                           ci=(float(low), float(high)), n=n, resamples=resamples, seed=seed,
                           confidence=confidence)


K = TypeVar("K", bound=Hashable)


def pair_by_key(first: Mapping[K, float], second: Mapping[K, float]) -> tuple[list[K], list[float], list[float]]:
    """Pair two arms' rows on a shared key (e.g. (scenario, model, repeat)), within one sweep.

    Rows present under only one arm are left out; keys come back sorted so the pairing (and a
    seeded bootstrap over it) does not depend on the order rows were read.

    Returns:
        ``(keys, first values, second values)``.
    """
    keys = sorted(set(first) & set(second), key=repr)
    return keys, [first[k] for k in keys], [second[k] for k in keys]
