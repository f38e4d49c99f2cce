"""The sweep screen's header, endpoint lines, event log and pins panel, and pausing, resuming
and cancelling from the TUI (through the database, as for a run in another process)."""

import pytest
from conftest import definition, fresh_poll, run_sweep, wait_until
from textual.widgets import DataTable, Select

from foldscope.engine.launch import prepare_sweep
from foldscope.engine.store import Store
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.commands import all_commands
from foldscope.ui.widgets.endpoint_lines import EndpointLines
from foldscope.ui.widgets.event_log import EventLog
from foldscope.ui.widgets.pins_panel import PinsPanel
from foldscope.ui.widgets.run_header import RunHeader


def _text(widget):
    return str(widget.render())


@pytest.fixture
def stormy(tmp_path):
    """A finished sweep whose describer met 429s (and so retries and limiter cuts)."""
    db = tmp_path / "storm.sqlite"
    faults = {"rate_429": 0.3, "retry_after_s": 0.0}
    sweep_id = run_sweep(db, definition(models=({"id": "sim/describer", "faults": faults},
                                                "sim/faithful"), arms=("j", "q"), repeats=2))
    return db, sweep_id


async def test_header_endpoints_log_and_pins_show_the_run(stormy):
    db, sweep_id = stormy
    with Store(db, readonly=True) as store:
        logged = store.events(sweep_id)
    retries = [e for e in logged if e.kind == "retry"]
    assert retries and all(e.model == "sim/describer" for e in retries)
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.pause()
        await fresh_poll(app, pilot)
        screen = app.screen
        header = _text(screen.query_one(RunHeader))
        assert "models sim/describer, sim/faithful" in header and "arms j q" in header
        assert "2 repeats" in header and "blocked mode" in header
        assert "done · elapsed" in header and "ETA —" in header and "folds/s" in header
        assert "0 invalid rows" in header and "retries " in header and "$0.0000" in header
        lines = _text(screen.query_one(EndpointLines))
        assert "sim:sim/describer  in flight 0/" in lines and "in the last minute" in lines

        log = screen.query_one(EventLog)
        table = log.query_one(DataTable)
        assert table.row_count == len(logged)
        log.query_one("#event-kind", Select).value = "retry"
        await wait_until(pilot, lambda: table.row_count == len(retries), "the kind filter")
        log.query_one("#event-model", Select).value = "sim/faithful"
        await wait_until(pilot, lambda: table.row_count == 0, "the model filter")
        log.query_one("#event-kind", Select).value = Select.NULL
        await wait_until(pilot, lambda: table.row_count == len(
            [e for e in logged if e.model == "sim/faithful"]), "clearing the kind filter")

        pins = screen.query_one(PinsPanel)
        assert not pins.display
        await pilot.press("i")
        assert pins.display and pins.row_count == 2
        await pilot.press("e")
        assert not log.display
        titles = {c.title for c in all_commands(screen)}
        assert {"Pause/resume", "Cancel sweep", "Event log", "Model pins"} <= titles


async def test_pause_resume_and_cancel_from_the_tui(tmp_path):
    db = tmp_path / "live.sqlite"
    slow = {"latency_s": 0.05}
    prepared = prepare_sweep(db, definition(models=({"id": "sim/faithful", "faults": slow},),
                                            arms=("j", "q", "m"), repeats=4, concurrency=1),
                             "test")

    def status():
        with Store(db, readonly=True) as store:
            sweep = store.sweep(prepared.sweep_id)
            return store.live_status(sweep), sweep.stop_reason

    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_until(pilot, lambda: status()[0] == "running", "the run to start")
        await pilot.press("p")
        await wait_until(pilot, lambda: status()[0] == "paused", "the pause")
        await fresh_poll(app, pilot)
        assert _text(app.screen.query_one(RunHeader)).startswith(
            "sweep") and "paused" in _text(app.screen.query_one(RunHeader))
        await pilot.press("p")
        await wait_until(pilot, lambda: status()[0] == "running", "the resume")
        await pilot.press("C")
        await wait_until(pilot, lambda: status()[0] == "stopped", "the cancel")
        await app.workers.wait_for_complete()
        assert status()[1].startswith("cancel from the TUI")
        with Store(db, readonly=True) as store:
            kinds = [e.kind for e in store.events(prepared.sweep_id)]
        assert kinds.index("paused") < kinds.index("resumed") < kinds.index("sweep_finished")
