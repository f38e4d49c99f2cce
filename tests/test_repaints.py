"""What a key repaints: a fold step repaints the panes that changed, not the whole cell screen,
and nothing under an opaque screen repaints it (the grid below keeps polling)."""

from __future__ import annotations

import pytest
from conftest import definition, fresh_poll, open_cell, run_sweep, wait_group, wait_until
from textual.geometry import Region

from foldscope.ui.app import FoldscopeApp
from foldscope.ui.screens.help import HelpScreen
from foldscope.ui.widgets.fold_inspector import FoldInspector


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    db = tmp_path_factory.mktemp("repaints") / "repaints.sqlite"
    return db, run_sweep(db, definition(models=("sim/garbler",), arms=("j",)))


async def test_nothing_under_an_opaque_screen_repaints_it(swept):
    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(120, 40)) as pilot:
        cell = await open_cell(app, pilot)
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
        cell = await open_cell(app, pilot)
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


async def _theme_switched_drawings(db, sweep_id) -> tuple[list, dict]:
    """The cell screen and the grid each drawn after a theme switch (with every widget's
    styles), and how often each widget was refreshed by the restyling of the switches."""
    from collections import Counter

    from textual.widget import Widget

    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    drawn: list = []
    refreshed: Counter = Counter()
    refresh = Widget.refresh

    restyling = []

    def counted(self, *regions, **kwargs):
        if restyling:
            refreshed[id(self)] += 1
        return refresh(self, *regions, **kwargs)

    refresh_css = app.refresh_css

    def restyle(*args, **kwargs):
        restyling.append(True)
        try:
            return refresh_css(*args, **kwargs)
        finally:
            restyling.clear()

    app.refresh_css = restyle

    async with app.run_test(size=(120, 40)) as pilot:
        app.theme = app._theme_names[0]  # the theme the last test run left is remembered
        await open_cell(app, pilot)
        for back in (False, True):
            if back:
                await pilot.press("escape")
                await wait_until(pilot, lambda: app.screen is app.sweep_screen, "the grid")
                await fresh_poll(app, pilot)
            theme = app._theme_names[(app._theme_names.index(app.theme) + 1)
                                     % len(app._theme_names)]
            Widget.refresh = counted
            try:
                app.theme = theme
                await wait_until(pilot, lambda t=theme: app.current_theme.name == t
                                 and app.stylesheet._variables == app.get_css_variables(),
                                 "the theme")
                await pilot.pause()
            finally:
                Widget.refresh = refresh
            for _ in range(3):
                await pilot.pause()
            strips = app.screen._compositor.render_strips()
            drawn.append(([[(s.text, s.style) for s in strip] for strip in strips],
                          [(type(w).__name__, w.id, w.styles.background, w.styles.color,
                            w.rich_style, sorted(w._component_styles.items(), key=str))
                           for w in app.screen.walk_children()]))
    return drawn, refreshed


async def test_a_theme_switch_refreshes_each_widget_once_and_draws_the_same(swept, monkeypatch):
    """Restyling for a theme refreshes each widget once per kind of refresh asked
    (``app.refreshes_once``), not once per changed rule and per ancestor's colour, and leaves
    the screen drawn and styled exactly as running every refresh as asked does."""
    import contextlib

    from foldscope.ui import app as app_module

    db, sweep_id = swept
    got, refreshed = await _theme_switched_drawings(db, sweep_id)
    monkeypatch.setattr(app_module, "refreshes_once", contextlib.nullcontext)
    want, refreshed_each = await _theme_switched_drawings(db, sweep_id)
    assert got == want
    # Two switches: each widget refreshed once by each restyling (and at most once more
    # when the screen's layout is refreshed after it).
    assert max(refreshed.values()) <= 4
    assert max(refreshed_each.values()) > 10  # what the deferral saves


async def test_themes_are_parsed_ahead_when_a_cell_is_opened_before_one_was_composed(swept,
                                                                                     monkeypatch):
    """A cell opened before the cell screen was composed ahead still gets every theme parsed
    ahead (its widgets' CSS is then in the stylesheet), once keys pause."""
    db, sweep_id = swept
    monkeypatch.setattr("foldscope.ui.screens.sweep.warm_cell_screen", lambda *a: None)
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_cell(app, pilot)
        await wait_until(pilot, lambda: app._themes_parsed_ahead, "the themes parsed ahead")
        await wait_group(app, "parse-themes")
        await pilot.pause()
        from foldscope.ui.app import _css_key

        assert all(_css_key(app._theme_css_variables(app.get_theme(name)), app.stylesheet.source)
                   in app._parsed_css for name in app._theme_names)
