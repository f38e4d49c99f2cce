"""Snapshot of the fabrication screen at a fixed terminal size, with three verdicts given
(plain ``def``: snap_compare is sync)."""

import asyncio

import pytest
from conftest import definition, fresh_poll, wait_group, wait_until

from foldscope.engine import launch
from foldscope.engine.runner import SweepRunner
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.widgets.review_table import ReviewTable


@pytest.fixture
def inventor_db(tmp_path, monkeypatch):
    monkeypatch.setattr(launch, "new_sweep_id", lambda: "fabsnap01")
    monkeypatch.setenv("USER", "ana")
    db = tmp_path / "snap.sqlite"
    prepared = launch.prepare_sweep(db, definition(scenario="kestrel",
                                                   models=("sim/inventor", "sim/garbler"),
                                                   arms=("j", "q", "m")), "test")
    asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=0.0).run())
    return db


def test_fabrication_screen_snapshot(snap_compare, inventor_db):
    app = FoldscopeApp(str(inventor_db), sweep_id="fabsnap01")

    async def review(pilot):
        await pilot.pause()
        await fresh_poll(app, pilot)
        await pilot.press("f")
        await pilot.pause()
        await wait_group(app, "fabrication-load")
        screen = app.screen
        await wait_until(pilot, lambda: screen.query_one(ReviewTable).row_count > 0, "values")
        await pilot.press("f", "n", "U", *"stock", "enter")
        await wait_until(pilot, lambda: screen.pending == 0, "verdicts written")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(150, 40), run_before=review)
