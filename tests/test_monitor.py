"""The monitor as a person meets it: the picker, help, palette, remembered theme, watching."""

import subprocess
import sys

import pytest
from conftest import definition, fresh_poll, run_sweep, wait_group

from foldscope.cli.main import main
from foldscope.engine.launch import prepare_sweep
from foldscope.engine.listing import list_sweeps
from foldscope.engine.procinfo import RunnerId, start_token
from foldscope.engine.store import Store
from foldscope.engine.userconfig import read_user_config
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.commands import all_commands
from foldscope.ui.screens.help import HelpScreen
from foldscope.ui.screens.picker import SweepPicker
from foldscope.ui.screens.sweep import SweepScreen


@pytest.fixture
def two_sweeps(tmp_path):
    db = tmp_path / "two.sqlite"
    first = run_sweep(db, definition(models=("sim/faithful",), arms=("j",)))
    second = run_sweep(db, definition(models=("sim/describer",), arms=("q", "m"), repeats=2))
    return db, first, second


def test_list_sweeps_summarises_each(two_sweeps):
    db, first, second = two_sweeps
    with Store(db, readonly=True) as store:
        sweeps = list_sweeps(store)
    assert [s.id for s in sweeps] == [second, first]
    s = sweeps[0]
    assert (s.models, s.arms, s.scenarios) == (("sim/describer",), ("q", "m"), ("smoke",))
    assert (s.rows_done, s.rows_planned, s.status, s.runner_pid) == (4, 4, "done", None)
    assert s.simulated


async def test_several_sweeps_open_the_picker_and_enter_opens_one(two_sweeps):
    db, first, second = two_sweeps
    app = FoldscopeApp(str(db))
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SweepPicker)
        await wait_group(app, "picker-load")
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, SweepScreen) and app.screen.sweep_id == first
        assert app.runner is None  # a finished sweep is only shown
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, SweepPicker)
        await wait_group(app, "picker-load")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, SweepScreen) and app.screen.sweep_id == first


