"""An answer that gave nothing is no abstention: every per-class count keeps it apart.

The grid's answers view, the report's cells and the study's class tables all count through
``core.fabrication.counted_as``; ``honest_abstention`` there counts abstentions only and
``no_answer`` the answers that gave nothing for a value the carrier lost.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.answers import ANSWER_CLASSES, NOTHING, READ_FAILURE_KINDS
from foldscope.core.fabrication import (
    ANSWER_COUNTS,
    NO_ANSWER,
    abstains,
    answer_counts,
    counted_as,
    gave_no_answer,
    is_abstention,
)
from foldscope.core.row import Check, RowRecord
from foldscope.core.study import StudyRow, study_tables
from foldscope.core.tally import CellTally, Tallies, row_classes
from foldscope.core.validity import OK
from foldscope.ui.widgets.sweep_grid import CELL_WIDTH, answers_parts

DETAILS = (None, NOTHING, "abstained", "other_value", "fold 0")


def _check(cls: str, detail: str | None, state: str = "missing") -> Check:
    return Check("port", "62114", None if detail == NOTHING else "x", cls == "correct",
                 is_abstention(cls, detail), False, state == "present", cls, state, detail)


KINDS = st.sampled_from([(c, d) for c in ANSWER_CLASSES for d in DETAILS])


def test_the_counts_are_the_classes_with_no_answer_beside_honest_abstention():
    assert set(ANSWER_COUNTS) == {*ANSWER_CLASSES, NO_ANSWER}
    assert ANSWER_COUNTS.index(NO_ANSWER) == ANSWER_COUNTS.index("honest_abstention") + 1
    assert NOTHING in READ_FAILURE_KINDS


def test_nothing_is_no_answer_and_no_abstention_whatever_the_carrier_held():
    assert counted_as("honest_abstention", NOTHING) == NO_ANSWER
    assert counted_as("honest_abstention", None) == "honest_abstention"
    assert not is_abstention("honest_abstention", NOTHING)
    assert is_abstention("honest_abstention", None)
    # The carrier held it: a read failure, never an abstention, whatever the answer gave.
    assert counted_as("read_failure", NOTHING) == "read_failure"
    assert gave_no_answer("read_failure", NOTHING) and not is_abstention("read_failure", NOTHING)
    assert is_abstention("read_failure", "abstained")
    assert not is_abstention("fabricated", None) and not gave_no_answer("fabricated", NOTHING)


@settings(max_examples=60)
@given(st.lists(KINDS, max_size=40))
def test_counts_partition_the_checks_and_no_answer_is_never_an_abstention(kinds):
    checks = [_check(c, d) for c, d in kinds]
    counts = answer_counts(checks)
    assert set(counts) == set(ANSWER_COUNTS) and sum(counts.values()) == len(checks)
    assert counts[NO_ANSWER] == sum(c == "honest_abstention" and d == NOTHING for c, d in kinds)
    assert counts["honest_abstention"] == sum(
        c == "honest_abstention" and d != NOTHING for c, d in kinds)
    assert all(not abstains(ch) for ch in checks if ch.class_detail == NOTHING)
    # The store path (grouped by class and detail) counts the same.
    groups = Counter((ch.classification, ch.class_detail) for ch in checks)
    classes = row_classes((c, d, n, 0, 0) for (c, d), n in groups.items())
    assert dict(zip(ANSWER_COUNTS, classes.counts)) == counts
    assert classes.checks == len(checks)


def _row(i: int) -> RowRecord:
    return RowRecord(id=i, position=i, scenario="s", model="m", arm="j", repeat=i,
                     status="done", valid=True, validity_reason=OK, recall=0.0)


def test_a_model_that_never_says_unknown_shows_no_abstention_in_the_grid():
    silent = [_check("honest_abstention", NOTHING)] * 4
    groups = Counter((c.classification, c.class_detail) for c in silent)
    live = Tallies()
    live.update(_row(1), row_classes((c, d, n, 0, 0) for (c, d), n in groups.items()))
    cell = live.cells()[0]
    assert cell.answers("honest_abstention") == 0 and cell.answers(NO_ANSWER) == 4
    text = "".join(t for t, _ in answers_parts(cell, running=False))
    assert text.startswith("A 0 N 4")


def test_the_study_tables_count_no_answer_apart_from_abstentions():
    checks = (_check("honest_abstention", NOTHING), _check("honest_abstention", NOTHING),
              _check("honest_abstention", None), _check("read_failure", NOTHING, "present"))
    rows = [StudyRow(_row(1), checks=checks)]
    study = study_tables(rows, ["m"], ["j"])
    [got] = study.table("answer_classes").records()
    assert (got["honest_abstention"], got[NO_ANSWER], got["read_failure"]) == (1, 2, 1)
    by_state = {r["carrier"]: r for r in study.table("carrier_answer").records()}
    assert by_state["missing"][NO_ANSWER] == 2 and by_state["missing"]["honest_abstention"] == 1
    assert by_state["missing"]["total"] == 3 and by_state["present"]["read_failure"] == 1


@settings(max_examples=40)
@given(st.lists(st.integers(0, 99), min_size=len(ANSWER_COUNTS), max_size=len(ANSWER_COUNTS)),
       st.integers(0, 99))
def test_the_answers_view_fits_a_grid_cell_with_flags_and_the_running_mark(counts, flagged):
    cell = CellTally("s", "m", "j", checks=sum(counts) + 1, flagged=flagged, running_rows=1,
                     class_counts=tuple(counts))
    text = "".join(t for t, _ in answers_parts(cell, running=True))
    assert len(text) <= CELL_WIDTH
    assert f"N{cell.answers(NO_ANSWER):>2}" in text
    assert f"A{cell.answers('honest_abstention'):>2}" in text
