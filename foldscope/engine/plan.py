"""Sizing a sweep before it runs: rows per cell for a contrast, ICC from a stored sweep, cost.

The statistics are ``core.planning``'s; this module reads the stored sweep (for an ICC) and
resolves the models (for prices) and scenarios (for token estimates).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foldscope.core.arms import get_arm
from foldscope.core.errors import StatsError, StoreError
from foldscope.core.planning import pooled_cell_icc, row_tokens, rows_needed
from foldscope.core.stats import clamped_icc, icc_binary
from foldscope.core.status import RowStatus
from foldscope.engine.evidence import query_checks, query_rows
from foldscope.engine.loader import load_scenario
from foldscope.engine.store import Store
from foldscope.engine.sweep import SweepConfig

METHOD = ("two-proportion z-test sample size (Fleiss, no continuity correction) in independent "
          "checks, times the design effect 1 + (m - 1)·ICC, divided by m checks per row; tokens "
          "assume each carrier at its cap and each reply at its output budget (an upper bound)")


@dataclass(frozen=True)
class StoredIcc:
    """The ICC a plan takes from a stored sweep, and what the sweep's rows used of tokens."""

    icc: float
    """The row-weighted mean of the sweep's cells' ICCs over valid rows."""
    source: str
    """Where it comes from (``sweep <id>``)."""
    cells_used: int
    """Cells with a defined ICC."""
    observed: dict[tuple[str, str], tuple[float, float]]
    """Mean reported (prompt, completion) tokens per finished row, by (scenario, arm)."""


def stored_icc(db: str | Path, sweep_id: str | None) -> StoredIcc:
    """The ICC of a stored sweep: the row-weighted mean of its cells' ICCs over valid rows.

    Raises:
        StoreError: no such database or sweep, or no cell with a defined ICC.
    """
    store = Store(db, readonly=True)
    try:
        sweep_id = sweep_id or store.latest_sweep_id()
        if sweep_id is None or store.sweep(sweep_id) is None:
            raise StoreError(f"{db}: no sweep '{sweep_id}'" if sweep_id else f"{db}: no sweeps")
        rows = query_rows(store, sweep_id)
        checks: dict[int, list[int]] = defaultdict(list)
        for c in query_checks(store, sweep_id):
            checks[c["row_id"]].append(int(c["correct"]))
    finally:
        store.close()
    cells: dict[tuple[str, str, str], list[list[int]]] = defaultdict(list)
    for r in rows:
        if r["valid"] and checks.get(r["id"]):
            cells[(r["scenario"], r["model"], r["arm"])].append(checks[r["id"]])
    icc, used = pooled_cell_icc([(len(g), icc_binary(g)) for g in cells.values()])
    if used == 0:
        raise StoreError(f"{db}: sweep {sweep_id} has no cell with a defined ICC "
                         "(too few valid rows, or every check alike); give --icc")
    return StoredIcc(icc, f"sweep {sweep_id}", used, observed_row_tokens(rows))


def observed_row_tokens(rows: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[float, float]]:
    """Mean reported (prompt, completion) tokens per finished row, by (scenario, arm).

    Rows whose provider reported no usage are left out; a (scenario, arm) with none is absent.
    """
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in rows:
        if r["status"] == RowStatus.DONE and r["prompt_tokens"]:
            acc = sums[(r["scenario"], r["arm"])]
            acc[0] += r["prompt_tokens"]
            acc[1] += r["completion_tokens"] or 0
            acc[2] += 1
    return {key: (p / n, c / n) for key, (p, c, n) in sums.items()}


