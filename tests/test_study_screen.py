"""The study screen, driven with Pilot on a small simulated sweep: tables and plots."""

from __future__ import annotations

import asyncio

import pytest
from conftest import definition, fresh_poll, wait_group
from textual.widgets import DataTable, Static

from foldscope.core.study import OVER_WRITING, RECALLED, UNDER_WRITING
from foldscope.engine import launch
from foldscope.engine.runner import SweepRunner
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.screens.study import StudyScreen
from foldscope.ui.widgets.fill_scatter import FillScatter, layout
from foldscope.ui.widgets.recall_bars import RecallBars, bar


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    db = tmp_path_factory.mktemp("study-screen") / "study.sqlite"
    prepared = launch.prepare_sweep(db, definition(
        models=("sim/faithful", "sim/describer", "sim/gister"), arms=("j", "q", "m"),
        repeats=2), "test")
    asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=0.0).run())
    return db, prepared.sweep_id


async def open_study(app, pilot):
    await pilot.pause()
    await fresh_poll(app, pilot)
    await pilot.press("t")
    await pilot.pause()
    await wait_group(app, "study-load")
    await pilot.pause()


async def test_t_opens_the_study_tables_and_plots(finished):
    db, sweep_id = finished
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await open_study(app, pilot)
        screen = app.screen
        assert isinstance(screen, StudyScreen) and screen.sweep_id == sweep_id
        [study] = screen.studies
        assert ("capacity table (j vs t, m vs u) left out: no t arm and no u arm in this sweep"
                in study.notes)
        notes = screen.query_one(".study-notes", Static)
        assert "no u arm in this sweep" in str(notes.render())
        partition = screen.query_one("#study-0-partition", DataTable)
        assert partition.row_count == 3
        rows = {str(partition.get_row_at(i)[0]): [str(c) for c in partition.get_row_at(i)]
                for i in range(3)}
        assert rows["sim/describer"][4] == OVER_WRITING and rows["sim/describer"][-1] == "yes"
        assert rows["sim/gister"][4] == UNDER_WRITING and rows["sim/gister"][-1] == "no"
        # Every study table the sweep allows is on screen, as the report prints them.
        shown = {t.id.split("-", 2)[2] for t in screen.query(".study-table")}
        assert shown == {t.name for t in study.tables}
        bars = str(screen.query_one(RecallBars).render())
        assert "arm q" in bars and "sim/describer" in bars and bar(1.0) in bars
        scatter = screen.query_one(FillScatter)
        text = str(scatter.render())
        assert f"{OVER_WRITING} (2)" in text and f"{UNDER_WRITING} (4)" in text
        assert f"{RECALLED} (6)" in text  # faithful j, q and describer q rows recall
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, StudyScreen)


def test_scatter_layout_places_points_and_draws_failures_over_recalled_rows():
    from foldscope.core.study import FillPoint

    points = [FillPoint("a", "j", 0, 0.0, 1.0, RECALLED), FillPoint("a", "j", 1, 1.0, 0.0,
                                                                     UNDER_WRITING),
              FillPoint("b", "j", 0, 0.0, 1.0, OVER_WRITING)]
    grid = layout(points, 5, 3)
    assert grid[0][0] == OVER_WRITING and grid[2][4] == UNDER_WRITING
    assert sum(cell is not None for line in grid for cell in line) == 2


def test_bar_lengths():
    assert bar(0.0, 10) == "" and bar(1.0, 10) == "█" * 10 and bar(0.55, 2) == "█▏"
