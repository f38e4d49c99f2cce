"""Fisher, separation, TOST, Pearson and the paired bootstrap against hand-worked values and
scipy functions that compute the same figures by other routes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from foldscope.core.errors import StatsError
from foldscope.core.inference import (
    counts_table,
    fisher_exact,
    pair_by_key,
    paired_bootstrap,
    pearson,
    rows_table,
    separation_probability,
    tost_one_sample,
    tost_two_sample,
)

# -- Fisher -----------------------------------------------------------------------------------

def test_fisher_1_of_10_vs_8_of_10_by_hand():
    # Margins: r1 = 10, c1 = 9, N = 20; P(a = x) = C(9, x)·C(11, 10 − x) / C(20, 10).
    # Observed a = 1 has weight 9·55 = 495; the tables as or less probable are x = 0, 1, 8, 9
    # with weights 11, 495, 495, 11: p = 1012 / 184756.
    result = fisher_exact(counts_table(1, 10, 8, 10))
    assert result.table == ((1, 9), (8, 2))
    assert result.p_value == pytest.approx(1012 / 184756, rel=1e-12)
    assert result.odds_ratio == pytest.approx(2 / 72)
    assert result.alternative == "two-sided"


def test_lady_tasting_tea():
    # Fisher's own example: 3 of 4 cups right; one-sided p = 17/70, two-sided 34/70.
    assert fisher_exact([[3, 1], [1, 3]], "greater").p_value == pytest.approx(17 / 70)
    assert fisher_exact([[3, 1], [1, 3]]).p_value == pytest.approx(34 / 70)
    assert fisher_exact([[3, 1], [1, 3]], "less").p_value == pytest.approx(69 / 70)


def test_fisher_odds_ratio_edges():
    assert fisher_exact([[5, 0], [0, 5]]).odds_ratio == math.inf
    assert math.isnan(fisher_exact([[0, 0], [3, 4]]).odds_ratio)
    assert fisher_exact([[0, 0], [0, 0]]).p_value == 1.0


@pytest.mark.parametrize("bad", [[[1, 2], [3]], [[1, -1], [2, 2]], [[1.5, 1], [1, 1]],
                                 [[1, 2, 3], [1, 2, 3]]])
def test_fisher_rejects_bad_tables(bad):
    with pytest.raises(StatsError):
        fisher_exact(bad)


def test_fisher_rejects_unknown_alternative():
    with pytest.raises(StatsError, match="alternative"):
        fisher_exact([[1, 2], [3, 4]], "bigger")


def test_counts_table_checks_counts():
    with pytest.raises(StatsError, match="first group"):
        counts_table(11, 10, 1, 10)
    with pytest.raises(StatsError, match="second group"):
        counts_table(1, 10, -1, 10)


def test_rows_table_splits_at_half():
    assert rows_table([0.5, 0.49, 1.0, 0.0], [0.9, 0.2]) == [[2, 2], [1, 1]]


@settings(max_examples=60)
@given(st.lists(st.integers(0, 12), min_size=4, max_size=4),
       st.sampled_from(["two-sided", "less", "greater"]))
def test_fisher_matches_scipy(cells, alternative):
    table = [cells[:2], cells[2:]]
    ours = fisher_exact(table, alternative)
    theirs = stats.fisher_exact(table, alternative=alternative)
    assert 0.0 <= ours.p_value <= 1.0
    assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-15)


# -- Separation -------------------------------------------------------------------------------

def test_separation_8_2():
    result = separation_probability(8, 2)
    assert result.ways == 28
    assert result.probability == pytest.approx(1 / 28)


@given(st.integers(1, 40), st.data())
def test_separation_is_symmetric_and_exact(n, data):
    k = data.draw(st.integers(0, n))
    assert separation_probability(n, k).probability == separation_probability(n, n - k).probability
    assert separation_probability(n, k).probability * math.comb(n, k) == pytest.approx(1.0)


@pytest.mark.parametrize("n,k", [(0, 0), (3, 4), (5, -1), (2.5, 1)])
def test_separation_rejects_bad_counts(n, k):
    with pytest.raises(StatsError):
        separation_probability(n, k)


# -- TOST -------------------------------------------------------------------------------------

def test_tost_one_sample_by_hand():
    # values 0.1, 0.0, 0.2, 0.1 → mean 0.1, sd √(0.02/3), se = sd/2; margin 0.3:
    # t_lower = (0.1 + 0.3)/se, t_upper = (0.1 − 0.3)/se on 3 df.
    values = [0.1, 0.0, 0.2, 0.1]
    se = math.sqrt(0.02 / 3) / 2
    result = tost_one_sample(values, 0.3)
    assert result.estimate == pytest.approx(0.1)
    assert result.se == pytest.approx(se)
    assert result.p_lower == pytest.approx(stats.t.sf(0.4 / se, 3))
    assert result.p_upper == pytest.approx(stats.t.cdf(-0.2 / se, 3))
    assert result.p_value == max(result.p_lower, result.p_upper)
    assert result.equivalent


@settings(max_examples=30)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=20),
       st.floats(0.01, 1.0))
def test_tost_one_sample_matches_two_scipy_t_tests(values, margin):
    if np.std(values) < 1e-6:
        return
    result = tost_one_sample(values, margin)
    lower = stats.ttest_1samp(values, -margin, alternative="greater").pvalue
    upper = stats.ttest_1samp(values, margin, alternative="less").pvalue
    assert result.p_value == pytest.approx(max(lower, upper), rel=1e-7, abs=1e-12)
    # Equivalence ⇔ the (1 − 2α) interval lies inside (−δ, δ).
    inside = -margin < result.ci[0] and result.ci[1] < margin
    assert result.equivalent == inside or abs(abs(result.ci[0]) - margin) < 1e-9 \
        or abs(abs(result.ci[1]) - margin) < 1e-9


def test_tost_two_sample_matches_welch_t_tests():
    rng = np.random.default_rng(5)
    a, b = rng.normal(0.6, 0.2, 12), rng.normal(0.55, 0.3, 9)
    result = tost_two_sample(a.tolist(), b.tolist(), 0.25)
    lower = stats.ttest_ind(a + 0.25, b, equal_var=False, alternative="greater").pvalue
    upper = stats.ttest_ind(a - 0.25, b, equal_var=False, alternative="less").pvalue
    assert result.p_lower == pytest.approx(lower)
    assert result.p_upper == pytest.approx(upper)
    assert result.n == (12, 9)


def test_tost_degenerate_rows_all_identical():
    # All-or-nothing rows often agree exactly; the t statistics are then infinite.
    assert tost_one_sample([0.0, 0.0, 0.0], 0.1).equivalent
    assert not tost_one_sample([0.5, 0.5, 0.5], 0.1).equivalent


@pytest.mark.parametrize("kwargs", [{"margin": 0}, {"margin": -1}, {"margin": 0.1, "alpha": 0.6}])
def test_tost_rejects_bad_arguments(kwargs):
    with pytest.raises(StatsError):
        tost_one_sample([0.1, 0.2, 0.3], **kwargs)
    with pytest.raises(StatsError, match="at least two"):
        tost_one_sample([0.1], 0.1)


# -- Pearson ----------------------------------------------------------------------------------

def test_pearson_by_hand():
    # mx = 3, my = 4, Sxy = 6, Sxx = 10, Syy = 6: r = 6 / √60; z-interval on n − 3 = 2.
    result = pearson([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])
    r = 6 / math.sqrt(60)
    assert result.r == pytest.approx(r)
    z, half = math.atanh(r), 1.959963984540054 / math.sqrt(2)
    assert result.ci == pytest.approx((math.tanh(z - half), math.tanh(z + half)))
    t = r * math.sqrt(3 / (1 - r * r))
    assert result.p_value == pytest.approx(2 * stats.t.sf(t, 3))


@settings(max_examples=30)
@given(st.integers(4, 40), st.integers(0, 10_000))
def test_pearson_matches_scipy(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = 0.5 * x + rng.normal(size=n)
    ours = pearson(x.tolist(), y.tolist())
    theirs = stats.pearsonr(x, y)
    ci = theirs.confidence_interval(0.95)
    assert ours.r == pytest.approx(theirs.statistic, abs=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-6, abs=1e-12)
    assert ours.ci == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_pearson_constant_variable_is_nan_and_short_input_errors():
    assert math.isnan(pearson([1, 1, 1, 1], [1, 2, 3, 4]).r)
    with pytest.raises(StatsError, match="same length"):
        pearson([1, 2, 3], [1, 2])
    with pytest.raises(StatsError, match="three"):
        pearson([1, 2], [1, 2])
    assert math.isnan(pearson([1, 2, 3], [1, 3, 2]).ci[0])  # n = 3: no Fisher-z interval


# -- Paired bootstrap -------------------------------------------------------------------------

def test_bootstrap_is_seeded_and_reproducible():
    a, b = [1, 0, 1, 1, 0.5, 0.9], [0, 0, 0.5, 1, 0, 0.2]
    first = paired_bootstrap(a, b, seed=11)
    assert paired_bootstrap(a, b, seed=11) == first
    assert first.estimate == pytest.approx(sum(x - y for x, y in zip(a, b)) / 6)
    assert first.ci[0] <= first.estimate <= first.ci[1]


def test_bootstrap_constant_difference_collapses():
    result = paired_bootstrap([0.9, 0.8, 0.7], [0.6, 0.5, 0.4], resamples=500)
    assert result.ci == pytest.approx((0.3, 0.3))


def test_bootstrap_agrees_with_scipy_percentile_bootstrap():
    rng = np.random.default_rng(2)
    a = rng.uniform(0, 1, 30)
    b = np.clip(a - 0.2 + rng.normal(0, 0.15, 30), 0, 1)
    ours = paired_bootstrap(a.tolist(), b.tolist(), resamples=20_000, seed=1)
    theirs = stats.bootstrap((a, b), lambda x, y, axis=-1: np.mean(x - y, axis=axis),
                             paired=True, vectorized=True, n_resamples=20_000,
                             method="percentile", random_state=np.random.default_rng(9))
    ci = theirs.confidence_interval
    # Different random draws: the percentile limits agree to Monte Carlo error.
    assert ours.ci[0] == pytest.approx(ci.low, abs=0.01)
    assert ours.ci[1] == pytest.approx(ci.high, abs=0.01)


def test_bootstrap_rejects_bad_input():
    with pytest.raises(StatsError, match="same length"):
        paired_bootstrap([1, 2], [1])
    with pytest.raises(StatsError, match="at least one pair"):
        paired_bootstrap([], [])
    with pytest.raises(StatsError, match="resamples"):
        paired_bootstrap([1], [0], resamples=10)


def test_pair_by_key_keeps_only_shared_keys_in_sorted_order():
    keys, a, b = pair_by_key({("m", 1): 0.5, ("m", 0): 1.0, ("m", 2): 0.1},
                             {("m", 0): 0.0, ("m", 1): 0.25})
    assert keys == [("m", 0), ("m", 1)]
    assert a == [1.0, 0.5] and b == [0.0, 0.25]
