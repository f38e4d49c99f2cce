"""The TUI driven with Pilot: a tiny sweep runs in a child process (the product path; tests of
screens alone run it in a thread, in_process=True) and the grid fills."""

import os

from conftest import definition, fresh_poll, wait_group, wait_until

from foldscope.engine.launch import prepare_sweep
from foldscope.engine.procinfo import process_alive
from foldscope.engine.runner_process import RunnerProcess
from foldscope.engine.store import Store
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.messages import SweepFinished
from foldscope.ui.widgets.sweep_grid import SweepGrid


async def settle(app, pilot):
    """Wait for the sweep worker to end, then for one fresh poll of the store to land."""
    await wait_group(app, "sweep")
    await pilot.pause()
    await fresh_poll(app, pilot)


async def test_grid_fills_while_the_sweep_runs(tmp_path):
    db = tmp_path / "app.sqlite"
    prepared = prepare_sweep(db, definition(), "test")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True, latency_scale=0.0)
    finished = {}

    def hook(message):  # Textual may show one message to the hook more than once
        if isinstance(message, SweepFinished):
            finished[id(message)] = message

    async with app.run_test(size=(110, 30), message_hook=hook) as pilot:
        await settle(app, pilot)  # the sweep worker ends when every row is done
        grid = app.screen.query_one(SweepGrid)
        assert grid.row_count == 3 and len(grid.columns) == 3
        faithful_j = grid.get_cell("j", "sim/faithful").plain
        assert faithful_j.startswith(" 1.00") and "1/1" in faithful_j
        describer_j = grid.get_cell("j", "sim/describer").plain
        assert not describer_j.startswith(" 1.00")
        assert app.sweep_status == "done"
        assert [(m.sweep_id, m.status) for m in finished.values()] == [
            (prepared.sweep_id, "done")]
    store = Store(db, readonly=True)
    assert store.progress(prepared.sweep_id)["done"] == 6


async def test_quit_mid_sweep_leaves_a_consistent_database(tmp_path):
    db = tmp_path / "quit.sqlite"
    data = definition(scenario="kestrel", models=({"id": "sim/faithful",
                                                  "faults": {"latency_s": 0.5}},), arms=("j", "q"))
    prepared = prepare_sweep(db, data, "test")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True)
    async with app.run_test(size=(110, 30)) as pilot:
        # Quit once the sweep has committed a fold, so the quit lands mid-sweep.
        await wait_until(pilot, lambda: committed_folds(db, prepared.sweep_id) > 0,
                         "the first committed fold")
        child = app.runner  # the sweep runs in a child process, which holds the claim
        assert isinstance(child, RunnerProcess) and child.pid != os.getpid()
        with Store(db, readonly=True) as store:
            assert store.sweep(prepared.sweep_id).runner_pid == child.pid
        # Its own child is shown running, not as a sweep watched from elsewhere.
        await wait_until(pilot, lambda: str(app.screen.query_one("#run-header").render())
                         .split("\n")[1].startswith("running"), "the header to show the run")
        await pilot.press("ctrl+q")
    assert not process_alive(child.pid)  # stopped and reaped: no orphan runner
    store = Store(db)
    assert store.sweep(prepared.sweep_id).status == "stopped"
    assert not store.sweep(prepared.sweep_id).runner_pid
    for row in store.rows(prepared.sweep_id):
        folds = store.folds(row.id)
        assert row.folds_done == len(folds)
        assert [f.fold_index for f in folds] == list(range(len(folds)))
        assert row.status != "done" or store.checks(row.id)
    store.close()
    # Opened again, the TUI resumes the sweep where its committed folds end.
    again = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True, latency_scale=0.0)
    async with again.run_test(size=(110, 30)) as pilot:
        await settle(again, pilot)
        assert again.sweep_status == "done"


async def test_ctrl_q_does_not_wait_for_the_child_runner(tmp_path, monkeypatch):
    """The app goes at once on ctrl+q; the child runner asked to stop is waited for after the
    app's run (it records its stop on its own), and one that never answers is killed then."""
    import foldscope.ui.app as app_module

    db = tmp_path / "deaf.sqlite"
    data = definition(scenario="kestrel", models=({"id": "sim/faithful",
                                                  "faults": {"latency_s": 0.5}},), arms=("j",))
    prepared = prepare_sweep(db, data, "test")
    monkeypatch.setattr(app_module, "QUIT_GRACE_S", 0.5)
    monkeypatch.setattr(RunnerProcess, "cancel", lambda self, reason="": None)  # a deaf child
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True)
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_until(pilot, lambda: committed_folds(db, prepared.sweep_id) > 0,
                         "the first committed fold")
        child = app.runner
        assert isinstance(child, RunnerProcess)
        await pilot.press("ctrl+q")
        while app.is_running:
            await pilot.pause()
        assert process_alive(child.pid), "the app waited for its runner before going"
    assert not process_alive(child.pid)  # killed once the app had gone: no orphan
    with Store(db, readonly=True) as store:
        assert store.live_status(store.sweep(prepared.sweep_id)) == "interrupted"


