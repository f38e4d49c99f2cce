"""Aggregates over a stored sweep: the arm × model cells, with row counts beside every mean."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from foldscope.core.cells import RECALL_INTERVAL, cell_key, group_cells, valid_rows
from foldscope.core.cuts import GIST_FILL
from foldscope.core.designs import balance_note
from foldscope.core.fabrication import ANSWER_COUNTS, failing_rows
from foldscope.core.stats import CellSummary, cell_summary_counts, clustering_counts, row_mean
from foldscope.core.status import RowStatus
from foldscope.core.tokens import estimator_error as token_error
from foldscope.engine.pins import stored_pins
from foldscope.engine.review import failing_rows_json, flag_agreement_json
from foldscope.engine.store import Store
from foldscope.engine.study import study_json, study_rows, sweep_study
from foldscope.engine.sweep import stored_definition

if TYPE_CHECKING:
    from foldscope.core.row import RowRecord
    from foldscope.core.study import StudyRow

ANSWER_COLUMNS = (*ANSWER_COUNTS, "flagged", "unit_dropped")
"""Per-cell counts of answer classes (see ``core.answers.classify_fact``) and flags."""


INTERVAL_METHOD = "wilson_design_effect"
"""The per-cell interval: Wilson at 95 % on checks ÷ design effect (``core.stats.cell_summary``)."""

INTERVAL_DE_POOLED = "icc_pooled"
"""``interval_design_effect_source`` of a cell whose interval used its scenario's pooled DE
(``study.scenarios[].tables.icc``: one-way ICC(1) over every valid row of the scenario)."""
INTERVAL_DE_CELL = "cell"
"""``interval_design_effect_source`` of an interval on the cell's own DE (no pooled figure)."""


def _interval(summary: CellSummary, source: str = INTERVAL_DE_CELL) -> dict[str, Any]:
    """A cell's interval, ICC and design effect as the report shows them.

    The interval is ``cell_summary``'s: a row's checks are not independent trials, so it counts
    checks ÷ DE; ``interval_design_effect`` is the DE it used and ``interval_design_effect_source``
    says whose (``icc_pooled``: the scenario's pooled one, as the report passes it). The cell's
    own ICC and DE are a diagnostic: a negative ICC is shown as measured, its DE floored at 1
    (a note says so) with the raw 1 + (m − 1)·ICC kept beside it.
    """
    ci = summary.ci
    has_ci = summary.checks > 0 and not any(math.isnan(x) for x in ci)
    icc, raw_de = _finite(summary.icc), _finite(summary.design_effect)
    de = None if raw_de is None else max(1.0, raw_de)
    note = None
    if icc is not None and icc < 0:
        note = (f"negative ICC ({icc:.3f}): checks vary more within rows than between them in "
                "this cell; its design effect is floored at 1")
    return {
        "check_ci95": [ci[0], ci[1]] if has_ci else None,
        "interval_method": INTERVAL_METHOD,
        "effective_checks": (summary.effective_checks
                             if has_ci and not math.isnan(summary.effective_checks) else None),
        "interval_design_effect": _finite(summary.interval_design_effect) if has_ci else None,
        "interval_design_effect_source": source,
        "icc": icc, "design_effect": de, "design_effect_raw": raw_de, "icc_note": note,
    }


