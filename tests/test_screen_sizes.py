"""Every screen at the smallest and a large terminal (80×24 and 160×48): snapshot tests on a
sweep with failing answers to review, so a screen that loses its footer's ``?``, a pane's
height or a frozen column shows in the SVG (plain ``def``: snap_compare is sync)."""

import asyncio
import sqlite3
import time

import pytest
from conftest import definition, fresh_poll, wait_group, wait_until

from foldscope.engine import launch
from foldscope.engine.runner import SweepRunner
from foldscope.ui.app import FoldscopeApp

SIZES = [(80, 24), (160, 48)]


@pytest.fixture
def sized_db(tmp_path, monkeypatch):
    monkeypatch.setattr(launch, "new_sweep_id", lambda: "sizes0001")
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("USER", "ana")
    time.tzset()
    db = tmp_path / "sizes.sqlite"
    prepared = launch.prepare_sweep(db, definition(models=("sim/faithful", "sim/garbler",
                                                           "sim/inventor"), arms=("j", "q")),
                                    "test")
    asyncio.run(SweepRunner(db, prepared.sweep_id, latency_scale=0.0).run())
    with sqlite3.connect(db) as conn:  # fixed times: the header's elapsed, the log's clock
        conn.execute("UPDATE events SET t = 1780000000 + id")
        conn.execute("UPDATE runner_status SET started_at = 1780000000, "
                     "updated_at = 1780000042, finished_at = 1780000042")
        conn.execute("UPDATE rows SET started_at = 1780000000")
        conn.execute("UPDATE sweeps SET created_at = 1780000000")
    yield db
    monkeypatch.delenv("TZ")
    time.tzset()


def _app(db):
    return FoldscopeApp(str(db), sweep_id="sizes0001")


async def _grid(app, pilot):
    await pilot.pause()
    await fresh_poll(app, pilot)


async def _cell(app, pilot):
    await _grid(app, pilot)
    await pilot.press("right", "right", "enter")  # arm j × sim/garbler
    await pilot.pause()
    await wait_group(app, "cell-load")
    await pilot.pause()
    await wait_group(app, "fold-view")
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_sweep_grid(snap_compare, sized_db, size):
    app = _app(sized_db)
    assert snap_compare(app, terminal_size=size, run_before=lambda p: _grid(app, p))


@pytest.mark.parametrize("size", SIZES)
def test_cell_folds(snap_compare, sized_db, size):
    app = _app(sized_db)
    assert snap_compare(app, terminal_size=size, run_before=lambda p: _cell(app, p))


@pytest.mark.parametrize("size", SIZES)
def test_cell_answer(snap_compare, sized_db, size):
    app = _app(sized_db)

    async def answer(pilot):
        await _cell(app, pilot)
        await pilot.press("a")
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=answer)


@pytest.mark.parametrize("size", SIZES)
def test_fabrication_review(snap_compare, sized_db, size):
    from foldscope.ui.widgets.review_table import ReviewTable

    app = _app(sized_db)

    async def review(pilot):
        await _grid(app, pilot)
        await pilot.press("f")
        await pilot.pause()
        await wait_group(app, "fabrication-load")
        screen = app.screen
        await wait_until(pilot, lambda: screen.query_one(ReviewTable).row_count > 0, "values")
        failing = screen.query_one("#failing")
        # The failing-row table sizes its columns to what it holds once it is laid out.
        await wait_until(pilot, lambda: failing.columns[next(iter(failing.columns))]
                         .get_render_width(failing) > len("sim/faithful"), "column widths")
        await pilot.pause()
        failing.refresh(layout=True)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=review)


@pytest.mark.parametrize("size", SIZES)
def test_study(snap_compare, sized_db, size):
    app = _app(sized_db)

    async def study(pilot):
        await _grid(app, pilot)
        await pilot.press("t")
        await pilot.pause()
        await wait_group(app, "study-load")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=study)


@pytest.mark.parametrize("size", SIZES)
def test_survival(snap_compare, sized_db, size):
    app = _app(sized_db)

    async def survival(pilot):
        await _grid(app, pilot)
        await pilot.press("l")
        await pilot.pause()
        await wait_group(app, "survival-load")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=survival)


@pytest.mark.parametrize("size", SIZES)
def test_picker(snap_compare, sized_db, size, monkeypatch):
    monkeypatch.chdir(sized_db.parent)  # the title names the database as given
    app = FoldscopeApp(sized_db.name)

    async def settle(pilot):
        await pilot.pause()
        await wait_group(app, "picker-load")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_help(snap_compare, sized_db, size):
    app = _app(sized_db)

    async def help_screen(pilot):
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=help_screen)


@pytest.mark.parametrize("size", SIZES)
def test_new_sweep_form(snap_compare, sized_db, size):
    app = _app(sized_db)

    async def form(pilot):
        from textual.widgets import Button

        from foldscope.ui.screens.new_sweep import NewSweepScreen

        await _grid(app, pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewSweepScreen), "the form")
        button = app.screen.query_one("#start", Button)
        await wait_until(pilot, lambda: not button.disabled, "the Start button")
        await wait_group(app, "new-sweep")
        app.screen.set_focus(None)  # no blinking input cursor in the picture
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=form)


@pytest.mark.parametrize("size", SIZES)
def test_cell_rows_filtered(snap_compare, sized_db, size):
    app = _app(sized_db)

    async def filtered(pilot):
        await _cell(app, pilot)
        await pilot.press("slash", *"repeat", "colon")  # not a field: a one-line error first
        await pilot.pause()
        await pilot.press(*["backspace"] * 7, *"label", "colon", *"port", "space", *"class",
                          "colon", *"fab", "space", "minus", *"arm", "colon", "q")
        await wait_group(app, "cell-filter")
        await pilot.press("enter")
        await pilot.pause()
        await wait_group(app, "fold-view")
        await pilot.pause()
        app.screen.query_one("#rows").refresh(layout=True)  # the rebuilt rows' widths drawn
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=filtered)


@pytest.mark.parametrize("size", SIZES)
def test_compare(snap_compare, sized_db, size):
    app = _app(sized_db)

    async def compare(pilot):
        from foldscope.ui.screens.compare import CompareScreen

        await _cell(app, pilot)
        await pilot.press("v")  # the highlighted row beside its counterpart under arm q
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen)
                         and app.screen.shown is not None, "the compare screen drawn")
        facts = app.screen.query_one("#compare-facts")
        # The table sizes its columns to what it holds once it is laid out (a frame later).
        await wait_until(pilot, lambda: facts.columns[next(iter(facts.columns))]
                         .get_render_width(facts) > len("label  "), "column widths")
        await pilot.pause()
        facts.refresh(layout=True)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=compare)
