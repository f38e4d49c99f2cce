"""The app keeps one cell screen and aims it at each cell opened (``screens.cell.open_cell``):
what a person sees must be exactly what a newly composed screen shows, whatever was done on
the cell before (filter, sort, wrap, chunk, fold, tab), a theme switched or the terminal
resized while it was away."""

from __future__ import annotations

import pytest
from conftest import definition, run_sweep, wait_group, wait_until

from foldscope.ui.app import FoldscopeApp
from foldscope.ui.screens.cell import CELL_SCREEN, CellScreen
from foldscope.ui.widgets.fold_inspector import FoldInspector
from foldscope.ui.widgets.sweep_grid import SweepGrid

SIZE = (150, 45)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    db = tmp_path_factory.mktemp("reuse") / "reuse.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/garbler", "sim/inventor"), arms=("j", "q"),
                                        repeats=2))
    return db, sweep_id


def screen_text(app) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


def state(screen: CellScreen) -> tuple:
    """What a person can change on a cell screen, as it stands."""
    from textual.widgets import TabbedContent

    from foldscope.ui.widgets.filter_bar import FilterBar
    from foldscope.ui.widgets.literal_lines import LiteralLines
    from foldscope.ui.widgets.rows_table import RowsTable

    rows = screen.query_one(RowsTable)
    inspector = screen.query_one(FoldInspector)
    return (screen.model, screen.arm, screen.row_id, screen.fold_index,
            rows.sort_column, rows.sort_reverse, rows.row_ids(), rows.cursor_row,
            screen.query_one(FilterBar).applied, screen.query_one(FilterBar).active,
            screen.query_one(TabbedContent).active, inspector.chunk_shown, inspector.shown,
            [(v.id, v.wrap, v.scroll_offset) for v in screen.query(LiteralLines)],
            screen.focused.id if screen.focused else None, sorted(screen.classes))


async def settle(app, pilot) -> None:
    await wait_until(pilot, lambda: isinstance(app.screen, CellScreen)
                     and app.screen._data is not None
                     and app.screen.query_one(FoldInspector).shown is not None
                     and not app.screen._holding, "the cell drawn")
    await wait_group(app, "cell-load", "fold-view", "chunk-load")
    for _ in range(3):
        await pilot.pause()


async def open_from_grid(app, pilot, row: int, column: int) -> CellScreen:
    grid = app.sweep_screen.query_one(SweepGrid)
    grid.focus()
    grid.move_cursor(row=row, column=column)
    await pilot.pause()
    await pilot.press("enter")
    await settle(app, pilot)
    assert isinstance(app.screen, CellScreen)
    return app.screen


async def grid_ready(app, pilot) -> None:
    await wait_until(pilot, lambda: app.screen.query(SweepGrid)
                     and app.screen.query_one(SweepGrid).row_count, "the grid")
    await pilot.pause()


async def fresh(db, sweep_id, row, column, *, theme: str | None = None,
                size=SIZE, styles: list | None = None) -> tuple[str, tuple]:
    """What a newly composed cell screen shows (none composed ahead, none reused)."""
    from unittest import mock

    def new_screen(app, db_path, sweep_id, scenario, model, arm, **kw):
        screen = CellScreen(db_path, sweep_id, scenario, model, arm, **kw)
        screen.hold_frames()
        app.push_screen(screen)
        return screen

    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    with mock.patch("foldscope.ui.screens.sweep.open_cell", new_screen), \
            mock.patch("foldscope.ui.screens.sweep.warm_cell_screen", lambda *a: None):
        return await _fresh(app, row, column, theme, size, styles)


async def _fresh(app, row, column, theme, size, styles) -> tuple[str, tuple]:
    async with app.run_test(size=size) as pilot:
        await grid_ready(app, pilot)
        assert CELL_SCREEN not in app._installed_screens
        if theme is not None:
            app.theme = theme
            await pilot.pause()
        screen = await open_from_grid(app, pilot, row, column)
        if styles is not None:
            styles.extend((w.id, w.styles.background, w.styles.color, w.styles.display)
                          for w in screen.walk_children())
        return screen_text(app), state(screen)