async def test_unpinned_gateway_model_is_a_visible_warning(tmp_path):
    db = tmp_path / "warn.sqlite"
    prepared = prepare_sweep(db, definition(models=({"id": "sim/faithful", "pin": ""},),
                                            arms=("j",)), "test")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True, latency_scale=0.0,
                       in_process=True)  # screens, not the runner, are tested
    async with app.run_test(size=(110, 30)) as pilot:
        await settle(app, pilot)
        box = app.screen.query_one("#warnings")
        assert box.display and "no pin on a routing gateway" in str(box.render())



async def test_grid_has_a_row_per_scenario_and_arm_when_several(tmp_path):
    db = tmp_path / "multi.sqlite"
    data = definition(models=("sim/faithful",), arms=("j", "q"))
    data["sweep"]["scenarios"] = ["smoke", "kestrel-single"]
    prepared = prepare_sweep(db, data, "test")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True, latency_scale=0.0,
                       in_process=True)  # screens, not the runner, are tested
    async with app.run_test(size=(110, 30)) as pilot:
        await settle(app, pilot)
        grid = app.screen.query_one(SweepGrid)
        assert grid.row_count == 4
        assert "1/1" in grid.get_cell("kestrel-single q", "sim/faithful").plain


async def test_enter_on_a_cell_opens_its_rows_and_steps_folds(tmp_path):
    from textual.widgets import DataTable

    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.widgets.carrier_view import CarrierView

    db = tmp_path / "cell.sqlite"
    prepared = prepare_sweep(db, definition(arms=("j", "q")), "test")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True, latency_scale=0.0,
                       in_process=True)  # screens, not the runner, are tested
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        grid = app.screen.query_one(SweepGrid)
        grid.focus()
        grid.move_cursor(row=0, column=2)  # arm j × sim/describer
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CellScreen) and (screen.model, screen.arm) == ("sim/describer", "j")
        await wait_group(app, "cell-load")
        await pilot.pause()
        await wait_group(app, "fold-view")  # the fold's view is built in a worker
        await pilot.pause()
        assert screen.query_one("#rows", DataTable).row_count == 1
        facts = screen.query_one("#facts", DataTable)
        assert facts.row_count == 12 and screen.fold_index == 2  # smoke: 3 folds, last shown
        store = Store(db, readonly=True)
        row = next(r for r in store.rows(prepared.sweep_id)
                   if (r.model, r.arm) == ("sim/describer", "j"))
        folds = store.folds(row.id)
        # The carrier is shown exactly as carried (literally: no markup parsing).
        assert screen.query_one("#carrier", CarrierView).plain_lines == folds[2].carrier.split("\n")
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert screen.fold_index == 1
        await wait_group(app, "fold-view")
        await pilot.pause()
        assert screen.query_one("#carrier", CarrierView).plain_lines == folds[1].carrier.split("\n")
        # A later read of a finished cell reads nothing: only what changed is fetched.
        before = screen._data
        await screen.load().wait()
        await pilot.pause()
        assert screen._data is before  # no row came back, so nothing was merged or redrawn
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CellScreen)


