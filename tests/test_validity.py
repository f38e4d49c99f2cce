"""Tests for the single row-validity rule."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from foldscope.core.validity import (
    CATCH_UP_DISTRIBUTED,
    FAILED,
    INCOMPLETE,
    INFRA_FAULT,
    NO_ANSWER,
    OK,
    REASONS,
    RowFacts,
    Validity,
    aggregate_filter,
    row_validity,
    validity_counts,
)

DONE = RowFacts(status="done", answered=True)


def test_clean_row_is_valid():
    assert row_validity(DONE) == Validity(True, OK, False)


def test_arm_behaviour_never_invalidates_or_retries():
    row = RowFacts(status="done", answered=True, parse_failures=4, length_stops=2)
    assert row_validity(row) == Validity(True, OK, False)


@pytest.mark.parametrize("status", ["planned", "running"])
def test_unfinished_rows_are_incomplete(status):
    assert row_validity(RowFacts(status=status)) == Validity(False, INCOMPLETE, False)


@pytest.mark.parametrize("status", ["done", "failed"])
def test_infra_fault_is_invalid_and_retryable(status):
    row = RowFacts(status=status, infra_error="http 503 after 5 retries", answered=True)
    assert row_validity(row) == Validity(False, INFRA_FAULT, True)


def test_infra_fault_wins_over_arm_behaviour():
    row = RowFacts(status="failed", infra_error="timeout", parse_failures=3, length_stops=1)
    assert row_validity(row).retryable


def test_unexplained_failure_is_not_retried():
    assert row_validity(RowFacts(status="failed")) == Validity(False, FAILED, False)


def test_catch_up_is_invalid_only_for_distributed_scenarios():
    distributed = RowFacts(status="done", answered=True, catch_up=True, scenario_distributed=True)
    single = RowFacts(status="done", answered=True, catch_up=True, scenario_distributed=False)
    assert row_validity(distributed) == Validity(False, CATCH_UP_DISTRIBUTED, False)
    assert row_validity(single) == Validity(True, OK, False)


def test_missing_answer():
    assert row_validity(RowFacts(status="done")) == Validity(False, NO_ANSWER, False)


def test_only_infra_faults_are_retryable():
    rows = [RowFacts(status=s, infra_error=e, catch_up=c, answered=a, parse_failures=p)
            for s in ("planned", "running", "done", "failed") for e in (None, "timeout")
            for c in (False, True) for a in (False, True) for p in (0, 2)]
    for row in rows:
        verdict = row_validity(row)
        assert verdict.reason in REASONS
        assert verdict.retryable == (verdict.reason == INFRA_FAULT)
        assert verdict.valid == (verdict.reason == OK)


def test_bad_row_facts_raise():
    with pytest.raises(ValueError):
        RowFacts(status="finished")
    with pytest.raises(ValueError):
        RowFacts(status="done", parse_failures=-1)


@dataclass
class StoredRow:
    row_id: int
    facts: RowFacts


def test_aggregate_filter_and_counts():
    rows = [
        StoredRow(1, DONE),
        StoredRow(2, RowFacts(status="done", answered=True, length_stops=3)),
        StoredRow(3, RowFacts(status="failed", infra_error="timeout")),
        StoredRow(4, RowFacts(status="running")),
    ]
    kept = aggregate_filter(rows, lambda r: r.facts)
    assert [r.row_id for r in kept] == [1, 2]
    assert validity_counts(rows, lambda r: r.facts) == {OK: 2, INFRA_FAULT: 1, INCOMPLETE: 1}
    assert aggregate_filter([r.facts for r in rows]) == [DONE, rows[1].facts]
    with pytest.raises(TypeError):
        aggregate_filter(rows)


def test_a_rejected_request_is_its_own_reason():
    from foldscope.core.validity import REQUEST_REJECTED

    row = RowFacts(status="failed", rejected=True)
    assert row_validity(row) == Validity(False, REQUEST_REJECTED, False)


def test_filters_take_stored_verdicts_as_they_are():
    stored = [Validity(True, OK, False), Validity(False, INFRA_FAULT, True)]
    assert aggregate_filter(stored, lambda v: v) == stored[:1]
    assert validity_counts(stored, lambda v: v) == {OK: 1, INFRA_FAULT: 1}
