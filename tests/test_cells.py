"""One cell, one selection: the grid's tallies, the evidence package's aggregates and the study's
cells agree with ``core.cells`` on which rows a cell holds and which of them count."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core import evidence
from foldscope.core.cells import CellKey, cell_key, enters_aggregates, group_cells, valid_rows
from foldscope.core.metrics import cell_metric
from foldscope.core.row import RowRecord
from foldscope.core.stats import row_mean
from foldscope.core.study import StudyRow, study_tables
from foldscope.core.tally import NO_CHECKS, Tallies

STATES = [  # (status, valid, reason)
    ("done", True, "ok"), ("done", False, "catch_up_distributed"), ("done", False, "no_answer"),
    ("failed", False, "failed"), ("failed", False, "infra_fault"), ("running", None, None),
    ("planned", None, None)]

rows_strategy = st.lists(
    st.tuples(st.sampled_from(["s1", "s2"]), st.sampled_from(["m1", "m2"]),
              st.sampled_from(["j", "q"]), st.sampled_from(range(len(STATES))),
              st.sampled_from([0.0, 0.25, 0.5, 1.0])),
    max_size=40)


def _rows(spec) -> list[RowRecord]:
    out = []
    for i, (scenario, model, arm, state, recall) in enumerate(spec):
        status, valid, reason = STATES[state]
        out.append(RowRecord(id=i + 1, position=i, scenario=scenario, model=model, arm=arm,
                             repeat=i, status=status, valid=valid, validity_reason=reason,
                             recall=recall if status == "done" else None))
    return out


def test_group_cells_keeps_first_seen_order_and_never_pools_scenarios():
    rows = _rows([("s2", "m", "j", 0, 1.0), ("s1", "m", "j", 0, 1.0), ("s2", "m", "j", 3, 0.0)])
    grouped = group_cells(rows, cell_key)
    assert list(grouped) == [CellKey("s2", "m", "j"), CellKey("s1", "m", "j")]
    assert [r.id for r in grouped[CellKey("s2", "m", "j")]] == [1, 3]
    assert CellKey("s1", "m", "j") == ("s1", "m", "j")  # a tuple: sorts and unpacks as one


@settings(max_examples=60)
@given(rows_strategy)
def test_the_grid_the_package_and_the_selection_agree(spec):
    rows = _rows(spec)
    cells = group_cells(rows, cell_key)
    tallies = Tallies()
    for row in rows:
        tallies.update(row, NO_CHECKS)
    by_key = {CellKey(t.scenario, t.model, t.arm): t for t in tallies.cells()}
    assert list(by_key) == list(cells)
    package_rows = [evidence.RowRecord(str(r.id), "sw", r.scenario, r.model, r.arm, r.repeat,
                                       bool(r.valid), r.validity_reason or "incomplete",
                                       r.recall, None, None) for r in rows]
    package = {(a["scenario"], a["model"], a["arm"]): a
               for a in evidence.aggregates(package_rows, {})}
    for key, group in cells.items():
        chosen = valid_rows(group)
        assert all(r.status == "done" and r.valid for r in chosen)
        assert [r for r in group if enters_aggregates(r)] == chosen
        tally = by_key[key]
        recalls = [r.recall for r in chosen if r.recall is not None]
        assert tally.valid_rows == len(chosen) and tally.recall_rows == len(recalls)
        # One interval for mean recall: the grid's (from running sums) is the package's.
        shown = cell_metric("recall", tally)
        expected = row_mean(recalls)
        if recalls:
            assert math.isclose(shown.value or 0.0, expected.mean, abs_tol=1e-12)
        if shown.ci is not None:
            assert all(math.isclose(a, b, abs_tol=1e-9) for a, b in zip(shown.ci, expected.ci))
        assert package[key]["valid_rows"] == str(len(chosen))


def test_study_tables_refuse_rows_of_two_scenarios():
    rows = [StudyRow(r) for r in _rows([("s1", "m", "j", 0, 1.0), ("s2", "m", "j", 0, 1.0)])]
    with pytest.raises(ValueError, match="one scenario"):
        study_tables(rows, ["m"], ["j"])
