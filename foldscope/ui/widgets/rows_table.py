"""The rows of one cell, one line each, updated in place and sortable by any column."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from foldscope.core.metrics import live_row_status
from foldscope.core.row import FoldRecord, RowRecord
from foldscope.core.text import cost_text, literal
from foldscope.ui.widgets.sort_header import mark_sorted, next_sort


@dataclass(frozen=True)
class RowColumn:
    """A column of the rows table: its key/label, what it shows and how it sorts."""

    key: str
    show: Callable[[RowRecord, FoldRecord | None, bool], str | Text]
    """The cell for a row, its last committed fold, and whether the sweep's runner is alive."""
    sort: Callable[[RowRecord, FoldRecord | None], Any]
    """A sort key (numbers first; missing values sort last)."""


def _num(x: float | int | None) -> tuple[int, float]:
    return (1, 0.0) if x is None else (0, float(x))


def _validity(r: RowRecord) -> Text:
    if not r.finished:
        return Text("—", style="dim")
    verdict = r.verdict
    return Text(("✓ " if verdict.valid else "✗ ") + verdict.reason,
                style="" if verdict.valid else "bold")


def _error(r: RowRecord) -> Text:
    """The error that ended a failed row, whole, on one line (it is outside text)."""
    if not r.infra_error:
        return Text("")
    return Text(literal(r.infra_error, keep_newlines=False), style="bold")


def _answer(r: RowRecord) -> Text:
    first = (r.answer or "").strip().splitlines()[:1]
    # Model text is data: shown literally, never as markup or escape codes.
    return Text(literal(first[0][:40], keep_newlines=False) if first else "")


ROW_COLUMNS: tuple[RowColumn, ...] = (
    RowColumn("row", lambda r, f, live: str(r.id), lambda r, f: r.id),
    RowColumn("repeat", lambda r, f, live: str(r.repeat), lambda r, f: r.repeat),
    RowColumn("position", lambda r, f, live: str(r.position + 1), lambda r, f: r.position),
    RowColumn("status", lambda r, f, live: live_row_status(r.status, live),
              lambda r, f: r.status),
    RowColumn("recall", lambda r, f, live: "—" if r.recall is None else f"{r.recall:.2f}",
              lambda r, f: _num(r.recall)),
    RowColumn("validity", lambda r, f, live: _validity(r),
              lambda r, f: (r.verdict.valid, r.verdict.reason)),
    RowColumn("error", lambda r, f, live: _error(r), lambda r, f: r.infra_error or ""),
    RowColumn("headings", lambda r, f, live: "—" if f is None else f"{f.headings_carried}/5",
              lambda r, f: _num(f.headings_carried if f else None)),
    RowColumn("fill", lambda r, f, live: "—" if f is None or f.fill_fraction is None
              else f"{100 * f.fill_fraction:.0f}%",
              lambda r, f: _num(f.fill_fraction if f else None)),
    RowColumn("folds", lambda r, f, live: str(r.folds_done), lambda r, f: r.folds_done),
    RowColumn("catch-up", lambda r, f, live: "yes" if r.catch_up else "",
              lambda r, f: r.catch_up),
    RowColumn("parse", lambda r, f, live: str(r.parse_failures) if r.parse_failures else "ok",
              lambda r, f: r.parse_failures),
    RowColumn("cost", lambda r, f, live: cost_text(r.cost_usd, r.unpriced_calls),
              lambda r, f: r.cost_usd if r.cost_known else float("inf")),
    RowColumn("answer", lambda r, f, live: _answer(r),
              lambda r, f: literal(r.answer or "", keep_newlines=False)),
)
"""The rows table's columns in order: the row's id (``foldscope inspect`` takes it), repeat,
execution position (1-based), status (a dead runner's rows read interrupted), recall, validity
with its reason, the error that ended a failed row, headings carried and fill
fraction of the last carrier, folds, catch-up, parse failures, cost, the answer's first line."""

SORTABLE: tuple[str, ...] = tuple(c.key for c in ROW_COLUMNS)