@pytest.mark.asyncio
async def test_a_cell_opened_on_the_reused_screen_shows_what_a_new_screen_shows(swept):
    db, sweep_id = swept
    want_styles: list = []
    want_text, want_state = await fresh(db, sweep_id, 1, 2, styles=want_styles)
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=SIZE) as pilot:
        await grid_ready(app, pilot)
        await wait_until(pilot, lambda: CELL_SCREEN in app._installed_screens
                         and app._installed_screens[CELL_SCREEN].is_mounted,
                         "the cell screen composed ahead, once the grid is up")
        ahead = app._installed_screens[CELL_SCREEN]
        first = await open_from_grid(app, pilot, 0, 1)
        assert first is ahead
        # Everything a person can change on a cell.
        for key in ("slash", "g", "a", "r", "enter", "s", "s", "S", "w", "c", "left", "a"):
            await pilot.press(key)
            await pilot.pause()
        await wait_group(app, "cell-filter", "fold-view", "chunk-load")
        await pilot.pause()
        from foldscope.ui.widgets.literal_lines import LiteralLines
        from foldscope.ui.widgets.rows_table import RowsTable

        rows = first.query_one(RowsTable)
        assert (rows.sort_column, rows.sort_reverse) != ("position", False)
        assert first.query_one("#rows-filter").applied is not None
        assert first.query_one(FoldInspector).chunk_shown
        assert not any(v.wrap for v in first.query(LiteralLines))
        assert first.query_one("#tabs").active == "answer-tab"
        await pilot.press("escape")  # clears the filter
        await pilot.press("escape")  # back to the grid
        await wait_until(pilot, lambda: app.screen is app.sweep_screen, "the grid")
        second = await open_from_grid(app, pilot, 1, 2)
        assert second is first, "the cell screen was composed again"
        assert state(second) == want_state
        assert screen_text(app) == want_text
        styles = [(w.id, w.styles.background, w.styles.color, w.styles.display)
                  for w in second.walk_children()]
    assert styles == want_styles


@pytest.mark.asyncio
async def test_a_theme_switched_while_the_cell_was_away_restyles_it(swept):
    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=SIZE) as pilot:
        await grid_ready(app, pilot)
        first = await open_from_grid(app, pilot, 0, 1)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.sweep_screen, "the grid")
        theme = next(name for name in app._theme_names if name != app.theme)
        app.theme = theme
        await pilot.pause()
        second = await open_from_grid(app, pilot, 1, 2)
        assert second is first
        got = screen_text(app), state(second)
        styles = [(w.id, w.styles.background, w.styles.color, w.styles.display)
                  for w in second.walk_children()]
    want_styles: list = []
    assert got == await fresh(db, sweep_id, 1, 2, theme=theme, styles=want_styles)
    assert styles == want_styles


@pytest.mark.asyncio
async def test_a_terminal_resized_while_the_cell_was_away_lays_it_out_at_the_new_size(swept):
    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=SIZE) as pilot:
        await grid_ready(app, pilot)
        first = await open_from_grid(app, pilot, 0, 1)
        assert "-narrow" not in first.classes
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.sweep_screen, "the grid")
        await pilot.resize_terminal(80, 24)
        for _ in range(3):
            await pilot.pause()
        second = await open_from_grid(app, pilot, 1, 2)
        assert second is first
        got = screen_text(app), state(second)
    assert got == await fresh(db, sweep_id, 1, 2, size=(80, 24))


@pytest.mark.asyncio
async def test_a_cell_opened_from_a_screen_over_the_reused_one_is_a_new_screen(swept):
    from foldscope.ui.screens.cell import open_cell

    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=SIZE) as pilot:
        await grid_ready(app, pilot)
        first = await open_from_grid(app, pilot, 0, 1)
        second = open_cell(app, str(db), sweep_id, None, "sim/inventor", "q")
        await settle(app, pilot)
        assert second is not first and app.screen is second
        assert (second.model, second.arm) == ("sim/inventor", "q")
        assert (first.model, first.arm) == ("sim/garbler", "j")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is first, "the first cell again")
        assert not second.is_attached  # closed and gone, the reused one stays
        assert app._installed_screens[CELL_SCREEN] is first
