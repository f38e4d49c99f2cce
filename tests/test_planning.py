"""Rows needed per cell (two-proportion power with the design effect) and row token estimates."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from foldscope.core.arms import get_arm
from foldscope.core.errors import StatsError
from foldscope.core.fold import RECALL_BUDGET
from foldscope.core.planning import checks_for_two_proportions, row_tokens, rows_needed
from foldscope.engine.loader import load_scenario


def test_two_proportions_by_hand():
    # p1 = 0.6, p2 = 0.8: p̄ = 0.7, √(2·0.7·0.3) = √0.42, √(0.24 + 0.16) = √0.4;
    # n = (1.959964·√0.42 + 0.841621·√0.4)² / 0.04 = 81.22 (Fleiss, no continuity correction).
    n = checks_for_two_proportions(0.6, 0.8)
    by_hand = (1.959963985 * math.sqrt(0.42) + 0.841621234 * math.sqrt(0.4)) ** 2 / 0.04
    assert n == pytest.approx(by_hand, rel=1e-8)
    assert math.ceil(n) == 82


def _exact_power(n: int, p1: float, p2: float, alpha: float = 0.05) -> float:
    """Power of the pooled two-sided z-test at n per group, summed over binomial outcomes."""
    z = stats.norm.ppf(1 - alpha / 2)
    pmf1 = stats.binom.pmf(range(n + 1), n, p1)
    pmf2 = stats.binom.pmf(range(n + 1), n, p2)
    total = 0.0
    for x1 in range(n + 1):
        for x2 in range(n + 1):
            pooled = (x1 + x2) / (2 * n)
            se = math.sqrt(pooled * (1 - pooled) * 2 / n)
            if se > 0 and abs(x1 / n - x2 / n) / se > z:
                total += pmf1[x1] * pmf2[x2]
    return total


@pytest.mark.parametrize("p1,p2", [(0.6, 0.8), (0.3, 0.6)])
def test_sample_size_reaches_its_power_exactly_computed(p1, p2):
    n = math.ceil(checks_for_two_proportions(p1, p2, power=0.8))
    assert _exact_power(n, p1, p2) == pytest.approx(0.8, abs=0.03)


def test_rows_needed_uses_the_design_effect():
    n = checks_for_two_proportions(0.3, 0.9)
    # ICC 1: a row is one trial; ICC 0: every check counts.
    assert rows_needed(0.3, 0.9, 14, 1.0).rows_per_cell == math.ceil(n)
    assert rows_needed(0.3, 0.9, 14, 0.0).rows_per_cell == math.ceil(n / 14)
    mid = rows_needed(0.3, 0.9, 14, 0.5)
    assert mid.design_effect == pytest.approx(1 + 13 * 0.5)
    assert mid.rows_per_cell == math.ceil(n * 7.5 / 14)
    assert rows_needed(0.3, 0.9, 14, -0.2).icc == 0.0


@pytest.mark.parametrize("args", [(0.3, 0.3, 14, 0.5), (0.0, 0.9, 14, 0.5), (0.3, 0.9, 0, 0.5),
                                  (0.3, 0.9, 14, float("nan"))])
def test_rows_needed_rejects_bad_input(args):
    with pytest.raises(StatsError):
        rows_needed(*args)


def test_row_tokens_cover_every_chunk_and_the_budgets():
    scenario = load_scenario("kestrel")
    arm = get_arm("j")
    tokens = row_tokens(arm, scenario)
    assert tokens.calls == len(scenario.chunks) + 1
    assert tokens.prompt_tokens > scenario.total_tokens
    assert tokens.completion_tokens == arm.output_budget * len(scenario.chunks) + RECALL_BUDGET


def test_pooled_cell_icc_weights_by_rows_and_skips_undefined():
    from foldscope.core.planning import pooled_cell_icc

    icc, used = pooled_cell_icc([(4, 0.5), (2, 0.8), (3, float("nan")), (0, 0.9)])
    assert used == 2 and icc == pytest.approx((4 * 0.5 + 2 * 0.8) / 6)
    icc, used = pooled_cell_icc([(3, float("nan"))])
    assert used == 0 and math.isnan(icc)
