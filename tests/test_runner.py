"""The sweep runner end to end: scenario -> folds -> simulated models -> SQLite -> report."""

import asyncio

import pytest
from conftest import definition, run_sweep

from foldscope.engine.events import RowDone, RowStarted
from foldscope.engine.launch import prepare_sweep
from foldscope.engine.report import sweep_report
from foldscope.engine.runner import SweepRunner
from foldscope.engine.sim.transport import SimTransport
from foldscope.engine.store import Store


def _cells(db, sweep_id):
    store = Store(db, readonly=True)
    try:
        return {(c["model"], c["arm"]): c for c in sweep_report(store, sweep_id)["cells"]}
    finally:
        store.close()


def test_plan_is_stored_before_the_first_call(db):
    prepared = prepare_sweep(db, definition(repeats=3), "test")
    store = Store(db)
    rows = store.rows(prepared.sweep_id)
    assert len(rows) == 2 * 3 * 3 and all(r.status == "planned" for r in rows)
    assert [r.position for r in rows] == list(range(len(rows)))
    # Latin square: within each repeat's block of arms, each arm leads once across repeats.
    leads = [rows[i].arm for i in range(0, len(rows), 6)]
    assert sorted(leads) == ["j", "m", "q"]


def test_faithful_keeps_everything_and_describer_loses_under_j(db):
    sweep_id = run_sweep(db, definition())
    cells = _cells(db, sweep_id)
    assert all(c["valid_rows"] == c["rows"] == 1 for c in cells.values())
    for arm in "jqm":
        assert cells[("sim/faithful", arm)]["mean_recall"] == 1.0
    assert cells[("sim/describer", "j")]["mean_recall"] < 0.5
    assert cells[("sim/describer", "q")]["mean_recall"] >= 0.8
    assert cells[("sim/describer", "m")]["mean_recall"] >= 0.8


def test_every_fold_is_committed_with_its_measurements(db):
    sweep_id = run_sweep(db, definition(models=("sim/faithful",), arms=("q",)))
    store = Store(db, readonly=True)
    row = store.rows(sweep_id)[0]
    folds = store.folds(row.id)
    assert len(folds) == 3 and [f.fold_index for f in folds] == [0, 1, 2]
    assert all(f.simulated == 1 and f.finish_reason == "stop" for f in folds)
    assert folds[-1].headings_carried == 5
    assert set(folds[-1].fact_status.values()) == {"present"}
    assert len(store.checks(row.id)) == 6


def test_rerun_of_a_finished_sweep_does_nothing(db):
    data = definition(models=("sim/faithful",), arms=("j",))
    first = prepare_sweep(db, data, "test")
    asyncio.run(SweepRunner(db, first.sweep_id, latency_scale=0.0).run())
    again = prepare_sweep(db, data, "test")
    assert again.resumed and again.sweep_id == first.sweep_id
    runner = SweepRunner(db, again.sweep_id, latency_scale=0.0)
    asyncio.run(runner.run())
    assert runner.totals.folds == 0
    assert len(Store(db).rows(first.sweep_id)) == 1


def test_resume_continues_from_the_last_committed_fold(db):
    prepared = prepare_sweep(db, definition(models=("sim/faithful",), arms=("j",)), "test")

    class Crash(Exception):
        pass

    class CrashingTransport(SimTransport):
        """The in-process simulator, until the process 'dies' during the second call."""

        calls = 0

        async def handle_async_request(self, request):
            if request.method == "POST":  # a fold (a listing may come first)
                self.calls += 1
                if self.calls == 2:
                    raise Crash
            return await super().handle_async_request(request)

    runner = SweepRunner(db, prepared.sweep_id, transport=CrashingTransport(latency_scale=0.0))
    with pytest.raises(Crash):
        asyncio.run(runner.run())
    store = Store(db)
    row = store.rows(prepared.sweep_id)[0]
    assert row.status == "running" and row.folds_done == 1  # the fold before the crash is in
    resumed = SweepRunner(db, prepared.sweep_id, latency_scale=0.0)
    asyncio.run(resumed.run())
    row = store.rows(prepared.sweep_id)[0]
    assert row.status == "done" and row.folds_done == 3
    assert resumed.totals.folds == 2


def test_several_scenarios_are_never_pooled(db):
    data = definition(models=("sim/faithful",), arms=("j",))
    data["sweep"]["scenarios"] = ["smoke", "kestrel-single"]
    sweep_id = run_sweep(db, data)
    store = Store(db, readonly=True)
    report = sweep_report(store, sweep_id)
    assert report["scenarios"] == ["smoke", "kestrel-single"]
    assert sorted((c["scenario"], c["rows"]) for c in report["cells"]) == [
        ("kestrel-single", 1), ("smoke", 1)]


