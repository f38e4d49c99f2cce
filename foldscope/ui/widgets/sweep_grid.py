"""The live arm × model grid (or model × arm, transposed): one metric per cell with
``valid/planned`` rows and a running mark, coloured by the theme when it is drawn."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from foldscope.core.metrics import METRIC_BY_NAME, METRICS, cell_metric
from foldscope.core.tally import CellTally
from foldscope.core.text import literal

VIEWS: tuple[str, ...] = (*(m.name for m in METRICS), "answers")
"""What a grid cell can show: each metric, then the answer classes; ``v`` cycles them."""

CELL_WIDTH = 26
"""Characters per cell: recall with its interval, valid/planned and the running mark."""

ROLES: tuple[str, ...] = ("good", "fair", "poor", "none", "muted", "running", "flag")
"""Style roles a cell's parts take; each is a component class coloured by a theme variable."""


class GridCell:
    """A cell's text as (text, role) parts; styled from the grid's component classes only when
    drawn, so a theme switch recolours every cell already on screen."""

    def __init__(self, grid: SweepGrid, parts: Sequence[tuple[str, str]]) -> None:
        self.grid = grid
        self.parts = tuple(parts)

    @property
    def plain(self) -> str:
        """The cell's text without styles."""
        return "".join(text for text, _ in self.parts)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = Text(end="", no_wrap=True)
        for part, role in self.parts:
            text.append(part, self.grid.role_style(role) if role else None)
        yield text

    def __rich_measure__(self, console: Console, options: ConsoleOptions):
        from rich.measure import Measurement

        width = Text(self.plain).cell_len
        return Measurement(width, width)


def metric_parts(cell: CellTally | None, metric: str, running: bool) -> list[tuple[str, str]]:
    """One cell's parts for a metric: value (with recall's interval), ``valid/planned``,
    ``✗N`` when N rows failed, and ``⟳`` while rows of the cell run.

    Args:
        cell: the cell's tally (None before it has rows).
        metric: a metric name.
        running: the sweep's runner is alive (a dead runner leaves no running marks).
    """
    if cell is None:
        return [("·", "none")]
    m = METRIC_BY_NAME[metric]
    value = cell_metric(metric, cell)
    parts = [(m.format(value.value), value.tone)]
    if value.ci is not None:
        parts.append((f" ({value.ci[0]:.2f}–{value.ci[1]:.2f})", "muted"))
    finished = cell.done_rows + cell.failed_rows
    parts.append((f"  {cell.valid_rows}/{cell.rows}", "" if finished == cell.rows else "muted"))
    if cell.failed_rows:  # rows that ended without an answer: never mistaken for unstarted
        parts.append((f" ✗{cell.failed_rows}", "poor"))
    if running and cell.running_rows:
        parts.append((" ⟳", "running"))
    return parts


def answers_parts(cell: CellTally | None, running: bool) -> list[tuple[str, str]]:
    """One cell's failed answers apart: honest abstentions (A), answers that gave nothing (N, no
    answer: never an abstention), fabrications (F), carried corruptions (C), hedged answers (H),
    the fabrication flags a person set (⚑)."""
    if cell is None or not cell.checks:
        return [("·", "none")]
    fabricated, corrupted = cell.answers("fabricated"), cell.answers("carried_corruption")
    hedged = cell.answers("hedged")
    # Two digits a count: five counts, the flags and the running mark fit in CELL_WIDTH.
    parts = [(f"A{cell.answers('honest_abstention'):>2}", "none"), (" ", ""),
             (f"N{cell.answers('no_answer'):>2}", "none"), (" ", ""),
             (f"F{fabricated:>2}", "poor" if fabricated else "none"), (" ", ""),
             (f"C{corrupted:>2}", "fair" if corrupted else "none"), (" ", ""),
             (f"H{hedged:>2}", "fair" if hedged else "none")]
    if cell.flagged:
        parts.append((f" ⚑{cell.flagged}", "flag"))
    if running and cell.running_rows:
        parts.append((" ⟳", "running"))
    return parts


def row_key(scenario: str, arm: str, several: bool) -> str:
    """An arm's key in the grid: the arm, prefixed by its scenario when a sweep has several."""
    return f"{scenario} {arm}" if several else arm


