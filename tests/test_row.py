"""A row folded through, graded and judged in core alone: no store, no client."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.arms import get_arm
from foldscope.core.row import (
    FoldCursor,
    FoldRecord,
    FoldTally,
    RowRecord,
    ScenarioInputs,
    advance,
    failure_verdict,
    grade_checks,
    grade_row,
    next_fold,
    stored_verdict,
)
from foldscope.core.validity import (
    CATCH_UP_DISTRIBUTED,
    FAILED,
    INCOMPLETE,
    INFRA_FAULT,
    OK,
    REASONS,
    REQUEST_REJECTED,
    Validity,
)
from foldscope.engine.loader import load_scenario


@dataclass(frozen=True)
class Reply:
    """A canned model reply (the fields a fold reads)."""

    content: str
    finish_reason: str = "stop"
    prompt_tokens: int | None = 100
    completion_tokens: int | None = 20
    latency_s: float = 0.0
    cost_usd: float | None = None
    attempts: int = 1
    simulated: bool = True
    truncated: bool = False


SMOKE = ScenarioInputs.of(load_scenario("smoke"))
ARM = get_arm("m")


def _fact_lines(inputs: ScenarioInputs, upto: int) -> str:
    """A faithful carrier: every fact planted in chunks 0..upto, one line each."""
    facts = [f for f in inputs.scenario.facts if f.chunk <= upto]
    return "## Facts and values\n" + "\n".join(f"- {f.label}: {f.value}" for f in facts)


def fold_through(inputs: ScenarioInputs, replies) -> tuple[FoldCursor, list[FoldRecord]]:
    """Fold a whole row with ``replies(step)`` standing in for the model."""
    cursor, records = FoldCursor(), []
    while not cursor.finished(len(inputs.scenario.chunks)):
        step = next_fold(cursor, inputs, ARM)
        cursor, record = advance(cursor, step, inputs, ARM, replies(step), cached=False,
                                 created_at=0.0)
        if record is not None:
            records.append(record)
    return cursor, records


def test_a_faithful_row_folds_every_chunk_and_grades_ok():
    cursor, records = fold_through(SMOKE, lambda step: Reply(_fact_lines(SMOKE, step.last_chunk)))
    assert [(r.fold_index, r.first_chunk, r.last_chunk) for r in records] == [
        (0, 0, 0), (1, 1, 1), (2, 2, 2)]
    assert not any(r.catch_up for r in records)
    # Each fold's fact states: facts of chunks folded so far are present.
    for r in records:
        for fact in SMOKE.scenario.facts:
            expected = "present" if fact.chunk <= r.last_chunk else "not_yet"
            assert r.fact_status[fact.label] == expected
    answer = "\n".join(f"{f.label}: {f.value}" for f in SMOKE.scenario.graded)
    result = grade_row(answer, cursor.carrier, SMOKE.scenario, FoldTally.of(records))
    assert result.verdict == Validity(True, OK, False)
    assert result.recall == 1.0 and result.correct == result.graded == len(SMOKE.scenario.graded)
    assert all(c.in_carrier and c.classification == "correct" for c in result.checks)


def test_an_empty_reply_is_caught_up_with_the_next_chunk_and_invalidates_a_distributed_row():
    def replies(step):
        return Reply("   " if step.last_chunk == 0 else _fact_lines(SMOKE, step.last_chunk))

    cursor, records = fold_through(SMOKE, replies)
    assert [(r.fold_index, r.first_chunk, r.last_chunk, r.catch_up) for r in records] == [
        (0, 0, 1, True), (1, 2, 2, False)]
    result = grade_row("", cursor.carrier, SMOKE.scenario, FoldTally.of(records))
    assert result.verdict == Validity(False, CATCH_UP_DISTRIBUTED, False)


def test_catch_up_is_allowed_when_facts_arrive_in_one_chunk():
    single = ScenarioInputs.of(load_scenario("kestrel-single"))
    cursor, records = fold_through(
        single, lambda step: Reply("" if step.last_chunk == 0 else _fact_lines(single, 1)))
    assert records[0].catch_up
    assert grade_row("", cursor.carrier, single.scenario, FoldTally.of(records)).verdict.valid


def test_an_empty_reply_on_the_last_chunk_is_committed_as_it_is():
    last = len(SMOKE.scenario.chunks) - 1
    _, records = fold_through(
        SMOKE, lambda step: Reply("" if step.last_chunk == last else _fact_lines(SMOKE, last)))
    assert records[-1].last_chunk == last and records[-1].carrier == ""
    assert not records[-1].catch_up


def test_resuming_from_the_last_record_continues_where_the_row_stood():
    cursor = FoldCursor()
    step = next_fold(cursor, SMOKE, ARM)
    cursor, record = advance(cursor, step, SMOKE, ARM, Reply(_fact_lines(SMOKE, 0)),
                             cached=False, created_at=0.0)
    assert FoldCursor.resume(record, cursor.histories) == cursor
    assert FoldCursor.resume(None) == FoldCursor()
    # The facts' courses travel with the cursor: the fold that read chunk 0 planted its facts.
    planted = {h.label: h.planted_fold for h in cursor.histories}
    assert all(planted[f.label] == (0 if f.chunk == 0 else None) for f in SMOKE.scenario.facts)


def test_arm_behaviour_is_tallied_but_never_changes_the_verdict():
    _, records = fold_through(SMOKE, lambda step: Reply("cut off", finish_reason="length",
                                                        completion_tokens=step.spec.max_tokens))
    tally = FoldTally.of(records)
    assert tally.length_stops == 3 and tally.folds == 3
    assert grade_row("nothing", "cut off", SMOKE.scenario, tally).verdict.valid


@settings(max_examples=40)
@given(st.lists(st.booleans(), min_size=3, max_size=3))
def test_folds_partition_the_chunks_whatever_replies_are_empty(empty):
    cursor, records = fold_through(
        SMOKE, lambda step: Reply("" if empty[step.last_chunk] else "carried"))
    covered = [i for r in records for i in range(r.first_chunk, r.last_chunk + 1)]
    assert covered == list(range(len(SMOKE.scenario.chunks)))
    assert [r.fold_index for r in records] == list(range(len(records)))
    assert all(r.catch_up == (r.last_chunk > r.first_chunk) for r in records)
    assert cursor.fold_index == len(records)


def test_bare_answers_grade_without_a_carrier():
    checks = grade_checks("ledger service port: 62114", SMOKE.scenario.graded)
    assert checks[0].correct and checks[0].in_carrier is None
    assert all(c.classification != "fabricated" for c in checks)


def test_failed_rows_get_a_reason_core_knows():
    assert failure_verdict(infra=True, error="timeout") == Validity(False, INFRA_FAULT, True)
    rejected = failure_verdict(infra=False, error="fold 0: http 400")
    assert rejected == Validity(False, REQUEST_REJECTED, False)
    assert rejected.reason in REASONS


@pytest.mark.parametrize("status", ["planned", "running"])
def test_unfinished_rows_read_incomplete_whatever_is_stored(status):
    assert stored_verdict(status, True, OK, False) == Validity(False, INCOMPLETE, False)


def test_stored_verdicts_are_read_back_and_unknown_codes_never_count():
    row = RowRecord(id=1, position=0, scenario="smoke", model="m", arm="j", repeat=0,
                    status="done", valid=True, validity_reason=OK)
    assert row.verdict == Validity(True, OK, False)
    assert stored_verdict("done", True, "made_up", False) == Validity(False, FAILED, False)
