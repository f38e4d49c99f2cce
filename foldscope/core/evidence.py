"""The figures of an evidence package, computed from its row- and check-level records alone.

``foldscope export`` writes the records, then computes the aggregates and contrasts with these
functions from exactly the text it wrote; ``foldscope verify`` reads the records back and calls
the same functions. Figures are compared as the text they are written as (``fmt``), so a
package verifies byte for byte or names the figure that differs.

Cells are (sweep, scenario, model, arm): sweeps are never pooled, and a contrast pairs two arms
of one model inside one sweep by repeat.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from foldscope.core.cells import CellKey, cell_key, group_cells, valid_rows
from foldscope.core.errors import EvidenceError, StatsError
from foldscope.core.inference import (
    ROW_THRESHOLD,
    fisher_exact,
    pair_by_key,
    paired_bootstrap,
    pearson,
    rows_table,
)
from foldscope.core.stats import clustering, row_mean
from foldscope.core.validity import OK, Validity

ROW_COLUMNS: tuple[str, ...] = (
    "row_id", "source", "sweep", "scenario", "model", "arm", "repeat", "status", "valid",
    "validity_reason", "recall", "correct", "graded", "folds", "headings_carried",
    "fill_fraction", "carried_chars", "catch_up", "parse_failures", "length_stops", "simulated",
    "prompt_tokens", "completion_tokens", "cost_usd", "answer_chars", "answer_prefix")
"""Columns of ``rows.csv``: one line per planned row. ``headings_carried`` (0–5),
``fill_fraction`` (carried characters ÷ declared ceiling; empty for arms without one) and
``carried_chars`` are the final carrier's, the one the recall turn read (empty before a fold)."""

CHECK_COLUMNS: tuple[str, ...] = (
    "row_id", "check", "value", "abstained", "unit_dropped", "classification", "in_carrier",
    "flagged")
"""Columns of ``checks.csv``: one line per graded fact of a finished row (value 1 = correct)."""

CELL_KEY: tuple[str, ...] = ("sweep", "scenario", "model", "arm")
AGGREGATE_COLUMNS: tuple[str, ...] = (
    *CELL_KEY, "rows", "valid_rows", "mean_recall", "ci_low", "ci_high", "checks", "icc",
    "design_effect", "effective_n", "rows_recalled")
"""Columns of ``aggregates.csv``. The interval is a 95 % t interval over valid rows
(``core.stats.row_mean``); ICC, DE and effective n are over the valid rows' checks
(``core.stats.clustering``); rows_recalled counts valid rows with recall ≥ 0.5."""

CONTRAST_KEY: tuple[str, ...] = ("sweep", "scenario", "model", "arm_a", "arm_b")
CONTRAST_COLUMNS: tuple[str, ...] = (
    *CONTRAST_KEY, "pairs", "mean_difference", "boot_low", "boot_high", "a_recalled", "a_rows",
    "b_recalled", "b_rows", "fisher_p")
"""Columns of ``contrasts.csv``: for each model and pair of arms in one sweep, the paired
bootstrap of mean recall a − b over repeats (seed ``BOOTSTRAP_SEED``, ``BOOTSTRAP_RESAMPLES``)
and Fisher's exact p on valid rows recalled (≥ 0.5) vs not."""

STUDY_KEY: tuple[str, ...] = ("sweep", "scenario")
STUDY_COLUMNS: tuple[str, ...] = (
    *STUDY_KEY, "valid_rows", "checks", "m", "icc_pooled", "icc_used", "design_effect",
    "effective_n", "headings_n", "headings_r", "headings_p", "fill_n", "fill_r", "fill_p",
    "ceiling_pairs", "ceiling_j_minus_t", "ceiling_boot_low", "ceiling_boot_high")
"""Columns of ``study.csv``, one line per sweep × scenario: the pooled ICC(1) over every valid
row's checks (all models and arms, rows as clusters) with ``icc_used`` (clamped, undefined → 1),
DE = 1 + (m − 1)·icc_used and effective n = checks ÷ DE (``core.stats.clustering``); Pearson r of
recall with headings carried and with fill fraction over valid rows (``core.inference.pearson``;
n, r, p); and the paired ceiling contrast, mean recall j − t over valid rows paired by (model,
repeat), every model pooled, with its bootstrap interval."""

BOOTSTRAP_SEED = 0
BOOTSTRAP_RESAMPLES = 4000


def fmt(x: float | int | None) -> str:
    """The text a figure is written as: integers plainly, floats to 12 significant digits,
    undefined (None, NaN) as the empty string."""
    if x is None:
        return ""
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, int):
        return str(x)
    if math.isnan(x):
        return ""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.12g}"