def test_rows_of_one_model_and_repeat_run_one_after_another_in_planned_order(db):
    prepared = prepare_sweep(db, definition(arms=("j", "q", "m"), repeats=3, mode="sequential"),
                             "test")
    events = []
    asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=0.0,
                            on_event=events.append).run())
    store = Store(db)
    rows = {r.id: r for r in store.rows(prepared.sweep_id)}
    by_sequence = {}
    for event in events:
        if isinstance(event, (RowStarted, RowDone)):
            row = rows[event.row]
            by_sequence.setdefault((row.model, row.repeat), []).append(
                (event.kind, row.position))
    assert len(by_sequence) == 6
    for trail in by_sequence.values():
        # started, done, started, done, ... with positions increasing: never two at once.
        assert [kind for kind, _ in trail] == ["row_started", "row_done"] * 3
        positions = [pos for kind, pos in trail if kind == "row_started"]
        assert positions == sorted(positions)


SLOW = ({"id": "sim/faithful", "faults": {"latency_s": 0.02, "latency_jitter": 0.0}},
        {"id": "sim/describer", "faults": {"latency_s": 0.02, "latency_jitter": 0.0}})
"""Models whose calls take a moment, so rows that run side by side are seen to overlap."""


def _run_with_events(db, data):
    prepared = prepare_sweep(db, data, "test")
    events = []
    asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=1.0,
                            on_event=events.append).run())
    return prepared, events


def _trails(db, prepared, events):
    rows = {r.id: r for r in Store(db).rows(prepared.sweep_id)}
    return rows, [(e.kind, rows[e.row]) for e in events if isinstance(e, (RowStarted, RowDone))]


def test_blocked_mode_starts_all_arms_of_a_model_and_repeat_together_in_design_order(db):
    # Concurrency 3 = one block at a time: a block's three arms start before any of it ends,
    # and blocks start in the order the design planned them.
    data = definition(models=SLOW, arms=("j", "q", "m"), repeats=2, concurrency=3)
    assert "mode" not in data["sweep"]  # blocked is the default
    prepared, events = _run_with_events(db, data)
    rows, trail = _trails(db, prepared, events)
    started = next(e for e in events if e.kind == "sweep_started")
    assert started.mode == "blocked" and started.units == len(rows) == 12
    starts = [row for kind, row in trail if kind == "row_started"]
    blocks = [(r.model, r.repeat) for r in starts]
    # Each block's three rows start one after another ...
    assert blocks == [blocks[i - i % 3] for i in range(len(blocks))]
    # ... all of them before any row of it ends ...
    assert [kind for kind, _ in trail[:3]] == ["row_started"] * 3
    # ... and blocks start in the order of their first planned row.
    first_position = {}
    for row in sorted(rows.values(), key=lambda r: r.position):
        first_position.setdefault((row.model, row.repeat), row.position)
    assert list(dict.fromkeys(blocks)) == sorted(first_position, key=first_position.get)


def test_free_mode_runs_rows_in_plan_order_up_to_the_limit(db):
    data = definition(models=SLOW, arms=("j", "q"), repeats=2, concurrency=8, mode="free")
    prepared, events = _run_with_events(db, data)
    rows, trail = _trails(db, prepared, events)
    starts = [row.position for kind, row in trail if kind == "row_started"]
    assert starts == sorted(starts) and len(starts) == len(rows) == 8
    # All eight rows (more than one per model x repeat) are in flight before any ends.
    assert [kind for kind, _ in trail[:8]] == ["row_started"] * 8
    report = sweep_report(Store(db, readonly=True), prepared.sweep_id)
    assert report["mode"] == "free"


def test_a_sweep_stored_before_modes_resumes_sequentially(db):
    from foldscope.engine.sweep import stored_mode

    assert stored_mode({"sweep": {"arms": ["j"]}}) == "sequential"


def test_a_run_raises_the_collectors_young_threshold_only_when_nobody_tuned_it():
    import gc

    from foldscope.engine.runner import (
        DEFAULT_GC_THRESHOLD,
        RUN_GC_THRESHOLD,
        _collector_for_a_run,
    )

    before = gc.get_threshold()
    try:
        gc.set_threshold(*DEFAULT_GC_THRESHOLD)
        with _collector_for_a_run():
            assert gc.get_threshold() == (RUN_GC_THRESHOLD, *DEFAULT_GC_THRESHOLD[1:])
            with _collector_for_a_run():  # a second run in the same process leaves it be
                assert gc.get_threshold()[0] == RUN_GC_THRESHOLD
            assert gc.get_threshold()[0] == RUN_GC_THRESHOLD
        assert gc.get_threshold() == DEFAULT_GC_THRESHOLD
        gc.set_threshold(1234, 5, 6)  # someone else's tuning: left as it is
        with _collector_for_a_run():
            assert gc.get_threshold() == (1234, 5, 6)
        assert gc.get_threshold() == (1234, 5, 6)
    finally:
        gc.set_threshold(*before)
