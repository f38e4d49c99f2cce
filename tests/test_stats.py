"""Tests for clustered-recall statistics against hand-computed examples."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as _scipy_stats

from foldscope.core.stats import (
    cell_summary,
    clustering,
    design_effect,
    effective_n,
    group_checks,
    icc_binary,
    mean_with_n,
    row_mean,
    wilson_interval,
)


def test_mean_with_n():
    assert mean_with_n([1.0, 0.5, 0.0]) == (0.5, 3)
    mean, n = mean_with_n([])
    assert math.isnan(mean) and n == 0


def test_icc_all_or_nothing_rows_is_one():
    assert icc_binary([[1, 1], [0, 0]]) == pytest.approx(1.0)


def test_icc_rows_less_alike_than_chance_is_negative_and_not_clamped():
    # MSB = 0, MSW = 0.5, n0 = 2: (0 - 0.5) / (0 + 0.5) = -1
    assert icc_binary([[1, 0], [1, 0]]) == pytest.approx(-1.0)


def test_icc_tiny_unequal_rows_can_fall_below_minus_one():
    # N = 4, k = 3, grand mean 3/4. SSB = 2(1/4)^2 + (1/4)^2 + (1/4)^2 = 1/4, MSB = 1/8;
    # SSW = 1/2, MSW = 1/2; n0 = (4 - 6/4) / 2 = 5/4. ICC = (1/8 - 1/2) / (1/8 + 1/8) = -3/2.
    assert icc_binary([[0, 1], [1], [1]]) == pytest.approx(-1.5)


def test_icc_unequal_cluster_sizes_uses_adjusted_n0():
    # N = 9, k = 3, grand mean 4/9. MSB = 31/36, MSW = 1/12, n0 = (9 - 29/9) / 2 = 26/9.
    # ICC = (31/36 - 3/36) / (31/36 + (17/9)(3/36)) = 252/330 = 42/55.
    assert icc_binary([[1, 1, 1], [1, 0], [0, 0, 0, 0]]) == pytest.approx(42 / 55)


def test_icc_accepts_bools_and_ignores_empty_rows():
    assert icc_binary([[True, True], [], [False, False]]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "groups",
    [[], [[1, 0, 1]], [[1], [0], [1]], [[1, 1], [1, 1, 1]], [[0, 0], [0, 0]], [[], []]],
)
def test_icc_undefined_is_nan(groups):
    assert math.isnan(icc_binary(groups))


@given(st.lists(st.lists(st.booleans(), max_size=6), max_size=8))
def test_icc_never_raises_and_never_exceeds_one(groups):
    # No lower bound of -1 to test: the unequal-size floor is -1 / (n0 - 1).
    icc = icc_binary(groups)
    assert math.isnan(icc) or icc <= 1.0 + 1e-9


def test_design_effect_and_effective_n():
    assert design_effect(14, 0.5) == pytest.approx(7.5)
    assert design_effect(14, 0.0) == 1.0
    assert math.isnan(design_effect(14, float("nan")))
    assert effective_n(140, 7.0) == pytest.approx(20.0)
    assert math.isnan(effective_n(140, 0.0))
    assert math.isnan(effective_n(140, float("nan")))


def test_wilson_known_value():
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4901624, abs=1e-6)
    assert high == pytest.approx(0.9433178, abs=1e-6)


def test_wilson_edges():
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and 0 < high < 0.35
    low, high = wilson_interval(10, 10)
    assert high == 1.0 and 0.65 < low < 1
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    narrow, wide = wilson_interval(8, 10, 0.5), wilson_interval(8, 10, 0.99)
    assert wide[0] < narrow[0] and narrow[1] < wide[1]
    with pytest.raises(ValueError):
        wilson_interval(11, 10)
    with pytest.raises(ValueError):
        wilson_interval(5, 10, 1.0)


def test_cell_summary_all_or_nothing_rows():
    summary = cell_summary([1.0, 0.0], [[1, 1], [0, 0]])
    assert summary.rows == 2 and summary.mean_recall == 0.5 and summary.checks == 4
    assert summary.icc == pytest.approx(1.0)
    assert summary.design_effect == pytest.approx(2.0)
    assert summary.effective_checks == pytest.approx(2.0)  # two rows, two trials
    assert summary.ci == pytest.approx(wilson_interval(1, 2))


def test_cell_summary_negative_icc_does_not_narrow_the_interval():
    summary = cell_summary([0.5, 0.5], [[1, 0], [1, 0]])
    assert summary.icc == pytest.approx(-1.0)
    assert summary.design_effect == pytest.approx(0.0)  # reported raw
    assert summary.effective_checks == pytest.approx(4.0)  # interval treats ICC as 0
    assert summary.ci == pytest.approx(wilson_interval(2, 4))


def test_cell_summary_identical_rows_fall_back_to_rows_as_trials():
    summary = cell_summary([1.0, 1.0, 1.0], [[1] * 14] * 3)
    assert math.isnan(summary.icc) and math.isnan(summary.design_effect)
    assert summary.effective_checks == pytest.approx(3.0)
    assert summary.ci == pytest.approx(wilson_interval(3, 3))


@pytest.mark.parametrize("recalls,groups", [([], []), ([1.0], [[]])])
def test_cell_summary_degenerate(recalls, groups):
    summary = cell_summary(recalls, groups)
    assert summary.rows == len(recalls)
    assert all(math.isnan(x) for x in summary.ci)


# -- row means, clustering from records ----------------------------------------------------------

def test_row_mean_t_interval_by_hand():
    # values 0.2, 0.4, 0.6, 0.8: mean 0.5, sd √(0.2/3), t(0.975, 3) = 3.182446305
    result = row_mean([0.2, 0.4, 0.6, 0.8])
    half = 3.182446305284263 * math.sqrt(0.2 / 3) / 2
    assert result.n == 4 and result.mean == pytest.approx(0.5)
    assert result.ci == pytest.approx((0.5 - half, 0.5 + half))


def test_row_mean_clips_to_bounds_and_handles_small_n():
    assert row_mean([0.0, 1.0, 1.0]).ci[1] == 1.0
    assert row_mean([0.0, 0.0, 1.0]).ci[0] == 0.0
    single = row_mean([0.7])
    assert single.n == 1 and math.isnan(single.ci[0])
    assert row_mean([]).n == 0


@settings(max_examples=40)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=30))
def test_row_mean_matches_scipy_t_interval(values):
    result = row_mean(values)
    mean = sum(values) / len(values)
    sem = _scipy_stats.sem(values)
    if sem == 0:
        assert result.ci == pytest.approx((mean, mean))
        return
    low, high = _scipy_stats.t.interval(0.95, len(values) - 1, loc=mean, scale=sem)
    assert result.ci == pytest.approx((max(0.0, low), min(1.0, high)), abs=1e-9)


def test_group_checks_and_clustering():
    records = [("r1", "a", 1), ("r1", "b", 1), ("r2", "a", 0), ("r2", "b", 0), ("r3", "a", 1),
               ("r3", "b", 0)]
    groups = group_checks(records)
    assert groups == [[1, 1], [0, 0], [1, 0]]
    summary = clustering(groups)
    assert summary.icc == pytest.approx(icc_binary(groups))
    assert summary.design_effect == pytest.approx(1 + (2 - 1) * summary.icc)
    assert summary.effective_n == pytest.approx(6 / summary.design_effect)
    assert (summary.checks, summary.rows, summary.m) == (6, 3, 2.0)


def test_group_checks_rejects_non_binary_and_duplicates():
    with pytest.raises(ValueError, match="0 or 1"):
        group_checks([("r1", "a", 2)])
    with pytest.raises(ValueError, match="twice"):
        group_checks([("r1", "a", 1), ("r1", "a", 0)])