def plan_sweep(config: SweepConfig, *, p1: float, p2: float, icc: float, icc_source: str,
               alpha: float = 0.05, power: float = 0.8, planned_repeats: int | None = None,
               observed: dict[tuple[str, str], tuple[float, float]] | None = None
               ) -> dict[str, Any]:
    """Rows per cell to detect recall p1 vs p2, and the sweep's tokens and cost at that size.

    Args:
        observed: mean reported (prompt, completion) tokens per row by (scenario, arm) from a
            stored sweep; when it covers every planned scenario and arm, the plan also gives
            tokens and cost at those rates (``tokens_observed``, ``cost_usd_observed``).
        planned_repeats: the repeats the definition asks for, if it says; a note is added when
            they fall short of the rows needed.

    Returns:
        The plan as plain data (what ``foldscope plan --json`` prints).
    """
    s = config.sweep
    scenarios = {name: load_scenario(name) for name in s.scenario_names()}
    per_scenario: list[dict[str, Any]] = []
    for name, scenario in scenarios.items():
        need = rows_needed(p1, p2, len(scenario.graded), icc, alpha, power)
        per_scenario.append({"scenario": name, "m": need.m, "design_effect": need.design_effect,
                             "checks_independent": need.checks_independent,
                             "rows_per_cell": need.rows_per_cell})
    rows_per_cell = max(p["rows_per_cell"] for p in per_scenario)
    notes: list[str] = []
    by_model = []
    total_prompt = total_completion = 0
    total_cost: float | None = 0.0
    keys = [(name, arm) for name in scenarios for arm in s.arms]
    use_observed = bool(observed) and all(k in observed for k in keys)  # type: ignore[operator]
    seen_prompt = seen_completion = 0.0
    seen_cost: float | None = 0.0
    for entry in config.models:
        cfg = entry.resolve()
        prompt = completion = 0
        obs_prompt = obs_completion = 0.0
        for name, scenario in scenarios.items():
            n = next(p["rows_per_cell"] for p in per_scenario if p["scenario"] == name)
            for arm_id in s.arms:
                t = row_tokens(get_arm(arm_id), scenario)
                prompt += n * t.prompt_tokens
                completion += n * t.completion_tokens
                if use_observed and observed is not None:
                    obs_prompt += n * observed[(name, arm_id)][0]
                    obs_completion += n * observed[(name, arm_id)][1]
        seen_prompt += obs_prompt
        seen_completion += obs_completion
        if cfg.price_prompt_per_mtok is None or cfg.price_completion_per_mtok is None:
            cost = obs_cost = None
            seen_cost = None
            notes.append(f"{cfg.id}: no price configured (set price_prompt_per_mtok and "
                         "price_completion_per_mtok); its cost is left out of the total")
            total_cost = None
        else:
            cost = (prompt * cfg.price_prompt_per_mtok
                    + completion * cfg.price_completion_per_mtok) / 1e6
            obs_cost = (obs_prompt * cfg.price_prompt_per_mtok
                        + obs_completion * cfg.price_completion_per_mtok) / 1e6
            if total_cost is not None:
                total_cost += cost
            if seen_cost is not None:
                seen_cost += obs_cost
        total_prompt += prompt
        total_completion += completion
        entry_out: dict[str, Any] = {"model": cfg.id, "prompt_tokens": prompt,
                                     "completion_tokens": completion,
                                     "cost_usd": None if cost is None else round(cost, 6)}
        if use_observed:
            entry_out["cost_usd_observed"] = None if obs_cost is None else round(obs_cost, 6)
        by_model.append(entry_out)
    cells = len(scenarios) * len(config.models) * len(s.arms)
    if planned_repeats is not None and planned_repeats < rows_per_cell:
        notes.append(f"the definition has {planned_repeats} repeat(s); the contrast needs "
                     f"{rows_per_cell} valid rows per cell")
    return {
        "method": METHOD, "p1": p1, "p2": p2, "alpha": alpha, "power": power,
        "icc": icc, "icc_used": clamped_icc(icc), "icc_source": icc_source, "scenarios": per_scenario,
        "rows_per_cell": rows_per_cell, "arms": list(s.arms),
        "models": list(config.model_ids), "cells": cells,
        "rows_total": sum(p["rows_per_cell"] for p in per_scenario) * len(config.models)
        * len(s.arms),
        "tokens": {"prompt": total_prompt, "completion": total_completion,
                   "total": total_prompt + total_completion},
        "cost_usd": None if total_cost is None else round(total_cost, 6),
        "by_model": by_model, "notes": notes,
        "tokens_observed": {"prompt": round(seen_prompt), "completion": round(seen_completion),
                            "total": round(seen_prompt + seen_completion)}
        if use_observed else None,
        "cost_usd_observed": round(seen_cost, 6)
        if use_observed and seen_cost is not None else None,
    }


def parse_contrast(text: str) -> tuple[str, str]:
    """``j:q`` → ``("j", "q")``, both known arms.

    Raises:
        StatsError: not two different arm ids separated by a colon.
        ArmError: an unknown arm.
    """
    a, sep, b = text.partition(":")
    if not sep or not a.strip() or not b.strip() or a.strip() == b.strip():
        raise StatsError(f"--contrast: expected two different arms as A:B (e.g. j:q), got {text!r}")
    get_arm(a.strip())
    get_arm(b.strip())
    return a.strip(), b.strip()
