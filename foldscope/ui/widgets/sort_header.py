"""The sorted column named in a table's header: its label carries ▲ (ascending) or ▼."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey


def sort_mark(reverse: bool) -> str:
    """The header mark of the sorted column."""
    return "▼" if reverse else "▲"


def mark_sorted(table: DataTable, columns: Sequence[tuple[str, str]], sorted_by: str | None,
                reverse: bool) -> None:
    """Label the header: the sorted column's label gains its mark, the others lose theirs.

    Args:
        table: the table.
        columns: (key, label) of each column.
        sorted_by: the sorted column's key (None: the table's own order, no mark).
        reverse: descending.
    """
    for key, name in columns:
        mark = sort_mark(reverse) if key == sorted_by else ""
        label = Text(name + (f" {mark}" if mark else ""), style="bold" if mark else "")
        shown = table.columns.get(ColumnKey(key))
        if shown is not None and shown.label.plain != label.plain:
            shown.label = label
            shown.content_width = max(shown.content_width, label.cell_len)
            table._require_update_dimensions = True
            table._clear_caches()  # the header is drawn from a cache
            table.refresh()


def next_sort(columns: Sequence[str], current: str | None, reverse: bool,
              clicked: str) -> tuple[str, bool]:
    """The order after a header click: the same column reverses, another sorts ascending."""
    if clicked == current:
        return clicked, not reverse
    if clicked not in columns:
        raise ValueError(f"unknown column {clicked!r}")
    return clicked, False
