"""QuickCells draws exactly what Textual's DataTable draws: the same characters in the same
styles (mouse metadata included), cell by cell, for random tables (wide characters, styled
spans, cells wider than a fixed column, fixed columns and rows, zebra rows, the cursor and the
hover on any cell, focused or not, scrolled or not)."""

import asyncio

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.widgets import DataTable

from foldscope.ui.widgets.table_cells import QuickCells

CHARS = "ab Zé★●○◐·漢字-:/0"
STYLES = ["", "bold", "red", "on blue", "italic underline", "#ff8800 on #112233", "reverse"]

texts = st.builds(
    lambda plain, style, spans, justify: _text(plain, style, spans, justify),
    st.text(CHARS, max_size=14), st.sampled_from(STYLES),
    st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14), st.sampled_from(STYLES[1:])),
             max_size=3),
    st.sampled_from([None, None, None, "left", "right", "center"]))


def _text(plain: str, style: str, spans: list[tuple[int, int, str]], justify) -> Text:
    text = Text(plain, style=style, justify=justify)
    for a, b, span_style in spans:
        text.stylize(span_style, min(a, b), max(a, b))
    return text


cells = st.one_of(texts, st.text("abc [b]x[/b] 12", max_size=8))


@st.composite
def tables(draw):
    columns = draw(st.integers(1, 5))
    rows = draw(st.integers(0, 7))
    return {
        "labels": [draw(cells) for _ in range(columns)],
        "widths": [draw(st.sampled_from([None, None, 1, 3, 6])) for _ in range(columns)],
        "rows": [[draw(cells) for _ in range(columns)] for _ in range(rows)],
        "heights": [draw(st.sampled_from([1, 1, 1, 2])) for _ in range(rows)],
        "fixed_columns": draw(st.integers(0, 2)),
        "fixed_rows": draw(st.integers(0, 1)),
        "zebra": draw(st.booleans()),
        "cursor_type": draw(st.sampled_from(["row", "cell", "column", "none"])),
        "cursor": (draw(st.integers(0, 7)), draw(st.integers(0, 5))),
        "hover": (draw(st.integers(-1, 7)), draw(st.integers(0, 5))),
        "scroll": (draw(st.integers(0, 12)), draw(st.integers(0, 3))),
        "focus": draw(st.booleans()),
    }


class Plain(DataTable):
    pass


class Quick(QuickCells):
    pass


class Pair(App[None]):
    CSS = "DataTable { width: 1fr; height: 8; }"

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Plain(id="plain")
            yield Quick(id="quick")


def _fill(table: DataTable, spec: dict) -> None:
    table.cursor_type = spec["cursor_type"]
    table.zebra_stripes = spec["zebra"]
    table.fixed_columns = spec["fixed_columns"]
    table.fixed_rows = spec["fixed_rows"]
    for label, width in zip(spec["labels"], spec["widths"]):
        table.add_column(label, width=width)
    for row, height in zip(spec["rows"], spec["heights"]):
        table.add_row(*row, height=height)


def _cells(strips) -> list[list[tuple[str, object]]]:
    return [[(ch, seg.style) for seg in strip for ch in seg.text] for strip in strips]


async def _compare(spec: dict) -> None:
    app = Pair()
    async with app.run_test(size=(100, 10)) as pilot:
        plain, quick = app.query_one(Plain), app.query_one(Quick)
        for table in (plain, quick):
            _fill(table, spec)
        for _ in range(50):  # until both have laid out their rows and columns
            await pilot.pause()
            if not (plain._require_update_dimensions or quick._require_update_dimensions):
                break
        assert plain.virtual_size == quick.virtual_size
        drawn = []
        for table in (plain, quick):
            app.set_focus(table if spec["focus"] else None)
            await pilot.pause()
            if table.row_count:
                row, column = spec["cursor"]
                table.cursor_coordinate = Coordinate(min(row, table.row_count - 1),
                                                     min(column, len(table.columns) - 1))
            table._set_hover_cursor(True)
            table.hover_coordinate = Coordinate(*spec["hover"])
            table.scroll_to(*spec["scroll"], animate=False, immediate=True)
            table._clear_caches()
            table._pseudo_class_state = table.get_pseudo_class_state()
            drawn.append(_cells(table.render_lines(Region(0, 0, *table.size))))
        assert quick.size == plain.size
        for y, (a, b) in enumerate(zip(*drawn)):
            assert b == a, f"line {y}: {[x for x in zip(a, b) if x[0] != x[1]][:3]}"


# Each example runs an app: no shrinking (a failure names its table as drawn).
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(tables())
def test_quick_cells_draw_what_data_table_draws(spec):
    asyncio.run(_compare(spec))


def test_a_one_line_cell_skips_rich_layout():
    """The cells it draws itself are the one-line text cells that fit (the rest go to
    DataTable): a table of such cells is drawn without one Rich layout pass."""

    async def run() -> None:
        app = Pair()
        async with app.run_test(size=(100, 10)) as pilot:
            quick = app.query_one(Quick)
            quick.add_columns("a", "b")
            quick.add_row(Text("● ○"), "x")
            for _ in range(50):
                await pilot.pause()
                if not quick._require_update_dimensions:
                    break
            calls = []
            original = DataTable._render_cell

            def counted(self, *args, **kwargs):
                calls.append(args)
                return original(self, *args, **kwargs)

            DataTable._render_cell = counted
            try:
                quick._clear_caches()
                quick.render_lines(Region(0, 0, *quick.size))
            finally:
                DataTable._render_cell = original
            assert calls == []

    asyncio.run(run())