class RowsTable(DataTable):
    """One line per row of a cell, updated by key; ``sort_by`` orders it by any column (or a
    click on its header), ``set_visible`` keeps only the rows a filter matched."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.sort_column = "position"
        """The column the rows are ordered by."""
        self.sort_reverse = False
        self._records: dict[str, tuple[RowRecord, FoldRecord | None]] = {}
        """Every row of the cell (shown or filtered out), with its last fold."""
        self._live = True
        self._shown: dict[str, list[str]] = {}
        """The rows on screen, with their cells' plain text."""
        self._visible: set[str] | None = None
        """The rows a filter keeps (None: every row)."""

    def on_mount(self) -> None:
        self._add_columns()

    def _add_columns(self) -> None:
        for column in ROW_COLUMNS:
            self.add_column(column.key, key=column.key)

    def reset(self) -> None:
        """Empty, as first mounted: no rows, no filter, the columns as narrow as their names,
        in execution order, scrolled home (the screen is shown for another cell)."""
        self.sort_column, self.sort_reverse = "position", False
        self._records, self._shown, self._visible, self._live = {}, {}, None, True
        self.clear(columns=True)
        self._add_columns()

    @property
    def total(self) -> int:
        """Rows of the cell, shown or not."""
        return len(self._records)

    def show(self, rows: Sequence[RowRecord], folds: Mapping[int, Sequence[FoldRecord]],
             live: bool) -> None:
        """Show the cell's rows; lines already listed change cell by cell.

        Args:
            rows: every row of the cell.
            folds: each row's committed folds (the last one gives headings and fill).
            live: the sweep's runner is alive.
        """
        self._live = live
        records: dict[str, tuple[RowRecord, FoldRecord | None]] = {}
        for r in rows:
            last = folds.get(r.id) or ()
            records[str(r.id)] = (r, last[-1] if last else None)
        self._records = records
        self._sync()

    def set_visible(self, row_ids: set[int] | None) -> None:
        """Show only these rows (None: every row), in the order in force."""
        self._visible = None if row_ids is None else {str(i) for i in row_ids}
        self._sync()

    def _sync(self) -> None:
        wanted = [k for k in self._records if self._visible is None or k in self._visible]
        if set(wanted) != set(self._shown):
            at = self._cursor_key()
            self.clear()
            self._shown = {}
            for key in wanted:
                cells = self._cells(key)
                self.add_row(*(Text(c) if isinstance(c, str) else c for c in cells), key=key)
                self._shown[key] = [c.plain if isinstance(c, Text) else c for c in cells]
            self._apply_sort()
            if at in self._shown:
                self.move_cursor(row=self.get_row_index(at))
            return
        for key in wanted:
            cells = self._cells(key)
            plain = [c.plain if isinstance(c, Text) else c for c in cells]
            if self._shown.get(key) != plain:
                for column, value, before, after in zip(ROW_COLUMNS, cells, self._shown[key],
                                                        plain):
                    if before != after:  # the column widens: a value is never cut
                        self.update_cell(key, column.key,
                                         Text(value) if isinstance(value, str) else value,
                                         update_width=True)
                self._shown[key] = plain
        self._apply_sort()

    def _cells(self, key: str) -> list[str | Text]:
        row, final = self._records[key]
        return [column.show(row, final, self._live) for column in ROW_COLUMNS]

    def _cursor_key(self) -> str | None:
        if not self.row_count or self.cursor_row < 0:
            return None
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)

    def sort_by(self, column: str, reverse: bool = False) -> None:
        """Order the rows by a column (see :data:`SORTABLE`)."""
        if column not in SORTABLE:
            raise ValueError(f"unknown column {column!r}")
        self.sort_column, self.sort_reverse = column, reverse
        self._apply_sort()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column's header sorts by it (again: the other way)."""
        event.stop()
        self.sort_by(*next_sort(SORTABLE, self.sort_column, self.sort_reverse,
                                str(event.column_key.value)))

    def _apply_sort(self) -> None:
        mark_sorted(self, [(c.key, c.key) for c in ROW_COLUMNS], self.sort_column,
                    self.sort_reverse)
        if not self._shown:
            return
        column = next(c for c in ROW_COLUMNS if c.key == self.sort_column)
        records = self._records
        # The key column's cells are unique per row; sort by the records they stand for.
        order = {key: column.sort(*records[key]) for key in self._shown}
        position = {str(records[key][0].position + 1): key for key in self._shown}
        self.sort("position", key=lambda pos: (order[position[pos.plain]],
                                               records[position[pos.plain]][0].position),
                  reverse=self.sort_reverse)

    def row_ids(self) -> list[int]:
        """The row ids in display order."""
        return [int(str(row.key.value)) for row in self.ordered_rows]