async def test_flag_a_fabricated_answer_from_the_keyboard(tmp_path):
    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.widgets.answer_table import AnswerTable

    db = tmp_path / "flag.sqlite"
    prepared = prepare_sweep(db, definition(models=("sim/inventor",), arms=("j",)), "test")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True, latency_scale=0.0,
                       in_process=True)  # screens, not the runner, are tested
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        app.screen.query_one(SweepGrid).focus()
        await pilot.press("right", "enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CellScreen)
        await wait_group(app, "cell-load")
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        table = screen.query_one(AnswerTable)
        assert table.has_focus and table.row_count == 6
        classes = {str(table.get_cell(row.key, "class")) for row in table.ordered_rows}
        assert "fabricated" in classes  # the inventor answers lost facts with stock values
        await pilot.press("down", "f")
        await wait_until(pilot, lambda: screen.pending == 0, "the flag written")
        await pilot.pause()
        assert str(table.get_cell_at((1, 0))) == "⚑"
        assert "1 flagged by hand" in str(screen.query_one("#answer-title").render())
        assert sum(c["flagged"] for c in report_cells(db, prepared.sweep_id)) == 1
        await pilot.press("f")  # and off again
        await wait_until(pilot, lambda: screen.pending == 0, "the flag withdrawn")
    assert sum(c["flagged"] for c in report_cells(db, prepared.sweep_id)) == 0


def committed_folds(db, sweep_id) -> int:
    store = Store(db, readonly=True)
    try:
        return store.progress(sweep_id)["folds"]
    finally:
        store.close()


def report_cells(db, sweep_id):
    from foldscope.engine.report import cells

    store = Store(db, readonly=True)
    try:
        return cells(store, sweep_id)
    finally:
        store.close()


async def test_v_switches_the_grid_to_answer_classes(tmp_path):
    db = tmp_path / "view.sqlite"
    prepared = prepare_sweep(db, definition(models=("sim/inventor", "sim/describer"),
                                            arms=("j",)), "test")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True, latency_scale=0.0,
                       in_process=True)  # screens, not the runner, are tested
    async with app.run_test(size=(110, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("V")  # v cycles the metrics forwards; the answers view is the last
        await pilot.pause()
        grid = app.screen.query_one(SweepGrid)
        assert grid.view == "answers"
        inventor = grid.get_cell("j", "sim/inventor").plain
        describer = grid.get_cell("j", "sim/describer").plain
        # The inventor fabricates where the describer abstains: the view keeps them apart.
        assert "F 0" not in inventor and "A 0" in inventor
        assert "A 0" not in describer and "F 0" in describer
        await pilot.press("v")
        await pilot.pause()
        assert "/1" in grid.get_cell("j", "sim/inventor").plain


async def test_cell_screen_follows_a_running_row(tmp_path):
    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.widgets.rows_table import SORTABLE

    db = tmp_path / "live.sqlite"
    data = definition(scenario="kestrel", models=({"id": "sim/faithful",
                                                  "faults": {"latency_s": 0.15}},), arms=("j",))
    prepared = prepare_sweep(db, data, "test")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await fresh_poll(app, pilot)  # the grid shows the cell while its row runs
        app.screen.query_one(SweepGrid).focus()
        await pilot.press("right", "enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CellScreen)
        await wait_group(app, "sweep")  # the row finishes while the screen is open

        def followed() -> bool:  # the screen's own refresh has caught up with the finished row
            rows = screen.query_one("#rows")
            return (screen.fold_index == 5 and rows.row_count == 1
                    and str(rows.get_cell_at((0, SORTABLE.index("status")))) == "done")

        await wait_until(pilot, followed, "the cell screen to follow the row to its last fold")
        await wait_group(app, "cell-load")
        assert screen.fold_index == 5  # it followed the row to its sixth and last fold
        assert str(screen.query_one("#rows").get_cell_at((0, SORTABLE.index("status")))) == "done"


async def test_a_childs_error_is_a_notification_and_in_the_status_line(tmp_path, monkeypatch):
    """The TUI's sweep runs in a child process; its one-line error reaches the person."""
    monkeypatch.delenv("FOLDSCOPE_TEST_KEY", raising=False)
    db = tmp_path / "key.sqlite"
    data = definition(models=({"id": "qwen/qwen3.6-35b-a3b", "provider": "openrouter",
                               "pin": "someprovider", "api_key_env": "FOLDSCOPE_TEST_KEY"},),
                      arms=("j",))
    prepared = prepare_sweep(db, data, "test")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: app.sweep_status == "error", "the child's failure")
        await wait_until(pilot, lambda: "runner:" in str(app.screen.query_one("#run-header").render()),
                         "the child's error in the status line")
        assert app.sweep_status == "error"
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert len(errors) == 1 and "FOLDSCOPE_TEST_KEY" in errors[0]
        assert "FOLDSCOPE_TEST_KEY" in str(app.screen.query_one("#run-header").render())


async def test_a_child_that_fails_to_start_is_reported(tmp_path, monkeypatch):
    import foldscope.engine.runner_process as runner_process

    monkeypatch.setattr(runner_process, "runner_command",
                        lambda *a, **kw: [str(tmp_path / "no-such-python")])
    db = tmp_path / "nostart.sqlite"
    prepared = prepare_sweep(db, definition(), "test")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: app.sweep_status == "error", "the failed start")
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert len(errors) == 1 and "cannot start the sweep's runner" in errors[0]