@dataclass(frozen=True)
class CellRef:
    """Which (scenario, model, arm) a grid cell shows."""

    scenario: str | None
    model: str
    arm: str


class SweepGrid(DataTable):
    """A DataTable of one metric per (arm, model) cell, updated cell by cell; ``transposed``
    puts models on rows and arms on columns."""

    COMPONENT_CLASSES = {f"sweep-grid--{role}" for role in ROLES}
    """Styles of a cell's parts, resolved each time a cell is drawn."""

    DEFAULT_CSS = """
    SweepGrid { height: auto; max-height: 100%; }
    SweepGrid > .sweep-grid--good { color: $fact-present; text-style: bold; }
    SweepGrid > .sweep-grid--fair { color: $fact-mutated; text-style: bold; }
    SweepGrid > .sweep-grid--poor { color: $fact-missing; text-style: bold; }
    SweepGrid > .sweep-grid--none { color: $cell-pending; }
    SweepGrid > .sweep-grid--muted { color: $text-muted; }
    SweepGrid > .sweep-grid--running { color: $accent; }
    SweepGrid > .sweep-grid--flag { color: $fact-missing; text-style: bold; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="cell", zebra_stripes=True, **kwargs)
        self.fixed_columns = 1  # the arm (or model) column stays when the grid scrolls right
        self.view = "recall"
        self.transposed = False
        self.running = True
        """The sweep's runner is alive (running marks are shown only then)."""
        self._last: Sequence[CellTally] = ()
        self._models: list[str] = []
        self._arms: list[str] = []
        self._scenarios: list[str] = []
        self._refs: dict[tuple[str, str], CellRef] = {}
        self._shown: dict[tuple[str, str], str] = {}
        self._tallies: dict[tuple[str, str], CellTally] = {}

    def role_style(self, role: str):
        """The rich style of a part's role in the current theme."""
        return self.get_component_rich_style(f"sweep-grid--{role}", partial=True)

    # -- layout ---------------------------------------------------------------------------------

    def set_layout(self, arms: list[str], models: list[str],
                   scenarios: list[str] | None = None) -> None:
        """Lay out the grid once per sweep (and on transpose): arms (per scenario, if several)
        and models, the cursor on the first data cell."""
        scenarios = list(scenarios or [])
        several = len(scenarios) > 1
        keys = [row_key(sc, arm, several) for sc in (scenarios or [""]) for arm in arms]
        if keys == self._arms and models == self._models and self.row_count:
            return
        self._arms, self._models, self._scenarios = keys, list(models), scenarios
        self._build()

    def _build(self) -> None:
        self.clear(columns=True)
        self._shown, self._refs, self._tallies = {}, {}, {}
        arm_refs: dict[str, tuple[str | None, str]] = {}
        for key in self._arms:
            scenario, _, arm = key.rpartition(" ")
            arm_refs[key] = (scenario or (self._scenarios[0] if self._scenarios else None), arm)
        lines, columns = (self._models, self._arms) if self.transposed else (self._arms,
                                                                             self._models)
        corner = "model" if self.transposed else "arm"
        first = max(5, *(len(literal(k, keep_newlines=False)) + 2 for k in lines))
        self.add_column(Text(corner, style="bold"), key="__label__", width=first)
        for col in columns:
            label = literal(col, keep_newlines=False)
            # One width for every view, so switching metric never lays the table out again.
            self.add_column(Text(label, style="bold"), key=col, width=max(CELL_WIDTH,
                                                                          len(label) + 2))
        for line in lines:
            self.add_row(Text(literal(line, keep_newlines=False), style="bold"),
                         *[GridCell(self, [("·", "none")]) for _ in columns], key=line)
            for col in columns:
                model, arm_key = (line, col) if self.transposed else (col, line)
                ref_scenario, ref_arm = arm_refs[arm_key]
                self._refs[(line, col)] = CellRef(ref_scenario, model, ref_arm)
        if columns and lines:
            self.move_cursor(row=0, column=1, animate=False)
        self.update_cells(self._last)

    def cell_ref(self, row: str, column: str) -> CellRef | None:
        """The (scenario, model, arm) at a row and column key; None on the label column."""
        return self._refs.get((row, column))

    def transpose(self) -> None:
        """Swap rows and columns (models on rows, arms on columns, or back)."""
        self.transposed = not self.transposed
        if self._arms:
            self._build()

    def show_view(self, view: str) -> None:
        """Switch what the cells show and redraw them from the last snapshot."""
        if view not in VIEWS:
            raise ValueError(f"unknown grid view {view!r}")
        self.view = view
        self._shown, self._tallies = {}, {}
        self.update_cells(self._last)

    # -- cells ----------------------------------------------------------------------------------

    def _parts(self, cell: CellTally) -> list[tuple[str, str]]:
        if self.view == "answers":
            return answers_parts(cell, self.running)
        return metric_parts(cell, self.view, self.running)

    def update_cells(self, cells: Iterable[CellTally], *, running: bool | None = None) -> int:
        """Update only the cells whose text changed; return how many changed.

        Args:
            cells: every cell's latest tally.
            running: whether the sweep's runner is alive (None keeps the last answer).
        """
        if running is not None and running != self.running:
            self.running = running
            self._shown, self._tallies = {}, {}
        self._last = cells = list(cells)
        changes: list[tuple[str, str, GridCell]] = []
        widened = False
        several = len(self._scenarios) > 1
        for cell in cells:
            arm_key = row_key(cell.scenario, cell.arm, several)
            if arm_key not in self._arms or cell.model not in self._models:
                continue
            key = (cell.model, arm_key) if self.transposed else (arm_key, cell.model)
            if self._tallies.get(key) == cell and key in self._shown:
                continue  # unchanged since it was drawn: nothing to compute
            self._tallies[key] = cell
            parts = self._parts(cell)
            plain = "".join(text for text, _ in parts)
            if self._shown.get(key) == plain:
                continue
            self._shown[key] = plain
            widened = self._fit(key[1], cell_len(plain)) or widened
            changes.append((*key, GridCell(self, parts)))
        if changes:
            self._replace_cells(changes, whole=widened)
        return len(changes)

    def _replace_cells(self, changes: list[tuple[str, str, GridCell]], *, whole: bool) -> None:
        """Put new cells in and repaint only the rows they are on.

        ``DataTable.update_cell`` counts an update that every render cache of the table keys
        on, and repaints the whole table: every cell of every line drawn again on each poll
        (about 25 ms of the UI thread's time a poll for 24 cells at 140 columns, while the
        runner wants the cores). Here the cells' rendered lines are dropped from those caches
        (Textual 8's ``DataTable`` internals: the row and cell render caches, keyed by row and
        column; the row renderables, keyed by the update count and row index; the line cache,
        by line) and only the changed rows are refreshed: unchanged cells are not drawn again. A
        column that widened takes the public path: the whole table again.
        """
        if whole:
            for r, c, value in changes:
                self.update_cell(r, c, value)
            return
        rows = {RowKey(r) for r, _, _ in changes}
        cells = {(RowKey(r), ColumnKey(c)) for r, c, _ in changes}
        for r, c, value in changes:
            self._data[RowKey(r)][ColumnKey(c)] = value
        for cell_key in [k for k in self._cell_render_cache.keys() if (k[0], k[1]) in cells]:
            self._cell_render_cache.discard(cell_key)
        for line_key in [k for k in self._row_render_cache.keys() if k[0] in rows]:
            self._row_render_cache.discard(line_key)
        self._line_cache.clear()
        for key in rows:
            index = self._row_locations.get(key)
            if index is not None:
                self._row_renderable_cache.discard((self._update_count, index))
                self.refresh_row(index)

    def _fit(self, column_key: str, width: int) -> bool:
        """Widen a column whose cell outgrew it (counts of 100 and more, several marks), so
        no cell is cut; columns never narrow, so a metric switch rarely lays the grid out.
        True when the column widened."""
        column = self.columns.get(ColumnKey(column_key))
        if column is not None and not column.auto_width and width > column.width:
            column.width = width
            self._require_update_dimensions = True
            return True
        return False