def cells(store: Store, sweep_id: str,
          rows: Sequence[StudyRow] | None = None) -> list[dict[str, Any]]:
    """One entry per (scenario, model, arm) in plan order: rows, valid rows, mean recall, spread.

    Scenarios are never pooled: a sweep over several scenarios has one cell per scenario.

    Cells are ``core.cells`` cells and every row enters a figure only through
    ``core.cells.valid_rows``, on the verdict the runner stored with it (decided once, by
    ``core.validity``; never re-derived here). Mean recall's interval is ``recall_ci95``
    (``t_rows``, the grid's and the study's); ``check_ci95`` is the check-level interval.
    Check-level intraclass correlation and the design effect are reported
    because the graded checks of one row are not independent trials.
    """
    if rows is None:
        rows = study_rows(store, sweep_id)
    grouped = group_cells(rows, lambda r: cell_key(r.row))
    # The interval's DE is the scenario's pooled one (every valid row of the scenario, all
    # models and arms), the figure the study's icc table reports as icc_pooled.
    pooled_groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for key, study_group in grouped.items():
        pooled_groups[key.scenario] += [r.checks.counts for r in valid_rows(study_group)]
    pooled = {scenario: clustering_counts(groups) for scenario, groups in pooled_groups.items()}
    out = []
    for (scenario, model, arm), study_group in grouped.items():
        valid_study = valid_rows(study_group)
        group = [r.row for r in study_group]
        valid = [r.row for r in valid_study]
        recalls = [r.recall for r in valid if r.recall is not None]
        recall = row_mean(recalls)
        check_groups = [r.checks.counts for r in valid_study if r.checks]
        summary = cell_summary_counts(recalls, check_groups,
                                      interval_de=pooled[scenario].design_effect_used)
        correct = sum(k for _, k in check_groups)
        classes: Counter[str] = Counter()
        for r in valid_study:
            classes.update(r.checks.answer_counts())
            classes["flagged"] += r.checks.flagged
            classes["unit_dropped"] += r.checks.unit_dropped
        interval = _interval(summary, INTERVAL_DE_POOLED)
        out.append({
            "scenario": scenario, "model": model, "arm": arm, "rows": len(group),
            "valid_rows": len(valid),
            "done_rows": sum(r.status == RowStatus.DONE for r in group),
            "failed_rows": sum(r.status == RowStatus.FAILED for r in group),
            "running_rows": sum(r.status == RowStatus.RUNNING for r in group),
            "mean_recall": summary.mean_recall if recalls else None,
            # Mean recall's one interval, the grid's and the study's (core.cells.RECALL_INTERVAL).
            "recall_ci95": None if math.isnan(recall.ci[0]) else [recall.ci[0], recall.ci[1]],
            "recall_interval": RECALL_INTERVAL,
            "checks": summary.checks, "correct_checks": correct,
            **interval,
            # Answer classes over the valid rows' checks: abstaining and fabricating are
            # different failures, and a person's fabrication flags are counted beside the rule's.
            # honest_abstention counts abstentions only; an answer that gave nothing is
            # no_answer (core.fabrication.counted_as).
            **{name: classes[name] for name in ANSWER_COLUMNS},
            "catch_up_rows": sum(r.catch_up for r in group),
            "parse_failures": sum(r.parse_failures for r in group),
            "length_stops": sum(r.length_stops for r in group),
            "row_retries": sum(r.infra_retries for r in group),
            "call_retries": sum(r.call_retries for r in group),
            # Unknown (null) when any call went unpriced: never a made-up $0.
            "cost_usd": (None if any(r.unpriced_calls for r in group)
                         else round(sum(r.cost_usd for r in group), 6)),
            "unpriced_calls": sum(r.unpriced_calls for r in group),
            "simulated": any(r.simulated for r in group),
        })
    return out


def capacity_notes(scenarios: list[str], arms: list[str]) -> list[str]:
    """Per scenario, each arm whose declared ceiling cannot hold the planted facts one line
    each (``core.arms.capacity_note``): why a faithful carrier scores low there."""
    from foldscope.core.arms import capacity_note, get_arm
    from foldscope.core.errors import FoldscopeError
    from foldscope.engine.loader import load_scenario_facts

    out = []
    for name in scenarios:
        try:
            planted = load_scenario_facts(name)  # the facts only: no transcript generated
        except FoldscopeError:  # a scenario file gone since the sweep: no note, no failure
            continue
        facts = [(f.label, f.value) for f in planted]
        graded = sum(1 for f in planted if f.graded)
        for arm in arms:
            note = capacity_note(get_arm(arm), facts, graded)
            if note is not None:
                out.append(note if len(scenarios) == 1 else f"{name}: {note}")
    return out


def _finite(x: float | None) -> float | None:
    if x is None or x != x or x in (float("inf"), float("-inf")):
        return None
    return round(x, 4)


def estimator_error(store: Store, sweep_id: str) -> dict[str, Any]:
    """The token estimator's relative error against reported usage, per content class.

    Folds are grouped by the dominant character class of the chunk they fold; the error is
    (estimated - reported) / reported, so a positive mean means the estimator over-counts.
    """
    by_class: dict[str, list[float]] = defaultdict(list)
    for pair in store.token_pairs(sweep_id):
        if pair.prompt_tokens:
            err = token_error(pair.est_prompt_tokens, pair.prompt_tokens)
            by_class[pair.content_class or "unknown"].append(err)
    return {cls: {"folds": len(errs), "mean_relative_error": round(sum(errs) / len(errs), 4),
                  "max_abs_relative_error": round(max(abs(e) for e in errs), 4)}
            for cls, errs in sorted(by_class.items())}


