"""Sizing a sweep before it runs: rows per cell for a recall contrast, and its token budget.

Rows per cell. The checks of one row are clustered, so the sample size of the classic
two-proportion test (which assumes independent checks) is inflated by the design effect and
divided among the m checks a row contributes:

    n_checks = (z(1 − α/2)·√(2·p̄·(1 − p̄)) + z(power)·√(p1·(1 − p1) + p2·(1 − p2)))² ÷ (p1 − p2)²
    rows per cell = ⌈n_checks · DE ÷ m⌉,   DE = 1 + (m − 1)·ICC,   p̄ = (p1 + p2) ÷ 2

(Fleiss, *Statistical Methods for Rates and Proportions*, without continuity correction). With
ICC = 1 a row is one trial (rows = n_checks); with ICC = 0 the m checks count fully.

Tokens. A row is one fold per chunk plus the recall turn. Each fold's prompt is the arm's fixed
text, the chunk (the scenario's own per-chunk estimate) and the previous carrier, taken at the
most the next fold can receive (the arm's output budget, capped by its carry cap); each reply
is taken at its output budget. The figure is therefore an upper bound on what a sweep spends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from foldscope.core.arms import Arm
from foldscope.core.distributions import norm_ppf
from foldscope.core.errors import StatsError
from foldscope.core.fold import RECALL_BUDGET, fold_call, recall_call
from foldscope.core.scenario import Scenario
from foldscope.core.stats import clamped_icc, design_effect


@dataclass(frozen=True)
class RowsNeeded:
    """Rows per cell to detect a recall contrast."""

    p1: float
    p2: float
    alpha: float
    power: float
    icc: float
    """ICC used (clamped to [0, 1] for the design effect)."""
    m: int
    """Checks per row (the scenario's graded facts)."""
    design_effect: float
    checks_independent: float
    """Independent checks per cell the unclustered test would need (unrounded)."""
    rows_per_cell: int
    """⌈checks_independent · DE ÷ m⌉."""


def checks_for_two_proportions(p1: float, p2: float, alpha: float = 0.05,
                               power: float = 0.8) -> float:
    """Independent observations per group for a two-sided two-proportion z-test (unrounded).

    Raises:
        StatsError: proportions outside (0, 1) or equal, alpha or power outside (0, 1).
    """
    for name, value in (("p1", p1), ("p2", p2)):
        if not 0 < value < 1:
            raise StatsError(f"{name} must be strictly between 0 and 1, got {value}")
    if p1 == p2:
        raise StatsError("p1 and p2 are equal: there is no contrast to detect")
    if not 0 < alpha < 1:
        raise StatsError(f"alpha must be between 0 and 1, got {alpha}")
    if not 0 < power < 1:
        raise StatsError(f"power must be between 0 and 1, got {power}")
    z_a = norm_ppf(1 - alpha / 2)
    z_b = norm_ppf(power)
    pbar = (p1 + p2) / 2
    top = z_a * math.sqrt(2 * pbar * (1 - pbar)) + z_b * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return top * top / (p1 - p2) ** 2


def rows_needed(p1: float, p2: float, m: int, icc: float, alpha: float = 0.05,
                power: float = 0.8) -> RowsNeeded:
    """Rows per cell to detect recall p1 vs p2 with m checks per row at the given ICC.

    Args:
        p1: expected recall in the first arm.
        p2: expected recall in the second arm.
        m: checks per row (graded facts).
        icc: the check-level ICC; clamped to [0, 1] (a negative ICC would promise more than
            independent checks, an unknown one is not allowed).
        alpha: two-sided level.
        power: the wanted power.

    Raises:
        StatsError: a bad proportion, alpha, power, m < 1 or a NaN ICC.
    """
    if isinstance(m, bool) or int(m) != m or m < 1:
        raise StatsError(f"checks per row must be a positive integer, got {m}")
    if math.isnan(icc) or math.isinf(icc):
        raise StatsError("the ICC is undefined; give one with --icc")
    n = checks_for_two_proportions(p1, p2, alpha, power)
    used = clamped_icc(icc)
    de = design_effect(m, used)
    return RowsNeeded(p1=p1, p2=p2, alpha=alpha, power=power, icc=used, m=int(m),
                      design_effect=de, checks_independent=n,
                      rows_per_cell=max(1, math.ceil(n * de / m - 1e-9)))


@dataclass(frozen=True)
class RowTokens:
    """Upper-bound token estimate of one row (every fold and the recall turn)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int


def row_tokens(arm: Arm, scenario: Scenario) -> RowTokens:
    """Estimate the tokens of one row of an arm on a scenario (upper bound; see module doc).

    Args:
        arm: the row's arm.
        scenario: the scenario (its chunks carry their token estimates).

    Returns:
        Calls, prompt tokens and completion tokens of the row.
    """
    carried = min(arm.output_budget, arm.carry_cap) if arm.carry_cap else arm.output_budget
    chunks = scenario.chunks
    prompt = 0
    for i, chunk in enumerate(chunks):
        spec = fold_call(arm, "", [chunk.text], i, len(chunks), [chunk.tokens],
                         carrier_tokens=0 if i == 0 else carried)
        prompt += spec.estimated_prompt_tokens
    recall = recall_call("", [f.label for f in scenario.graded])
    prompt += recall.estimated_prompt_tokens + carried
    return RowTokens(calls=len(chunks) + 1, prompt_tokens=prompt,
                     completion_tokens=arm.output_budget * len(chunks) + RECALL_BUDGET)


def pooled_cell_icc(cells: list[tuple[int, float]]) -> tuple[float, int]:
    """The row-weighted mean of per-cell ICCs, skipping cells where the ICC is undefined.

    ICCs are taken within cells (one model × arm), never over a whole sweep's rows at once:
    pooling cells would count the differences between arms and models as clustering.

    Args:
        cells: ``(valid rows, ICC)`` of each cell.

    Returns:
        ``(ICC, cells used)``; ``(nan, 0)`` when no cell has a defined ICC.
    """
    used = [(n, icc) for n, icc in cells if n > 0 and math.isfinite(icc)]
    weight = sum(n for n, _ in used)
    if not weight:
        return float("nan"), 0
    return math.fsum(n * icc for n, icc in used) / weight, len(used)
