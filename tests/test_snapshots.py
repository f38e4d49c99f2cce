"""Snapshot tests of the main screens at a fixed terminal size (plain ``def``: snap_compare is sync)."""

import asyncio

import pytest
from conftest import definition, fresh_poll, wait_group

from foldscope.engine import launch
from foldscope.engine.runner import SweepRunner
from foldscope.ui.app import FoldscopeApp


@pytest.fixture
def finished_db(tmp_path, monkeypatch):
    monkeypatch.setattr(launch, "new_sweep_id", lambda: "snapshot01")
    db = tmp_path / "snap.sqlite"
    prepared = launch.prepare_sweep(db, definition(models=("sim/faithful", "sim/describer",
                                                           "sim/gister"), repeats=2), "test")
    asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=0.0).run())
    return db


def test_sweep_grid_snapshot(snap_compare, finished_db):
    app = FoldscopeApp(str(finished_db), sweep_id="snapshot01")

    async def settle(pilot):
        await pilot.pause()
        await fresh_poll(app, pilot)

    assert snap_compare(app, terminal_size=(100, 24), run_before=settle)


def test_cell_screen_snapshot(snap_compare, finished_db):
    app = FoldscopeApp(str(finished_db), sweep_id="snapshot01")

    async def open_cell(pilot):
        await pilot.pause()
        await fresh_poll(app, pilot)
        await pilot.press("right", "right", "enter")  # arm j × sim/describer
        await pilot.pause()
        await wait_group(app, "cell-load")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=open_cell)
