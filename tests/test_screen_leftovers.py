"""Leftovers of the 80×24 tour: grid cells with counts of 100 and more are whole on screen in
every view, and the fold inspector's measures line stays short."""

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.widgets.data_table import ColumnKey

from foldscope.core.tally import ANSWER_COUNTS, CellTally
from foldscope.ui.theme import FACT_VARIABLES
from foldscope.ui.widgets.sweep_grid import CELL_WIDTH, VIEWS, SweepGrid


class GridApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(FACT_VARIABLES)

    def compose(self) -> ComposeResult:
        yield SweepGrid()


def _screen_text(app: App[None]) -> list[str]:
    return ["".join(s.text for s in strip) for strip in app.screen._compositor.render_strips()]


@settings(max_examples=6, deadline=None)
@given(rows=st.integers(100, 12_000), failed=st.integers(0, 999), flagged=st.integers(0, 999),
       checks=st.integers(100, 5_000))
async def test_large_counts_stay_whole_in_every_grid_view(rows, failed, flagged, checks):
    failed = min(failed, rows)
    cell = CellTally("kestrel", "sim/faithful", "j", rows=rows, valid_rows=rows - failed,
                     done_rows=rows - failed, failed_rows=failed, running_rows=3,
                     recall_rows=rows - failed, recall_sum=0.5 * (rows - failed),
                     recall_sq_sum=0.3 * (rows - failed), checks=checks, flagged=flagged,
                     class_counts=tuple(checks // (2 + i) for i in range(len(ANSWER_COUNTS))))
    app = GridApp()
    async with app.run_test(size=(200, 12)) as pilot:
        grid = app.query_one(SweepGrid)
        grid.set_layout(["j"], ["sim/faithful"])
        for view in VIEWS:
            grid.show_view(view)
            grid.update_cells([cell], running=True)
            await pilot.pause()
            shown = "".join(text for text, _ in grid._parts(cell))
            assert cell_len(shown) <= grid.columns[ColumnKey("sim/faithful")].width
            assert any(shown in line for line in _screen_text(app)), (view, shown)


async def test_small_counts_keep_the_fixed_width():
    cell = CellTally("kestrel", "sim/faithful", "j", rows=3, valid_rows=3, done_rows=3,
                     recall_rows=3, recall_sum=1.5, recall_sq_sum=0.9)
    app = GridApp()
    async with app.run_test(size=(120, 12)) as pilot:
        grid = app.query_one(SweepGrid)
        grid.set_layout(["j"], ["sim/faithful"])
        for view in VIEWS:
            grid.show_view(view)
            grid.update_cells([cell], running=False)
        await pilot.pause()
        assert grid.columns[ColumnKey("sim/faithful")].width == CELL_WIDTH