def same_figure(stated: str | None, recomputed: str) -> bool:
    """Whether a stated figure matches the recomputed one: equal text, or numbers equal to
    1e-9 relative (1e-12 absolute), so a package verifies on a machine whose last floating-point
    digit differs."""
    if stated == recomputed:
        return True
    if stated is None or stated == "" or recomputed == "":
        return False
    try:
        a, b = float(stated), float(recomputed)
    except ValueError:
        return False
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@dataclass(frozen=True, slots=True)
class RowRecord:
    """What the figures need from one line of ``rows.csv``."""

    row_id: str
    sweep: str
    scenario: str
    model: str
    arm: str
    repeat: int
    valid: bool
    validity_reason: str
    recall: float | None
    correct: int | None
    graded: int | None
    headings_carried: int | None = None
    fill_fraction: float | None = None
    carried_chars: int | None = None

    @property
    def verdict(self) -> Validity:
        """The row's validity as the package states it (``core.cells.valid_rows`` selects on it)."""
        return Validity(self.valid, self.validity_reason, retryable=False)


def _int(text: str, where: str, column: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise EvidenceError(f"{where}: column {column}: not an integer: {text!r}") from None


def _opt_int(rec: Mapping[str, str], where: str, column: str) -> int | None:
    text = rec.get(column) or ""
    return _int(text, where, column) if text != "" else None


def _opt_float(rec: Mapping[str, str], where: str, column: str) -> float | None:
    text = rec.get(column) or ""
    if text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise EvidenceError(f"{where}: column {column}: not a number: {text!r}") from None
    if not math.isfinite(value):
        raise EvidenceError(f"{where}: column {column}: not a finite number: {text!r}")
    return value


def parse_rows(records: Iterable[Mapping[str, str]], source: str = "rows.csv") -> list[RowRecord]:
    """Read the fields the figures need from ``rows.csv`` records.

    Raises:
        EvidenceError: a missing column, a malformed number, or a row id used twice.
    """
    out: list[RowRecord] = []
    seen: set[str] = set()
    shared: dict[str, str] = {}  # a sweep's cell names and reasons, one string each
    for line, rec in enumerate(records, start=2):
        where = f"{source} line {line}"
        missing = [c for c in ("row_id", *CELL_KEY, "repeat", "valid", "recall", "correct",
                               "graded") if rec.get(c) is None]
        if missing:
            raise EvidenceError(f"{where}: missing column {missing[0]}")
        if rec["row_id"] in seen:
            raise EvidenceError(f"{where}: row_id {rec['row_id']} appears twice")
        seen.add(rec["row_id"])
        if rec["valid"] not in ("0", "1"):
            raise EvidenceError(f"{where}: column valid: must be 0 or 1, got {rec['valid']!r}")
        recall = _opt_float(rec, where, "recall")
        if recall is not None and not 0.0 <= recall <= 1.0:
            raise EvidenceError(f"{where} (row_id {rec['row_id']!r}): column recall: must be a "
                                f"number from 0 to 1, got {rec['recall']!r}")
        out.append(RowRecord(
            row_id=rec["row_id"], sweep=shared.setdefault(rec["sweep"], rec["sweep"]),
            scenario=shared.setdefault(rec["scenario"], rec["scenario"]),
            model=shared.setdefault(rec["model"], rec["model"]),
            arm=shared.setdefault(rec["arm"], rec["arm"]),
            repeat=_int(rec["repeat"], where, "repeat"), valid=rec["valid"] == "1",
            validity_reason=shared.setdefault(rec.get("validity_reason") or "",
                                              rec.get("validity_reason") or ""),
            recall=recall,
            correct=_int(rec["correct"], where, "correct") if rec["correct"] != "" else None,
            graded=_int(rec["graded"], where, "graded") if rec["graded"] != "" else None,
            headings_carried=_opt_int(rec, where, "headings_carried"),
            fill_fraction=_opt_float(rec, where, "fill_fraction"),
            carried_chars=_opt_int(rec, where, "carried_chars")))
    return out


def parse_checks(records: Iterable[Mapping[str, str]],
                 source: str = "checks.csv") -> dict[str, list[int]]:
    """Group ``checks.csv`` records into each row's 0/1 values, in file order.

    Raises:
        EvidenceError: a missing column, a value other than 0/1, or a check repeated in a row.
    """
    out: dict[str, dict[str, int]] = defaultdict(dict)
    labels: dict[str, str] = {}
    for line, rec in enumerate(records, start=2):
        where = f"{source} line {line}"
        if rec.get("row_id") is None or rec.get("check") is None or rec.get("value") is None:
            raise EvidenceError(f"{where}: missing column row_id, check or value")
        if rec["value"] not in ("0", "1"):
            raise EvidenceError(f"{where}: column value: must be 0 or 1, got {rec['value']!r}")
        if rec["check"] in out[rec["row_id"]]:
            raise EvidenceError(f"{where}: check {rec['check']!r} repeated in row {rec['row_id']}")
        # Each label one string across the rows (a 50,000-row package has 700,000 checks).
        out[rec["row_id"]][labels.setdefault(rec["check"], rec["check"])] = int(rec["value"])
    return {row: list(values.values()) for row, values in out.items()}


def row_problems(rows: Sequence[RowRecord], checks: Mapping[str, list[int]],
                 source: str = "rows.csv") -> list[str]:
    """Where a row's correct, graded or recall disagrees with its checks in ``checks.csv``, or
    its valid flag with its validity reason (only ``ok`` rows are valid)."""
    problems = []
    known = {r.row_id for r in rows}
    for row_id in checks:
        if row_id not in known:
            problems.append(f"checks.csv: row_id {row_id} is not in {source}")
    for r in rows:
        if r.valid != (r.validity_reason == OK):
            problems.append(f"{source}: row {r.row_id}: valid is {int(r.valid)} but its "
                            f"validity_reason is {r.validity_reason or 'empty'}")
        values = checks.get(r.row_id, [])
        if r.graded is None and not values:
            continue
        expect = {"correct": fmt(sum(values)), "graded": fmt(len(values)),
                  "recall": fmt(sum(values) / len(values)) if values else ""}
        found = {"correct": fmt(r.correct), "graded": fmt(r.graded), "recall": fmt(r.recall)}
        for name in ("correct", "graded", "recall"):
            if not same_figure(found[name], expect[name]):
                problems.append(f"{source}: row {r.row_id}: {name} is {found[name] or 'empty'}, "
                                f"its checks in checks.csv give {expect[name] or 'empty'}")
    return problems


def _cells(rows: Sequence[RowRecord]) -> dict[tuple[str, CellKey], list[RowRecord]]:
    """The package's cells: ``core.cells`` cells, the sweep in front (a package spans sweeps)."""
    return group_cells(rows, lambda r: (r.sweep, cell_key(r)))


def aggregates(rows: Sequence[RowRecord], checks: Mapping[str, list[int]]) -> list[dict[str, str]]:
    """One record per cell, in order of first appearance, with every figure as text (``fmt``)."""
    out = []
    for (sweep, key), group in _cells(rows).items():
        valid = valid_rows(group)
        recalls = [r.recall for r in valid if r.recall is not None]
        summary = row_mean(recalls)
        c = clustering([checks.get(r.row_id, []) for r in valid])
        out.append({
            **dict(zip(CELL_KEY, (sweep, *key))), "rows": fmt(len(group)), "valid_rows": fmt(len(valid)),
            "mean_recall": fmt(summary.mean), "ci_low": fmt(summary.ci[0]),
            "ci_high": fmt(summary.ci[1]), "checks": fmt(c.checks), "icc": fmt(c.icc),
            "design_effect": fmt(c.design_effect), "effective_n": fmt(c.effective_n),
            "rows_recalled": fmt(sum(v >= ROW_THRESHOLD for v in recalls)),
        })
    return out


def contrasts(rows: Sequence[RowRecord]) -> list[dict[str, str]]:
    """Within-sweep, within-model arm contrasts: paired bootstrap and Fisher on rows recalled."""
    by_model: dict[tuple[str, str, str], dict[str, list[RowRecord]]] = {}
    for r in rows:
        by_model.setdefault((r.sweep, r.scenario, r.model), {}).setdefault(r.arm, []).append(r)
    out = []
    for (sweep, scenario, model), arms in by_model.items():
        names = list(arms)
        for i, arm_a in enumerate(names):
            for arm_b in names[i + 1:]:
                a = [r for r in valid_rows(arms[arm_a]) if r.recall is not None]
                b = [r for r in valid_rows(arms[arm_b]) if r.recall is not None]
                _, first, second = pair_by_key(
                    {r.repeat: r.recall for r in a if r.recall is not None},
                    {r.repeat: r.recall for r in b if r.recall is not None})
                boot = paired_bootstrap(first, second, resamples=BOOTSTRAP_RESAMPLES,
                                        seed=BOOTSTRAP_SEED) if first else None
                table = rows_table([r.recall for r in a if r.recall is not None],
                                   [r.recall for r in b if r.recall is not None])
                fisher = fisher_exact(table) if a and b else None
                out.append({
                    "sweep": sweep, "scenario": scenario, "model": model, "arm_a": arm_a,
                    "arm_b": arm_b, "pairs": fmt(len(first)),
                    "mean_difference": fmt(boot.estimate if boot else None),
                    "boot_low": fmt(boot.ci[0] if boot else None),
                    "boot_high": fmt(boot.ci[1] if boot else None),
                    "a_recalled": fmt(table[0][0]), "a_rows": fmt(len(a)),
                    "b_recalled": fmt(table[1][0]), "b_rows": fmt(len(b)),
                    "fisher_p": fmt(fisher.p_value if fisher else None),
                })
    return out


def _valid(rows: Iterable[RowRecord]) -> list[RowRecord]:
    # core.cells' one selection, and a recall to correlate (a valid row always has one).
    return [r for r in valid_rows(rows) if r.recall is not None]


def _pearson_figures(pairs: Sequence[tuple[float, float]]) -> tuple[str, str, str]:
    try:
        res = pearson([x for x, _ in pairs], [y for _, y in pairs])
    except StatsError:  # fewer than three pairs
        return fmt(len(pairs)), "", ""
    return fmt(res.n), fmt(res.r), fmt(res.p_value)


def study_figures(rows: Sequence[RowRecord],
                  checks: Mapping[str, list[int]]) -> list[dict[str, str]]:
    """One record per sweep × scenario (order of first appearance): the pooled ICC and design
    effect, the headings and fill correlations and the paired ceiling contrast (``STUDY_COLUMNS``),
    every figure as text (``fmt``)."""
    groups: dict[tuple[str, str], list[RowRecord]] = {}
    for r in rows:
        groups.setdefault((r.sweep, r.scenario), []).append(r)
    out = []
    for (sweep, scenario), group in groups.items():
        valid = _valid(group)
        c = clustering([checks.get(r.row_id, []) for r in valid])
        headings = [(float(r.headings_carried), r.recall) for r in valid
                    if r.headings_carried is not None and r.recall is not None]
        fill = [(r.fill_fraction, r.recall) for r in valid
                if r.fill_fraction is not None and r.recall is not None]
        _, first, second = pair_by_key(
            {(r.model, r.repeat): r.recall for r in valid if r.arm == "j" and r.recall is not None},
            {(r.model, r.repeat): r.recall for r in valid if r.arm == "t" and r.recall is not None})
        boot = paired_bootstrap(first, second, resamples=BOOTSTRAP_RESAMPLES,
                                seed=BOOTSTRAP_SEED) if first else None
        h_n, h_r, h_p = _pearson_figures(headings)
        f_n, f_r, f_p = _pearson_figures(fill)
        out.append({
            "sweep": sweep, "scenario": scenario, "valid_rows": fmt(c.rows),
            "checks": fmt(c.checks), "m": fmt(c.m), "icc_pooled": fmt(c.icc),
            "icc_used": fmt(c.icc_used if c.rows else None),
            "design_effect": fmt(c.design_effect_used), "effective_n": fmt(c.effective_n_used),
            "headings_n": h_n, "headings_r": h_r, "headings_p": h_p,
            "fill_n": f_n, "fill_r": f_r, "fill_p": f_p,
            "ceiling_pairs": fmt(len(first)),
            "ceiling_j_minus_t": fmt(boot.estimate if boot else None),
            "ceiling_boot_low": fmt(boot.ci[0] if boot else None),
            "ceiling_boot_high": fmt(boot.ci[1] if boot else None),
        })
    return out


def compare(file: str, key: Sequence[str], columns: Sequence[str],
            stated: Sequence[Mapping[str, str]], recomputed: Sequence[Mapping[str, str]]) -> list[str]:
    """Every figure where a file's stated records differ from the recomputed ones.

    Figures match when ``same_figure`` says so.

    Returns:
        One line per difference, naming the file, the record's key and the column.
    """
    problems = []
    index = {tuple(r.get(k, "") for k in key): r for r in stated}
    seen = set()
    for rec in recomputed:
        k = tuple(rec[c] for c in key)
        seen.add(k)
        label = "/".join(k)
        if k not in index:
            problems.append(f"{file}: {label}: missing (recomputed from the records)")
            continue
        for column in columns:
            if column in key:
                continue
            said = index[k].get(column)
            if not same_figure(said, rec[column]):
                problems.append(f"{file}: {label}: {column} is {said or 'empty'!s}, "
                                f"recomputed {rec[column] or 'empty'}")
    for k in index:
        if k not in seen:
            problems.append(f"{file}: {'/'.join(k)}: not backed by any record in rows.csv")
    return problems
