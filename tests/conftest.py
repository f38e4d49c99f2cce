"""Shared fixtures: small sweeps run at full speed against in-process simulated models."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests must not fail on a loaded CI machine because one example ran slowly; and a
# fixed derandomised search keeps CI runs reproducible (run locally with
# HYPOTHESIS_PROFILE=explore to search afresh each time).
settings.register_profile("ci", deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

from foldscope.engine.launch import prepare_sweep  # noqa: E402 - after the profile is loaded
from foldscope.engine.runner import SweepRunner  # noqa: E402


def definition(scenario="smoke", models=("sim/faithful", "sim/describer"), arms=("j", "q", "m"),
               repeats=1, **sweep):
    """A sweep definition as the CLI and TOML files produce it."""
    return {"sweep": {"scenario": scenario, "arms": list(arms), "repeats": repeats,
                      "concurrency": 8, "seed": 3, **sweep},
            "models": [m if isinstance(m, dict) else {"id": m} for m in models]}


def run_sweep(db: Path, data: dict, **runner_kw) -> str:
    """Plan and run a sweep to the end; return its id."""
    prepared = prepare_sweep(db, data, "test", fresh=True)
    asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=0.0, **runner_kw).run())
    return prepared.sweep_id


def copy_database(src: Path, dst: Path) -> Path:
    """A private copy of a database (SQLite's backup: consistent even with a WAL beside it), so a
    test can write to a module-scoped sweep without running it again."""
    import sqlite3

    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    return dst


@pytest.fixture(autouse=True)
def user_settings(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own empty settings folder: nothing reads or writes ~/.config."""
    folder = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder / "foldscope" / "config.toml"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "sweep.sqlite"


async def fresh_poll(app, pilot) -> None:
    """Make the sweep screen read the store once more and wait for that read to land.

    The screen's 4 Hz timer also polls, and polls never overlap (a tick that finds one running
    is skipped), so a running poll is waited for before a fresh one starts.
    """
    screen = app.screen
    while (worker := screen.poll()) is None:
        await screen._polling.wait()
    await worker.wait()
    await pilot.pause()


async def wait_group(app, *groups: str) -> None:
    """Wait for the app's workers of the given groups (the worker manager is app-wide, and the
    sweep screen's exclusive polls may be cancelled at any time, so they are not waited on)."""
    from textual.worker import WorkerCancelled

    for worker in [w for w in app.workers if w.group in groups]:
        try:
            await worker.wait()
        except WorkerCancelled:
            pass


async def wait_until(pilot, condition, what: str, *, attempts: int = 300) -> None:
    """Let the app run until ``condition()`` holds; fail naming ``what`` if it never does.

    Each ``pilot.pause()`` returns once the app has processed its messages and the process is
    idle (at most about a second while threads are busy), so the bound is generous on a loaded
    machine and no fixed duration is assumed.
    """
    for _ in range(attempts):
        if condition():
            return
        await pilot.pause()
    raise AssertionError(f"gave up waiting for {what}")


async def open_cell(app, pilot):
    """Enter the grid's first cell (row 0, column 1) and wait until its last fold is drawn;
    returns the cell screen."""
    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.widgets.fold_inspector import FoldInspector
    from foldscope.ui.widgets.sweep_grid import SweepGrid

    await wait_until(pilot, lambda: app.screen.query(SweepGrid)
                     and app.screen.query_one(SweepGrid).row_count, "the grid")
    grid = app.screen.query_one(SweepGrid)
    grid.focus()
    grid.move_cursor(row=0, column=1)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, CellScreen)
                     and app.screen.query_one(FoldInspector).shown is not None, "the cell")
    await wait_group(app, "fold-view")
    return app.screen



def tables_laid_out(screen) -> bool:
    """Whether every data table on ``screen`` has measured what it was given: a DataTable sizes
    its columns and rows when its messages run out (Textual's ``_on_idle``), so a screenshot
    taken before shows columns as wide as their headers (a snapshot flake CI saw)."""
    from textual.widgets import DataTable

    return not any(t._require_update_dimensions or t._new_rows or t._updated_cells
                   for t in screen.query(DataTable))


@pytest.fixture
def snap_compare(snap_compare):
    """pytest-textual-snapshot's ``snap_compare``, taking its screenshot only once the key
    presses asked for have run and every data table on screen has laid out its rows."""
    import inspect

    def compare(app, press=(), terminal_size=(80, 24), run_before=None) -> bool:
        async def before(pilot) -> None:
            if run_before is not None:
                result = run_before(pilot)
                if inspect.isawaitable(result):
                    await result
            await pilot.pause()
            await pilot.press(*press)
            await wait_until(pilot, lambda: tables_laid_out(pilot.app.screen), "tables laid out")

        return snap_compare(app, terminal_size=terminal_size, run_before=before)

    return compare
