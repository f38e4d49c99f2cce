"""What a key repaints: a fold step repaints the panes that changed, not the whole cell screen,
and nothing under an opaque screen repaints it (the grid below keeps polling)."""

from __future__ import annotations

import pytest
from conftest import definition, run_sweep, wait_group, wait_until
from textual.geometry import Region

from foldscope.ui.app import FoldscopeApp
from foldscope.ui.screens.cell import CellScreen
from foldscope.ui.screens.help import HelpScreen
from foldscope.ui.widgets.fold_inspector import FoldInspector
from foldscope.ui.widgets.sweep_grid import SweepGrid


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    db = tmp_path_factory.mktemp("repaints") / "repaints.sqlite"
    return db, run_sweep(db, definition(models=("sim/garbler",), arms=("j",)))


async def _open_cell(app, pilot) -> CellScreen:
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


async def test_nothing_under_an_opaque_screen_repaints_it(swept):
    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(120, 40)) as pilot:
        cell = await _open_cell(app, pilot)
        grid_screen = app.screen_stack[-2]
        assert app._background_screens == []
        # The grid under the cell repaints its whole region (as its polls and clock do).
        await pilot.pause()
        cell._repaint_regions.clear()
        grid_screen._compositor._dirty_regions.add(Region(0, 0, *app.size))
        grid_screen._compositor_refresh()
        assert not cell._repaint_regions  # the cell screen is not repainted over it
        # A screen that shows what is under it (the help's modal) still lists it.
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        assert app.screen.styles.background.a < 1
        assert app._background_screens == [cell]


async def test_a_fold_step_does_not_repaint_the_whole_screen(swept):
    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(120, 40)) as pilot:
        cell = await _open_cell(app, pilot)
        inspector = cell.query_one(FoldInspector)
        whole = []
        refresh = cell.refresh

        def counted(*regions, **kwargs):
            if not regions:
                whole.append(kwargs)
            return refresh(*regions, **kwargs)

        cell.refresh = counted
        before = cell.fold_index
        await pilot.press("left")
        await wait_until(pilot, lambda: inspector.shown == before - 1, "the fold before")
        cell.row_id = None
        await pilot.pause()
        assert whole == []


def _rules(rules) -> list[tuple]:
    return [(repr(r.selector_set), {k: repr(v) for k, v in r.styles.get_rules().items()},
             r.tie_breaker, r.is_default_rules)
            for r in rules]


async def test_theme_switches_take_rules_parsed_ahead_the_same_as_a_new_parse(swept):
    """Once the cell screen is composed ahead, every theme's stylesheet is parsed in a thread:
    a switch then parses nothing, and the rules it takes are exactly those a parse of the
    stylesheet as it stands gives."""
    from textual.css.stylesheet import Stylesheet

    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app._themes_parsed_ahead, "the themes parsed ahead")
        await wait_group(app, "parse-themes")
        await pilot.pause()
        parses = []
        reparse = Stylesheet.reparse

        def counted(self):
            parses.append(self)
            return reparse(self)

        Stylesheet.reparse = counted
        try:
            for name in [*app._theme_names, *app._theme_names]:
                app.theme = name
                await wait_until(pilot, lambda n=name: app.current_theme.name == n
                                 and app.stylesheet._variables == app.get_css_variables(),
                                 f"the {name} theme")
                await pilot.pause()
                fresh = Stylesheet(variables=app.get_css_variables())
                for read_from, (css, defaults, tie, scope) in app.stylesheet.source.items():
                    fresh.add_source(css, read_from=read_from, is_default_css=defaults,
                                     tie_breaker=tie, scope=scope)
                fresh.parse()
                assert _rules(app.stylesheet.rules) == _rules(fresh.rules)
        finally:
            Stylesheet.reparse = reparse
        assert parses == []
