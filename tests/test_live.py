"""The live read path: only what changed is read, and running tallies equal a fresh count."""

from __future__ import annotations

import asyncio

import pytest
from conftest import definition, run_sweep
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.fabrication import ANSWER_COUNTS as ANSWER_CLASSES
from foldscope.core.fabrication import flag_refusal
from foldscope.core.row import RowRecord
from foldscope.core.tally import NO_CHECKS, RowClasses, Tallies
from foldscope.engine.launch import prepare_sweep
from foldscope.engine.live import LiveSweep
from foldscope.engine.report import sweep_report
from foldscope.engine.runner import SweepRunner
from foldscope.engine.store import Store


def test_live_cells_match_the_report_and_later_polls_read_only_changes(db):
    # The inventor gives wrong values, so a person has something a flag may be put on.
    data = definition(models=("sim/faithful", "sim/inventor"), arms=("j", "q"), repeats=2)
    prepared = prepare_sweep(db, data, "test")
    live = LiveSweep(db, prepared.sweep_id)
    first = live.poll()
    assert first.changed_rows == 8 and first.progress.planned == 8
    assert all(c.rows == 2 and c.valid_rows == 0 for c in first.cells)

    asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=0.0).run())
    view = live.poll()
    assert view.changed_rows == 8 and view.progress.done == 8 and view.progress.folds == 24
    with Store(db, readonly=True) as store:
        report = {(c["model"], c["arm"]): c for c in sweep_report(store, prepared.sweep_id)["cells"]}
    for cell in view.cells:
        expected = report[(cell.model, cell.arm)]
        assert (cell.rows, cell.valid_rows, cell.done_rows, cell.checks) == (
            expected["rows"], expected["valid_rows"], expected["done_rows"], expected["checks"])
        assert cell.mean_recall == pytest.approx(expected["mean_recall"])
        assert {name: cell.answers(name) for name in ANSWER_CLASSES} == {
            name: expected[name] for name in ANSWER_CLASSES}
    assert view.header.mode == "blocked" and view.header.arms == ("j", "q")

    again = live.poll()
    assert again.changed_rows == 0 and again.cells == view.cells

    with Store(db) as store:  # a person flags one wrong value: that row alone changes
        check = next(c for c in store.sweep_checks(prepared.sweep_id)
                     if flag_refusal(c, "fabricated") is None)
        store.set_flag(check.id, True)
    flagged = live.poll()
    assert flagged.changed_rows == 1 and sum(c.flagged for c in flagged.cells) == 1


STATES = st.sampled_from(["planned", "running", "done", "failed"])


@settings(max_examples=40)
@given(st.lists(st.tuples(st.integers(0, 5), STATES, st.booleans(),
                          st.floats(0, 1), st.integers(0, 3)), min_size=1, max_size=40))
def test_running_tallies_equal_a_fresh_count_after_any_updates(updates):
    live, latest = Tallies(), {}
    for row_id, status, valid, recall, fabricated in updates:
        row = RowRecord(id=row_id, position=row_id, scenario="s", model=f"m{row_id % 2}",
                        arm="j", repeat=row_id, status=status, valid=valid,
                        validity_reason="ok" if valid else "failed",
                        recall=recall if status == "done" else None, folds_done=row_id,
                        cost_usd=0.5 * row_id)
        classes = (RowClasses(3, 0, tuple(fabricated if c == "fabricated" else 0
                                          for c in ANSWER_CLASSES))
                   if status == "done" else NO_CHECKS)
        live.update(row, classes)
        latest[row_id] = (row, classes)
    fresh = Tallies()
    for row, classes in sorted(latest.values(), key=lambda rc: rc[0].position):
        fresh.update(row, classes)
    by_key = {(c.model, c.arm): c for c in fresh.cells()}
    for cell in live.cells():
        other = by_key[(cell.model, cell.arm)]
        assert (cell.rows, cell.valid_rows, cell.done_rows, cell.running_rows, cell.checks,
                cell.class_counts) == (other.rows, other.valid_rows, other.done_rows,
                                       other.running_rows, other.checks, other.class_counts)
        assert cell.recall_sum == pytest.approx(other.recall_sum, abs=1e-9)
    assert live.progress() == fresh.progress()


def test_live_cells_carry_the_grids_metric_sums(db):
    """Final carriers, parse failures and abstentions reach the tallies the metrics read."""
    from foldscope.core.metrics import cell_metric

    sweep_id = run_sweep(db, definition(models=("sim/faithful", "sim/gister"), arms=("j", "m"),
                                        repeats=2))
    view = LiveSweep(db, sweep_id).poll()
    with Store(db, readonly=True) as store:
        rows = store.rows(sweep_id)
        checks = list(store.sweep_checks(sweep_id))
        finals = {r.id: store.folds(r.id)[-1] for r in rows}
    for cell in view.cells:
        mine = [r for r in rows if (r.model, r.arm) == (cell.model, cell.arm) and r.verdict.valid]
        assert cell.headings_rows == len(mine)
        assert cell.headings_sum == sum(finals[r.id].headings_carried for r in mine)
        fills = [finals[r.id].fill_fraction for r in mine if finals[r.id].fill_fraction is not None]
        assert cell.fill_rows == len(fills) and abs(cell.fill_sum - sum(fills)) < 1e-9
        assert cell.folds == sum(r.folds_done for r in rows if (r.model, r.arm) == (cell.model, cell.arm))
        ids = {r.id for r in mine}
        assert cell.abstained == sum(c.abstained for c in checks if c.row_id in ids)
        recalls = [r.recall for r in mine]
        assert abs(cell.recall_sq_sum - sum(x * x for x in recalls)) < 1e-9
        assert cell_metric("headings", cell).value == cell.headings_sum / len(mine)
    j = [c for c in view.cells if c.arm == "j"]
    assert all(c.fill_rows for c in j)  # arm j declares a ceiling; m does not
    assert not any(c.fill_rows for c in view.cells if c.arm == "m")
