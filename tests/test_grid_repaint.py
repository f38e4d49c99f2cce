"""The live grid repaints only the cells a poll changed, and what it shows is exactly what a
whole redraw shows: after any run of updates, metric switches, transposes and cursor moves, the
screen equals the screen drawn again from nothing (every render cache of the table dropped)."""

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult

from foldscope.core.tally import ANSWER_COUNTS, CellTally
from foldscope.ui.theme import FACT_VARIABLES
from foldscope.ui.widgets.sweep_grid import VIEWS, GridCell, SweepGrid

ARMS = ["j", "q", "m", "f"]
MODELS = ["sim/faithful", "sim/describer", "sim/lossy"]


class GridApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(FACT_VARIABLES)

    def compose(self) -> ComposeResult:
        yield SweepGrid()


def tally(arm: str, model: str, n: int) -> CellTally:
    """A cell's tally for a step ``n``: its counts (and so its text) move with ``n``."""
    rows = 4 + n % 3
    done = min(rows, n % 5)
    failed = min(rows - done, n % 2)
    return CellTally("kestrel", model, arm, rows=rows, valid_rows=done, done_rows=done,
                     failed_rows=failed, running_rows=rows - done - failed, recall_rows=done,
                     recall_sum=0.25 * done * (n % 4), recall_sq_sum=0.1 * done, checks=n % 7,
                     flagged=n % 3 == 0,
                     class_counts=tuple((n + i) % 4 for i in range(len(ANSWER_COUNTS))))


def screen(app: App[None]) -> list[list[tuple[str, object]]]:
    """Every line on screen as (text, style) segments."""
    return [[(s.text, s.style) for s in strip] for strip in app.screen._compositor.render_strips()]


async def settled(app: App[None], pilot) -> list[list[tuple[str, object]]]:
    """The screen once it stops changing (a rebuilt table takes a few passes to lay out)."""
    shown = screen(app)
    for _ in range(20):
        await pilot.pause()
        again = screen(app)
        if again == shown:
            return shown
        shown = again
    raise AssertionError("the screen never settled")


step = st.one_of(
    st.tuples(st.just("cells"), st.lists(st.tuples(st.sampled_from(ARMS),
                                                     st.sampled_from(MODELS),
                                                     st.integers(0, 30)), max_size=6)),
    st.tuples(st.just("view"), st.sampled_from(VIEWS)),
    st.tuples(st.just("transpose"), st.none()),
    st.tuples(st.just("running"), st.booleans()),
    st.tuples(st.just("key"), st.sampled_from(["down", "right", "up", "left"])),
)


@settings(max_examples=8, deadline=None)
@given(steps=st.lists(step, min_size=1, max_size=12))
async def test_the_grid_on_screen_is_what_a_whole_redraw_shows(steps):
    app = GridApp()
    async with app.run_test(size=(110, 12)) as pilot:
        grid = app.query_one(SweepGrid)
        grid.focus()
        grid.set_layout(ARMS, MODELS)
        cells = {(a, m): tally(a, m, 0) for a in ARMS for m in MODELS}
        grid.update_cells(cells.values())
        await pilot.pause()
        for kind, arg in steps:
            if kind == "cells":
                for arm, model, n in arg:
                    cells[(arm, model)] = tally(arm, model, n)
                grid.update_cells(cells.values())
            elif kind == "view":
                grid.show_view(arg)
            elif kind == "transpose":
                grid.transpose()
            elif kind == "running":
                grid.update_cells(cells.values(), running=arg)
            else:
                await pilot.press(arg)
            shown = await settled(app, pilot)
            grid._clear_caches()  # the whole table drawn again from its data
            grid.refresh()
            assert await settled(app, pilot) == shown, (kind, arg)


async def test_a_poll_draws_only_the_cells_it_changed(monkeypatch):
    drawn: list[str] = []
    render = GridCell.__rich_console__

    def counted(self, console, options):
        drawn.append(self.plain)
        yield from render(self, console, options)

    monkeypatch.setattr(GridCell, "__rich_console__", counted)
    app = GridApp()
    async with app.run_test(size=(110, 12)) as pilot:
        grid = app.query_one(SweepGrid)
        grid.set_layout(ARMS, MODELS)
        cells = {(a, m): tally(a, m, 0) for a in ARMS for m in MODELS}
        grid.update_cells(cells.values())
        await pilot.pause()
        assert len(drawn) >= len(cells)  # the first draw: every cell
        grid.refresh()  # drawn once more as laid out (the first layout bumps the table's count)
        await pilot.pause()
        drawn.clear()
        cells[("q", "sim/describer")] = tally("q", "sim/describer", 1)
        cells[("f", "sim/faithful")] = tally("f", "sim/faithful", 2)
        assert grid.update_cells(cells.values()) == 2
        await pilot.pause()
        assert sorted(drawn) == sorted([grid.get_cell("q", "sim/describer").plain,
                                        grid.get_cell("f", "sim/faithful").plain])
        drawn.clear()
        assert grid.update_cells(cells.values()) == 0  # nothing changed: nothing drawn
        await pilot.pause()
        assert drawn == []
