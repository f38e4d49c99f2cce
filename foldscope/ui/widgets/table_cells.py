"""Table cells drawn without Rich's layout pass: what Textual 8's ``DataTable`` draws for a
one-line ``Text`` cell, built from the text's own segments.

``DataTable._render_cell`` renders every cell through ``Console.render_lines`` (a ``Styled``
``Padding`` around the cell, measured, wrapped, cropped and padded): about 0.1 ms a cell, paid
for every cell each time a table is filled, so a table of a few hundred cells cost 10–25 ms of
the frame that shows it. A one-line text that fits its column needs none of that: its line is
the left padding, the text's segments and the padding to the column's width, each character
styled as Rich would style it (the row's style and the cursor's component style under the
text's own style, the cursor's colours over it when the CSS says so). Every other cell (wrapped
or multi-line rows, right-aligned or centred text, text wider than its column, tabs, other
renderables, row labels) is drawn by ``DataTable`` itself.

This reaches into ``DataTable``'s private cell cache and style helpers, like ``memory.py``
does into Textual's internals: if Textual is bumped past 8.x, check ``_render_cell`` first
(``tests/test_table_cells.py`` compares the two drawings cell by cell).
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual._types import SegmentLines
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import DataTable


class QuickCells(DataTable[Any]):
    """A ``DataTable`` whose one-line text cells are drawn from their segments (see the
    module): the same screen, without a Rich layout pass per cell."""

    _line_style: Style | None = None
    """The table's own style while its lines are drawn (``DataTable.render_line`` works it
    out from the widget and its ancestors for every line)."""

    def render_lines(self, crop: Region) -> list[Strip]:
        self._line_style = None
        try:
            return super().render_lines(crop)
        finally:
            self._line_style = None

    def render_line(self, y: int) -> Strip:
        # DataTable.render_line, with the table's style worked out once per drawing.
        style = self._line_style
        if style is None:
            style = self._line_style = self.rich_style
        scroll_x, scroll_y = self.scroll_offset
        fixed_height = 0
        for i in range(self.fixed_rows):
            fixed_key = self._row_locations.get_key(i)
            if fixed_key is not None:
                fixed_height += self.get_row_height(fixed_key)
        if self.show_header:
            fixed_height += self.get_row_height(self._header_row_key)
        if y >= fixed_height:
            y += scroll_y
        return self._render_line(y, scroll_x, scroll_x + self.size.width, style)

    def _render_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                     cursor: bool = False, hover: bool = False) -> SegmentLines:
        quick = self._quick_cell(row_index, column_index, base_style, width, cursor, hover)
        if quick is not None:
            return quick
        return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)

    def _quick_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                    cursor: bool, hover: bool) -> SegmentLines | None:
        """The cell's one line as ``DataTable._render_cell`` would draw it, stored in its cache
        under the same key; None for a cell this cannot draw the same (``DataTable`` does)."""
        if column_index < 0:
            return None
        is_header = row_index == -1
        if is_header:
            row_key = self._header_row_key
            height = self.header_height
        else:
            found = self._row_locations.get_key(row_index)
            row = self.rows.get(found) if found is not None else None
            if found is None or row is None or row.auto_height:
                return None
            row_key, height = found, row.height
        if height != 1:
            return None
        column_key = self._column_locations.get_key(column_index)
        if column_key is None:
            return None
        key = (row_key, column_key, base_style, cursor, hover, self._show_hover_cursor,
               self._update_count, self._pseudo_class_state)
        cache = self._cell_render_cache
        if key in cache:
            return cache[key]
        cells = self._get_row_renderables(row_index).cells
        if not 0 <= column_index < len(cells):
            return None
        cell = cells[column_index]
        pad = self.cell_padding
        inner = width - 2 * pad
        if (type(cell) is not Text or cell.justify not in (None, "default") or inner < 0
                or "\n" in cell.plain or "\t" in cell.plain):
            return None
        used = cell_len(cell.plain)
        if used > inner:
            return None
        is_fixed = not is_header and (row_index < self.fixed_rows
                                      or column_index < self.fixed_columns)
        component, post = self._get_styles_to_render_cell(
            is_header, False, is_fixed, hover, cursor, self.show_cursor,
            self._show_hover_cursor, self.cursor_foreground_priority == "css",
            self.cursor_background_priority == "css")
        pre = base_style + Style.from_meta({"row": row_index, "column": column_index}) + component
        blank = pre + post
        line: list[Segment] = [Segment(" " * pad, blank)] if pad else []
        console = self.app.console
        # Text.render leaves a text's own style to its caller when it has no spans (Rich's
        # wrap joins the line into a span then): apply it here the same way.
        parts = (cell.render(console, end="") if cell.spans else
                 [Segment(cell.plain, console.get_style(cell.style, default=Style.null()))])
        for segment in parts:
            style = segment.style
            line.append(Segment(segment.text, pre + style + post if style else blank))
        if used < inner:
            line.append(Segment(" " * (inner - used), blank))
        if pad:
            line.append(Segment(" " * pad, blank))
        lines = [line]
        cache[key] = lines
        return lines
