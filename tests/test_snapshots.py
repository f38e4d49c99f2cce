"""Snapshot tests of the main screens at a fixed terminal size (plain ``def``: snap_compare is sync)."""

import asyncio
import sqlite3
import time

import pytest
from conftest import definition, fresh_poll, wait_group

from foldscope.engine import launch
from foldscope.engine.runner import SweepRunner
from foldscope.ui.app import FoldscopeApp


@pytest.fixture
def finished_db(tmp_path, monkeypatch):
    monkeypatch.setattr(launch, "new_sweep_id", lambda: "snapshot01")
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    db = tmp_path / "snap.sqlite"
    prepared = launch.prepare_sweep(db, definition(models=("sim/faithful", "sim/describer",
                                                           "sim/gister"), repeats=2), "test")
    asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=0.0).run())
    with sqlite3.connect(db) as conn:  # fixed times: the header's elapsed, the log's clock
        conn.execute("UPDATE events SET t = 1780000000 + id")
        conn.execute("UPDATE runner_status SET started_at = 1780000000, "
                     "updated_at = 1780000042, finished_at = 1780000042")
    yield db
    monkeypatch.delenv("TZ")
    time.tzset()


def test_sweep_grid_snapshot(snap_compare, finished_db):
    app = FoldscopeApp(str(finished_db), sweep_id="snapshot01")

    async def settle(pilot):
        await pilot.pause()
        await fresh_poll(app, pilot)

    assert snap_compare(app, terminal_size=(100, 24), run_before=settle)


def test_header_endpoints_and_event_log_snapshot(snap_compare, finished_db):
    app = FoldscopeApp(str(finished_db), sweep_id="snapshot01")

    async def settle(pilot):
        await pilot.pause()
        await fresh_poll(app, pilot)
        await pilot.press("i")  # the pins panel too
        await pilot.pause()

    assert snap_compare(app, terminal_size=(130, 44), run_before=settle)


def test_cell_screen_snapshot(snap_compare, finished_db):
    app = FoldscopeApp(str(finished_db), sweep_id="snapshot01")

    async def open_cell(pilot):
        await pilot.pause()
        await fresh_poll(app, pilot)
        await pilot.press("right", "right", "enter")  # arm j × sim/describer
        await pilot.pause()
        await wait_group(app, "cell-load")
        await pilot.pause()
        await wait_group(app, "fold-view")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=open_cell)


@pytest.fixture
def two_sweeps_db(tmp_path, monkeypatch):
    import sqlite3
    import time

    ids = iter(["snapshotA1", "snapshotB2"])
    monkeypatch.setattr(launch, "new_sweep_id", lambda: next(ids))
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    db = tmp_path / "two.sqlite"
    for models, arms in ((("sim/faithful",), ("j",)), (("sim/describer", "sim/gister"), ("q", "m"))):
        prepared = launch.prepare_sweep(db, definition(models=models, arms=arms), "test",
                                        fresh=True)
        asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=0.0).run())
    with sqlite3.connect(db) as conn:  # fixed times, so the picker's "started" column is stable
        conn.execute("UPDATE rows SET started_at = 1780000000 + (sweep_id = 'snapshotB2') * 60")
        conn.execute("UPDATE sweeps SET created_at = 1780000000 + (id = 'snapshotB2') * 60")
    yield db
    monkeypatch.delenv("TZ")
    time.tzset()


def test_sweep_picker_snapshot(snap_compare, two_sweeps_db, monkeypatch):
    monkeypatch.chdir(two_sweeps_db.parent)  # the title names the database as given
    app = FoldscopeApp(two_sweeps_db.name)

    async def settle(pilot):
        await pilot.pause()
        await wait_group(app, "picker-load")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 16), run_before=settle)


def test_help_screen_snapshot(snap_compare, finished_db):
    app = FoldscopeApp(str(finished_db), sweep_id="snapshot01")

    async def open_help(pilot):
        await pilot.pause()
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 50), run_before=open_help)


def test_study_screen_snapshot(snap_compare, finished_db):
    app = FoldscopeApp(str(finished_db), sweep_id="snapshot01")

    async def open_study(pilot):
        await pilot.pause()
        await fresh_poll(app, pilot)
        await pilot.press("t")
        await pilot.pause()
        await wait_group(app, "study-load")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(130, 40), run_before=open_study)


@pytest.fixture
def garbled_db(tmp_path, monkeypatch):
    monkeypatch.setattr(launch, "new_sweep_id", lambda: "snapshot02")
    db = tmp_path / "garbled.sqlite"
    prepared = launch.prepare_sweep(db, definition(models=("sim/garbler",), arms=("q",)), "test")
    asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=0.0).run())
    return db


def test_row_inspector_snapshot(snap_compare, garbled_db):
    """The fold inspector of a garbler row: strip with not-yet and lost-at, the highlighted
    fact's detail, the carrier and the diff against the fold before."""
    app = FoldscopeApp(str(garbled_db), sweep_id="snapshot02")

    async def open_row(pilot):
        await pilot.pause()
        await fresh_poll(app, pilot)
        await pilot.press("right", "enter")  # arm q × sim/garbler
        await pilot.pause()
        await wait_group(app, "cell-load")
        await pilot.pause()
        await pilot.press("left")  # fold 2 of 3: some facts not yet planted
        await pilot.pause()
        await wait_group(app, "fold-view")
        await pilot.pause()
        app.screen.query_one("#facts").focus()
        await pilot.press("down")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(180, 40), run_before=open_row)
