"""Fabrication review from the store: the values to review with their provenance and
signatures, the failing-row table and the agreement between people's verdicts and the class."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from foldscope.core.errors import ScenarioError
from foldscope.core.fabrication import (
    REVIEW_CLASSES,
    FailingRows,
    FlagAgreement,
    HumanVerdict,
    ReviewValue,
    RowChecks,
    failing_rows,
    flag_agreement,
    trace_value,
)
from foldscope.core.row import RowRecord, StoredCheck
from foldscope.core.scenario import Scenario
from foldscope.core.signatures import Signature
from foldscope.engine.loader import load_scenario
from foldscope.engine.store import ROW_BATCH, Store


def _scenario(name: str, cache: dict[str, Scenario | None]) -> Scenario | None:
    if name not in cache:
        try:
            cache[name] = load_scenario(name)
        except ScenarioError:  # a scenario file since removed: trace without its facts
            cache[name] = None
    return cache[name]


def review_values(store: Store, sweep_id: str,
                  rules: tuple[Signature, ...] | None = None) -> list[ReviewValue]:
    """Every fabricated or carried-corruption value of a sweep's finished rows, traced.

    Args:
        store: an open store.
        sweep_id: the sweep.
        rules: stock-value signatures (default: the shipped ones).

    Returns:
        The values in plan order (then the order the labels were asked), each with its
        current human verdict.
    """
    rows = {r.id: r for r in store.rows(sweep_id)}
    human = store.verdicts(sweep_id)
    scenarios: dict[str, Scenario | None] = {}
    carriers: dict[int, list[str]] = {}
    out = []
    checks = [c for c in store.sweep_checks(sweep_id) if c.classification in REVIEW_CLASSES]
    position = {r.id: i for i, r in enumerate(rows.values())}
    for check in sorted(checks, key=lambda c: (position.get(c.row_id, 0), c.id)):
        row = rows[check.row_id]
        scenario = _scenario(row.scenario, scenarios)
        if check.row_id not in carriers:
            carriers[check.row_id] = [f.carrier for f in store.folds(check.row_id)]
        kind = None
        if scenario is not None:
            kind = next((f.kind for f in scenario.facts if f.label == check.label), None)
        trace, signatures = trace_value(
            check, scenario.facts if scenario else [], carriers[check.row_id],
            [c.text for c in scenario.chunks] if scenario else [], kind, rules)
        out.append(ReviewValue(
            check.id, row.id, row.scenario, row.model, row.arm, row.repeat, check.label,
            check.expected, check.found or "", check.classification, check.carrier_state,
            trace, signatures, max(0, len(carriers[check.row_id]) - 1), human.get(check.id)))
    return out


def _rows_with_checks(store: Store, sweep_id: str, rows: list[RowRecord] | None = None
                      ) -> Iterator[tuple[RowRecord, RowChecks]]:
    """Each row (execution order) with its checks' summary, a batch of rows at a time."""
    batches = store.row_batches(sweep_id) if rows is None else (
        rows[i:i + ROW_BATCH] for i in range(0, len(rows), ROW_BATCH))
    for batch in batches:
        checks = store.rows_checks([r.id for r in batch])
        for r in batch:
            yield r, RowChecks.of(checks.get(r.id, ()))


def failing_row_table(store: Store, sweep_id: str,
                      rows: list[RowRecord] | None = None) -> list[FailingRows]:
    """How each cell's failing rows failed (``core.fabrication.failing_rows``)."""
    return failing_rows(_rows_with_checks(store, sweep_id, rows))


def failing_rows_json(table: list[FailingRows]) -> list[dict[str, Any]]:
    """The failing-row table as the report's ``abstention_vs_fabrication`` list."""
    return [{**asdict(t), "items_reached": list(t.items_reached)} for t in table]


def figure(x: float) -> float | None:
    """An agreement figure as the report gives it: four decimals, None when undefined (NaN)."""
    return None if math.isnan(x) else round(x, 4)


def flag_agreement_json(store: Store, sweep_id: str) -> dict[str, Any]:
    """The report's ``flag_agreement``: people's verdicts against the automatic class.

    Keys: ``reviewed`` (checks with a verdict), ``unsure`` (left out), ``n`` (compared),
    ``kappa``, ``observed`` and ``expected`` agreement (null when undefined), and ``table``
    (``{automatic, human, n}`` per non-empty cell; automatic is ``fabricated`` when the class
    is, else ``not_fabricated``).
    """
    return AgreementBasis.read(store, sweep_id, judged_only=True).json()


@dataclass
class AgreementBasis:
    """What the agreement is computed from, held by a review screen so that a new verdict
    updates it in memory instead of re-reading the sweep: the checks a person has judged or may
    judge (a review class), and each judged one's current verdict."""

    checks: dict[int, StoredCheck]
    human: dict[int, str]

    @classmethod
    def read(cls, store: Store, sweep_id: str, *, judged_only: bool = False) -> AgreementBasis:
        """Read the sweep's verdicts and the checks they (or a review) can concern.

        Args:
            judged_only: only the checks that have a verdict now (what the agreement reads;
                a review screen also holds the ones a person may judge next).
        """
        human = {cid: v.verdict for cid, v in store.verdicts(sweep_id).items()}
        classes = () if judged_only else REVIEW_CLASSES
        checks = {c.id: c for c in store.review_checks(sweep_id, classes)
                  if c.id in human or c.classification in classes}
        return cls(checks, human)

    def with_verdict(self, check_id: int, verdict: HumanVerdict | None) -> AgreementBasis:
        """The basis after a check's verdict became ``verdict`` (None: it has none)."""
        human = dict(self.human)
        if verdict is None:
            human.pop(check_id, None)
        else:
            human[check_id] = verdict.verdict
        return AgreementBasis(self.checks, human)

    def agreement(self) -> FlagAgreement:
        """People's verdicts against the automatic class, typed (``core.fabrication``)."""
        judged = [(self.checks[cid], self.human[cid]) for cid in sorted(self.human)
                  if cid in self.checks]
        return flag_agreement(judged)

    def json(self) -> dict[str, Any]:
        """The report's ``flag_agreement`` (see :func:`flag_agreement_json`)."""
        agreement = self.agreement()
        k = agreement.kappa
        return {"reviewed": agreement.reviewed, "unsure": agreement.unsure, "n": k.n,
                "kappa": figure(k.kappa), "observed": figure(k.observed),
                "expected": figure(k.expected),
                "table": [{"automatic": a, "human": h, "n": n} for a, h, n in k.table]}