def test_cli_opens_a_named_database_and_refuses_unknown_ones(two_sweeps, monkeypatch, capsys):
    db, first, _ = two_sweeps
    opened = {}

    def fake_run(self, *a, **kw):
        opened.update(db=self.db_path, sweep=self.sweep_id, run=self.run_sweep)

    monkeypatch.setattr(FoldscopeApp, "run", fake_run)
    assert main(["--db", str(db), "--sweep", first]) == 0
    assert opened == {"db": str(db), "sweep": first, "run": False}
    assert main(["--db", str(db)]) == 0 and opened["sweep"] is None  # several: the picker
    assert main(["--db", str(db), "--sweep", "nope"]) == 2
    assert "no sweep 'nope'" in capsys.readouterr().err
    assert main(["--db", str(db.parent / "missing.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "no such database" in err and err.count("\n") == 1


async def test_help_opens_on_question_mark_and_f1_and_defines_every_metric(two_sweeps):
    from foldscope.core.metrics import METRICS

    db, first, _ = two_sweeps
    app = FoldscopeApp(str(db), sweep_id=first)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        for key in ("question_mark", "f1"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            text = str(app.screen.query_one("#help-metrics").content)
            assert all(m.definition in text for m in METRICS)
            assert "Student-t" in text
            assert "Sweeps" in str(app.screen.query_one("#help-keys").content)
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, SweepScreen)


async def test_palette_lists_foldscope_actions_and_themes(two_sweeps):
    db, first, _ = two_sweeps
    app = FoldscopeApp(str(db), sweep_id=first)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        titles = {c.title for c in all_commands(app.screen)}
        assert {"Help", "Sweeps", "Theme: foldscope-light", "Theme: foldscope-colourblind"} <= titles
        command = next(c for c in all_commands(app.screen) if c.title == "Help")
        await command.callback()
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


async def test_theme_choice_is_remembered_across_starts(two_sweeps, user_settings):
    db, first, _ = two_sweeps
    app = FoldscopeApp(str(db), sweep_id=first)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "foldscope-dark"
        app.theme = "foldscope-colourblind"
        await pilot.pause()
        await wait_group(app, "settings")
    assert read_user_config(user_settings)["theme"] == "foldscope-colourblind"
    again = FoldscopeApp(str(db), sweep_id=first)
    async with again.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert again.theme == "foldscope-colourblind"
        await pilot.press("T")
        await pilot.pause()
        await wait_group(again, "settings")
        assert again.theme != "foldscope-colourblind"
    assert read_user_config(user_settings)["theme"] == again.theme


async def test_a_sweep_another_process_runs_is_watched_quietly(tmp_path):
    db = tmp_path / "watched.sqlite"
    prepared = prepare_sweep(db, definition(models=("sim/faithful",), arms=("j",)), "test")
    other = subprocess.Popen(  # noqa: ASYNC220 - a stand-in process, started once
        [sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with Store(db) as store:
            store.claim(prepared.sweep_id, RunnerId(other.pid, start_token(other.pid)),
                        lambda runner: True)
            store.set_sweep_status(prepared.sweep_id, "running")
        app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, run=True, latency_scale=0.0)
        async with app.run_test(size=(110, 30)) as pilot:
            await wait_group(app, "sweep")
            await pilot.pause()
            assert app.sweep_status == "watching" and app.watching_pid == other.pid
            assert not [n for n in app._notifications if n.severity == "error"]
    finally:
        other.kill()
        other.wait()


async def test_o_goes_back_to_the_folds_in_one_press_and_rows_sort(two_sweeps):
    from textual.widgets import TabbedContent

    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.widgets.rows_table import RowsTable

    db, _, second = two_sweeps
    app = FoldscopeApp(str(db), sweep_id=second)
    async with app.run_test(size=(140, 45)) as pilot:
        await fresh_poll(app, pilot)
        await pilot.press("enter")  # the cursor starts on the first data cell
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CellScreen) and (screen.model, screen.arm) == ("sim/describer", "q")
        await wait_group(app, "cell-load")
        await pilot.pause()
        tabs = screen.query_one(TabbedContent)
        await pilot.press("a")
        await pilot.pause()
        await pilot.pause()
        assert tabs.active == "answer-tab"
        await pilot.press("o")
        await pilot.pause()
        await pilot.pause()
        assert tabs.active == "folds-tab"
        table = screen.query_one(RowsTable)
        assert table.row_count == 2 and table.sort_column == "position"
        positions = [r.position for r in (table._records[str(i)][0] for i in table.row_ids())]
        assert positions == sorted(positions)
        await pilot.press("S")  # reverse
        await pilot.pause()
        reversed_positions = [table._records[str(i)][0].position for i in table.row_ids()]
        assert reversed_positions == sorted(positions, reverse=True)
        await pilot.press("s")  # the next column, status: every row still listed once
        await pilot.pause()
        assert table.sort_column == "status" and sorted(table.row_ids()) == sorted(
            int(k) for k in table._records)


async def test_metrics_transpose_and_a_theme_switch_recolours_drawn_cells(two_sweeps):
    from foldscope.ui.widgets.sweep_grid import VIEWS, SweepGrid

    db, _, second = two_sweeps
    app = FoldscopeApp(str(db), sweep_id=second)
    async with app.run_test(size=(140, 30)) as pilot:
        await fresh_poll(app, pilot)
        grid = app.screen.query_one(SweepGrid)
        assert grid.cursor_coordinate == (0, 1)  # the first data cell, not the arm label
        assert "2/2" in grid.get_cell("q", "sim/describer").plain
        assert "1 repeat" not in str(app.screen.query_one("#run-header").content)

        def colour() -> str:
            cell = grid.get_cell("q", "sim/describer")
            segments = list(app.console.render(cell, app.console.options))
            return str(next(s.style.color for s in segments if s.text.strip() and s.style))

        before = colour()
        app.theme = "foldscope-colourblind"
        await pilot.pause()
        assert colour() != before  # the same cell object, coloured when drawn

        seen = []
        for _ in VIEWS:
            seen.append(grid.view)
            await pilot.press("v")
            await pilot.pause()
        assert seen == list(VIEWS) and grid.view == "recall"
        app.screen.show_view("fabrication")
        assert grid.get_cell("q", "sim/describer").plain.strip().startswith(("0%", "—"))
        await pilot.press("x")
        await pilot.pause()
        assert grid.transposed and "2/2" in grid.get_cell("sim/describer", "q").plain
        assert grid.cell_ref("sim/describer", "q").arm == "q"