def accounting(rows: list[RowRecord]) -> dict[str, Any]:
    """Spend, tokens (estimated and reported), retries, cache hits and wall time by model and arm."""
    def add(bucket: dict[str, Any], r: RowRecord) -> None:
        bucket["rows"] += 1
        bucket["cost_usd"] += r.cost_usd
        bucket["prompt_tokens"] += r.prompt_tokens
        bucket["completion_tokens"] += r.completion_tokens
        bucket["est_prompt_tokens"] += r.est_prompt_tokens
        bucket["row_retries"] += r.infra_retries
        bucket["call_retries"] += r.call_retries
        bucket["cached_calls"] += r.cached_calls
        bucket["wall_s"] += r.wall_s
        bucket["unpriced_calls"] += r.unpriced_calls

    def empty() -> dict[str, Any]:
        return dict.fromkeys(("rows", "cost_usd", "prompt_tokens", "completion_tokens",
                              "est_prompt_tokens", "row_retries", "call_retries",
                              "cached_calls", "wall_s", "unpriced_calls"), 0)

    total = empty()
    by_model: defaultdict[str, dict[str, Any]] = defaultdict(empty)
    by_arm: defaultdict[str, dict[str, Any]] = defaultdict(empty)
    for r in rows:
        add(total, r)
        add(by_model[r.model], r)
        add(by_arm[r.arm], r)
    for bucket in (total, *by_model.values(), *by_arm.values()):
        bucket["cost_usd"] = round(bucket["cost_usd"], 6)
        bucket["wall_s"] = round(bucket["wall_s"], 3)
        bucket["cost_per_row_usd"] = round(bucket["cost_usd"] / bucket["rows"], 6) if bucket["rows"] else 0.0
        if bucket["unpriced_calls"]:  # some call had no price: the spend is unknown
            bucket["cost_usd"] = bucket["cost_per_row_usd"] = None
    return {"total": total, "by_model": dict(by_model), "by_arm": dict(by_arm)}


def sweep_report(store: Store, sweep_id: str, gist_fill: float = GIST_FILL) -> dict[str, Any]:
    """The whole report object for one sweep (what ``foldscope report --format json`` prints).

    ``gist_fill`` is the study tables' failure-mode cut (``core.study.GIST_FILL``)."""
    sweep = store.sweep(sweep_id)
    if sweep is None:
        from foldscope.core.errors import StoreError

        raise StoreError(f"{store.path}: no sweep '{sweep_id}'")
    progress = store.progress(sweep_id)
    definition = stored_definition(sweep.config)
    s = definition.section
    # One pass over the sweep, a batch of rows at a time: each row with the summaries of its
    # folds and checks (engine.study.iter_study_rows), which every section below reads.
    study = study_rows(store, sweep_id)
    rows = [r.row for r in study]
    return {
        "sweep": sweep_id,
        "name": sweep.name,
        "status": store.live_status(sweep),
        "stop_reason": sweep.stop_reason,
        # Marked simulated when planned with sim/ ids or when any reply came from a simulated
        # endpoint (a sim served over HTTP under another name is still simulated).
        "simulated": sweep.simulated or any(r.simulated for r in rows),
        "scenario": s.scenario,
        "scenarios": list(definition.scenarios),
        "arms": list(s.arms),
        "models": list(definition.models),
        "repeats": s.repeats,
        "design": s.design,
        "mode": definition.mode,
        "design_note": balance_note(s.arms, s.repeats, s.design),
        "capacity_notes": capacity_notes(list(definition.scenarios), list(s.arms)),
        "progress": progress,
        "pins": sweep.pins,
        "warnings": [f"{model}: {w}" for model, entry in stored_pins(sweep.pins).items()
                     for w in entry.warnings],
        "cells": cells(store, sweep_id, study),
        "accounting": accounting(rows),
        "estimator": estimator_error(store, sweep_id),
        # The study's tables (engine.study); added beside the keys above, which stay as they are.
        "study": study_json(sweep_study(store, sweep_id, study, gist_fill=gist_fill)),
        # Issue 12: failing rows by how they failed; people's verdicts against the class.
        "abstention_vs_fabrication": failing_rows_json(
            failing_rows([(r.row, r.checks) for r in study])),
        "flag_agreement": flag_agreement_json(store, sweep_id),
    }
